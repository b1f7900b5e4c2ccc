"""Compiled loss and transition costs of the 2-Planar dynamic oracle (see twoplanar.py), on rows.

The oracle reads a configuration as a row of ``arrays.Layout`` (the representation the beam and
global training keep their items in) and moves it with the row kernel of ``kernels/twoplanar.py``,
so legality and the effect of every transition are written once for decoding and for the
oracle. ``loss`` follows SPEC.md literally; ``costs`` applies every legal transition to a copy
of the row and compares losses, so it stays obviously equal to the definition. The Python
``Config`` path (greedy training, tests) turns the configuration into a row first
(``Layout.from_config``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from . import twoplanar as kernel
from .rows import L_BUF, L_HEADS, L_N, L_NB, L_NS, L_NS2, L_PLANE, L_STACK, L_STACK2, L_SWITCHED
from .gold import G_HEAD, G_PLANE, ILLEGAL, minimal
from .twoplanar import SWITCH


@njit(cache=True)
def _find(parent: np.ndarray, x: int) -> int:
    while parent[x] != x:
        parent[x] = parent[parent[x]]
        x = parent[x]
    return x


@njit(cache=True)
def loss(row, off, gh, gplane, work) -> int:
    """|gold arcs unreachable on their plane| + cycles in A plus the reachable gold arcs
    (``work``: [5, n + 1] scratch)."""
    n = row[off[L_N]]
    nb = row[off[L_NB]]
    b0 = row[off[L_BUF] + nb - 1] if nb > 0 else n + 1  # the buffer is always b0..n
    heads, plane = off[L_HEADS], off[L_PLANE]
    on0, on1, parent, reach_head, state = work[0], work[1], work[2], work[3], work[4]
    for w in range(n + 1):
        on0[w] = on1[w] = 0  # on the stack of plane 0, of plane 1
        parent[w] = w
        reach_head[w] = -1
        state[w] = 0  # 0 new, >0 visited in walk number state
    for k in range(row[off[L_NS]]):
        on0[row[off[L_STACK] + k]] = 1
    for k in range(row[off[L_NS2]]):
        on1[row[off[L_STACK2] + k]] = 1
    root_taken = False
    for d in range(1, n + 1):
        h = row[heads + d]
        if h >= 0:
            a, b = _find(parent, h), _find(parent, d)
            if a != b:
                parent[a] = b
            if h == 0:
                root_taken = True
    unreachable = 0
    for d in range(1, n + 1):
        h, p = gh[d], gplane[d]
        if p < 0:
            unreachable += 1  # not in the 2-planar gold subset
            continue
        if row[heads + d] == h and row[plane + d] == p:
            continue  # built, on its plane
        if row[heads + d] >= 0:
            unreachable += 1  # another head, or this arc on the other plane
            continue
        lo, hi = (h, d) if h < d else (d, h)
        if hi < b0:
            unreachable += 1  # the later end has left the buffer
            continue
        if lo < b0 and (on0[lo] if p == 0 else on1[lo]) == 0:
            unreachable += 1  # the earlier end has left the plane's stack
            continue
        if _find(parent, h) == _find(parent, d):
            unreachable += 1  # would close a cycle
            continue
        if h == 0 and root_taken:
            unreachable += 1  # the root already has its dependent
            continue
        reach_head[d] = h
    # Cycles of the graph where every word points to its head in A or its reachable gold head.
    cycles = 0
    for start in range(1, n + 1):
        if state[start] != 0:
            continue
        w = start
        while w > 0 and state[w] == 0:
            state[w] = start
            h = row[heads + w]
            w = h if h >= 0 else reach_head[w]
        if w > 0 and state[w] == start:
            cycles += 1
    return unreachable + cycles


@njit(cache=True)
def _legal(row, off, out):
    for t in range(5):
        out[t] = False
    kernel.legal(row, off, False, out)


@njit(cache=True)
def _loss_after(row, off, t, gh, gplane, after, work) -> int:
    """Loss of the configuration reached by transition t (``after``: scratch of a row)."""
    after[:] = row
    kernel.apply(after, off, t)
    return loss(after, off, gh, gplane, work)


@njit(cache=True)
def costs(row, off, gh, gplane, regularize, out):
    """Cost of every transition (ILLEGAL where illegal), with the SWITCH look-ahead; with
    ``regularize``, SWITCH costs 1 when another transition costs 0 (switch regularization)."""
    legal = np.zeros(5, dtype=np.bool_)
    _legal(row, off, legal)
    after = np.full(5, -1)
    work = np.empty((5, gh.shape[0]), dtype=np.int64)
    moved = np.empty_like(row)
    best = -1
    for t in range(4):
        if legal[t]:
            after[t] = _loss_after(row, off, t, gh, gplane, moved, work)
            if best < 0 or after[t] < best:
                best = after[t]
    if legal[SWITCH]:
        # SWITCH changes no arc; the next transition is forced to be another one, on the other stack.
        switched = row.copy()
        kernel.apply(switched, off, SWITCH)
        other = np.zeros(5, dtype=np.bool_)
        _legal(switched, off, other)
        for t in range(4):
            if other[t]:
                value = _loss_after(switched, off, t, gh, gplane, moved, work)
                if after[SWITCH] < 0 or value < after[SWITCH]:
                    after[SWITCH] = value
    if row[off[L_SWITCHED]] != 0:
        base = best  # entered by a SWITCH: its own loss looks one step ahead too
    else:
        base = loss(row, off, gh, gplane, work)
    for t in range(5):
        out[t] = after[t] - base if after[t] >= 0 else ILLEGAL
    if regularize and out[SWITCH] == 0:
        for t in range(4):
            if out[t] == 0:
                out[SWITCH] = 1


REGULARIZE = 1  # the option bit of ``TwoPlanarDynamic(switch_regularization=True)``


@njit(cache=True)
def dynamic(row, off, root_end, opt, gold, seq, legal, cost, out):
    costs(row, off, gold[G_HEAD], gold[G_PLANE], (opt & REGULARIZE) != 0, cost)
    minimal(cost, out)
