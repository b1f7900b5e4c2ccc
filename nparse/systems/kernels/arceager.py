"""Arc-eager on rows (mirrors ``systems/arceager.py``): SHIFT, LEFT, RIGHT, REDUCE."""

from __future__ import annotations

from numba import njit

from ..base import NONE
from .rows import (
    L_HEADS, L_LMOD, L_NB, L_NS, L_STACK, attach, initial_single, left_pop, pop_buffer, push, shift, top,
    two_stack_two_buffer_positions,
)  # fmt: skip

CODE = 1


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
    out[0] = nb > 0
    out[1] = nb > 0 and s0 != 0 and headless
    out[2] = nb > 0 and (s0 != 0 or row[off[L_LMOD]] == NONE)
    out[3] = s0 != 0 and not headless


@njit(cache=True)
def positions(row, off, out):
    two_stack_two_buffer_positions(row, off, out)


@njit(cache=True)
def apply(row, off, a):
    if a == 0:
        shift(row, off)
    elif a == 1:
        left_pop(row, off)
    elif a == 2:
        b0 = pop_buffer(row, off)
        attach(row, off, top(row, off, 0), b0)
        push(row, off, L_STACK, b0)
    else:
        row[off[L_NS]] -= 1
