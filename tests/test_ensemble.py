"""Ensembles at parse time (``models/ensemble.py``): an ensemble of one parses exactly as its
model, identical members parse as one, the averaged scores are the mean of the members'
probabilities over the legal transitions, members reading other vocabularies read the input
with their own, and members that cannot be averaged are refused with the difference named."""

from __future__ import annotations

import copy
import dataclasses
import subprocess
import sys

import numpy as np
import pytest
import torch

import nparse
from nparse.api import Parser, checkpoint_paths
from nparse.io.conllu import read_conllu
from nparse.io.data import collate, encode
from nparse.io.vocab import Vocab
from nparse.models.ensemble import EnsembleModel
from nparse.models.parser import ParserModel
from nparse.paths import PROJECT_ROOT
from nparse.systems import make_system

from .conftest import EWT_DEV

pytestmark = pytest.mark.slow  # it trains or runs a command (pytest -m 'not slow' leaves it out)

SENTENCES = read_conllu(EWT_DEV)[:150]


def trees(parsed) -> list[tuple[list[int], list[str]]]:
    return [(s.heads, s.deprels) for s in parsed]


@pytest.fixture(scope="module")
def single(tiny_run) -> Parser:
    return nparse.load(tiny_run / "best.pt", device="cpu", threads=1, precision="fp32")


def member(parser: Parser, model: ParserModel, name: str) -> Parser:
    """Another parser around ``model`` with ``parser``'s training config."""
    other = Parser(model, parser.config, parser.calibration)
    other.name = name
    return other


def test_an_ensemble_of_one_parses_exactly_as_its_model(tiny_run, single):
    ensemble = nparse.load([tiny_run / "best.pt"], device="cpu", threads=1, precision="fp32")
    assert isinstance(ensemble.model, EnsembleModel) and len(ensemble.model) == 1
    assert trees(ensemble.parse(SENTENCES)) == trees(single.parse(SENTENCES))
    for beam in (1, 4):  # heads, labels and derivation scores of the 3 best trees
        mine = ensemble.parse_nbest(SENTENCES, beam_size=beam, nbest=min(beam, 3))
        theirs = single.parse_nbest(SENTENCES, beam_size=beam, nbest=min(beam, 3))
        assert [[(p.heads, p.labels, p.score) for p in ps] for ps in mine] == [
            [(p.heads, p.labels, p.score) for p in ps] for ps in theirs
        ]
        raw = ensemble.parse_nbest(SENTENCES, beam_size=beam, scores="raw")
        assert [p[0].heads for p in raw] == [
            p[0].heads for p in single.parse_nbest(SENTENCES, beam_size=beam, scores="raw")
        ]


def test_identical_members_parse_as_their_model(tiny_run, single):
    """The mean of equal probabilities is that probability: two copies parse as one, greedily
    and in a beam of local scores."""
    ensemble = nparse.load(f"{tiny_run / 'best.pt'},{tiny_run / 'best.pt'}", device="cpu", threads=1, precision="fp32")
    assert len(ensemble.model) == 2
    assert trees(ensemble.parse(SENTENCES)) == trees(single.parse(SENTENCES))
    assert trees(ensemble.parse(SENTENCES, beam_size=4)) == trees(single.parse(SENTENCES, beam_size=4))


def test_a_temperature_in_the_members_config_is_applied_once(single):
    """A member's own temperature (here its config's decoder.temperature) is applied to its
    scores, and not again to the averaged ones: two copies still parse as one in a beam."""
    config = copy.deepcopy(single.config)
    config.decoder.temperature = 3.0
    hot = member(single, single.model, "hot")
    hot.config, hot.settings = config, Parser(single.model, config, single.calibration).settings
    assert hot.settings.temperature == 3.0
    ensemble = Parser.ensemble([hot, member(hot, single.model, "hot2")])
    assert ensemble.model.scorer.temperatures == [3.0, 3.0] and ensemble.settings.temperature == 1.0
    mine = ensemble.parse_nbest(SENTENCES[:60], beam_size=4, nbest=2)
    theirs = Parser(single.model, config, single.calibration).parse_nbest(SENTENCES[:60], beam_size=4, nbest=2)
    assert [[p.heads for p in ps] for ps in mine] == [[p.heads for p in ps] for ps in theirs]
    assert np.allclose([p.score for ps in mine for p in ps], [p.score for ps in theirs for p in ps], atol=1e-6)
    with pytest.raises(ValueError, match="decoder=mst: an ensemble averages transition scores"):
        ensemble.parse_nbest(SENTENCES[:2], decoder="mst")
    with pytest.raises(ValueError, match="decoder=mst needs a model with the first-order factor"):
        Parser.ensemble([hot]).parse_nbest(SENTENCES[:2], decoder="mst")  # one member: its own reason


def test_a_member_decoding_raw_scores_is_averaged_at_its_fitted_temperature(single):
    """Raw scores have no scale of their own: a member whose config decodes them is taken at the
    temperature fitted on dev (as a distillation teacher is), not at 1, so that it cannot
    outvote the others by the size of its margins."""
    config = copy.deepcopy(single.config)
    config.decoder.scores = "raw"
    calibration = {**(single.calibration or {}), "temperature": 0.6}
    raw = Parser(single.model, config, calibration)
    raw.name = "raw"
    assert raw.settings.scores == "raw" and raw.settings.temperature == 1.0  # alone: raw scores
    ensemble = Parser.ensemble([raw, member(single, single.model, "local")])
    assert ensemble.model.scorer.temperatures[0] == 0.6


def test_averaging_stays_in_the_log_domain():
    """A transition 2,000 below the best in every member has a probability below float64's
    range: its averaged log-probability is still finite (a distillation target must be)."""
    from nparse.models.ensemble import _log_softmax, log_mean_exp

    scores = np.array([[0.0, -2000.0, 5.0]])
    legal = np.array([[True, True, False]])
    logp = _log_softmax(scores, legal)
    assert np.isfinite(logp[legal]).all() and logp[0, 2] == -np.inf
    mean = log_mean_exp([logp, _log_softmax(scores - 1.0, legal)])
    assert np.allclose(mean[legal], logp[legal])


def test_the_scores_are_the_log_of_the_members_mean_legal_probabilities(single):
    torch.manual_seed(0)
    small = ParserModel(
        single.model.vocabs, single.model.system, dataclasses.replace(single.model.options, hidden=40)
    ).eval()
    models = [single.model, small]
    ensemble = EnsembleModel(models, [1.5, 0.7])
    batch = collate([encode(s, single.model.vocabs, labels=False) for s in SENTENCES[:8]])
    with torch.no_grad():
        vectors, table = ensemble.encode(batch)
        tables = [m.encode(batch)[1] for m in models]
    assert table is not None and table.shape[-1] == single.model.scorer.hidden + 40
    rng = np.random.default_rng(0)
    rows = rng.integers(0, table.shape[0], size=(30, single.model.system.n_slots))
    legal = rng.random((30, ensemble.scorer.n_actions)) < 0.6
    legal[:, 0] = True
    expected = np.zeros(legal.shape)
    for model, tab, temperature in zip(models, tables, [1.5, 0.7]):
        with torch.no_grad():
            scores = model.scorer.scores(tab, torch.from_numpy(rows)).double().numpy() / temperature
        e = np.where(legal, np.exp(scores - scores.max(1, keepdims=True)), 0.0)
        expected += e / e.sum(1, keepdims=True) / 2
    got = ensemble.scorer.legal_scores(table, rows, legal)
    assert np.allclose(np.exp(got)[legal], expected[legal], atol=1e-6)
    assert np.all(got[~legal] == 0)
    with torch.no_grad():  # the torch path (GPU tables) gathers the same rows
        assert np.allclose(
            ensemble.scorer._hidden(table, rows, False).numpy(), ensemble.scorer._hidden(table, rows, True), atol=1e-5
        )
        heads, deps = np.array([0, 1, 2]), np.array([1, 2, 3])
        labels = sum(torch.softmax(m.label_scores(v, heads, deps).double(), -1) for m, v in zip(models, vectors)) / 2
        assert torch.allclose(ensemble.label_scores(vectors, heads, deps).exp(), labels)


def test_an_ensemble_parses_from_compact_rows_as_from_padded_ones(single, monkeypatch):
    """Ensembles decode without padding too (every member reads the same words): the parses,
    scores and labels of two different members equal those of the padded layout."""
    from nparse.decoding import decode

    other = copy.deepcopy(single.model)
    with torch.no_grad():
        for p in other.parameters():
            p.add_(0.05 * torch.randn_like(p))
    ensemble = Parser.ensemble([single, member(single, other, "other")])
    assert decode.compact_rows(ensemble.model)
    for beam in (1, 4):
        compact = ensemble.parse_nbest(SENTENCES, beam_size=beam, nbest=min(beam, 3))
        with monkeypatch.context() as m:
            m.setattr(decode, "compact_rows", lambda model: False)
            padded = ensemble.parse_nbest(SENTENCES, beam_size=beam, nbest=min(beam, 3))
        assert compact == padded


def with_permuted_vocab(model: ParserModel, table: str, order: list[int]) -> ParserModel:
    """A copy of ``model`` whose vocabulary ``table`` lists its items in ``order`` (the caller
    permutes the matching weights)."""
    old = getattr(model.vocabs, table)
    vocab = Vocab()
    vocab.itos, vocab.counts = [old.itos[i] for i in order], [old.counts[i] for i in order]
    vocab.stoi = {w: i for i, w in enumerate(vocab.itos)}
    vocabs = copy.deepcopy(model.vocabs)
    setattr(vocabs, table, vocab)
    permuted = copy.deepcopy(model)
    permuted.vocabs = permuted.encoder.vocabs = vocabs
    return permuted


def test_a_member_with_other_word_ids_reads_the_input_with_its_own(single):
    """The same network with its word vocabulary in another order (and its embedding rows
    permuted alike) computes the same vectors only if it reads the words with its own ids."""
    model = single.model
    old = model.vocabs.words
    order = list(range(3)) + list(range(len(old.itos) - 1, 2, -1))
    permuted = with_permuted_vocab(model, "words", order)
    with torch.no_grad():
        permuted.encoder.words.weight.copy_(model.encoder.words.weight[order])
    ensemble = Parser.ensemble([single, member(single, permuted, "permuted")])
    assert ensemble.model.own_inputs == [False, True]
    assert trees(ensemble.parse(SENTENCES)) == trees(single.parse(SENTENCES))


def test_a_member_with_its_labels_in_another_order_is_averaged_label_by_label(single):
    """Labels are sorted by frequency, so a member trained on another part of a treebank may hold
    the same labels in another order: its label scores are reordered before averaging, and two
    copies of one network, one with its labels (and labeller rows) permuted, parse as that one."""
    model = single.model
    order = list(range(len(model.vocabs.labels.itos)))[::-1]
    permuted = with_permuted_vocab(model, "labels", order)
    with torch.no_grad():
        permuted.labeler.out.weight.copy_(model.labeler.out.weight[order])
        permuted.labeler.out.bias.copy_(model.labeler.out.bias[order])
    alone = Parser.ensemble([member(single, permuted, "permuted")])
    assert trees(alone.parse(SENTENCES[:20])) == trees(single.parse(SENTENCES[:20]))  # read by its own names
    ensemble = Parser.ensemble([single, member(single, permuted, "permuted")])
    assert trees(ensemble.parse(SENTENCES)) == trees(single.parse(SENTENCES))
    unordered = copy.deepcopy(permuted)
    with torch.no_grad():  # the same order of names with the rows not permuted: other labels
        unordered.labeler.out.weight.copy_(model.labeler.out.weight)
        unordered.labeler.out.bias.copy_(model.labeler.out.bias)
    mixed = Parser.ensemble([single, member(single, unordered, "unordered")])
    assert trees(mixed.parse(SENTENCES)) != trees(single.parse(SENTENCES))


def test_members_that_cannot_be_averaged_are_refused_naming_the_difference(single):
    model = single.model
    eager = member(single, ParserModel(model.vocabs, make_system("arceager"), model.options), "eager")
    eager.config = None  # a model built in code: named by its system's description
    with pytest.raises(
        ValueError,
        match=r"ensemble member eager differs from the first member .*best\.pt: transition system arceager\(.*against archybrid\(",
    ):
        Parser.ensemble([single, eager])
    vocabs = copy.deepcopy(model.vocabs)
    vocabs.labels = Vocab.build(list(model.vocabs.labels.itos) + ["made:up"], specials=False)
    relabelled = ParserModel(vocabs, model.system, model.options)
    with pytest.raises(ValueError, match=r"member relabelled.*label set.*1 only in this one \(made:up\)"):
        Parser.ensemble([single, member(single, relabelled, "relabelled")])
    tagging = ParserModel(model.vocabs, model.system, dataclasses.replace(model.options, tagger=True, upos_dim=0))
    with pytest.raises(ValueError, match=r"tagging predicts UPOS tags and .* does not"):
        Parser.ensemble([single, member(single, tagging, "tagging")])
    with pytest.raises(ValueError, match="not of ensembles"):
        Parser.ensemble([Parser.ensemble([single])])


def test_checkpoint_paths_split_on_commas(tmp_path):
    odd = tmp_path / "a,b.pt"
    odd.write_bytes(b"")
    assert checkpoint_paths(str(odd)) == [str(odd)]
    x, y = tmp_path / "x.pt", tmp_path / "y.pt"
    x.write_bytes(b"")
    y.write_bytes(b"")
    assert checkpoint_paths(f"{x}, {y}") == [str(x), str(y)]
    with pytest.raises(ValueError, match="empty checkpoint path"):
        checkpoint_paths("x.pt,,y.pt")
    # With others, a path holding a comma is split: the error names the piece and says why.
    with pytest.raises(
        FileNotFoundError, match=r"checkpoint not found: .*/a \(model=.* was split at its commas into 3"
    ):
        checkpoint_paths(f"{odd},{x}")
    assert checkpoint_paths([odd, x]) == [odd, x]  # a list keeps it whole


def test_the_parse_command_parses_with_an_ensemble(tiny_run, tmp_path):
    one, two = tmp_path / "one.conllu", tmp_path / "two.conllu"
    ck = tiny_run / "best.pt"
    for model, out in ((str(ck), one), (f"{ck},{ck}", two)):
        proc = subprocess.run(
            [sys.executable, "-m", "nparse.parse", f"model={model}", f"input={EWT_DEV}", f"output={out}", "threads=1"],
            cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr[-2000:]
    assert one.read_bytes() == two.read_bytes()
    assert "ensemble of 2" in proc.stderr


def test_a_student_can_learn_from_an_ensemble(tiny_run):
    """trainer.distill_from=ck1,ck2: the teacher is the ensemble; two copies teach what one does."""
    import random

    from nparse.training.distill import Teacher
    from nparse.training.local import train_loop
    from nparse.systems import make_oracle
    from nparse.systems.adapters.arrays import Layout

    ck = tiny_run / "best.pt"
    options = dataclasses.asdict(nparse.load(ck, device="cpu").config.system)  # type: ignore[union-attr]
    one = Teacher(ck, options, torch.device("cpu"))
    two = Teacher([ck, ck], options, torch.device("cpu"))
    assert isinstance(two.model, EnsembleModel) and two.temperature == one.temperature
    model = one.model
    sents = SENTENCES[:16]
    batch = collate([encode(s, model.vocabs) for s in sents])
    oracle = make_oracle(model.system, "dynamic")
    for e in batch.examples:
        e.gold = oracle.prepare(e.sent.heads)
    with torch.no_grad():
        _, table = model.encode(batch)
    steps = train_loop(Layout(model.system, batch.width), oracle, model.scorer, table, [e.gold for e in batch.examples],
                       [len(e) for e in batch.examples], 0.0, random.Random(0))  # fmt: skip
    legal = torch.tensor(steps.legal)
    single, joint = one.log_probs(one.table(batch), steps), two.log_probs(two.table(batch), steps)
    assert torch.allclose(single[legal], joint[legal], atol=1e-5)


def test_a_teacher_without_a_fitted_temperature_is_named(tiny_run, tmp_path, caplog):
    """A checkpoint with no calibration (a run still training) teaches at temperature 1: said."""
    from nparse.training.distill import Teacher

    state = torch.load(tiny_run / "best.pt", weights_only=True)
    state.pop("calibration", None)
    bare = tmp_path / "bare.pt"
    torch.save(state, bare)
    options = dataclasses.asdict(nparse.load(bare, device="cpu").config.system)  # type: ignore[union-attr]
    with caplog.at_level("WARNING", logger="nparse.train"):
        assert Teacher(bare, options, torch.device("cpu")).temperature == 1.0
    assert f"{bare} has no fitted temperature" in caplog.text
    caplog.clear()
    with caplog.at_level("WARNING", logger="nparse.train"):
        Teacher(tiny_run / "best.pt", options, torch.device("cpu"))
    assert "no fitted temperature" not in caplog.text


def test_a_parser_and_an_ensemble_meet_the_declared_network_interface(tiny_run, single):
    """The decoders read a network only through ``decoding.scoring.Network`` and the scorer
    capability protocols, never through the model classes."""
    from nparse.decoding.scoring import LegalScores, Network, NumpyScores

    ensemble = nparse.load([tiny_run / "best.pt", tiny_run / "best.pt"], device="cpu", threads=1, precision="fp32")
    declared = [name for name in vars(Network) if not name.startswith("_")]
    assert {"encode", "layout", "scorer", "members", "completion", "label_scores"} <= set(declared)
    for model in (single.model, ensemble.model):
        missing = [name for name in declared if not hasattr(model, name)]
        assert not missing, (type(model).__name__, missing)
    assert single.model.members == (single.model,) and len(ensemble.model.members) == 2
    assert ensemble.model.completion is None and not ensemble.model.has_arc_factor
    assert isinstance(ensemble.model.scorer, LegalScores) and not isinstance(single.model.scorer, LegalScores)
    assert isinstance(single.model.scorer, NumpyScores)
