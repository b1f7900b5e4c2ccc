"""Graph factors of partial trees, and when they are complete (Bohnet & Kuhn 2012, Figures 3-7).

Every arc h -> c of a tree carries one factor of each kind below; slots a factor lacks (no such
grandchild, sibling...) hold NONE and are scored with a learned "none" vector. "Inner" is the side
of c towards h, "outer" the other; the definitions are written for h < c (the head on the left)
and mirrored for c < h. The paper's text lost most formulas, so these are our reading of it:

====  ==========  =====================================================================  =========
bit   group       nodes (h < c)                                                          fixed by
====  ==========  =====================================================================  =========
0     ``1``       (h, c)                                                                 the arc
1     ``2a``      (h, c, cmi): cmi = the left-most child of c between h and c            c
2     ``2a``      (h, c, cmo): cmo = the right-most child of c right of c                c
3     ``2a``      (h, c, ci): ci = the right-most child of h between h and c (the        h
                  sibling next to c, Carreras 2007)
4     ``2b``      (h, c, l): l = the left-most child of h other than c                   h
5     ``3a``      (h, c, s1, s2): the two children of h right of h nearest h, c          h
                  excluded (the innermost sibling pair, Koo & Collins tri-siblings)
6     ``3b``      (h, c, g1, g2): the two left-most children of c (grand-siblings)      c
7     ``3c``      (h, c, m, t): m = the right-most child of c, t = the right-most        c and m
                  child of m (the chain of Figure 7)
====  ==========  =====================================================================  =========

Completeness. A factor is *complete* when no later transition can change it: its arc exists
and the words in "fixed by" can receive no further dependent. The test is the same for every
system, read off the configuration: a word can still receive a dependent iff it is on a stack
or in the buffer (arcs only join words there; every system removes a word from both for good
when it is done, and the configuration's words never come back once removed), and once the
configuration is terminal no word can. So:

- arc-standard, arc-hybrid: a word is complete once it is popped, which is when it gets its head;
- arc-eager: once it is reduced (REDUCE, or LEFT-ARC, which pops it);
- 2-Planar: once it is off both stacks (a word popped from one plane may still be on the other);
- SWAP systems: a word SWAPped back into the buffer is not complete (it is in the buffer again);
  it becomes complete only when an arc pops it for good;
- the root, and words left on a stack, are complete in the terminal configuration only.
Arcs that a system's output adds after parsing (leftover words attached to the root's dependent,
see ``base.single_rooted``) are not part of the item's tree and carry no factors.

Bookkeeping (``Layout`` with factors): a row keeps one bit set per (word c, kind) for the factor
of its arc head(c) -> c once that factor has been counted. After each transition the factors
that became complete and are not yet counted are emitted once, scored in one batched call for all
candidates of a parser step (``candidates``), and their bits set (``mark``, run by
``Layout.apply``). Incomplete factors are never scored; a factor is counted exactly once along a
derivation because bits are copied with the row and never cleared.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..base import NONE

KINDS = ("1", "2a-inner", "2a-outer", "2a-sibling", "2b", "3a", "3b", "3c")
ARITY = np.array([2, 3, 3, 3, 3, 4, 4, 4], dtype=np.int64)
GROUPS = {"1": (0,), "2a": (1, 2, 3), "2b": (4,), "3a": (5,), "3b": (6,), "3c": (7,)}
SLOTS = 4  # the largest arity


def factor_mask(groups: list[str] | tuple[str, ...]) -> int:
    """Bit mask of the kinds of the listed groups; unknown names are refused with the choices."""
    mask = 0
    for g in groups:
        g = str(g)
        if g not in GROUPS:
            raise ValueError(f"model.completion.factors: unknown factor {g!r}; choose among {', '.join(GROUPS)}")
        for k in GROUPS[g]:
            mask |= 1 << k
    return mask


@njit(cache=True)
def _children_near(heads, n, x, lo, hi, from_low, skip, out, count):
    """Up to ``count`` children of x with lo < child < hi, nearest lo (from_low) or hi first,
    ``skip`` excluded; written to out[0:count] (NONE where there are fewer)."""
    for k in range(count):
        out[k] = NONE
    got = 0
    if from_low:
        w = lo + 1
        while w < hi and got < count:
            if 1 <= w <= n and w != skip and heads[w] == x:
                out[got] = w
                got += 1
            w += 1
    else:
        w = hi - 1
        while w > lo and got < count:
            if 1 <= w <= n and w != skip and heads[w] == x:
                out[got] = w
                got += 1
            w -= 1


@njit(cache=True)
def fill(heads, n, kind, h, c, out):
    """The nodes of the factor of ``kind`` on arc h -> c, in out[0:4] (NONE-padded)."""
    for k in range(4):
        out[k] = NONE
    out[0], out[1] = h, c
    right = h < c  # the head on the left
    tmp = np.empty(2, dtype=np.int64)
    big = n + 1
    if kind == 1:  # inner grandchild: the child of c between h and c farthest from c
        if right:
            _children_near(heads, n, c, h, c, True, NONE, tmp, 1)
        else:
            _children_near(heads, n, c, c, h, False, NONE, tmp, 1)
        out[2] = tmp[0]
    elif kind == 2:  # outer grandchild: the child of c beyond c farthest from c
        if right:
            _children_near(heads, n, c, c, big, False, NONE, tmp, 1)
        else:
            _children_near(heads, n, c, -1, c, True, NONE, tmp, 1)
        out[2] = tmp[0]
    elif kind == 3:  # sibling between h and c nearest c
        if right:
            _children_near(heads, n, h, h, c, False, NONE, tmp, 1)
        else:
            _children_near(heads, n, h, c, h, True, NONE, tmp, 1)
        out[2] = tmp[0]
    elif kind == 4:  # the left-most (right-most) child of h other than c
        if right:
            _children_near(heads, n, h, -1, big, True, c, tmp, 1)
        else:
            _children_near(heads, n, h, -1, big, False, c, tmp, 1)
        out[2] = tmp[0]
    elif kind == 5:  # the two children of h on c's side nearest h, c excluded
        if right:
            _children_near(heads, n, h, h, big, True, c, tmp, 2)
        else:
            _children_near(heads, n, h, -1, h, False, c, tmp, 2)
        out[2], out[3] = tmp[0], tmp[1]
    elif kind == 6:  # the two left-most (right-most) children of c
        _children_near(heads, n, c, -1, big, right, NONE, tmp, 2)
        out[2], out[3] = tmp[0], tmp[1]
    elif kind == 7:  # the right-most (left-most) child of c and its right-most (left-most) child
        _children_near(heads, n, c, -1, big, not right, NONE, tmp, 1)
        m = tmp[0]
        out[2] = m
        if m != NONE:
            _children_near(heads, n, m, -1, big, not right, NONE, tmp, 1)
            out[3] = tmp[0]


@njit(cache=True)
def open_words(row, s0, ns0, s1, ns1, b, nb, n, terminal, out):
    """out[w] = True iff word w (0..n) can still receive a dependent (on a stack or in the buffer)."""
    for w in range(n + 1):
        out[w] = False
    if terminal:
        return
    for k in range(ns0):
        out[row[s0 + k]] = True
    for k in range(ns1):
        out[row[s1 + k]] = True
    for k in range(nb):
        out[row[b + k]] = True


@njit(cache=True)
def ready(kind, h, c, heads, n, rmost, lmost, opened):
    """Whether the factor of ``kind`` on the (existing) arc h -> c is complete."""
    if kind == 0:
        return True
    if kind == 3 or kind == 4 or kind == 5:
        return not opened[h]
    if opened[c]:
        return False
    if kind == 7:
        m = rmost[c] if h < c else lmost[c]
        return m == NONE or not opened[m]
    return True


@njit(cache=True)
def scan(row, heads_col, lmod_col, rmod_col, counted_col, n, mask, opened, emit, out_kind, out_nodes, start):
    """Count the complete, uncounted factors of one row: set their bits and, if ``emit``, write
    kind and nodes from index ``start`` (the arrays must have room); returns the new end."""
    heads = row[heads_col : heads_col + n + 1]
    rmost = row[rmod_col : rmod_col + n + 1]
    lmost = row[lmod_col : lmod_col + n + 1]
    nodes = np.empty(4, dtype=np.int64)
    end = start
    for c in range(1, n + 1):
        h = heads[c]
        if h == NONE:
            continue
        bits = row[counted_col + c]
        if bits & mask == mask:
            continue
        for kind in range(8):
            bit = 1 << kind
            if mask & bit == 0 or bits & bit != 0:
                continue
            if not ready(kind, h, c, heads, n, rmost, lmost, opened):
                continue
            bits |= bit
            if emit:
                fill(heads, n, kind, h, c, nodes)
                out_kind[end] = kind
                for k in range(4):
                    out_nodes[end, k] = nodes[k]
                end += 1
        row[counted_col + c] = bits
    return end


def grow(arrays: tuple, need: int) -> tuple:
    """The arrays (first axis) enlarged to hold at least ``need`` entries."""
    out = []
    for a in arrays:
        bigger = np.empty((max(need, 2 * a.shape[0]),) + a.shape[1:], dtype=a.dtype)
        bigger[: a.shape[0]] = a
        out.append(bigger)
    return tuple(out)


__all__ = ["ARITY", "GROUPS", "KINDS", "SLOTS", "factor_mask", "fill", "grow", "open_words", "ready", "scan"]
