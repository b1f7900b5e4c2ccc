"""Lemma errors that differ from gold only in case, and why: a wrong UPOS at the word (NOUN and
PROPN confused, above all), or a form whose training lemmas come in both casings (the
treebank's own inconsistency). Says whether a lemma rule or a better tagger would fix them.

    python experiments/lemma_case.py --data en_ewt --run runs/s77/lexsp_en/en_ewt_s3

``--run`` is a run folder with ``test.pred.conllu`` (``experiments/seed_runs.py``); the counts
are over the words of the test file.
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from pathlib import Path

from common import split_path, treebank

from nparse.io.conllu import read_conllu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True)
    ap.add_argument("--run", type=Path, required=True, help="a run folder with test.pred.conllu")
    args = ap.parse_args()
    files = treebank(args.data)
    casings: defaultdict[str, set[str]] = defaultdict(set)  # lowercased form -> its training lemmas
    for s in read_conllu(split_path(files, "train")):
        for form, lemma in zip(s.forms[1:], s.lemmas[1:]):
            casings[form.lower()].add(lemma)
    gold, pred = read_conllu(split_path(files, "test")), read_conllu(args.run / "test.pred.conllu")
    words = errors = case = tag_wrong = noun_propn = both = 0
    for g, p in zip(gold, pred, strict=True):
        for i in range(1, len(g) + 1):
            words += 1
            if g.lemmas[i] == p.lemmas[i]:
                continue
            errors += 1
            if g.lemmas[i].lower() != p.lemmas[i].lower():
                continue
            case += 1
            if g.upos[i] != p.upos[i]:
                tag_wrong += 1
                noun_propn += {g.upos[i], p.upos[i]} == {"NOUN", "PROPN"}
            elif len({lemma for lemma in casings[g.forms[i].lower()] if lemma.lower() == g.lemmas[i].lower()}) > 1:
                both += 1
    print(f"{words} words, {errors} lemma errors, {case} of them in case only")
    print(f"  {tag_wrong} with a wrong UPOS at the word ({noun_propn} NOUN and PROPN confused)")
    print(f"  {case - tag_wrong} with the right UPOS, {both} of them forms whose training lemmas come in both casings")


if __name__ == "__main__":
    main()
