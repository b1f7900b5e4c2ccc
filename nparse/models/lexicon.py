"""Lexicon embeddings (``model.lexicon``, ``model.lexicon_dim``): the mean of embedded feature
strings that a Hunspell dictionary (``nparse.io.hunspell``) or a lexicon table
(``nparse.io.lexicon_table``, a ``.tsv`` or ``.tsv.gz`` path) gives a word form, read beside the
word, its characters and its suffixes.

Why: the tagger's errors are mostly on words unseen in training, whose characters are all it
reads; a morphological lexicon knows many of them. Feature strings are hashed (CRC-32, stable
across runs and machines) into ``buckets`` rows, so a checkpoint keeps no feature vocabulary.
It keeps the lexicon itself (its files' bytes, the module's extra state: 3.7 MB for
the Hungarian dictionary), so that a model parses where the dictionary is not installed, and with the
dictionary it was trained with.

Measured on hu_szeged (``archybrid_dynamic_ud``, 3 seeds, Debian's ``hunspell-hu``, dim 32):
UPOS +1.50 and LAS +1.52 (p < 0.0001; on unseen words UPOS 87.9 to 91.7), the first tagger
lever that moved UPOS; on el_gdt (``2planar_dynamic_ud``, 3 seeds, a table from spaCy's Greek
lookup tables) UPOS +0.45 and LAS +0.43. Off by default: a lexicon is per language, spylls'
lookups (about 10-20 ms a new form in Hungarian, its compound analyses most of it) slow parsing
to under 1,000 words/s, and a table of a million forms takes about 2 s to load
(docs/experiments/ud-analysis.md).
"""

from __future__ import annotations

import zlib
from contextlib import suppress

import numpy as np
import torch
from torch import nn

from ..io.hunspell import HunspellLexicon, read_dictionary
from ..io.lexicon_table import TableLexicon, is_table, read_table
from ..io.vocab import ROOT

FORMS_KEPT = 200_000  # forms whose hashed rows are kept (the lexicons keep no analyses of their own)


class LexiconEmbedding(nn.Module):
    """[N, dim] vectors of word forms: the mean of their lexicon features' rows (zeros for the
    root token)."""

    def __init__(self, path: str, dim: int, buckets: int):
        super().__init__()
        if buckets < 2:
            raise ValueError(f"model.lexicon_buckets={buckets}: need at least 2")
        self.path, self.buckets, self.out_dim = path, buckets, dim
        # the files are read now where they exist (training); a loaded checkpoint brings its own
        self.files: tuple[bytes, ...] | None = None
        with suppress(FileNotFoundError):
            self.files = read_lexicon(path)
        self._lexicon: HunspellLexicon | TableLexicon | None = None
        self.table = nn.EmbeddingBag(buckets, dim, mode="mean")
        nn.init.normal_(self.table.weight, std=0.1)
        self._ids: dict[str, list[int]] = {}

    @property
    def lexicon(self) -> HunspellLexicon | TableLexicon:
        if self._lexicon is None:
            self._lexicon = open_lexicon(self.path, self.dictionary())
        return self._lexicon

    def dictionary(self) -> tuple[bytes, ...]:
        """The lexicon's files (read from ``model.lexicon`` if no checkpoint gave them:
        a clear error where they are not there)."""
        if self.files is None:
            self.files = read_lexicon(self.path)
        return self.files

    def get_extra_state(self) -> torch.Tensor:
        files = self.dictionary()
        # a dictionary: the .aff's length, the .aff, the .dic; a table: its compressed bytes
        data = files[0] if len(files) == 1 else len(files[0]).to_bytes(8, "little") + files[0] + files[1]
        return torch.frombuffer(bytearray(data), dtype=torch.uint8)

    def set_extra_state(self, state: torch.Tensor) -> None:
        data = state.cpu().numpy().tobytes()
        if is_table(self.path):
            self.files = (data,)
        else:
            cut = 8 + int.from_bytes(data[:8], "little")
            self.files = (data[8:cut], data[cut:])
        self._lexicon = None
        self._ids.clear()

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, *args) -> None:
        """A state without the dictionary (checkpoints of 4ec9221) reads it from ``model.lexicon``."""
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys, *args)
        if prefix + "_extra_state" in missing_keys:
            missing_keys.remove(prefix + "_extra_state")

    def ids(self, form: str) -> list[int]:
        """The table rows of ``form``'s features (none for the root token)."""
        kept = self._ids.get(form)
        if kept is not None:
            return kept
        # surrogateescape: spylls reads 8-bit dictionaries' flags as escaped bytes (hu_HU's)
        features = [] if form == ROOT else self.lexicon.features(form)
        rows = [zlib.crc32(f.encode("utf-8", "surrogateescape")) % self.buckets for f in features]
        if len(self._ids) >= FORMS_KEPT:  # bounded memory on endless text
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


def read_lexicon(path: str) -> tuple[bytes, ...]:
    """The files of ``model.lexicon``: a table's compressed bytes, or a dictionary's .aff and .dic."""
    return (read_table(path),) if is_table(path) else read_dictionary(path)


def open_lexicon(path: str, files: tuple[bytes, ...]) -> HunspellLexicon | TableLexicon:
    """The lexicon that ``read_lexicon(path)`` gave the files of."""
    return TableLexicon(files[0], name=path) if is_table(path) else HunspellLexicon(files[0], files[1])
