"""Issue 55: the joint UD analysis under the parser (model.analysis=true): XPOS, FEATS and lemmas
predicted from the shared BiLSTM, learned from the training file, checked and written out."""

from __future__ import annotations

import io

import pytest
import torch
from torch.nn import functional as F

from nparse import parse as parse_cli
from nparse.checkpoint import load, model_from_state
from nparse.evaluate import main as eval_main
from nparse.io.conllu import CoNLLUError, build_sentence, read_conllu, read_text
from nparse.io.data import Vocabs, collate, encode, lemma_rules
from nparse.io.lemma_rules import apply_rule, rule_for
from nparse.models.parser import ParserModel
from nparse.systems import make_system
from nparse.training.losses import tag_loss

from .conftest import EWT_DEV, model_config, run_train, treebank_files

pytestmark = pytest.mark.slow  # it trains or runs a command (pytest -m 'not slow' leaves it out)

OPTIONS = dict(word_dim=20, upos_dim=0, xpos_dim=0, char_dim=8, char_hidden=10, lstm_dim=16, lstm_layers=1,
               lstm_dropout=0.0, dropout=0.0, word_dropout=0.0, hidden=10, label_hidden=10, tagger=True,
               tagger_hidden=12, analysis=True)  # fmt: skip


def test_every_training_lemma_is_rebuilt_by_its_rule():
    """The rule learned for every (form, lemma) of the bundled and shared training files gives the
    lemma back when applied (``apply_rule``, independent of how ``rule_for`` chose it), and rules
    generalise: one class for one inflection."""
    files = [f for f in treebank_files("train")]
    assert files
    checked = 0
    for path in files:
        for sent in read_conllu(path):
            for form, lemma, rule in zip(sent.forms[1:], sent.lemmas[1:], lemma_rules(sent)[1:]):
                if lemma != "_":
                    assert apply_rule(form, rule) == lemma, (path.name, form, lemma, rule)
                    checked += 1
    assert checked > 20_000
    assert rule_for("walked", "walk") == rule_for("talked", "talk") == "L|0||2|"
    assert rule_for("The", "the") == rule_for("the", "the")
    assert rule_for("went", "go") == "=go"
    assert apply_rule("Paris", rule_for("London", "London")) == "Paris"
    assert apply_rule("a", "L|0||2|") is None  # too short for the rule


def test_a_broken_rule_does_not_rebuild_the_lemma():
    """The check above can fail: a rule cut one character short gives another lemma."""
    rule = rule_for("walked", "walk")
    casing, a, prefix, b, suffix = rule.split("|")
    assert apply_rule("walked", "|".join([casing, a, prefix, str(int(b) - 1), suffix])) != "walk"


def sentence(path: str, feats: str = "_", lemma: str = "cat") -> list[str]:
    return [f"1\tcats\t{lemma}\tNOUN\tNNS\t{feats}\t0\troot\t_\t_", "2\tsleep\tsleep\tVERB\tVBP\t_\t1\tdep\t_\t_"]


@pytest.mark.parametrize(
    "feats,lemma,message",
    [
        ("Number-Plur", "cat", "FEATS 'Number-Plur': 'Number-Plur' is not Name=Value"),
        ("Number=Plur|Case=Nom", "cat", "not sorted by name"),
        ("_", "x" * 80, "adds 80 characters to FORM 'cats'"),
    ],
)  # fmt: skip
def test_bad_feats_and_overlong_lemmas_are_refused_at_their_line(feats, lemma, message):
    good = build_sentence("train.conllu", 1, sentence("train.conllu"), False)
    bad = build_sentence("train.conllu", 4, ["# sent_id = 2", *sentence("train.conllu", feats, lemma)], False)
    Vocabs.build([good], morphology=True)
    with pytest.raises(CoNLLUError, match=f"^train.conllu:5: .*{message}"):
        Vocabs.build([good, bad], morphology=True)


def test_analysis_loss_adds_the_cross_entropy_of_each_column():
    """tag_loss of an analysis model is the UPOS loss plus XPOS, FEATS and lemma rules, each over
    the words that have a known value (a lemma '_' counts nothing)."""
    sents = read_conllu(EWT_DEV)[:6]
    sents[1].lemmas[2] = "_"
    vocabs = Vocabs.build(sents, morphology=True)
    torch.manual_seed(0)
    model = ParserModel(vocabs, make_system("archybrid"), model_config(**OPTIONS))
    assert model.analyser is not None
    batch = collate([encode(s, vocabs) for s in sents])
    vectors = model.encoder(batch)
    expected, counted = torch.tensor(0.0), 0
    for b, s in enumerate(sents):
        rules = lemma_rules(s)
        for i in range(1, len(s) + 1):
            v = vectors[b, i][None]
            for head, table, value in (
                (model.tagger, vocabs.upos, s.upos[i]), (model.analyser["xpos"], vocabs.xpos, s.xpos[i]),
                (model.analyser["feats"], vocabs.feats, s.feats[i]), (model.analyser["lemmas"], vocabs.lemmas, rules[i]),
            ):  # fmt: skip
                if value == "_" and table is vocabs.lemmas:
                    continue
                expected = expected + F.cross_entropy(head(v), torch.tensor([table.index(value)]))
                counted += 1
    assert counted == 4 * sum(len(s) for s in sents) - 1
    assert torch.allclose(tag_loss(model, vectors, batch), expected, atol=1e-3)


def test_analysis_needs_the_parser_not_to_read_what_it_predicts():
    vocabs = Vocabs.build(read_conllu(EWT_DEV)[:3], morphology=True)
    with pytest.raises(ValueError, match="xpos_dim=0 model.feats_dim=0"):
        ParserModel(vocabs, make_system("archybrid"), model_config(**{**OPTIONS, "xpos_dim": 10}))


def test_gold_feats_are_an_input_option():
    """model.feats_dim reads the FEATS column as an embedding (research setting): a changed FEATS
    changes the vectors, and the model says it reads FEATS."""
    sents = read_conllu(EWT_DEV)[:4]
    vocabs = Vocabs.build(sents, morphology=True)
    options = {**OPTIONS, "analysis": False, "tagger": False, "upos_dim": 5, "feats_dim": 7}
    model = ParserModel(vocabs, make_system("archybrid"), model_config(**options)).eval()
    assert model.pos_inputs == ("UPOS", "FEATS")
    before = model.encoder(collate([encode(s, vocabs, labels=False) for s in sents]))
    sents[0].feats[1] = "Number=Plur" if sents[0].feats[1] != "Number=Plur" else "_"
    after = model.encoder(collate([encode(s, vocabs, labels=False) for s in sents]))
    assert not torch.equal(before[0], after[0]) and torch.equal(before[1:], after[1:])


def test_the_ud_preset_writes_every_column_and_scores_them(tmp_path, capsys):
    """One short run of +exp=archybrid_dynamic_ud (segmenter off, for time) parses untagged
    CoNLL-U into complete CoNLL-U: UPOS, XPOS, FEATS and lemmas predicted (no '_' left where the
    training file has values), and nparse-eval scores every column against the gold file. With
    model.suffix_dim (off in the preset; here so that one run checks it too): the checkpoint
    keeps the trained suffix table and the loaded model reads it."""
    run = tmp_path / "run"
    gold = tmp_path / "gold.conllu"
    gold.write_text("".join(c + "\n\n" for c in EWT_DEV.read_text(encoding="utf-8").split("\n\n")[:40] if c.strip()),
                    encoding="utf-8")  # fmt: skip
    run_train(run, "+exp=archybrid_dynamic_ud", "model.segmenter=false", "data.max_train_sentences=300",
              "trainer.epochs=1", "trainer.final_decay=1", f"data.dev={gold}", "data.test=null", "trainer.threads=1",
              "model.suffix_dim=4")  # fmt: skip
    state = load(run / "best.pt")
    table = model_from_state(state, torch.device("cpu")).encoder.suffixes.table.weight
    assert table.shape == (16384, 4) and table.abs().sum() > 0  # trained: the rows start at zero
    torch.testing.assert_close(table, state["model"]["encoder.suffixes.table.weight"], rtol=0, atol=0)
    bare = tmp_path / "bare.conllu"
    lines = []
    for line in gold.read_text(encoding="utf-8").splitlines():
        cols = line.split("\t")
        if len(cols) == 10 and cols[0].isdigit():
            cols[2:6] = ["_"] * 4
            cols[6:8] = ["_", "_"]
        lines.append("\t".join(cols))
    bare.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "out.conllu"
    assert parse_cli.main([f"model={run / 'best.pt'}", "device=cpu", f"input={bare}", f"output={out}"]) == 0
    words = [line.split("\t") for line in out.read_text(encoding="utf-8").splitlines() if line[:1].isdigit()]
    words = [w for w in words if w[0].isdigit()]
    assert words and all(w[2] != "_" and w[3] != "_" and w[4] != "_" for w in words)
    known = {f for s in read_conllu(EWT_DEV) for f in s.feats[1:]}  # one epoch of 300 sentences: often "_"
    assert all(w[5] in known for w in words)
    capsys.readouterr()
    assert eval_main([f"gold={gold}", f"pred={out}", "json=true"]) == 0
    import json

    scores = json.loads(capsys.readouterr().out)["conll18"]
    assert set(scores) >= {"xpos", "ufeats", "alltags", "lemmas", "clas", "mlas", "blex"}
    assert scores["mlas"] <= scores["clas"] and scores["lemmas"] > 50.0 and scores["ufeats"] > 20.0


def test_taggers_read_the_lower_layer_with_tag_layer():
    """model.tag_layer=1: the taggers read the first BiLSTM layer (their scores do not move when
    the layer above changes, the parser's table does), and training's padded BiLSTM gives the
    vectors that parsing's packed one gives."""
    sents = read_conllu(EWT_DEV)[:8]
    vocabs = Vocabs.build(sents, morphology=True)
    torch.manual_seed(0)
    options = {**OPTIONS, "lstm_layers": 2, "tag_layer": 1}
    model = ParserModel(vocabs, make_system("archybrid"), model_config(**options)).eval()
    assert model.encoder.upper is not None
    batch = collate([encode(s, vocabs) for s in sents])
    with torch.no_grad():
        vectors, table = model.encode(batch)
        assert vectors.shape[-1] == model.encoder.out_dim + model.encoder.tag_dim
        tags = model.tagger(vectors)
        lemmas = model.analyser["lemmas"](vectors)
        for p in model.encoder.upper.parameters():
            p.add_(0.5)
        moved, moved_table = model.encode(batch)
    assert torch.equal(tags, model.tagger(moved)) and torch.equal(lemmas, model.analyser["lemmas"](moved))
    assert not torch.allclose(table, moved_table)
    padded = model.encoder(batch)  # gradients on, on CPU: training's padded BiLSTM
    real = batch.real_mask()
    assert torch.allclose(padded[real], moved[real], atol=1e-5)
    with pytest.raises(ValueError, match="model.tag_layer=3"):
        ParserModel(vocabs, make_system("archybrid"), model_config(**{**options, "tag_layer": 3}))
    top = ParserModel(vocabs, make_system("archybrid"), model_config(**{**options, "tag_layer": 2}))
    assert top.encoder.upper is None  # the top layer, as with 0 (so model=fast with its one layer takes tag_layer=1)


def test_parser_reads_the_tag_layer_beside_the_top_one():
    """model.parser_reads_tag_layer: the parser's table and labels move when only the taggers'
    lower layer changes (without the option they read the top layer, which also moves, so the
    check is on the columns: the lower layer's vectors reach the scorer); without a layer above
    the taggers' the option is refused by name."""
    sents = read_conllu(EWT_DEV)[:8]
    vocabs = Vocabs.build(sents, morphology=True)
    torch.manual_seed(0)
    options = {**OPTIONS, "lstm_layers": 2, "tag_layer": 1, "parser_reads_tag_layer": True}
    model = ParserModel(vocabs, make_system("archybrid"), model_config(**options)).eval()
    plain = ParserModel(vocabs, make_system("archybrid"), model_config(**{**options, "parser_reads_tag_layer": False}))
    width = model.encoder.out_dim + model.encoder.tag_dim
    assert model.scorer.first.in_features == 2 * plain.scorer.first.in_features
    batch = collate([encode(s, vocabs) for s in sents])
    with torch.no_grad():
        vectors, _ = model.encode(batch)
        assert vectors.shape[-1] == width and model.parser_part(vectors).shape[-1] == width
        assert plain.parser_part(vectors).shape[-1] == plain.encoder.out_dim
        lower = vectors.clone()
        lower[..., plain.encoder.out_dim :] = 0.0  # only the taggers' layer changes
        table = model.scorer.table(model.parser_part(vectors), batch.lengths)
        moved = model.scorer.table(model.parser_part(lower), batch.lengths)
        unmoved = plain.scorer.table(plain.parser_part(lower), batch.lengths)
    assert not torch.allclose(table, moved)
    assert torch.equal(unmoved, plain.scorer.table(plain.parser_part(vectors), batch.lengths))
    with pytest.raises(ValueError, match="model.parser_reads_tag_layer: needs model.tag_layer"):
        ParserModel(vocabs, make_system("archybrid"), model_config(**{**options, "tag_layer": 0}))


def test_tag_feed_gives_the_upper_layers_the_predicted_tags():
    """model.tag_feed: the layers above the taggers read their predicted distributions (UPOS,
    XPOS, FEATS), so changing the FEATS tagger moves the parser's table, and the parser's loss
    reaches the taggers; training's padded BiLSTM and parsing's packed one agree; settings
    without layers above the taggers, or without taggers, are refused by name."""
    sents = read_conllu(EWT_DEV)[:8]
    vocabs = Vocabs.build(sents, morphology=True)
    torch.manual_seed(0)
    options = {**OPTIONS, "lstm_layers": 2, "tag_layer": 1, "tag_feed": 6}
    model = ParserModel(vocabs, make_system("archybrid"), model_config(**options)).eval()
    assert model.feed_tables is not None and list(model.feed_tables) == ["upos", "xpos", "feats"]
    assert model.encoder.upper is not None and model.encoder.upper.input_size == 2 * 16 + 3 * 6
    batch = collate([encode(s, vocabs) for s in sents])
    with torch.no_grad():
        _, table = model.encode(batch)
        model.analyser["feats"].out.bias.add_(torch.randn_like(model.analyser["feats"].out.bias) * 5)
        _, moved = model.encode(batch)
    assert not torch.allclose(table, moved)
    vectors = model.encoder(batch, feed=model.feed)  # gradients on, on CPU: training's padded BiLSTM
    with torch.no_grad():
        packed, _ = model.encode(batch)  # parsing's packed BiLSTM
    real = batch.real_mask()
    assert torch.allclose(vectors[real], packed[real], atol=1e-5)
    model.parser_part(vectors).sum().backward()
    assert model.tagger.hidden.weight.grad is not None and model.tagger.hidden.weight.grad.abs().sum() > 0
    plain = ParserModel(vocabs, make_system("archybrid"), model_config(**{**options, "tag_feed": 0}))
    assert plain.feed_tables is None and plain.encoder.upper.input_size == 2 * 16
    with pytest.raises(ValueError, match="model.tag_feed: needs model.tag_layer"):
        ParserModel(vocabs, make_system("archybrid"), model_config(**{**options, "tag_layer": 0}))
    with pytest.raises(ValueError, match="model.tag_feed: needs model.tagger"):
        ParserModel(vocabs, make_system("archybrid"), model_config(**{**options, "tagger": False, "analysis": False}))


def test_an_ensemble_of_analysis_models_writes_the_members_mean_analysis(tmp_path):
    """Two analysis models parse as one ensemble: XPOS, FEATS and lemma rules from the members'
    mean probabilities (one member alone gives its own), and a member without the analysis is
    refused, named."""
    import nparse
    from nparse.testing.fuzz import untrained_checkpoint

    from nparse import checkpoint

    sents = read_conllu(EWT_DEV)[:200]
    a = untrained_checkpoint(sents, (tmp_path / "a").resolve(), ("+exp=archybrid_dynamic_ud",))
    state = checkpoint.load(a)
    generator = torch.Generator().manual_seed(3)
    for key, value in state["model"].items():
        if key.startswith("analyser."):  # another member: the same network with other analysis weights
            state["model"][key] = value + torch.randn(value.shape, generator=generator)
    b = tmp_path / "b.pt"
    checkpoint.save_atomic(state, b)
    plain = tmp_path / "c"
    plain.mkdir()
    c = untrained_checkpoint(sents, plain, ("+exp=archybrid_dynamic_tagger",))
    parses = {}
    for name, members in (("a", [a]), ("b", [b]), ("ab", [a, b])):
        parses[name] = [
            p[0].analysis for p in nparse.load(members, device="cpu", precision="fp32").parse_nbest(sents[:20])
        ]
    assert parses["a"] == [
        p[0].analysis for p in nparse.load(a, device="cpu", precision="fp32").parse_nbest(sents[:20])
    ]
    assert parses["a"] != parses["b"] and parses["ab"] not in (parses["a"], parses["b"])
    with pytest.raises(ValueError, match="predicts XPOS, FEATS and lemmas"):
        nparse.load([a, c], device="cpu", precision="fp32")


def test_factored_feats_learn_and_compose_feature_by_feature():
    """model.feats_factored: the loss is each feature's cross-entropy over its own columns, and
    decoding composes the best value of each feature into a sorted FEATS value, which may be a
    combination never seen whole in training."""
    from nparse.decoding.decode import factored_feats
    from nparse.io.feats import FeatureTables
    from nparse.training.losses import feature_loss

    tables = FeatureTables.build(["Case=Nom|Number=Sing", "Number=Plur", "Case=Acc", "_"])
    assert tables.names == ["Case", "Number"] and tables.offsets == [0, 3, 6]
    scores = torch.full((2, 6), -5.0)
    scores[0, [tables.index["Case"]["Acc"], tables.offsets[1] + tables.index["Number"]["Plur"]]] = 5.0
    scores[1, [0, 3]] = 5.0  # nothing set
    assert factored_feats(scores, tables) == ["Case=Acc|Number=Plur", "_"]  # Case=Acc|Number=Plur never seen whole
    assert tables.gold("Case=Acc|Number=Plur") == [1, 1] and tables.gold("Case=Dat")[0] == FeatureTables.IGNORE
    sents = read_conllu(EWT_DEV)[:6]
    vocabs = Vocabs.build(sents, morphology=True)
    torch.manual_seed(0)
    model = ParserModel(vocabs, make_system("archybrid"), model_config(**{**OPTIONS, "feats_factored": True}))
    batch = collate([encode(s, vocabs) for s in sents])
    vectors = model.encoder(batch)
    expected = torch.tensor(0.0)
    offsets = vocabs.features.offsets
    for b, s in enumerate(sents):
        for i in range(1, len(s) + 1):
            row = model.analyser["feats"](vectors[b, i])
            for k, value in enumerate(vocabs.features.gold(s.feats[i])):
                part = row[offsets[k] : offsets[k + 1]]
                expected = expected - torch.log_softmax(part, -1)[value]
    assert torch.allclose(feature_loss(model, vectors, batch), expected, atol=1e-3)


def test_the_training_lexicon_gives_seen_words_their_lemma():
    """Vocabs.lexicon: every (form, UPOS) of the training file -> the rule of its most frequent
    lemma, kept through a checkpoint; decoding takes it over the classifier's rule for seen words
    (predicted UPOS where the model tags) and leaves unseen ones; without a lexicon (an older
    checkpoint) nothing changes."""
    from nparse.decoding.decode import Parse, lemma_of, lexicon_lemmas

    sents = read_conllu(EWT_DEV)[:300]
    vocabs = Vocabs.build(sents, morphology=True)
    assert Vocabs.from_state(vocabs.state_dict()).lexicon == vocabs.lexicon
    seen = sents[0]
    for i in range(1, len(seen.forms)):
        assert lemma_of(seen.forms[i], vocabs.lexicon[f"{seen.forms[i]}\t{seen.upos[i]}"]) in {
            s.lemmas[j]
            for s in sents
            for j in range(1, len(s.forms))
            if (s.forms[j], s.upos[j]) == (seen.forms[i], seen.upos[i])
        }
    unseen = read_text(io.StringIO("Zqxv ran\n"))[0]
    examples = [encode(seen, vocabs), encode(unseen, vocabs)]
    wrong = ["<root>"] + ["d1"] * (len(seen.forms) - 1)  # "drop one character": a wrong rule for most words
    parses = [
        [Parse([], [], 0.0, None, ([], [], list(wrong)))],
        [Parse([], [], 0.0, ["<root>", "PROPN", "VERB"], ([], [], ["<root>", "d1", "d1"]))],
    ]
    lexicon_lemmas({}, examples, parses)
    assert parses[0][0].analysis[2] == wrong  # no lexicon: the rules as predicted
    lexicon_lemmas(vocabs.lexicon, examples, parses)
    got = [lemma_of(f, r) for f, r in zip(seen.forms[1:], parses[0][0].analysis[2][1:])]
    assert got == [lemma_of(f, vocabs.lexicon[f"{f}\t{u}"]) for f, u in zip(seen.forms[1:], seen.upos[1:])]
    assert parses[1][0].analysis[2][1] == "d1"  # an unseen form keeps the classifier's rule
    assert ("ran\tVERB" in vocabs.lexicon) == (parses[1][0].analysis[2][2] != "d1")


def test_distilled_heads_match_the_teacher_word_by_word(tmp_path):
    """trainer.distill_heads: the teacher's label and tag distributions line up with the
    student's arcs and words (a student with the teacher's weights diverges by nothing, one with
    other analysis weights does), an ensemble of two copies teaches what one does, kept
    distributions equal fresh ones in a batch of another width, and a run trains with them
    (none without a teacher)."""
    from nparse import checkpoint
    from nparse.testing.fuzz import untrained_checkpoint
    from nparse.training.distill import Teacher, head_distill_loss
    from nparse.training.settings import check_settings, system_options

    from .conftest import compose_config

    with pytest.raises(ValueError, match="trainer.distill_heads=true needs a teacher: trainer.distill_from"):
        check_settings(compose_config("+exp=archybrid_dynamic_ud", "trainer.distill_heads=true"))
    sents = read_conllu(treebank_files("train")[0])[:40]  # the bundled EWT train file: the run's first 40
    teacher_path = untrained_checkpoint(sents, tmp_path, ("+exp=archybrid_dynamic_ud",))
    options = system_options(compose_config("+exp=archybrid_dynamic_ud"))
    cpu = torch.device("cpu")
    fresh, kept = Teacher(teacher_path, options, cpu), Teacher(teacher_path, options, cpu, cache_mb=64)
    pair = Teacher([teacher_path, teacher_path], options, cpu)
    same = checkpoint.model_from_state(checkpoint.load(teacher_path), cpu)
    state = checkpoint.load(teacher_path)
    generator = torch.Generator().manual_seed(5)
    for key, value in state["model"].items():
        if key.startswith(("analyser.", "labeler.")):
            state["model"][key] = value + torch.randn(value.shape, generator=generator)
    other = checkpoint.model_from_state(state, cpu)
    assert fresh.head_names(same) == ["labels", "upos", "xpos", "feats", "lemmas"]
    examples = sorted((encode(s, same.vocabs) for s in sents[:12]), key=len)
    first, second = collate(examples[4:]), collate(examples[:8])  # 4 sentences in both, other widths
    assert first.width != second.width
    with torch.no_grad():
        for batch in (first, second):
            targets = fresh.head_targets(batch, same)
            arcs = sum(1 for e in batch.examples for d in range(1, len(e) + 1) if e.labels[d] >= 0)
            assert targets["labels"].shape[0] == arcs
            assert targets["upos"].shape[0] == sum(len(e) for e in batch.examples)
            vectors, _ = same.encode(batch, with_table=False)
            label, tags = head_distill_loss(same, vectors, batch, targets)
            assert label.item() < 1e-4 and tags.item() < 1e-4
            label, tags = head_distill_loss(other, other.encode(batch, with_table=False)[0], batch, targets)
            assert label.item() > 1.0 and tags.item() > 1.0
            for name, value in pair.head_targets(batch, same).items():
                assert torch.allclose(value, targets[name], atol=1e-5), name
            for name, value in kept.head_targets(batch, same).items():
                assert torch.allclose(value, targets[name], atol=1e-4), name  # read in a batch of another width
    assert len(kept.kept_heads) == 12
    once = Teacher(teacher_path, options, cpu)  # tables and heads from one encoder call
    once.teach_heads(same)
    once._heads_of = lambda ex: pytest.fail("read the sentences again")  # type: ignore[method-assign]
    once.table(first)
    for name, value in once.head_targets(first, same).items():
        assert torch.allclose(value, fresh.head_targets(first, same)[name], atol=1e-5), name
    metrics = run_train(tmp_path / "student", "+exp=archybrid_dynamic_ud", "model.segmenter=false",
                        "data.max_train_sentences=40", "trainer.epochs=1", "data.dev=null", "data.test=null",
                        f"trainer.distill_from={teacher_path}", "trainer.distill_heads=true")  # fmt: skip
    assert metrics["epochs"][0]["loss_per_token"] > 0
