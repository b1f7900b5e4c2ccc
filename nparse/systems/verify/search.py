"""Exhaustive search over reachable configurations: the reference oracles are checked against.

``ExactLoss`` computes the minimum Hamming loss reachable from a configuration by trying every
legal transition sequence (memoised on ``system.state_key``). The exact cost of a transition is
the loss after it minus the loss before it (Goldberg & Nivre 2013). Oracles that are correct only
under a restriction are checked with the matching ``allowed`` filter (a function that says which
legal transitions the search may take) or ``arc_loss`` (how much an added arc costs).
``prune`` is a pure speed-up: it cuts moves inside the search that provably never lower the
minimum (the first move of every cost query is still tried).
"""

from __future__ import annotations

import itertools
import random
import sys
from typing import Callable, Hashable, Iterable, Iterator, Protocol

from ...trees import tree_problem
from ..base import NONE, Config, Oracle, TransitionSystem

ArcLoss = Callable[[Config, int, int, int], int]  # (config before, action, head, dep) -> loss


class Search(Protocol):
    """What the checks read of an exhaustive search: ``ExactLoss``, or a compiled one
    (``twoplanar.CompiledSearch``)."""

    def moves(self, c: Config) -> list[int]: ...
    def cost(self, c: Config, a: int) -> float: ...
    def future(self, c: Config) -> float: ...
    def built(self, c: Config) -> int: ...


class ExactLoss:
    """Minimum reachable loss for one gold tree."""

    def __init__(
        self,
        system: TransitionSystem,
        gold_heads: list[int],
        arc_loss: ArcLoss | None = None,
        allowed: Callable[[Config, int], bool] | None = None,
        prune: Callable[[Config, int], bool] | None = None,
        built_loss: Callable[[Config], int] | None = None,
    ):
        self.system = system
        self.gold = gold_heads
        self.arc_loss = arc_loss or (lambda c, a, h, d: int(self.gold[d] != h))
        self.allowed = allowed
        self.prune = prune
        self.built_loss = built_loss
        self.memo: dict[Hashable, float] = {}  # state key -> gain
        sys.setrecursionlimit(max(10000, sys.getrecursionlimit()))

    def moves(self, c: Config) -> list[int]:
        """The transitions the search may take in ``c``."""
        legal = self.system.legal(c)
        return [a for a, ok in enumerate(legal) if ok and (self.allowed is None or self.allowed(c, a))]

    def step_loss(self, c: Config, a: int) -> int:
        arc = self.system.arc_of(c, a)
        return 0 if arc is None else self.arc_loss(c, a, arc[0], arc[1])

    def future(self, c: Config) -> float:
        """Minimum loss of what is still to come: words that stay headless count as wrong.

        Split as (words headless now) + gain(state), where gain sums (arc loss - 1) over the
        arcs still to be added, so that it depends on ``state_key`` alone.
        """
        headless = c.heads.count(NONE) - (c.heads[0] == NONE)  # words 1..n (the root has no head)
        return headless + self._gain(c)

    def _gain(self, c: Config, key: Hashable | None = None) -> float:
        system, memo = self.system, self.memo
        if key is None:
            key = system.state_key(c)
        value = memo.get(key)
        if value is not None:
            return value
        value = 0 if system.terminal(c) else float("inf")
        if value:
            state_key, apply, arc_of = system.state_key, system.apply, system.arc_of
            arc_loss, prune = self.arc_loss, self.prune
            for a in self.moves(c):
                if prune is not None and prune(c, a):
                    continue
                nxt = c.copy()
                arc = arc_of(c, a)
                step = 0 if arc is None else arc_loss(c, a, arc[0], arc[1]) - 1
                apply(nxt, a)
                # most children are known already: look them up here rather than in a call
                child = state_key(nxt)
                gain = memo.get(child)
                if gain is None:
                    gain = self._gain(nxt, child)
                if step + gain < value:
                    value = step + gain
        memo[key] = value
        return value

    def built(self, c: Config) -> int:
        """Loss of the arcs already in ``c`` (plain Hamming unless ``built_loss`` says otherwise)."""
        if self.built_loss is not None:
            return self.built_loss(c)
        return sum(1 for d in range(1, c.n + 1) if c.heads[d] != NONE and c.heads[d] != self.gold[d])

    def cost(self, c: Config, a: int) -> float:
        """Exact cost of action a: minimum loss after it minus minimum loss before it."""
        nxt = c.copy()
        step = self.step_loss(c, a)
        self.system.apply(nxt, a)
        return step + self.future(nxt) - self.future(c)


def all_trees(n: int) -> Iterator[list[int]]:
    """Every single-rooted tree over n words, as head lists."""
    for choice in itertools.product(range(n + 1), repeat=n):
        heads = [-1, *choice]
        if any(heads[d] == d for d in range(1, n + 1)):
            continue
        if tree_problem(heads) is None:
            yield heads


def random_tree(n: int, rng: random.Random) -> list[int]:
    """A uniformly random single-rooted tree over n words (random attachment order)."""
    order = list(range(1, n + 1))
    rng.shuffle(order)
    heads = [-1] * (n + 1)
    heads[order[0]] = 0
    for i, d in enumerate(order[1:], 1):
        heads[d] = order[rng.randrange(i)]
    return heads


def random_walk(
    system: TransitionSystem,
    n: int,
    rng: random.Random,
    choose: Callable[[Config, list[int]], list[int]] | None = None,
) -> Iterator[Config]:
    """Configurations along one random legal transition sequence (terminal excluded).

    ``choose`` may narrow the legal actions to pick from (e.g. to zero-cost ones).
    """
    c = system.initial(n)
    steps = 0
    while not system.terminal(c):
        yield c
        options = [a for a, ok in enumerate(system.legal(c)) if ok]
        if choose is not None:
            options = choose(c, options) or options
        c = c.copy()
        system.apply(c, rng.choice(options))
        steps += 1
        if steps > 10 * (n + 1) ** 2:
            raise RuntimeError(f"{system.describe()} does not terminate from {c}")


def small_trees(max_all: int, max_random: int, per_size: int, rng: random.Random, keep=lambda h: True):
    """Every tree up to ``max_all`` words, then ``per_size`` random ones per larger size."""
    for n in range(1, max_all + 1):
        yield from (h for h in all_trees(n) if keep(h))
    for n in range(max_all + 1, max_random + 1):
        found = 0
        while found < per_size:
            h = random_tree(n, rng)
            if keep(h):
                found += 1
                yield h


def check_oracle(
    system: TransitionSystem,
    oracle: Oracle,
    trees: Iterable[list[int]],
    rng: random.Random,
    exact_for: Callable[[list[int], object], Search],
    walks: int = 2,
    along_correct: bool = False,
    restrict_walk: Callable | None = None,
    exact_costs: bool = False,
) -> dict[str, int]:
    """Compare the oracle's correct set with the zero-cost set of exhaustive search (and with
    ``exact_costs``, a cost oracle's cost of every legal transition with the search's).

    Configurations come from random walks: over all legal transitions (complete oracles) or over
    the oracle's own correct ones (``along_correct``, for non-deterministic oracles, which are only
    defined where the gold tree is reachable). ``restrict_walk`` narrows the walk's choices the
    way the search is restricted. Returns counters; ``mismatches`` lists the first failures.
    """
    counts = {"trees": 0, "configurations": 0, "off_gold": 0}
    mismatches: list = []
    for heads in trees:
        gold = oracle.prepare(heads)
        if gold is None:
            continue
        counts["trees"] += 1
        exact = exact_for(heads, gold)

        def choose(c, options, gold=gold, exact=exact):
            if restrict_walk is not None:
                options = [a for a in options if restrict_walk(c, a, gold)]
            if along_correct:
                flags = oracle.correct(c, gold)
                options = [a for a in options if flags[a]]
            return options

        for _ in range(walks):
            for c in random_walk(system, gold.n, rng, choose):
                moves = exact.moves(c)
                if not moves:
                    continue
                costs = {a: exact.cost(c, a) for a in moves}
                best = min(costs.values())
                zero = sorted(a for a in moves if costs[a] == best)
                flags = oracle.correct(c, gold)
                mine = sorted(a for a in moves if flags[a])
                counts["configurations"] += 1
                counts["off_gold"] += exact.future(c) + exact.built(c) > exact.future(system.initial(gold.n))
                wrong = zero != mine
                if exact_costs:
                    said = oracle.costs(c, gold)  # type: ignore[attr-defined]
                    wrong = wrong or any(said[a] != costs[a] for a in moves)
                    counts["costs"] = counts.get("costs", 0) + len(moves)
                if wrong and len(mismatches) < 5:
                    mismatches.append((heads, repr(c), costs, flags))
    counts["mismatches"] = mismatches  # type: ignore[assignment]
    return counts
