"""Where each part of a configuration lives in a row, and the row operations kernels share.

A row holds, in column blocks of the batch width ``C`` (longest sentence + 1): the stack (bottom
first; for 2-Planar the stack of plane 0, for Covington the list lambda1), a second stack (the
stack of plane 1 of 2-Planar, Covington's lambda2 with its leftmost word on top), the buffer
reversed (b0 last, as in ``Config``), heads, leftmost and rightmost modifiers, for 2-Planar the
plane of every arc, and with a completion model the bits of the factors counted per word; then
scalars: stack lengths, buffer length, the active plane, whether the last transition was a
SWITCH, transitions applied, and n. A block a system does not use has width 0 and its length
scalar stays 0.
"""

from __future__ import annotations

from numba import njit

NONE = -1  # "no word": an empty feature position, a missing head or modifier (systems/base.py re-exports it)

# Indices into the layout vector: column offsets of the blocks and scalars of a row.
L_STACK, L_STACK2, L_BUF, L_HEADS, L_LMOD, L_RMOD, L_PLANE, L_COUNTED = range(8)
L_NS, L_NS2, L_NB, L_ACTIVE, L_SWITCHED, L_STEPS, L_N, L_WIDTH = range(8, 16)


@njit(cache=True)
def initial_single(row, off, root_end, n):
    """Empty tree, the words in the buffer, the root on the stack (or last in the buffer)."""
    for k in range(n + 1):
        row[off[L_HEADS] + k] = NONE
        row[off[L_LMOD] + k] = NONE
        row[off[L_RMOD] + k] = NONE
    nb = 0
    if root_end:
        row[off[L_BUF]] = 0
        nb = 1
    for w in range(n, 0, -1):
        row[off[L_BUF] + nb] = w
        nb += 1
    row[off[L_NB]] = nb
    row[off[L_NS]] = 0 if root_end else 1
    row[off[L_STACK]] = 0
    row[off[L_N]] = n


@njit(cache=True)
def plane_stack(row, off, plane):
    """(column of the bottom, length) of the stack of a plane (plane 0: the only stack but in 2-Planar)."""
    if plane == 0:
        return off[L_STACK], row[off[L_NS]]
    return off[L_STACK2], row[off[L_NS2]]


@njit(cache=True)
def active_stack(row, off):
    return plane_stack(row, off, row[off[L_ACTIVE]])


@njit(cache=True)
def inactive_stack(row, off):
    return plane_stack(row, off, 1 - row[off[L_ACTIVE]])


@njit(cache=True)
def top(row, off, k):
    """The k-th word from the top of the active stack (0 = s0), or NONE."""
    base, length = active_stack(row, off)
    return row[base + length - 1 - k] if length > k else NONE


@njit(cache=True)
def buffer(row, off, k):
    """The k-th buffer word (0 = b0), or NONE."""
    nb = row[off[L_NB]]
    return row[off[L_BUF] + nb - 1 - k] if nb > k else NONE


@njit(cache=True)
def is_ancestor(row, off, a, w):
    """Whether a is w or one of its ancestors in the partial tree."""
    heads = off[L_HEADS]
    while w != NONE:
        if w == a:
            return True
        w = row[heads + w]
    return False


@njit(cache=True)
def attach(row, off, h, d):
    """Add the arc h -> d and keep the leftmost/rightmost-modifier blocks current."""
    row[off[L_HEADS] + d] = h
    lm, rm = off[L_LMOD] + h, off[L_RMOD] + h
    if row[lm] == NONE or d < row[lm]:
        row[lm] = d
    if row[rm] == NONE or d > row[rm]:
        row[rm] = d


@njit(cache=True)
def push(row, off, which, w):
    """Push w on stack block ``which`` (L_STACK or L_STACK2)."""
    length = L_NS if which == L_STACK else L_NS2
    row[off[which] + row[off[length]]] = w
    row[off[length]] += 1


@njit(cache=True)
def pop_buffer(row, off):
    row[off[L_NB]] -= 1
    return row[off[L_BUF] + row[off[L_NB]]]


@njit(cache=True)
def shift(row, off):
    """b0 onto the stack (single-stack systems)."""
    push(row, off, L_STACK, pop_buffer(row, off))


@njit(cache=True)
def left_pop(row, off):
    """The arc b0 -> s0, s0 popped (arc-eager and arc-hybrid LEFT)."""
    row[off[L_NS]] -= 1
    attach(row, off, buffer(row, off, 0), row[off[L_STACK] + row[off[L_NS]]])


@njit(cache=True)
def stack_buffer_positions(row, off, out):
    """s0 s1 s2 b0: the positions of arc-hybrid, arc-standard and their SWAP variants."""
    out[0] = top(row, off, 0)
    out[1] = top(row, off, 1)
    out[2] = top(row, off, 2)
    out[3] = buffer(row, off, 0)


@njit(cache=True)
def two_stack_two_buffer_positions(row, off, out):
    """s0 s1 b0 b1: the first positions of arc-eager and Covington."""
    out[0] = top(row, off, 0)
    out[1] = top(row, off, 1)
    out[2] = buffer(row, off, 0)
    out[3] = buffer(row, off, 1)
