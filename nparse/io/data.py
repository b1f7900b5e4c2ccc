"""Turning sentences into index lists and length-bucketed batches."""

from __future__ import annotations

from collections import Counter

import random
from itertools import chain
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import torch

from .conllu import CoNLLUError, Sentence
from .feats import FeatureTables, feats_problem
from .lemma_rules import LemmaError, rule_for
from .vocab import ROOT, Vocab, normalize, normalize_all

TABLES = ("words", "chars", "upos", "xpos", "labels", "feats", "lemmas")
ANALYSIS = ("xpos", "feats", "lemmas")  # what ``model.analysis`` predicts: the Vocabs tables and gold Batch fields


@dataclass
class Vocabs:
    """Every table a model needs to turn a sentence into indices. ``feats`` (whole FEATS values)
    and ``lemmas`` (lemma edit rules, ``lemma_rules``) are built for a model that predicts or
    reads morphology and are empty otherwise (``len(...) == 3``: the special symbols only)."""

    words: Vocab
    chars: Vocab
    upos: Vocab
    xpos: Vocab
    labels: Vocab
    lowercase: bool = True
    feats: Vocab = field(default_factory=Vocab)
    lemmas: Vocab = field(default_factory=Vocab)
    lemma_max_added: int = 64  # a lemma rule may add at most this many characters (``lemma_rules.rule_for``)
    features: FeatureTables = field(default_factory=FeatureTables)  # FEATS per feature (model.feats_factored)
    # "FORM\tUPOS" -> the lemma rule of the form's most frequent lemma with that UPOS in the training
    # file: decoding takes it over the classifier's rule for words seen so (``decode.lexicon_lemmas``)
    lexicon: dict[str, str] = field(default_factory=dict)

    @classmethod
    def build(
        cls, sentences: Sequence[Sentence], lowercase: bool = True, morphology: bool = False, lemma_max_added: int = 64
    ) -> "Vocabs":
        """The tables of the training sentences; ``morphology``: also FEATS and lemma rules,
        every FEATS value and lemma checked (``CoNLLUError`` at the word's line)."""
        words = Vocab.build(normalize(f, lowercase) for s in sentences for f in s.forms[1:])
        chars = Vocab.build(ch for s in sentences for f in s.forms[1:] for ch in f)
        upos = Vocab.build(p for s in sentences for p in s.upos[1:])
        xpos = Vocab.build(p for s in sentences for p in s.xpos[1:])
        labels = Vocab.build((d for s in sentences for d in s.deprels[1:]), specials=False)
        vocabs = cls(words, chars, upos, xpos, labels, lowercase, lemma_max_added=lemma_max_added)
        if morphology:
            vocabs.feats = Vocab.build(checked_feats(sentences))
            vocabs.features = FeatureTables.build(vocabs.feats.itos[3:])
            rules = [lemma_rules(s, lemma_max_added) for s in sentences]  # each checked once
            vocabs.lemmas = Vocab.build(r for sent_rules in rules for r in sent_rules[1:] if r != "_")
            vocabs.lexicon = lemma_lexicon(sentences, lemma_max_added, rules)
        return vocabs

    @property
    def morphology(self) -> bool:
        """Whether the FEATS and lemma tables were built (``build(morphology=True)``)."""
        return len(self.feats) > 3

    def state_dict(self) -> dict:
        tables = {k: getattr(self, k).state_dict() for k in TABLES}
        return {**tables, "lowercase": self.lowercase, "lemma_max_added": self.lemma_max_added,
                "features": self.features.state_dict(), "lexicon": dict(self.lexicon)}  # fmt: skip

    @classmethod
    def from_state(cls, state: dict) -> "Vocabs":
        """The tables as saved; a checkpoint written before FEATS and lemmas were learned has none."""
        tables = {k: Vocab.from_state(state[k]) for k in TABLES if k in state}
        features = FeatureTables.from_state(state["features"]) if "features" in state else FeatureTables()
        return cls(
            **tables, lowercase=state["lowercase"], lemma_max_added=state.get("lemma_max_added", 64), features=features,
            lexicon=dict(state.get("lexicon", {})),  # none in checkpoints written before it: their lemmas as before
        )  # fmt: skip


def checked_feats(sentences: Sequence[Sentence]) -> list[str]:
    """Every word's FEATS, each checked against the CoNLL-U syntax (``CoNLLUError`` at its line)."""
    out = []
    for s in sentences:
        for i, f in enumerate(s.feats[1:], 1):
            if f != "_" and (problem := feats_problem(f)):
                raise CoNLLUError(s.path, s.word_line(i), problem)
            out.append(f)
    return out


def lemma_lexicon(
    sentences: Sequence[Sentence], max_added: int = 64, rules: Sequence[list[str]] | None = None
) -> dict[str, str]:
    """``"FORM\tUPOS"`` -> the rule of the most frequent lemma of that form with that UPOS in the
    training sentences (the first seen of equally frequent ones); ``rules``: the sentences'
    ``lemma_rules`` where the caller has them. On el_gdt test, taking it over the classifier for
    words seen so raised Lemmas from 92.31 to 94.03 (seed 1; docs/experiments/ud-analysis.md)."""
    if rules is None:
        rules = [lemma_rules(s, max_added) for s in sentences]
    counts: dict[str, Counter] = {}
    for s, sent_rules in zip(sentences, rules):
        for form, upos, rule in zip(s.forms[1:], s.upos[1:], sent_rules[1:]):
            if rule != "_":
                counts.setdefault(f"{form}\t{upos}", Counter())[rule] += 1
    return {key: rules.most_common(1)[0][0] for key, rules in counts.items()}


def lemma_rules(sent: Sentence, max_added: int = 64) -> list[str]:
    """The lemma rule of every word (index 0: the root's, "_"); "_" where the lemma is "_".
    A lemma no rule may make raises ``CoNLLUError`` at its line."""
    out = ["_"]
    for i, (form, lemma) in enumerate(zip(sent.forms[1:], sent.lemmas[1:]), 1):
        if lemma == "_":
            out.append("_")
            continue
        try:
            out.append(rule_for(form, lemma, max_added))
        except LemmaError as err:
            raise CoNLLUError(sent.path, sent.word_line(i), str(err)) from None
    return out


@dataclass
class Example:
    """A sentence as indices (position 0 is the root token) plus its oracle data."""

    sent: Sentence
    words: list[int]
    upos: list[int]
    xpos: list[int]
    labels: list[int]  # gold label index per word (-1 for the root and unknown labels)
    gold: object | None = None  # what the oracle prepared
    feats: list[int] = field(default_factory=list)  # FEATS indices (a model with morphology tables)
    lemmas: list[int] = field(default_factory=list)  # gold lemma-rule indices (training a lemmatizer)
    features: list[list[int]] = field(default_factory=list)  # gold value per feature (``FeatureTables.gold``)

    def __len__(self) -> int:
        return len(self.words) - 1


def encode(sent: Sentence, vocabs: Vocabs, labels: bool = True) -> Example:
    """The sentence as vocabulary indices; ``labels=False`` (parsing) leaves the gold labels out."""
    words = [vocabs.words.index(ROOT), *vocabs.words.indices(normalize_all(sent.forms[1:], vocabs.lowercase))]
    upos = [vocabs.upos.index(ROOT), *vocabs.upos.indices(sent.upos[1:])]
    xpos = [vocabs.xpos.index(ROOT), *vocabs.xpos.indices(sent.xpos[1:])]
    gold = [-1, *vocabs.labels.indices(sent.deprels[1:])] if labels else []
    example = Example(sent, words, upos, xpos, gold)
    if vocabs.morphology:
        example.feats = [vocabs.feats.index(ROOT), *vocabs.feats.indices(sent.feats[1:])]
        if labels and sent.lemmas:
            example.lemmas = vocabs.lemmas.indices(lemma_rules(sent, vocabs.lemma_max_added))
            example.lemmas[0] = vocabs.lemmas.index(ROOT)
            example.features = [
                [FeatureTables.IGNORE] * len(vocabs.features.names),
                *map(vocabs.features.gold, sent.feats[1:]),
            ]
    return example


@dataclass
class Batch:
    """Padded index tensors for a list of examples; row i of each tensor is examples[i]."""

    examples: list[Example]
    words: torch.Tensor  # [B, T] with T = longest sentence + 1 (the root)
    upos: torch.Tensor
    xpos: torch.Tensor
    lengths: torch.Tensor  # [B] words + root
    forms: list[list[str]] = field(default_factory=list)  # raw forms (with the root) for the char model
    feats: torch.Tensor | None = None  # [B, T] FEATS indices (a model with morphology tables)
    lemmas: torch.Tensor | None = None  # [B, T] gold lemma-rule indices (training a lemmatizer)
    features: torch.Tensor | None = None  # [B, T, F] gold value per feature (``FeatureTables.IGNORE`` where none)

    @property
    def width(self) -> int:
        return self.words.shape[1]

    def real_mask(self) -> torch.Tensor:
        """[B, T] True at the real positions (the root and the words), False at the padding."""
        return torch.arange(self.width)[None, :] < self.lengths[:, None]

    @property
    def row_starts(self) -> np.ndarray:
        """Where each sentence's root is among the compact rows (``Encoder.forward(compact=True)``)."""
        n = self.lengths.numpy()
        return np.cumsum(n) - n

    def to(self, device: torch.device) -> "Batch":
        return Batch(
            self.examples,
            self.words.to(device),
            self.upos.to(device),
            self.xpos.to(device),
            self.lengths,
            self.forms,
            None if self.feats is None else self.feats.to(device),
            None if self.lemmas is None else self.lemmas.to(device),
            None if self.features is None else self.features.to(device),
        )


def padded(rows: Sequence[Sequence[int]], width: int) -> torch.Tensor:
    """[len(rows), width] long tensor of the rows, right-padded with 0 (built in numpy from one
    flat sequence: padding list by list cost 6% of parsing, and ``torch.tensor`` of a list is
    3x slower than numpy's)."""
    lengths = np.fromiter(map(len, rows), dtype=np.int64, count=len(rows))
    return padded_flat(np.fromiter(chain.from_iterable(rows), dtype=np.int64, count=int(lengths.sum())), lengths, width)


def padded_flat(flat: np.ndarray, lengths: np.ndarray, width: int) -> torch.Tensor:
    """``padded`` of rows given one after the other in ``flat``, row i ``lengths[i]`` long."""
    out = np.zeros((len(lengths), width), dtype=np.int64)
    out[np.arange(width)[None, :] < lengths[:, None]] = flat
    return torch.from_numpy(out)


def collate(examples: list[Example]) -> Batch:
    width = max(len(e.words) for e in examples)

    return Batch(
        examples,
        padded([e.words for e in examples], width),
        padded([e.upos for e in examples], width),
        padded([e.xpos for e in examples], width),
        torch.tensor([len(e.words) for e in examples]),
        [[ROOT] + e.sent.forms[1:] for e in examples],
        padded([e.feats for e in examples], width) if examples[0].feats else None,
        padded([e.lemmas for e in examples], width) if examples[0].lemmas else None,
        padded_features([e.features for e in examples], width) if examples[0].features else None,
    )


def padded_features(rows: list[list[list[int]]], width: int) -> torch.Tensor:
    """[B, width, F] gold feature values, padding ``FeatureTables.IGNORE``."""
    out = np.full((len(rows), width, len(rows[0][0])), FeatureTables.IGNORE, dtype=np.int64)
    for b, row in enumerate(rows):
        out[b, : len(row)] = row
    return torch.from_numpy(out)


def bucket_batches(
    examples: Sequence[Example], batch_size: int, rng: random.Random | None = None, max_tokens: int = 0
) -> list[list[Example]]:
    """Batches of sentences of similar length (``length_batches``)."""
    lengths = [len(e) for e in examples]
    return [[examples[i] for i in batch] for batch in length_batches(lengths, batch_size, rng, max_tokens)]


def length_batches(
    lengths: Sequence[int], batch_size: int, rng: random.Random | None = None, max_tokens: int = 0
) -> list[list[int]]:
    """Batches (indices into ``lengths``) of sentences of similar length (less padding, similar
    step counts), of at most ``batch_size`` sentences and, with ``max_tokens``, at most that many
    padded tokens (sentences x longest sentence + 1, what the encoder and tables hold; a longer
    sentence gets a batch of its own), so that memory stays bounded on long sentences. The
    sentences are taken by increasing length (a stable sort), so a run of consecutive batches,
    batched again, gives the same batches (parse workers rely on it).

    With ``rng`` the order within equal lengths and the batch order are shuffled.
    """
    keys = list(range(len(lengths)))
    if rng is not None:
        rng.shuffle(keys)
    keys.sort(key=lambda i: lengths[i])
    batches: list[list[int]] = []
    current: list[int] = []
    for i in keys:
        full = len(current) == batch_size
        if max_tokens and current and (len(current) + 1) * (lengths[i] + 1) > max_tokens:
            full = True
        if full:
            batches.append(current)
            current = []
        current.append(i)
    if current:
        batches.append(current)
    if rng is not None:
        rng.shuffle(batches)
    return batches
