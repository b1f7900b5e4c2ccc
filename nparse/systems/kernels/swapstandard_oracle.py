"""Compiled "can shift" test of Björkelund & Nivre (2015, Algorithm 2) for SwapStandard.

After one SHIFT the EAGER oracle runs on arrays until the parse ends (True) or gets stuck with an
empty buffer (False). As their footnote notes, once the stack is down to the root and one word
the gold tree is recoverable, so the run stops there. ``swapstandard.can_shift`` is the same
test on Config objects; tests check that both agree.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .rows import L_BUF, L_HEADS, L_NB, L_NS, L_STACK


@njit(cache=True)
def _can_shift(stack_in, buffer_in, heads, gh, proj) -> bool:
    n = heads.shape[0] - 1
    if buffer_in.shape[0] == 0:
        return False
    stack = np.empty(n + 2, dtype=np.int64)
    buffer = np.empty(n + 2, dtype=np.int64)  # reversed: buffer[lb - 1] is b0
    ls, lb = stack_in.shape[0], buffer_in.shape[0]
    stack[:ls] = stack_in
    buffer[:lb] = buffer_in
    pending = np.zeros(n + 1, dtype=np.int64)  # unattached gold dependents of every word
    for d in range(1, n + 1):
        if heads[d] < 0:
            pending[gh[d]] += 1
    lb -= 1
    stack[ls] = buffer[lb]
    ls += 1
    while ls > 2 or lb > 0:
        if ls <= 2:
            return True  # only the root and one word left on the stack
        s0, s1 = stack[ls - 1], stack[ls - 2]
        if s1 != 0 and gh[s1] == s0 and pending[s1] == 0:
            stack[ls - 2] = s0
            ls -= 1
            pending[s0] -= 1
        elif gh[s0] == s1 and pending[s0] == 0 and (s1 != 0 or lb == 0):
            ls -= 1
            pending[s1] -= 1
        elif s1 != 0 and s1 < s0 and proj[s0] < proj[s1]:
            buffer[lb] = s1
            lb += 1
            stack[ls - 2] = s0
            ls -= 1
        elif lb > 0:
            lb -= 1
            stack[ls] = buffer[lb]
            ls += 1
        else:
            return False  # dead end
    return True


def can_shift(c, gold) -> bool:
    return bool(
        _can_shift(
            np.array(c.stack, dtype=np.int64),
            np.array(c.buffer, dtype=np.int64),
            np.array(c.heads, dtype=np.int64),
            gold.gh,
            gold.proj_arr,
        )
    )


@njit(cache=True)
def ndall_rows(states, items, sent, off, gh, proj, gstart, out):
    """ND-ALL's correct transitions (``SwapNDAll.correct``) of rows ``states[items]``, row i
    belonging to the gold tree ``sent[i]`` of ``gh``/``proj`` (concatenated, tree g from
    ``gstart[g]``): beam training asks this for every correct item at every step."""
    for k in range(items.shape[0]):
        row = states[items[k]]
        g = sent[items[k]]
        lo, hi = gstart[g], gstart[g + 1]
        tree, order = gh[lo:hi], proj[lo:hi]
        ns, nb = row[off[L_NS]], row[off[L_NB]]
        stack = row[off[L_STACK] : off[L_STACK] + ns]
        buffer = row[off[L_BUF] : off[L_BUF] + nb]
        heads = row[off[L_HEADS] : off[L_HEADS] + hi - lo]
        left = right = swap = False
        if ns >= 2:
            s0, s1 = stack[ns - 1], stack[ns - 2]
            s0_open = s1_open = False  # a gold dependent not attached yet
            for d in range(1, hi - lo):
                if heads[d] < 0:
                    s0_open |= tree[d] == s0
                    s1_open |= tree[d] == s1
            left = s1 != 0 and tree[s1] == s0 and not s1_open
            right = tree[s0] == s1 and not s0_open and (s1 != 0 or nb == 0)
            swap = ns > 2 and 0 < s1 and s1 < s0 and order[s0] < order[s1]
        out[k, 1], out[k, 2], out[k, 3] = left, right, swap
        out[k, 0] = _can_shift(stack, buffer, heads, tree, order) if (left or right or swap) else True
