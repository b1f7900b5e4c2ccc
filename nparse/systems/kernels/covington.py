"""NL-Covington on rows (mirrors ``systems/covington.py``): lambda1 is the stack block (i on top),
lambda2 the second stack block (its leftmost word on top), j is b0. SHIFT moves lambda2 back onto
lambda1 and pushes j; LEFT (j -> i), RIGHT (i -> j) and NOARC move i to lambda2."""

from __future__ import annotations

from numba import njit

from .rows import (
    NONE,
    L_HEADS, L_LMOD, L_NB, L_NS, L_NS2, L_STACK, L_STACK2, attach, buffer, initial_single, is_ancestor, pop_buffer,
    push, top, two_stack_two_buffer_positions,
)  # fmt: skip

CODE = 6
# The moves, numbered once here: the Python system takes its ``actions`` and constants from this.
ACTIONS = ("SHIFT", "LEFT", "RIGHT", "NOARC")
SHIFT, LEFT, RIGHT, NOARC = range(4)


@njit(cache=True)
def initial(row, off, root_end, n):
    initial_single(row, off, root_end, n)
    row[off[L_NS2]] = 0


@njit(cache=True)
def terminal(row, off, root_end):
    return row[off[L_NB]] == 0


@njit(cache=True)
def legal(row, off, root_end, out):
    if row[off[L_NB]] == 0:
        return
    out[SHIFT] = True
    if row[off[L_NS]] == 0:
        return
    heads = off[L_HEADS]
    i, j = top(row, off, 0), buffer(row, off, 0)
    out[LEFT] = i != 0 and row[heads + i] == NONE and not is_ancestor(row, off, i, j)
    out[RIGHT] = row[heads + j] == NONE and not is_ancestor(row, off, j, i) and (i != 0 or row[off[L_LMOD]] == NONE)
    out[NOARC] = True


@njit(cache=True)
def positions(row, off, out):
    two_stack_two_buffer_positions(row, off, out)
    n2 = row[off[L_NS2]]
    out[4] = row[off[L_STACK2] + n2 - 1] if n2 > 0 else NONE


@njit(cache=True)
def apply(row, off, a):
    ns, ns2 = off[L_NS], off[L_NS2]
    if a == SHIFT:  # SHIFT: lambda1 . lambda2 . j
        while row[ns2] > 0:
            row[ns2] -= 1
            push(row, off, L_STACK, row[off[L_STACK2] + row[ns2]])
        push(row, off, L_STACK, pop_buffer(row, off))
        return
    i = top(row, off, 0)
    if a == LEFT:
        attach(row, off, buffer(row, off, 0), i)
    elif a == RIGHT:
        attach(row, off, i, buffer(row, off, 0))
    row[ns] -= 1
    push(row, off, L_STACK2, i)
