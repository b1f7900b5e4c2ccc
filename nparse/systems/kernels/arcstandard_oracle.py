"""The arc-standard oracles on rows (mirror ``ArcStandardStatic`` and ``ArcStandardDynamic``)."""

from __future__ import annotations

from numba import njit

from .arcstandard import LEFT, RIGHT, SHIFT
from .gold import G_HEAD, ILLEGAL, complete, minimal
from .reachable import ARCSTANDARD, best_gain, relative_to_least, row_units
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


@njit(cache=True)
def successor_losses(units, n, top_index, gold_head, spans, legal, out):
    """``out[a]``: the least loss of a completion after each legal move, counted from the arcs
    still to come and the move's own arc (the arcs already built add the same to every move);
    ``spans``: the sentence's ``reachable.sentence_spans`` (or empty)."""
    for a in range(3):
        out[a] = ILLEGAL
    if legal[SHIFT]:
        out[SHIFT] = (n - 1) - best_gain(units, n, True, 1, top_index + 1, gold_head, ARCSTANDARD, spans)
    if legal[LEFT] or legal[RIGHT]:
        s0, s1 = units[top_index], units[top_index - 1]
        rest = units.copy()
        if legal[LEFT]:  # s0 -> s1: s1 leaves the units, s0 moves down one place
            rest[top_index - 1 : n - 1] = units[top_index:n]
            out[LEFT] = (
                (1 if gold_head[s1] != s0 else 0)
                + (n - 2)
                - best_gain(rest, n - 1, True, 1, top_index - 1, gold_head, ARCSTANDARD, spans)
            )
        if legal[RIGHT]:  # s1 -> s0: s0 leaves
            rest[top_index : n - 1] = units[top_index + 1 : n]
            rest[:top_index] = units[:top_index]
            out[RIGHT] = (
                (1 if gold_head[s0] != s1 else 0)
                + (n - 2)
                - best_gain(rest, n - 1, True, 1, top_index - 1, gold_head, ARCSTANDARD, spans)
            )


@njit(cache=True)
def dynamic(row, off, root_end, opt, gold, seq, legal, cost, out):
    units = row_units(row, off)
    successor_losses(units, units.shape[0], row[off[L_NS]] - 1, gold[G_HEAD], seq, legal, cost)
    relative_to_least(cost, legal)
    minimal(cost, out)
