"""The arms of a comparison scored as users compare parsers: every CoNLL 2018 metric of each
seed's test predictions (``test.pred.conllu``), mean ± sd over seeds, and the paired bootstrap
of each arm against the first on the metrics asked for.

    python experiments/ud_table.py --data hu_szeged --arms ud=runs/ud_hu layer=runs/ud_layer_hu
                                   [--gold ../shared/data/ud/hu_szeged/hu_szeged-ud-test.conllu]
                                   [--test las mlas lemmas] [--samples 10000]

An arm is a folder of runs named ``<data>_s<seed>`` (``experiments/seed_runs.py``); the seeds
found in every arm are compared, paired by seed (``nparse/eval/significance.py``; CLAS, MLAS and
BLEX as the scorer's F1 over content words).
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

from nparse.eval.aligned import LABELS, aligned_scores
from nparse.eval.significance import compare_files
from nparse.io.conllu import read_conllu

SHOWN = ("upos", "xpos", "ufeats", "alltags", "lemmas", "uas", "las", "clas", "mlas", "blex")


def seeds_of(folder: Path, data: str) -> dict[int, Path]:
    """Seed -> the run's test predictions, for the finished runs of an arm."""
    out = {}
    for run in sorted(folder.glob(f"{data}_s*")):
        pred = run / "test.pred.conllu"
        if pred.is_file():
            out[int(run.name.rsplit("_s", 1)[1])] = pred
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True)
    ap.add_argument("--arms", nargs="+", required=True, help="NAME=FOLDER")
    ap.add_argument("--gold", type=Path, help="the test file (default: ../shared/data/ud/<data>/<data>-ud-test.conllu)")
    ap.add_argument(
        "--test", nargs="*", default=["las", "mlas", "lemmas", "ufeats"], help="metrics to test against the first arm"
    )
    ap.add_argument("--samples", type=int, default=10000)
    args = ap.parse_args()
    gold_path = args.gold or Path(f"../shared/data/ud/{args.data}/{args.data}-ud-test.conllu")
    gold = read_conllu(gold_path)
    arms = {name: Path(folder) for name, folder in (a.split("=", 1) for a in args.arms)}
    runs = {name: seeds_of(folder, args.data) for name, folder in arms.items()}
    print(f"| arm | seeds | {' | '.join(LABELS[m] for m in SHOWN)} |")
    print("|---|---|" + "---|" * len(SHOWN))
    for name, seeds in runs.items():
        scores = [aligned_scores(gold, read_conllu(p, allow_missing_heads=True)) for p in seeds.values()]
        cells = []
        for m in SHOWN:
            values = [s[m].f1 for s in scores]
            sd = f" ± {statistics.stdev(values):.2f}" if len(values) > 1 else ""
            cells.append(f"{statistics.mean(values):.2f}{sd}" if values else "-")
        print(f"| {name} | {', '.join(map(str, seeds))} | {' | '.join(cells)} |")
    first, *others = runs
    for name in others:
        shared = sorted(set(runs[first]) & set(runs[name]))
        if not shared:
            continue
        a, b = [runs[first][s] for s in shared], [runs[name][s] for s in shared]
        tests = []
        for metric in args.test:
            _, _, delta, p = compare_files(gold, a, b, metric, args.samples)
            tests.append(f"{LABELS[metric]} {delta:+.2f} (p = {p:.4f})")
        print(
            f"\n{name} against {first} (seeds {', '.join(map(str, shared))}, one-sided for a gain): " + "; ".join(tests)
        )


if __name__ == "__main__":
    main()
