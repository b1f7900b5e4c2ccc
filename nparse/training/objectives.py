"""Training objectives: what one batch of training computes, and what an epoch reports.

The network computes; an objective owns the loop over the batch (greedy with an oracle and
exploration, or beam search with global updates), the loss and its statistics. The trainer
builds one objective at start-up (``build_objective``) and only calls ``batch_loss`` and
``epoch_stats``. A new objective is a subclass here plus the config key that selects it.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections import Counter
from dataclasses import dataclass

import torch

from ..config import Config
from ..decoding.decode import completion_for
from ..io.data import Batch, Example
from ..models.parser import ParserModel
from ..systems import Oracle
from ..systems.adapters.arrays import Layout
from ..timing import timed
from .distill import Teacher, distill_loss, head_distill_loss
from .global_loop import GlobalSearch, GlobalSettings
from .local import Steps, train_loop
from .losses import LOCAL_LOSSES, global_loss, label_loss, tag_loss
from .settings import check_completion, check_reachable, global_settings


@dataclass(frozen=True)
class LossWeights:
    """Weights of the transition, label and tag losses on the shared encoder
    (``trainer.transition_loss_weight``, ``label_loss_weight``, ``tag_loss_weight``)."""

    transition: float = 1.0
    label: float = 1.0
    tag: float = 1.0

    def __post_init__(self) -> None:
        for key in ("transition", "label", "tag"):
            if not getattr(self, key) >= 0:
                raise ValueError(f"trainer.{key}_loss_weight={getattr(self, key)}: must be at least 0")


class Objective(ABC):
    """One way of training the network; ``batch_loss`` returns the batch's summed loss (the
    trainer divides by its tokens), counters to add up over the epoch, and the transitions taken."""

    # Per-epoch statistics drawn in TensorBoard under train/.
    curves: tuple[str, ...] = ()

    def __init__(self, oracle: Oracle, weights: LossWeights = LossWeights()):
        self.oracle = oracle
        self.weights = weights

    def start_epoch(self, epoch: int) -> None:
        """Called before every epoch (schedules)."""

    def check_examples(self, examples: list[Example]) -> None:
        """Refuse training data this objective cannot train on."""

    @abstractmethod
    def batch_loss(self, model: ParserModel, batch: Batch) -> tuple[torch.Tensor, dict[str, float], Counter]: ...

    @abstractmethod
    def epoch_stats(self, totals: Counter, sentences: int) -> dict[str, float]:
        """The objective's own statistics of an epoch from its summed counters."""


class Greedy(Objective):
    """Greedy training (Kiperwasser & Goldberg 2016): at every step the oracle's best-scoring
    correct transition against the wrong ones (``trainer.local_loss``), with exploration of the
    model's own errors for complete oracles (``oracle.explore_p`` from ``oracle.explore_from_epoch``)."""

    curves = ("transitions_per_sentence", "exploration_rate", "error_rate", "explore_p", "oracle_share")

    def __init__(
        self, oracle: Oracle, local_loss: str, explore_p: float, explore_from: int, rng: random.Random,
        weights: LossWeights = LossWeights(), teacher: Teacher | None = None, distill_weight: float = 0.0,
        distill_heads: bool = False,
    ):  # fmt: skip
        super().__init__(oracle, weights)
        if local_loss not in LOCAL_LOSSES:
            raise ValueError(f"trainer.local_loss={local_loss}: choose one of {', '.join(LOCAL_LOSSES)}")
        self.loss = LOCAL_LOSSES[local_loss]
        self.explore_setting, self.explore_from = explore_p, explore_from
        self.explore_p = 0.0
        self.rng = rng
        # trainer.distill_from: the teacher's scores as soft targets, weighted by trainer.distill_weight
        self.teacher, self.distill_weight = teacher, distill_weight
        self.distill_heads = distill_heads and teacher is not None  # trainer.distill_heads: labels and tags too

    def start_epoch(self, epoch: int) -> None:
        on = self.oracle.complete and epoch >= self.explore_from
        self.explore_p = self.explore_setting if on else 0.0

    def transition_loss(self, model: ParserModel, batch: Batch, table: torch.Tensor) -> tuple[torch.Tensor, Steps]:
        """The unweighted local loss of the batch's oracle walks on an encoded ``table``."""
        golds = [e.gold for e in batch.examples]
        lengths = [len(e) for e in batch.examples]
        layout = Layout(model.system, batch.width)
        steps = train_loop(layout, self.oracle, model.scorer, table.detach(), golds, lengths, self.explore_p, self.rng)
        with timed("loss"):
            loss = self.loss(model.scorer, table, steps)
            if self.teacher is not None and len(steps):
                teacher = self.teacher.log_probs(self.teacher.table(batch), steps)
                loss = loss + self.distill_weight * distill_loss(
                    model.scorer, table, steps, teacher, self.teacher.temperature
                )
            return loss, steps

    def batch_loss(self, model: ParserModel, batch: Batch) -> tuple[torch.Tensor, dict[str, float], Counter]:
        if self.distill_heads:  # before the teacher reads the batch: one encoder call gives tables and heads
            assert self.teacher is not None
            self.teacher.teach_heads(model)
        vectors, table = model.encode(batch)
        assert table is not None
        transition, steps = self.transition_loss(model, batch, table)
        with timed("loss"):
            w = self.weights
            loss = w.transition * transition
            loss = loss + w.label * label_loss(model, vectors, batch) + w.tag * tag_loss(model, vectors, batch)
            if self.distill_heads:
                assert self.teacher is not None
                targets = self.teacher.head_targets(batch, model)
                label_kl, tag_kl = head_distill_loss(model, vectors, batch, targets)
                loss = loss + self.distill_weight * (w.label * label_kl + w.tag * tag_kl)
        counts = {
            "transitions": len(steps), "errors": steps.errors, "explored": steps.explored,
            "oracle": steps.oracle_seconds,
        }  # fmt: skip
        return loss, counts, steps.actions

    def epoch_stats(self, totals: Counter, sentences: int) -> dict[str, float]:
        transitions = max(totals["transitions"], 1)
        return {
            "transitions_per_sentence": totals["transitions"] / max(sentences, 1),
            "error_rate": totals["errors"] / transitions,
            "exploration_rate": totals["explored"] / transitions,
            "explore_p": self.explore_p,
        }


class Global(Objective):
    """Global training with beam search (``global_loop.py``): early, max-violation or full
    updates with a margin or softmax loss, optionally with restart."""

    curves = ("oracle_share", "beam_size", "updates_per_sentence", "derivation_share_updated", "end_reached")

    def __init__(
        self, oracle: Oracle, settings: GlobalSettings, local: Greedy | None = None, local_weight: float = 0.0,
        weights: LossWeights = LossWeights(),
    ):  # fmt: skip
        super().__init__(oracle, weights)
        self.settings = settings
        # trainer.local_loss_weight: the greedy loss of the same batch added to the global one, as
        # Edunov et al. (2018) combine token- and sequence-level losses; it keeps the locally
        # trained scorer the global model starts from while the global loss reorders the beam.
        self.local, self.local_weight = local, local_weight

    def start_epoch(self, epoch: int) -> None:
        if self.local is not None:
            self.local.start_epoch(epoch)

    def check_examples(self, examples: list[Example]) -> None:
        check_reachable(self.settings, examples, self.oracle)

    def batch_loss(self, model: ParserModel, batch: Batch) -> tuple[torch.Tensor, dict[str, float], Counter]:
        vectors, table = model.encode(batch)
        assert table is not None
        golds = [e.gold for e in batch.examples]
        lengths = [len(e) for e in batch.examples]
        completion = completion_for(model, vectors, lengths)
        search_completion = None if completion is None else completion.detached()
        rec = GlobalSearch(
            model.layout(batch.width), self.oracle, model.scorer, table.detach(), golds, lengths, self.settings,
            search_completion,
        ).run()  # fmt: skip
        with timed("loss"):
            w = self.weights
            loss = w.transition * global_loss(model.scorer, table, rec, self.settings.loss, completion)
            if model.completion is not None and model.arc_loss:
                loss = loss + model.completion.head_loss(vectors, lengths, [e.sent.heads for e in batch.examples])
            loss = loss + w.label * label_loss(model, vectors, batch) + w.tag * tag_loss(model, vectors, batch)
        if self.local is not None:
            local, _ = self.local.transition_loss(model, batch, table)
            loss = loss + self.local_weight * local
        counts = {
            "updates": rec.violations, "covered": rec.covered, "reached_end": rec.reached_end,
            "stuck": rec.stuck, "oracle": rec.oracle_seconds,
        }  # fmt: skip
        return loss, counts, rec.actions

    def epoch_stats(self, totals: Counter, sentences: int) -> dict[str, float]:
        sents = max(sentences, 1)
        return {
            "beam_size": self.settings.beam_size,
            "updates_per_sentence": totals["updates"] / sents,
            "derivation_share_updated": totals["covered"] / sents,
            "end_reached": totals["reached_end"] / sents,
        }


def check_objective(cfg: Config, oracle: Oracle) -> None:
    """Refuse, before any data or model is read, settings the objective of ``trainer.name``
    cannot train (``build_objective`` comes later, once the teacher can be loaded)."""
    check_completion(cfg, global_settings(cfg, oracle) if cfg.trainer.is_global else None)


def build_objective(cfg: Config, oracle: Oracle, rng: random.Random, teacher: Teacher | None = None) -> Objective:
    """The objective of ``trainer.name`` (greedy or global) with its settings checked; ``teacher``
    is ``trainer.distill_from``'s (``distill.teacher_of``), for greedy training."""
    tc, oc = cfg.trainer, cfg.oracle
    weights = LossWeights(tc.transition_loss_weight, tc.label_loss_weight, tc.tag_loss_weight)
    distill_weight = tc.distill_weight if teacher is not None else 0.0
    if not tc.is_global:
        return Greedy(
            oracle, tc.local_loss, oc.explore_p, oc.explore_from_epoch, rng, weights, teacher, distill_weight,
            tc.distill_heads,
        )  # fmt: skip
    if teacher is not None:
        raise ValueError("trainer.distill_from distils in greedy training only (trainer=greedy)")
    weight = tc.local_loss_weight
    if weight is None or not weight >= 0:
        raise ValueError(f"trainer.local_loss_weight={weight}: must be at least 0")
    local = Greedy(oracle, tc.local_loss, oc.explore_p, oc.explore_from_epoch, rng) if weight > 0 else None
    return Global(oracle, global_settings(cfg, oracle), local, weight, weights)
