"""A lexicon table for ``model.lexicon`` from spaCy's lookup tables (the ``spacy-lookups-data``
package, MIT; spaCy itself is not needed):

    pip install spacy-lookups-data
    python tools/spacy_lexicon.py --lang el --out el.tsv.gz
    python -m nparse.train ... model.lexicon=el.tsv.gz model.lexicon_dim=32

Why: where no Hunspell dictionary analyses words (Debian's Greek one is a plain word list),
spaCy's rule lemmatizer tables still know a language's parts of speech: an index of lemmas per
part of speech and the suffix rules that turn a form into its lemma. A form of the language's
word list (``LANG_lexeme_prob``, a million Greek forms with their log probabilities in a large
corpus) gets one line per analysis, ``lemma<TAB>form<TAB>POS;rule=OLD>NEW``, as spaCy's
lemmatizer finds them, and every listed form a line with its frequency class, ``freq=K`` (K =
minus its log probability, rounded down: 3 for the commonest words, 20 for the rarest), and its
word cluster where the language has them (``LANG_lexeme_cluster``: English's Brown clusters of a
million forms, ``cluster=N``). The table's columns are UniMorph's (``nparse/io/lexicon_table.py``).
"""

from __future__ import annotations

import argparse
import gzip
import json
from collections.abc import Iterator
from pathlib import Path

Rules = dict[str, list[tuple[str, str]]]  # a suffix -> the (part of speech, lemma suffix) it turns into


def package_data() -> Path:
    """Where the installed ``spacy-lookups-data`` keeps its tables."""
    try:
        import spacy_lookups_data  # type: ignore[import-not-found]
    except ImportError as e:
        raise SystemExit("needs spaCy's lookup tables: pip install spacy-lookups-data (or give --data DIR)") from e
    return Path(spacy_lookups_data.__file__).parent / "data"


def load(data: Path, lang: str, name: str) -> dict:
    """``{lang}_{name}.json[.gz]`` from ``data``; empty when the language has no such table."""
    for path in (data / f"{lang}_{name}.json.gz", data / f"{lang}_{name}.json"):
        if path.is_file():
            opener = gzip.open if path.suffix == ".gz" else open
            with opener(path, "rt", encoding="utf-8") as f:
                return json.load(f)
    return {}


class RuleAnalyser:
    """spaCy's rule lemmatizer as an analyser: every (lemma, part of speech, rule) of a lowercase form."""

    def __init__(self, index: dict[str, list[str]], rules: dict[str, list[list[str]]], exc: dict[str, dict]):
        self.index = {pos: set(lemmas) for pos, lemmas in index.items()}
        self.exc = exc
        self.by_suffix: Rules = {}
        for pos, pairs in rules.items():
            for old, new in pairs:
                self.by_suffix.setdefault(old, []).append((pos, new))
        self.longest = max(map(len, self.by_suffix), default=0)

    def analyses(self, form: str) -> set[tuple[str, str, str]]:
        found = {(form, pos, "rule=lemma") for pos, lemmas in self.index.items() if form in lemmas}
        for pos, table in self.exc.items():
            found.update((lemma, pos, "rule=exc") for lemma in table.get(form, ()))
        for size in range(min(self.longest, len(form) - 1) + 1):
            old = form[len(form) - size :] if size else ""
            for pos, new in self.by_suffix.get(old, ()):
                lemma = form[: len(form) - size] + new
                if lemma in self.index.get(pos, ()):
                    found.add((lemma, pos, f"rule={old}>{new}"))
        return found


def lines(data: Path, lang: str) -> Iterator[str]:
    """The table's lines: the listed forms' analyses (under the lowercase form) and frequency classes."""
    index, rules = load(data, lang, "lemma_index"), load(data, lang, "lemma_rules")
    if not index or not rules:
        raise SystemExit(f"{data}: no {lang}_lemma_index and {lang}_lemma_rules tables for --lang {lang}")
    analyser = RuleAnalyser(index, rules, load(data, lang, "lemma_exc"))
    prob: dict[str, float] = load(data, lang, "lexeme_prob")
    forms = {form.lower() for form in prob} | {lemma for lemmas in index.values() for lemma in lemmas}
    for form in sorted(filter(writable, forms)):
        for lemma, pos, rule in sorted(analyser.analyses(form)):
            yield f"{lemma}\t{form}\t{pos.upper()};{rule}"
    clusters: dict[str, int] = load(data, lang, "lexeme_cluster")
    for form in sorted(filter(writable, prob.keys() | clusters.keys())):
        tags = ([f"freq={int(-prob[form])}"] if form in prob else []) + (
            [f"cluster={clusters[form]}"] if form in clusters else []
        )
        yield f"_\t{form}\t{';'.join(tags)}"


def writable(form: str) -> bool:
    """Whether a form can be a table's column (no tab, no line break, not blank)."""
    return bool(form.strip()) and not any(c in form for c in "\t\r\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lang", required=True, help="spaCy's language code (el, en, ...)")
    ap.add_argument("--out", type=Path, required=True, help="the table to write (.tsv or .tsv.gz)")
    ap.add_argument("--data", type=Path, help="the tables' folder (default: the installed spacy-lookups-data)")
    args = ap.parse_args()
    if not str(args.out).endswith((".tsv", ".tsv.gz")):
        raise SystemExit(f"--out {args.out}: name it .tsv or .tsv.gz (model.lexicon reads those as a table)")
    data = args.data or package_data()
    opener = gzip.open if str(args.out).endswith(".gz") else open
    count = 0
    with opener(args.out, "wt", encoding="utf-8") as out:
        out.write(f"# nparse lexicon table from spaCy's lookup tables: {args.lang}, {data}\n")
        for line in lines(data, args.lang):
            out.write(line + "\n")
            count += 1
    print(f"wrote {count:,} lines to {args.out}")


if __name__ == "__main__":
    main()
