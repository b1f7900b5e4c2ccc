"""Which UPOS errors cost LAS: the test words a predicting model tagged wrong, grouped by the
(unordered) pair of gold and predicted UPOS, with the words per seed, the model's LAS on them and,
given a gold-UPOS arm, that arm's LAS on the same words. Says whether a better tagger should aim
at the errors that are frequent or at the ones that break the tree.

    python experiments/tag_confusions.py --data el_gdt --predicted runs/ft8/decay_el --gold runs/goldud_el3

Both arms are folders of runs ``<data>_s<seed>`` (``experiments/seed_runs.py``), paired by seed
(the gold arm is optional); LAS as CoNLL 2018 counts it on gold tokens (every word, the
universal part of DEPREL); "unseen" words do not occur in the training file.
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from common import attached, split_path, treebank

from nparse.io.conllu import read_conllu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True)
    ap.add_argument("--predicted", type=Path, required=True, help="the arm that predicts its tags")
    ap.add_argument("--gold", type=Path, help="an arm that reads gold UPOS (optional)")
    ap.add_argument("--top", type=int, default=8, help="confusion pairs to list")
    args = ap.parse_args()
    files = treebank(args.data)
    seen = {f for s in read_conllu(split_path(files, "train")) for f in s.forms[1:]}
    test = read_conllu(split_path(files, "test"))
    n: Counter = Counter()  # (group) -> words, summed over seeds
    ours: Counter = Counter()  # (group) -> words the predicting arm attached right
    theirs: Counter = Counter()  # (group) -> words the gold-UPOS arm attached right
    seeds = 0
    for run in sorted(args.predicted.glob(f"{args.data}_s*")):
        if not (run / "test.pred.conllu").is_file():
            continue
        other = args.gold / run.name / "test.pred.conllu" if args.gold else None
        if other is not None and not other.is_file():
            continue
        seeds += 1
        gold_arm = read_conllu(other) if other is not None else [None] * len(test)
        for g, p, q in zip(test, read_conllu(run / "test.pred.conllu"), gold_arm, strict=True):
            for i in range(1, len(g) + 1):
                unseen = g.forms[i] not in seen
                n["unseen words"] += unseen
                if p.upos[i] == g.upos[i]:
                    groups = ["UPOS right"]
                else:
                    n["errors on unseen words"] += unseen
                    groups = ["UPOS wrong", "/".join(sorted((g.upos[i], p.upos[i])))]
                for group in groups:
                    n[group] += 1
                    ours[group] += attached(p, g, i)
                    if q is not None:
                        theirs[group] += attached(q, g, i)
    if not seeds:
        raise SystemExit("no seed with test.pred.conllu in both arms")
    words, errors = n["UPOS right"] + n["UPOS wrong"], n["UPOS wrong"]
    unseen, unseen_errors = n["unseen words"], n["errors on unseen words"]
    seen_upos = 100 - 100 * (errors - unseen_errors) / (words - unseen)
    unseen_upos = 100 - 100 * unseen_errors / unseen
    print(
        f"{args.data} test, {seeds} seeds: UPOS {100 * n['UPOS right'] / words:.2f}; "
        f"{100 * unseen / words:.1f}% of the words are unseen in training and carry "
        f"{100 * unseen_errors / errors:.1f}% of the UPOS errors "
        f"(UPOS {seen_upos:.2f} on seen words, {unseen_upos:.2f} on unseen ones)"
    )
    print(
        "| gold/predicted UPOS | words per seed | share of the errors | LAS, predicting | LAS, gold UPOS | LAS points lost to gold UPOS |"
    )
    print("|---|---|---|---|---|---|")
    pairs = sorted((k for k in n if "/" in k), key=lambda k: -n[k])[: args.top]
    for group in ["UPOS right", "UPOS wrong", *pairs]:
        share = f"{100 * n[group] / errors:.1f}%" if group != "UPOS right" else ""
        mine = 100 * ours[group] / n[group]
        if args.gold:
            gold_las = 100 * theirs[group] / n[group]
            lost = f"{100 * (theirs[group] - ours[group]) / words:.2f}"
            gold_cell = f"{gold_las:.2f}"
        else:
            gold_cell = lost = "-"
        print(f"| {group} | {n[group] / seeds:.1f} | {share} | {mine:.2f} | {gold_cell} | {lost} |")


if __name__ == "__main__":
    main()
