"""The FEATS column: its syntax, checked where a model learns it, and the universal features
the CoNLL 2018 scorer compares (UFeats)."""

from __future__ import annotations

import re
from collections import Counter
from typing import Iterable

# Name=Value pairs joined by '|', a name with an optional layer ("Number[psor]"), values joined by ','.
FEATURE = re.compile(r"[A-Z][A-Za-z0-9]*(\[[a-z0-9]+\])?=[A-Z0-9][A-Za-z0-9]*(,[A-Z0-9][A-Za-z0-9]*)*")

# The features the CoNLL 2018 scorer keeps when it compares FEATS (UFeats, AllTags, MLAS).
UNIVERSAL_FEATURES = frozenset(
    "PronType NumType Poss Reflex Foreign Abbr Gender Animacy Number Case Definite Degree VerbForm Mood "
    "Tense Aspect Voice Evident Polarity Person Polite".split()
)


def feats_problem(feats: str) -> str | None:
    """Why ``feats`` is not a FEATS value of the CoNLL-U format, or None when it is."""
    if feats == "_":
        return None
    pairs = feats.split("|")
    for pair in pairs:
        if not FEATURE.fullmatch(pair):
            return f"FEATS {feats!r}: {pair!r} is not Name=Value (a name and values starting with a capital or a digit)"
    names = [p.split("=", 1)[0] for p in pairs]
    if names != sorted(names, key=str.lower):
        return f"FEATS {feats!r}: the features are not sorted by name"
    if len(set(names)) < len(names):
        return f"FEATS {feats!r}: a feature is given twice"
    return None


def universal_feats(feats: str) -> str:
    """FEATS as the CoNLL 2018 scorer compares it: the universal features only, sorted."""
    if feats == "_":
        return ""
    return "|".join(sorted(f for f in feats.split("|") if f.split("=", 1)[0] in UNIVERSAL_FEATURES))


class FeatureTables:
    """FEATS factored per feature (``model.feats_factored``): for every feature name of the
    training file, its values ("" for "not set" first), laid out one after the other in one
    score row (``offsets``), so that one layer scores every feature of a word and each feature is
    a softmax over its own columns. A FEATS value not seen whole in training can still be
    predicted, feature by feature."""

    IGNORE = -100  # a gold value this table does not know (cross-entropy's ignore_index)

    def __init__(self, values: dict[str, list[str]] | None = None):
        self.values = dict(values or {})  # name -> its values, "" (not set) first
        self.names = sorted(self.values, key=str.lower)  # UD's order of features in FEATS
        self.index = {name: {v: k for k, v in enumerate(self.values[name])} for name in self.names}
        sizes = [len(self.values[name]) for name in self.names]
        self.offsets = [sum(sizes[:k]) for k in range(len(sizes) + 1)]

    @classmethod
    def build(cls, feats: Iterable[str]) -> "FeatureTables":
        counts: dict[str, Counter[str]] = {}
        for value in feats:
            for name, v in pairs(value):
                counts.setdefault(name, Counter())[v] += 1
        return cls({name: ["", *sorted(c, key=lambda v: (-c[v], v))] for name, c in counts.items()})

    def __len__(self) -> int:
        """Columns of a score row: every value of every feature."""
        return self.offsets[-1]

    def gold(self, feats: str) -> list[int]:
        """The value index of every feature (0: not set; ``IGNORE`` for a value never seen)."""
        given = dict(pairs(feats))
        out = []
        for name in self.names:
            value = given.pop(name, "")
            out.append(self.index[name].get(value, self.IGNORE))
        return out

    def compose(self, chosen: list[int]) -> str:
        """The FEATS value of one word's chosen value index per feature."""
        parts = [f"{name}={self.values[name][k]}" for name, k in zip(self.names, chosen) if k]
        return "|".join(parts) or "_"

    def state_dict(self) -> dict:
        return {"values": self.values}

    @classmethod
    def from_state(cls, state: dict) -> "FeatureTables":
        return cls(state["values"])


def pairs(feats: str) -> list[tuple[str, str]]:
    """(name, value) of every feature of a FEATS value ("_": none)."""
    if feats in ("_", "", "<root>"):
        return []
    return [tuple(p.split("=", 1)) for p in feats.split("|")]  # type: ignore[misc]
