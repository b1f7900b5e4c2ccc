"""nparse inside spaCy: the component on any pipeline, ``nparse.spacy.load`` with a trained
segmenter giving what ``nparse-parse format=raw`` gives, batching across documents, DocBin round
trips and displaCy pictures."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("spacy")
pytest.importorskip("ufal.udpipe")

import spacy  # noqa: E402
from spacy.tokens import DocBin  # noqa: E402

from nparse import parse as parse_cli  # noqa: E402
from nparse.checkpoint import attach_segmenter  # noqa: E402
from nparse.fuzz import untrained_checkpoint  # noqa: E402
from nparse.io.conllu import read_conllu  # noqa: E402
from nparse.io.segmenter import train  # noqa: E402

from .conftest import BUNDLED  # noqa: E402

PARAGRAPHS = (
    "I don't know where the cat went. It's late, and we're tired.\n\n"
    "A second paragraph starts here: the parser can't tell. Can it?\n"
)


@pytest.fixture(scope="module")
def tagger_model(tmp_path_factory) -> Path:
    """An untrained tagger+parser (reads no UPOS) with a segmenter trained on 2,000 EWT sentences."""
    tmp = tmp_path_factory.mktemp("spacy")
    sents = read_conllu(BUNDLED / "en_ewt-ud-dev.conllu")[:300]
    model = untrained_checkpoint(sents, tmp, ("+exp=2planar_dynamic_tagger",))
    part = tmp / "train.conllu"
    chunks = (BUNDLED / "en_ewt-ud-train.conllu").read_text(encoding="utf-8").split("\n\n")[:2000]
    part.write_text("\n\n".join(chunks) + "\n\n", encoding="utf-8")
    attach_segmenter(model, train(part, None, "epochs=1"))
    return model


def cli_raw(model: Path, text: str, tmp: Path) -> list:
    source, out = tmp / "in.txt", tmp / "out.conllu"
    source.write_text(text, encoding="utf-8")
    assert parse_cli.main([f"model={model}", f"input={source}", f"output={out}", "format=raw", "device=cpu"]) == 0
    return read_conllu(out)


def test_the_loaded_pipeline_gives_the_words_heads_and_labels_of_format_raw(tagger_model, tmp_path):
    import nparse.spacy

    nlp = nparse.spacy.load(tagger_model, device="cpu")
    doc = nlp(PARAGRAPHS)
    expected = cli_raw(tagger_model, PARAGRAPHS, tmp_path)
    sents = list(doc.sents)
    assert len(sents) == len(expected)
    for span, sent in zip(sents, expected):
        assert [t.text for t in span] == sent.forms[1:]  # multiword tokens as their words: "do", "n't"
        heads = [0 if t.head.i == t.i else t.head.i - span.start + 1 for t in span]
        assert heads == sent.heads[1:]
        assert [t.dep_ for t in span] == ["ROOT" if d == "root" else d for d in sent.deprels[1:]]
        assert [t.pos_ for t in span] == sent.upos[1:]  # the model's tagger
    assert "do" in [t.text for t in doc] and "n't" in [t.text for t in doc]
    # Back to CoNLL-U: the same words, trees, tags and multiword-token lines as format=raw wrote.
    back = nparse.spacy.to_sentences(doc)
    assert [(s.forms, s.heads, s.deprels, s.upos) for s in back] == [(s.forms, s.heads, s.deprels, s.upos) for s in expected]

    def ranges(sents):
        return [line.split("\t")[:2] for s in sents for line in s.lines if "-" in line.split("\t")[0]]

    assert ranges(back) == ranges(expected) and ["2-3", "don't"] in ranges(back)


def test_add_pipe_on_a_blank_pipeline_keeps_or_sets_sentences_and_batches(tagger_model):
    nlp = spacy.blank("en")
    nlp.add_pipe("nparse", config={"model": str(tagger_model), "device": "cpu"})  # found by its entry point
    texts = [PARAGRAPHS, "One more text. It has two sentences.", "\n\n", ""]
    docs = list(nlp.pipe(texts, batch_size=3))
    assert [d.text for d in docs] == texts
    one_by_one = [nlp(t) for t in texts]
    for a, b in zip(docs, one_by_one):  # batching across documents changes nothing
        assert [(t.head.i, t.dep_, t.pos_) for t in a] == [(t.head.i, t.dep_, t.pos_) for t in b]
    doc = docs[0]
    assert len(list(doc.sents)) >= 4  # set from the segmenter: two sentences per paragraph
    for sent in doc.sents:
        roots = [t for t in sent if t.dep_ == "ROOT"]
        assert len(roots) == 1 and all(t.head.i in range(sent.start, sent.end) for t in sent)
    # Boundaries that are set are kept: a sentencizer before the parser decides them.
    ruled = spacy.blank("en")
    ruled.add_pipe("sentencizer")
    ruled.add_pipe("nparse", config={"model": str(tagger_model), "device": "cpu"})
    doc = ruled("Hello there. General Kenobi!")
    assert [s.text for s in doc.sents] == ["Hello there.", "General Kenobi!"]


def test_spacy_finds_the_component_through_the_entry_point(tagger_model):
    """A process that never imports nparse: ``add_pipe("nparse")`` finds it installed."""
    import subprocess
    import sys

    code = (
        "import spacy, sys; nlp = spacy.blank('en'); "
        f"nlp.add_pipe('nparse', config={{'model': {str(tagger_model)!r}, 'device': 'cpu'}}); "
        "doc = nlp('It works. Does it?'); "
        "print(sum(t.dep_ == 'ROOT' for t in doc))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "2"


def test_a_model_reading_upos_names_the_token_without_one(tmp_path):
    model = untrained_checkpoint(read_conllu(BUNDLED / "en_ewt-ud-dev.conllu")[:50], tmp_path)
    nlp = spacy.blank("en")
    nlp.add_pipe("nparse", config={"model": str(model), "device": "cpu"})
    with pytest.raises(ValueError, match=r"sentence 1>:1: .*UPOS"):
        nlp("No tags here.")
    with pytest.raises(ValueError, match="needs a checkpoint"):
        spacy.blank("en").add_pipe("nparse")


def test_docbin_round_trips_the_parse_and_displacy_draws_it(tagger_model):
    import nparse.spacy

    nlp = nparse.spacy.load(tagger_model, device="cpu")
    docs = list(nlp.pipe([PARAGRAPHS, "Short one."]))
    data = DocBin(docs=docs, store_user_data=True).to_bytes()
    back = list(DocBin().from_bytes(data).get_docs(nlp.vocab))

    def parse_of(doc):
        return [(t.text, t.head.i, t.dep_, t.pos_, t.is_sent_start) for t in doc]

    assert [parse_of(d) for d in back] == [parse_of(d) for d in docs]
    lines = [[s.lines for s in nparse.spacy.to_sentences(d)] for d in docs]
    assert [[s.lines for s in nparse.spacy.to_sentences(d)] for d in back] == lines  # multiword tokens kept
    svg = spacy.displacy.render(docs[0], style="dep", jupyter=False)
    assert svg.startswith("<svg") and ("n&#x27;t" in svg or "n't" in svg)
    assert all(t.dep_ in svg for t in docs[0] if t.dep_ != "ROOT")


def test_shared_parsers_are_keyed_on_every_member_of_an_ensemble(tmp_path, monkeypatch):
    """model="a.pt,b.pt" names both checkpoints in the cache key, resolved: the same relative
    second path from another directory is another parser."""
    from nparse.spacy import component

    loaded = []
    monkeypatch.setattr(component.Parser, "load", lambda model, *args: loaded.append(model) or object())
    monkeypatch.setattr(component, "_PARSERS", {})
    (tmp_path / "a.pt").write_bytes(b"")  # (checkpoint_paths checks that each piece exists)
    for folder in ("x", "y"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "b.pt").write_bytes(b"")
        monkeypatch.chdir(tmp_path / folder)
        component.shared_parser(f"{tmp_path}/a.pt,b.pt")
        component.shared_parser(f"{tmp_path}/a.pt,b.pt")
    assert len(loaded) == 2  # once per directory, then shared
    assert {key[0].split(",")[1] for key in component._PARSERS} == {f"{tmp_path}/x/b.pt", f"{tmp_path}/y/b.pt"}
