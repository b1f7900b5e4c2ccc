"""The arc-standard oracles on rows (mirror ``ArcStandardStatic`` and ``ArcStandardDynamic``),
and the dynamic program of the dynamic one (``best_gain``: its derivation is in
``systems/arcstandard.py``)."""

from __future__ import annotations

import numpy as np
from numba import njit

from .arcstandard import LEFT, RIGHT, SHIFT
from .gold import G_HEAD, ILLEGAL, complete
from .rows import L_BUF, L_HEADS, L_NB, L_NS, L_STACK, top

NEG = -(1 << 28)


@njit(cache=True)
def can_left(row, off, gold):
    """s1 is a word, complete, and s0 is its head."""
    if row[off[L_NS]] < 2:
        return False
    s0, s1 = top(row, off, 0), top(row, off, 1)
    return s1 != 0 and gold[G_HEAD, s1] == s0 and complete(row, off, gold, s1)


@njit(cache=True)
def can_right(row, off, gold):
    """s0 is complete and s1 its head (the root only once the buffer is empty)."""
    if row[off[L_NS]] < 2:
        return False
    s0, s1 = top(row, off, 0), top(row, off, 1)
    return gold[G_HEAD, s0] == s1 and complete(row, off, gold, s0) and (s1 != 0 or row[off[L_NB]] == 0)


@njit(cache=True)
def static(row, off, root_end, opt, gold, seq, legal, cost, out):
    if row[off[L_NS]] > 1:
        s0, s1 = top(row, off, 0), top(row, off, 1)
        if s1 != 0 and gold[G_HEAD, s1] == s0 and complete(row, off, gold, s1):
            out[LEFT] = True
            return
        if gold[G_HEAD, s0] == s1 and complete(row, off, gold, s0):
            out[RIGHT] = True
            return
    out[SHIFT] = True


@njit(cache=True)
def best_gain(units, n, top_index, gold_head):
    """The most gold arcs among ``units[:n]`` (the stack bottom to top, the root first, then the
    buffer in order; ``top_index``: s0's place) that a completion can still build: Eisner's
    projective dynamic program with the root taking one dependent, and with every stack word
    below s0 that gets an arc to a stack word on its left (its head, or a left dependent)
    spanning s0 with its right half."""
    if n <= 1:
        return 0
    cr = np.full((n, n), NEG, np.int64)  # cr[h, e]: h and its right dependents' subtrees up to e
    cl = np.full((n, n), NEG, np.int64)  # cl[h, l]: h and its left dependents' subtrees from l
    ir = np.full((n, n), NEG, np.int64)  # ir[h, d]: h -> d, d right of h
    il_any = np.full((n, n), NEG, np.int64)  # il[h, d]: h -> d, d left of h, any right end of d
    il_far = np.full((n, n), NEG, np.int64)  # ... with d's right half reaching s0 where d must
    for i in range(1, n):
        cr[i, i] = 0
        cl[i, i] = 0
    for length in range(1, n - 1):
        for s in range(1, n - length):
            t = s + length
            w_st = 1 if gold_head[units[t]] == units[s] else 0
            w_ts = 1 if gold_head[units[s]] == units[t] else 0
            bound = 1 <= s < top_index
            best_r, best_l, best_far = NEG, NEG, NEG
            for r in range(s, t):
                right = cr[s, r] + cl[t, r + 1]
                if right > best_r:
                    best_r = right
                if right > best_l:
                    best_l = right
                if (not bound or r >= top_index) and right > best_far:
                    best_far = right
            ir[s, t] = best_r + w_st
            il_any[t, s] = best_l + w_ts
            il_far[t, s] = best_far + w_ts
            best = NEG
            for d in range(s + 1, t + 1):
                if 1 <= d < top_index and t < top_index:
                    continue  # d's head is on its left: its right half must reach s0
                value = ir[s, d] + cr[d, t]
                if value > best:
                    best = value
            cr[s, t] = best
            best = NEG
            for d in range(s, t):
                value = cl[d, s] + (il_any[t, d] if d == s else il_far[t, d])
                if value > best:
                    best = value
            cl[t, s] = best
    best = NEG
    for c in range(1, n):
        value = cl[c, 1] + cr[c, n - 1] + (1 if gold_head[units[c]] == units[0] else 0)
        if value > best:
            best = value
    return best


@njit(cache=True)
def successor_losses(units, n, top_index, gold_head, legal, out):
    """``out[a]``: the least loss of a completion after each legal move, counted from the arcs
    still to come and the move's own arc (the arcs already built add the same to every move)."""
    for a in range(3):
        out[a] = ILLEGAL
    if legal[SHIFT]:
        out[SHIFT] = (n - 1) - best_gain(units, n, top_index + 1, gold_head)
    if legal[LEFT] or legal[RIGHT]:
        s0, s1 = units[top_index], units[top_index - 1]
        rest = units.copy()
        if legal[LEFT]:  # s0 -> s1: s1 leaves the units, s0 moves down one place
            rest[top_index - 1 : n - 1] = units[top_index:n]
            out[LEFT] = (1 if gold_head[s1] != s0 else 0) + (n - 2) - best_gain(rest, n - 1, top_index - 1, gold_head)
        if legal[RIGHT]:  # s1 -> s0: s0 leaves
            rest[top_index : n - 1] = units[top_index + 1 : n]
            rest[: top_index] = units[:top_index]
            out[RIGHT] = (1 if gold_head[s0] != s1 else 0) + (n - 2) - best_gain(rest, n - 1, top_index - 1, gold_head)


@njit(cache=True)
def dynamic(row, off, root_end, opt, gold, seq, legal, cost, out):
    ns, nb = row[off[L_NS]], row[off[L_NB]]
    units = np.empty(ns + nb, np.int64)
    for i in range(ns):
        units[i] = row[off[L_STACK] + i]
    for j in range(nb):
        units[ns + j] = row[off[L_BUF] + nb - 1 - j]
    successor_losses(units, ns + nb, ns - 1, gold[G_HEAD], legal, cost)
    best = 1 << 30
    for a in range(3):
        if legal[a] and cost[a] < best:
            best = cost[a]
    for a in range(3):
        if legal[a]:
            cost[a] -= best
            out[a] = cost[a] == 0
