"""Lexicon embeddings (``model.lexicon``, ``model.lexicon_dim``): the mean of embedded feature
strings that a Hunspell dictionary gives a word form (``nparse.io.hunspell``), read beside the
word, its characters and its suffixes.

Why: the tagger's errors are mostly on words unseen in training, whose characters are all it
reads; a morphological lexicon knows many of them. Feature strings are hashed (CRC-32, stable
across runs and machines) into ``buckets`` rows, so a checkpoint keeps no feature vocabulary;
it keeps the dictionary's path, which must exist where the model parses.
"""

from __future__ import annotations

import zlib

import numpy as np
import torch
from torch import nn

from ..io.hunspell import HunspellLexicon
from ..io.vocab import ROOT


class LexiconEmbedding(nn.Module):
    """[N, dim] vectors of word forms: the mean of their lexicon features' rows (zeros for the
    root token)."""

    def __init__(self, path: str, dim: int, buckets: int):
        super().__init__()
        if buckets < 2:
            raise ValueError(f"model.lexicon_buckets={buckets}: need at least 2")
        self.lexicon = HunspellLexicon(path)
        self.buckets, self.out_dim = buckets, dim
        self.table = nn.EmbeddingBag(buckets, dim, mode="mean")
        nn.init.normal_(self.table.weight, std=0.1)
        self._ids: dict[str, list[int]] = {}

    def ids(self, form: str) -> list[int]:
        """The table rows of ``form``'s features (none for the root token)."""
        kept = self._ids.get(form)
        if kept is not None:
            return kept
        # surrogateescape: spylls reads 8-bit dictionaries' flags as escaped bytes (hu_HU's)
        features = [] if form == ROOT else self.lexicon.features(form)
        rows = [zlib.crc32(f.encode("utf-8", "surrogateescape")) % self.buckets for f in features]
        if len(self._ids) >= self.lexicon.cache:
            self._ids.clear()
        self._ids[form] = rows
        return rows

    def forward(self, forms: list[str], device: torch.device) -> torch.Tensor:
        if not forms:
            return torch.zeros((0, self.out_dim), device=device)
        rows = [self.ids(f) for f in forms]
        lengths = np.fromiter(map(len, rows), dtype=np.int64, count=len(rows))
        flat = torch.from_numpy(np.fromiter((r for row in rows for r in row), dtype=np.int64, count=int(lengths.sum())))
        offsets = torch.from_numpy(np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64))
        return self.table(flat.to(device), offsets.to(device))  # an empty bag (the root) is zeros
