"""Markdown table of finished runs: dev (best epoch) and test UAS/LAS, seconds per epoch.

    python tools/results_table.py runs/EXP/DATE_TIME [...]
    python tools/results_table.py --mean runs/EXP/DATE_TIME [...]

Each run folder must hold the metrics.json and config.yaml that ``python -m nparse.train`` writes.
With ``--mean``, runs that differ only in their seed are averaged (mean and range of LAS).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

from omegaconf import OmegaConf


def model_name(model) -> str:
    """Name the model preset a resolved config matches (conf/model/)."""
    if model.char_dim > 0 and model.dropout > 0:
        return "kg_char"
    if model.char_dim == 0 and model.dropout == 0 and model.lstm_dropout == 0:
        return "kg"
    return "custom"


def mean_table(runs: list[Path]) -> None:
    groups: dict[tuple, list[tuple[int, dict]]] = defaultdict(list)
    for run in runs:
        metrics = json.loads((run / "metrics.json").read_text())
        if not metrics.get("test") or not metrics.get("best"):
            print(f"{run}: unfinished (no test scores), left out", file=sys.stderr)
            continue
        cfg = OmegaConf.load(run / "config.yaml")
        key = (metrics["exp"], metrics.get("treebank", "?"), model_name(cfg.model), len(metrics["epochs"]))
        groups[key].append((cfg.trainer.seed, metrics))
    print("| experiment | treebank | model | epochs | seeds | dev LAS mean (min-max) | test LAS mean (min-max) |")
    print("|---|---|---|---|---|---|---|")
    for (exp, treebank, model, epochs), rows in groups.items():
        dev = [m["best"]["dev_las"] for _, m in rows]
        test = [m["test"]["las"] for _, m in rows]
        seeds = ",".join(str(s) for s, _ in sorted(rows, key=lambda r: r[0]))
        print(
            f"| {exp} | {treebank} | {model} | {epochs} | {seeds} "
            f"| {sum(dev) / len(dev):.2f} ({min(dev):.2f}-{max(dev):.2f}) "
            f"| {sum(test) / len(test):.2f} ({min(test):.2f}-{max(test):.2f}) |"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", type=Path)
    ap.add_argument("--mean", action="store_true", help="average runs that differ only in their seed")
    args = ap.parse_args()
    if args.mean:
        mean_table(args.runs)
        return
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
