"""Turning sentences into index lists and length-bucketed batches."""

from __future__ import annotations

import random
from itertools import chain
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np
import torch

from .conllu import Sentence
from .vocab import ROOT, Vocab, normalize, normalize_all


@dataclass
class Vocabs:
    """Every table a model needs to turn a sentence into indices."""

    words: Vocab
    chars: Vocab
    upos: Vocab
    xpos: Vocab
    labels: Vocab
    lowercase: bool = True

    @classmethod
    def build(cls, sentences: Sequence[Sentence], lowercase: bool = True) -> "Vocabs":
        words = Vocab.build(normalize(f, lowercase) for s in sentences for f in s.forms[1:])
        chars = Vocab.build(ch for s in sentences for f in s.forms[1:] for ch in f)
        upos = Vocab.build(p for s in sentences for p in s.upos[1:])
        xpos = Vocab.build(p for s in sentences for p in s.xpos[1:])
        labels = Vocab.build((d for s in sentences for d in s.deprels[1:]), specials=False)
        return cls(words, chars, upos, xpos, labels, lowercase)

    def state_dict(self) -> dict:
        tables = {k: getattr(self, k).state_dict() for k in ("words", "chars", "upos", "xpos", "labels")}
        return {**tables, "lowercase": self.lowercase}

    @classmethod
    def from_state(cls, state: dict) -> "Vocabs":
        tables = {k: Vocab.from_state(state[k]) for k in ("words", "chars", "upos", "xpos", "labels")}
        return cls(**tables, lowercase=state["lowercase"])


@dataclass
class Example:
    """A sentence as indices (position 0 is the root token) plus its oracle data."""

    sent: Sentence
    words: list[int]
    upos: list[int]
    xpos: list[int]
    labels: list[int]  # gold label index per word (-1 for the root and unknown labels)
    gold: object | None = None  # what the oracle prepared

    def __len__(self) -> int:
        return len(self.words) - 1


def encode(sent: Sentence, vocabs: Vocabs, labels: bool = True) -> Example:
    """The sentence as vocabulary indices; ``labels=False`` (parsing) leaves the gold labels out."""
    words = [vocabs.words.index(ROOT), *vocabs.words.indices(normalize_all(sent.forms[1:], vocabs.lowercase))]
    upos = [vocabs.upos.index(ROOT), *vocabs.upos.indices(sent.upos[1:])]
    xpos = [vocabs.xpos.index(ROOT), *vocabs.xpos.indices(sent.xpos[1:])]
    gold = [-1, *vocabs.labels.indices(sent.deprels[1:])] if labels else []
    return Example(sent, words, upos, xpos, gold)


@dataclass
class Batch:
    """Padded index tensors for a list of examples; row i of each tensor is examples[i]."""

    examples: list[Example]
    words: torch.Tensor  # [B, T] with T = longest sentence + 1 (the root)
    upos: torch.Tensor
    xpos: torch.Tensor
    lengths: torch.Tensor  # [B] words + root
    forms: list[list[str]] = field(default_factory=list)  # raw forms (with the root) for the char model

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
    )


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
