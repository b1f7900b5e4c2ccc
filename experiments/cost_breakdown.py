"""Where predicting the tags costs LAS: the test words of a treebank split by what the predicting
model got right (its UPOS for the word, and for the word's gold head), with the LAS of each arm
on each group and the share of the gap between the two arms that each group carries.

    python experiments/cost_breakdown.py --data hu_szeged --predicted runs/feed0_hu40 --gold runs/gold_hu40

Both arms are folders of runs ``<data>_s<seed>`` (``experiments/seed_runs.py``), paired by seed;
the groups come from the predicting arm's tags of the same seed. LAS as CoNLL 2018 counts it on
gold tokens (every word, the universal part of DEPREL); "unseen" words do not occur in the
training file.
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path

from common import attached, split_path, treebank

from nparse.io.conllu import read_conllu

GROUPS = (
    ("all", "every word"),
    ("seen", "seen in training"),
    ("unseen", "unseen in training"),
    ("both_ok", "UPOS right, and its head's"),
    ("head_err", "UPOS right, its head's wrong"),
    ("own_err", "UPOS wrong"),
)


def count(test: list, predicted: Path, gold: Path, seen: set[str], data: str) -> tuple[Counter, Counter]:
    """{(group, "n" | "las"): words} of the predicting arm and of the gold-UPOS arm, summed over
    the seeds found in both folders; the groups come from the predicting arm's tags."""
    ours: Counter = Counter()
    theirs: Counter = Counter()
    for run in sorted(predicted.glob(f"{data}_s*")):
        other = gold / run.name / "test.pred.conllu"
        if not other.is_file() or not (run / "test.pred.conllu").is_file():
            continue
        for g, p, q in zip(test, read_conllu(run / "test.pred.conllu"), read_conllu(other), strict=True):
            for i in range(1, len(g) + 1):
                h = g.heads[i]
                own = p.upos[i] == g.upos[i]
                head = h == 0 or p.upos[h] == g.upos[h]
                context = "both_ok" if own and head else ("head_err" if own else "own_err")
                for c, pred in ((ours, p), (theirs, q)):
                    right = attached(pred, g, i)
                    for group in ("all", "seen" if g.forms[i] in seen else "unseen", context):
                        c[(group, "n")] += 1
                        c[(group, "las")] += right
    return ours, theirs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True)
    ap.add_argument("--predicted", type=Path, required=True, help="the arm that predicts its tags")
    ap.add_argument("--gold", type=Path, required=True, help="the arm that reads gold UPOS")
    args = ap.parse_args()
    files = treebank(args.data)
    seen = {f for s in read_conllu(split_path(files, "train")) for f in s.forms[1:]}
    test = read_conllu(split_path(files, "test"))
    ours, gold = count(test, args.predicted, args.gold, seen, args.data)
    if not ours[("all", "n")]:
        raise SystemExit("the two arms have no seed in common (runs <data>_s<seed> with test.pred.conllu)")
    total = ours[("all", "n")]
    gap = (gold[("all", "las")] - ours[("all", "las")]) / total
    print(
        f"| words ({args.data} test, summed over seeds) | share of words | LAS, gold UPOS | LAS, predicted | gap | share of the gap |"
    )
    print("|---|---|---|---|---|---|")
    for group, name in GROUPS:
        n = ours[(group, "n")]
        if not n:
            continue
        a, b = 100 * gold[(group, "las")] / n, 100 * ours[(group, "las")] / n
        share = (gold[(group, "las")] - ours[(group, "las")]) / total / gap if gap else 0.0
        print(f"| {name} | {100 * n / total:.1f}% | {a:.2f} | {b:.2f} | {a - b:.2f} | {100 * share:.0f}% |")


if __name__ == "__main__":
    main()
