"""The arc-hybrid oracles on rows (mirrors ``ArcHybridStatic`` and ``ArcHybridDynamic``)."""

from __future__ import annotations

import numpy as np
from numba import njit

from .archybrid import LEFT, RIGHT, SHIFT
from .gold import G_HEAD, G_KIDS, G_NONPROJ, ILLEGAL, complete, kid_end, kid_start, lost_kids_from, minimal
from .reachable import ARCHYBRID, EXACT_NONPROJECTIVE, best_gain, relative_to_least, row_units
from .rows import L_HEADS, L_N, L_NB, L_NS, NONE, buffer, top


@njit(cache=True)
def static(row, off, root_end, opt, gold, seq, legal, cost, out):
    """LEFT if s0 is complete and its head is b0, RIGHT if complete with head s1, else SHIFT."""
    ns = row[off[L_NS]]
    s0 = top(row, off, 0)
    if ns > 0 and s0 != 0 and complete(row, off, gold, s0):
        h = gold[G_HEAD, s0]
        if row[off[L_NB]] > 0 and h == buffer(row, off, 0) and legal[LEFT]:
            out[LEFT] = True
            return
        if ns > 1 and h == top(row, off, 1):
            out[RIGHT] = True
            return
    out[SHIFT] = True


@njit(cache=True)
def exact_losses(units, n, root_end, top_index, gold_head, spans, legal, out):
    """``out[a]``: the least loss of a completion after each legal move (``kernels/reachable``),
    counted from the arcs still to come and the move's own arc."""
    for a in range(3):
        out[a] = ILLEGAL
    first_stack = 0 if root_end else 1
    if legal[SHIFT]:
        out[SHIFT] = (n - 1) - best_gain(
            units, n, not root_end, first_stack, top_index + 1, gold_head, ARCHYBRID, spans
        )
    if legal[LEFT] or legal[RIGHT]:
        s0 = units[top_index]
        rest = np.empty(n - 1, np.int64)
        rest[:top_index] = units[:top_index]
        rest[top_index:] = units[top_index + 1 : n]
        after = (n - 2) - best_gain(rest, n - 1, not root_end, first_stack, top_index - 1, gold_head, ARCHYBRID, spans)
        if legal[LEFT]:  # b0 -> s0
            out[LEFT] = (1 if gold_head[s0] != units[top_index + 1] else 0) + after
        if legal[RIGHT]:  # s1 -> s0
            out[RIGHT] = (1 if gold_head[s0] != units[top_index - 1] else 0) + after


@njit(cache=True)
def exact(row, off, root_end, gold, spans, legal, cost):
    """Exact costs: the losses after each move less the least of them."""
    units = row_units(row, off)
    exact_losses(units, units.shape[0], root_end, row[off[L_NS]] - 1, gold[G_HEAD], spans, legal, cost)
    relative_to_least(cost, legal)


@njit(cache=True)
def dynamic(row, off, root_end, opt, gold, seq, legal, cost, out):
    """Goldberg & Nivre (2013) costs with the single-root rule; with ``EXACT``, the exact costs
    on a non-projective gold tree."""
    if (opt & EXACT_NONPROJECTIVE) != 0 and gold[G_NONPROJ, 0] == 1:
        exact(row, off, root_end, gold, seq, legal, cost)
        minimal(cost, out)
        return
    heads = off[L_HEADS]
    ns = row[off[L_NS]]
    b0 = buffer(row, off, 0)
    first = b0 if b0 > 0 else row[off[L_N]] + 1  # the buffer: b0 and every later word
    s0 = top(row, off, 0)
    if legal[SHIFT]:
        c = 0
        for k in range(kid_start(gold, b0), kid_end(gold, b0)):
            d = gold[G_KIDS, k]
            if d < first and row[heads + d] == NONE:
                c += 1
        h = gold[G_HEAD, b0]
        if h == 0:
            if (ns > 0) if root_end else (ns > 1):
                c += 1  # the root arc survives only if b0 goes to the bottom of the stack
        elif h < first and row[heads + h] == NONE and h != s0:
            c += 1
        cost[SHIFT] = c
    if legal[LEFT] or legal[RIGHT]:
        lost = lost_kids_from(row, off, gold, s0, first)
        h = gold[G_HEAD, s0]
        bottom = ns == (1 if root_end else 2)
        s1 = top(row, off, 1)
        if legal[LEFT]:
            if h == b0:
                cost[LEFT] = lost
            elif h == 0:
                cost[LEFT] = lost + (1 if bottom else 0)
            else:
                cost[LEFT] = lost + (1 if h == s1 or (h > b0 and b0 > 0) else 0)
        if legal[RIGHT]:
            cost[RIGHT] = lost + (1 if h != s1 and h != 0 and h >= first else 0)
    minimal(cost, out)
