"""Completion model: item scores against a from-scratch recomputation, every factor counted once,
no factors = the beam parser, and the MST decoder against brute force."""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest
import torch

from nparse.decoding.beam import beam_search, flatten, step
from nparse.decoding.completion import Completion, Factors, table_rows
from nparse.decoding.mst import mst_heads
from nparse.models.completion import FactorScorer
from nparse.models.scorer import TransitionScorer
from nparse.systems import NONE, make_system
from nparse.systems.adapters.arrays import Layout
from nparse.systems.adapters.factors import factor_mask
from .reference_factors import all_factors, complete_factors
from .test_arrays import VARIANTS

ALL = factor_mask(["1", "2a", "2b", "3a", "3b", "3c"])
DIM = 6


def reference_score(completion: Completion, found: list, offset: int) -> float:
    """Sum of the scores of (kind, nodes) factors of one sentence."""
    if not found:
        return 0.0
    kind = np.array([k for k, _ in found], dtype=np.int64)
    words = np.array([list(n) + [NONE] * (4 - len(n)) for _, n in found], dtype=np.int64)
    rows = table_rows(kind, words, np.full(len(found), offset), completion.none_row)
    with torch.no_grad():
        f = Factors(
            np.zeros(len(kind), dtype=np.int64),
            np.zeros(len(kind), dtype=np.int64),
            kind,
            rows,
            words[:, 1] > words[:, 0],
        )
        return float(completion.score(f).double().sum())


def make_completion(mask: int, sentences: int, width: int, seed: int) -> Completion:
    torch.manual_seed(seed)
    scorer = FactorScorer(DIM, mask, 5)
    vectors = torch.randn(sentences, width, DIM)
    completion = Completion.build(scorer, vectors, [width - 1] * sentences)
    completion.vectors = vectors  # type: ignore[attr-defined]
    return completion


@pytest.mark.parametrize("name,options", VARIANTS, ids=[f"{n}-{o.get('root', '')}" for n, o in VARIANTS])
def test_item_scores_match_recomputation(name, options):
    """At every step of random beam runs, an item's completion score is the sum of the scores of
    the complete factors of its tree recomputed from scratch; at the end, every factor of the
    final tree has been counted exactly once."""
    system = make_system(name, **options)
    rng = random.Random(3)
    masks = [ALL, factor_mask(["1"]), factor_mask(["2a", "3c"])]
    for trial in range(12):
        mask = masks[trial % len(masks)]
        lengths = np.array([rng.randint(1, 12) for _ in range(4)])
        width = int(lengths.max()) + 1
        layout = Layout(system, width, mask)
        completion = make_completion(mask, len(lengths), width, trial)
        states = layout.initial(lengths)
        sent = np.arange(len(lengths))
        item_score = np.zeros(len(lengths))
        own = np.zeros(len(lengths))  # the completion part of every item's score
        starts = np.arange(len(lengths) + 1)
        noise = np.random.default_rng(trial)
        k = 3
        finished = 0
        while len(sent):
            offsets = sent * width
            rows, legal, done = layout.inspect(states, offsets, len(lengths) * width)
            for i in range(len(states)):
                c = layout.to_config(states, i)
                want = reference_score(completion, complete_factors(system, c, mask), completion.base[sent[i]])
                assert own[i] == pytest.approx(want, abs=1e-5), (name, i, c.heads)
                if done[i]:  # every factor of the final tree counted, each once (bits and score)
                    bits = layout.counted(states, i)
                    assert all(bits[d] == mask for d in range(1, c.n + 1) if c.heads[d] != NONE)
                    total = reference_score(completion, all_factors(c.heads, mask), completion.base[sent[i]])
                    assert own[i] == pytest.approx(total, abs=1e-5)
            delta, _ = completion.candidates(layout, states, sent, legal, done)
            scores = noise.normal(size=legal.shape) + delta
            s = step(layout, None, None, states, offsets, item_score, starts, k,
                     inspected=(rows, legal, done), scores=scores)  # fmt: skip
            ended = ((s.action < 0) | (np.arange(k)[None, :] >= s.count[:, None])).all(1)
            finished += int(ended.sum())
            going = np.flatnonzero(~ended)
            parents = flatten(going, s.count, s.parent)
            actions = flatten(going, s.count, s.action)
            item_score = flatten(going, s.count, s.total)
            own = own[parents] + np.where(actions >= 0, delta[parents, np.maximum(actions, 0)], 0.0)
            states = states[parents]
            layout.apply(states, actions)
            sent = sent[parents]
            starts = np.concatenate([[0], np.cumsum(s.count[going])])
        assert finished == len(lengths)


@pytest.mark.parametrize("name", ["arceager", "swapstandard", "twoplanar"])
def test_zero_factors_change_nothing(name):
    """A completion model whose factors all score 0 gives the beam parser's trees and scores."""
    system = make_system(name)
    lengths = [7, 3, 9, 5]
    width = max(lengths) + 1
    torch.manual_seed(0)
    scorer = TransitionScorer(DIM, system.n_slots, 8, len(system.actions))
    table = scorer.table(torch.randn(len(lengths), width, DIM))
    completion = make_completion(ALL, len(lengths), width, 1)
    with torch.no_grad():
        completion.scorer.out.zero_()
        completion.scorer.out_bias.zero_()
    plain = beam_search(Layout(system, width), scorer, table, lengths, 4)
    with_zero = beam_search(Layout(system, width, ALL), scorer, table, lengths, 4, completion)
    for a, b in zip(plain, with_zero):
        assert a.heads == b.heads
        assert a.scores == pytest.approx(b.scores)


def projective(heads: tuple[int, ...]) -> bool:
    for d in range(1, len(heads)):
        lo, hi = sorted((heads[d], d))
        for w in range(lo + 1, hi):
            v = w
            while v not in (0, heads[d]):
                v = heads[v]
            if v != heads[d]:
                return False
    return True


def test_wide_beam_finds_the_best_tree_under_the_factors():
    """Transition scores all 0 and a beam wider than the number of derivations: arc-standard's
    best item is the best projective single-rooted tree under the first-order factor alone."""
    system = make_system("arcstandard")
    n, width = 5, 6
    torch.manual_seed(0)
    scorer = TransitionScorer(DIM, system.n_slots, 8, len(system.actions))
    with torch.no_grad():
        for p in scorer.parameters():
            p.zero_()
    table = scorer.table(torch.randn(1, width, DIM))
    completion = make_completion(factor_mask(["1"]), 1, width, 2)
    with torch.no_grad():
        scores = completion.scorer.arc_scores(completion.vectors, [n])[0].double().numpy()
        best = beam_search(Layout(system, width, 1), scorer, table, [n], 500, completion)[0]
    trees = [
        (NONE,) + hs
        for hs in itertools.product(range(n + 1), repeat=n)
        if sum(h == 0 for h in hs) == 1 and brute_force_tree((NONE,) + hs) and projective((NONE,) + hs)
    ]
    want = max(sum(scores[h[d], d] for d in range(1, n + 1)) for h in trees)
    got = sum(scores[best.heads[0][d], d] for d in range(1, n + 1))
    assert got == pytest.approx(want, abs=1e-5)
    assert best.scores[0] == pytest.approx(want, abs=1e-5)


def brute_force_tree(heads: tuple[int, ...]) -> bool:
    """Whether heads (index 0 = root) form a tree: no self-loop, every word reaches the root."""
    n = len(heads) - 1
    for d in range(1, n + 1):
        v, steps = d, 0
        while v != 0:
            if heads[v] == v or steps > n:
                return False
            v, steps = heads[v], steps + 1
    return True


def brute_force(scores: np.ndarray) -> float:
    n = scores.shape[0] - 1
    best = -np.inf
    for hs in itertools.product(range(n + 1), repeat=n):
        heads = (NONE,) + hs
        if sum(h == 0 for h in hs) == 1 and brute_force_tree(heads):
            best = max(best, sum(scores[heads[d], d] for d in range(1, n + 1)))
    return best


def test_mst_finds_the_best_single_rooted_tree():
    rng = np.random.default_rng(0)
    for n in range(1, 7):
        for trial in range(12 if n < 6 else 3):
            scores = rng.normal(size=(n + 1, n + 1))
            if trial % 3 == 1:
                scores = np.round(scores)  # ties
            if trial % 3 == 2:
                scores[0, 1:] += 5.0  # every word would rather hang from the root
            heads = mst_heads(scores)
            assert sum(h == 0 for h in heads[1:]) == 1
            assert heads[0] == NONE
            for d in range(1, n + 1):  # a tree: every word reaches the root
                v, steps = d, 0
                while v != 0:
                    v, steps = heads[v], steps + 1
                    assert steps <= n
            got = sum(scores[heads[d], d] for d in range(1, n + 1))
            assert got == pytest.approx(brute_force(scores), abs=1e-9)


def test_mst_on_long_sentences_is_a_single_rooted_tree():
    rng = np.random.default_rng(1)
    for n in (30, 80):
        scores = rng.normal(size=(n + 1, n + 1))
        scores[0, 1:] += 3.0
        heads = mst_heads(scores)
        assert sum(h == 0 for h in heads[1:]) == 1
        for d in range(1, n + 1):
            v, steps = d, 0
            while v != 0:
                v, steps = heads[v], steps + 1
                assert steps <= n


def test_head_loss_is_the_cross_entropy_of_gold_heads():
    """The head-selection loss of the first-order factor: per word, -log softmax over every other
    position (root included) of the arc scores, at the gold head; summed over words."""
    torch.manual_seed(0)
    scorer = FactorScorer(DIM, factor_mask(["1"]), 5)
    lengths = [3, 5]
    vectors = torch.randn(2, 6, DIM)
    heads = [[-1, 2, 0, 2], [-1, 0, 1, 1, 3, 3]]
    got = scorer.head_loss(vectors, lengths, heads)
    want = 0.0
    for b, n in enumerate(lengths):
        scores = scorer.arc_scores(vectors[b : b + 1, : n + 1], [n])[0]
        for d in range(1, n + 1):
            others = [h for h in range(n + 1) if h != d]
            logits = scores[others, d]
            want -= float(torch.log_softmax(logits.detach(), 0)[others.index(heads[b][d])])
    assert float(got.detach()) == pytest.approx(want, rel=1e-5)
    got.backward()
    assert scorer.weight.grad is not None and float(scorer.weight.grad.abs().sum()) > 0


def test_score_cache_returns_the_scores_of_a_fresh_computation_across_calls_and_growth():
    """Repeats within a call and across calls (parser steps) get exactly the computed score."""
    completion = make_completion(ALL, sentences=3, width=9, seed=5)
    rng = np.random.default_rng(0)
    fresh = Completion(completion.scorer, completion.table, completion.base)
    fresh.cache = None
    assert completion.cache is not None
    completion.cache.__init__()
    completion.cache.keys_a = completion.cache.keys_a[:8]  # start tiny so that it has to grow
    completion.cache.keys_b, completion.cache.vals = completion.cache.keys_b[:8], completion.cache.vals[:8]
    for _ in range(6):
        f = 400
        kind = rng.integers(0, 8, f)
        words = rng.integers(-1, 9, (f, 4))
        words[:, 0], words[:, 1] = rng.integers(0, 9, f), rng.integers(1, 9, f)
        nodes = table_rows(kind, words, completion.base[rng.integers(0, 3, f)], completion.none_row)
        found = Factors(
            np.zeros(f, dtype=np.int64), np.zeros(f, dtype=np.int64), kind, nodes, words[:, 1] > words[:, 0]
        )
        np.testing.assert_array_equal(completion.score_fixed(found), fresh.score_fixed(found))
    assert 0 < completion.cache.count < 6 * 400 and completion.cache.keys_a.shape[0] > 8


def test_factor_scorers_get_their_own_learning_rate():
    from nparse.training.models import parameter_groups

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.encoder, self.completion = torch.nn.Linear(2, 2), torch.nn.Linear(2, 3)

    model = Model()
    rest, factors = parameter_groups(model, 1e-3)  # type: ignore[arg-type]
    assert factors["lr"] == 1e-3 and "lr" not in rest
    assert {id(p) for p in factors["params"]} == {id(p) for p in model.completion.parameters()}
    assert len(rest["params"]) + len(factors["params"]) == len(list(model.parameters()))
    assert len(parameter_groups(model, None)) == 1  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="trainer.completion_lr"):
        parameter_groups(model, -1.0)  # type: ignore[arg-type]
