"""Arc-hybrid + SWAP (de Lhoneux, Stymne & Nivre 2017) with its static-dynamic oracle.

SWAP puts s0 back into the buffer behind b0: (σ|s0, b0|β) -> (σ, b0|s0|β), legal iff s0 < b0 in
word order and b0 is not the root. The root is the last item of the buffer (Kiperwasser &
Goldberg, UUParser) with the single-root rule of ``ArcHybrid``; every output is a complete
single-rooted tree, non-projective ones included.

Static part: SWAP is due exactly when b0 precedes s0 in the projective order (eager, as UUParser
does). The lazy rule transposed from SwapStandard (swap only if b0 and b1 lie in different
maximal projective components) cannot rebuild every tree here, since arc-hybrid can only move
s0: exhaustive search finds trees of 4 words it gets stuck on (e.g. heads 2 0 1 3), so the eager
rule is used.

Dynamic part: with SWAP taken exactly when due, the stack stays sorted by projective order, and
a transition's exact cost is the arc-hybrid cost read on a projective-order view of the
configuration: stack words that come after the earliest buffer word m in the projective order
("premature": they will be swapped back when m arrives) count as buffer words. So
- SHIFT of a word that is not m costs nothing (it will come back); SHIFT of m has the arc-hybrid
  cost against the rest of the stack;
- LEFT/RIGHT of a premature s0 lose every other gold arc of s0 still alive; otherwise they have
  the arc-hybrid costs with the view's buffer.
Checked against exhaustive search restricted to sequences that swap exactly when due, on every
tree up to 6 words, from configurations reached by random (not only correct) transitions.
Exploration never follows a wrong SWAP and never skips a due one, so training stays inside that
restriction.
"""

from __future__ import annotations

from typing import Sequence

from ..trees import projective_order
from .archybrid import LEFT, RIGHT, SHIFT, ArcHybrid
from .kernels import archybrid_swap as kernel
from .kernels import archybrid_swap_oracle as oracle_kernel
from .kernels import oracles as row_kernels
from .base import NONE, Config, CostOracle, Gold, StaticOracle
from .verify.search import ExactLoss

SWAP = kernel.SWAP


class ArcHybridSwap(ArcHybrid):
    name = "archybrid_swap"
    code = kernel.CODE
    actions = kernel.ACTIONS
    roots = ("end",)

    def legal(self, c: Config) -> list[bool]:
        b0 = c.buffer[-1]
        return self.flags(**self.named(super().legal(c)), SWAP=bool(c.stack) and b0 != 0 and c.stack[-1] < b0)

    def _apply(self, c: Config, a: int) -> None:
        if a == SWAP:
            c.buffer.insert(len(c.buffer) - 1, c.stack.pop())
        else:
            super()._apply(c, a)

    def state_key(self, c: Config):
        return tuple(c.stack), tuple(c.buffer)


class SwapHybridGold(Gold):
    """Gold tree with its projective order and maximal projective components."""

    def __init__(self, heads: Sequence[int], system: ArcHybrid):
        super().__init__(heads)
        self.proj = projective_order(self.heads)
        self.mpc = _components(self, system)


def static_arc(c: Config, gold: Gold, system: ArcHybrid) -> int | None:
    """LEFT or RIGHT when s0 is complete and its gold head is b0 or s1 (and the move is legal)."""
    stack = c.stack
    if not stack:
        return None
    s0 = stack[-1]
    if not gold.complete(c.heads, s0):
        return None
    h = gold.heads[s0]
    if h == c.buffer[-1] and system.legal(c)[LEFT]:
        return LEFT
    if len(stack) > 1 and h == stack[-2]:
        return RIGHT
    return None


def _components(gold: Gold, system: ArcHybrid) -> list[int]:
    """MPC of every word: the subtree it ends up in when parsing without SWAP until stuck."""
    c = ArcHybrid(root="end").initial(gold.n)
    base = ArcHybrid(root="end")
    while True:
        a = static_arc(c, gold, base)
        if a is None:
            if c.buffer[-1] == 0:
                break
            a = SHIFT
        base.apply(c, a)
    return c.subtree_roots()


def swap_due(c: Config, gold: SwapHybridGold, lazy: bool = False) -> bool:
    """The static SWAP decision: b0 precedes s0 in the projective order (and, lazily, b0 and b1
    are in different maximal projective components or b1 is the root)."""
    stack, buffer = c.stack, c.buffer
    if not stack:
        return False
    s0, b0 = stack[-1], buffer[-1]
    if b0 == 0 or s0 > b0 or gold.proj[b0] > gold.proj[s0]:
        return False
    if not lazy:
        return True
    b1 = buffer[-2]
    return b1 == 0 or gold.mpc[b0] != gold.mpc[b1]


class ArcHybridSwapStatic(StaticOracle):
    name = "static"
    row_code = row_kernels.HYBRID_SWAP_STATIC
    gold_fields = ("proj", "mpc")

    def __init__(self, system, lazy: bool = False):
        super().__init__(system)
        self.lazy = lazy

    def row_options(self) -> int:
        return oracle_kernel.LAZY if self.lazy else 0

    def prepare(self, heads):
        return SwapHybridGold(heads, self.system)

    def next(self, c: Config, gold: Gold) -> int:
        a = static_arc(c, gold, self.system)
        if a is not None:
            return a
        if swap_due(c, gold, self.lazy):  # type: ignore[arg-type]
            return SWAP
        return SHIFT


class ArcHybridSwapDynamic(CostOracle):
    """Static SWAP decision, dynamic costs for the other transitions (module docstring)."""

    name = "static_dynamic"
    row_code = row_kernels.HYBRID_SWAP_DYNAMIC
    gold_fields = ("proj",)

    def prepare(self, heads):
        return SwapHybridGold(heads, self.system)

    def may_explore(self, c: Config, gold: Gold, action: int) -> bool:
        """Exploration stays where the oracle is exact: no wrong SWAP, no skipped due SWAP."""
        return action != SWAP and not swap_due(c, gold)  # type: ignore[arg-type]

    def costs(self, c: Config, gold: Gold) -> list[int | None]:
        legal = self.system.legal(c)
        if swap_due(c, gold):  # type: ignore[arg-type]
            return [1 if ok else None for ok in legal[:3]] + [0]
        out: list[int | None] = [None, None, None, 1 if legal[SWAP] else None]
        stack, buffer, heads = c.stack, c.buffer, c.heads
        gh, kids, proj = gold.heads, gold.children, gold.proj  # type: ignore[attr-defined]
        b0 = buffer[-1]
        words = [w for w in buffer if w != 0]
        first = min(words, key=proj.__getitem__) if words else NONE  # m: earliest in projective order
        limit = proj[first] if words else len(proj)
        # The stack is sorted by projective order: premature words form its top segment.
        settled = len(stack)
        while settled and proj[stack[settled - 1]] > limit:
            settled -= 1
        alive = set(stack) | set(buffer)
        on_stack = set(stack[:settled])  # the view's stack; every other alive word is the view's buffer

        if legal[SHIFT]:
            if b0 != first:
                out[SHIFT] = 0
            else:
                top = stack[settled - 1] if settled else NONE
                h = gh[b0]
                cost = sum(1 for d in kids[b0] if d in on_stack)
                if h == 0:
                    cost += 1 if settled else 0
                elif h in on_stack and h != top:
                    cost += 1
                out[SHIFT] = cost
        if legal[LEFT] or legal[RIGHT]:
            s0 = stack[-1]
            h = gh[s0]
            live_kids = [d for d in kids[s0] if d in alive and heads[d] == NONE]
            if len(stack) > settled:  # s0 is premature: all its other live arcs are lost
                lost = len(live_kids)
                if legal[LEFT]:
                    out[LEFT] = lost + (1 if h != b0 and (h == 0 or h in alive) else 0)
                if legal[RIGHT]:
                    out[RIGHT] = lost + (1 if h != stack[-2] and (h == 0 or h in alive) else 0)
            else:
                lost = sum(1 for d in live_kids if d not in on_stack)
                s1 = stack[-2] if len(stack) > 1 else NONE
                in_view_buffer = h != 0 and h in alive and h not in on_stack
                if legal[LEFT]:
                    keeps = h == s1 or in_view_buffer or (h == 0 and len(stack) == 1)
                    out[LEFT] = lost + (1 if h != b0 and keeps else 0)
                if legal[RIGHT]:
                    out[RIGHT] = lost + (1 if in_view_buffer else 0)
        return out


def within_restriction(c: Config, a: int, gold: SwapHybridGold) -> bool:
    """SWAP exactly when it is due: the sequences the static-dynamic oracle is exact for."""
    return (a == SWAP) == swap_due(c, gold)


def reference_search(system: ArcHybridSwap, gold: SwapHybridGold) -> ExactLoss:
    """Exhaustive search restricted to sequences that swap exactly when due."""
    return ExactLoss(system, gold.heads, allowed=lambda c, a: within_restriction(c, a, gold))
