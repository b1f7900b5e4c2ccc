"""The arms of a comparison from what their runs wrote (``metrics.json``), without parsing again:
test LAS of best.pt per seed, mean and sd, dev LAS at the best epoch, epochs trained, and the
oracle's share of the training epochs (its seconds over the epoch's, mean over epochs).

    python experiments/arm_summary.py --data hu_szeged --arms static=runs/as_static dynamic=runs/as_dynamic
                                      [--epoch-metric SWITCH_per_sentence]

``--epoch-metric`` adds a training-epoch figure (what TensorBoard shows under transitions/ or
train/), mean over seeds at the best epoch and at the last one.

An arm is a folder of runs named ``<data>_s<seed>`` (``experiments/seed_runs.py``). The paired
bootstrap between two arms: ``tools/significance.py`` on their ``test.pred.conllu`` files.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True)
    ap.add_argument("--arms", nargs="+", required=True, help="NAME=FOLDER")
    ap.add_argument("--epoch-metric", help="a per-epoch figure of metrics.json, e.g. SWITCH_per_sentence")
    args = ap.parse_args()
    extra = f" {args.epoch_metric}: best epoch | last epoch |" if args.epoch_metric else ""
    print(f"| arm | test LAS (seeds) | mean ± sd | dev LAS (mean) | epochs (mean) | oracle share of an epoch |{extra}")
    print("|---|---|---|---|---|---|" + ("---|---|" if extra else ""))
    for arm in args.arms:
        name, folder = arm.split("=", 1)
        runs = sorted(Path(folder).glob(f"{args.data}_s*/metrics.json"))
        metrics = [m for m in (json.loads(p.read_text()) for p in runs) if "test" in m]  # finished runs only
        if not metrics:
            print(f"| {name} | no finished run in {folder} | | | | |")
            continue
        test = [m["test"]["las"] for m in metrics]
        dev = [m["best"]["dev_las"] for m in metrics]
        epochs = [len(m["epochs"]) for m in metrics]
        share = [statistics.mean(e.get("oracle_share", 0.0) for e in m["epochs"]) for m in metrics]
        sd = statistics.stdev(test) if len(test) > 1 else 0.0
        cells = ""
        if args.epoch_metric:
            key = args.epoch_metric
            at_best = [next(e.get(key, 0.0) for e in m["epochs"] if e["epoch"] == m["best"]["epoch"]) for m in metrics]
            last = [m["epochs"][-1].get(key, 0.0) for m in metrics]
            cells = f" {statistics.mean(at_best):.3f} | {statistics.mean(last):.3f} |"
        print(f"| {name} | {', '.join(f'{x:.2f}' for x in test)} | {statistics.mean(test):.2f} ± {sd:.2f} | "
              f"{statistics.mean(dev):.2f} | {statistics.mean(epochs):.0f} | {100 * statistics.mean(share):.1f}% |{cells}")  # fmt: skip


if __name__ == "__main__":
    main()
