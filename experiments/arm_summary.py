"""The arms of a comparison from what their runs wrote (``metrics.json``), without parsing again:
test LAS of best.pt per seed, mean and sd, dev LAS at the best epoch, epochs trained, and the
oracle's share of the training epochs (its seconds over the epoch's, mean over epochs).

    python experiments/arm_summary.py --data hu_szeged --arms static=runs/as_static dynamic=runs/as_dynamic

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
    args = ap.parse_args()
    print("| arm | test LAS (seeds) | mean ± sd | dev LAS (mean) | epochs (mean) | oracle share of an epoch |")
    print("|---|---|---|---|---|---|")
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
        print(f"| {name} | {', '.join(f'{x:.2f}' for x in test)} | {statistics.mean(test):.2f} ± {sd:.2f} | "
              f"{statistics.mean(dev):.2f} | {statistics.mean(epochs):.0f} | {100 * statistics.mean(share):.1f}% |")  # fmt: skip


if __name__ == "__main__":
    main()
