"""Distillation: a small parser trained on a larger trained parser's transition scores.

``trainer.distill_from=PATH`` (greedy training) adds to the greedy loss, at every step the
student takes, the KL divergence from the teacher's distribution over the legal transitions to
the student's (Hinton et al. 2015), both at the teacher's temperature (the one it fitted on dev,
``training/calibration.py``: its hinge-trained scores are margins, and at that temperature their
softmax is calibrated), times ``trainer.distill_weight`` and the squared temperature. The
teacher reads the same sentences through its own vocabularies and scores the same
configurations (the same system: the feature rows of a step index both tables alike).

The teacher is frozen and reads each sentence the same way every epoch (evaluation mode: no
dropout), so its first-layer table of a sentence is kept after the first epoch
(``trainer.distill_cache_mb`` bounds it) and later epochs only run its scorer on the student's
configurations.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import torch
import torch.nn.functional as F

from .. import checkpoint
from ..checkpoint import checkpoint_paths, model_from_state
from ..io.data import Batch, Example, collate, encode
from ..models.ensemble import EnsembleModel, check_members
from ..models.parser import ParserModel
from ..decoding.scoring import LegalScores
from ..paths import resolve_path
from .local import NEG_INF, Steps, as_tensor
from .settings import system_options

log = logging.getLogger("nparse.train")


class Teacher:
    """A trained parser's transition scores for the configurations a student visits; several
    checkpoints teach as one ensemble (``models/ensemble.py``: the mean of their probabilities,
    each at its own temperature; the student's softmax takes their mean temperature)."""

    def __init__(self, paths: Path | Sequence[Path], system_options: dict, device: torch.device, cache_mb: int = 0):
        paths = [paths] if isinstance(paths, Path) else list(paths)
        models, temperatures = [], []
        for path in paths:
            state = checkpoint.load(path, device)
            if state["system"] != system_options:
                raise ValueError(
                    f"trainer.distill_from={path}: the teacher's system {state['system']} differs from "
                    f"system={system_options}; a student learns the transition scores of its own system"
                )
            models.append(model_from_state(state, device, path))
            fitted = (state.get("calibration") or {}).get("temperature")
            if fitted is None:  # its softmax would be flatter or sharper than the others' in an ensemble
                log.warning(
                    "trainer.distill_from=%s has no fitted temperature (a run not finished, or trained without a dev set): its "
                    "scores are taken at temperature 1", path,
                )  # fmt: skip
            temperatures.append(float(fitted if fitted is not None else 1.0))
        if len(models) > 1:
            check_members(models, [str(p) for p in paths], [system_options] * len(paths), decoding=False)
        self.model: ParserModel | EnsembleModel = models[0] if len(models) == 1 else EnsembleModel(models, temperatures)
        self.temperature = sum(temperatures) / len(temperatures)
        self.cache_bytes = cache_mb * 2**20
        self.kept: dict[int, tuple[Example, torch.Tensor]] = {}  # id(example): it and its table rows
        self.kept_bytes = 0
        self.empty: torch.Tensor | None = None  # the table's last row (the empty position)
        log.info(
            "distilling from %s (temperature %s)",
            ", ".join(map(str, paths)),
            ", ".join(f"{t:.3f}" for t in temperatures),
        )

    @torch.no_grad()
    def encode(self, examples: list[Example]) -> torch.Tensor:
        """The teacher's first-layer table of the sentences (read with its vocabularies)."""
        _, table = self.model.encode(collate([encode(e.sent, self.model.vocabs) for e in examples]))
        assert table is not None
        return table

    @torch.no_grad()
    def table(self, batch: Batch) -> torch.Tensor:
        """The teacher's first-layer table of the batch, laid out as the student's (row b * width
        + i: token i of sentence b; padding rows zero; the last row the empty position), its
        sentences' rows kept from earlier batches where the cache allows."""
        if not self.cache_bytes:
            return self.encode(batch.examples)
        rows = {id(e): kept[1] for e in batch.examples if (kept := self.kept.get(id(e))) is not None and kept[0] is e}
        missing = [e for e in batch.examples if id(e) not in rows]
        if missing:
            fresh, width = self.encode(missing), max(len(e.words) for e in missing)
            # Rows are cut at the student's lengths: the teacher must read each sentence as long.
            assert fresh.shape[0] == len(missing) * width + 1, "the teacher read the sentences to other lengths"
            if self.empty is None:  # the same in every table
                self.empty = fresh[-1].clone()
            for b, e in enumerate(missing):
                mine = fresh[b * width : b * width + len(e.words)].clone()
                rows[id(e)] = mine
                if self.kept_bytes + mine.nbytes <= self.cache_bytes:
                    self.kept[id(e)] = (e, mine)
                    self.kept_bytes += mine.nbytes
        assert self.empty is not None
        width = batch.width
        dest = np.concatenate([np.arange(b * width, b * width + len(e.words)) for b, e in enumerate(batch.examples)])
        table = self.empty.new_zeros((len(batch.examples) * width + 1, *self.empty.shape))
        table[torch.from_numpy(dest).to(table.device)] = torch.cat([rows[id(e)] for e in batch.examples])
        table[-1] = self.empty
        return table

    @torch.no_grad()
    def log_probs(self, table: torch.Tensor, steps: Steps) -> torch.Tensor:
        """[steps, actions] log-probabilities of the legal transitions at its temperature."""
        scorer = self.model.scorer
        if isinstance(scorer, LegalScores):  # an ensemble: the log of the members' mean probabilities
            mean = scorer.legal_scores(table, np.asarray(steps.rows), np.asarray(steps.legal, dtype=bool))
            return torch.from_numpy(mean).to(table.device, torch.float32)
        rows = as_tensor(steps.rows, np.int64, table.device)
        legal = as_tensor(steps.legal, np.bool_, table.device)
        scores = self.model.scorer.scores(table, rows) / self.temperature
        return torch.log_softmax(scores.masked_fill(~legal, NEG_INF), dim=1)


def distill_loss(
    scorer, table: torch.Tensor, steps: Steps, teacher_logp: torch.Tensor, temperature: float
) -> torch.Tensor:
    """Sum over steps of KL(teacher || student) over the legal transitions, times T^2."""
    if not len(steps):
        return table.sum() * 0.0
    device = table.device
    legal = as_tensor(steps.legal, np.bool_, device)
    scores = scorer.scores(table, as_tensor(steps.rows, np.int64, device)) / temperature
    student = torch.log_softmax(scores.masked_fill(~legal, NEG_INF), dim=1)
    kl = F.kl_div(student.masked_fill(~legal, 0.0), teacher_logp.masked_fill(~legal, 0.0), log_target=True,
                  reduction="none")  # fmt: skip
    return kl.masked_fill(~legal, 0.0).sum() * temperature**2


def teacher_of(cfg: Any, device: torch.device) -> Teacher | None:
    """The teacher of ``trainer.distill_from`` (one checkpoint or an ensemble), None without one;
    ``build_objective`` gives it to the greedy objective with ``trainer.distill_weight``."""
    tc = cfg.trainer
    if not tc.distill_from:
        return None
    paths = [resolve_path(str(p), "trainer.distill_from") for p in checkpoint_paths(tc.distill_from)]
    return Teacher(paths, system_options(cfg), device, tc.distill_cache_mb)


__all__ = ["Teacher", "distill_loss", "teacher_of"]
