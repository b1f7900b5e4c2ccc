"""Paired bootstrap test over sentences: is system B's LAS (or UAS, or a CoNLL 2018 metric) better than A's?

    python tools/significance.py GOLD.conllu --a A.conllu [A2.conllu ...] --b B.conllu [B2.conllu ...]
                                 [--metric las|uas] [--samples 10000] [--seed 1]

Each ``--a``/``--b`` file is a prediction for GOLD (e.g. a run's test.pred.conllu); with several
(one per seed), A_i is paired with B_i and their sentences are pooled, so the test is over
sentence-and-seed pairs. The test itself is ``nparse/eval/significance.py``: one-sided, for
B > A, as in Berg-Kirkpatrick et al. (2012). ``--labels`` adds the label accuracy of A and B on
the words both attach to their gold head (is a LAS difference in the labels or in the heads?).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from nparse.eval.significance import METRICS, compare_files, label_accuracy_on_shared_heads
from nparse.io.conllu import read_conllu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("gold", type=Path)
    ap.add_argument("--a", nargs="+", type=Path, required=True)
    ap.add_argument("--b", nargs="+", type=Path, required=True)
    ap.add_argument(
        "--metric",
        choices=METRICS,
        default="las",
        help="las, uas, or a CoNLL 2018 metric (clas, mlas, blex: F1 over content words, as the scorer counts them)",
    )
    ap.add_argument("--samples", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--labels", action="store_true", help="also label accuracy on the words both attach right")
    args = ap.parse_args()
    try:
        gold = read_conllu(args.gold)
        score_a, score_b, delta, p = compare_files(gold, args.a, args.b, args.metric, args.samples, args.seed)
        shared = label_accuracy_on_shared_heads(gold, args.a, args.b) if args.labels else None
    except (ValueError, OSError) as err:  # (a bad or missing file: its message names it)
        raise SystemExit(f"error: {err}") from None
    print(
        f"{args.metric.upper()}: A {score_a:.2f}, B {score_b:.2f}, B - A {delta:+.2f}, p = {p:.4f} "
        f"(one-sided, {args.samples} paired bootstrap samples over {len(gold) * len(args.a)} sentences x runs)"
    )
    if shared is not None:
        words, acc_a, acc_b = shared
        print(f"label accuracy on the {words} words both attach to the gold head: A {acc_a:.2f}, B {acc_b:.2f}")


if __name__ == "__main__":
    main()
