"""Arc-hybrid + SWAP on rows (mirrors ``systems/archybrid_swap.py``): arc-hybrid's moves, and SWAP
(s0 back into the buffer behind b0), legal while s0 precedes b0."""

from __future__ import annotations

from numba import njit

from . import archybrid
from .rows import L_BUF, L_NB, L_NS, L_STACK, buffer, top

CODE = 5
# The moves, numbered once: the Python system takes its ``actions`` and constants from this.
ACTIONS = (*archybrid.ACTIONS, "SWAP")  # archybrid's moves, numbered as there, then SWAP
SHIFT, LEFT, RIGHT = archybrid.SHIFT, archybrid.LEFT, archybrid.RIGHT
SWAP = len(archybrid.ACTIONS)


@njit(cache=True)
def initial(row, off, root_end, n):
    archybrid.initial(row, off, root_end, n)


@njit(cache=True)
def terminal(row, off, root_end):
    return archybrid.terminal(row, off, root_end)


@njit(cache=True)
def legal(row, off, root_end, out):
    archybrid.legal(row, off, root_end, out)
    if root_end:
        b0 = buffer(row, off, 0)
        out[SWAP] = row[off[L_NS]] > 0 and b0 != 0 and top(row, off, 0) < b0


@njit(cache=True)
def positions(row, off, out):
    archybrid.positions(row, off, out)


@njit(cache=True)
def apply(row, off, a):
    if a < SWAP:
        archybrid.apply(row, off, a)
        return
    stack, ns = off[L_STACK], off[L_NS]  # SWAP: s0 goes back into the buffer behind b0
    row[ns] -= 1
    buf, nb = off[L_BUF], row[off[L_NB]]
    row[buf + nb] = row[buf + nb - 1]
    row[buf + nb - 1] = row[stack + row[ns]]
    row[off[L_NB]] = nb + 1
