"""The arc-eager+SWAP oracles on rows (mirrors ``ArcEagerSwapEager`` and ``ArcEagerSwapLazy``)."""

from __future__ import annotations

from numba import njit

from .arceager_oracle import step
from .arceager_swap import LEFT, REDUCE, RIGHT, SHIFT, SWAP
from .gold import G_HEAD, G_MPC, G_PROJ, complete
from .rows import L_BUF, L_HEADS, L_NB, NONE, buffer, top


@njit(cache=True)
def next_in_order(row, off, gold):
    """The buffer word first in the projective order."""
    proj = gold[G_PROJ]
    buf = off[L_BUF]
    w = NONE
    for k in range(row[off[L_NB]] - 1, -1, -1):  # from b0 on, as min() meets them
        x = row[buf + k]
        if w == NONE or proj[x] < proj[w]:
            w = x
    return w


@njit(cache=True)
def eager(row, off, root_end, opt, gold, seq, legal, cost, out):
    b0 = buffer(row, off, 0)
    w = next_in_order(row, off, gold)
    if b0 != w:
        out[SHIFT] = True
    elif gold[G_PROJ, top(row, off, 0)] > gold[G_PROJ, w]:
        out[SWAP] = True  # s0 was parked
    else:
        out[step(row, off, gold)] = True


@njit(cache=True)
def lazy(row, off, root_end, opt, gold, seq, legal, cost, out):
    gh, proj, mpc = gold[G_HEAD], gold[G_PROJ], gold[G_MPC]
    heads = off[L_HEADS]
    b0, s0 = buffer(row, off, 0), top(row, off, 0)
    w = next_in_order(row, off, gold)
    parked = proj[s0] > proj[w]
    done = complete(row, off, gold, s0)  # s0 has every dependent
    if parked and done and row[heads + s0] != NONE:
        out[REDUCE] = True  # a finished word of a parked component
    elif b0 != w:  # b0 is parked: first build its component with the parked s0
        if parked and mpc[s0] == mpc[b0] and gh[s0] == b0 and done:
            out[LEFT] = True
        elif parked and mpc[s0] == mpc[b0] and gh[b0] == s0 and row[heads + b0] == NONE:
            out[RIGHT] = True
        else:
            out[SHIFT] = True
    elif parked:
        out[SWAP] = True
    else:
        out[step(row, off, gold)] = True
