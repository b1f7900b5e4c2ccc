"""Issue 11, part 2: the jointly trained UPOS tagger (model.tagger=true)."""

from __future__ import annotations

import pytest
import torch
from torch.nn import functional as F

from nparse.io.conllu import read_conllu
from nparse.io.data import Vocabs, collate, encode
from nparse.models.parser import ParserModel
from nparse.training.losses import tag_loss
from nparse import parse as parse_cli
from nparse.systems import make_system

from .conftest import EWT_DEV, model_config, run_train

pytestmark = pytest.mark.slow  # it trains or runs a command (pytest -m 'not slow' leaves it out)

OPTIONS = dict(word_dim=20, upos_dim=0, xpos_dim=0, char_dim=0, char_hidden=10, lstm_dim=16, lstm_layers=1,
               lstm_dropout=0.0, dropout=0.0, word_dropout=0.0, hidden=10, label_hidden=10, tagger=True,
               tagger_hidden=12)  # fmt: skip


def test_tag_loss_is_cross_entropy_over_tagged_words():
    sents = read_conllu(EWT_DEV)[:6]
    sents[2].upos[3] = "_"  # an untagged word is left out of the loss
    vocabs = Vocabs.build(sents)
    torch.manual_seed(0)
    model = ParserModel(vocabs, make_system("archybrid"), model_config(**OPTIONS))
    batch = collate([encode(s, vocabs) for s in sents])
    vectors = model.encoder(batch)
    expected, words = torch.tensor(0.0), 0
    for b, s in enumerate(sents):
        for i in range(1, len(s) + 1):
            if s.upos[i] != "_":
                scores = model.tagger(vectors[b, i])
                expected = expected + F.cross_entropy(scores[None], torch.tensor([vocabs.upos.index(s.upos[i])]))
                words += 1
    assert words == sum(len(s) for s in sents) - 1
    assert torch.allclose(tag_loss(model, vectors, batch), expected, atol=1e-4)


def test_a_tagger_model_must_not_read_gold_tags():
    vocabs = Vocabs.build(read_conllu(EWT_DEV)[:3])
    with pytest.raises(ValueError, match="upos_dim=0"):
        ParserModel(vocabs, make_system("archybrid"), model_config(**{**OPTIONS, "upos_dim": 25}))


def test_a_model_with_a_tagger_parses_and_tags_untagged_input(tmp_path):
    pytest.importorskip("spacy")  # for the raw-text case
    run = tmp_path / "run"
    metrics = run_train(run, "+exp=archybrid_dynamic_tagger", "data.max_train_sentences=150", "trainer.epochs=1",
                        f"data.dev={EWT_DEV}", "data.test=null", "trainer.threads=1")  # fmt: skip
    assert 0.0 <= metrics["epochs"][0]["dev_upos"] <= 100.0
    untagged = tmp_path / "untagged.conllu"
    lines = []
    for line in EWT_DEV.read_text(encoding="utf-8").splitlines()[:400]:
        cols = line.split("\t")
        if len(cols) == 10 and cols[0].isdigit():
            cols[3] = cols[4] = "_"
        lines.append("\t".join(cols))
    untagged.write_text("\n".join(lines).rsplit("\n\n", 1)[0] + "\n\n", encoding="utf-8")
    tags = set(read_conllu(EWT_DEV)[0].upos[1:]) | {t for s in read_conllu(EWT_DEV) for t in s.upos[1:]}
    story = tmp_path / "story.txt"
    story.write_text("The cat didn't sleep. It ran away!\n", encoding="utf-8")
    text = tmp_path / "text.txt"
    text.write_text("The cat sleeps .\nI like tea .\n", encoding="utf-8")
    out = tmp_path / "out.conllu"
    for source, fmt in ((untagged, "conllu"), (text, "text"), (story, "raw")):
        args = [f"model={run / 'best.pt'}", "device=cpu", f"format={fmt}", f"input={source}", f"output={out}"]
        assert parse_cli.main(args) == 0, fmt
        words = [line.split("\t") for line in out.read_text(encoding="utf-8").splitlines() if line[:1].isdigit()]
        assert words and all(w[3] in tags for w in words if w[0].isdigit()), fmt
