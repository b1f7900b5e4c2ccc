"""Learning curves of several runs side by side: dev LAS and training loss per epoch.

    python tools/plot_runs.py RUN... [--out curves.png] [--labels A B ...]

A RUN is a run directory (holding ``metrics.json``, written after every epoch, so unfinished
runs plot too) or a ``metrics.json`` path. Each run is one line in both panels, labelled by
``--labels`` or by its experiment, treebank and folder name. Needs matplotlib:
``pip install -e ".[plot]"``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def load_history(run: Path) -> tuple[str, list[dict]]:
    path = run / "metrics.json" if run.is_dir() else run
    if not path.is_file():
        raise SystemExit(f"error: {run}: no metrics.json (is it a run directory?)")
    try:
        metrics = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise SystemExit(f"error: {path}:{err.lineno}: not valid JSON ({err.msg})") from None
    epochs = metrics.get("epochs") or []
    if not epochs:
        raise SystemExit(f"error: {path}: no finished epoch yet")
    name = " ".join(str(metrics[k]) for k in ("exp", "treebank") if metrics.get(k)) or path.parent.name
    return f"{name} ({path.parent.name})", epochs


def plot(runs: list[Path], out: Path, labels: list[str] | None = None) -> Path:
    try:
        import matplotlib

        matplotlib.use("Agg")  # files only: works without a display
        import matplotlib.pyplot as plt
    except ImportError:
        raise SystemExit('error: plotting needs matplotlib: pip install -e ".[plot]"') from None
    if labels and len(labels) != len(runs):
        raise SystemExit(f"error: {len(labels)} labels for {len(runs)} runs")
    fig, (las_ax, loss_ax) = plt.subplots(1, 2, figsize=(11, 4.2))
    for k, run in enumerate(runs):
        name, epochs = load_history(run)
        label = labels[k] if labels else name
        xs = [e["epoch"] for e in epochs]
        dev = [(e["epoch"], e["dev_las"]) for e in epochs if "dev_las" in e]
        if dev:
            las_ax.plot([x for x, _ in dev], [y for _, y in dev], marker="o", markersize=3, label=label)
        loss_key = "loss_per_token" if "loss_per_token" in epochs[0] else "loss_per_sentence"
        loss_ax.plot(xs, [e.get(loss_key, float("nan")) for e in epochs], marker="o", markersize=3, label=label)
    las_ax.set(title="dev LAS", xlabel="epoch", ylabel="LAS")
    loss_ax.set(title="training loss", xlabel="epoch", ylabel="loss per token")
    for ax in (las_ax, loss_ax):
        ax.grid(alpha=0.3)
    las_ax.legend(fontsize=8)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", type=Path, help="run directories or metrics.json files")
    ap.add_argument("--out", type=Path, default=Path("curves.png"))
    ap.add_argument("--labels", nargs="+", default=None, help="one label per run")
    args = ap.parse_args()
    print(plot(args.runs, args.out, args.labels))


if __name__ == "__main__":
    main()
