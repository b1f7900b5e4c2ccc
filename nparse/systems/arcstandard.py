"""Arc-standard (Nivre 2004) with its static oracle.

The root is at the bottom of the stack. SHIFT pushes b0; LEFT adds s0 -> s1 and removes s1 (never
the root); RIGHT adds s1 -> s0 and pops s0. Single root: RIGHT with the root as s1 is legal only
once the buffer is empty, so the last remaining word is the root's only dependent. Terminal: empty
buffer and only the root on the stack. Every output is a complete single-rooted tree.
"""

from __future__ import annotations

from typing import ClassVar, Hashable

import numpy as np

from ..trees import is_projective
from .kernels import arcstandard as kernel
from .kernels import arcstandard_oracle
from .kernels import oracles as row_kernels
from .base import NONE, Config, CostOracle, Gold, StaticOracle, TransitionSystem
from .exact import SpanTables, config_units, costs_of, gold_with_spans

SHIFT, LEFT, RIGHT = kernel.SHIFT, kernel.LEFT, kernel.RIGHT


class ArcStandard(TransitionSystem):
    name = "arcstandard"
    code = kernel.CODE
    actions: ClassVar[tuple[str, ...]] = kernel.ACTIONS
    base_slots = ("s0", "s1", "s2", "b0")
    roots = ("start",)

    modifier_slots = ("lmod(s0)", "rmod(s0)", "lmod(s1)", "rmod(s1)", "lmod(s2)", "rmod(s2)")

    def initial(self, n: int) -> Config:
        return Config([0], list(range(n, 0, -1)), n)

    def terminal(self, c: Config) -> bool:
        return not c.buffer and len(c.stack) == 1

    def legal(self, c: Config) -> list[bool]:
        stack = c.stack
        pair = len(stack) > 1
        s1_word = pair and stack[-2] != 0
        return self.flags(SHIFT=bool(c.buffer), LEFT=s1_word, RIGHT=pair and (s1_word or not c.buffer))

    def _apply(self, c: Config, a: int) -> None:
        stack = c.stack
        if a == SHIFT:
            stack.append(c.buffer.pop())
        elif a == LEFT:
            d = stack.pop(-2)
            c.attach(stack[-1], d)
        elif a == RIGHT:
            d = stack.pop()
            c.attach(stack[-1], d)
        else:
            raise ValueError(f"{self.name}: unknown action {a}")

    def arc_of(self, c: Config, a: int) -> tuple[int, int] | None:
        if a == LEFT:
            return c.stack[-1], c.stack[-2]
        if a == RIGHT:
            return c.stack[-2], c.stack[-1]
        return None

    def positions(self, c: Config) -> list[int]:
        stack = c.stack
        ns = len(stack)
        return [
            stack[-1],
            stack[-2] if ns > 1 else NONE,
            stack[-3] if ns > 2 else NONE,
            c.buffer[-1] if c.buffer else NONE,
        ]

    def state_key(self, c: Config) -> Hashable:
        # Attached words have left stack and buffer for good.
        return tuple(c.stack), tuple(c.buffer)


class ArcStandardStatic(StaticOracle):
    """LEFT if s1 is complete and s0 is its head, RIGHT if s0 is complete and s1 its head, else SHIFT."""

    name = "static"
    row_code = row_kernels.ARCSTANDARD_STATIC

    def prepare(self, heads):
        return Gold(heads) if is_projective(list(heads)) else None

    def next(self, c: Config, gold: Gold) -> int:
        stack = c.stack
        if len(stack) > 1:
            s0, s1 = stack[-1], stack[-2]
            if s1 != 0 and gold.heads[s1] == s0 and gold.complete(c.heads, s1):
                return LEFT
            if gold.heads[s0] == s1 and gold.complete(c.heads, s0):
                return RIGHT
        return SHIFT


class ArcStandardDynamic(SpanTables, CostOracle):
    """Exact costs for any gold tree, projective or not: the loss after a move is the number of
    gold arcs no completion can still build, found by a dynamic program over the configuration's
    units (the stack bottom to top, then the buffer), O(n^3) per move.

    Which trees a completion can build: every projective tree over the units in which the root
    has one dependent, and every stack word below s0 that gets an arc to a stack word on its left
    (its head, or a left dependent) has s0 in its subtree. Why: such an arc needs the two words
    adjacent on the stack, so everything above the right one is reduced first, and a stack word
    can only be reduced into a word still on the stack above it or into the buffer word that
    comes to stand above it; what lies above a stack word therefore ends in its subtree before it
    can reach left. Conversely, with that condition, reducing whenever the top two are joined and
    the dependent is complete, and shifting otherwise, builds the tree. The program is Eisner's
    (1996) with that condition on the stack words' right halves (``kernels/arcstandard_oracle``);
    ``tests/test_oracles.py`` checks the costs against exhaustive search on and off the gold path.
    Goldberg, Sartorio & Satta (2014) give a cubic dynamic oracle for projective gold trees."""

    name = "dynamic"
    row_code = row_kernels.ARCSTANDARD_DYNAMIC

    def prepare(self, heads):
        return gold_with_spans(heads, True)

    def costs(self, c: Config, gold: Gold) -> list[int | None]:
        legal = self.system.legal(c)
        units = config_units(c)
        losses = np.zeros(3, dtype=np.int64)
        arcstandard_oracle.successor_losses(units, len(units), len(c.stack) - 1, np.asarray(gold.heads, dtype=np.int64),
                                            gold.spans, np.array(legal), losses)  # fmt: skip
        return costs_of(losses, legal)
