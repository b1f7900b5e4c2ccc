"""The ``nparse`` spaCy pipeline component: ``nlp.add_pipe("nparse", config={"model": PATH})``.

It parses the Doc's sentences with an nparse checkpoint and sets ``token.head`` and
``token.dep_`` (the root's label as spaCy writes it, ``ROOT``; the others as the treebank has
them) and, with a model that has a tagger, ``token.pos_``; with a model that predicts the whole
analysis (``model.analysis``, the ``*_ud`` presets) also ``token.tag_`` (XPOS), ``token.morph``
(FEATS) and ``token.lemma_``. A model that reads UPOS takes
``token.pos_`` from the components before it and stops, naming the token, where there is none.

Sentence boundaries that are set (a sentencizer or a parser before it, or the tokenizer of
``nparse.spacy.load``) are kept: each sentence is parsed on its own, and spaCy's sentences come
from the trees. Otherwise the component splits the Doc first, as ``nparse-parse format=raw``
would split its text: by the checkpoint's trained segmenter (its sentence boundaries, matched to
spaCy's tokens by character offset) or, without one, by spaCy's rule-based sentencizer; a blank
line always ends a sentence. Whitespace tokens are no words for the parser: each is attached to
the word before it (or after it) with the label ``dep``.

``nlp.pipe(texts, batch_size=N)`` parses the sentences of N documents together (one encoder call
per batch of sentences, as ``nparse-parse`` does).
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any, Iterable, Iterator

import numpy as np
from spacy.attrs import DEP, HEAD, POS
from spacy.language import Language
from spacy.parts_of_speech import IDS as POS_IDS
from spacy.tokens import Doc, Span
from spacy.util import minibatch

from ..api import Parser
from ..checkpoint import checkpoint_paths
from ..decoding.decode import lemma_of
from ..io.conllu import Sentence, build_sentence
from ..io.rawtext import paragraphs

ROOT = "ROOT"  # spaCy's label of a sentence's root

_PARSERS: dict[tuple[str, str, int | None, str], Parser] = {}


def shared_parser(
    model: str | Path, device: str = "auto", threads: int | None = None, precision: str = "auto"
) -> Parser:
    """One ``Parser`` per checkpoint, device, thread setting and precision in a process, shared
    by the component and the tokenizer of ``nparse.spacy.load``."""
    key = (",".join(str(Path(m).resolve()) for m in checkpoint_paths(model)), device, threads, precision)
    if key not in _PARSERS:
        _PARSERS[key] = Parser.load(model, device, threads, precision)
    return _PARSERS[key]


class NparseComponent:
    """Parses the sentences of Docs with an nparse model (module docstring)."""

    def __init__(self, nlp: Language, name: str, model: str, beam_size: int | None, batch_size: int,
                 device: str, threads: int | None, precision: str):  # fmt: skip
        self.name = name
        self.model_path = model
        self.parser = shared_parser(model, device, threads, precision)
        self.beam_size = beam_size
        self.batch_size = batch_size
        self.needs_pos = "UPOS" in self.parser.model.pos_inputs
        self.tags = self.parser.model.tagger is not None

    def __call__(self, doc: Doc) -> Doc:
        self.parse([doc])
        return doc

    def pipe(self, stream: Iterable[Doc], batch_size: int = 512) -> Iterator[Doc]:
        seen = 0
        for docs in minibatch(stream, size=batch_size):
            self.parse(docs, seen)
            seen += len(docs)
            yield from docs

    def parse(self, docs: list[Doc], seen: int | None = None) -> None:
        """Parse every sentence of ``docs`` in one call and write the trees into them (``seen``:
        the Docs of the stream before these, which messages count from; None: a single Doc)."""
        spans, names = [], []
        for d, doc in enumerate(docs):
            for k, span in enumerate(self.sentences(doc), 1):
                spans.append(span)
                names.append(
                    f"<spaCy doc, sentence {k}>" if seen is None else f"<spaCy doc {seen + d + 1}, sentence {k}>"
                )
        sents, words = [], []
        for span, name in zip(spans, names):
            kept = [t for t in span if not t.is_space]
            words.append(kept)
            if kept:
                sents.append(self.to_sentence(kept, name))
        results = iter(
            self.parser.parse_nbest(sents, beam_size=self.beam_size, batch_size=self.batch_size) if sents else []
        )
        per_doc: dict[int, list[tuple[list[Any], Any]]] = {}
        for span, kept in zip(spans, words):
            parse = next(results)[0] if kept else None
            per_doc.setdefault(id(span.doc), []).append((kept, parse))
        for doc in docs:
            self.write(doc, per_doc.get(id(doc), []))

    def sentences(self, doc: Doc) -> list[Span]:
        """The Doc's sentences: its own when set, else split as the module docstring says."""
        if len(doc) == 0:
            return []
        if not doc.has_annotation("SENT_START"):
            starts = self.split(doc)
            doc[0].is_sent_start = True
            for token in doc[1:]:
                token.is_sent_start = token.i in starts
        return list(doc.sents)

    def split(self, doc: Doc) -> set[int]:
        """Token indices that start a sentence, for a Doc without sentence boundaries: where a
        sentence of the segmenter (or of spaCy's rules) starts, and after every blank line."""
        offsets = []  # character offsets where a sentence starts
        segmenter = self.parser.segmenter
        base = 0
        for _, text in paragraphs(io.StringIO(doc.text).readlines()):  # breaks at \n only, as nparse-parse
            offsets.append(base + len(text) - len(text.lstrip()))
            if segmenter is not None:
                offsets += [base + sentence[0][1] for sentence in segmenter(text) if sentence]
            base += len(text)
        if segmenter is None:
            from ..io.rawtext import pipeline

            offsets += [span.start_char for span in pipeline(self.parser.lang)(doc.text).sents]
        offsets.sort()
        starts, j, first = set(), 0, True
        for token in doc:
            if token.is_space:
                continue
            boundary = False
            while j < len(offsets) and offsets[j] <= token.idx:  # a boundary since the last word
                boundary, j = True, j + 1
            if boundary and not first:
                starts.add(token.i)
            first = False
        return starts

    def to_sentence(self, tokens: list[Any], name: str) -> Sentence:
        """An nparse sentence of spaCy tokens (their UPOS when the model reads it); ``name`` is
        where messages about it say it is: which Doc of a stream, which sentence of the Doc."""
        rows = []
        for i, t in enumerate(tokens, 1):
            form = " ".join(t.text.split()) or "_"
            upos = (t.pos_ or "_") if self.needs_pos else "_"
            rows.append(f"{i}\t{form}\t_\t{upos}\t_\t_\t_\t_\t_\t_")
        return build_sentence(name, 1, rows, allow_missing_heads=True)

    def write(self, doc: Doc, parsed: list[tuple[list[Any], Any]]) -> None:
        """Heads, labels (and tags) of the parsed sentences into the Doc, whitespace attached."""
        n = len(doc)
        heads = np.arange(n, dtype=np.int64)
        labels = ["dep"] * n
        pos = [t.pos for t in doc]
        analysed: list[tuple[Any, str, str, str]] = []  # (token, XPOS, FEATS, lemma) of a model with model.analysis
        for kept, parse in parsed:
            if parse is None:
                continue
            index = [t.i for t in kept]
            for j, t in enumerate(kept, 1):
                h = parse.heads[j]
                heads[t.i] = t.i if h == 0 else index[h - 1]
                labels[t.i] = ROOT if h == 0 else parse.labels[j]
                if self.tags and parse.tags is not None:
                    pos[t.i] = POS_IDS.get(parse.tags[j], pos[t.i])
                if parse.analysis is not None:
                    xpos, feats, rules = parse.analysis
                    analysed.append((t, xpos[j], feats[j], lemma_of(" ".join(t.text.split()) or "_", rules[j])))
        for t in doc:  # whitespace: to the word before it in its sentence, else after it
            if t.is_space:
                sent = t.sent
                before = [w.i for w in sent if w.i < t.i and not w.is_space]
                after = [w.i for w in sent if w.i > t.i and not w.is_space]
                heads[t.i] = before[-1] if before else (after[0] if after else t.i)
                if heads[t.i] == t.i:  # a sentence of whitespace only: its root, labelled as spaCy labels one
                    labels[t.i] = ROOT
        strings = doc.vocab.strings
        array = np.zeros((n, 3), dtype="uint64")
        array[:, 0] = (heads - np.arange(n)).astype("uint64")
        array[:, 1] = [strings.add(label) for label in labels]
        array[:, 2] = pos
        doc.from_array([HEAD, DEP, POS], array)  # type: ignore[arg-type]  # a uint64 array, as spaCy writes them
        for t, xpos, feats, lemma in analysed:
            t.tag_, t.lemma_ = xpos, lemma
            t.set_morph(None if feats == "_" else feats)


@Language.factory(
    "nparse",
    default_config={
        "model": None,
        "beam_size": None,
        "batch_size": 512,
        "device": "auto",
        "threads": None,
        "precision": "auto",
    },  # fmt: skip
    assigns=["token.head", "token.dep", "token.pos", "token.tag", "token.morph", "token.lemma", "token.is_sent_start"],
)
def make_component(nlp: Language, name: str, model: str | None, beam_size: int | None, batch_size: int,
                   device: str, threads: int | None, precision: str) -> NparseComponent:  # fmt: skip
    """The factory spaCy finds through the ``spacy_factories`` entry point of the package."""
    if not model:
        raise ValueError(
            'the nparse component needs a checkpoint: nlp.add_pipe("nparse", config={"model": "PATH/best.pt"})'
        )
    return NparseComponent(nlp, name, str(model), beam_size, batch_size, device, threads, precision)
