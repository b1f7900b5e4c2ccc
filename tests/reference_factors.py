"""Completion-model factors recomputed from scratch, in plain Python, from a system's ``Config``:
the reference the compiled bookkeeping (``systems/adapters/factors.py``, ``Layout.candidates``) is
checked against. Written from the definitions in the factors module docstring, not from its code.
"""

from __future__ import annotations

from nparse.systems import NONE
from nparse.systems.base import Config, TransitionSystem


def children(heads: list[int], x: int) -> list[int]:
    return [w for w in range(1, len(heads)) if heads[w] == x]


def nodes(heads: list[int], kind: int, h: int, c: int) -> tuple[int, ...]:
    """The nodes of the factor of ``kind`` on arc h -> c (NONE for a missing one)."""
    right = h < c
    lo, hi = min(h, c), max(h, c)

    def pick(words: list[int], farthest_right: bool) -> int:
        return (max(words) if farthest_right else min(words)) if words else NONE

    if kind == 0:
        return (h, c)
    if kind == 1:  # inner grandchild, farthest from c
        return (h, c, pick([g for g in children(heads, c) if lo < g < hi], not right))
    if kind == 2:  # outer grandchild, farthest from c
        return (h, c, pick([g for g in children(heads, c) if (g > c if right else g < c)], right))
    if kind == 3:  # sibling between h and c, nearest c
        return (h, c, pick([s for s in children(heads, h) if lo < s < hi], right))
    if kind == 4:  # left-most (right-most) child of h other than c
        return (h, c, pick([s for s in children(heads, h) if s != c], not right))
    if kind == 5:  # two children of h on c's side nearest h, c excluded
        side = sorted((s for s in children(heads, h) if s != c and (s > h) == right), key=lambda s: abs(s - h))
        side += [NONE, NONE]
        return (h, c, side[0], side[1])
    if kind == 6:  # two left-most (right-most) children of c
        kids = sorted(children(heads, c), reverse=not right) + [NONE, NONE]
        return (h, c, kids[0], kids[1])
    m = pick(children(heads, c), right)  # kind 7: the chain c -> m -> t
    t = pick(children(heads, m), right) if m != NONE else NONE
    return (h, c, m, t)


def open_words(system: TransitionSystem, c: Config) -> set[int]:
    """Words that can still receive a dependent: on a stack or in the buffer, none when terminal."""
    if system.terminal(c):
        return set()
    words = set(c.stack) | set(c.buffer)
    words |= set(getattr(c, "stack2", []))
    return words


def complete_factors(system: TransitionSystem, c: Config, mask: int) -> list[tuple[int, tuple[int, ...]]]:
    """(kind, nodes) of every complete factor of the configuration's tree."""
    opened = open_words(system, c)
    out = []
    for d in range(1, c.n + 1):
        h = c.heads[d]
        if h == NONE:
            continue
        for kind in range(8):
            if not mask >> kind & 1:
                continue
            fixed = {0: (), 3: (h,), 4: (h,), 5: (h,)}.get(kind, (d,))
            if kind == 7:
                m = nodes(c.heads, 7, h, d)[2]
                fixed = (d,) if m == NONE else (d, m)
            if not any(w in opened for w in fixed):
                out.append((kind, nodes(c.heads, kind, h, d)))
    return out


def all_factors(heads: list[int], mask: int) -> list[tuple[int, tuple[int, ...]]]:
    """(kind, nodes) of every factor of a tree (every arc, every kind of the mask)."""
    return [
        (kind, nodes(heads, kind, heads[d], d))
        for d in range(1, len(heads))
        if heads[d] != NONE
        for kind in range(8)
        if mask >> kind & 1
    ]
