"""The derivation tree of one batch of global training, and the feature rows its nodes point at.

Every derivation the loss may need is a chain of nodes (parent node, feature row id, action)
back to a restart point (a root: parent, row and action -1), with its score and depth since that
point. The feature rows of every step's items are kept in order (a node's row id indexes their
concatenation), with their legal transitions for local scores and the completion factors of the
candidates that can become nodes. ``losses.global_loss`` reads all of it from ``GlobalRecord``.
"""

from __future__ import annotations

import numpy as np

from ..decoding.beam import Step
from ..decoding.completion import Factors
from ..systems.adapters.arrays import Layout


class Derivations:
    """Nodes, restart points and recorded feature rows of a batch (``global_loop.GlobalSearch``)."""

    def __init__(self, layout: Layout):
        self.layout = layout
        self.node_parts: list[np.ndarray] = []  # [m, 3] (parent, row, action) per chunk
        self.score_parts: list[np.ndarray] = []  # [m] derivation score of every node (since its restart point)
        self.depth_parts: list[np.ndarray] = []  # [m] transitions since its restart point
        self.size = 0  # nodes so far
        self.restart_rows: dict[int, np.ndarray] = {}  # the configuration of every restart point (root node)
        self.rows: list[np.ndarray] = []  # feature rows of every step
        self.legal_rows: list[np.ndarray] = []  # their legal transitions (local scores only)
        self.n_rows = 0
        self.row_base = 0  # id of the current step's first feature row
        self.factor_parts: list[Factors] = []

    def new_nodes(
        self, triples: np.ndarray, scores: np.ndarray | None = None, depths: np.ndarray | None = None
    ) -> np.ndarray:
        """Add nodes given as rows (parent node, feature row id, action), with their derivation
        scores and depths (restart points: 0); returns their ids."""
        ids = np.arange(self.size, self.size + len(triples))
        self.node_parts.append(np.asarray(triples, dtype=np.int64).reshape(-1, 3))
        self.score_parts.append(np.zeros(len(triples)) if scores is None else np.asarray(scores, dtype=np.float64))
        self.depth_parts.append(np.zeros(len(triples), dtype=np.int64) if depths is None else np.asarray(depths))
        self.size += len(triples)
        return ids

    def add_roots(self, rows: list[np.ndarray]) -> np.ndarray:
        """Restart points at these configurations (one row each); returns their nodes."""
        roots = self.new_nodes(np.full((len(rows), 3), -1))
        self.restart_rows.update((int(r), row) for r, row in zip(roots, rows))
        return roots

    def node_table(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(parent/row/action [N, 3], score [N], depth [N]) of every node so far."""
        if len(self.node_parts) > 1:
            self.node_parts = [np.concatenate(self.node_parts)]
            self.score_parts = [np.concatenate(self.score_parts)]
            self.depth_parts = [np.concatenate(self.depth_parts)]
        return self.node_parts[0], self.score_parts[0], self.depth_parts[0]

    def derivation(self, node: int) -> tuple[int, list[int]]:
        """(restart point node, transitions since it) of a node."""
        nodes, _, _ = self.node_table()
        actions = []
        while nodes[node, 0] >= 0 or nodes[node, 2] >= 0:
            actions.append(int(nodes[node, 2]))
            node = int(nodes[node, 0])
        return node, actions[::-1]

    def row_of_node(self, node: int) -> np.ndarray:
        """The configuration a node stands for: its restart point's row and transitions since."""
        root, actions = self.derivation(node)
        row = self.restart_rows[root].copy()
        for a in actions:
            self.layout.apply(row, np.array([a]))
        return row

    def prefixes(self, best: int, negatives: list[int]) -> list[tuple[int, float]]:
        """For every negative node, the prefix of node ``best``'s derivation as long as the
        negative's (its node and score): the positives of latent gold training."""
        nodes, score, depth = self.node_table()
        chain = [best]
        while nodes[chain[-1], 0] >= 0:
            chain.append(int(nodes[chain[-1], 0]))
        chain.reverse()  # chain[d]: the prefix of d transitions
        out = []
        for neg in negatives:
            pos = chain[min(int(depth[neg]), len(chain) - 1)]
            out.append((pos, float(score[pos])))
        return out

    def record_step(self, rows: np.ndarray, legal: np.ndarray | None) -> None:
        """The feature rows a step scores (and their legal transitions, for local scores)."""
        self.rows.append(rows)
        self.row_base = self.n_rows
        self.n_rows += len(rows)
        if legal is not None:
            self.legal_rows.append(legal)

    def keep_factors(self, found: Factors, s: Step, shape: tuple[int, int], k: int) -> None:
        """Record the factors of the candidates that can become nodes (the selected ones and
        the best marked one), with their feature row ids."""
        chosen = np.zeros(shape, dtype=bool)
        valid = np.arange(k)[None, :] < s.count[:, None]
        moved = valid & (s.action >= 0)
        chosen[s.parent[moved], s.action[moved]] = True
        best = (s.best_marked[:, 0] >= 0) & (s.best_marked[:, 1] >= 0)
        chosen[s.best_marked[best, 0].astype(np.int64), s.best_marked[best, 1].astype(np.int64)] = True
        kept = found.take(chosen[found.row, found.action])
        kept.row = kept.row + self.row_base
        self.factor_parts.append(kept)

    def factors(self) -> Factors | None:
        """The recorded factors of the whole batch (None without a completion model)."""
        if not self.factor_parts:
            return None
        parts = self.factor_parts
        return Factors(*(np.concatenate([getattr(p, k) for p in parts]) for k in Factors.__annotations__))
