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


@dataclass
class Completion:
    """The factor scorer and its first-layer table for one batch."""

    scorer: FactorScorer
    table: torch.Tensor

    @property
    def none_row(self) -> int:
        return self.table.shape[0] - 2

    def candidates(
        self, layout: Layout, states: np.ndarray, offsets: np.ndarray, legal: np.ndarray, done: np.ndarray
    ) -> tuple[np.ndarray, Factors]:
        """Completion scores [m, A] of every candidate (row, legal action), and the factors."""
        row, action, kind, words = layout.candidates(states, legal, done)
        nodes = table_rows(kind, words, offsets[row], self.none_row)
        found = Factors(row, action, kind, nodes, words[:, 1] > words[:, 0])
        delta = np.zeros(legal.shape)
        if len(row):
            with torch.no_grad():
                scores = self.score(found).double().cpu().numpy()
            np.add.at(delta, (row, action), scores)
        return delta, found

    def score(self, found: Factors) -> torch.Tensor:
        """Scores [F] of the factors (with autograd when the table has it)."""
        device = self.table.device
        return self.scorer.scores(
            self.table,
            torch.from_numpy(found.kind).to(device),
            torch.from_numpy(found.nodes).to(device),
            torch.from_numpy(found.right).to(device),
        )
