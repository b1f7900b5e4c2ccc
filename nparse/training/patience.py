"""Training length by dev score: stop after ``trainer.patience`` epochs without a dev LAS gain,
``trainer.epochs`` being the most, and (``trainer.plateau``) cut the learning rate after fewer.
Decided from the run's history alone (saved in ``last.pt``), so a resumed or preempted run keeps
its patience state."""

from __future__ import annotations

import logging
from typing import Any, Mapping, Sequence

log = logging.getLogger("nparse.train")


def best_epoch(history: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The record of the epoch with the best dev LAS (the first of equal ones, as the trainer
    keeps best.pt); None without dev scores."""
    scored = [h for h in history if "dev_las" in h]
    if not scored:
        return None
    return max(scored, key=lambda h: h["dev_las"])  # max keeps the first of equals


def epochs_without_gain(history: Sequence[Mapping[str, Any]]) -> int:
    """Epochs trained since the best dev LAS (0 when the last epoch is the best, or none is scored)."""
    best = best_epoch(history)
    return 0 if best is None else int(history[-1]["epoch"]) - int(best["epoch"])


def patience_exhausted(history: Sequence[Mapping[str, Any]], patience: int) -> bool:
    """True once ``patience`` epochs (0: never) have passed without a dev LAS gain."""
    return patience > 0 and epochs_without_gain(history) >= patience


def best_note(history: Sequence[Mapping[str, Any]]) -> str:
    """The stop line's "; best dev LAS X at epoch N" (empty without dev scores)."""
    best = best_epoch(history)
    return f"; best dev LAS {best['dev_las']:.2f} at epoch {best['epoch']}" if best else ""


def stop_line(history: Sequence[Mapping[str, Any]], patience: int, max_epochs: int) -> str:
    """Why training ended, for the log and metrics.json."""
    where = best_note(history)
    last = int(history[-1]["epoch"]) if history else 0
    if patience_exhausted(history, patience):  # more epochs than patience after a resume with a smaller one
        waited = epochs_without_gain(history)
        return f"stopped after epoch {last}: no dev LAS gain for {waited} epochs (trainer.patience={patience}){where}"
    if last != max_epochs:  # resumed with trainer.epochs below the epochs already trained
        return f"trained {last} epochs (trainer.epochs={max_epochs}){where}"
    return f"trained trainer.epochs={max_epochs} epochs{where}"


def plateau_cuts(history: Sequence[Mapping[str, Any]], wait: int) -> int:
    """How many times the rate has been cut after the epochs of ``history``: once ``wait`` epochs
    (0: never) have passed without a dev LAS gain since the best epoch or the last cut,
    whichever is later."""
    if wait <= 0:
        return 0
    cuts, best, since = 0, float("-inf"), 0
    for record in history:
        if "dev_las" not in record:
            continue
        epoch = int(record["epoch"])
        if record["dev_las"] > best:
            best, since = record["dev_las"], epoch
        elif epoch - since >= wait:
            cuts, since = cuts + 1, epoch
    return cuts


def warn_without_dev(tc: Any, has_dev: bool) -> None:
    """Say that patience and plateau cuts do nothing without a dev set."""
    if tc.patience and not has_dev:
        log.warning(
            "trainer.patience=%d needs a dev set (data.dev): training runs trainer.epochs=%d", tc.patience, tc.epochs
        )
    if tc.plateau and not has_dev:
        log.warning("trainer.plateau=%d needs a dev set (data.dev): the rate is never cut", tc.plateau)


def patience_note(history: Sequence[Mapping[str, Any]], patience: int) -> str:
    """The epoch line's ", N/P epochs without a gain" (empty without patience or dev scores)."""
    waited = epochs_without_gain(history) if patience and history and "dev_las" in history[-1] else 0
    return f", {waited}/{patience} epochs without a gain (trainer.patience)" if waited else ""
