"""Arc-hybrid (Kuhlmann, Gómez-Rodríguez & Satta 2011) with its static and dynamic oracles.

Transitions: SHIFT moves b0 onto the stack; LEFT adds b0 -> s0 and pops s0; RIGHT adds s1 -> s0
and pops s0.

Root placement (``root``):
- ``end`` (Kiperwasser & Goldberg): the root is the last item of the buffer and never enters the
  stack. To make the output a single-rooted tree, LEFT with the root as b0 is legal only when
  the stack holds one word; when the buffer is down to the root, the stack is emptied by RIGHT
  transitions and the last (bottom) word attaches to the root.
- ``start``: the root is at the bottom of the stack. RIGHT with the root as s1 is legal only
  when the buffer is empty, so again exactly one word attaches to the root.

Dynamic oracle (Goldberg & Nivre 2013): the cost of a transition is the number of gold arcs it
makes unreachable. Because arc-hybrid is arc-decomposable, this equals the exact cost (minimum
reachable Hamming loss after the transition minus before) for projective gold trees with one
root word (the trees exhaustive search checks; treebank trees are such); the single-root
restriction adds one case, checked against exhaustive search: the gold arc root -> r stays
reachable only while r is in the buffer or is the bottom word of the stack, so SHIFT of r onto a
non-empty stack costs 1 and the root arc of a word that is not at the bottom is already lost. For non-projective trees the costs are the same formulas (an approximation;
training takes the cheapest transitions).
"""

from __future__ import annotations

from typing import ClassVar, Hashable

import numpy as np

from ..trees import is_projective
from .kernels import archybrid as kernel
from .kernels import archybrid_oracle
from .kernels import oracles as row_kernels
from .base import NONE, Config, CostOracle, Gold, StaticOracle, TransitionSystem
from .exact import ExactOnNonprojective, config_units, costs_of

SHIFT, LEFT, RIGHT = kernel.SHIFT, kernel.LEFT, kernel.RIGHT


class ArcHybrid(TransitionSystem):
    name = "archybrid"
    code = kernel.CODE
    actions: ClassVar[tuple[str, ...]] = kernel.ACTIONS
    base_slots = ("s0", "s1", "s2", "b0")

    modifier_slots = ("lmod(s0)", "rmod(s0)", "lmod(s1)", "rmod(s1)", "lmod(s2)", "rmod(s2)", "lmod(b0)")

    def initial(self, n: int) -> Config:
        words = list(range(n, 0, -1))
        if self.root == "end":
            return Config([], [0] + words, n)
        return Config([0], words, n)

    def terminal(self, c: Config) -> bool:
        if self.root == "end":
            return not c.stack and len(c.buffer) == 1
        return not c.buffer and len(c.stack) == 1

    def legal(self, c: Config) -> list[bool]:
        stack, buffer = c.stack, c.buffer
        ns = len(stack)
        if self.root == "end":
            b0_root = buffer[-1] == 0
            return self.flags(SHIFT=not b0_root, LEFT=ns > 0 and (not b0_root or ns == 1), RIGHT=ns > 1)
        nb = len(buffer)
        return self.flags(SHIFT=nb > 0, LEFT=ns > 1 and nb > 0, RIGHT=ns > 2 or (ns == 2 and nb == 0))

    def _apply(self, c: Config, a: int) -> None:
        if a == SHIFT:
            c.stack.append(c.buffer.pop())
        elif a == LEFT:
            c.attach(c.buffer[-1], c.stack.pop())
        else:
            d = c.stack.pop()
            c.attach(c.stack[-1], d)

    def arc_of(self, c: Config, a: int) -> tuple[int, int] | None:
        if a == LEFT:
            return c.buffer[-1], c.stack[-1]
        if a == RIGHT:
            return c.stack[-2], c.stack[-1]
        return None

    def positions(self, c: Config) -> list[int]:
        stack = c.stack
        ns = len(stack)
        return [
            stack[-1] if ns > 0 else NONE,
            stack[-2] if ns > 1 else NONE,
            stack[-3] if ns > 2 else NONE,
            c.buffer[-1] if c.buffer else NONE,
        ]

    def state_key(self, c: Config) -> Hashable:
        # Attached words have left stack and buffer for good: the future depends on these two only.
        return tuple(c.stack), len(c.buffer)


class ArcHybridStatic(StaticOracle):
    """LEFT if s0 is complete and its head is b0, RIGHT if complete with head s1, else SHIFT.

    Builds every projective tree; ``prepare`` refuses non-projective ones.
    """

    name = "static"
    row_code = row_kernels.ARCHYBRID_STATIC

    def prepare(self, heads):
        return Gold(heads) if is_projective(list(heads)) else None

    def next(self, c: Config, gold: Gold) -> int:
        stack = c.stack
        if stack and stack[-1] != 0:
            s0 = stack[-1]
            if all(c.heads[k] != NONE for k in gold.children[s0]):
                h = gold.heads[s0]
                if c.buffer and h == c.buffer[-1] and self.system.legal(c)[LEFT]:
                    return LEFT
                if len(stack) > 1 and h == stack[-2]:
                    return RIGHT
        return SHIFT


class ArcHybridDynamic(ExactOnNonprojective, CostOracle):
    """Goldberg & Nivre (2013) costs, exact on projective trees with one root word (see the module docstring).

    ``exact_nonprojective``: on a non-projective gold tree, the exact costs instead: the loss
    after a move is the number of gold arcs no completion can still build, found by a dynamic
    program over the configuration's units, the stack bottom to top then the buffer
    (``kernels/reachable.py``, O(n^3) per move). The trees a completion can build are the
    projective trees over the units in which the root takes one dependent and no stack word
    takes a left dependent or a head on its left other than the word just below it: a stack
    word gets arcs only as s0 (its head: s1 by RIGHT, b0 by LEFT) or as s1 (RIGHT to the word
    above it, which was shifted after it), so those are the only arcs it can still get; and
    reducing whenever s0 is complete and its head is s1 or b0, shifting otherwise, builds every
    such tree. Exhaustive search checks the costs (``systems/verify/verification.py``)."""

    name = "dynamic"
    row_code = row_kernels.ARCHYBRID_DYNAMIC

    def reaches(self, gold: Gold) -> bool:
        return is_projective(gold.heads)

    def costs(self, c: Config, gold: Gold) -> list[int | None]:
        legal = self.system.legal(c)
        if getattr(gold, "nonprojective", False):
            losses = np.zeros(3, dtype=np.int64)
            archybrid_oracle.exact_losses(config_units(c), len(c.stack) + len(c.buffer), self.system.root == "end",
                                          len(c.stack) - 1, np.asarray(gold.heads, dtype=np.int64),
                                          gold.spans, np.array(legal), losses)  # fmt: skip
            return costs_of(losses, legal)
        stack, buffer, heads = c.stack, c.buffer, c.heads
        gh, kids = gold.heads, gold.children
        root_end = self.system.root == "end"
        b0 = buffer[-1] if buffer else NONE
        # Words are in the buffer iff at or after b0 (no reordering); stack words are unattached.
        first_in_buffer = b0 if b0 > 0 else c.n + 1
        s0 = stack[-1] if stack else NONE
        out: list[int | None] = [None, None, None]
        if legal[SHIFT]:
            cost = sum(1 for k in kids[b0] if k < first_in_buffer and heads[k] == NONE)
            h = gh[b0]
            if h == 0:
                # The root arc survives only if b0 goes to the bottom of the stack.
                cost += 1 if (stack if root_end else len(stack) > 1) else 0
            elif h < first_in_buffer and heads[h] == NONE and h != s0:
                cost += 1
            out[SHIFT] = cost
        if legal[LEFT] or legal[RIGHT]:
            lost_kids = sum(1 for k in kids[s0] if k >= first_in_buffer)
            h = gh[s0]
            bottom = len(stack) == (1 if root_end else 2)
            if legal[LEFT]:
                if h == b0:
                    out[LEFT] = lost_kids
                elif h == 0:
                    out[LEFT] = lost_kids + (1 if bottom else 0)
                else:
                    s1 = stack[-2] if len(stack) > 1 else NONE
                    out[LEFT] = lost_kids + (1 if h == s1 or h > b0 > 0 else 0)
            if legal[RIGHT]:
                s1 = stack[-2]
                lost_head = h != s1 and h != 0 and h >= first_in_buffer
                out[RIGHT] = lost_kids + (1 if lost_head else 0)
        return out
