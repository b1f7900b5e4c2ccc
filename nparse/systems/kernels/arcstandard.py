"""Arc-standard on rows (mirrors ``systems/arcstandard.py``): SHIFT, LEFT (s0 -> s1), RIGHT (s1 -> s0)."""

from __future__ import annotations

from numba import njit

from .rows import L_NB, L_NS, L_STACK, attach, initial_single, shift, stack_buffer_positions, top

CODE = 2
# The moves, numbered once here: the Python system takes its ``actions`` and constants from this.
ACTIONS = ("SHIFT", "LEFT", "RIGHT")
SHIFT, LEFT, RIGHT = range(3)


@njit(cache=True)
def initial(row, off, root_end, n):
    initial_single(row, off, root_end, n)


@njit(cache=True)
def terminal(row, off, root_end):
    return row[off[L_NB]] == 0 and row[off[L_NS]] == 1


@njit(cache=True)
def legal(row, off, root_end, out):
    ns, nb = row[off[L_NS]], row[off[L_NB]]
    pair = ns > 1
    s1_word = pair and top(row, off, 1) != 0
    out[SHIFT] = nb > 0
    out[LEFT] = s1_word
    out[RIGHT] = pair and (s1_word or nb == 0)


@njit(cache=True)
def positions(row, off, out):
    stack_buffer_positions(row, off, out)


@njit(cache=True)
def apply(row, off, a):
    stack, ns = off[L_STACK], off[L_NS]
    if a == SHIFT:
        shift(row, off)
    elif a == LEFT:  # LEFT: s0 -> s1, s1 removed
        n_stack = row[ns]
        d = row[stack + n_stack - 2]
        row[stack + n_stack - 2] = row[stack + n_stack - 1]
        row[ns] = n_stack - 1
        attach(row, off, row[stack + n_stack - 2], d)
    else:  # RIGHT: s1 -> s0, s0 popped
        row[ns] -= 1
        attach(row, off, row[stack + row[ns] - 1], row[stack + row[ns]])
