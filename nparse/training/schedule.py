"""The learning-rate schedule (``trainer.lr_schedule``, ``trainer.warmup``).

Training from scratch uses Adam at a constant rate (Kiperwasser & Goldberg 2016). Fine-tuning a
trained model (``trainer.init_from``, global training) starts a fresh optimizer on weights that
are already good; a large first step can undo them, so a warm-up (the rate grows linearly over
the first ``warmup`` updates) and a linear decay to 0 at the end of the run are offered.
"""

from __future__ import annotations

import torch

SCHEDULES = ("constant", "linear")


def check_schedule(kind: str, warmup: int) -> None:
    """Refuse settings that cannot work, naming the keys (also before any data is read)."""
    if kind not in SCHEDULES:
        raise ValueError(f"trainer.lr_schedule={kind}: choose one of {', '.join(SCHEDULES)}")
    if warmup < 0:
        raise ValueError(f"trainer.warmup={warmup}: must be at least 0")


def lr_schedule(optimizer: torch.optim.Optimizer, kind: str, warmup: int, total: int) -> torch.optim.lr_scheduler.LambdaLR:
    """A per-update multiplier of the rate: warm-up over ``warmup`` updates, then constant or a
    linear decay reaching 0 after ``total`` updates."""
    check_schedule(kind, warmup)

    def factor(step: int) -> float:
        rise = min(1.0, (step + 1) / warmup) if warmup else 1.0
        if kind == "linear":
            return rise * max(0.0, 1.0 - step / max(total, 1))
        return rise

    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)
