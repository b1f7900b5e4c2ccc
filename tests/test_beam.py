"""Beam search: K=1 is today's greedy decoder, a wide beam is exact search, N-best lists."""

from __future__ import annotations

import functools
import random

import numpy as np
import pytest
import torch

from nparse.decoding.beam import beam_search, greedy_search
from nparse.io.conllu import read_conllu
from nparse.io.data import Vocabs, bucket_batches, collate, encode
from nparse.decoding.decode import decode_batch
from nparse.decoding.settings import DecodeSettings
from nparse.models.parser import ParserModel
from nparse.systems import SYSTEMS, make_system
from nparse.systems.adapters.arrays import Layout

from .conftest import EWT_DEV, SHARED, compose_config, model_config
from .reference_greedy import decode
from .test_arrays import VARIANTS

SMALL = {
    "word_dim": 20, "upos_dim": 8, "xpos_dim": 0, "char_dim": 0, "char_hidden": 8, "lstm_dim": 16,
    "lstm_layers": 1, "lstm_dropout": 0.0, "dropout": 0.0, "word_dropout": 0.25, "hidden": 12, "label_hidden": 8,
}  # fmt: skip


@functools.cache
def dev_sentences():
    return read_conllu(EWT_DEV)


def random_model(system, sentences, seed: int = 0) -> ParserModel:
    torch.manual_seed(seed)
    return ParserModel(Vocabs.build(sentences), system, model_config(**SMALL)).eval()


def sentences_of(path, count: int):
    sents = list(dev_sentences()) if path == EWT_DEV else read_conllu(path)
    random.Random(0).shuffle(sents)
    return sents[:count]


@pytest.mark.slow
def test_k1_is_todays_greedy_decoder_for_every_system():
    """Tree for tree on real sentences (EWT and GDT dev, up to the longest), random weights."""
    sents = sentences_of(EWT_DEV, 250)
    gdt = SHARED / "el_gdt" / "el_gdt-ud-dev.conllu"
    if gdt.is_file():
        sents += sentences_of(gdt, 150)
    for name, options in VARIANTS:
        for modifiers in (False, True):
            system = make_system(name, modifiers=modifiers, **options)
            model = random_model(system, sents, seed=len(name))
            examples = [encode(s, model.vocabs) for s in sents]
            for batch_examples in bucket_batches(examples, 64):
                batch = collate(batch_examples)
                with torch.no_grad():
                    table = model.scorer.table(model.encoder(batch))
                configs = [system.initial(len(e)) for e in batch_examples]
                decode(system, model.scorer, table, configs, [b * batch.width for b in range(len(configs))])
                want = [c.heads for c in configs]
                layout, lengths = Layout(system, batch.width), [len(e) for e in batch_examples]
                got = beam_search(layout, model.scorer, table, lengths, 1)
                assert [f.heads[0] for f in got] == want, (name, modifiers)
                for temperature in (None, 0.7):  # the greedy search is the K-best search with K=1
                    greedy = greedy_search(layout, model.scorer, table, lengths, temperature)
                    kbest = beam_search(
                        layout, model.scorer, table, lengths, 1, temperature=temperature, greedy_shortcut=False
                    )
                    assert [(f.scores, f.heads, f.steps) for f in greedy] == [
                        (f.scores, f.heads, f.steps) for f in kbest
                    ], (name, modifiers, temperature)


def all_derivations(system, n: int, score_of, limit: int = 5000):
    """(score, heads) of every complete transition sequence of an n-word sentence (None if
    there are more than ``limit``)."""
    out = []

    def walk(c, total):
        if len(out) > limit:
            return
        if system.terminal(c):
            out.append((total, c.heads[:]))
            return
        scores = score_of(c)
        for a, ok in enumerate(system.legal(c)):
            if ok:
                nxt = c.copy()
                system.apply(nxt, a)
                walk(nxt, total + scores[a])

    walk(system.initial(n), 0.0)
    return out if len(out) <= limit else None


@pytest.mark.parametrize("name,options", VARIANTS, ids=[f"{n}-{o.get('root', '')}" for n, o in VARIANTS])
def test_wide_beam_finds_the_best_derivation(name, options):
    """With K above the number of derivations the beam is exact: its best item is the best
    complete derivation and its items are all derivations in score order, for sentences of 1-4
    words with at most 5,000 derivations (2-Planar: 1-2 words, 38 and 4,604 derivations)."""
    system = make_system(name, **options)
    torch.manual_seed(3)
    for n in (1, 2, 3, 4):
        model = random_model(system, dev_sentences()[:20], seed=n)
        width = n + 1
        table = torch.randn(width + 1, system.n_slots, SMALL["hidden"]) * 2
        layout = Layout(system, width)

        def score_of(c):
            rows = [w if w >= 0 else width for w in system.features(c)]
            with torch.no_grad():
                return model.scorer.scores(table, torch.tensor([rows])).double()[0].tolist()

        every = all_derivations(system, n, score_of)
        if every is None:
            break
        every.sort(key=lambda x: -x[0])
        k = len(every) + 1
        got = beam_search(layout, model.scorer, table, [n], k)[0]
        assert len(got.scores) == len(every)
        # float32 sums of one row at a time and of a batch differ in the last bits
        assert np.allclose(got.scores, [s for s, _ in every], atol=1e-5)
        if len(every) == 1 or every[0][0] - every[1][0] > 1e-4:
            assert got.heads[0] == every[0][1]


@pytest.mark.parametrize("name,options", VARIANTS[2:4], ids=["arceager", "arcstandard"])
def test_nbest_trees_are_distinct_sorted_and_start_with_the_best(name, options):
    system = make_system(name, **options)
    sents = sentences_of(EWT_DEV, 60)
    model = random_model(system, sents, seed=5)
    batch = collate([encode(s, model.vocabs) for s in sents])
    best = decode_batch(model, batch, DecodeSettings(beam_size=8, nbest=1))
    nbest = decode_batch(model, batch, DecodeSettings(beam_size=8, nbest=5))
    for one, many in zip(best, nbest):
        assert 1 <= len(many) <= 5
        assert many[0].heads == one[0].heads and many[0].labels == one[0].labels
        assert len({tuple(p.heads) for p in many}) == len(many)
        assert all(a.score >= b.score for a, b in zip(many, many[1:]))
    assert sum(len(m) for m in nbest) > 3 * len(nbest)  # real sentences have alternatives
    with pytest.raises(ValueError, match="nbest"):
        decode_batch(model, batch, DecodeSettings(beam_size=2, nbest=3).normalised())


def test_batches_respect_sentence_and_token_caps():
    sents = sentences_of(EWT_DEV, 300)
    vocabs = Vocabs.build(sents)
    examples = [encode(s, vocabs) for s in sents]
    plain = bucket_batches(examples, 32)
    capped = bucket_batches(examples, 32, random.Random(1), max_tokens=400)
    for batches in (plain, capped):
        assert sorted(id(e) for b in batches for e in b) == sorted(id(e) for e in examples)  # nothing lost
        assert all(len(b) <= 32 for b in batches)
    assert all(len(b) == 1 or len(b) * (max(len(e) for e in b) + 1) <= 400 for b in capped)
    assert [len(b) for b in plain] == [32] * (300 // 32) + [300 % 32]  # no token cap: as before


# Quadratic systems walk every word pair: a random model takes about n^2/4 steps on n words
# (Covington: 22,500 on 300 words took 28 s of the suite; 200 words, longer than any treebank
# sentence, take under half that).
LONG = {"covington": 200, "arceager_swap": 300}  # arc-eager + SWAP: SWAP is legal whenever s0 < b0


@pytest.mark.slow
@pytest.mark.parametrize("name", list(SYSTEMS))
def test_a_1000_word_sentence_parses(name):
    """One 1,000-word sentence (EWT dev sentences run together; fewer for a quadratic system, still
    longer than any treebank sentence), greedy and beam 2."""
    import io

    from nparse.io.conllu import read_text, tree_problem

    words = [w for s in dev_sentences()[:80] for w in s.forms[1:]][: LONG.get(name, 1000)]
    n = len(words)
    handle = io.StringIO(" ".join(words) + "\n")
    handle.name = "<long>"
    sent = read_text(handle)[0]
    assert len(sent) == n == LONG.get(name, 1000)
    system = make_system(name)
    model = random_model(system, dev_sentences()[:200])
    for beam in (1, 2):
        parses = decode_batch(model, collate([encode(sent, model.vocabs)]), DecodeSettings(beam_size=beam))
        assert tree_problem(parses[0][0].heads) is None and len(parses[0][0].heads) == n + 1


def test_local_scores_keep_greedy_and_are_log_probabilities():
    """Locally normalised scores change nothing for K=1 (argmax per step), and each row's legal
    transitions get log-probabilities summing to 1 at any temperature."""
    from nparse.decoding.beam import local_scores

    rng = np.random.default_rng(0)
    scores = rng.normal(size=(50, 5)) * 3
    legal = rng.random((50, 5)) < 0.6
    legal[0] = False  # a finished row: no legal transition, no NaN
    for t in (0.3, 1.0, 4.0):
        out = local_scores(scores, legal, t)
        assert np.isfinite(out).all() and (out <= 0).all()
        some = legal.any(1)
        assert np.allclose(np.where(legal, np.exp(out), 0).sum(1)[some], 1.0)
        assert (np.where(legal, out, -np.inf).argmax(1) == np.where(legal, scores, -np.inf).argmax(1))[some].all()
    system = make_system("twoplanar")
    sents = sentences_of(EWT_DEV, 80)
    model = random_model(system, sents, seed=2)
    batch = collate([encode(s, model.vocabs) for s in sents])
    raw = decode_batch(model, batch, DecodeSettings(beam_size=1, scores="raw"))
    local = decode_batch(model, batch, DecodeSettings(beam_size=1, scores="local", temperature=0.5))
    assert [p[0].heads for p in raw] == [p[0].heads for p in local]
    assert [p[0].steps for p in raw] == [p[0].steps for p in local]


def test_scores_auto_follow_how_the_model_was_trained():
    greedy_cfg = compose_config("decoder=beam")
    global_cfg = compose_config("+exp=beam_maxv", "trainer.global_scores=raw")
    local_cfg = compose_config("+exp=beam_maxv", "trainer.global_scores=local")
    base = DecodeSettings.from_config(greedy_cfg.decoder)
    assert base.beam_size == 8 and base.scores == "auto" and base.temperature is None
    greedy = base.for_model(greedy_cfg, {"temperature": 0.45})
    assert (greedy.scores, greedy.temperature, greedy.beam_temperature) == ("local", 0.45, 0.45)
    assert base.for_model(greedy_cfg, None).temperature == 1.0  # not fitted
    glob = base.for_model(global_cfg, {"temperature": 0.45})
    assert glob.scores == "raw" and glob.beam_temperature is None
    local = base.for_model(local_cfg, {"temperature": 0.45})
    assert (local.scores, local.beam_temperature) == ("local", 1.0)  # trained at T = 1
    forced = base.override(scores="local", temperature=2.0).for_model(global_cfg, {"temperature": 0.45})
    assert forced.beam_temperature == 2.0
    for bad, message in (({"scores": "sum"}, "decoder.scores=sum"), ({"temperature": 0.0}, "decoder.temperature=0.0")):
        with pytest.raises(ValueError, match=message):
            base.override(**bad)


def test_numpy_scores_equal_the_torch_scorer():
    """The decoder scores configurations in numpy on a float32 CPU table: the same numbers."""
    from nparse.models.scorer import TransitionScorer

    torch.manual_seed(0)
    scorer = TransitionScorer(in_dim=6, n_slots=4, hidden=5, n_actions=7)
    table = scorer.table(torch.randn(3, 9, 6), torch.tensor([9, 4, 7])).detach()
    rows = np.random.default_rng(0).integers(0, 3 * 9 + 1, size=(20, 4))
    with torch.no_grad():
        want = scorer.scores(table, torch.from_numpy(rows)).numpy()
    np.testing.assert_allclose(scorer.numpy_scores(table.numpy(), rows), want, rtol=1e-5, atol=1e-6)


def test_batch_size_counts_beam_items():
    """decoder.batch_size is beam items: a beam of K parses batch_size // K sentences together
    (at least one); greedy and mst parse batch_size sentences."""
    from nparse.decoding.settings import DecodeSettings

    assert DecodeSettings(batch_size=1024).normalised().sentences_per_batch == 1024
    assert DecodeSettings(batch_size=1024, beam_size=8).normalised().sentences_per_batch == 128
    assert DecodeSettings(batch_size=4, beam_size=8).normalised().sentences_per_batch == 1
    assert DecodeSettings(decoder="mst", batch_size=100).normalised().sentences_per_batch == 100


class ConstantScorer:
    """A scorer whose every transition score is one value (-inf or NaN: what an overflowing
    half-precision network could give)."""

    def __init__(self, n_actions: int, value: float):
        self.n_actions, self.value = n_actions, value

    def scores(self, table: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        return torch.full((len(index), self.n_actions), self.value)


@pytest.mark.parametrize("value", [float("-inf"), float("nan")])
def test_greedy_never_takes_an_illegal_transition_when_no_score_is_finite(value):
    """The first legal transition then, as the beam's selection takes it: every sentence still
    gets a complete tree (an argmax over masked scores had picked transition 0, legal or not)."""
    sents = sentences_of(EWT_DEV, 40)
    for name, options in VARIANTS:
        system = make_system(name, **options)
        model = random_model(system, sents)
        batch = collate([encode(s, model.vocabs) for s in sents])
        with torch.no_grad():
            table = model.scorer.table(model.encoder(batch))
        layout, lengths = Layout(system, batch.width), [len(s) for s in sents]
        scorer = ConstantScorer(model.scorer.n_actions, value)
        greedy = greedy_search(layout, scorer, table, lengths)
        for f, n in zip(greedy, lengths):
            assert len(f.heads) == 1 and len(f.heads[0]) == n + 1, name
        if value == float("-inf"):
            kbest = beam_search(layout, scorer, table, lengths, 1, greedy_shortcut=False)
            assert [f.heads for f in greedy] == [f.heads for f in kbest], name
