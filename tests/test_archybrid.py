"""Arc-hybrid: dynamic-oracle costs against exhaustive search; static oracle on real treebanks."""

from __future__ import annotations

import random

import pytest

from nparse.io.conllu import read_conllu, tree_problem
from nparse.systems import Gold
from nparse.systems.archybrid import ArcHybrid, ArcHybridDynamic, ArcHybridStatic
from nparse.systems.verify.search import ExactLoss, all_trees, random_walk
from nparse.trees import is_projective

from .conftest import treebank_files


@pytest.mark.parametrize("root", ["end", "start"])
def test_dynamic_costs_equal_exhaustive_search(root):
    """Every projective tree up to 6 words; configurations on random (mostly wrong) paths."""
    system = ArcHybrid(root=root)
    oracle = ArcHybridDynamic(system)
    rng = random.Random(7)
    trees = checked = nonzero = 0
    for n in range(1, 7):
        for heads in all_trees(n):
            if not is_projective(heads):
                continue
            trees += 1
            gold, exact = Gold(heads), ExactLoss(system, heads)
            for _ in range(3):
                for c in random_walk(system, n, rng):
                    costs = oracle.costs(c, gold)
                    for a, ok in enumerate(system.legal(c)):
                        assert (costs[a] is not None) == ok
                        if ok:
                            assert costs[a] == exact.cost(c, a), (heads, c, system.actions[a])
                            checked += 1
                            nonzero += costs[a] > 0
    assert trees == 1 + 2 + 7 + 30 + 143 + 728  # all projective single-rooted trees
    assert nonzero > checked // 10  # the walks do leave the gold path


@pytest.mark.parametrize("root", ["end", "start"])
def test_every_output_is_a_single_rooted_tree(root):
    system = ArcHybrid(root=root)
    rng = random.Random(1)
    for n in range(1, 9):
        for _ in range(200):
            c = system.initial(n)
            for c in random_walk(system, n, rng):
                pass
            final = c.copy()
            options = [a for a, ok in enumerate(system.legal(final)) if ok]
            system.apply(final, rng.choice(options))
            assert system.terminal(final)
            assert tree_problem(final.heads) is None, final


@pytest.mark.parametrize("root", ["end", "start"])
@pytest.mark.parametrize("path", treebank_files(), ids=lambda p: p.name)
def test_static_oracle_rebuilds_every_projective_tree(path, root):
    system = ArcHybrid(root=root)
    oracle = ArcHybridStatic(system)
    covered = 0
    for sent in read_conllu(path):
        gold = oracle.prepare(sent.heads)
        assert (gold is not None) == is_projective(sent.heads)
        if gold is None:
            continue
        c = system.initial(len(sent))
        for a in oracle.sequence(gold):
            system.apply(c, a)
        assert c.heads == sent.heads, sent.name
        covered += 1
    assert covered > 0


def test_projectivity_check_agrees_with_crossing_arcs():
    from nparse.trees import arcs_cross

    for n in range(1, 6):
        for heads in all_trees(n):
            arcs = [(heads[d], d) for d in range(1, n + 1)]
            crossing = any(arcs_cross(*a, *b) for a in arcs for b in arcs)
            assert is_projective(heads) == (not crossing)
