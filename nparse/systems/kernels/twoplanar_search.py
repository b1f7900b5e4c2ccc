"""Exhaustive search for 2-Planar on rows, compiled: the reference the plane-agnostic oracle is
checked against on every 2-planar tree of up to 6 words and random ones of 7-8.

The search is ``search.ExactLoss`` with ``twoplanar.reference_search``'s loss and pruning, run
by numba over rows instead of Python ``Config`` objects (a 6-word tree reaches millions of
configurations): it tries every legal transition sequence, memoised on a key that holds what
decides the future (both stacks as word sets, since a stack always lists its words in sentence
order; the buffer's length; the active plane; the SWITCH flag; whether the root has its
dependent; the top of the tree of every word still on a stack or in the buffer), a state and its
mirror image sharing one key when any plane will do. It shares only
the row kernel's ``legal`` and ``apply`` with the oracle, which tests/test_row_oracles.py checks
against the Python system.
"""

from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.typed import Dict

from . import twoplanar as kernel
from .rows import L_ACTIVE, L_BUF, L_HEADS, L_LMOD, L_N, L_NB, L_NS, L_NS2, L_STACK, L_STACK2, L_SWITCHED
from .twoplanar import LEFT, RIGHT

KEY = types.UniTuple(types.int64, 2)
UNSET = 1 << 40  # larger than any loss


def new_memo() -> Dict:
    return Dict.empty(key_type=KEY, value_type=types.int64)


@njit(cache=True)
def state_key(row, off, agnostic) -> tuple[int, int]:
    """The memo key; with ``agnostic`` the planes are interchangeable, so the key of a state and
    of its mirror image (stacks and active plane exchanged) is the same."""
    n = row[off[L_N]]
    heads = off[L_HEADS]
    alive = np.zeros(n + 1, dtype=np.bool_)
    a = 0
    for k in range(row[off[L_NS]]):
        w = row[off[L_STACK] + k]
        a |= 1 << w
        alive[w] = True
    for k in range(row[off[L_NS2]]):
        w = row[off[L_STACK2] + k]
        a |= 1 << (16 + w)
        alive[w] = True
    nb = row[off[L_NB]]
    for k in range(nb):
        alive[row[off[L_BUF] + k]] = True
    a |= nb << 32
    active = row[off[L_ACTIVE]]
    if agnostic and (a & 0xFFFF) > ((a >> 16) & 0xFFFF):
        a = (a & ~0xFFFFFFFF) | ((a & 0xFFFF) << 16) | ((a >> 16) & 0xFFFF)
        active = 1 - active
    a |= active << 40
    a |= row[off[L_SWITCHED]] << 41
    a |= (row[off[L_LMOD]] >= 0) << 42
    b = 0
    for w in range(n + 1):
        top = 15
        if alive[w]:
            top = w
            while row[heads + top] >= 0:
                top = row[heads + top]
        b |= top << (4 * w)
    return (a, b)


@njit(cache=True)
def arc_loss(row, off, a, gh, gplane, agnostic) -> int:
    """0 for a gold arc (on its canonical plane unless ``agnostic``), 1 for any other."""
    b0 = row[off[L_BUF] + row[off[L_NB]] - 1]
    active = row[off[L_ACTIVE]]
    ns = row[off[L_NS if active == 0 else L_NS2]]
    s0 = row[off[L_STACK if active == 0 else L_STACK2] + ns - 1]
    h, d = (b0, s0) if a == LEFT else (s0, b0)
    return 0 if gh[d] == h and (agnostic or gplane[d] == active) else 1


@njit(cache=True)
def gain(row, off, gh, gplane, agnostic, memo) -> int:
    """The least sum of (arc loss - 1) over the arcs still to add: the minimum final loss is the
    words headless now plus this. Wrong arcs are tried only right after a SWITCH (the filler the
    no-double-SWITCH rule may need); elsewhere dropping one never raises the loss."""
    key = state_key(row, off, agnostic)
    if key in memo:
        return memo[key]
    value = 0
    if not kernel.terminal(row, off, False):
        value = UNSET
        legal = np.zeros(5, dtype=np.bool_)
        kernel.legal(row, off, False, legal)
        for a in range(5):
            if not legal[a]:
                continue
            step = 0
            if a == LEFT or a == RIGHT:
                step = arc_loss(row, off, a, gh, gplane, agnostic) - 1
                if step == 0 and row[off[L_SWITCHED]] == 0:
                    continue
            nxt = row.copy()
            kernel.apply(nxt, off, a)
            v = step + gain(nxt, off, gh, gplane, agnostic, memo)
            if v < value:
                value = v
    memo[key] = value
    return value
