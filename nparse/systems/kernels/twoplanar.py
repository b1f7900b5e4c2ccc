"""2-Planar on rows (mirrors ``systems/twoplanar.py``): SHIFT onto both stacks, LEFT (b0 -> s0),
RIGHT (s0 -> b0), REDUCE and SWITCH on the active plane's stack."""

from __future__ import annotations

from numba import njit

from .rows import (
    NONE,
    L_ACTIVE, L_HEADS, L_LMOD, L_NB, L_NS, L_NS2, L_PLANE, L_STACK, L_STACK2, L_SWITCHED, active_stack, attach, buffer,
    inactive_stack, initial_single, is_ancestor, pop_buffer, push, top,
)  # fmt: skip

CODE = 4
# The moves, numbered once here: the Python system takes its ``actions`` and constants from this.
ACTIONS = ("SHIFT", "LEFT", "RIGHT", "REDUCE", "SWITCH")
SHIFT, LEFT, RIGHT, REDUCE, SWITCH = range(5)


@njit(cache=True)
def initial(row, off, root_end, n):
    initial_single(row, off, root_end, n)
    row[off[L_STACK2]] = 0
    row[off[L_NS2]] = 1
    for k in range(n + 1):
        row[off[L_PLANE] + k] = NONE


@njit(cache=True)
def terminal(row, off, root_end):
    return row[off[L_NB]] == 0


@njit(cache=True)
def legal(row, off, root_end, out):
    if row[off[L_NB]] == 0:
        return
    heads = off[L_HEADS]
    b0 = buffer(row, off, 0)
    _, na = active_stack(row, off)
    if na > 0:
        s0 = top(row, off, 0)
        out[LEFT] = s0 != 0 and row[heads + s0] == NONE and not is_ancestor(row, off, s0, b0)
        out[RIGHT] = (
            row[heads + b0] == NONE and not is_ancestor(row, off, b0, s0) and (s0 != 0 or row[off[L_LMOD]] == NONE)
        )
    out[SHIFT] = True
    out[REDUCE] = na > 0
    out[SWITCH] = row[off[L_SWITCHED]] == 0


@njit(cache=True)
def positions(row, off, out):
    out[0] = top(row, off, 0)
    out[1] = top(row, off, 1)
    out[2] = top(row, off, 2)
    out[3] = buffer(row, off, 0)
    base, length = inactive_stack(row, off)
    out[4] = row[base + length - 1] if length > 0 else NONE
    out[5] = row[base + length - 2] if length > 1 else NONE


@njit(cache=True)
def apply(row, off, a):
    row[off[L_SWITCHED]] = 0
    active = row[off[L_ACTIVE]]
    if a == SHIFT:  # SHIFT onto both stacks
        b0 = pop_buffer(row, off)
        push(row, off, L_STACK, b0)
        push(row, off, L_STACK2, b0)
    elif a == LEFT:  # LEFT: b0 -> s0
        d = top(row, off, 0)
        attach(row, off, buffer(row, off, 0), d)
        row[off[L_PLANE] + d] = active
    elif a == RIGHT:  # RIGHT: s0 -> b0
        d = buffer(row, off, 0)
        attach(row, off, top(row, off, 0), d)
        row[off[L_PLANE] + d] = active
    elif a == REDUCE:  # REDUCE
        row[off[L_NS if active == 0 else L_NS2]] -= 1
    else:  # SWITCH
        row[off[L_ACTIVE]] = 1 - active
        row[off[L_SWITCHED]] = 1
