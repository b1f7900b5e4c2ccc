"""The N-epoch arm of a comparison taken from a longer run of the same seed, instead of a second
training.

    python experiments/first_epochs.py runs/pat15/en_ewt_s1 --epochs 30 --out runs/base30/en_ewt_s1 [--wait]

With a constant learning rate, a run with ``trainer.epochs=N`` is the first N epochs of a longer
run of the same seed and code (docs/experiments/training-length.md found the same losses and dev
scores epoch by epoch). So the run's ``best.pt`` as it stands after epoch N is the N-epoch run's
model. With ``--wait`` this script watches the run's ``metrics.json`` while it trains and copies
``best.pt`` as soon as epoch N is logged (an epoch takes 30 s on EWT, the poll 1 s); it refuses a
copy saved after epoch N. ``--out`` becomes a run folder that ``experiments/seed_table.py`` reads:
the copy as ``best.pt``, ``config.yaml``, ``metrics.json`` and ``train.log`` cut after epoch N.

The copy has no fitted temperature (the trainer fits it when the run ends), so compare greedy
parses only (``seed_table.py --beam 1``): a temperature does not change a greedy parse.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import time
from pathlib import Path

import torch


def logged_epochs(run: Path) -> list[dict]:
    """The epochs in the run's metrics.json so far (none before the first is written)."""
    try:
        return json.loads((run / "metrics.json").read_text())["epochs"]
    except (FileNotFoundError, json.JSONDecodeError, KeyError):  # not written yet, or mid-write
        return []


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run", type=Path)
    ap.add_argument("--epochs", type=int, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--wait", action="store_true", help="watch a run in training until epoch N is logged")
    args = ap.parse_args()
    n, out = args.epochs, args.out
    out.mkdir(parents=True, exist_ok=False)
    while len(logged_epochs(args.run)) < n:
        if not args.wait:
            raise SystemExit(f"{args.run}: fewer than {n} epochs logged (--wait watches it train)")
        time.sleep(1.0)
    shutil.copyfile(args.run / "best.pt", out / "best.pt")
    epochs = logged_epochs(args.run)[:n]
    best = max(epochs, key=lambda e: (e["dev_las"], -e["epoch"]))  # the first epoch of the best score
    saved = torch.load(out / "best.pt", map_location="cpu", weights_only=False)["epoch"]
    if saved != best["epoch"]:
        shutil.rmtree(out)
        raise SystemExit(f"{args.run}/best.pt is from epoch {saved}, not {best['epoch']}: copied too late")
    shutil.copyfile(args.run / "config.yaml", out / "config.yaml")
    metrics = json.loads((args.run / "metrics.json").read_text())
    metrics.update(
        epochs=epochs,
        best=best,
        stopped=f"the first {n} epochs of {args.run}; best dev LAS {best['dev_las']:.2f} at epoch {best['epoch']}",
        test=None,  # parsed by seed_table.py
    )
    (out / "metrics.json").write_text(json.dumps(metrics, indent=1))
    cut = None
    while cut is None:  # the epoch's log line follows its metrics.json
        log = (args.run / "train.log").read_text().splitlines(keepends=True)
        cut = next((i for i, line in enumerate(log) if re.search(rf"\] - epoch {n}: ", line)), None)
        time.sleep(0.0 if cut is not None else 1.0)
    (out / "train.log").write_text("".join(log[: cut + 1]))
    print(f"{out}: best.pt of epoch {saved}, dev LAS {best['dev_las']:.2f}")


if __name__ == "__main__":
    main()
