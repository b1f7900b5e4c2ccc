"""Compiled "can shift" test of Björkelund & Nivre (2015, Algorithm 2) for SwapStandard.

After one SHIFT the EAGER oracle runs on arrays until the parse ends (True) or gets stuck with an
empty buffer (False). As their footnote notes, once the stack is down to the root and one word
the gold tree is recoverable, so the run stops there. ``swapstandard.can_shift`` is the same
test on Config objects; tests check that both agree.
"""

from __future__ import annotations

import numpy as np
from numba import njit


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
