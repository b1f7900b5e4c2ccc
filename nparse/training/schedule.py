"""The learning-rate schedule (``trainer.lr_schedule``, ``trainer.warmup``).

Training from scratch uses Adam at a constant rate (Kiperwasser & Goldberg 2016). Fine-tuning a
trained model (``trainer.init_from``, global training) starts a fresh optimizer on weights that
are already good; a large first step can undo them, so a warm-up (the rate grows linearly over
the first ``warmup`` updates) and a linear decay to 0 at the end of epoch ``trainer.epochs``
(the most: a run that patience stops ends before its rate reaches 0) are offered.
"""

from __future__ import annotations

from typing import Callable

import torch

SCHEDULES = ("constant", "linear")


def check_schedule(kind: str, warmup: int) -> None:
    """Refuse settings that cannot work, naming the keys (also before any data is read)."""
    if kind not in SCHEDULES:
        raise ValueError(f"trainer.lr_schedule={kind}: choose one of {', '.join(SCHEDULES)}")
    if warmup < 0:
        raise ValueError(f"trainer.warmup={warmup}: must be at least 0")


def lr_schedule(
    optimizer: torch.optim.Optimizer, kind: str, warmup: int, total: int, scale: Callable[[], float] = lambda: 1.0
) -> torch.optim.lr_scheduler.LambdaLR:
    """A per-update multiplier of the rate: warm-up over ``warmup`` updates, then constant or a
    linear decay reaching 0 after ``total`` updates, times ``scale()`` (the cuts on a dev
    plateau, ``trainer.plateau``)."""
    check_schedule(kind, warmup)

    def factor(step: int) -> float:
        rise = min(1.0, (step + 1) / warmup) if warmup else 1.0
        if kind == "linear":
            return rise * max(0.0, 1.0 - step / max(total, 1)) * scale()
        return rise * scale()

    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)


def refresh_rates(scheduler: torch.optim.lr_scheduler.LambdaLR) -> None:
    """Set the rates now from the schedule (after its ``scale`` changed), not at the next update."""
    for group, base, factor in zip(scheduler.optimizer.param_groups, scheduler.base_lrs, scheduler.lr_lambdas):
        group["lr"] = base * factor(scheduler.last_epoch)
