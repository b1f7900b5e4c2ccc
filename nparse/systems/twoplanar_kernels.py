"""Compiled loss and transition costs of the 2-Planar dynamic oracle (see twoplanar.py).

The configuration travels as arrays: the active and inactive stacks, heads, the plane of every
arc, the first buffer word (the buffer is always the words b0..n), the active plane and whether
the last transition was a SWITCH. ``loss`` follows SPEC.md literally; ``costs`` applies every
legal transition to a copy and compares losses, so it stays obviously equal to the definition.
"""

from __future__ import annotations

import numpy as np
from numba import njit

SHIFT, LEFT, RIGHT, REDUCE, SWITCH = 0, 1, 2, 3, 4
ILLEGAL = -1


@njit(cache=True)
def _find(parent: np.ndarray, x: int) -> int:
    while parent[x] != x:
        parent[x] = parent[parent[x]]
        x = parent[x]
    return x


@njit(cache=True)
def loss(n, b0, stack_a, len_a, stack_i, len_i, active, heads, plane, gh, gplane) -> int:
    """|gold arcs unreachable on their plane| + cycles in A plus the reachable gold arcs."""
    on0 = np.zeros(n + 1, dtype=np.bool_)
    on1 = np.zeros(n + 1, dtype=np.bool_)
    s0_arr, l0, s1_arr, l1 = (stack_a, len_a, stack_i, len_i) if active == 0 else (stack_i, len_i, stack_a, len_a)
    for k in range(l0):
        on0[s0_arr[k]] = True
    for k in range(l1):
        on1[s1_arr[k]] = True
    parent = np.arange(n + 1)
    root_taken = False
    for d in range(1, n + 1):
        h = heads[d]
        if h >= 0:
            a, b = _find(parent, h), _find(parent, d)
            if a != b:
                parent[a] = b
            if h == 0:
                root_taken = True
    unreachable = 0
    reach_head = np.full(n + 1, -1)
    for d in range(1, n + 1):
        h, p = gh[d], gplane[d]
        if p < 0:
            unreachable += 1  # not in the 2-planar gold subset
            continue
        if heads[d] == h and plane[d] == p:
            continue  # built, on its plane
        if heads[d] >= 0:
            unreachable += 1  # another head, or this arc on the other plane
            continue
        lo, hi = (h, d) if h < d else (d, h)
        if hi < b0:
            unreachable += 1  # the later end has left the buffer
            continue
        if lo < b0 and not (on0[lo] if p == 0 else on1[lo]):
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
    state = np.zeros(n + 1, dtype=np.int64)  # 0 new, >0 visited in walk number state
    cycles = 0
    for start in range(1, n + 1):
        if state[start] != 0:
            continue
        w = start
        while w > 0 and state[w] == 0:
            state[w] = start
            w = heads[w] if heads[w] >= 0 else reach_head[w]
        if w > 0 and state[w] == start:
            cycles += 1
    return unreachable + cycles


@njit(cache=True)
def _is_ancestor(heads, a, w) -> bool:
    while w >= 0:
        if w == a:
            return True
        w = heads[w]
    return False


@njit(cache=True)
def _legal(n, b0, stack_a, len_a, heads, switched, out):
    for t in range(5):
        out[t] = False
    if b0 > n:
        return
    root_taken = False
    for d in range(1, n + 1):
        if heads[d] == 0:
            root_taken = True
    out[SHIFT] = True
    if len_a > 0:
        s0 = stack_a[len_a - 1]
        out[LEFT] = s0 != 0 and heads[s0] < 0 and not _is_ancestor(heads, s0, b0)
        out[RIGHT] = heads[b0] < 0 and not _is_ancestor(heads, b0, s0) and (s0 != 0 or not root_taken)
        out[REDUCE] = True
    out[SWITCH] = not switched


@njit(cache=True)
def _loss_after(t, n, b0, stack_a, len_a, stack_i, len_i, active, heads, plane, gh, gplane) -> int:
    """Loss of the configuration reached by the (legal, non-SWITCH) transition t."""
    sa = stack_a.copy()
    si = stack_i.copy()
    hd = heads.copy()
    pl = plane.copy()
    la, li, b = len_a, len_i, b0
    if t == SHIFT:
        sa[la] = b
        si[li] = b
        la += 1
        li += 1
        b += 1
    elif t == LEFT:
        d = sa[la - 1]
        hd[d] = b
        pl[d] = active
    elif t == RIGHT:
        hd[b] = sa[la - 1]
        pl[b] = active
    else:
        la -= 1
    return loss(n, b, sa, la, si, li, active, hd, pl, gh, gplane)


@njit(cache=True)
def _costs(n, b0, stack_a, len_a, stack_i, len_i, active, heads, plane, switched, gh, gplane, out):
    """Cost of every transition (ILLEGAL where illegal), with the SWITCH look-ahead."""
    legal = np.zeros(5, dtype=np.bool_)
    _legal(n, b0, stack_a, len_a, heads, switched, legal)
    after = np.full(5, -1)
    best = -1
    for t in range(4):
        if legal[t]:
            after[t] = _loss_after(t, n, b0, stack_a, len_a, stack_i, len_i, active, heads, plane, gh, gplane)
            if best < 0 or after[t] < best:
                best = after[t]
    if legal[SWITCH]:
        # SWITCH changes no arc; the next transition is forced to be another one, on the other stack.
        other = np.zeros(5, dtype=np.bool_)
        _legal(n, b0, stack_i, len_i, heads, True, other)
        for t in range(4):
            if other[t]:
                value = _loss_after(t, n, b0, stack_i, len_i, stack_a, len_a, 1 - active, heads, plane, gh, gplane)
                if after[SWITCH] < 0 or value < after[SWITCH]:
                    after[SWITCH] = value
    if switched:
        base = best  # entered by a SWITCH: its own loss looks one step ahead too
    else:
        base = loss(n, b0, stack_a, len_a, stack_i, len_i, active, heads, plane, gh, gplane)
    for t in range(5):
        out[t] = after[t] - base if after[t] >= 0 else ILLEGAL


def _arrays(c, gold):
    n = c.n
    cap = n + 2
    stack_a = np.zeros(cap, dtype=np.int64)
    stack_i = np.zeros(cap, dtype=np.int64)
    stack_a[: len(c.stack)] = c.stack
    stack_i[: len(c.stack2)] = c.stack2
    b0 = c.buffer[-1] if c.buffer else n + 1
    heads = np.array(c.heads, dtype=np.int64)
    plane = np.array(c.plane, dtype=np.int64)
    return n, b0, stack_a, len(c.stack), stack_i, len(c.stack2), c.active, heads, plane


def config_loss(c, gold) -> int:
    """Loss of a configuration (without the SWITCH look-ahead)."""
    n, b0, sa, la, si, li, active, heads, plane = _arrays(c, gold)
    return int(loss(n, b0, sa, la, si, li, active, heads, plane, gold.gh, gold.gplane))


def costs(c, gold) -> list:
    n, b0, sa, la, si, li, active, heads, plane = _arrays(c, gold)
    out = np.zeros(5, dtype=np.int64)
    _costs(n, b0, sa, la, si, li, active, heads, plane, c.switched, gold.gh, gold.gplane, out)
    return [None if x == ILLEGAL else int(x) for x in out.tolist()]
