"""Arc-eager + SWAP on rows (mirrors ``systems/arceager_swap.py``): arc-eager's moves (RIGHT only
to a headless b0, since a swapped word may have its head), and SWAP (s0 back into the buffer
behind b0), legal while s0 is a word before b0."""

from __future__ import annotations

from numba import njit

from . import arceager, archybrid_swap
from .rows import L_HEADS, L_NB, NONE, buffer, is_ancestor, top

CODE = 7
# The moves, numbered once: the Python system takes its ``actions`` and constants from this.
ACTIONS = (*arceager.ACTIONS, "SWAP")  # arceager's moves, numbered as there, then SWAP
SHIFT, LEFT, RIGHT, REDUCE = arceager.SHIFT, arceager.LEFT, arceager.RIGHT, arceager.REDUCE
SWAP = len(arceager.ACTIONS)


@njit(cache=True)
def initial(row, off, root_end, n):
    arceager.initial(row, off, root_end, n)


@njit(cache=True)
def terminal(row, off, root_end):
    return arceager.terminal(row, off, root_end)


@njit(cache=True)
def legal(row, off, root_end, out):
    arceager.legal(row, off, root_end, out)
    if row[off[L_NB]] == 0:
        out[SWAP] = False
        return
    b0 = buffer(row, off, 0)
    s0 = top(row, off, 0)
    out[LEFT] = out[LEFT] and not is_ancestor(row, off, s0, b0)  # a swapped-back b0 may descend from s0
    out[RIGHT] = out[RIGHT] and row[off[L_HEADS] + b0] == NONE and not is_ancestor(row, off, b0, s0)
    out[SWAP] = 0 < s0 and s0 < b0


@njit(cache=True)
def positions(row, off, out):
    arceager.positions(row, off, out)


@njit(cache=True)
def apply(row, off, a):
    if a < SWAP:
        arceager.apply(row, off, a)
    else:
        archybrid_swap.apply(row, off, archybrid_swap.SWAP)  # the same SWAP: s0 back behind b0
