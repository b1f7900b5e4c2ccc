"""Losses: the local losses of greedy training (hinge, cross-entropy) and the global losses of
beam training.

Each is computed for a whole batch with one scorer call on the recorded feature rows (the
transition loops ran without autograd on the same first-layer table, see models/scorer.py).
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import torch
from torch.nn import functional as F

from ..decoding.completion import Completion
from ..decoding.scoring import TransitionScores
from ..io.data import ANALYSIS, Batch
from ..io.feats import FeatureTables
from ..models.parser import ParserModel
from .global_loop import GlobalRecord
from .local import NEG_INF, Steps, as_tensor


def step_tensors(
    scorer: TransitionScores, table: torch.Tensor, steps: Steps
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The scores of the recorded steps, their legal transitions and their correct legal ones."""
    device = table.device
    scores = scorer.scores(table, as_tensor(steps.rows, np.int64, device))
    legal = as_tensor(steps.legal, np.bool_, device)
    return scores, legal, as_tensor(steps.correct, np.bool_, device) & legal


def hinge_loss(scorer: TransitionScores, table: torch.Tensor, steps: Steps) -> torch.Tensor:
    """Sum over steps of max(0, 1 - best correct score + best wrong score) (K&G 2016)."""
    scores, legal, correct = step_tensors(scorer, table, steps)
    wrong = legal & ~correct
    scored = wrong.any(1) & correct.any(1)  # steps with a choice to learn from
    if not bool(scored.any()):
        return scores.sum() * 0.0
    best_correct = scores.masked_fill(~correct, NEG_INF).max(1).values
    best_wrong = scores.masked_fill(~wrong, NEG_INF).max(1).values
    margin = (1.0 - best_correct + best_wrong)[scored]
    return torch.relu(margin).sum()


def xent_loss(scorer: TransitionScores, table: torch.Tensor, steps: Steps) -> torch.Tensor:
    """Sum over steps of -log P(correct set): the softmax over the legal transitions, with
    several correct ones (a dynamic or non-deterministic oracle) their total probability, the
    marginal likelihood of the latent sequences. The scores become log-probabilities, which is
    what a beam on local scores (``decoding/beam.py``) and global fine-tuning start from."""
    scores, legal, correct = step_tensors(scorer, table, steps)
    scored = (legal & ~correct).any(1) & correct.any(1)  # steps with a choice to learn from
    if not bool(scored.any()):
        return scores.sum() * 0.0
    scores, legal, correct = scores[scored], legal[scored], correct[scored]
    every = torch.logsumexp(scores.masked_fill(~legal, NEG_INF), 1)
    good = torch.logsumexp(scores.masked_fill(~correct, NEG_INF), 1)
    return (every - good).sum()


def derivations(rec: GlobalRecord, nodes: list[int]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The transitions of every listed node's derivation since its restart point.

    Returns (derivation index, feature row id, action) per transition.
    """
    index, rows, actions = [], [], []
    parent, row, action = rec.parent, rec.row, rec.action
    for d, node in enumerate(nodes):
        while node >= 0 and action[node] >= 0:
            index.append(d)
            rows.append(row[node])
            actions.append(action[node])
            node = parent[node]
    return np.array(index, dtype=np.int64), np.array(rows, dtype=np.int64), np.array(actions, dtype=np.int64)


def derivation_scores(
    scorer: TransitionScores,
    table: torch.Tensor,
    rec: GlobalRecord,
    nodes: list[int],
    completion: Completion | None = None,
) -> torch.Tensor:
    """Scores (with autograd) of the listed nodes' derivations: the sum of their transition
    scores (raw, or local when the search recorded legal transitions), plus, with a completion
    model, of the factors their transitions completed."""
    index, rows, actions = derivations(rec, nodes)
    totals = torch.zeros(len(nodes), device=table.device)
    if len(rows) == 0:
        return totals
    unique, inverse = np.unique(rows, return_inverse=True)
    scores = scorer.scores(table, torch.from_numpy(rec.rows[unique]).to(table.device))
    if rec.legal is not None:  # local scores: log-softmax over each configuration's legal transitions
        legal = torch.from_numpy(rec.legal[unique]).to(table.device)
        scores = torch.log_softmax(scores.masked_fill(~legal, NEG_INF), 1)
    picked = scores[torch.from_numpy(inverse).to(table.device), torch.from_numpy(actions).to(table.device)]
    totals = totals.index_add(0, torch.from_numpy(index).to(table.device), picked)
    if completion is None or rec.factors is None or len(rec.factors.row) == 0:
        return totals
    which, owner = factors_of(rec, index, rows, actions, scorer.n_actions)
    if len(which) == 0:
        return totals
    unique, inverse = np.unique(which, return_inverse=True)
    fscores = completion.score(rec.factors.take(unique))[torch.from_numpy(inverse).to(table.device)]
    return totals.index_add(0, torch.from_numpy(owner).to(table.device), fscores)


def factors_of(
    rec: GlobalRecord, index: np.ndarray, rows: np.ndarray, actions: np.ndarray, n_actions: int
) -> tuple[np.ndarray, np.ndarray]:
    """(factor id, derivation index) of every factor completed by the listed transitions."""
    f = rec.factors
    assert f is not None
    keys = f.row * n_actions + f.action
    order = np.argsort(keys, kind="stable")
    sorted_keys = keys[order]
    wanted = rows * n_actions + actions
    lo = np.searchsorted(sorted_keys, wanted, "left")
    counts = np.searchsorted(sorted_keys, wanted, "right") - lo
    total = int(counts.sum())
    first = np.repeat(np.cumsum(counts) - counts, counts)
    positions = np.repeat(lo, counts) + np.arange(total) - first
    return order[positions], np.repeat(index, counts)


def global_loss(
    scorer: TransitionScores, table: torch.Tensor, rec: GlobalRecord, loss: str, completion: Completion | None = None
) -> torch.Tensor:
    """Sum over updates of the margin loss max(0, 1 + s(neg) - s(pos)) (violations only) or of
    the globally normalised loss -s(pos) + log sum over beam + pos of exp(s) (Andor et al.)."""
    ups = [u for u in rec.updates if u.violation] if loss == "margin" else rec.updates
    if not ups:
        return table.sum() * 0.0
    if loss == "margin":
        scores = derivation_scores(scorer, table, rec, [u.pos for u in ups] + [u.neg for u in ups], completion)
        pos, neg = scores[: len(ups)], scores[len(ups) :]
        return torch.relu(1.0 + neg - pos).sum()
    # softmax: pos and its beam, padded to one row per update
    lists = [[u.pos] + [b for b in u.beam if b != u.pos] for u in ups]
    width = max(len(x) for x in lists)
    flat = [n for x in lists for n in x]
    scores = derivation_scores(scorer, table, rec, flat, completion)
    padded = torch.full((len(lists), width), NEG_INF, device=table.device)
    mask = torch.zeros((len(lists), width), dtype=torch.bool)
    for i, x in enumerate(lists):
        mask[i, : len(x)] = True
    padded = padded.masked_scatter(mask.to(table.device), scores)
    return (torch.logsumexp(padded, 1) - padded[:, 0]).sum()


def label_loss(model: ParserModel, vectors: torch.Tensor, batch: Batch) -> torch.Tensor:
    """Cross-entropy of the gold labels on the gold arcs (labels are predicted after parsing)."""
    arcs, labels = [], []
    for b, e in enumerate(batch.examples):
        off = b * batch.width
        for d in range(1, len(e) + 1):
            if e.labels[d] >= 0:
                arcs.append((off + e.sent.heads[d], off + d))
                labels.append(e.labels[d])
    if not arcs:
        return vectors.sum() * 0.0
    scores = model.label_scores(vectors, [h for h, _ in arcs], [d for _, d in arcs])
    return F.cross_entropy(scores, torch.tensor(labels, device=model.device), reduction="sum")


def tag_loss(model: ParserModel, vectors: torch.Tensor, batch: Batch) -> torch.Tensor:
    """Cross-entropy of the gold UPOS of every word that has one (0 without a tagger), plus,
    with ``model.analysis``, of its XPOS, FEATS and lemma rule (a rule unseen in training, or a
    lemma "_", counts nothing; XPOS and FEATS "_" are values like any other)."""
    total = vectors.sum() * 0.0
    heads: list[tuple[torch.nn.Module, torch.Tensor | None, int]] = []
    if model.tagger is not None:
        unknown = model.vocabs.upos.index("_") if "_" in model.vocabs.upos else -1
        heads.append((model.tagger, batch.upos, unknown))
    factored = model.analyser is not None and model.options.feats_factored
    if model.analyser is not None:
        heads += [
            (model.analyser[name], getattr(batch, name), -1) for name in ANALYSIS if not (factored and name == "feats")
        ]
    if factored:
        total = total + feature_loss(model, vectors, batch)
    for head, gold, unknown in heads:
        assert gold is not None  # collate fills the analysis fields for vocabularies with morphology
        gold = gold.to(model.device)
        mask = (gold >= 3) & (gold != unknown)
        mask[:, 0] = False
        if bool(mask.any()):
            total = total + F.cross_entropy(head(vectors[mask]), gold[mask], reduction="sum")
    return total


def feature_loss(model: ParserModel, vectors: torch.Tensor, batch: Batch) -> torch.Tensor:
    """``model.feats_factored``: the cross-entropy of each feature's gold value (or "not set")
    over its own columns of the FEATS head, for every word (a value never seen counts nothing)."""
    assert model.analyser is not None and batch.features is not None
    gold = batch.features.to(model.device)
    mask = batch.real_mask().to(model.device)
    mask[:, 0] = False
    scores, gold = model.analyser["feats"](vectors[mask]), gold[mask]
    offsets = model.vocabs.features.offsets
    total = vectors.sum() * 0.0
    for k in range(len(offsets) - 1):
        part = scores[:, offsets[k] : offsets[k + 1]]
        total = total + F.cross_entropy(part, gold[:, k], ignore_index=FeatureTables.IGNORE, reduction="sum")
    return total


# Local (greedy) transition losses by ``trainer.local_loss``: (scorer, table, recorded steps) -> summed loss.
LOCAL_LOSSES: dict[str, Callable[[TransitionScores, torch.Tensor, Steps], torch.Tensor]] = {
    "hinge": hinge_loss,
    "xent": xent_loss,
}
