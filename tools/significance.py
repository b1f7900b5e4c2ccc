"""Paired bootstrap test over sentences: is system B's LAS (or UAS) better than system A's?

    python tools/significance.py GOLD.conllu --a A.conllu [A2.conllu ...] --b B.conllu [B2.conllu ...]
                                 [--metric las|uas] [--samples 10000] [--seed 1]

Each ``--a``/``--b`` file is a prediction for GOLD (e.g. a run's test.pred.conllu); with several
(one per seed), A_i is paired with B_i and their sentences are pooled, so the test is over
sentence-and-seed pairs. The test itself is ``nparse/eval/significance.py``: one-sided, for
B > A, as in Berg-Kirkpatrick et al. (2012).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from nparse.eval.significance import compare_files
from nparse.io.conllu import read_conllu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("gold", type=Path)
    ap.add_argument("--a", nargs="+", type=Path, required=True)
    ap.add_argument("--b", nargs="+", type=Path, required=True)
    ap.add_argument("--metric", choices=("las", "uas"), default="las")
    ap.add_argument("--samples", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    gold = read_conllu(args.gold)
    try:
        score_a, score_b, delta, p = compare_files(gold, args.a, args.b, args.metric, args.samples, args.seed)
    except ValueError as err:
        raise SystemExit(str(err)) from None
    print(
        f"{args.metric.upper()}: A {score_a:.2f}, B {score_b:.2f}, B - A {delta:+.2f}, p = {p:.4f} "
        f"(one-sided, {args.samples} paired bootstrap samples over {len(gold) * len(args.a)} sentences x runs)"
    )


if __name__ == "__main__":
    main()
