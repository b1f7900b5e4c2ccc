"""Distillation: a small parser trained on a larger trained parser's transition scores.

``trainer.distill_from=PATH`` (greedy training) adds to the greedy loss, at every step the
student takes, the KL divergence from the teacher's distribution over the legal transitions to
the student's (Hinton et al. 2015), both at the teacher's temperature (the one it fitted on dev,
``training/calibration.py``: its hinge-trained scores are margins, and at that temperature their
softmax is calibrated), times ``trainer.distill_weight`` and the squared temperature. The
teacher reads the same sentences through its own vocabularies and scores the same
configurations (the same system: the feature rows of a step index both tables alike).

With ``trainer.distill_heads`` the student also learns the teacher's distributions over the
labels of the gold arcs and over the tags of every word (UPOS, and XPOS, FEATS and lemma rules
with ``model.analysis``), each a KL divergence at temperature 1 (those heads are trained by
cross-entropy: their softmax is already a probability) beside its own cross-entropy, weighted as
that loss is (``trainer.label_loss_weight``, ``trainer.tag_loss_weight``) times
``trainer.distill_weight``: an ensemble's gain is in its tags and labels too.

The teacher is frozen and reads each sentence the same way every epoch (evaluation mode: no
dropout), so its first-layer table of a sentence, and its head distributions, are kept after
the first epoch (``trainer.distill_cache_mb`` bounds them) and later epochs only run its scorer
on the student's configurations.
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
from ..io.data import ANALYSIS, Batch, Example, collate, encode
from ..models.ensemble import EnsembleModel, check_members, column_order
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
        # trainer.distill_heads: id(example) -> it and its head distributions (``head_targets``)
        self.kept_heads: dict[int, tuple[Example, dict[str, torch.Tensor]]] = {}
        self.orders: dict[str, torch.Tensor | None] | None = None  # the teacher's columns in the student's order
        self.fresh_heads: dict[int, tuple[Example, dict[str, torch.Tensor]]] = {}  # read with the last tables
        # one model as an ensemble of one for the heads: the same calls, its own scores unchanged
        self.net = self.model if isinstance(self.model, EnsembleModel) else EnsembleModel([self.model], [1.0])
        log.info(
            "distilling from %s (temperature %s)",
            ", ".join(map(str, paths)),
            ", ".join(f"{t:.3f}" for t in temperatures),
        )

    def _batch(self, examples: list[Example]) -> Batch:
        """The sentences read with the teacher's vocabularies (its first member's, for an ensemble)."""
        return collate([encode(e.sent, self.model.vocabs) for e in examples])

    @torch.no_grad()
    def encode(self, examples: list[Example]) -> torch.Tensor:
        """The teacher's first-layer table of the sentences (read with its vocabularies); once
        the heads are taught (``teach_heads``), their distributions from the same encoder call
        too, for ``head_targets`` of this batch."""
        if self.orders is None:
            _, table = self.model.encode(self._batch(examples))
        else:
            vectors, table = self.net.encode(self._batch(examples))
            self.fresh_heads = {id(e): (e, t) for e, t in zip(examples, self._heads_from(vectors, examples))}
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

    def head_names(self, student: ParserModel) -> list[str]:
        """The student's heads the teacher teaches: "labels", "upos" with a tagger, the analysis
        heads; refused where either factors FEATS, where the teacher lacks a head, or where a
        head's columns hold other items in the two."""
        names = ["labels"] + (["upos"] if student.tagger is not None else [])
        if student.analyser is not None:
            if student.options.feats_factored:
                raise ValueError("trainer.distill_heads: not with model.feats_factored (one softmax per feature)")
            names += list(ANALYSIS)
        teacher, first = self.model, self.model.members[0]
        for name in names:
            if (name == "upos" and teacher.tagger is None) or (
                name in ANALYSIS and (teacher.analyser is None or first.options.feats_factored)
            ):
                raise ValueError(f"trainer.distill_heads: the teacher has no {name} head of the student's kind")
            mine, theirs = getattr(student.vocabs, name), getattr(first.vocabs, name)
            if mine.itos != theirs.itos and column_order(mine, theirs) is None:
                raise ValueError(
                    f"trainer.distill_heads: the teacher's {name} are not the student's (trained on another file?)"
                )
        return names

    def teach_heads(self, student: ParserModel) -> None:
        """Teach the student's heads from now on (``head_names``), their columns in its order."""
        if self.orders is None:
            first = self.model.members[0]
            orders = {}
            for name in self.head_names(student):
                mine, theirs = getattr(student.vocabs, name), getattr(first.vocabs, name)
                orders[name] = None if mine.itos == theirs.itos else column_order(mine, theirs)
            self.orders = orders

    @torch.no_grad()
    def head_targets(self, batch: Batch, student: ParserModel) -> dict[str, torch.Tensor]:
        """The teacher's log-probabilities, columns in the student's order: "labels" for the
        batch's gold arcs in ``label_loss``'s order, each tagger head for the real words (the
        root left out) in the order of the batch's sentences. Sentences whose tables were just
        read (``encode``) have them already."""
        self.teach_heads(student)
        assert self.orders is not None
        got = {
            id(e): kept[1] for e in batch.examples if (kept := self.kept_heads.get(id(e))) is not None and kept[0] is e
        }
        missing = [e for e in batch.examples if id(e) not in got]
        unread = [e for e in missing if (fresh := self.fresh_heads.get(id(e))) is None or fresh[0] is not e]
        computed = dict(zip(map(id, unread), self._heads_of(unread))) if unread else {}
        for e in missing:
            targets = computed[id(e)] if id(e) in computed else self.fresh_heads[id(e)][1]
            got[id(e)] = targets
            size = sum(t.nbytes for t in targets.values())
            if self.kept_bytes + size <= self.cache_bytes:
                self.kept_heads[id(e)] = (e, targets)
                self.kept_bytes += size
        self.fresh_heads = {}
        return {name: torch.cat([got[id(e)][name] for e in batch.examples]) for name in self.orders}

    def _heads_of(self, examples: list[Example]) -> list[dict[str, torch.Tensor]]:
        """Each sentence's head distributions (``head_targets``) from one encoder call."""
        vectors, _ = self.net.encode(self._batch(examples), with_table=False)
        return self._heads_from(vectors, examples)

    def _heads_from(self, vectors: list[torch.Tensor], examples: list[Example]) -> list[dict[str, torch.Tensor]]:
        """Each sentence's head distributions from the members' vectors, one call of each head
        for all the sentences."""
        assert self.orders is not None
        net = self.net
        width = max(len(e.words) for e in examples)
        words, heads, deps = arc_rows(examples, width)
        flat = [v.reshape(-1, v.shape[-1]) for v in vectors]
        parts: dict[str, list[torch.Tensor]] = {}
        for name, order in self.orders.items():
            if name == "labels":
                scores = net.label_scores(vectors, heads, deps)
                sizes = [sum(1 for d in range(1, len(e) + 1) if e.labels[d] >= 0) for e in examples]
            else:
                head = net.tagger if name == "upos" else net.analyser[name] if net.analyser is not None else None
                assert head is not None  # head_names checked it
                scores = head([v[torch.from_numpy(words).to(v.device)] for v in flat])
                sizes = [len(e) for e in examples]
            logp = torch.log_softmax(scores.float(), -1)
            parts[name] = list((logp if order is None else logp[:, order.to(logp.device)]).split(sizes))
        return [{name: rows[b] for name, rows in parts.items()} for b in range(len(examples))]


def arc_rows(examples: Sequence[Example], width: int) -> tuple[np.ndarray, list[int], list[int]]:
    """Rows of a batch's flattened vectors (sentence b's word i at ``b * width + i``): every
    word's but the root's, and the heads and dependents of the gold arcs with a known label
    (``label_loss``'s arcs), sentence after sentence."""
    words = np.concatenate([np.arange(b * width + 1, b * width + len(e) + 1) for b, e in enumerate(examples)])
    heads, deps = [], []
    for b, e in enumerate(examples):
        for d in range(1, len(e) + 1):
            if e.labels[d] >= 0:
                heads.append(b * width + e.sent.heads[d])
                deps.append(b * width + d)
    return words, heads, deps


def head_distill_loss(
    model: ParserModel, vectors: torch.Tensor, batch: Batch, targets: dict[str, torch.Tensor]
) -> tuple[torch.Tensor, torch.Tensor]:
    """KL(teacher || student) summed over the gold arcs' labels, and over the words' tags (every
    tagger head): (label part, tag part), to be weighted as ``label_loss`` and ``tag_loss``."""
    rows, heads, deps = arc_rows(batch.examples, batch.width)
    zero = vectors.sum() * 0.0
    label = zero
    if heads:
        student = torch.log_softmax(model.label_scores(vectors, heads, deps), -1)
        label = F.kl_div(student, targets["labels"], log_target=True, reduction="sum")
    words = vectors.reshape(-1, vectors.shape[-1])[torch.from_numpy(rows).to(vectors.device)]
    tags = zero
    for name, teacher in targets.items():
        if name != "labels":
            student = torch.log_softmax(model.head(name)(words), -1)
            tags = tags + F.kl_div(student, teacher, log_target=True, reduction="sum")
    return label, tags


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


__all__ = ["Teacher", "distill_loss", "head_distill_loss", "teacher_of"]
