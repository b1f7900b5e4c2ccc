"""Vocabularies: string <-> index tables with training counts (for word dropout)."""

from __future__ import annotations

import re
from collections import Counter
from typing import Iterable

PAD, UNK, ROOT = "<pad>", "<unk>", "<root>"
_NUMBER = re.compile(r"^[0-9]+(?:[.,:/-][0-9]+)*$")
_DIGIT = re.compile(r"[0-9]")


def normalize(form: str, lowercase: bool) -> str:
    """Word-embedding key: numbers collapse to one symbol (as in Kiperwasser & Goldberg)."""
    if _NUMBER.match(form):
        return "<num>"
    return form.lower() if lowercase else form


def normalize_all(forms: list[str], lowercase: bool) -> list[str]:
    """``[normalize(f, lowercase) for f in forms]``, with one digit search for a sentence
    without numbers (most of them) instead of a pattern match per word."""
    if _DIGIT.search("".join(forms)):
        return [normalize(f, lowercase) for f in forms]
    return list(map(str.lower, forms)) if lowercase else list(forms)


class Vocab:
    """Indices 0, 1, 2 are padding, unknown and root; the rest are sorted by frequency."""

    def __init__(self, counts: Counter[str] | None = None, specials: bool = True):
        self.itos: list[str] = [PAD, UNK, ROOT] if specials else []
        self.counts: list[int] = [0] * len(self.itos)
        for item, count in sorted((counts or Counter()).items(), key=lambda kv: (-kv[1], kv[0])):
            if item not in (PAD, UNK, ROOT):
                self.itos.append(item)
                self.counts.append(count)
        self.stoi = {s: i for i, s in enumerate(self.itos)}
        self.specials = specials

    @classmethod
    def build(cls, items: Iterable[str], specials: bool = True) -> "Vocab":
        return cls(Counter(items), specials)

    def add(self, item: str) -> int:
        """Index of item, adding it (with count 0) if new."""
        idx = self.stoi.get(item)
        if idx is None:
            idx = self.stoi[item] = len(self.itos)
            self.itos.append(item)
            self.counts.append(0)
        return idx

    def __len__(self) -> int:
        return len(self.itos)

    def __contains__(self, item: str) -> bool:
        return item in self.stoi

    def index(self, item: str) -> int:
        return self.stoi.get(item, 1 if self.specials else -1)

    def indices(self, items: list[str]) -> list[int]:
        """``[self.index(x) for x in items]``, looked up in C (``map``): encoding sentences was 7%
        of parsing EWT with the fast model."""
        found = list(map(self.stoi.get, items))
        if None in found:
            unknown = 1 if self.specials else -1
            return [unknown if i is None else i for i in found]
        return found  # type: ignore[return-value]

    def state_dict(self) -> dict:
        return {"itos": self.itos, "counts": self.counts, "specials": self.specials}

    @classmethod
    def from_state(cls, state: dict) -> "Vocab":
        vocab = cls(specials=False)
        vocab.itos = list(state["itos"])
        vocab.counts = list(state["counts"])
        vocab.specials = state["specials"]
        vocab.stoi = {s: i for i, s in enumerate(vocab.itos)}
        return vocab
