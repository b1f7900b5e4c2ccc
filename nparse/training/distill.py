"""Distillation: a small parser trained on a larger trained parser's transition scores.

``trainer.distill_from=PATH`` (greedy training) adds to the greedy loss, at every step the
student takes, the KL divergence from the teacher's distribution over the legal transitions to
the student's (Hinton et al. 2015), both at the teacher's temperature (the one it fitted on dev,
``training/calibration.py``: its hinge-trained scores are margins, and at that temperature their
softmax is calibrated), times ``trainer.distill_weight`` and the squared temperature. The
teacher reads the same sentences through its own vocabularies and scores the same
configurations (the same system: the feature rows of a step index both tables alike).
"""

from __future__ import annotations

import logging
from pathlib import Path

import torch
import torch.nn.functional as F

from .. import checkpoint
from ..checkpoint import model_from_state
from ..io.data import Batch, collate, encode
from .local import NEG_INF, Steps

log = logging.getLogger("nparse.train")


class Teacher:
    """A trained parser's transition scores for the configurations a student visits."""

    def __init__(self, path: Path, system_options: dict, device: torch.device):
        state = checkpoint.load(path, device)
        if state["system"] != system_options:
            raise ValueError(
                f"trainer.distill_from={path}: the teacher's system {state['system']} differs from "
                f"system={system_options}; a student learns the transition scores of its own system"
            )
        self.model = model_from_state(state, device, path)
        calibration = state.get("calibration") or {}
        self.temperature = float(calibration.get("temperature", 1.0))
        log.info("distilling from %s (its temperature %.3f)", path, self.temperature)

    @torch.no_grad()
    def table(self, batch: Batch) -> torch.Tensor:
        """The teacher's first-layer table of the batch's sentences (read with its vocabularies)."""
        mine = collate([encode(e.sent, self.model.vocabs) for e in batch.examples])
        assert mine.width == batch.width
        _, table = self.model.encode(mine)
        assert table is not None
        return table

    @torch.no_grad()
    def log_probs(self, table: torch.Tensor, steps: Steps) -> torch.Tensor:
        """[steps, actions] log-probabilities of the legal transitions at its temperature."""
        rows = torch.tensor(steps.rows, device=table.device)
        legal = torch.tensor(steps.legal, device=table.device)
        scores = self.model.scorer.scores(table, rows) / self.temperature
        return torch.log_softmax(scores.masked_fill(~legal, NEG_INF), dim=1)


def distill_loss(scorer, table: torch.Tensor, steps: Steps, teacher_logp: torch.Tensor, temperature: float) -> torch.Tensor:
    """Sum over steps of KL(teacher || student) over the legal transitions, times T^2."""
    if not steps.rows:
        return table.sum() * 0.0
    device = table.device
    legal = torch.tensor(steps.legal, device=device)
    scores = scorer.scores(table, torch.tensor(steps.rows, device=device)) / temperature
    student = torch.log_softmax(scores.masked_fill(~legal, NEG_INF), dim=1)
    kl = F.kl_div(student.masked_fill(~legal, 0.0), teacher_logp.masked_fill(~legal, 0.0), log_target=True,
                  reduction="none")  # fmt: skip
    return kl.masked_fill(~legal, 0.0).sum() * temperature**2


__all__ = ["Teacher", "distill_loss"]
