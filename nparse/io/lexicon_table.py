"""A lexicon table as a morphological lexicon (``model.lexicon=FILE.tsv`` or ``.tsv.gz``): what it
says of a word form, as a set of feature strings for ``nparse.models.lexicon.LexiconEmbedding``.

Why: many languages have no Hunspell dictionary that analyses words (Debian's Greek one is a
plain word list), but have a lexicon of forms and their tags: UniMorph's files, spaCy's lookup
tables (``tools/spacy_lexicon.py`` writes one), or a lab's own. The table has UniMorph's three
columns, ``lemma<TAB>form<TAB>features``, the features separated by ``;`` (``N;NOM;SG``). A
form's features are every part of its lines' feature sets and each whole set; a capitalised
form also gets its lowercase form's features, and ``case:exact`` / ``case:lower`` say which of
the two the table has (a name is listed capitalised, a common word at a sentence's start not).
"""

from __future__ import annotations

import gzip
import io
from collections.abc import Iterable
from pathlib import Path

NONE = "<none>"  # the table does not have the form
SUFFIXES = (".tsv", ".tsv.gz")


def is_table(path: str) -> bool:
    """Whether ``model.lexicon`` names a lexicon table (else a Hunspell dictionary)."""
    return str(path).endswith(SUFFIXES)


def read_table(path: str) -> bytes:
    """The table's gzip-compressed bytes (what a checkpoint carries; its lines are checked when
    they are read, ``parse_table``)."""
    file = Path(path)
    if not file.is_file():
        raise FileNotFoundError(
            f"model.lexicon={path}: no lexicon table there (a file of lines lemma<TAB>form<TAB>features; "
            "`python tools/spacy_lexicon.py --lang el --out el.tsv.gz` writes one from spaCy's lookup tables)"
        )
    data = file.read_bytes()
    return data if path.endswith(".gz") else gzip.compress(data, mtime=0)


def parse_table(packed: bytes, name: str = "lexicon table") -> dict[str, tuple[str, ...]]:
    """Each form's features (sorted, distinct), from the table's gzip-compressed bytes."""
    try:
        return read_lines(io.TextIOWrapper(gzip.GzipFile(fileobj=io.BytesIO(packed)), encoding="utf-8"), name)
    except (OSError, EOFError, UnicodeDecodeError) as e:
        raise ValueError(f"{name}: not a UTF-8 lexicon table ({e})") from e


def read_lines(lines: Iterable[str], name: str) -> dict[str, tuple[str, ...]]:
    """Each form's features from the table's lines (``name`` for errors at ``name:line``)."""
    # forms share their feature tuples (a million Greek forms have a few thousand distinct ones)
    bundles: dict[str, tuple[str, ...]] = {}
    merged: dict[tuple[str, ...], tuple[str, ...]] = {}
    found: dict[str, tuple[str, ...]] = {}
    for number, line in enumerate(lines, start=1):
        if line.startswith("#") or not line.strip():
            continue
        columns = line.rstrip("\r\n").split("\t")
        if len(columns) != 3 or not columns[1]:
            raise ValueError(
                f"{name}:{number}: expected lemma<TAB>form<TAB>features, got {len(columns)} column(s): {line[:80]!r}"
            )
        features = bundles.get(columns[2])
        if features is None:
            features = bundles[columns[2]] = bundle_features(columns[2])
        before = found.get(columns[1])
        if before is not None and before != features:
            features = tuple(sorted(set(before) | set(features)))
            features = merged.setdefault(features, features)
        found[columns[1]] = features
    return found


def bundle_features(tags: str) -> tuple[str, ...]:
    """The features of one line's feature set: each part, and the whole set when it has several."""
    parts = [t for t in tags.strip().split(";") if t]
    return tuple(sorted(set(parts) | ({";".join(parts)} if len(parts) > 1 else set()))) if parts else ("known",)


class TableLexicon:
    """``features(form)``: the distinct feature strings the table gives a form (see the module),
    at most ``limit``, ``["<none>"]`` when it has neither the form nor its lowercase form."""

    def __init__(self, packed: bytes, limit: int = 64, name: str = "lexicon table"):
        self.limit = limit
        self.table = parse_table(packed, name)

    @classmethod
    def from_path(cls, path: str) -> TableLexicon:
        return cls(read_table(path), name=path)

    def features(self, form: str) -> list[str]:
        exact = self.table.get(form)
        lower = form.lower()
        if lower == form:
            return list(exact[: self.limit]) if exact else [NONE]
        folded = self.table.get(lower)
        found = set(exact or ()) | set(folded or ())
        if not found:
            return [NONE]
        marks = (["case:exact"] if exact else []) + (["case:lower"] if folded else [])
        return marks + sorted(found)[: self.limit - len(marks)]
