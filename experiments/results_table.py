"""Markdown table of finished runs: dev (best epoch) and test UAS/LAS, seconds per epoch.

    python experiments/results_table.py runs/EXP/DATE_TIME [...]
    python experiments/results_table.py --mean runs/EXP/DATE_TIME [...]

Each run folder must hold the metrics.json and config.yaml that ``python -m nparse.train`` writes.
With ``--mean``, runs whose configs differ only in the seed are averaged (mean and range of LAS).
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
    """Average runs whose resolved configs are equal but for the seed."""
    groups: dict[str, list[tuple[int, dict, object]]] = defaultdict(list)
    for run in runs:
        path = run / "metrics.json"
        metrics = json.loads(path.read_text()) if path.exists() else {}
        if not metrics.get("test") or not metrics.get("best"):
            print(f"{run}: unfinished (no test scores), left out", file=sys.stderr)
            continue
        cfg = OmegaConf.load(run / "config.yaml")
        rest = OmegaConf.to_container(cfg)
        rest["trainer"].pop("seed")
        groups[json.dumps(rest, sort_keys=True)].append((cfg.trainer.seed, metrics, cfg))
    print(
        "| experiment | treebank | model | epochs | explore_p | seeds | dev LAS mean (min-max) "
        "| test LAS mean (min-max) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for rows in groups.values():
        _, first, cfg = rows[0]
        dev = [m["best"]["dev_las"] for _, m, _ in rows]
        test = [m["test"]["las"] for _, m, _ in rows]
        seeds = ",".join(str(s) for s in sorted(s for s, _, _ in rows))
        print(
            f"| {first['exp']} | {first.get('treebank', '?')} | {model_name(cfg.model)} | {len(first['epochs'])} "
            f"| {cfg.oracle.get('explore_p', '-')} | {seeds} "
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
