"""Per-epoch training statistics of finished runs, averaged over their epochs and seeds.

    python experiments/run_stats.py runs/ARM [runs/ARM2 ...] [--keys seconds updates_per_sentence ...]

An ARM is a folder of runs named ``<data>_s<seed>`` (``experiments/seed_runs.py`` writes them). For every
arm and treebank, each key of the epochs in ``metrics.json`` (``seconds``: training seconds per epoch;
global runs also log ``updates_per_sentence``, ``derivation_share_updated``, ``end_reached``) is
averaged over all epochs of all seeds; ``total s`` is the training time of one run, averaged over
seeds. Keys a run does not log print as ``-``. ``--epochs 12 40`` averages those epochs only (a
learning curve's points; ``total s`` stays the whole run's).
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections import defaultdict
from pathlib import Path


def arm_stats(arm: Path, keys: list[str], only: set[int] | None = None) -> dict[str, dict[str, float | None]]:
    """{treebank: {key: mean over epochs and seeds, "total s": mean training seconds per run, "epochs": how many}}."""
    epochs: dict[str, list[dict]] = defaultdict(list)
    totals: dict[str, list[float]] = defaultdict(list)
    for metrics in sorted(arm.glob("*_s*/metrics.json")):
        treebank = metrics.parent.name.rsplit("_s", 1)[0]
        run = json.loads(metrics.read_text())["epochs"]
        epochs[treebank].extend(e for e in run if only is None or e["epoch"] in only)
        totals[treebank].append(sum(e["seconds"] for e in run))
    out: dict[str, dict[str, float | None]] = {}
    for treebank, rows in epochs.items():
        stats: dict[str, float | None] = {}
        for key in keys:
            values = [e[key] for e in rows if e.get(key) is not None]
            stats[key] = statistics.mean(values) if values else None
        stats["total s"] = statistics.mean(totals[treebank])
        stats["epochs"] = len(rows)
        out[treebank] = stats
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("arms", nargs="+", type=Path)
    ap.add_argument("--keys", nargs="+", default=["seconds", "updates_per_sentence", "derivation_share_updated"])
    ap.add_argument("--epochs", nargs="+", type=int, help="only these epochs (numbered from 1)")
    args = ap.parse_args()
    columns = [*args.keys, "total s"]
    print("| arm | treebank | epochs x seeds | " + " | ".join(columns) + " |")
    print("|---|---|---|" + "---|" * len(columns))
    for arm in args.arms:
        for treebank, stats in arm_stats(arm, args.keys, set(args.epochs) if args.epochs else None).items():
            cells = ["-" if stats[c] is None else f"{stats[c]:.3f}" for c in columns]
            print(f"| {arm.name} | {treebank} | {stats['epochs']:.0f} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
