"""Every oracle against exhaustive search, and every static oracle on real treebanks.

Sizes: exhaustive checks run on every tree up to 6 words and random trees of 7-8 words, except
2-Planar, whose reachable configuration space grows too fast (about 480,000 search states for
one 5-word tree, 4.8 million for one of 6 words): every 2-planar tree up to 4 words and random
5-word trees here; ``tools/check_oracles.py --system twoplanar`` runs the larger sizes.
"""

from __future__ import annotations

import random
import time

import numpy as np
import pytest

from nparse.io.conllu import read_conllu
from nparse.systems import make_oracle, make_system, twoplanar
from nparse.systems.arceager import ArcEager, ArcEagerDynamic
from nparse.systems.verify.search import ExactLoss, check_oracle, random_tree, random_walk, small_trees
from nparse.systems.verify.verification import VERIFICATIONS
from nparse.systems.swapstandard import SWAP, SwapGold, SwapNDAll, SwapStandard, can_shift
from nparse.systems.kernels.swapstandard_oracle import can_shift as can_shift_compiled
from nparse.systems.adapters.row_oracle import RowOracle
from nparse.systems.twoplanar import SWITCH, TwoPlanar, TwoPlanarDynamic, is_two_planar
from nparse.trees import is_projective

from .conftest import treebank_files


def assert_agrees(result: dict) -> None:
    assert result["trees"] > 0 and result["configurations"] > 0
    assert not result["mismatches"], result["mismatches"]


# -- every dynamic and non-deterministic oracle against exhaustive search ---------------------

SEARCHED = [v for v in VERIFICATIONS if v.reference is not None]


@pytest.mark.slow
@pytest.mark.parametrize("case", SEARCHED, ids=[v.label.replace(" ", "-") for v in SEARCHED])
def test_oracle_equals_exhaustive_search(case):
    """Zero-cost sets equal exhaustive search (systems/verify/verification.py says how each oracle is
    checked); complete oracles also off the gold path. Every tree up to 5 words and 100 random
    ones of 6, 7 and 8: every tree of 6 words (about 8,000 kept per oracle) took a fifth of the
    suite's CPU time, so ``tools/check_oracles.py --all-up-to 6`` checks them."""
    system, oracle = case.make()
    rng = random.Random(5)
    sizes = (4, 5, 4) if case.slow_search else (5, 8, 100)
    result = check_oracle(
        system, oracle, small_trees(*sizes, rng, case.keeps), rng,
        lambda heads, gold: case.reference(system, gold), walks=2,
        along_correct=case.walk == "correct", restrict_walk=case.restrict_walk, exact_costs=case.exact_costs,
    )  # fmt: skip
    assert_agrees(result)
    if case.walk == "all":
        assert result["off_gold"] > result["configurations"] // 4


# -- arc-eager -------------------------------------------------------------------------------


@pytest.mark.slow
def test_arceager_dynamic_costs_equal_exhaustive_search():
    system = ArcEager()
    oracle = ArcEagerDynamic(system)
    rng = random.Random(3)
    checked = 0
    for heads in small_trees(6, 8, 30, rng, keep=is_projective):
        gold = oracle.prepare(heads)
        exact = ExactLoss(system, heads)
        for _ in range(2):
            for c in random_walk(system, gold.n, rng):
                costs = oracle.costs(c, gold)
                for a, ok in enumerate(system.legal(c)):
                    if ok:
                        assert costs[a] == exact.cost(c, a), (heads, c, system.actions[a])
                        checked += 1
    assert checked > 30000


# -- SwapStandard ----------------------------------------------------------------------------


def test_compiled_can_shift_agrees_with_algorithm_2():
    system = SwapStandard()
    oracle = SwapNDAll(system)
    rng = random.Random(11)
    checked = 0
    for _ in range(300):
        heads = random_tree(rng.randrange(3, 14), rng)
        gold = SwapGold(heads)
        for c in random_walk(system, gold.n, rng, lambda c, o: [a for a in o if oracle.correct(c, gold)[a]]):
            assert can_shift(c, gold, system) == can_shift_compiled(c, gold), (heads, c)
            checked += 1
    assert checked > 3000


def fewest_swaps(system: SwapStandard, gold: SwapGold) -> int:
    """Uniform-cost search over every order-respecting correct sequence, arcs at any time."""
    import heapq

    frontier = [(0, 0, system.initial(gold.n))]
    seen = set()
    tie = 0
    while frontier:
        swaps, _, c = heapq.heappop(frontier)
        key = system.state_key(c)
        if key in seen:
            continue
        seen.add(key)
        if system.terminal(c):
            return swaps
        for a, ok in enumerate(system.legal(c)):
            if not ok or (a == SWAP and gold.proj[c.stack[-1]] > gold.proj[c.stack[-2]]):
                continue
            arc = system.arc_of(c, a)
            if arc and (gold.heads[arc[1]] != arc[0] or any(c.heads[k] == -1 for k in gold.children[arc[1]])):
                continue
            nxt = c.copy()
            system.apply(nxt, a)
            tie += 1
            heapq.heappush(frontier, (swaps + (a == SWAP), tie, nxt))
    raise AssertionError("gold tree unreachable")


def test_minimal_finds_the_fewest_swaps():
    system = SwapStandard()
    minimal = make_oracle(system, "minimal")
    rng = random.Random(6)
    with_swaps = 0
    for heads in small_trees(6, 8, 30, rng, keep=lambda h: not is_projective(h)):
        gold = minimal.prepare(heads)
        found = minimal.sequence(gold).count(SWAP)
        assert found == fewest_swaps(system, gold), heads
        with_swaps += found > 0
    assert with_swaps > 1000


def test_minimal_never_swaps_more_than_lazy_and_eager():
    system = SwapStandard()
    eager, lazy, minimal = (make_oracle(system, name) for name in ("eager", "lazy", "minimal"))
    rng = random.Random(2)
    fewer = 0
    for _ in range(400):
        heads = random_tree(rng.randrange(4, 12), rng)
        swaps = [o.sequence(o.prepare(heads)).count(SWAP) for o in (eager, lazy, minimal)]
        assert swaps[2] <= swaps[1] <= swaps[0], (heads, swaps)
        fewer += swaps[2] < swaps[1]
    assert fewer > 0


def rebuilds(system: SwapStandard, seq: list[int], heads: list[int]) -> bool:
    c = system.initial(len(heads) - 1)
    for a in seq:
        assert system.legal(c)[a]
        system.apply(c, a)
    return system.terminal(c) and c.heads[1:] == heads[1:]


def test_minimal_is_bounded_on_long_non_projective_sentences():
    """Issue 10, case 9: no recursion on sentence length, and a time bound with a LAZY fallback."""
    system = SwapStandard()
    rng = random.Random(3)
    heads = random_tree(150, rng)
    assert not is_projective(heads)
    minimal = make_oracle(system, "minimal", time_limit=0.2)
    start = time.perf_counter()
    gold = minimal.prepare(heads)  # used to raise RecursionError past about 100 words
    assert time.perf_counter() - start < 5.0
    assert gold.fallback
    lazy = make_oracle(system, "lazy")
    assert gold.minimal == lazy.sequence(lazy.prepare(heads))
    assert rebuilds(system, minimal.sequence(gold), heads)
    # A search that finishes is not a fallback, and its sequence rebuilds the tree.
    small = random_tree(12, rng)
    done = minimal.prepare(small)
    assert not done.fallback and rebuilds(system, minimal.sequence(done), small)
    with pytest.raises(ValueError, match="time_limit"):
        make_oracle(system, "minimal", time_limit=-1)


def test_minimal_fallbacks_are_logged_by_the_trainer(caplog):
    from nparse.io.data import Vocabs
    from nparse.training.data import prepare_examples

    sents = read_conllu(treebank_files("dev")[0])[:3]
    oracle = make_oracle(SwapStandard(), "minimal")
    search = oracle.prepare

    def out_of_time(heads):
        gold = search(heads)
        gold.fallback = True
        return gold

    oracle.prepare = out_of_time
    with caplog.at_level("WARNING"):
        examples = prepare_examples(sents, Vocabs.build(sents), oracle, [])
    assert len(examples) == 3
    assert "LAZY" in caplog.text and sents[1].name in caplog.text


# -- 2-Planar --------------------------------------------------------------------------------


def test_switch_regularization_keeps_only_necessary_switches():
    system = TwoPlanar()
    plain = TwoPlanarDynamic(system, switch_regularization=False)
    regular = TwoPlanarDynamic(system, switch_regularization=True)
    rng = random.Random(4)
    penalised = 0
    for _ in range(300):
        heads = random_tree(rng.randrange(3, 10), rng)
        gold = plain.prepare(heads)
        for c in random_walk(system, gold.n, rng):
            a, b = plain.costs(c, gold), regular.costs(c, gold)
            assert a[:SWITCH] == b[:SWITCH]
            if a[SWITCH] == 0 and any(a[t] == 0 for t in range(SWITCH)):
                assert b[SWITCH] > 0
                penalised += 1
            else:
                assert a[SWITCH] == b[SWITCH]
            assert any(x == 0 for x in b if x is not None)  # something stays correct
    assert penalised > 0


def test_twoplanar_static_covers_exactly_the_two_planar_trees():
    system = TwoPlanar()
    static = make_oracle(system, "static")
    rng = random.Random(8)
    for heads in small_trees(6, 9, 150, rng):
        gold = static.prepare(heads)
        assert (gold is not None) == is_two_planar(heads), heads


@pytest.mark.slow
def test_compiled_twoplanar_search_equals_the_python_search():
    """The plane-agnostic oracle is checked against the compiled search (a 6-word tree reaches
    millions of configurations); that search must give the Python ``ExactLoss`` numbers, with the
    canonical planes and without, on and off the gold path."""
    system = TwoPlanar()
    oracle = make_oracle(system, "dynamic")
    rng = random.Random(12)
    checked = 0
    for heads in small_trees(3, 4, 8, rng, is_two_planar):
        gold = oracle.prepare(heads)
        for agnostic in (False, True):
            slow = twoplanar.reference_search(system, gold, plane_agnostic=agnostic)
            fast = twoplanar.compiled_search(system, gold, plane_agnostic=agnostic)
            for c in random_walk(system, gold.n, rng):
                assert fast.future(c) == slow.future(c) and fast.built(c) == slow.built(c), (heads, c)
                for a in slow.moves(c):
                    assert fast.cost(c, a) == slow.cost(c, a), (heads, c, a)
                    checked += 1
    assert checked > 500


# Configurations where the plane-agnostic loss needs its minimum vertex cut (the first: an arc
# whose earlier end is on plane 1's stack only crosses one demanded on plane 0 through a chain of
# crossing arcs) and its cycle step (the second: the arc that breaks the cycle of 3 -> 1 is also
# one of the cut).
AGNOSTIC_CASES = [
    ("cut", [-1, 6, 0, 6, 2, 7, 2, 4], dict(active=1, stack=[3], stack2=[2, 3], buffer=[4, 5, 6, 7],
                                     heads={1: 0, 2: 1}, plane={1: 0, 2: 0})),
    ("cycle", [-1, 0, 5, 2, 2, 1, 2], dict(active=0, stack=[], stack2=[0, 1, 2], buffer=[3, 4, 5, 6], heads={1: 3},
                                  plane={1: 0})),
]  # fmt: skip


@pytest.mark.parametrize("case, heads, state", AGNOSTIC_CASES)
def test_plane_agnostic_loss_takes_the_cut_and_the_cycles_together(case, heads, state):
    from nparse.systems.adapters.arrays import Layout
    from nparse.systems.kernels import twoplanar_agnostic

    system = TwoPlanar()
    oracle = make_oracle(system, "dynamic", switch_regularization=False, plane_agnostic=True)
    gold = oracle.prepare(heads)
    c = system.initial(gold.n)
    c.active, c.stack, c.stack2, c.buffer = state["active"], state["stack"], state["stack2"], state["buffer"][::-1]
    for d, h in state["heads"].items():
        c.attach(h, d)
        c.plane[d] = state["plane"][d]
    search = twoplanar.compiled_search(system, gold, plane_agnostic=True)
    layout = Layout(system, gold.n + 1)
    row, off = layout.from_config(c), layout.offsets
    exact = search.future(c) + search.built(c)
    work = np.empty((5, gold.n + 1), dtype=np.int64)
    assert twoplanar_agnostic.loss(row, off, gold.gh, gold.gplane, gold.crossing, work) == exact
    no_planes = twoplanar_agnostic.loss(row, off, gold.gh, gold.gplane, np.zeros_like(gold.crossing), work)
    if case == "cut":
        assert no_planes < exact  # the crossing arcs' planes cost an arc here
    else:
        assert no_planes == exact  # the cut's arc is the one the cycle loses anyway: paid once
    costs = oracle.costs(c, gold)
    assert [costs[a] for a in search.moves(c)] == [search.cost(c, a) for a in search.moves(c)]


# -- every static oracle on trees and treebanks ----------------------------------------------

STATIC = [(v.system, v.oracle, v.covers) for v in VERIFICATIONS if v.reference is None]


def rebuild(system, oracle, heads) -> list[int]:
    gold = oracle.prepare(heads)
    c = system.initial(len(heads) - 1)
    for a in oracle.sequence(gold):
        system.apply(c, a)
    return c.heads


@pytest.mark.parametrize("name, oracle_name, covers", STATIC, ids=[f"{s}-{o}" for s, o, _ in STATIC])
def test_static_oracle_rebuilds_every_small_tree_it_covers(name, oracle_name, covers):
    system = make_system(name)
    oracle = make_oracle(system, oracle_name)
    rng = random.Random(1)
    count = 0
    for heads in small_trees(6, 9, 100, rng):
        if covers is None or covers(heads):
            assert rebuild(system, oracle, heads) == heads, heads
            count += 1
        else:
            assert oracle.prepare(heads) is None
    assert count > 500


@pytest.mark.slow
@pytest.mark.parametrize("path", treebank_files(), ids=lambda p: p.name)
def test_static_oracles_rebuild_every_covered_treebank_tree(path):
    sents = read_conllu(path)
    for name, oracle_name, covers in STATIC:
        system = make_system(name)
        oracle = make_oracle(system, oracle_name)
        for sent in sents:
            if covers is None or covers(sent.heads):
                assert rebuild(system, oracle, sent.heads) == sent.heads, (name, oracle_name, sent.name)


def test_compiled_ndall_rows_agree_with_the_oracle_on_configs():
    """Beam training asks ND-ALL on rows (one compiled call per step): the same flags as
    ``SwapNDAll.correct`` on configurations along random walks, on and off the gold path, for a
    batch of sentences of different lengths (two rows per configuration, in either order)."""
    from nparse.systems.adapters.arrays import Layout

    system = make_system("swapstandard")
    oracle = make_oracle(system, "ndall")
    rng = random.Random(7)
    golds, configs = [], []
    for g in range(40):
        n = rng.randint(2, 10)
        gold = oracle.prepare(random_tree(n, rng))
        golds.append(gold)
        walk = random_walk(system, n, rng, lambda c, legal: [a for a in legal if oracle.correct(c, gold)[a]] or legal)
        configs += [(g, c) for c in (walk if g % 2 else random_walk(system, n, rng))]
    layout = Layout(system, 11)
    states = np.stack([layout.from_config(c) for _, c in configs] * 2)
    sent = np.array([g for g, _ in configs] * 2, dtype=np.int64)
    items = np.arange(len(states))[::-1].copy()
    got = RowOracle(oracle, golds)(layout, states, items, sent)
    want = np.array([oracle.correct(c, golds[g]) for g, c in configs] * 2)[items]
    assert len(configs) > 200
    assert (got == want).all()


def test_prefer_canonical_keeps_the_canonical_targets_on_the_gold_path():
    """With ``prefer_canonical`` the plane-agnostic oracle breaks ties toward the canonical planes:
    along the canonical oracle's own walks its correct set is the canonical one (the plain
    plane-agnostic set has more moves, which let training drift into switching), and it stays
    within the plane-agnostic optimum everywhere."""
    system = TwoPlanar()
    canonical = make_oracle(system, "dynamic")
    plain = make_oracle(system, "dynamic", plane_agnostic=True, prefer_canonical=False, switch_regularization=False)
    tied = make_oracle(system, "dynamic", plane_agnostic=True)
    rng = random.Random(4)
    wider = 0
    for _ in range(150):
        heads = random_tree(rng.randint(3, 9), rng)
        g = canonical.prepare(heads)
        if not g.covered:
            continue
        for explore in (False, True):
            c = system.initial(g.n)
            while not system.terminal(c):
                said, best, mine = canonical.correct(c, g), plain.correct(c, g), tied.correct(c, g)
                assert all(b for m, b in zip(mine, best) if m)  # never a move that loses an arc
                if not explore:
                    assert mine == said, (heads, c)
                wider += sum(best) > sum(said)
                moves = [a for a, ok in enumerate(system.legal(c)) if ok]
                options = moves if explore and rng.random() < 0.3 else [a for a in moves if said[a]]
                system.apply(c, rng.choice(options))
    assert wider > 100
