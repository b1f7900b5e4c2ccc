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

from common import split_path, treebank

from nparse.io.conllu import read_conllu

GROUPS = (
    ("all", "every word"),
    ("seen", "seen in training"),
    ("unseen", "unseen in training"),
    ("both_ok", "UPOS right, and its head's"),
    ("head_err", "UPOS right, its head's wrong"),
    ("own_err", "UPOS wrong"),
)


def count(test: list, pred_dir: Path, tag_dir: Path, seen: set[str], data: str) -> Counter:
    """{(group, "n" | "las"): words over the seeds found in both folders}."""
    c: Counter = Counter()
    for run in sorted(tag_dir.glob(f"{data}_s*")):
        pred_file = pred_dir / run.name / "test.pred.conllu"
        if not pred_file.is_file() or not (run / "test.pred.conllu").is_file():
            continue
        pred, tags = read_conllu(pred_file), read_conllu(run / "test.pred.conllu")
        for g, p, t in zip(test, pred, tags, strict=True):
            for i in range(1, len(g.forms)):
                h = g.heads[i]
                own = t.upos[i] == g.upos[i]
                head = h == 0 or t.upos[h] == g.upos[h]
                context = "both_ok" if own and head else ("head_err" if own else "own_err")
                right = p.heads[i] == h and p.deprels[i].split(":")[0] == g.deprels[i].split(":")[0]
                for group in ("all", "seen" if g.forms[i] in seen else "unseen", context):
                    c[(group, "n")] += 1
                    c[(group, "las")] += right
    return c


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True)
    ap.add_argument("--predicted", type=Path, required=True, help="the arm that predicts its tags")
    ap.add_argument("--gold", type=Path, required=True, help="the arm that reads gold UPOS")
    args = ap.parse_args()
    files = treebank(args.data)
    seen = {f for s in read_conllu(split_path(files, "train")) for f in s.forms[1:]}
    test = read_conllu(split_path(files, "test"))
    ours = count(test, args.predicted, args.predicted, seen, args.data)
    gold = count(test, args.gold, args.predicted, seen, args.data)
    if not ours[("all", "n")] or ours[("all", "n")] != gold[("all", "n")]:
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
