"""Arc-eager (Nivre 2003) with its static oracle and the dynamic oracle of Goldberg & Nivre (2012).

The root is at the bottom of the stack. Transitions: SHIFT pushes b0; LEFT adds b0 -> s0 and pops
s0 (s0 headless, not the root); RIGHT adds s0 -> b0 and pushes b0; REDUCE pops a headed s0. The
parse ends when the buffer is empty. Single root: RIGHT from the root is legal only while the
root has no dependent. Words left headless at the end are attached by ``TransitionSystem.output``
(to the root's dependent).

Dynamic oracle: arc-eager is arc-decomposable, so the cost of a transition is the number of gold
arcs it makes unreachable (a headless word's gold arc is reachable unless both ends are on the
stack); the single-root rule adds that the gold root arc 0 -> r is reachable only while the root
has no dependent and r is in the buffer, so RIGHT from the root to another word loses it.
Exact (checked by exhaustive search) for projective gold trees with one root word, as treebank
trees are; not beyond: on gold ``0 0`` (two root words) after SHIFT, RIGHT is called free but
costs 1. For non-projective trees the same formulas are used as an approximation.
"""

from __future__ import annotations

from typing import ClassVar, Hashable

import numpy as np

from ..trees import is_projective
from .kernels import arceager as kernel
from .kernels import arceager_oracle
from .kernels import oracles as row_kernels
from .base import NONE, Config, CostOracle, Gold, StaticOracle, TransitionSystem, front_arc
from .exact import ExactOnNonprojective, config_units, costs_of

SHIFT, LEFT, RIGHT, REDUCE = kernel.SHIFT, kernel.LEFT, kernel.RIGHT, kernel.REDUCE


class ArcEager(TransitionSystem):
    name = "arceager"
    code = kernel.CODE
    actions: ClassVar[tuple[str, ...]] = kernel.ACTIONS
    base_slots = ("s0", "s1", "b0", "b1")
    roots = ("start",)

    modifier_slots = ("lmod(s0)", "rmod(s0)", "lmod(s1)", "rmod(s1)", "lmod(b0)")

    def initial(self, n: int) -> Config:
        c = Config([0], list(range(n, 0, -1)), n)
        return c

    def terminal(self, c: Config) -> bool:
        return not c.buffer

    @staticmethod
    def root_taken(c: Config) -> bool:
        return c.lmod[0] != NONE

    def legal(self, c: Config) -> list[bool]:
        s0 = c.stack[-1]
        has_buffer = bool(c.buffer)
        headless = c.heads[s0] == NONE
        return self.flags(
            SHIFT=has_buffer,
            LEFT=has_buffer and s0 != 0 and headless,
            RIGHT=has_buffer and (s0 != 0 or not self.root_taken(c)),
            REDUCE=s0 != 0 and not headless,
        )

    def _apply(self, c: Config, a: int) -> None:
        if a == SHIFT:
            c.stack.append(c.buffer.pop())
        elif a == LEFT:
            c.attach(c.buffer[-1], c.stack.pop())
        elif a == RIGHT:
            b0 = c.buffer.pop()
            c.attach(c.stack[-1], b0)
            c.stack.append(b0)
        else:
            c.stack.pop()

    def arc_of(self, c: Config, a: int) -> tuple[int, int] | None:
        return front_arc(c, a, LEFT, RIGHT)

    def positions(self, c: Config) -> list[int]:
        stack, buffer = c.stack, c.buffer
        return [
            stack[-1],
            stack[-2] if len(stack) > 1 else NONE,
            buffer[-1] if buffer else NONE,
            buffer[-2] if len(buffer) > 1 else NONE,
        ]

    def state_key(self, c: Config) -> Hashable:
        # Which stack words have heads decides LEFT/REDUCE; whether the root has a dependent
        # decides RIGHT from the root.
        return tuple(c.stack), tuple([c.heads[w] != NONE for w in c.stack]), len(c.buffer), self.root_taken(c)


class ArcEagerStatic(StaticOracle):
    """Nivre (2008): LEFT, RIGHT, REDUCE when s0 has nothing left to do with the buffer, SHIFT."""

    name = "static"
    row_code = row_kernels.ARCEAGER_STATIC

    def prepare(self, heads):
        return Gold(heads) if is_projective(list(heads)) else None

    def next(self, c: Config, gold: Gold) -> int:
        gh = gold.heads
        s0 = c.stack[-1]
        b0 = c.buffer[-1]
        if s0 != 0 and gh[s0] == b0:
            return LEFT
        if gh[b0] == s0:
            return RIGHT
        if c.heads[s0] != NONE:
            # Reduce if b0 has an arc with a word further down the stack.
            below = c.stack[:-1]
            if gh[b0] in below or any(gh[k] == b0 for k in below if c.heads[k] == NONE):
                return REDUCE
        return SHIFT


class ArcEagerDynamic(ExactOnNonprojective, CostOracle):
    """Goldberg & Nivre (2012) costs with the single-root rule (see the module docstring).

    ``exact_nonprojective``: on a non-projective gold tree, the exact costs instead: the loss
    after a move is the number of gold arcs no completion can still build, found by a dynamic
    program over the configuration's units, the stack bottom to top then the buffer
    (``kernels/reachable.best_gain_eager``, O(n^3) per move). What a completion can build: a
    headed stack word's head is the stack word just below it (RIGHT pushed it onto its head,
    and what lies below a stack word stays); no stack word takes a left dependent (arcs to the
    left come from b0 only); a headless stack word gets a head in the buffer (LEFT) or none;
    every word may end headless, and nothing then spans it but the root; the root takes at most
    one new dependent, a buffer word, while it has none, and every word before that one is
    reduced first. Exhaustive search checks the costs (``systems/verify/verification.py``)."""

    name = "dynamic"
    row_code = row_kernels.ARCEAGER_DYNAMIC

    def reaches(self, gold: Gold) -> bool:
        return is_projective(gold.heads)

    def costs(self, c: Config, gold: Gold) -> list[int | None]:
        legal = self.system.legal(c)
        if getattr(gold, "nonprojective", False):
            units = config_units(c)
            headed = np.array(
                [int(0 < i < len(c.stack) and c.heads[w] != NONE) for i, w in enumerate(units)], dtype=np.int64
            )
            losses = np.zeros(4, dtype=np.int64)
            arceager_oracle.exact_losses(units, headed, len(units), len(c.stack) - 1, np.asarray(gold.heads, dtype=np.int64),
                                         not ArcEager.root_taken(c), gold.spans, np.array(legal), losses)  # fmt: skip
            return costs_of(losses, legal)
        stack, buffer, heads = c.stack, c.buffer, c.heads
        gh, kids = gold.heads, gold.children
        out: list[int | None] = [None, None, None, None]
        s0 = stack[-1]
        b0 = buffer[-1] if buffer else NONE
        first = b0 if b0 != NONE else c.n + 1  # buffer = b0 and every later word (no reordering)
        on_stack = set(stack)
        r = kids[0][0] if kids[0] else NONE
        root_arc_open = not ArcEager.root_taken(c) and r >= first  # 0 -> r still reachable

        def head_reachable(h: int) -> bool:
            """Whether b0 can still get gold head h (b0 is headless, in the buffer)."""
            return root_arc_open if h == 0 else (h in on_stack or h > b0)

        if legal[SHIFT] or legal[RIGHT]:
            # b0 leaves the buffer: its headless gold dependents on the stack are lost.
            lost_kids = sum(1 for d in kids[b0] if d in on_stack and heads[d] == NONE)
            h = gh[b0]
            if legal[SHIFT]:
                out[SHIFT] = lost_kids + (1 if h < b0 and head_reachable(h) else 0)
            if legal[RIGHT]:
                cost = lost_kids + (1 if h != s0 and head_reachable(h) else 0)
                if s0 == 0 and r != b0 and root_arc_open:
                    cost += 1  # the root's only dependent is taken
                out[RIGHT] = cost
        if legal[LEFT] or legal[REDUCE]:
            lost_kids = sum(1 for d in kids[s0] if d >= first)
            if legal[REDUCE]:
                out[REDUCE] = lost_kids
            if legal[LEFT]:
                h = gh[s0]
                out[LEFT] = lost_kids + (1 if h != b0 and h >= first else 0)
        return out
