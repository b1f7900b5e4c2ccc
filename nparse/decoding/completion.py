"""Completion-model scores of beam candidates: the factors a transition completes, scored in one
batched call per parser step (Bohnet & Kuhn 2012, §4; bookkeeping in ``systems/adapters/factors.py``).

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
from ..systems.adapters.arrays import Layout
from ..systems.base import NONE
from ..systems.adapters.factors import ARITY


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


NODE_BITS = 20  # table rows per batch below 2**20 (a million words) can share the score cache


@njit(cache=True)
def _slot(keys_a, keys_b, a, b):
    """The slot of key (a, b) in an open-addressing table: its own, or the empty one to fill."""
    mask = keys_a.shape[0] - 1
    h = ((a * np.int64(-7046029254386353131)) ^ (b * np.int64(-4417276706812531889))) >> 7
    i = h & mask
    while keys_a[i] != -1 and (keys_a[i] != a or keys_b[i] != b):
        i = (i + 1) & mask
    return i


@njit(cache=True)
def _keys(kind, nodes, right, out_a, out_b):
    for f in range(kind.shape[0]):
        out_a[f] = (kind[f] << 41) | (right[f] << 40) | (nodes[f, 0] << 20) | nodes[f, 1]
        out_b[f] = (nodes[f, 2] << 20) | nodes[f, 3]


@njit(cache=True)
def _lookup(keys_a, keys_b, a, b, slots, missing):
    """The slot of every factor into ``slots``, adding the new keys; the indices of the factors
    not cached before (the first of any repeats within the call) into ``missing``; returns their
    number."""
    count = 0
    for f in range(a.shape[0]):
        i = _slot(keys_a, keys_b, a[f], b[f])
        if keys_a[i] == -1:
            keys_a[i], keys_b[i] = a[f], b[f]
            missing[count] = f
            count += 1
        slots[f] = i
    return count


class ScoreCache:
    """Scores of the factors already scored in this batch, by (kind, side, nodes).

    Most factors that beam candidates complete are repeats (about 80% in ``tools/bench.py``): the
    same arc and neighbourhood reached by several items or transitions, in this step or an
    earlier one. A
    factor's score depends on the batch's table alone, so each is computed once (the same float
    as recomputing it: trees are unchanged). An open-addressing table in arrays, doubled when
    half full; it lives as long as the batch's ``Completion``."""

    def __init__(self) -> None:
        self.keys_a = np.full(1 << 16, -1, dtype=np.int64)
        self.keys_b = np.empty(1 << 16, dtype=np.int64)
        self.vals = np.empty(1 << 16)
        self.count = 0

    def scores(self, found: "Factors", compute) -> np.ndarray:
        """Scores of ``found``; ``compute(indices)`` scores the factors not seen before."""
        f = len(found.kind)
        if 2 * (self.count + f) > self.keys_a.shape[0]:
            self._grow(2 * (self.count + f))
        a, b = np.empty(f, dtype=np.int64), np.empty(f, dtype=np.int64)
        _keys(found.kind, found.nodes, found.right.astype(np.int64), a, b)
        slots, missing = np.empty(f, dtype=np.int64), np.empty(f, dtype=np.int64)
        count = _lookup(self.keys_a, self.keys_b, a, b, slots, missing)
        if count:
            missing = missing[:count]
            self.vals[slots[missing]] = compute(missing)
            self.count += count
        return self.vals[slots]

    def _grow(self, need: int) -> None:
        size = self.keys_a.shape[0]
        while size < 2 * need:
            size *= 2
        filled = self.keys_a != -1
        old = self.keys_a[filled], self.keys_b[filled], self.vals[filled]
        self.keys_a = np.full(size, -1, dtype=np.int64)
        self.keys_b = np.empty(size, dtype=np.int64)
        self.vals = np.empty(size)
        _store_all(self.keys_a, self.keys_b, self.vals, *old)


@njit(cache=True)
def _store_all(keys_a, keys_b, vals, a, b, v):
    for f in range(a.shape[0]):
        i = _slot(keys_a, keys_b, a[f], b[f])
        keys_a[i], keys_b[i], vals[i] = a[f], b[f], v[f]


@dataclass
class Completion:
    """The factor scorer and its first-layer table for one batch (see ``FactorScorer.table``)."""

    scorer: FactorScorer
    table: torch.Tensor
    base: np.ndarray  # [B] table row of every sentence's root
    cache: ScoreCache | None = None  # scores of factors seen in this batch (CPU inference)

    def __post_init__(self) -> None:
        if self.cache is None and self.table.shape[0] < 1 << NODE_BITS:
            self.cache = ScoreCache()

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

        def compute(index: np.ndarray | slice) -> np.ndarray:
            result = np.empty(len(found.kind[index]))
            with torch.no_grad():
                _score(
                    self.table.detach().numpy(), sc.slot_start.numpy(), sc.arity.numpy(), sc.bias.detach().numpy(),
                    sc.out.detach().numpy(), sc.out_bias.detach().numpy(), found.kind[index], found.nodes[index],
                    found.right[index].astype(np.int64), result,
                )  # fmt: skip
            return result

        return compute(slice(None)) if self.cache is None else self.cache.scores(found, compute)

    def score(self, found: Factors) -> torch.Tensor:
        """Scores [F] of the factors (with autograd when the table has it)."""
        device = self.table.device
        return self.scorer.scores(
            self.table,
            torch.from_numpy(found.kind).to(device),
            torch.from_numpy(found.nodes).to(device),
            torch.from_numpy(found.right).to(device),
        )
