"""Compiled loss and transition costs of the Covington dynamic oracle (see covington.py).

The same definitions as ``covington.loss`` and ``CovingtonDynamic.costs`` in Python, on arrays:
gold heads, the heads built so far, i (top of lambda1, -1 if empty), j (b0) and whether the
root has a dependent. ``tests/test_covington.py`` checks both against exhaustive search and
against each other.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .covington import LEFT, NOARC, RIGHT, SHIFT
from .gold import G_HEAD, G_KIDS, kid_end, kid_start, minimal
from .rows import L_HEADS, L_LMOD, L_NB, L_NS, NONE, buffer, top


@njit(cache=True)
def _tops(heads, tops):
    """The top of the partial tree of every node (a headless node is its own top)."""
    for w in range(heads.shape[0]):
        x = w
        while heads[x] != NONE:
            x = heads[x]
        tops[w] = x


@njit(cache=True)
def loss(gh, heads, i, j, root_taken, tops, parent, state):
    """|U| + cycles in A ∪ I (module docstring of covington.py); the last three are scratch."""
    n1 = gh.shape[0]
    _tops(heads, tops)
    unreachable = 0
    for d in range(n1):
        parent[d] = heads[d]
    for d in range(1, n1):
        h = gh[d]
        if heads[d] == h:
            continue
        reachable = False
        if heads[d] == NONE and tops[h] != d and (h != 0 or not root_taken):
            lo, r = (h, d) if h < d else (d, h)
            reachable = r > j or (r == j and lo <= i)
        if reachable:
            parent[d] = h
        else:
            unreachable += 1
    cycles = 0
    for w in range(n1):
        state[w] = 0
    for start in range(n1):
        w = start
        while w != NONE and state[w] == 0:
            state[w] = 1
            w = parent[w]
        if w != NONE and state[w] == 1:
            cycles += 1
        w = start
        while w != NONE and state[w] == 1:
            state[w] = 2
            w = parent[w]
    return unreachable + cycles


@njit(cache=True)
def costs(gh, heads, i, j, root_taken, legal, out):
    """Cost of every legal transition into ``out`` (-1 for illegal ones)."""
    n1 = gh.shape[0]
    tops = np.empty(n1, dtype=np.int64)
    parent = np.empty(n1, dtype=np.int64)
    state = np.empty(n1, dtype=np.int64)
    base = loss(gh, heads, i, j, root_taken, tops, parent, state)
    for a in range(4):
        out[a] = -1
    if legal[SHIFT]:
        out[SHIFT] = loss(gh, heads, j, j + 1, root_taken, tops, parent, state) - base
    if legal[NOARC]:
        out[NOARC] = loss(gh, heads, i - 1, j, root_taken, tops, parent, state) - base
    for a in (LEFT, RIGHT):
        if legal[a]:
            h, d = (j, i) if a == LEFT else (i, j)
            heads[d] = h
            out[a] = loss(gh, heads, i - 1, j, root_taken or h == 0, tops, parent, state) - base
            heads[d] = NONE


@njit(cache=True)
def static(row, off, root_end, opt, gold, seq, legal, cost, out):
    """Nivre (2008): LEFT, RIGHT, NOARC while j has a pending gold arc further left in lambda1, SHIFT."""
    if row[off[L_NS]] == 0:
        out[SHIFT] = True
        return
    gh = gold[G_HEAD]
    heads = off[L_HEADS]
    i, j = top(row, off, 0), buffer(row, off, 0)
    if gh[i] == j:
        out[LEFT] = True
    elif gh[j] == i:
        out[RIGHT] = True
    elif 0 <= gh[j] and gh[j] < i and row[heads + j] == NONE:
        out[NOARC] = True
    else:
        for k in range(kid_start(gold, j), kid_end(gold, j)):
            d = gold[G_KIDS, k]
            if d < i and row[heads + d] == NONE:
                out[NOARC] = True
                return
        out[SHIFT] = True


@njit(cache=True)
def dynamic(row, off, root_end, opt, gold, seq, legal, cost, out):
    """The costs of ``costs`` on a row (none once the buffer is empty)."""
    if row[off[L_NB]] == 0:
        return
    n1 = gold.shape[1]
    heads = row[off[L_HEADS] : off[L_HEADS] + n1].astype(np.int64)
    i = top(row, off, 0)
    costs(gold[G_HEAD], heads, i, buffer(row, off, 0), row[off[L_LMOD]] != NONE, legal, cost)
    minimal(cost, out)
