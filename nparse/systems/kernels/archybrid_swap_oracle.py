"""The arc-hybrid+SWAP oracles on rows (mirrors ``ArcHybridSwapStatic`` and
``ArcHybridSwapDynamic``; the root is last in the buffer)."""

from __future__ import annotations

import numpy as np
from numba import njit

from .archybrid_swap import LEFT, RIGHT, SHIFT, SWAP
from .gold import G_HEAD, G_KIDS, G_MPC, G_PROJ, complete, kid_end, kid_start, minimal
from .rows import L_BUF, L_HEADS, L_NB, L_NS, L_STACK, NONE, buffer, top

LAZY = 2  # the option bit of ``ArcHybridSwapStatic(lazy=True)``


@njit(cache=True)
def static_arc(row, off, gold, legal):
    """LEFT or RIGHT when s0 is complete and its gold head is b0 or s1 (and the move is legal), else -1."""
    ns = row[off[L_NS]]
    if ns == 0:
        return -1
    s0 = top(row, off, 0)
    if not complete(row, off, gold, s0):
        return -1
    h = gold[G_HEAD, s0]
    if h == buffer(row, off, 0) and legal[LEFT]:
        return LEFT
    if ns > 1 and h == top(row, off, 1):
        return RIGHT
    return -1


@njit(cache=True)
def swap_due(row, off, gold, lazy):
    """b0 precedes s0 in the projective order (and, lazily, b0 and b1 are in different maximal
    projective components or b1 is the root)."""
    if row[off[L_NS]] == 0:
        return False
    s0, b0 = top(row, off, 0), buffer(row, off, 0)
    if b0 == 0 or s0 > b0 or gold[G_PROJ, b0] > gold[G_PROJ, s0]:
        return False
    if not lazy:
        return True
    b1 = buffer(row, off, 1)
    return b1 == 0 or gold[G_MPC, b0] != gold[G_MPC, b1]


@njit(cache=True)
def static(row, off, root_end, opt, gold, seq, legal, cost, out):
    a = static_arc(row, off, gold, legal)
    if a >= 0:
        out[a] = True
    elif swap_due(row, off, gold, (opt & LAZY) != 0):
        out[SWAP] = True
    else:
        out[SHIFT] = True


@njit(cache=True)
def may_explore(row, off, gold, action):
    """Exploration stays where the oracle is exact: no wrong SWAP, no skipped due SWAP."""
    return action != SWAP and not swap_due(row, off, gold, False)


@njit(cache=True)
def static_dynamic(row, off, root_end, opt, gold, seq, legal, cost, out):
    """Static SWAP decision, dynamic costs for the other transitions on the projective-order view."""
    if swap_due(row, off, gold, False):
        for a in range(SWAP):
            if legal[a]:
                cost[a] = 1
        cost[SWAP] = 0
        out[SWAP] = True
        return
    if legal[SWAP]:
        cost[SWAP] = 1
    gh, proj = gold[G_HEAD], gold[G_PROJ]
    heads = off[L_HEADS]
    n1 = gold.shape[1]
    ns, nb = row[off[L_NS]], row[off[L_NB]]
    stack, buf = off[L_STACK], off[L_BUF]
    b0 = buffer(row, off, 0)
    first = NONE  # m: the buffer word earliest in projective order
    for k in range(nb):
        w = row[buf + k]
        if w != 0 and (first == NONE or proj[w] < proj[first]):
            first = w
    limit = proj[first] if first != NONE else n1
    settled = ns  # the stack is sorted by projective order: premature words form its top
    while settled > 0 and proj[row[stack + settled - 1]] > limit:
        settled -= 1
    alive = np.zeros(n1, dtype=np.bool_)
    viewed = np.zeros(n1, dtype=np.bool_)  # on the view's stack
    for k in range(ns):
        alive[row[stack + k]] = True
        viewed[row[stack + k]] = k < settled
    for k in range(nb):
        alive[row[buf + k]] = True
    if legal[SHIFT]:
        if b0 != first:
            cost[SHIFT] = 0
        else:
            s_top = row[stack + settled - 1] if settled > 0 else NONE
            h = gh[b0]
            c = 0
            for k in range(kid_start(gold, b0), kid_end(gold, b0)):
                if viewed[gold[G_KIDS, k]]:
                    c += 1
            if h == 0:
                c += 1 if settled > 0 else 0
            elif viewed[h] and h != s_top:
                c += 1
            cost[SHIFT] = c
    if legal[LEFT] or legal[RIGHT]:
        s0 = top(row, off, 0)
        h = gh[s0]
        live = 0  # s0's gold dependents still alive and headless
        lost = 0  # those of them not on the view's stack
        for k in range(kid_start(gold, s0), kid_end(gold, s0)):
            d = gold[G_KIDS, k]
            if alive[d] and row[heads + d] == NONE:
                live += 1
                if not viewed[d]:
                    lost += 1
        head_alive = h == 0 or alive[h]
        if ns > settled:  # s0 is premature: all its other live arcs are lost
            if legal[LEFT]:
                cost[LEFT] = live + (1 if h != b0 and head_alive else 0)
            if legal[RIGHT]:
                cost[RIGHT] = live + (1 if h != top(row, off, 1) and head_alive else 0)
        else:
            s1 = top(row, off, 1)
            in_view_buffer = h != 0 and alive[h] and not viewed[h]
            if legal[LEFT]:
                keeps = h == s1 or in_view_buffer or (h == 0 and ns == 1)
                cost[LEFT] = lost + (1 if h != b0 and keeps else 0)
            if legal[RIGHT]:
                cost[RIGHT] = lost + (1 if in_view_buffer else 0)
    minimal(cost, out)
