"""What a run has done so far: saved in every checkpoint beside the weights, and the source of
``metrics.json``. A resumed run reads it back (``Progress.saved``) and goes on from there."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .patience import best_epoch


@dataclass
class Progress:
    preset: str | None = None  # the +exp=NAME the run started with (resume.preset_of)
    epoch: int = 0  # epochs completed
    step: int = 0  # updates made
    best_las: float = -1.0  # best dev LAS so far (-1: none yet)
    history: list[dict] = field(default_factory=list)  # one record per epoch: metrics.json's epochs
    calibration: dict | None = None  # temperature of local beam scores (calibration.py)
    partial: dict | None = None  # the epoch in progress of a mid-epoch last.pt (read once)
    decay_start: int | None = None  # the epoch after which trainer.final_decay's phase began (None: not yet)

    @classmethod
    def saved(cls, state: dict) -> "Progress":
        """The progress of a checkpoint (``state``, as ``checkpoint.load`` returns it)."""
        return cls(
            state.get("preset"), state["epoch"], state["step"], state["best_las"], state["history"],
            state.get("calibration"), state.get("partial"), state.get("decay_start"),
        )  # fmt: skip

    def state(self) -> dict[str, Any]:
        """The checkpoint's keys for it (a mid-epoch last.pt adds ``partial`` itself)."""
        return {"epoch": self.epoch, "step": self.step, "best_las": self.best_las, "history": self.history,
                "calibration": self.calibration, "preset": self.preset,
                "decay_start": self.decay_start}  # fmt: skip

    def metrics(self, header: dict[str, Any], extra: dict[str, Any] | None = None) -> dict[str, Any]:
        """``metrics.json``: ``header`` (what was trained), every epoch, the best one (without dev
        scores best.pt holds the last epoch: each one "improves"), and ``extra`` (test, stop)."""
        best = best_epoch(self.history) or (self.history[-1] if self.history else None)
        return {**header, "epochs": self.history, "best": best, **(extra or {})}
