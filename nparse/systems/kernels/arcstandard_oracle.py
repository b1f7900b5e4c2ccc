"""The arc-standard static oracle on rows (mirrors ``ArcStandardStatic``)."""

from __future__ import annotations

from numba import njit

from .arcstandard import LEFT, RIGHT, SHIFT
from .gold import G_HEAD, complete
from .rows import L_NB, L_NS, top


@njit(cache=True)
def can_left(row, off, gold):
    """s1 is a word, complete, and s0 is its head."""
    if row[off[L_NS]] < 2:
        return False
    s0, s1 = top(row, off, 0), top(row, off, 1)
    return s1 != 0 and gold[G_HEAD, s1] == s0 and complete(row, off, gold, s1)


@njit(cache=True)
def can_right(row, off, gold):
    """s0 is complete and s1 its head (the root only once the buffer is empty)."""
    if row[off[L_NS]] < 2:
        return False
    s0, s1 = top(row, off, 0), top(row, off, 1)
    return gold[G_HEAD, s0] == s1 and complete(row, off, gold, s0) and (s1 != 0 or row[off[L_NB]] == 0)


@njit(cache=True)
def static(row, off, root_end, opt, gold, seq, legal, cost, out):
    if row[off[L_NS]] > 1:
        s0, s1 = top(row, off, 0), top(row, off, 1)
        if s1 != 0 and gold[G_HEAD, s1] == s0 and complete(row, off, gold, s1):
            out[LEFT] = True
            return
        if gold[G_HEAD, s0] == s1 and complete(row, off, gold, s0):
            out[RIGHT] = True
            return
    out[SHIFT] = True
