"""What a run draws in TensorBoard and says in its log: points per window of batches, per epoch."""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path
from typing import Any

# Per-epoch statistics drawn under train/ besides the objective's own.
TRAIN_CURVES = ("oracle_share",)


def tensorboard(run_dir: Path, purge_step: int | None) -> Any:
    """The run's TensorBoard writer (``purge_step``: a resumed run's step, after which the events
    of the interrupted run are dropped)."""
    from torch.utils.tensorboard import SummaryWriter  # slow to import: only where a run writes

    return SummaryWriter(str(run_dir), purge_step=purge_step)


def new_window() -> Counter:
    """Counters of the batches since the last TensorBoard point (``update`` adds a batch's)."""
    return Counter({"loss": 0.0, "tokens": 0, "sents": 0, "t": time.perf_counter()})


def write_window(writer: Any, window: dict, step: int, lr: float, bar: Any) -> None:
    """TensorBoard points for the batches since the last point, and the progress bar's figures."""
    elapsed = max(time.perf_counter() - window["t"], 1e-9)
    loss = window["loss"] / window["tokens"]
    writer.add_scalar("train/loss_per_token", loss, step)
    writer.add_scalar("speed/train_sentences_per_s", window["sents"] / elapsed, step)
    writer.add_scalar("speed/train_tokens_per_s", window["tokens"] / elapsed, step)
    writer.add_scalar("train/lr", lr, step)
    bar.set_postfix(loss=f"{loss:.3f}", sent_s=f"{window['sents'] / elapsed:.0f}")


def epoch_stats(totals: Any, actions: Any, seconds: float, objective: Any) -> dict[str, float]:
    """An epoch's statistics from its counters: loss, speed, the oracle's share of the time, the
    objective's own figures and transitions per sentence."""
    sents = max(totals["sents"], 1)
    stats = {
        "loss_per_token": totals["loss"] / max(totals["tokens"], 1),
        "seconds": seconds,
        "sentences_per_s": totals["sents"] / seconds,
        "tokens_per_s": totals["tokens"] / seconds,
        "oracle_seconds": totals["oracle"],
        "oracle_share": totals["oracle"] / seconds,
    }
    stats.update(objective.epoch_stats(totals, totals["sents"]))
    for name, count in sorted(actions.items()):
        stats[f"{name}_per_sentence"] = count / sents
    return stats


def write_epoch(writer: Any, epoch: int, stats: dict, record: dict, objective_curves: tuple[str, ...]) -> None:
    """An epoch's points: dev scores, the objective's statistics, transitions, seconds."""
    if "dev_las" in record:
        writer.add_scalar("dev/uas", record["dev_uas"], epoch)
        writer.add_scalar("dev/las", record["dev_las"], epoch)
    for key in TRAIN_CURVES + objective_curves:
        if key in stats:
            writer.add_scalar(f"train/{key}", stats[key], epoch)
    for key, value in stats.items():
        if key.endswith("_per_sentence") and key != "transitions_per_sentence":
            writer.add_scalar(f"transitions/{key}", value, epoch)
    writer.add_scalar("speed/epoch_seconds", stats["seconds"], epoch)
    writer.flush()


def epoch_line(epoch: int, stats: dict, record: dict, improved: bool) -> str:
    """The log line of an epoch."""
    dev = f", dev UPOS {record['dev_upos']:.2f}" if "dev_upos" in record else ""
    if "dev_las" in record:
        dev += f", dev UAS {record['dev_uas']:.2f} LAS {record['dev_las']:.2f}" + (" (best)" if improved else "")
    return (
        f"epoch {epoch}: loss {stats['loss_per_token']:.4f}, {stats['tokens_per_s']:.0f} tokens/s, "
        f"{stats['seconds']:.1f} s{dev}"
    )
