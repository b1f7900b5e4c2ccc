"""The FEATS column: its syntax, checked where a model learns it, and the universal features
the CoNLL 2018 scorer compares (UFeats)."""

from __future__ import annotations

import re

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
