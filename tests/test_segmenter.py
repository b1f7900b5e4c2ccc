"""A segmenter trained on the treebank (UDPipe 1's tokenizer): every character of the input kept,
multiword tokens expanded into their words (English and Greek), its dev scores equal to the
official CoNLL 2018 scorer's on its own output, and raw text parsed with it from the API's CLI."""

from __future__ import annotations

from pathlib import Path

import pytest

from nparse.io.conllu import read_conllu, write_conllu
from nparse.io.rawtext import iter_raw, rebuild_text, text_of

from .conftest import BUNDLED, SHARED

pytest.importorskip("ufal.udpipe")

from nparse.io.segmenter import Segmenter, train  # noqa: E402

pytestmark = pytest.mark.slow  # it trains or runs a command (pytest -m 'not slow' leaves it out)


def _small_model(tmp: Path, folder: Path, name: str, sentences: int) -> Path:
    """A segmenter trained for one epoch on the first ``sentences`` of the training file."""
    chunks = (folder / f"{name}-ud-train.conllu").read_text(encoding="utf-8").split("\n\n")[:sentences]
    part = tmp / f"{name}.train.conllu"
    part.write_text("\n\n".join(chunks) + "\n\n", encoding="utf-8")
    path = tmp / f"{name}.udpipe"
    path.write_bytes(train(part, None, "epochs=1"))
    return path


@pytest.fixture(scope="module")
def english(tmp_path_factory) -> Path:
    return _small_model(tmp_path_factory.mktemp("seg"), BUNDLED, "en_ewt", 3000)


def test_every_character_is_kept_and_multiword_tokens_are_expanded(english):
    text = "  I don't know it.\tIt's   late, I'm told.\n\n\nA new paragraph here \n ends  now.\n"
    sents = list(iter_raw(text.splitlines(keepends=True), "en", "<t>", Segmenter(english)))
    assert rebuild_text(sents) == text
    lines = [line.split("\t") for s in sents for line in s.lines if not line.startswith("#")]
    ranges = {cols[1]: cols[0] for cols in lines if "-" in cols[0]}
    assert "don't" in ranges and "I'm" in ranges, ranges
    words = [cols[1] for cols in lines if "-" not in cols[0]]
    assert ["do", "n't"] == words[words.index("do") : words.index("do") + 2]
    assert len(sents) >= 3  # two sentences, then the second paragraph


@pytest.mark.skipif(not (SHARED / "el_gdt").is_dir(), reason="Greek GDT not available")
def test_greek_contractions_are_expanded(tmp_path):
    model = _small_model(tmp_path, SHARED / "el_gdt", "el_gdt", 1662)
    text = "Πήγε στην πόλη και στο σπίτι.\n"
    sents = list(iter_raw([text], "el", "<t>", Segmenter(model)))
    assert rebuild_text(sents) == text
    lines = [line.split("\t") for s in sents for line in s.lines if not line.startswith("#")]
    assert {cols[1] for cols in lines if "-" in cols[0]} >= {"στην", "στο"}
    words = [cols[1] for cols in lines if "-" not in cols[0]]
    assert words[1:4] == ["σ", "την", "πόλη"]  # as GDT writes the words of "στην" (lemma σε)


def test_dev_scores_equal_the_official_scorer(english, tmp_path):
    udeval = pytest.importorskip("udtools.udeval")
    from nparse.eval.aligned import aligned_scores

    gold_path = tmp_path / "gold.conllu"
    chunks = (BUNDLED / "en_ewt-ud-dev.conllu").read_text(encoding="utf-8").split("\n\n")[:300]
    gold_path.write_text("\n\n".join(chunks) + "\n\n", encoding="utf-8")
    gold = read_conllu(gold_path)
    pred = list(iter_raw(text_of(gold).splitlines(keepends=True), "en", "<dev>", Segmenter(english)))
    pred_path = tmp_path / "pred.conllu"
    chains = [[-1] + list(range(len(s))) for s in pred]  # the scorer needs trees: each word heads the next
    write_conllu(pred, pred_path, chains, [["_", "root"] + ["dep"] * (len(s) - 1) for s in pred])
    ours = aligned_scores(gold, read_conllu(pred_path, allow_missing_heads=True))
    official = udeval.evaluate(udeval.load_conllu_file(str(gold_path)), udeval.load_conllu_file(str(pred_path)))
    for name, key in (("tokens", "Tokens"), ("sentences", "Sentences"), ("words", "Words")):
        assert round(ours[name].f1, 2) == round(100 * official[key].f1, 2), name
    assert ours["words"].f1 > 90.0


def test_the_parse_cli_splits_raw_text_with_the_segmenter(english, tmp_path, capsys):
    from nparse import parse as parse_cli
    from nparse.testing.fuzz import untrained_checkpoint

    model = untrained_checkpoint(read_conllu(BUNDLED / "en_ewt-ud-dev.conllu")[:200], tmp_path, ("model.upos_dim=0",))

    source = tmp_path / "story.txt"
    text = "I don't know. It's late.\n\nA second paragraph.\n"
    source.write_text(text, encoding="utf-8")
    out = tmp_path / "out.conllu"
    args = [f"model={model}", f"input={source}", f"output={out}", "format=raw", "device=cpu"]
    assert parse_cli.main(args + [f"segmenter={english}"]) == 0, capsys.readouterr().err
    parsed = read_conllu(out)
    assert rebuild_text(parsed) == text
    assert any(line.startswith(("1-2\t", "2-3\t", "3-4\t")) for s in parsed for line in s.lines)
    assert parse_cli.main(args + [f"segmenter={tmp_path / 'missing.udpipe'}"]) == 1
    assert "missing.udpipe: no such file" in capsys.readouterr().err

    # Attached to the checkpoint (python -m nparse.segmenter model=... attach=...), the segmenter
    # is used by itself (CLI and API); a file that is no UDPipe model is refused, the checkpoint untouched.
    import nparse
    from nparse import segmenter as segmenter_cli

    broken = tmp_path / "broken.udpipe"
    broken.write_bytes(b"not a model")
    before = model.read_bytes()
    assert segmenter_cli.main([f"model={broken}", f"attach={model}"]) == 1
    assert f"model={broken}: not a UDPipe model" in capsys.readouterr().err
    assert model.read_bytes() == before
    assert segmenter_cli.main([f"model={english}"]) == 2  # nothing to attach it to
    assert "attach=CHECKPOINT" in capsys.readouterr().err
    assert segmenter_cli.main([f"model={english}", f"attach={model}"]) == 0
    assert parse_cli.main(args) == 0
    assert read_conllu(out)[0].lines == parsed[0].lines
    api = nparse.load(model, "cpu").parse(text, fmt="raw")
    assert [s.forms for s in api] == [s.forms for s in parsed] and rebuild_text(api) == text


def test_training_with_model_segmenter_keeps_it_in_the_checkpoint(tmp_path):
    """``model.segmenter=true``: the run trains a segmenter after the parser, scores its dev
    segmentation and the test set's raw text, and the checkpoint parses raw text with it."""
    from nparse import checkpoint, load

    from .conftest import run_train

    def head(split: str, n: int) -> Path:
        path = tmp_path / f"{split}.conllu"
        write_conllu(read_conllu(BUNDLED / f"en_ewt-ud-{split}.conllu")[:n], path)
        return path

    run = tmp_path / "run"
    metrics = run_train(run, "+exp=archybrid_dynamic_tagger", "data.max_train_sentences=300", "trainer.epochs=1",
                        f"data.dev={head('dev', 80)}", f"data.test={head('test', 80)}", "trainer.threads=1",
                        "model.segmenter=true", "model.segmenter_epochs=1")  # fmt: skip
    seg = metrics["segmenter"]
    assert set(seg["dev"]) == {"tokens", "sentences", "words", "tokens_per_second"}
    assert seg["dev"]["tokens"] > 90.0
    assert {"tokens", "sentences", "words", "upos", "uas", "las"} <= set(seg["test_raw"])
    assert 0.0 < seg["test_raw"]["las"] <= seg["test_raw"]["uas"] <= 100.0
    for name in ("best.pt", "last.pt"):
        assert checkpoint.load(run / name).get("segmenter") is not None, name
    text = "It rained all day. We stayed home and read.\n"
    parsed = load(run / "best.pt", "cpu").parse(text, fmt="raw")
    assert rebuild_text(parsed) == text
