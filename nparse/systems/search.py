"""Exhaustive search over reachable configurations: the reference oracles are checked against.

``ExactLoss`` computes the minimum Hamming loss reachable from a configuration by trying every
legal transition sequence (memoised on ``system.state_key``). The exact cost of a transition is
the loss after it minus the loss before it (Goldberg & Nivre 2013). Oracles that are correct only
under a restriction are checked with the matching ``allowed`` filter (a function that says which
legal transitions the search may take) or ``arc_loss`` (how much an added arc costs).
"""

from __future__ import annotations

import itertools
import random
import sys
from typing import Callable, Hashable, Iterator

from .base import NONE, Config, TransitionSystem
from ..conllu_io import tree_problem

ArcLoss = Callable[[Config, int, int, int], int]  # (config before, action, head, dep) -> loss


class ExactLoss:
    """Minimum reachable loss for one gold tree."""

    def __init__(
        self,
        system: TransitionSystem,
        gold_heads: list[int],
        arc_loss: ArcLoss | None = None,
        allowed: Callable[[Config, int], bool] | None = None,
    ):
        self.system = system
        self.gold = gold_heads
        self.arc_loss = arc_loss or (lambda c, a, h, d: int(self.gold[d] != h))
        self.allowed = allowed
        self.memo: dict[Hashable, float] = {}
        sys.setrecursionlimit(max(10000, sys.getrecursionlimit()))

    def moves(self, c: Config) -> list[int]:
        """The transitions the search may take in ``c``."""
        legal = self.system.legal(c)
        return [a for a, ok in enumerate(legal) if ok and (self.allowed is None or self.allowed(c, a))]

    def step_loss(self, c: Config, a: int) -> int:
        arc = self.system.arc_of(c, a)
        return 0 if arc is None else self.arc_loss(c, a, arc[0], arc[1])

    def future(self, c: Config) -> float:
        """Minimum loss of the arcs still to be added (inf if no terminal is reachable)."""
        key = self.system.state_key(c)
        value = self.memo.get(key)
        if value is None:
            if self.system.terminal(c):
                value = 0
            else:
                value = float("inf")
                self.memo[key] = value  # guards against cycles in the transition graph
                for a in self.moves(c):
                    nxt = c.copy()
                    step = self.step_loss(c, a)
                    self.system.apply(nxt, a)
                    value = min(value, step + self.future(nxt))
            self.memo[key] = value
        return value

    def built(self, c: Config) -> int:
        """Loss of the arcs already in ``c`` (plain Hamming unless a system-specific check applies)."""
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
