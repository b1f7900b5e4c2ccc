"""nparse inside spaCy (``pip install -e ".[spacy]"``).

Two ways in:

- ``nlp.add_pipe("nparse", config={"model": "runs/.../best.pt"})`` on any spaCy pipeline: the
  component (``component.py``, found by spaCy through the package's ``spacy_factories`` entry
  point) parses the Doc's sentences and sets ``token.head``, ``token.dep_`` and, with a tagger
  model, ``token.pos_``.
- ``nparse.spacy.load(path)``: a whole pipeline from a model trained with
  ``model.segmenter=true`` (or with a segmenter attached): the trained segmenter as the
  tokenizer, multiword tokens as their syntactic words (as spacy-udpipe does it), then the
  tagger and parser. Its tokens, heads and labels are those of
  ``nparse-parse format=raw`` with the same model.

The root's label is spaCy's ``ROOT``; the other labels are the treebank's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Iterator

import spacy
from spacy.language import Language
from spacy.tokens import Doc
from spacy.vocab import Vocab

from ..api import Parser
from ..io.conllu import Sentence, build_sentence
from ..io.rawtext import iter_raw
from .component import ROOT, NparseComponent, make_component, shared_parser

__all__ = ["ROOT", "NparseComponent", "SegmenterTokenizer", "load", "make_component", "to_sentences", "word_spacing"]

MULTIWORD = "nparse_multiword_tokens"  # Doc.user_data key: the multiword tokens of SegmenterTokenizer


def word_spacing(sent: Sentence) -> list[bool]:
    """Whether a space follows each word (index 0 unused): none inside a multiword token, and
    after a token as its MISC says (``SpaceAfter=No``: none; any other whitespace counts as one)."""
    space = [True] * (len(sent) + 1)
    end = 0  # the last word of the latest multiword token
    for line in sent.lines:
        if line.startswith("#"):
            continue
        cols = line.split("\t")
        after = "SpaceAfter=No" not in cols[9].split("|")
        if "-" in cols[0]:
            first, end = (int(x) for x in cols[0].split("-"))
            space[first:end] = [False] * (end - first)
            space[end] = after
        elif "." not in cols[0] and int(cols[0]) > end:
            space[int(cols[0])] = after
    return space


class SegmenterTokenizer:
    """A spaCy tokenizer from an nparse checkpoint's trained segmenter: the sentences and words
    that ``nparse-parse format=raw`` parses (``io.rawtext.iter_raw``), with their sentence starts."""

    def __init__(self, vocab: Vocab, parser: Parser):
        if parser.segmenter is None:
            raise ValueError(
                "nparse.spacy.load needs a model with a trained segmenter: train with model.segmenter=true, "
                "or attach one with python -m nparse.segmenter ... attach=MODEL"
            )
        self.vocab, self.parser = vocab, parser

    def __call__(self, text: str) -> Doc:
        sentences = iter_raw(text.splitlines(keepends=True), self.parser.lang, "<text>", self.parser.segmenter)
        words: list[str] = []
        spaces: list[bool] = []
        starts: list[bool | int | None] = []
        multiword: list[tuple[int, int, str]] = []  # (first token, last token, surface form)
        for sent in sentences:
            spacing = word_spacing(sent)
            base = len(words) - 1  # word i of the sentence is token base + i
            for line in sent.lines:
                cols = line.split("\t")
                if not line.startswith("#") and "-" in cols[0]:
                    first, last = (int(x) for x in cols[0].split("-"))
                    multiword.append((base + first, base + last, cols[1]))
            for i in range(1, len(sent) + 1):
                words.append(sent.forms[i])
                spaces.append(spacing[i])
                starts.append(i == 1)
        if spaces:
            spaces[-1] = False
        doc = Doc(self.vocab, words=words, spaces=spaces, sent_starts=starts if words else None)
        if multiword:
            doc.user_data[MULTIWORD] = multiword  # for to_sentences (DocBin keeps it with store_user_data)
        return doc

    def pipe(self, texts: Iterable[str], batch_size: int = 1000) -> Iterator[Doc]:
        for text in texts:
            yield self(text)

    # The tokenizer is rebuilt from the checkpoint, not serialized with the pipeline.
    def to_bytes(self, **kwargs) -> bytes:
        return b""

    def from_bytes(self, data: bytes, **kwargs) -> "SegmenterTokenizer":
        return self

    def to_disk(self, path, **kwargs) -> None:
        return None

    def from_disk(self, path, **kwargs) -> "SegmenterTokenizer":
        return self


def load(
    path: str | Path,
    device: str = "auto",
    threads: int | None = None,
    beam_size: int | None = None,
    batch_size: int = 512,
    precision: str = "auto",
) -> Language:
    """A spaCy pipeline of an nparse checkpoint with a trained segmenter: ``spacy.blank`` of the
    model's language, the segmenter as its tokenizer, then the ``nparse`` component."""
    parser = shared_parser(path, device, threads, precision)
    nlp = spacy.blank(parser.lang)
    nlp.tokenizer = SegmenterTokenizer(nlp.vocab, parser)
    config = {"model": str(path), "device": device, "threads": threads, "beam_size": beam_size,
              "batch_size": batch_size, "precision": precision}  # fmt: skip
    nlp.add_pipe("nparse", config=config)
    return nlp


def to_sentences(doc: Doc) -> list[Sentence]:
    """The parsed Doc as nparse sentences, ready for ``write_conllu`` or aligned scoring: one per
    spaCy sentence, with HEAD, DEPREL (``ROOT`` back to ``root``) and UPOS, ``SpaceAfter=No``
    where no whitespace follows a token, and the multiword tokens that ``nparse.spacy.load``'s
    tokenizer recorded as range lines. Whitespace tokens are no words."""
    multiword = {first: (last, form) for first, last, form in doc.user_data.get(MULTIWORD, [])}
    out = []
    for k, span in enumerate(doc.sents, 1):
        words = [t for t in span if not t.is_space]
        if not words:
            continue
        index = {t.i: j for j, t in enumerate(words, 1)}
        rows, text = [], []
        skip_to = -1
        for j, t in enumerate(words, 1):
            if t.i in multiword:
                last, form = multiword[t.i]
                space = doc[last].whitespace_ != ""
                rows.append(f"{j}-{j + last - t.i}\t{form}\t_\t_\t_\t_\t_\t_\t_\t{'_' if space else 'SpaceAfter=No'}")
                text.append(form + (" " if space else ""))
                skip_to = last
            head = 0 if t.head.i == t.i else index.get(t.head.i, 0)
            label = "root" if head == 0 else t.dep_
            misc = "_" if t.i <= skip_to or t.whitespace_ else "SpaceAfter=No"
            rows.append(f"{j}\t{t.text}\t_\t{t.pos_ or '_'}\t_\t_\t{head}\t{label}\t_\t{misc}")
            if t.i > skip_to:
                text.append(t.text + (" " if t.whitespace_ else ""))
        lines = [f"# sent_id = {k}", f"# text = {''.join(text).strip()}", *rows]
        out.append(build_sentence("<spaCy doc>", 1, lines, allow_missing_heads=True))
    return out
