"""Completion-model scores of beam candidates: the factors a transition completes, scored in one
batched call per parser step (Bohnet & Kuhn 2012, §4; bookkeeping in ``systems/factors.py``).

The score of a beam item is the sum of its transition scores plus the scores of the factors of
its partial tree that are complete. A candidate (item, transition) therefore scores
``item + transition + the factors that transition completes``; candidates are ranked and the beam
truncated on that total, so the beam is reordered as soon as the deciding factor is complete.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from numba import njit

from ..models.completion import FactorScorer
from ..systems.arrays import Layout
from ..systems.base import NONE
from ..systems.factors import ARITY


@dataclass
class Factors:
    """Factors emitted by candidates: the candidate's row and action, the kind, the nodes as
    table rows (padded), and whether the head is left of the dependent."""

    row: np.ndarray
    action: np.ndarray
    kind: np.ndarray
    nodes: np.ndarray
    right: np.ndarray

    def take(self, keep: np.ndarray) -> "Factors":
        return Factors(self.row[keep], self.action[keep], self.kind[keep], self.nodes[keep], self.right[keep])


def table_rows(kind: np.ndarray, nodes: np.ndarray, offset: np.ndarray, none_row: int) -> np.ndarray:
    """Word indices [F, 4] to table rows: ``offset + word``, the missing-node row for NONE, the
    padding row (``none_row + 1``) beyond each kind's arity."""
    out = np.where(nodes == NONE, none_row, nodes + offset[:, None])
    pad = np.arange(nodes.shape[1])[None, :] >= ARITY[kind][:, None]
    return np.where(pad, none_row + 1, out)


@njit(cache=True)
def _score(table, slot_start, arity, bias, out, out_bias, kind, nodes, right, result):
    """The factor MLP of ``FactorScorer.scores`` for inference, one factor at a time, without
    the [F, 4, hidden] intermediate (memory traffic, not arithmetic, bounds the batched form).
    Equal to the batched form up to float32 rounding."""
    hidden = table.shape[2]
    h = np.empty(hidden, dtype=np.float32)
    for f in range(kind.shape[0]):
        k = kind[f]
        for j in range(hidden):
            h[j] = bias[k, right[f], j]
        for s in range(arity[k]):
            row, slot = nodes[f, s], slot_start[k] + s
            for j in range(hidden):
                h[j] += table[row, slot, j]
        acc = np.float64(out_bias[k])
        for j in range(hidden):  # tanh(x) = 1 - 2 / (exp(2x) + 1): 2.5x faster than tanhf here
            acc += out[k, j] * (np.float32(1.0) - np.float32(2.0) / (np.exp(np.float32(2.0) * h[j]) + np.float32(1.0)))
        result[f] = acc


@dataclass
class Completion:
    """The factor scorer and its first-layer table for one batch (see ``FactorScorer.table``)."""

    scorer: FactorScorer
    table: torch.Tensor
    base: np.ndarray  # [B] table row of every sentence's root

    @classmethod
    def build(cls, scorer: FactorScorer, vectors: torch.Tensor, lengths: list[int]) -> "Completion":
        base = np.concatenate([[0], np.cumsum(np.asarray(lengths, dtype=np.int64) + 1)[:-1]])
        return cls(scorer, scorer.table(vectors, lengths), base)

    def detached(self) -> "Completion":
        return Completion(self.scorer, self.table.detach(), self.base)

    @property
    def none_row(self) -> int:
        return self.table.shape[0] - 2

    def candidates(
        self, layout: Layout, states: np.ndarray, sent: np.ndarray, legal: np.ndarray, done: np.ndarray
    ) -> tuple[np.ndarray, Factors]:
        """Completion scores [m, A] of every candidate (row, legal action) of rows belonging to
        sentences ``sent``, and the factors."""
        row, action, kind, words = layout.candidates(states, legal, done)
        nodes = table_rows(kind, words, self.base[sent[row]], self.none_row)
        found = Factors(row, action, kind, nodes, words[:, 1] > words[:, 0])
        delta = np.zeros(legal.shape)
        if len(row):
            np.add.at(delta, (row, action), self.score_fixed(found))
        return delta, found

    def score_fixed(self, found: Factors) -> np.ndarray:
        """Scores (float64, no autograd) of the factors: compiled on CPU, batched torch elsewhere."""
        if self.table.device.type != "cpu":
            with torch.no_grad():
                return self.score(found).double().cpu().numpy()
        sc = self.scorer
        result = np.empty(len(found.kind))
        with torch.no_grad():
            _score(
                self.table.detach().numpy(), sc.slot_start.numpy(), sc.arity.numpy(), sc.bias.detach().numpy(),
                sc.out.detach().numpy(), sc.out_bias.detach().numpy(), found.kind, found.nodes,
                found.right.astype(np.int64), result,
            )  # fmt: skip
        return result

    def score(self, found: Factors) -> torch.Tensor:
        """Scores [F] of the factors (with autograd when the table has it)."""
        device = self.table.device
        return self.scorer.scores(
            self.table,
            torch.from_numpy(found.kind).to(device),
            torch.from_numpy(found.nodes).to(device),
            torch.from_numpy(found.right).to(device),
        )
