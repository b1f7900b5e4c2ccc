"""Compiled loss and transition costs of the 2-Planar dynamic oracle (see twoplanar.py), on rows.

The oracle reads a configuration as a row of ``arrays.Layout`` (the representation the beam and
global training keep their items in) and moves it with the row kernel of ``kernels/twoplanar.py``,
so legality and the effect of every transition are written once for decoding and for the
oracle. ``loss`` follows the definition in twoplanar.py's docstring literally; ``costs`` applies
every legal transition to a copy of the row and compares losses, so it stays obviously equal to the definition: the Python oracle
(tests, exhaustive search) turns its ``Config`` into a row (``Layout.from_config``) and calls it.
Training's rows call ``fast_costs``, the same numbers from one pass over the configuration (its
reachable arcs, components and cycles, then what each transition changes in them), 2.2x faster;
tests/test_row_oracles.py walks it in lockstep with ``costs``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from . import twoplanar as kernel
from . import twoplanar_agnostic
from .rows import L_ACTIVE, L_BUF, L_HEADS, L_LMOD, L_N, L_NB, L_NS, L_NS2, L_PLANE, L_STACK, L_STACK2, L_SWITCHED, NONE
from .gold import G_CROSS, G_HEAD, G_PLANE, ILLEGAL, minimal
from .twoplanar import LEFT, REDUCE, SHIFT, SWITCH


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
    wrong = 0  # built arcs with a wrong head: a cycle needs one (the gold arcs form a tree)
    for d in range(1, n + 1):
        h, p = gh[d], gplane[d]
        wrong += row[heads + d] >= 0 and row[heads + d] != h
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
def _loss(row, off, gh, gplane, gcross, work) -> int:
    """The canonical loss, or with ``gcross`` (not empty) the plane-agnostic one."""
    if gcross.shape[0] > 0:
        return twoplanar_agnostic.loss(row, off, gh, gplane, gcross, work)
    return loss(row, off, gh, gplane, work)


@njit(cache=True)
def _loss_after(row, off, t, gh, gplane, gcross, after, work) -> int:
    """Loss of the configuration reached by transition t (``after``: scratch of a row)."""
    after[:] = row
    kernel.apply(after, off, t)
    return _loss(after, off, gh, gplane, gcross, work)


@njit(cache=True)
def costs(row, off, gh, gplane, gcross, regularize, out):
    """Cost of every transition (ILLEGAL where illegal), with the SWITCH look-ahead; with
    ``regularize``, SWITCH costs 1 when another transition costs 0 (switch regularization).
    ``gcross`` empty: the canonical loss; else the plane-agnostic one (``twoplanar_agnostic``)."""
    legal = np.zeros(5, dtype=np.bool_)
    _legal(row, off, legal)
    after = np.full(5, -1)
    work = np.empty((5, gh.shape[0]), dtype=np.int64)
    moved = np.empty_like(row)
    best = -1
    for t in range(4):
        if legal[t]:
            after[t] = _loss_after(row, off, t, gh, gplane, gcross, moved, work)
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
                value = _loss_after(switched, off, t, gh, gplane, gcross, moved, work)
                if after[SWITCH] < 0 or value < after[SWITCH]:
                    after[SWITCH] = value
    if row[off[L_SWITCHED]] != 0:
        base = best  # entered by a SWITCH: its own loss looks one step ahead too
    else:
        base = _loss(row, off, gh, gplane, gcross, work)
    for t in range(5):
        out[t] = after[t] - base if after[t] >= 0 else ILLEGAL
    if regularize and out[SWITCH] == 0:
        for t in range(4):
            if out[t] == 0:
                out[SWITCH] = 1


# ``fast_costs``: a transition changes the loss only through the reachable gold arcs it takes
# away (SHIFT: b0's arcs to its left; REDUCE: s's arcs to the right on its plane; an arc: the
# dependent's own, the one that would now close a cycle of A, the root's others) and through the
# cycles of A plus the reachable arcs that those break or the new arc closes.

(B_ON0, B_ON1, B_COMP, B_REACH, B_CYCLE, B_SEEN, B_GONE, B_STATE, B_AFTER, B_OTHER, B_LO0, B_LO1, B_HI) = range(
    13
)  # ``fast_costs``'s scratch; B_LO0/B_LO1: reachable arcs by their earlier end, per plane


@njit(cache=True)
def _tree_root(row, heads, w) -> int:
    while row[heads + w] >= 0:
        w = row[heads + w]
    return w


@njit(cache=True)
def _drop(d, stamp, work) -> int:
    """Take word d's reachable arc away (mark it gone); 1 if that breaks a cycle not yet broken."""
    work[B_GONE, d] = stamp
    first = work[B_CYCLE, d]
    if first != 0 and work[B_SEEN, first] != stamp:
        work[B_SEEN, first] = stamp
        return 1
    return 0


@njit(cache=True)
def _after(row, off, t, p, s, b0, n, gh, gplane, unreachable, cycles, roots, wrong, stamp, work) -> int:
    """``loss`` of the configuration reached by transition t (not SWITCH) on plane p, whose stack
    top is s: the reachable arcs t takes away, the cycles they break, and the cycle a new arc
    closes (``stamp``: a number of its own for each call, marking what this transition changes;
    ``roots``: the reachable arcs from the root; ``wrong``: the built arcs with a wrong head).
    Without cycles, the arcs taken away are counted in advance (B_HI, B_LO0, B_LO1), as nothing is
    left to break; without a wrong arc, no cycle can close."""
    heads = off[L_HEADS]
    comp, reach = work[B_COMP], work[B_REACH]
    if cycles == 0 and t == SHIFT:
        return unreachable + work[B_HI, b0]
    if cycles == 0 and t == REDUCE:
        return unreachable + work[B_LO0 + p, s]
    if t == SHIFT:  # the arcs from b0 to a word on its left: b0 leaves the buffer
        for d in range(1, n + 1):
            h = reach[d]
            if h >= 0 and (h if h > d else d) == b0:
                unreachable += 1
                cycles -= _drop(d, stamp, work)
        return unreachable + cycles
    if t == REDUCE:  # the arcs from s to the right on this plane: s leaves the plane's stack
        for d in range(1, n + 1):
            h = reach[d]
            if h >= 0 and gplane[d] == p and (h if h < d else d) == s:
                unreachable += 1
                cycles -= _drop(d, stamp, work)
        return unreachable + cycles
    # LEFT (b0 -> s) or RIGHT (s -> b0): od gets its head oh
    oh, od = (b0, s) if t == LEFT else (s, b0)
    if not (gh[od] == oh and gplane[od] == p) and reach[od] >= 0:
        unreachable += 1  # od's reachable gold arc gives way to a wrong one
    cycles -= _drop(od, stamp, work)  # od points elsewhere now
    r = _tree_root(row, heads, oh)  # the only word of the joined tree without a head
    if r > 0 and reach[r] >= 0 and comp[reach[r]] == comp[od]:
        unreachable += 1  # would now close a cycle
        cycles -= _drop(r, stamp, work)
    if oh == 0 and cycles == 0:  # the root has its dependent (the walk below ends at 0 either way)
        unreachable += roots - (1 if reach[od] == 0 else 0)
    elif oh == 0:
        for d in range(1, n + 1):
            if d != od and reach[d] == 0:
                unreachable += 1
                cycles -= _drop(d, stamp, work)
    if wrong == 0 and gh[od] == oh:
        return unreachable + cycles  # all arcs gold: no cycle
    w, steps = oh, 0  # does the new arc close a cycle?
    while w > 0 and steps <= n:
        if w == od:
            cycles += 1
            break
        h = row[heads + w]
        w = h if h >= 0 else (reach[w] if work[B_GONE, w] != stamp else -1)
        steps += 1
    return unreachable + cycles


@njit(cache=True)
def fast_costs(row, off, gh, gplane, regularize, legal, out):
    """``costs`` (``legal``: the row's legal transitions), with the loss after each transition
    derived from one pass over the row."""
    n = row[off[L_N]]
    nb = row[off[L_NB]]
    b0 = row[off[L_BUF] + nb - 1] if nb > 0 else n + 1
    heads, plane = off[L_HEADS], off[L_PLANE]
    work = np.zeros((13, max(n + 1, 5)), dtype=np.int64)
    on0, on1, comp, reach = work[B_ON0], work[B_ON1], work[B_COMP], work[B_REACH]
    for w in range(n + 1):
        comp[w] = -1
        reach[w] = -1
    ns0, ns1 = row[off[L_NS]], row[off[L_NS2]]
    for k in range(ns0):
        on0[row[off[L_STACK] + k]] = 1
    for k in range(ns1):
        on1[row[off[L_STACK2] + k]] = 1
    root_taken = row[off[L_LMOD]] != NONE  # word 0 has a dependent
    for w in range(n + 1):  # comp: the root of each word's tree in A (A is a forest)
        x = w
        while comp[x] < 0 and row[heads + x] >= 0:
            x = row[heads + x]
        top = comp[x] if comp[x] >= 0 else x
        x = w
        while comp[x] < 0:
            comp[x] = top
            if row[heads + x] < 0:
                break
            x = row[heads + x]
    unreachable = roots = 0  # as in ``loss``
    wrong = 0  # built arcs with a wrong head: a cycle needs one (the gold arcs form a tree)
    for d in range(1, n + 1):
        h, p = gh[d], gplane[d]
        wrong += row[heads + d] >= 0 and row[heads + d] != h
        if p < 0:
            unreachable += 1
        elif row[heads + d] == h and row[plane + d] == p:
            continue
        elif row[heads + d] >= 0:
            unreachable += 1
        else:
            lo, hi = (h, d) if h < d else (d, h)
            if (
                hi < b0
                or (lo < b0 and (on0[lo] if p == 0 else on1[lo]) == 0)
                or comp[h] == comp[d]
                or (h == 0 and root_taken)
            ):
                unreachable += 1
            else:
                reach[d] = h
                work[B_LO0 + p, lo] += 1
                work[B_HI, hi] += 1
                roots += h == 0
    cycles = twoplanar_agnostic.count_cycles(row, heads, n, reach, work[B_CYCLE], work[B_STATE]) if wrong else 0
    active = row[off[L_ACTIVE]]
    after = work[B_AFTER]
    for t in range(5):
        after[t] = -1
    best = -1
    for q in range(2):  # the active plane's transitions, then, after a SWITCH, the other's
        p = active if q == 0 else 1 - active
        if q == 1:
            if not legal[SWITCH]:
                break
            other = work[B_OTHER]
            for t in range(5):
                other[t] = 0
            row[off[L_ACTIVE]], row[off[L_SWITCHED]] = p, 1  # the row after SWITCH, put back below
            kernel.legal(row, off, False, other)
            row[off[L_ACTIVE]], row[off[L_SWITCHED]] = active, 0
        else:
            for t in range(5):
                work[B_OTHER, t] = legal[t]
            other = work[B_OTHER]
        ns = ns0 if p == 0 else ns1
        s = row[off[L_STACK if p == 0 else L_STACK2] + ns - 1] if ns > 0 else -1
        for t in range(4):
            if not other[t]:
                continue
            if q == 1 and t == SHIFT:
                value = after[SHIFT]  # SHIFT moves both stacks: the same after a SWITCH
            else:
                value = _after(
                    row, off, t, p, s, b0, n, gh, gplane, unreachable, cycles, roots, wrong, 1 + 4 * q + t, work
                )
            if q == 0:
                after[t] = value
                if best < 0 or value < best:
                    best = value
            elif after[SWITCH] < 0 or value < after[SWITCH]:
                after[SWITCH] = value
    if row[off[L_SWITCHED]] != 0:
        base = best
    else:
        base = unreachable + cycles
    for t in range(5):
        out[t] = after[t] - base if after[t] >= 0 else ILLEGAL
    if regularize and out[SWITCH] == 0:
        for t in range(4):
            if out[t] == 0:
                out[SWITCH] = 1


REGULARIZE = 1  # the option bits of ``TwoPlanarDynamic(switch_regularization=True)``
AGNOSTIC = 2  # of ``plane_agnostic=True``
PREFER_CANONICAL = 4  # and of ``prefer_canonical=True`` (with ``plane_agnostic``)


@njit(cache=True)
def prefer_canonical(row, off, gh, gplane, gcross, regularize, legal, cost, out):
    """The plane-agnostic costs (``cost``) and correct set (``out``) with ties going to the
    canonical planes: of the plane-agnostic best moves, those the canonical oracle also calls
    best where there are any (both before switch regularization, which then drops SWITCH from
    the set if another move is in it, and reports a SWITCH left out at cost 1)."""
    costs(row, off, gh, gplane, gcross, False, cost)
    minimal(cost, out)
    canonical = np.empty(5, dtype=np.int64)
    fast_costs(row, off, gh, gplane, False, legal, canonical)
    also = np.zeros(5, dtype=np.bool_)
    minimal(canonical, also)
    shared = False
    for t in range(5):
        shared = shared or (out[t] and also[t])
    if shared:
        for t in range(5):
            out[t] = out[t] and also[t]
    if regularize:
        other = False
        for t in range(SWITCH):
            other = other or out[t]
        if out[SWITCH] and other:
            out[SWITCH] = False
        if cost[SWITCH] == 0 and not out[SWITCH]:
            cost[SWITCH] = 1  # as switch regularization reports it: zero-cost, but not a target


@njit(cache=True)
def dynamic(row, off, root_end, opt, gold, seq, legal, cost, out):
    regularize = (opt & REGULARIZE) != 0
    if opt & PREFER_CANONICAL:
        prefer_canonical(row, off, gold[G_HEAD], gold[G_PLANE], gold[G_CROSS], regularize, legal, cost, out)
    elif opt & AGNOSTIC:
        costs(row, off, gold[G_HEAD], gold[G_PLANE], gold[G_CROSS], regularize, cost)
        minimal(cost, out)
    else:
        fast_costs(row, off, gold[G_HEAD], gold[G_PLANE], regularize, legal, cost)
        minimal(cost, out)
