"""The live items of global training's beams as rows: every live sentence's beam (kind 0) and,
for the strategies that decode one, its gold beam (kind 1) restricted to correct transitions.

Item i is row ``states[i]`` of sentence ``sent[i]``; the items of group g (one beam of one
sentence) are rows ``starts[g]:starts[g + 1]``. Each item has its derivation's node
(``derivations.Derivations``), whether it is correct, its score and depth since its restart point.
"""

from __future__ import annotations

import numpy as np

from ..decoding.beam import Step, flatten
from ..systems.adapters.arrays import Layout
from .derivations import Derivations
from .updates import End, Next, Restart


class BeamItems:
    """The rows of a batch's beam items between steps (``global_loop.GlobalSearch``)."""

    def __init__(self, layout: Layout, lengths: list[int], kinds: int, tree: Derivations):
        self.layout, self.kinds, self.tree = layout, kinds, tree
        self.states = layout.initial(np.repeat(np.array(lengths), kinds))
        self.sent = np.repeat(np.arange(len(lengths)), kinds)
        self.kind = np.tile(np.arange(kinds), len(lengths))
        roots = tree.add_roots([self.states[i * kinds : i * kinds + 1] for i in range(len(lengths))])
        self.node = np.repeat(roots, kinds)
        self.correct = np.ones(len(self.sent), dtype=bool)
        self.score = np.zeros(len(self.sent))
        self.depth = np.zeros(
            len(self.sent), dtype=np.int64
        )  # transitions of every item's node since its restart point
        self.starts = np.arange(len(self.sent) + 1)

    def candidate_nodes(
        self, parent: np.ndarray, action: np.ndarray, count: np.ndarray, total: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Nodes and depths of candidates [G, K] given by parent row, action and score (a stay
        keeps its node)."""
        valid = np.arange(parent.shape[1])[None, :] < count[:, None]
        par = np.where(valid, parent, 0)
        moved = valid & (action >= 0)
        out = np.full(parent.shape, -1, dtype=np.int64)
        out[valid & ~moved] = self.node[par[valid & ~moved]]
        depth = np.where(valid, self.depth[par] + moved, 0)
        if moved.any():
            triples = np.stack([self.node[par[moved]], self.tree.row_base + par[moved], action[moved]], 1)
            out[moved] = self.tree.new_nodes(triples, total[moved], depth[moved])
        return out, depth

    def materialize(self, parent: int, action: int) -> np.ndarray:
        """The configuration of item ``parent`` after ``action``."""
        row = self.states[parent : parent + 1].copy()
        self.layout.apply(row, np.array([action]))
        return row

    def candidate_row(self, s: Step, g: int, r: int) -> np.ndarray:
        """The configuration of selected candidate ``r`` of group ``g`` of the step ``s``."""
        return self.materialize(int(s.parent[g, r]), int(s.action[g, r]))

    def advance(self, pieces: list[tuple[int, int, Next]], s: Step, nodes: np.ndarray, depths: np.ndarray) -> None:
        """The items of the next step: each sentence's kept candidates of ``s`` (with their
        ``nodes`` and ``depths`` [G, K]), or a fresh segment from its restart row."""
        kinds = self.kinds
        keep: list[int] = []
        keep_at: list[int] = []
        restarts: list[np.ndarray] = []
        restart_at: list[int] = []
        seg_sent: list[int] = []
        seg_kind: list[int] = []
        sizes: list[int] = []
        for b, gf, what in pieces:
            if isinstance(what, End):
                continue
            for kd in range(kinds):
                if isinstance(what, Restart):
                    restarts.append(what.row)
                    restart_at.append(len(sizes))
                    sizes.append(1)
                else:
                    keep.append(gf + kd)
                    keep_at.append(len(sizes))
                    sizes.append(int(s.count[gf + kd]))
                seg_sent.append(b)
                seg_kind.append(kd)
        starts = np.concatenate([[0], np.cumsum(sizes, dtype=np.int64)])
        total = int(starts[-1])
        self.sent = np.repeat(np.array(seg_sent, dtype=np.int64), sizes)
        self.kind = np.repeat(np.array(seg_kind, dtype=np.int64), sizes)
        states = np.empty((total, self.states.shape[1]), dtype=self.states.dtype)
        node = np.empty(total, dtype=np.int64)
        depth = np.zeros(total, dtype=np.int64)
        correct = np.empty(total, dtype=bool)
        score = np.empty(total)
        if keep:
            groups = np.array(keep)
            counts = s.count[groups]
            first = np.repeat(np.cumsum(counts) - counts, counts)
            dest = np.repeat(starts[keep_at], counts) + np.arange(int(counts.sum())) - first
            sub = self.states[flatten(groups, s.count, s.parent)]
            self.layout.apply(sub, flatten(groups, s.count, s.action))
            states[dest] = sub
            node[dest] = flatten(groups, s.count, nodes)
            depth[dest] = flatten(groups, s.count, depths)
            correct[dest] = flatten(groups, s.count, s.marked)
            score[dest] = flatten(groups, s.count, s.total)
        if restarts:
            dest = starts[restart_at]
            states[dest] = np.concatenate(restarts)
            node[dest], correct[dest], score[dest] = self.tree.add_roots(restarts), True, 0.0
        self.states, self.node, self.correct, self.score, self.starts = states, node, correct, score, starts
        self.depth = depth
