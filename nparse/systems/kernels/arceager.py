"""Arc-eager on rows (mirrors ``systems/arceager.py``): SHIFT, LEFT, RIGHT, REDUCE."""

from __future__ import annotations

from numba import njit

from .rows import (
    NONE,
    L_HEADS, L_LMOD, L_NB, L_NS, L_STACK, attach, initial_single, left_pop, pop_buffer, push, shift, top,
    two_stack_two_buffer_positions,
)  # fmt: skip

CODE = 1
# The moves, numbered once here: the Python system takes its ``actions`` and constants from this.
ACTIONS = ("SHIFT", "LEFT", "RIGHT", "REDUCE")
SHIFT, LEFT, RIGHT, REDUCE = range(4)


@njit(cache=True)
def initial(row, off, root_end, n):
    initial_single(row, off, root_end, n)


@njit(cache=True)
def terminal(row, off, root_end):
    return row[off[L_NB]] == 0


@njit(cache=True)
def legal(row, off, root_end, out):
    nb = row[off[L_NB]]
    s0 = top(row, off, 0)
    headless = row[off[L_HEADS] + s0] == NONE
    out[SHIFT] = nb > 0
    out[LEFT] = nb > 0 and s0 != 0 and headless
    out[RIGHT] = nb > 0 and (s0 != 0 or row[off[L_LMOD]] == NONE)
    out[REDUCE] = s0 != 0 and not headless


@njit(cache=True)
def positions(row, off, out):
    two_stack_two_buffer_positions(row, off, out)


@njit(cache=True)
def apply(row, off, a):
    if a == SHIFT:
        shift(row, off)
    elif a == LEFT:
        left_pop(row, off)
    elif a == RIGHT:
        b0 = pop_buffer(row, off)
        attach(row, off, top(row, off, 0), b0)
        push(row, off, L_STACK, b0)
    else:
        row[off[L_NS]] -= 1
