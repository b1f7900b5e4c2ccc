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
from ..io.conllu import Sentence
from ..io.rawtext import iter_raw
from .component import ROOT, NparseComponent, make_component, shared_parser

__all__ = ["ROOT", "NparseComponent", "SegmenterTokenizer", "load", "make_component", "word_spacing"]


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
        for sent in sentences:
            spacing = word_spacing(sent)
            for i in range(1, len(sent) + 1):
                words.append(sent.forms[i])
                spaces.append(spacing[i])
                starts.append(i == 1)
        if spaces:
            spaces[-1] = False
        return Doc(self.vocab, words=words, spaces=spaces, sent_starts=starts if words else None)

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
    batch_size: int = 1024,
) -> Language:
    """A spaCy pipeline of an nparse checkpoint with a trained segmenter: ``spacy.blank`` of the
    model's language, the segmenter as its tokenizer, then the ``nparse`` component."""
    parser = shared_parser(path, device, threads)
    nlp = spacy.blank(parser.lang)
    nlp.tokenizer = SegmenterTokenizer(nlp.vocab, parser)
    config = {"model": str(path), "device": device, "threads": threads, "beam_size": beam_size, "batch_size": batch_size}
    nlp.add_pipe("nparse", config=config)
    return nlp
