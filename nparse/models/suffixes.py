"""Suffix embeddings: a word's last 1 to ``length`` characters, each hashed into a table.

Why: a third of hu_szeged's test words and a sixth of el_gdt's are unseen in training, and
their UPOS and FEATS are mostly written in their endings. The character BiLSTM reads the
endings too, but through its final states; an embedding per ending is a direct, cheap feature
(spaCy's tagger embeds the suffix beside the norm). Hashing (CRC-32, stable across runs and
machines, unlike Python's ``hash``) needs no vocabulary in the checkpoint.
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

    def __init__(self, dim: int, length: int, buckets: int):
        super().__init__()
        if length < 1 or buckets < 2:
            raise ValueError(f"model.suffix_len={length} and model.suffix_buckets={buckets}: need at least 1 and 2")
        self.length, self.buckets = length, buckets
        self.table = nn.Embedding(buckets, dim, padding_idx=0)
        self.out_dim = length * dim
        self._ids: dict[str, list[int]] = {}

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
        return self.table(index.to(device)).flatten(1)


# Forms whose rows ``SuffixEmbedding`` keeps between batches (EWT train has 20k distinct forms).
SUFFIX_CACHE = 200_000
