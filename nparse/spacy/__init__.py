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

import io
from itertools import takewhile
from pathlib import Path
from typing import Callable, Iterable, Iterator

import spacy
from spacy.language import Language
from spacy.tokens import Doc
from spacy.vocab import Vocab

from ..api import Parser
from ..checkpoint import checkpoint_paths
from ..io.conllu import Sentence, build_sentence
from ..io.rawtext import iter_raw, misc_spacing, spacing_misc
from .component import ROOT, NparseComponent, make_component, shared_parser

__all__ = [
    "ROOT",
    "NparseComponent",
    "SegmenterTokenizer",
    "load",
    "make_component",
    "segmenter_tokenizer",
    "to_sentences",
    "word_gaps",
]

MULTIWORD = "nparse_multiword_tokens"  # Doc.user_data key: the multiword tokens of SegmenterTokenizer


def word_gaps(sent: Sentence) -> tuple[str, list[str]]:
    """The whitespace before a sentence's first word (``SpacesBefore``: a paragraph's start) and
    after each of its words (index 0 unused), exactly as ``iter_raw`` recorded them in MISC: none
    inside a multiword token, and after a token ``SpaceAfter=No``, ``SpacesAfter=`` or one space."""
    gaps = [" "] * (len(sent) + 1)
    before = ""
    end = 0  # the last word of the latest multiword token
    for line in sent.lines:
        if line.startswith("#"):
            continue
        cols = line.split("\t")
        first_space, after = misc_spacing(cols[9])
        if "-" in cols[0]:
            first, end = (int(x) for x in cols[0].split("-"))
            gaps[first:end] = [""] * (end - first)
            gaps[end] = after
        elif "." not in cols[0] and int(cols[0]) > end:
            first = int(cols[0])
            gaps[first] = after
        else:
            continue
        if first == 1 and first_space:
            before = first_space
    return before, gaps


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
        """The Doc of ``text`` with every character kept (``doc.text == text``): whitespace that
        is not one space after a word is a token of its own, as spaCy's tokenizer makes it."""
        lines = io.StringIO(text).readlines()  # line breaks at \n only, as nparse-parse reads a file
        words: list[str] = []
        spaces: list[bool] = []
        starts: list[bool | int | None] = []
        multiword: list[tuple[int, int, str]] = []  # (first token, last token, surface form)

        def add(token: str, space: bool, start: bool) -> None:
            words.append(token)
            spaces.append(space)
            starts.append(start)

        for sent in iter_raw(lines, self.parser.lang, "<text>", self.parser.segmenter):
            before, gaps = word_gaps(sent)
            if before:
                add(before, False, True)
            token_of = [0]  # word i of the sentence is token token_of[i]
            for i in range(1, len(sent) + 1):
                token_of.append(len(words))
                gap = gaps[i]
                add(sent.forms[i], gap.startswith(" "), i == 1 and not before)
                rest = gap[1:] if gap.startswith(" ") else gap
                if rest:
                    add(rest, False, False)
            for line in sent.lines:
                cols = line.split("\t")
                if not line.startswith("#") and "-" in cols[0]:
                    first, last = (int(x) for x in cols[0].split("-"))
                    multiword.append((token_of[first], token_of[last], cols[1]))
        doc = Doc(self.vocab, words=words, spaces=spaces, sent_starts=starts if words else None)
        if multiword:
            doc.user_data[MULTIWORD] = multiword  # for to_sentences (DocBin keeps it with store_user_data)
        return doc

    def pipe(self, texts: Iterable[str], batch_size: int = 1000) -> Iterator[Doc]:
        for text in texts:
            yield self(text)

    # The tokenizer is rebuilt from the checkpoint (the pipeline's config names it and the model's
    # path: segmenter_tokenizer below), not serialized with the pipeline.
    def to_bytes(self, **kwargs) -> bytes:
        return b""

    def from_bytes(self, data: bytes, **kwargs) -> "SegmenterTokenizer":
        return self

    def to_disk(self, path, **kwargs) -> None:
        return None

    def from_disk(self, path, **kwargs) -> "SegmenterTokenizer":
        return self


@spacy.registry.tokenizers("nparse.SegmenterTokenizer.v1")
def segmenter_tokenizer(
    model: str, device: str = "auto", threads: int | None = None, precision: str = "auto"
) -> Callable[[Language], SegmenterTokenizer]:
    """The tokenizer of ``load``'s pipelines, as their config names it, so that one saved with
    ``nlp.to_disk`` loads again with ``spacy.load`` (spaCy finds this function through the
    package's ``spacy_tokenizers`` entry point)."""

    def make(nlp: Language) -> SegmenterTokenizer:
        return SegmenterTokenizer(nlp.vocab, shared_parser(model, device, threads, precision))

    return make


def load(
    path: str | Path,
    device: str = "auto",
    threads: int | None = None,
    beam_size: int | None = None,
    batch_size: int = 512,
    precision: str = "auto",
) -> Language:
    """A spaCy pipeline of an nparse checkpoint with a trained segmenter: ``spacy.blank`` of the
    model's language, the segmenter as its tokenizer, then the ``nparse`` component. The config
    holds the model's absolute path, so that ``nlp.to_disk`` saves a pipeline that
    ``spacy.load`` opens from any folder (the checkpoint itself is not copied)."""
    model = ",".join(str(Path(m).resolve()) for m in checkpoint_paths(path))
    parser = shared_parser(model, device, threads, precision)
    tokenizer = {"@tokenizers": "nparse.SegmenterTokenizer.v1", "model": model, "device": device,
                 "threads": threads, "precision": precision}  # fmt: skip
    nlp = spacy.blank(parser.lang, config={"nlp": {"tokenizer": tokenizer}})
    config = {"model": model, "device": device, "threads": threads, "beam_size": beam_size,
              "batch_size": batch_size, "precision": precision}  # fmt: skip
    nlp.add_pipe("nparse", config=config)
    return nlp


def to_sentences(doc: Doc) -> list[Sentence]:
    """The parsed Doc as nparse sentences, ready for ``write_conllu`` or aligned scoring: one per
    spaCy sentence, with HEAD, DEPREL (``ROOT`` back to ``root``), UPOS, XPOS (``tag_``), FEATS
    (``morph``) and LEMMA where the Doc has them, the whitespace around
    each token in MISC as ``iter_raw`` writes it (``doc_spacing``), so that ``rebuild_text`` gives
    ``doc.text`` back, and the multiword tokens that ``nparse.spacy.load``'s tokenizer recorded
    as range lines. Whitespace tokens are no words: their text is the spacing of the words."""
    multiword = {first: (last, form) for first, last, form in doc.user_data.get(MULTIWORD, [])}
    around = doc_spacing(doc)
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
                before, after = around[t.i][0], around[last][1]
                rows.append(f"{j}-{j + last - t.i}\t{form}\t_\t_\t_\t_\t_\t_\t_\t{spacing_misc(before, after)}")
                text.append(form + (" " if after else ""))
                skip_to = last
            head = 0 if t.head.i == t.i else index.get(t.head.i, 0)
            label = "root" if head == 0 else t.dep_
            misc = "_" if t.i <= skip_to else spacing_misc(*around[t.i])
            lemma, xpos, feats = t.lemma_ or "_", t.tag_ or "_", str(t.morph) or "_"
            rows.append(f"{j}\t{t.text}\t{lemma}\t{t.pos_ or '_'}\t{xpos}\t{feats}\t{head}\t{label}\t_\t{misc}")
            if t.i > skip_to:
                text.append(t.text + (" " if around[t.i][1] else ""))
        lines = [f"# sent_id = {k}", f"# text = {''.join(text).strip()}", *rows]
        out.append(build_sentence("<spaCy doc>", 1, lines, allow_missing_heads=True))
    return out


def doc_spacing(doc: Doc) -> dict[int, tuple[str, str]]:
    """The whitespace before and after each word (non-space token) of a Doc, divided as
    ``iter_raw`` divides it: after a word, all up to the next word, except that a word that
    starts a paragraph (after a blank line) has the spaces before it on its line as its own."""
    out: dict[int, tuple[str, str]] = {}
    words = [t for t in doc if not t.is_space]
    before = "".join(t.text_with_ws for t in doc[: words[0].i]) if words else ""
    for t in words:
        gap = "".join([t.whitespace_, *takewhile(str.isspace, (u.text_with_ws for u in doc[t.i + 1 :]))])
        cut = gap.rindex("\n") + 1 if gap.count("\n") >= 2 else len(gap)  # a blank line in between
        out[t.i] = (before, gap[:cut])
        before = gap[cut:]
    return out
