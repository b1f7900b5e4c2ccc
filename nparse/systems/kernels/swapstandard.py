"""SwapStandard on rows (mirrors ``systems/swapstandard.py``): arc-standard's moves, and SWAP (s1
back to the buffer), legal while s1 is a word before s0."""

from __future__ import annotations

from numba import njit

from . import arcstandard
from .rows import L_BUF, L_NB, L_NS, L_STACK, top

CODE = 3
# The moves, numbered once: the Python system takes its ``actions`` and constants from this.
ACTIONS = (*arcstandard.ACTIONS, "SWAP")  # arcstandard's moves, numbered as there, then SWAP
SHIFT, LEFT, RIGHT = arcstandard.SHIFT, arcstandard.LEFT, arcstandard.RIGHT
SWAP = len(arcstandard.ACTIONS)


@njit(cache=True)
def initial(row, off, root_end, n):
    arcstandard.initial(row, off, root_end, n)


@njit(cache=True)
def terminal(row, off, root_end):
    return arcstandard.terminal(row, off, root_end)


@njit(cache=True)
def legal(row, off, root_end, out):
    arcstandard.legal(row, off, root_end, out)
    s1 = top(row, off, 1)
    out[SWAP] = row[off[L_NS]] > 2 and 0 < s1 and s1 < top(row, off, 0)


@njit(cache=True)
def positions(row, off, out):
    arcstandard.positions(row, off, out)


@njit(cache=True)
def apply(row, off, a):
    if a < SWAP:
        arcstandard.apply(row, off, a)
        return
    stack, ns = off[L_STACK], off[L_NS]  # SWAP: s1 back to the buffer
    n_stack = row[ns]
    s1 = row[stack + n_stack - 2]
    row[stack + n_stack - 2] = row[stack + n_stack - 1]
    row[ns] = n_stack - 1
    buf, nb = off[L_BUF], row[off[L_NB]]
    row[buf + nb] = s1
    row[off[L_NB]] = nb + 1
