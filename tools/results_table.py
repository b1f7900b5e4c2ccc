"""Markdown table of finished runs: dev (best epoch) and test UAS/LAS, seconds per epoch.

    python tools/results_table.py runs/EXP/DATE_TIME [...]

Each run folder must hold the metrics.json that ``python -m nparse.train`` writes.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", type=Path)
    args = ap.parse_args()
    print(
        "| experiment | treebank | epochs | best epoch | dev UAS | dev LAS | test UAS | test LAS | s / epoch | oracle share |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for run in args.runs:
        metrics = json.loads((run / "metrics.json").read_text())
        treebank = metrics.get("treebank", "?")
        epochs = metrics["epochs"]
        best = metrics.get("best") or {}
        test = metrics.get("test") or {}
        seconds = sum(e["seconds"] for e in epochs) / max(len(epochs), 1)
        share = sum(e.get("oracle_share", 0.0) for e in epochs) / max(len(epochs), 1)
        print(
            f"| {metrics['exp']} | {treebank} | {len(epochs)} | {best.get('epoch', '-')} "
            f"| {best.get('dev_uas', 0):.2f} | {best.get('dev_las', 0):.2f} "
            f"| {test.get('uas', 0):.2f} | {test.get('las', 0):.2f} | {seconds:.1f} | {100 * share:.1f}% |"
        )


if __name__ == "__main__":
    main()
