"""The SwapStandard oracles on rows (EAGER, LAZY, ND-SW, ND-ALL; MINIMAL is replayed, ``gold.replay``)
and the compiled "can shift" test of Björkelund & Nivre (2015, Algorithm 2) they share.

After one SHIFT the EAGER oracle runs on arrays until the parse ends (True) or gets stuck with an
empty buffer (False). As their footnote notes, once the stack is down to the root and one word
the gold tree is recoverable, so the run stops there. ``swapstandard.can_shift`` is the same
test on Config objects; tests check that both agree.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .arcstandard_oracle import can_left, can_right
from .gold import G_HEAD, G_MPC, G_PROJ
from .rows import L_BUF, L_HEADS, L_NB, L_NS, L_STACK, buffer, top
from .swapstandard import LEFT, RIGHT, SHIFT, SWAP


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


# -- the five oracles on rows (mirror ``swapstandard.py``) -----------------------------------


@njit(cache=True)
def can_swap(row, off, gold):
    """EAGER's test: SWAP is legal and s0 precedes s1 in the projective order."""
    if row[off[L_NS]] <= 2:
        return False
    s0, s1 = top(row, off, 0), top(row, off, 1)
    return 0 < s1 and s1 < s0 and gold[G_PROJ, s0] < gold[G_PROJ, s1]


@njit(cache=True)
def can_swap_lazy(row, off, gold):
    nb = row[off[L_NB]]
    return can_swap(row, off, gold) and (nb == 0 or gold[G_MPC, top(row, off, 0)] != gold[G_MPC, buffer(row, off, 0)])


@njit(cache=True)
def can_shift_row(row, off, gold):
    """Algorithm 2's test on a row: SHIFT, then EAGER to the end without a dead end."""
    ns, nb = row[off[L_NS]], row[off[L_NB]]
    n1 = gold.shape[1]
    return _can_shift(row[off[L_STACK] : off[L_STACK] + ns], row[off[L_BUF] : off[L_BUF] + nb],
                      row[off[L_HEADS] : off[L_HEADS] + n1], gold[G_HEAD], gold[G_PROJ])  # fmt: skip


@njit(cache=True)
def arc_due(row, off, gold, out):
    """LEFT, else RIGHT, marked in ``out`` when the static oracles take it first; whether one was."""
    if can_left(row, off, gold):
        out[LEFT] = True
    elif can_right(row, off, gold):
        out[RIGHT] = True
    else:
        return False
    return True


@njit(cache=True)
def eager(row, off, root_end, opt, gold, seq, legal, cost, out):
    if not arc_due(row, off, gold, out):
        out[SWAP if can_swap(row, off, gold) else SHIFT] = True


@njit(cache=True)
def lazy(row, off, root_end, opt, gold, seq, legal, cost, out):
    if not arc_due(row, off, gold, out):
        out[SWAP if can_swap_lazy(row, off, gold) else SHIFT] = True


@njit(cache=True)
def ndsw(row, off, root_end, opt, gold, seq, legal, cost, out):
    """EAGER, with SHIFT also correct beside a SWAP when the gold tree stays reachable."""
    if arc_due(row, off, gold, out):
        return
    if can_swap(row, off, gold):
        out[SWAP] = True
        out[SHIFT] = can_shift_row(row, off, gold)
    else:
        out[SHIFT] = True


@njit(cache=True)
def ndall(row, off, root_end, opt, gold, seq, legal, cost, out):
    out[LEFT] = can_left(row, off, gold)
    out[RIGHT] = can_right(row, off, gold)
    out[SWAP] = can_swap(row, off, gold)
    out[SHIFT] = can_shift_row(row, off, gold) if out[LEFT] or out[RIGHT] or out[SWAP] else True
