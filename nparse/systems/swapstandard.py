"""SwapStandard: arc-standard plus SWAP (Nivre 2009), with the oracles of Björkelund & Nivre (2015).

SWAP moves s1 back to the front of the buffer: (σ|s1|s0, β) -> (σ|s0, s1|β), legal iff
0 < s1 < s0 in word order. Everything else is arc-standard (root at the bottom of the stack,
single root), so every output is a complete single-rooted tree of any (non-projective) shape.

Oracles (all defined on configurations from which the gold tree is still reachable):
- EAGER (Nivre 2009): LEFT, RIGHT when the dependent is complete, SWAP whenever s0 precedes s1 in
  the projective order (in-order traversal of the gold tree), else SHIFT.
- LAZY (Nivre, Kuhlmann & Hall 2009): SWAP only if also the buffer is empty or s0 and b0 lie in
  different maximal projective components (MPCs: the subtrees built by the oracle run without
  SWAP until it is stuck). The seed's wording "s0 and s1 not in the same MPC" is vacuous (when SWAP
  is legal and s1 follows s0 in projective order they are never in one MPC, so LAZY would act as
  EAGER); we read it with s0 and b0.
- MINIMAL: the shortest sequence respecting the projective order, by depth-first search with
  branch and bound over the SHIFT/SWAP choices (arcs attached as early as possible, which never
  costs a swap: checked against a search over all order-respecting sequences on small trees).
  The lattice is never built: the search keeps its path, the best sequence and the fork points
  it has expanded.
- ND-SW: the SHIFT/SWAP ambiguity only: where EAGER would swap, SHIFT is also correct if the
  gold tree stays reachable after it.
- ND-ALL: every spurious ambiguity: SHIFT is also correct where LEFT, RIGHT or SWAP is, whenever
  the "can shift" test (Algorithm 2: one SHIFT, then EAGER to the end without a dead end) passes.

The non-deterministic oracles are exact (their correct set equals the set of transitions that
keep the gold tree reachable) among transition sequences that respect the projective order (SWAP
only when s0 precedes s1 in it); ND-SW in addition attaches arcs as early as possible.
"""

from __future__ import annotations

import time
from typing import Sequence

import numpy as np

from ..trees import projective_order
from .kernels import swapstandard_oracle as oracle_kernels
from .arcstandard import LEFT, RIGHT, SHIFT, ArcStandard
from .kernels import swapstandard as kernel
from .kernels import oracles as row_kernels
from .base import NONE, Config, Gold, Oracle, StaticOracle
from .verify.search import ExactLoss

SWAP = kernel.SWAP


class SwapStandard(ArcStandard):
    name = "swapstandard"
    code = kernel.CODE
    actions = kernel.ACTIONS

    def legal(self, c: Config) -> list[bool]:
        stack = c.stack
        return self.flags(**self.named(super().legal(c)), SWAP=len(stack) > 2 and 0 < stack[-2] < stack[-1])

    def _apply(self, c: Config, a: int) -> None:
        if a == SWAP:
            stack = c.stack
            c.buffer.append(stack.pop(-2))
        else:
            super()._apply(c, a)


class SwapGold(Gold):
    """Gold tree with its projective order and maximal projective components."""

    def __init__(self, heads: Sequence[int]):
        super().__init__(heads)
        self.proj = projective_order(self.heads)
        self.mpc = maximal_projective_components(self)
        self.gh = np.array(self.heads, dtype=np.int64)
        self.proj_arr = np.array(self.proj, dtype=np.int64)
        self.minimal: list[int] | None = None  # the MINIMAL sequence


def can_left(c: Config, gold: Gold) -> bool:
    stack = c.stack
    if len(stack) < 2:
        return False
    s0, s1 = stack[-1], stack[-2]
    return s1 != 0 and gold.heads[s1] == s0 and gold.complete(c.heads, s1)


def can_right(c: Config, gold: Gold) -> bool:
    stack = c.stack
    if len(stack) < 2:
        return False
    s0, s1 = stack[-1], stack[-2]
    return gold.heads[s0] == s1 and gold.complete(c.heads, s0) and (s1 != 0 or not c.buffer)


def can_swap(c: Config, gold: SwapGold) -> bool:
    """EAGER's test: SWAP is legal and s0 precedes s1 in the projective order."""
    stack = c.stack
    return len(stack) > 2 and 0 < stack[-2] < stack[-1] and gold.proj[stack[-1]] < gold.proj[stack[-2]]


def can_swap_lazy(c: Config, gold: SwapGold) -> bool:
    return can_swap(c, gold) and (not c.buffer or gold.mpc[c.stack[-1]] != gold.mpc[c.buffer[-1]])


def maximal_projective_components(gold: Gold) -> list[int]:
    """Component (its root word) of every word when parsing without SWAP until stuck."""
    system = SwapStandard()
    c = system.initial(gold.n)
    while True:
        if can_left(c, gold):
            system.apply(c, LEFT)
        elif can_right(c, gold):
            system.apply(c, RIGHT)
        elif c.buffer:
            system.apply(c, SHIFT)
        else:
            break
    return c.subtree_roots()


def eager_next(c: Config, gold: SwapGold) -> int:
    if can_left(c, gold):
        return LEFT
    if can_right(c, gold):
        return RIGHT
    if can_swap(c, gold):
        return SWAP
    return SHIFT


def can_shift(c: Config, gold: SwapGold, system: SwapStandard) -> bool:
    """Algorithm 2 of Björkelund & Nivre: SHIFT, then EAGER to the end without a dead end.

    Reference version on Config objects; the oracles use the compiled ``oracle_kernels.can_shift``.
    """
    if not c.buffer:
        return False
    c = c.copy()
    system.apply(c, SHIFT)
    while not system.terminal(c):
        a = eager_next(c, gold)
        if a == SHIFT and not c.buffer:
            return False  # dead end
        system.apply(c, a)
    return True


class _SwapOracleBase:
    def prepare(self, heads):
        return SwapGold(heads)


class SwapEager(_SwapOracleBase, StaticOracle):
    name = "eager"
    row_code = row_kernels.SWAP_EAGER
    gold_fields = ("proj",)

    def next(self, c: Config, gold: Gold) -> int:
        return eager_next(c, gold)  # type: ignore[arg-type]


class SwapLazy(_SwapOracleBase, StaticOracle):
    name = "lazy"
    row_code = row_kernels.SWAP_LAZY
    gold_fields = ("proj", "mpc")

    def next(self, c: Config, gold: Gold) -> int:
        if can_left(c, gold):
            return LEFT
        if can_right(c, gold):
            return RIGHT
        if can_swap_lazy(c, gold):  # type: ignore[arg-type]
            return SWAP
        return SHIFT


class SwapMinimal(_SwapOracleBase, StaticOracle):
    """Replays the shortest order-respecting sequence found when the sentence was prepared.

    ``time_limit`` bounds the search per sentence (seconds; 0 = none): a long non-projective
    sentence can have too many fork points to search, and training must not hang on one. A
    sentence whose search runs out of time gets the LAZY sequence (``gold.fallback`` is set, and
    the trainer logs it); which sentences fall back can depend on the machine's speed.
    """

    name = "minimal"
    row_code = row_kernels.REPLAY

    def __init__(self, system: SwapStandard, time_limit: float = 2.0):
        super().__init__(system)
        if time_limit < 0:
            raise ValueError(f"oracle.time_limit={time_limit}: give seconds >= 0 (0 = no limit)")
        self.time_limit = float(time_limit)

    def prepare(self, heads):
        gold = SwapGold(heads)
        gold.minimal, complete = minimal_sequence(gold, self.system, self.time_limit)
        gold.fallback = not complete
        return gold

    def next(self, c: Config, gold: Gold) -> int:
        # Static training follows the oracle, so the configuration is the sequence's c.steps-th one.
        return gold.minimal[c.steps]  # type: ignore[attr-defined]

    def replayed(self, gold: Gold) -> list[int]:
        return gold.minimal  # type: ignore[attr-defined]


def minimal_sequence(gold: SwapGold, system: SwapStandard, time_limit: float = 0.0) -> tuple[list[int], bool]:
    """Fewest-swap transition sequence: DFS over SHIFT/SWAP choices with branch and bound.

    The LAZY sequence gives the first bound; a branch is cut as soon as it has used as many
    swaps as the best complete sequence found so far, or when it reaches a fork point already
    expanded with no more swaps. Only the current path, the best one, the fork points seen and
    the pending branches (an explicit stack, so no recursion on sentence length) are kept, never
    the lattice. Returns the sequence and whether the search finished within ``time_limit``
    seconds (0: no limit); if it did not, the sequence is LAZY's.
    """
    lazy = SwapLazy(system).sequence(gold)
    best, best_swaps = lazy, lazy.count(SWAP)
    if best_swaps == 0:
        return best, True
    deadline = time.perf_counter() + time_limit if time_limit > 0 else None
    path: list[int] = []
    expanded: dict = {}  # fork point -> fewest swaps it was expanded with
    # Pending branches: (configuration, swaps so far, path length before it, transition to take).
    pending: list[tuple[Config, int, int, int]] = [(system.initial(gold.n), 0, 0, NONE)]
    forks = 0
    while pending:
        c, swaps, n, first = pending.pop()
        if swaps >= best_swaps:
            continue
        del path[n:]
        if first != NONE:
            system.apply(c, first)
            path.append(first)
        while True:
            if system.terminal(c):
                if swaps < best_swaps:
                    best, best_swaps = list(path), swaps
                break
            if can_left(c, gold):
                a = LEFT
            elif can_right(c, gold):
                a = RIGHT
            elif can_swap(c, gold):
                # Fork: swap now (searched first), or shift first if the gold tree stays reachable.
                forks += 1
                if deadline is not None and forks % 64 == 0 and time.perf_counter() > deadline:
                    return lazy, False
                key = system.state_key(c)
                if expanded.get(key, best_swaps) <= swaps:
                    break
                expanded[key] = swaps
                if oracle_kernels.can_shift(c, gold):
                    pending.append((c, swaps, len(path), SHIFT))
                if swaps + 1 < best_swaps:
                    pending.append((c.copy(), swaps + 1, len(path), SWAP))
                break
            elif c.buffer:
                a = SHIFT
            else:
                break  # dead end
            system.apply(c, a)
            path.append(a)
    return best, True


class SwapNDSW(_SwapOracleBase, Oracle):
    """SHIFT/SWAP ambiguity only."""

    name = "ndsw"
    row_code = row_kernels.SWAP_NDSW
    gold_fields = ("proj",)

    def correct(self, c: Config, gold: Gold) -> list[bool]:
        flags = [False, False, False, False]
        if can_left(c, gold):
            flags[LEFT] = True
        elif can_right(c, gold):
            flags[RIGHT] = True
        elif can_swap(c, gold):  # type: ignore[arg-type]
            flags[SWAP] = True
            flags[SHIFT] = oracle_kernels.can_shift(c, gold)
        else:
            flags[SHIFT] = True
        return flags


class SwapNDAll(_SwapOracleBase, Oracle):
    """Every spurious ambiguity (SHIFT/LEFT, SHIFT/RIGHT, SHIFT/SWAP)."""

    name = "ndall"
    row_code = row_kernels.SWAP_NDALL
    gold_fields = ("proj",)

    def correct(self, c: Config, gold: Gold) -> list[bool]:
        flags = [False, can_left(c, gold), can_right(c, gold), can_swap(c, gold)]  # type: ignore[arg-type]
        flags[SHIFT] = oracle_kernels.can_shift(c, gold) if any(flags) else True
        return flags


def reference_search(system: SwapStandard, gold: SwapGold, eager_arcs: bool = False) -> ExactLoss:
    """Exhaustive search over sequences that respect the projective order (SWAP only when s0
    precedes s1 in it), the restriction under which ND-ALL is exact; with ``eager_arcs`` arcs
    are also attached as soon as they can be (the restriction of ND-SW)."""
    proj = gold.proj

    def allowed(c: Config, a: int) -> bool:
        if a == SWAP and proj[c.stack[-1]] > proj[c.stack[-2]]:
            return False
        return not eager_arcs or a in (LEFT, RIGHT) or not (can_left(c, gold) or can_right(c, gold))

    return ExactLoss(system, gold.heads, allowed=allowed)
