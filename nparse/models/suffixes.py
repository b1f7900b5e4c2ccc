"""Suffix embeddings: a word's last 1 to ``length`` characters, each hashed into a table.

Why: a third of hu_szeged's test words and a sixth of el_gdt's are unseen in training, and
their UPOS and FEATS are mostly written in their endings. The character BiLSTM reads the
endings too, but through its final states; an embedding per ending is a direct, cheap feature
(spaCy's tagger embeds the suffix beside the norm). Hashing (CRC-32, stable across runs and
machines, unlike Python's ``hash``) needs no vocabulary in the checkpoint.

A suffix row is dropped in training as Kiperwasser & Goldberg drop a word: with probability
alpha / (alpha + count), its count taken over the training words; the table starts at zero, so
a row no training word reaches reads as "no suffix". Without the dropout a short rare word's
whole-word row could give back what word dropout hid; that arm lost 0.46 LAS on hu_szeged and
two of its seeds stopped 40 epochs early, the arm with it trained as long as the control. With
it, on hu_szeged (3 seeds): UFeats +0.49, Lemmas +0.45, but UPOS +0.04 and LAS -0.28, so it is
off by default (docs/experiments/ud-analysis.md).
"""

from __future__ import annotations

import zlib

import numpy as np
import torch
from torch import nn

from ..io.vocab import ROOT


class SuffixEmbedding(nn.Module):
    """[N, length * dim] vectors of word forms: for k = 1..length, the embedding of the
    lowercased form's last k characters (a zero vector where the form is shorter, and for the
    root token)."""

    drop_prob: torch.Tensor  # buffer

    def __init__(self, dim: int, length: int, buckets: int):
        super().__init__()
        if length < 1 or buckets < 2:
            raise ValueError(f"model.suffix_len={length} and model.suffix_buckets={buckets}: need at least 1 and 2")
        self.length, self.buckets = length, buckets
        self.table = nn.Embedding(buckets, dim, padding_idx=0)
        # zeros: a row no training word reaches stays "no suffix" instead of a random vector
        # the network never saw (the gradient of a row does not depend on its value)
        nn.init.zeros_(self.table.weight)
        self.out_dim = length * dim
        self._ids: dict[str, list[int]] = {}
        self.register_buffer("drop_prob", torch.zeros(buckets), persistent=False)

    def set_dropout(self, words: list[str], counts: list[int], alpha: float) -> None:
        """Drop each row in training with probability alpha / (alpha + count), its count the
        training ``counts`` of the ``words`` whose suffix it is (row 0 never)."""
        totals = torch.zeros(self.buckets)
        rows = torch.tensor([self.ids(w) for w in words], dtype=torch.long).reshape(len(words), self.length)
        totals.index_add_(0, rows.flatten(), torch.tensor(counts, dtype=torch.float).repeat_interleave(self.length))
        drop = alpha / (alpha + totals) if alpha > 0 else torch.zeros_like(totals)
        drop[0] = 0.0
        self.drop_prob.copy_(drop)

    def ids(self, form: str) -> list[int]:
        """The table rows of ``form``'s suffixes (row 0, a zero vector, where there is none)."""
        kept = self._ids.get(form)
        if kept is not None:
            return kept
        low = form.lower()
        rows = [0] * self.length
        if form != ROOT:
            for k in range(1, min(self.length, len(low)) + 1):
                rows[k - 1] = 1 + zlib.crc32(f"{k}\x00{low[-k:]}".encode()) % (self.buckets - 1)
        if len(self._ids) >= SUFFIX_CACHE:  # bounded memory on endless text
            self._ids.clear()
        self._ids[form] = rows
        return rows

    def forward(self, forms: list[str], device: torch.device) -> torch.Tensor:
        index = torch.from_numpy(
            np.array([self.ids(f) for f in forms], dtype=np.int64).reshape(len(forms), self.length)
        )
        index = index.to(device)
        if self.training:
            index = index.masked_fill(torch.rand(index.shape, device=device) < self.drop_prob[index], 0)
        return self.table(index).flatten(1)


# Forms whose rows ``SuffixEmbedding`` keeps between batches (EWT train has 20k distinct forms).
SUFFIX_CACHE = 200_000
