"""A Hunspell dictionary as a morphological lexicon (``model.lexicon``): what it says of a word
form, as a set of feature strings for ``nparse.models.lexicon.LexiconEmbedding``.

Why: a third of hu_szeged's test words are unseen in training, and seven in ten of the tagger's
UPOS errors fall on them. A Hunspell dictionary knows most of them (85% of those test words):
the LibreOffice Hungarian one (Debian's ``hunspell-hu``) gives each analysis's part of speech
(``po:noun``), derivation (``ds:``) and inflection (``is:``, ``ts:``), and every dictionary
gives the stem's flags (in ``en_US``, its inflection classes) and the affixes that build the form.
Read with spylls, a pure-Python Hunspell (``pip install nparse[lexicon]``).
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

# The morphological fields of an analysis that become features (Hunspell's two-letter keys:
# part of speech, derivational and inflectional suffixes, terminal suffix).
MORPH_KEYS = ("po", "ds", "is", "ts")
NONE = "<none>"  # the dictionary has no analysis of the form


def dictionary_files(path: str) -> tuple[Path, Path]:
    """The ``.aff`` and ``.dic`` files of ``path`` (given with or without either suffix)."""
    base = Path(path)
    if base.suffix in (".aff", ".dic"):
        base = base.with_suffix("")
    aff, dic = base.with_suffix(".aff"), base.with_suffix(".dic")
    missing = [str(p) for p in (aff, dic) if not p.is_file()]
    if missing:
        raise FileNotFoundError(
            f"model.lexicon={path}: no Hunspell dictionary there (missing {', '.join(missing)}); on Debian "
            "`apt-get install hunspell-hu` installs /usr/share/hunspell/hu_HU.aff and .dic (hunspell-LANG for others)"
        )
    return aff, dic


def read_dictionary(path: str) -> tuple[bytes, bytes]:
    """The bytes of the ``.aff`` and ``.dic`` files of ``path``."""
    aff, dic = dictionary_files(path)
    return aff.read_bytes(), dic.read_bytes()


class HunspellLexicon:
    """``features(form)``: the distinct feature strings of a form's analyses, at most ``limit``
    (the stems' flags after the rest; hu_HU gives a form 19 on average, up to 54),
    ``["<none>"]`` when the dictionary does not know it. Not kept per form: its one user,
    ``models.lexicon.LexiconEmbedding``, keeps each form's hashed rows. Built from the
    dictionary's bytes, so that a checkpoint can carry them (``read_dictionary``)."""

    def __init__(self, aff: bytes, dic: bytes, limit: int = 64):
        try:
            from spylls.hunspell import Dictionary  # type: ignore[import-untyped]
        except ImportError as e:
            raise ImportError("model.lexicon needs spylls: pip install nparse[lexicon]") from e
        self.limit = limit
        with tempfile.TemporaryDirectory(prefix="nparse-lexicon-") as folder:  # spylls reads files
            base = Path(folder) / "lexicon"
            base.with_suffix(".aff").write_bytes(aff)
            base.with_suffix(".dic").write_bytes(dic)
            self.dictionary = Dictionary.from_files(str(base))

    @classmethod
    def from_path(cls, path: str) -> HunspellLexicon:
        return cls(*read_dictionary(path))

    def features(self, form: str) -> list[str]:
        found: set[str] = set()
        for candidate in (form, form.lower()) if form != form.lower() else (form,):
            for analysis in self.analyses(candidate):
                found.update(analysis_features(analysis))
            if found:
                break
        # the analyses' morphology and affixes first, then the stems' flags: a cap cuts flags
        return sorted(found, key=lambda f: (f.startswith("flag:"), f))[: self.limit] if found else [NONE]

    def analyses(self, form: str) -> list[Any]:
        """spylls' analyses of ``form`` (none for forms it cannot read, such as empty strings)."""
        if not form or form.isspace():
            return []
        try:
            return list(self.dictionary.lookuper.good_forms(form))
        except (IndexError, KeyError, ValueError, RecursionError):  # spylls on odd input
            return []


def analysis_features(analysis: Any) -> list[str]:
    """The features of one spylls analysis: a compound is read by its last part (the head in
    Hungarian and English), marked ``compound``."""
    out = []
    if hasattr(analysis, "parts"):
        out.append("compound")
        analysis = analysis.parts[-1]
    word = analysis.in_dictionary
    if word is not None:
        out.extend(f"flag:{flag}" for flag in word.flags)
        for key in MORPH_KEYS:
            out.extend(f"{key}:{value}" for value in word.data.get(key, ()))
    for name in ("prefix", "prefix2", "suffix", "suffix2"):
        affix = getattr(analysis, name)
        if affix is not None:
            out.append(f"{name}:{affix.flag}:{affix.add}")
    return out or ["known"]
