"""Arc-hybrid on rows (mirrors ``systems/archybrid.py``): SHIFT, LEFT (b0 -> s0), RIGHT (s1 -> s0)."""

from __future__ import annotations

from numba import njit

from .rows import L_NB, L_NS, L_STACK, attach, buffer, initial_single, left_pop, shift, stack_buffer_positions

CODE = 0
# The moves, numbered once here: the Python system takes its ``actions`` and constants from this.
ACTIONS = ("SHIFT", "LEFT", "RIGHT")
SHIFT, LEFT, RIGHT = range(3)


@njit(cache=True)
def initial(row, off, root_end, n):
    initial_single(row, off, root_end, n)


@njit(cache=True)
def terminal(row, off, root_end):
    ns, nb = row[off[L_NS]], row[off[L_NB]]
    if root_end:
        return ns == 0 and nb == 1
    return nb == 0 and ns == 1


@njit(cache=True)
def legal(row, off, root_end, out):
    ns, nb = row[off[L_NS]], row[off[L_NB]]
    if root_end:
        b0_root = buffer(row, off, 0) == 0
        out[SHIFT] = not b0_root
        out[LEFT] = ns > 0 and (not b0_root or ns == 1)
        out[RIGHT] = ns > 1
    else:
        out[SHIFT] = nb > 0
        out[LEFT] = ns > 1 and nb > 0
        out[RIGHT] = ns > 2 or (ns == 2 and nb == 0)


@njit(cache=True)
def positions(row, off, out):
    stack_buffer_positions(row, off, out)


@njit(cache=True)
def apply(row, off, a):
    stack, ns = off[L_STACK], off[L_NS]
    if a == SHIFT:
        shift(row, off)
    elif a == LEFT:
        left_pop(row, off)
    else:  # RIGHT: s1 -> s0, s0 popped
        row[ns] -= 1
        attach(row, off, row[stack + row[ns] - 1], row[stack + row[ns]])
