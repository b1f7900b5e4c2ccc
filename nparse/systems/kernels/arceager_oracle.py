"""The arc-eager oracles on rows (mirrors ``ArcEagerStatic`` and ``ArcEagerDynamic``)."""

from __future__ import annotations

import numpy as np
from numba import njit

from .arceager import LEFT, REDUCE, RIGHT, SHIFT
from .gold import G_HEAD, G_KIDS, G_NONPROJ, ILLEGAL, kid_end, kid_start, lost_kids_from, minimal
from .reachable import EXACT_NONPROJECTIVE, best_gain_eager, relative_to_least, row_units
from .rows import L_HEADS, L_LMOD, L_N, L_NS, L_STACK, NONE, buffer, top


@njit(cache=True)
def exact_losses(units, headed, n, top_index, gold_head, root_free, spans, legal, out):
    """``out[a]``: the least loss of a completion after each legal move
    (``reachable.best_gain_eager``), counted from the words still without a head and the move's
    own arc."""
    for a in range(4):
        out[a] = ILLEGAL
    needing = n - 1
    for i in range(1, top_index + 1):
        needing -= headed[i]
    s0 = units[top_index]
    if legal[SHIFT]:
        out[SHIFT] = needing - best_gain_eager(units, headed, n, top_index + 1, gold_head, root_free, spans)
    if legal[RIGHT]:  # s0 -> b0, b0 pushed with its head
        b0 = units[top_index + 1]
        after = headed.copy()
        after[top_index + 1] = 1
        out[RIGHT] = (
            (1 if gold_head[b0] != s0 else 0)
            + needing
            - 1
            - best_gain_eager(units, after, n, top_index + 1, gold_head, root_free and s0 != 0, spans)
        )
    if legal[LEFT] or legal[REDUCE]:  # s0 leaves
        rest = np.empty(n - 1, np.int64)
        rest_headed = np.zeros(n - 1, np.int64)
        rest[:top_index] = units[:top_index]
        rest[top_index:] = units[top_index + 1 : n]
        rest_headed[:top_index] = headed[:top_index]
        gain = best_gain_eager(rest, rest_headed, n - 1, top_index - 1, gold_head, root_free, spans)
        if legal[LEFT]:  # b0 -> s0
            out[LEFT] = (1 if gold_head[s0] != units[top_index + 1] else 0) + needing - 1 - gain
        if legal[REDUCE]:
            out[REDUCE] = needing - gain


@njit(cache=True)
def exact(row, off, gold, spans, legal, cost):
    """Exact costs: the losses after each move less the least of them."""
    ns = row[off[L_NS]]
    units = row_units(row, off)
    headed = np.zeros(units.shape[0], np.int64)
    for i in range(1, ns):
        headed[i] = 1 if row[off[L_HEADS] + units[i]] != NONE else 0
    exact_losses(units, headed, units.shape[0], ns - 1, gold[G_HEAD], row[off[L_LMOD]] == NONE, spans, legal, cost)
    relative_to_least(cost, legal)


@njit(cache=True)
def in_stack(row, off, w):
    base = off[L_STACK]
    for k in range(row[off[L_NS]]):
        if row[base + k] == w:
            return True
    return False


@njit(cache=True)
def step(row, off, gold):
    """Nivre's (2008) static step for s0 and b0: LEFT, RIGHT, REDUCE when b0 has a gold arc with
    a word further down the stack, else SHIFT (also arc-eager+SWAP's step in projective order)."""
    gh = gold[G_HEAD]
    heads = off[L_HEADS]
    s0, b0 = top(row, off, 0), buffer(row, off, 0)
    if s0 != 0 and gh[s0] == b0:
        return LEFT
    if gh[b0] == s0:
        return RIGHT
    if row[heads + s0] != NONE:
        base = off[L_STACK]
        for k in range(row[off[L_NS]] - 1):  # below s0
            w = row[base + k]
            if gh[b0] == w or (gh[w] == b0 and row[heads + w] == NONE):
                return REDUCE
    return SHIFT


@njit(cache=True)
def static(row, off, root_end, opt, gold, seq, legal, cost, out):
    out[step(row, off, gold)] = True


@njit(cache=True)
def dynamic(row, off, root_end, opt, gold, seq, legal, cost, out):
    """Goldberg & Nivre (2012) costs with the single-root rule; with ``EXACT``, the exact costs
    on a non-projective gold tree."""
    if (opt & EXACT_NONPROJECTIVE) != 0 and gold[G_NONPROJ, 0] == 1:
        exact(row, off, gold, seq, legal, cost)
        minimal(cost, out)
        return
    gh = gold[G_HEAD]
    heads = off[L_HEADS]
    s0, b0 = top(row, off, 0), buffer(row, off, 0)
    first = b0 if b0 != NONE else row[off[L_N]] + 1  # the buffer: b0 and every later word
    r = gold[G_KIDS, kid_start(gold, 0)] if kid_end(gold, 0) > kid_start(gold, 0) else NONE
    root_arc_open = row[off[L_LMOD]] == NONE and r >= first  # 0 -> r still reachable
    if legal[SHIFT] or legal[RIGHT]:
        lost = 0  # b0's headless gold dependents on the stack (every headless word before b0 is)
        for k in range(kid_start(gold, b0), kid_end(gold, b0)):
            d = gold[G_KIDS, k]
            if d < b0 and row[heads + d] == NONE:
                lost += 1
        h = gh[b0]
        reachable = root_arc_open if h == 0 else (h > b0 or in_stack(row, off, h))
        if legal[SHIFT]:
            cost[SHIFT] = lost + (1 if h < b0 and reachable else 0)
        if legal[RIGHT]:
            c = lost + (1 if h != s0 and reachable else 0)
            if s0 == 0 and r != b0 and root_arc_open:
                c += 1  # the root's only dependent is taken
            cost[RIGHT] = c
    if legal[LEFT] or legal[REDUCE]:
        lost = lost_kids_from(row, off, gold, s0, first)
        if legal[REDUCE]:
            cost[REDUCE] = lost
        if legal[LEFT]:
            h = gh[s0]
            cost[LEFT] = lost + (1 if h != b0 and h >= first else 0)
    minimal(cost, out)
