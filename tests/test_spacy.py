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
from nparse.testing.fuzz import untrained_checkpoint  # noqa: E402
from nparse.io.conllu import read_conllu  # noqa: E402
from nparse.io.segmenter import train  # noqa: E402

from .conftest import BUNDLED  # noqa: E402

pytestmark = pytest.mark.slow  # it trains or runs a command (pytest -m 'not slow' leaves it out)

PARAGRAPHS = (
    "I don't know where the cat went. It's late, and we're tired.\n\n"
    "A second paragraph starts here: the parser can't tell. Can it?\n"
)


@pytest.fixture(scope="module")
def tagger_model(tmp_path_factory) -> Path:
    """An untrained parser with the whole analysis (reads no UPOS: UPOS, XPOS, FEATS and lemmas
    predicted) with a segmenter trained on 2,000 EWT sentences."""
    tmp = tmp_path_factory.mktemp("spacy")
    sents = read_conllu(BUNDLED / "en_ewt-ud-dev.conllu")[:300]
    model = untrained_checkpoint(sents, tmp, ("+exp=2planar_dynamic_ud",))
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
    assert doc.text == PARAGRAPHS  # the blank line and the final line break are whitespace tokens
    sents = list(doc.sents)
    assert len(sents) == len(expected)
    for span, sent in zip(sents, expected):
        words = [t for t in span if not t.is_space]
        assert [t.text for t in words] == sent.forms[1:]  # multiword tokens as their words: "do", "n't"
        index = {t.i: j for j, t in enumerate(words, 1)}
        assert [0 if t.head.i == t.i else index[t.head.i] for t in words] == sent.heads[1:]
        assert [t.dep_ for t in words] == ["ROOT" if d == "root" else d for d in sent.deprels[1:]]
        assert [t.pos_ for t in words] == sent.upos[1:]  # the model's tagger
        assert [t.tag_ for t in words] == sent.xpos[1:] and [t.lemma_ for t in words] == sent.lemmas[1:]
        assert [str(t.morph) or "_" for t in words] == sent.feats[1:]
    assert "do" in [t.text for t in doc] and "n't" in [t.text for t in doc]
    # Back to CoNLL-U: the same words, trees, tags and multiword-token lines as format=raw wrote.
    back = nparse.spacy.to_sentences(doc)
    columns = [(s.forms, s.heads, s.deprels, s.upos, s.xpos, s.feats, s.lemmas) for s in expected]
    assert [(s.forms, s.heads, s.deprels, s.upos, s.xpos, s.feats, s.lemmas) for s in back] == columns
    assert any(f != "_" for s in expected for f in s.feats[1:])  # the untrained model's analysis is written

    def ranges(sents):
        return [line.split("\t")[:2] for s in sents for line in s.lines if "-" in line.split("\t")[0]]

    assert ranges(back) == ranges(expected) and ["2-3", "don't"] in ranges(back)


SPACED = "  Two  spaces here.\tA tab, then\n\n\n  a\x0c\x0cform feed. Done.\u2028Really  \n"


def test_the_loaded_pipeline_keeps_every_character_and_writes_it_back(tagger_model, tmp_path):
    """doc.text is the input (runs of spaces, tabs, blank lines, leading spaces), token.idx points
    into it, to_sentences writes the spacing that rebuild_text turns back into it, and lines
    break at \\n only, as in format=raw (not at form feeds or U+2028)."""
    import nparse.spacy
    from nparse.io.rawtext import rebuild_text

    nlp = nparse.spacy.load(tagger_model, device="cpu")
    doc = nlp(SPACED)
    assert doc.text == SPACED
    assert all(SPACED[t.idx : t.idx + len(t.text)] == t.text for t in doc)
    assert doc.char_span(SPACED.index("tab"), SPACED.index("tab") + 3).text == "tab"
    back = nparse.spacy.to_sentences(doc)
    assert rebuild_text(back) == SPACED
    expected = cli_raw(tagger_model, SPACED, tmp_path)
    assert [s.forms for s in back] == [s.forms for s in expected]
    misc = [[line.split("\t")[9] for line in s.lines if not line.startswith("#")] for s in back]
    assert misc == [[line.split("\t")[9] for line in s.lines if not line.startswith("#")] for s in expected]
    # On a blank pipeline, spaCy's own whitespace tokens are written as spacing too.
    blank = spacy.blank("en")
    blank.add_pipe("nparse", config={"model": str(tagger_model), "device": "cpu"})
    assert rebuild_text(nparse.spacy.to_sentences(blank(SPACED))) == SPACED


def test_a_saved_pipeline_loads_with_spacy_load_elsewhere(tagger_model, tmp_path):
    """nlp.to_disk, then spacy.load in a process that never imports nparse, from another folder:
    the config names the segmenter tokenizer and the model by its absolute path."""
    import subprocess
    import sys

    import nparse.spacy

    nlp = nparse.spacy.load(tagger_model, device="cpu")
    nlp.to_disk(tmp_path / "pipeline")
    code = (
        "import spacy; nlp = spacy.load('pipeline'); "
        f"doc = nlp({PARAGRAPHS!r}); "
        "print(repr([(t.text, t.head.i, t.dep_) for t in doc]))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == repr([(t.text, t.head.i, t.dep_) for t in nlp(PARAGRAPHS)])


def test_text_the_segmenter_drops_is_refused_at_its_line(tagger_model):
    """UDPipe's tokenizer stops reading at a NUL character: the rest would be lost, so it is an
    error naming the line and column."""
    import nparse.spacy
    from nparse.io.rawtext import RawTextError

    nlp = nparse.spacy.load(tagger_model, device="cpu")
    with pytest.raises(RawTextError, match=r"<text>:3: .* column 6 .*NUL character"):
        nlp("Fine.\n\nSome \x00words here. And more.\n")


def test_add_pipe_on_a_blank_pipeline_keeps_or_sets_sentences_and_batches(tagger_model):
    nlp = spacy.blank("en")
    nlp.add_pipe("nparse", config={"model": str(tagger_model), "device": "cpu"})  # found by its entry point
    texts = [PARAGRAPHS, "One more text. It has two sentences.", "\n\n", ""]
    docs = list(nlp.pipe(texts, batch_size=3))
    assert [d.text for d in docs] == texts
    one_by_one = [nlp(t) for t in texts]
    for a, b in zip(docs, one_by_one):  # batching across documents changes nothing
        assert [(t.head.i, t.dep_, t.pos_) for t in a] == [(t.head.i, t.dep_, t.pos_) for t in b]
    assert [(t.head.i, t.dep_) for t in docs[2]] == [(0, "ROOT")]  # whitespace only: one root token
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
    with pytest.raises(ValueError, match=r"<spaCy doc, sentence 1>:1: .*UPOS"):
        nlp("No tags here.")
    with pytest.raises(ValueError, match=r"<spaCy doc 3, sentence 1>:1: .*UPOS"):  # docs of a stream counted
        list(nlp.pipe(["", "\n", "No tags. Here either."], batch_size=2))
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


def test_n_process_2_gives_what_one_process_gives(tagger_model):
    """spaCy's own way to use several processes, ``nlp.pipe(texts, n_process=2)``, with the
    component on a blank pipeline and with ``nparse.spacy.load``'s: the same words, heads, labels
    and tags as one process, in order."""
    import nparse.spacy

    texts = [PARAGRAPHS, "One more text. It has two sentences.", "Short."] * 4
    blank = spacy.blank("en")
    blank.add_pipe("nparse", config={"model": str(tagger_model), "device": "cpu"})
    for nlp in (blank, nparse.spacy.load(tagger_model, device="cpu")):
        one = [[(t.text, t.head.i, t.dep_, t.pos_) for t in doc] for doc in nlp.pipe(texts, n_process=1)]
        two = [[(t.text, t.head.i, t.dep_, t.pos_) for t in doc] for doc in nlp.pipe(texts, n_process=2, batch_size=2)]
        assert two == one and len(one) == len(texts)
