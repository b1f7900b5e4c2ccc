"""NL-Covington: the system, its static oracle, and its dynamic oracle against exhaustive search.

The dynamic oracle's costs are compared with ``ExactLoss`` (plain Hamming loss) for every legal
transition, on configurations from random walks over all legal transitions (off the gold path:
wrong arcs, gold arcs blocked by cycles or by the single-root rule) and along zero-cost walks (on
the gold path): every tree up to 5 words and random trees of 6-8 words here; every tree of 6
words and random ones of 7-8 with ``python tools/check_oracles.py --system covington``.
"""

from __future__ import annotations

import random
from collections import defaultdict

import pytest


from nparse.systems.base import NONE, Gold
from nparse.systems.covington import (
    LEFT,
    NOARC,
    RIGHT,
    SHIFT,
    Covington,
    CovingtonConfig,
    CovingtonDynamic,
    CovingtonStatic,
    count_cycles,
    reachable_graph,
    reference_search,
)
from nparse.systems.verify.search import ExactLoss, all_trees, check_oracle, random_tree, random_walk, small_trees
from nparse.trees import is_projective


def exact_search(system: Covington, heads: list[int]) -> ExactLoss:
    """The search the oracle is verified against (wrong arcs pruned: see ``reference_search``)."""
    return reference_search(system, Gold(heads))


# -- the system ------------------------------------------------------------------------------


def test_configurations_keep_the_covington_invariants():
    system = Covington()
    assert system.actions[SHIFT] == "SHIFT" and system.actions[NOARC] == "NOARC"
    rng = random.Random(0)
    seen = 0
    for _ in range(200):
        n = rng.randrange(1, 9)
        for c in random_walk(system, n, rng):
            assert isinstance(c, CovingtonConfig)
            j = c.buffer[-1]
            # λ1 · λ2 is 0..j-1, and λ2's leftmost word is stack2[-1].
            assert c.stack + c.stack2[::-1] == list(range(j))
            legal = system.legal(c)
            assert legal[SHIFT] and legal[NOARC] == bool(c.stack)
            i = c.stack[-1] if c.stack else NONE
            assert system.positions(c) == [
                i,
                c.stack[-2] if len(c.stack) > 1 else NONE,
                j,
                c.buffer[-2] if len(c.buffer) > 1 else NONE,
                c.stack2[-1] if c.stack2 else NONE,
            ]
            other = c.copy()
            assert other.stack2 == c.stack2 and other.stack2 is not c.stack2
            system.apply(other, SHIFT)
            assert other.stack == list(range(j + 1)) and other.stack2 == []
            if legal[NOARC]:
                other = c.copy()
                system.apply(other, NOARC)
                assert other.stack2[-1] == i and other.stack == c.stack[:-1] and c.stack[-1] == i
            for a in (LEFT, RIGHT):
                if legal[a]:
                    h, d = system.arc_of(c, a)
                    other = c.copy()
                    system.apply(other, a)
                    assert other.heads[d] == h and c.heads[d] == NONE and other.stack2[-1] == i
            seen += 1
    assert seen > 1000


def test_legality_single_head_acyclic_single_root():
    system = Covington()
    rng = random.Random(1)
    for _ in range(300):
        n = rng.randrange(2, 9)
        c = system.initial(n)
        while not system.terminal(c):
            legal = system.legal(c)
            assert any(legal)
            if c.stack:
                i, j = c.stack[-1], c.buffer[-1]
                for a, (h, d) in ((LEFT, (j, i)), (RIGHT, (i, j))):
                    ok = d != 0 and c.heads[d] == NONE and (h != 0 or c.lmod[0] == NONE)
                    w = h  # d must not be an ancestor of h
                    while w != NONE:
                        ok = ok and w != d
                        w = c.heads[w]
                    assert legal[a] == ok, (c, system.actions[a])
            system.apply(c, rng.choice([a for a, ok in enumerate(legal) if ok]))
        assert sum(1 for d in range(1, n + 1) if c.heads[d] == 0) <= 1
        out = system.output(c)
        assert sum(1 for d in range(1, n + 1) if out[d] == 0) == 1 and NONE not in out[1:]


def all_configurations(system: Covington, n: int) -> list[CovingtonConfig]:
    """Every configuration reachable for n words (terminal ones included)."""
    start = system.initial(n)
    seen = {_identity(start): start}
    todo = [start]
    while todo:
        c = todo.pop()
        for a, ok in enumerate(system.legal(c)):
            if ok:
                nxt = c.copy()
                system.apply(nxt, a)
                key = _identity(nxt)
                if key not in seen:
                    seen[key] = nxt
                    todo.append(nxt)
    return list(seen.values())


def _identity(c) -> tuple:
    return len(c.buffer), len(c.stack), tuple(c.heads)


def test_state_key_is_sufficient():
    """Configurations with equal keys have the same legal moves and the same futures: the same set
    of (transition sequence, arcs added) to the end, computed without the key."""
    system = Covington()
    futures: dict[tuple, frozenset] = {}

    def future(c) -> frozenset:
        key = _identity(c)
        if key not in futures:
            if system.terminal(c):
                futures[key] = frozenset([()])
            else:
                out = set()
                for a, ok in enumerate(system.legal(c)):
                    if ok:
                        nxt = c.copy()
                        arc = system.arc_of(c, a)
                        system.apply(nxt, a)
                        out.update(((a, arc), *rest) for rest in future(nxt))
                futures[key] = frozenset(out)
        return futures[key]

    shared = 0
    for n in (3, 4, 5):
        groups = defaultdict(list)
        for c in all_configurations(system, n):
            groups[system.state_key(c)].append(c)
        for configs in groups.values():
            first = configs[0]
            for other in configs[1:]:
                assert system.legal(other) == system.legal(first), (first, other)
                assert future(other) == future(first), (first, other)
                shared += 1
    assert shared > 100  # configurations with different arcs but the same key


# -- static oracle ---------------------------------------------------------------------------


def test_static_oracle_rebuilds_every_tree():
    system = Covington()
    oracle = CovingtonStatic(system)
    rng = random.Random(2)
    trees = [h for n in range(1, 7) for h in all_trees(n)]
    trees += [random_tree(rng.randrange(7, 21), rng) for _ in range(300)]
    non_projective = 0
    for heads in trees:
        gold = oracle.prepare(heads)
        assert gold is not None
        c = system.initial(gold.n)
        for a in oracle.sequence(gold):  # sequence() raises if the oracle picks an illegal action
            assert system.legal(c)[a]
            system.apply(c, a)
        assert system.terminal(c) and c.heads == heads, heads
        assert system.output(c) == heads
        non_projective += not is_projective(heads)
    assert len(trees) == 1 + 2 + 9 + 64 + 625 + 7776 + 300 and non_projective > 3000


# -- dynamic oracle --------------------------------------------------------------------------


def compare_with_search(trees, rng: random.Random, walks: int = 1) -> dict[str, int]:
    """Every legal transition's cost against exhaustive search, along ``walks`` random walks and
    ``walks`` zero-cost walks per tree. Returns counters."""
    system = Covington()
    oracle = CovingtonDynamic(system)
    counts = {"trees": 0, "configurations": 0, "costs": 0, "off_gold": 0, "cycles": 0, "positive": 0}
    for heads in trees:
        gold = oracle.prepare(heads)
        exact = exact_search(system, heads)
        best = exact.future(system.initial(gold.n))
        counts["trees"] += 1

        def zero_cost(c, options, gold=gold):
            costs = oracle.costs(c, gold)
            return [a for a in options if costs[a] == 0]

        for choose in [None] * walks + [zero_cost] * walks:
            for c in random_walk(system, gold.n, rng, choose):
                costs = oracle.costs(c, gold)
                legal = system.legal(c)
                for a in range(len(legal)):
                    if legal[a]:
                        expected = exact.cost(c, a)
                        assert costs[a] == expected, (heads, c, system.actions[a], costs, expected)
                        counts["costs"] += 1
                        counts["positive"] += expected > 0
                    else:
                        assert costs[a] is None
                counts["configurations"] += 1
                off = exact.future(c) + exact.built(c) > best
                counts["off_gold"] += off
                if choose is not None:
                    assert not off  # zero-cost walks stay on the gold path
                i = c.stack[-1] if c.stack else NONE
                parent, _ = reachable_graph(gold, c.heads, i, c.buffer[-1], c.lmod[0] != NONE)
                counts["cycles"] += count_cycles(parent) > 0
    return counts


@pytest.mark.slow
def test_dynamic_oracle_costs_equal_exhaustive_search():
    rng = random.Random(3)
    counts = compare_with_search(small_trees(5, 8, 25, rng), rng, walks=2)
    assert counts["trees"] == 1 + 2 + 9 + 64 + 625 + 3 * 25 and counts["costs"] > 100000, counts
    # Wrong arcs and cycles were met, so the cycle term of the loss was exercised.
    assert counts["off_gold"] > counts["configurations"] // 4 and counts["cycles"] > 300, counts
    assert counts["positive"] > 10000, counts


@pytest.mark.slow
def test_dynamic_oracle_zero_cost_sets_agree_with_check_oracle():
    system = Covington()
    oracle = CovingtonDynamic(system)
    rng = random.Random(5)
    result = check_oracle(
        system,
        oracle,
        small_trees(5, 7, 20, rng),
        rng,
        lambda heads, gold: exact_search(system, heads),
        walks=2,
    )
    assert result["trees"] == 1 + 2 + 9 + 64 + 625 + 2 * 20 and result["configurations"] > 10000, result
    assert result["off_gold"] > result["configurations"] // 4, result
    assert not result["mismatches"], result["mismatches"]


def test_pruning_keeps_exact_losses():
    """The pruned search (see ``exact_search``) finds the same minimum as the full one."""
    system = Covington()
    rng = random.Random(6)
    checked = 0
    for n in range(1, 5):
        for heads in all_trees(n):
            pruned, full = exact_search(system, heads), ExactLoss(system, heads)
            for c in (c for _ in range(2) for c in random_walk(system, n, rng)):
                assert pruned.future(c) == full.future(c), (heads, c)
                checked += 1
    assert checked > 1000


def test_dynamic_oracle_counts_a_cycle_of_reachable_gold_arcs():
    """Gold 0 -> 2 -> 3 -> 1. After SHIFT and a wrong RIGHT 1 -> 2, the gold arcs 2 -> 3 and
    3 -> 1 are each reachable but close a cycle with 1 -> 2: one of them is lost too (the
    configuration is not arc-decomposable), so the loss is 2, not 1."""
    system = Covington()
    oracle = CovingtonDynamic(system)
    heads = [NONE, 3, 0, 2]
    gold = Gold(heads)
    c = system.initial(3)
    for a in (SHIFT, RIGHT):
        system.apply(c, a)
    assert c.stack == [0] and c.buffer[-1] == 2 and c.heads == [NONE, NONE, 1, NONE]
    parent, unreachable = reachable_graph(gold, c.heads, 0, 2, False)
    assert unreachable == 1 and parent == [NONE, 3, 1, 2] and count_cycles(parent) == 1
    exact = exact_search(system, heads)
    assert exact.future(c) + exact.built(c) == 2
    costs = oracle.costs(c, gold)
    assert costs == [exact.cost(c, a) if ok else None for a, ok in enumerate(system.legal(c))]


def test_compiled_costs_equal_the_python_definition():
    """The oracle's compiled costs (kernels/covington_oracle.py) equal ``reference_costs`` everywhere
    on random walks over sentences of 2-40 words."""
    system = Covington()
    oracle = CovingtonDynamic(system)
    rng = random.Random(21)
    checked = 0
    for _ in range(200):
        gold = oracle.prepare(random_tree(rng.randrange(2, 41), rng))
        for c in random_walk(system, gold.n, rng):
            assert oracle.costs(c, gold) == oracle.reference_costs(c, gold), c
            checked += 1
    assert checked > 5000
