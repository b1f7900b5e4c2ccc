"""Global training with beam search: early update, max-violation and full update, latent gold
sequences and the global dynamic oracle with restart.

Sources: Collins & Roark (2004, early update), Huang et al. (2012, max-violation), Andor et al.
(2016, the globally normalised loss), Björkelund & Nivre (2015, latent gold sequences), Aufrant
et al. (2017, Algorithms 2-3: global dynamic oracles and restart).

One mechanism serves every oracle. Each beam item carries a flag, *correct*, relative to the
restart point c0 of its sentence (the initial configuration, or where training restarted):
a child is correct iff its parent is and the oracle accepts the transition (``oracle.correct``:
for a static oracle the transition of its sequence, for a non-deterministic one any transition
it allows, for a dynamic one the transitions of minimal cost, so that the sum of costs since c0
stays 0: CORRECT_y(c'|c0) of Aufrant et al.). Items never become correct again once wrong, and
the oracle is asked only about correct items. The positive example is always the best-scoring
correct derivation known at the update, which with a non-deterministic oracle is the latent gold
sequence (it changes with the model).

- ``early``: after each step, if no item of the beam is correct, update with the best correct
  candidate before truncation (positive) against the beam's best item (negative) (Algorithm 2).
- ``max_violation``: the beam decodes to the end beside a gold beam, a beam of the same size
  restricted to correct transitions (Björkelund & Nivre). At every step where the beam's best
  item is wrong, the violation is its score minus that of the best correct item (of both
  beams); the update is at the step of the largest violation.
- ``full``: decode to the end, positive = best complete correct derivation (gold beam and
  beam), negative = the beam's best.
A segment that ends without any violation closes with a final update (positive: the best
correct finished item): it changes nothing with the margin loss, and it is the full-beam
likelihood with the softmax loss.

Restart (``restart=True``, Algorithm 3): after an update the sentence goes on from the positive
(or, ``restart_from="negative"``, the negative: exploration) with a fresh beam holding only that
item, which is the new c0 (correct, score 0), until a segment reaches the end. Every segment
advances at least one transition, so the loop ends. The negative is not followed where the
oracle forbids exploring (``Oracle.may_explore``: arc-hybrid+SWAP never follows a wrong SWAP,
outside the sequences its oracle is exact for); the sentence restarts from the positive then.

The loop runs without autograd over a batch of sentences (every sentence's beam, and gold beam,
in the same state array, one scorer call per step) and records the derivations the loss needs
as a tree of nodes (parent, feature row id, action); ``losses.global_loss`` scores every
transition of every recorded derivation in one scorer call. Items that finish wait ("stay") as
in decoding.

``scores="local"`` (``trainer.global_scores``) sums log-softmax(score) over the legal transitions
instead of raw scores, in the search and in the loss: the model stays locally normalised, as a
greedy model decoded with a beam on local scores is (``decoding/beam.py``), so fine-tuning
starts from a beam that already parses as well as greedy decoding, and derivations of different
lengths stay comparable. Raw sums are the globally normalised model of Andor et al. (2016).

The choices (update strategy, positive, restart policy) are objects of ``updates.py``, built once
from the config in ``GlobalSettings``; this module runs the beam and asks them at every step.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
import torch

from ..decoding.beam import Step, flatten, local_scores, score_rows, step
from ..decoding.completion import Completion, Factors
from ..decoding.scoring import TransitionScores
from ..timing import timed
from ..systems import Oracle, StaticOracle
from ..systems.arrays import L_HEADS, L_N, Layout
from ..systems.row_oracle import RowOracle
from .updates import END, KEEP, End, GlobalSettings, Next, Restart, SentenceStep, Track, Update, Violation


@dataclass
class GlobalRecord:
    """What the loop recorded for the loss, and statistics for the logs."""

    rows: np.ndarray  # [R, slots] feature rows of every scored configuration
    parent: np.ndarray  # [nodes] parent node (-1: a restart point)
    row: np.ndarray  # [nodes] id of the feature row the node's transition was scored at (-1: none)
    action: np.ndarray  # [nodes] the node's transition (-1: none)
    updates: list[Update] = field(default_factory=list)
    sentences: int = 0
    violations: int = 0  # updates whose negative is wrong
    reached_end: int = 0  # sentences whose last positive example is a terminal configuration
    covered: float = 0.0  # sum over sentences of the share of words attached in the last positive
    # (1 for a terminal one: its leftover words are attached by the system's output)
    stuck: int = 0  # sentences where no correct transition was left (should not happen)
    oracle_seconds: float = 0.0
    actions: Counter = field(default_factory=Counter)  # transitions of the positive examples
    factors: Factors | None = None  # completion factors of the recorded candidates (row: feature row id)
    legal: np.ndarray | None = None  # [R, actions] legal transitions of ``rows`` (local scores only)


@dataclass
class Selection:
    """What one step selected, for the decisions and the next step's rows: the step's result
    (``decoding.beam.step``) and the node and depth of every selected candidate [G, K]."""

    s: Step
    node: np.ndarray
    depth: np.ndarray


class GlobalSearch:
    """Beam search over a batch with the updates of ``settings`` (one instance per batch)."""

    def __init__(
        self,
        layout: Layout,
        oracle: Oracle,
        scorer: TransitionScores,
        table: torch.Tensor,
        golds: list,
        lengths: list[int],
        settings: GlobalSettings,
        completion: Completion | None = None,
    ):
        self.layout, self.oracle, self.scorer, self.table = layout, oracle, scorer, table
        self.completion = completion
        self.factor_parts: list[Factors] = []
        self.golds, self.settings = golds, settings
        self.update, self.restart = settings.update_strategy, settings.restart_policy
        self.k = settings.beam_size
        self.kinds = 2 if self.update.gold_beam else 1  # a gold beam beside the beam
        self.tracks = [Track() for _ in lengths]
        # The oracle's compiled twin, asked about correct items only (a static oracle's follow
        # its sequence from the start, so it cannot restart).
        if isinstance(oracle, StaticOracle) and self.restart.restarts:
            raise ValueError(f"{oracle.name} is a static oracle: it cannot restart")
        self.row_oracle = RowOracle(oracle, golds)
        empty = np.zeros(0, dtype=np.int64)
        self.rec = GlobalRecord(empty, empty, empty, empty, sentences=len(lengths))
        self.rows: list[np.ndarray] = []
        self.legal_rows: list[np.ndarray] = []
        self.n_rows = 0
        self.row_base = 0  # id of the current step's first feature row
        self.node_parts: list[np.ndarray] = []  # [m, 3] (parent, row, action) per chunk
        self.score_parts: list[np.ndarray] = []  # [m] derivation score of every node (since its restart point)
        self.depth_parts: list[np.ndarray] = []  # [m] transitions since its restart point
        self.n_nodes = 0
        # Rows: every live sentence's beam (kind 0), then its gold beam (kind 1).
        self.states = layout.initial(np.repeat(np.array(lengths), self.kinds))
        self.sent = np.repeat(np.arange(len(lengths)), self.kinds)
        self.kind = np.tile(np.arange(self.kinds), len(lengths))
        roots = self.new_nodes(np.full((len(lengths), 3), -1))
        self.node = np.repeat(roots, self.kinds)
        # The configuration of every restart point (segment root node), for tests and tools.
        self.restart_rows = {int(r): self.states[i * self.kinds : i * self.kinds + 1] for i, r in enumerate(roots)}
        self.correct = np.ones(len(self.sent), dtype=bool)
        self.item_score = np.zeros(len(self.sent))
        self.depth = np.zeros(len(self.sent), dtype=np.int64)  # transitions of every item's node since its restart point
        self.starts = np.arange(len(self.sent) + 1)

    def new_nodes(self, triples: np.ndarray, scores: np.ndarray | None = None, depths: np.ndarray | None = None) -> np.ndarray:
        """Add nodes given as rows (parent node, feature row id, action), with their derivation
        scores and depths (restart points: 0); returns their ids."""
        ids = np.arange(self.n_nodes, self.n_nodes + len(triples))
        self.node_parts.append(np.asarray(triples, dtype=np.int64).reshape(-1, 3))
        self.score_parts.append(np.zeros(len(triples)) if scores is None else np.asarray(scores, dtype=np.float64))
        self.depth_parts.append(np.zeros(len(triples), dtype=np.int64) if depths is None else np.asarray(depths))
        self.n_nodes += len(triples)
        return ids

    def node_table(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(parent/row/action [N, 3], score [N], depth [N]) of every node so far."""
        if len(self.node_parts) > 1:
            self.node_parts = [np.concatenate(self.node_parts)]
            self.score_parts = [np.concatenate(self.score_parts)]
            self.depth_parts = [np.concatenate(self.depth_parts)]
        return self.node_parts[0], self.score_parts[0], self.depth_parts[0]

    def run(self) -> GlobalRecord:
        with timed("search"):  # includes the scorer and oracle calls of the search
            while len(self.sent):
                self.step()
        rec = self.rec
        off = self.layout.offsets
        ends = [t.last_pos_row for t in self.tracks if t.last_pos_row is not None]
        if ends:
            last = np.concatenate(ends)
            _, _, terminal = self.layout.inspect(last, np.zeros(len(last), dtype=np.int64), 0)
            n = last[:, off[L_N]]
            width = int(n.max()) + 1
            heads = last[:, off[L_HEADS] + 1 : off[L_HEADS] + width]
            attached = ((heads >= 0) & (np.arange(1, width)[None, :] <= n[:, None])).sum(1)
            rec.reached_end = int(terminal.sum())
            rec.covered = float(np.where(terminal, 1.0, attached / n).sum())
        rec.rows = np.concatenate(self.rows) if self.rows else np.zeros((0, 1), dtype=np.int64)
        if self.settings.local_scores:
            width = self.layout.n_actions
            rec.legal = np.concatenate(self.legal_rows) if self.legal_rows else np.zeros((0, width), dtype=bool)
        if self.factor_parts:
            parts = self.factor_parts
            rec.factors = Factors(*(np.concatenate([getattr(p, k) for p in parts]) for k in Factors.__annotations__))
        nodes, _, _ = self.node_table()
        rec.parent, rec.row, rec.action = nodes[:, 0], nodes[:, 1], nodes[:, 2]
        names = self.layout.system.actions
        for u in rec.updates:  # the transitions the positive examples teach
            node = u.pos
            while rec.action[node] >= 0:
                rec.actions[names[rec.action[node]]] += 1
                node = rec.parent[node]
        return rec

    def step(self) -> None:
        layout, rec = self.layout, self.rec
        rows, legal, done = layout.inspect(self.states, self.sent * layout.width, self.table.shape[0] - 1)
        self.rows.append(rows)
        self.row_base = self.n_rows
        self.n_rows += len(rows)
        scores = score_rows(self.scorer, self.table, rows, done)
        if self.settings.local_scores:  # as the decoder sums them (T = 1: the training sets the scale)
            self.legal_rows.append(legal)
            scores = local_scores(scores, legal, 1.0)
        found = None
        if self.completion is not None:  # candidates also score the factors they complete
            delta, found = self.completion.candidates(layout, self.states, self.sent, legal, done)
            scores = scores + delta
        # The oracle, asked only about correct items that can still move.
        ok = np.zeros_like(legal)
        clock = time.perf_counter()
        ask = np.flatnonzero(self.correct & ~done)
        ok[ask] = self.row_oracle(layout, self.states, ask, self.sent) & legal[ask]
        rec.oracle_seconds += time.perf_counter() - clock
        allowed = np.where((self.kind == 0)[:, None], legal, ok)
        s = step(
            layout, self.scorer, self.table, self.states, self.sent * layout.width, self.item_score, self.starts,
            self.k, allowed=allowed, marked=ok, marked_done=self.correct & done,
            inspected=(rows, legal, done), scores=scores,
        )  # fmt: skip
        selected = Selection(s, *self.candidate_nodes(s.parent, s.action, s.count, s.total))
        if found is not None:
            self.keep_factors(found, s, legal.shape)
        # Sentences with nothing to decide (no error, no possible violation, not finished) go on.
        valid: np.ndarray = np.arange(self.k)[None, :] < s.count[:, None]
        finished: np.ndarray = ((s.action < 0) | ~valid).all(1)
        free = np.arange(0, len(self.starts) - 1, self.kinds)
        over = finished[free] & finished[free + self.kinds - 1]
        attention = self.update.attention(s.marked, valid, free) | over
        pieces = []
        for g, look in zip(free.tolist(), attention.tolist()):
            b = int(self.sent[self.starts[g]])
            pieces.append((b, g, self.decide(b, g, selected) if look else KEEP))
        self.advance(pieces, selected)

    def keep_factors(self, found: Factors, s: Step, shape: tuple[int, int]) -> None:
        """Record the factors of the candidates that can become nodes (the selected ones and
        the best marked one), with their feature row ids."""
        chosen = np.zeros(shape, dtype=bool)
        valid = np.arange(self.k)[None, :] < s.count[:, None]
        moved = valid & (s.action >= 0)
        chosen[s.parent[moved], s.action[moved]] = True
        best = (s.best_marked[:, 0] >= 0) & (s.best_marked[:, 1] >= 0)
        chosen[s.best_marked[best, 0].astype(np.int64), s.best_marked[best, 1].astype(np.int64)] = True
        kept = found.take(chosen[found.row, found.action])
        kept.row = kept.row + self.row_base
        self.factor_parts.append(kept)

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
            triples = np.stack([self.node[par[moved]], self.row_base + par[moved], action[moved]], 1)
            out[moved] = self.new_nodes(triples, total[moved], depth[moved])
        return out, depth

    def explorable(self, node: int, b: int) -> bool:
        """Whether the oracle may explore along a node's derivation (``Oracle.may_explore`` at
        every transition it does not call correct); oracles that never object are not asked."""
        if type(self.oracle).may_explore is Oracle.may_explore:
            return True
        root, actions = self.derivation(node)
        return self.row_oracle.explorable(self.layout, self.restart_rows[root], actions, b)

    def derivation(self, node: int) -> tuple[int, list[int]]:
        """(restart point node, transitions since it) of a node, for tests and tools."""
        nodes, _, _ = self.node_table()
        actions = []
        while nodes[node, 0] >= 0 or nodes[node, 2] >= 0:
            actions.append(int(nodes[node, 2]))
            node = int(nodes[node, 0])
        return node, actions[::-1]

    def materialize(self, parent: int, action: int) -> np.ndarray:
        """The configuration of item ``parent`` of the current rows after ``action``."""
        row = self.states[parent : parent + 1].copy()
        self.layout.apply(row, np.array([action]))
        return row

    def candidate_row(self, s: Step, g: int, r: int) -> np.ndarray:
        """The configuration of selected candidate ``r`` of group ``g`` of the step ``s``."""
        return self.materialize(int(s.parent[g, r]), int(s.action[g, r]))

    def restart_row(self, step: SentenceStep, pos_row: np.ndarray) -> np.ndarray | None:
        """Where sentence ``step.b`` goes on after an update at this step (None: it ends)."""
        return self.restart.row(self, step.b, step.neg_node, pos_row, lambda: self.candidate_row(step.s, step.gf, 0))

    def sentence_step(self, b: int, gf: int, selected: Selection) -> SentenceStep:
        """Sentence b after the step: its beam, the negative, the best correct item known now
        (the beam's correct items first, as max keeps the first of equal scores and an identical
        derivation is not counted twice, then the gold beam) and whether the segment is over."""
        s = selected.s
        count = int(s.count[gf])
        beam = selected.node[gf, :count].tolist()
        options = [(s.total[gf, r], gf, r) for r in range(count) if s.marked[gf, r]]
        over = bool((s.action[gf, :count] < 0).all())
        if self.kinds == 2:
            gg = gf + 1
            options += [(s.total[gg, r], gg, r) for r in range(s.count[gg])]
            over = over and bool((s.action[gg, : s.count[gg]] < 0).all())
        best = max(options, key=lambda o: o[0]) if options else None
        neg_ok = bool(s.marked[gf, 0])
        return SentenceStep(b, gf, s, selected.node, beam, beam[0], neg_ok, best, over)

    def decide(self, b: int, gf: int, selected: Selection) -> Next:
        """What sentence b does next: keep its selected items, restart from a row, or end."""
        step_ = self.sentence_step(b, gf, selected)
        now = self.update.at_step(self, step_)
        if now is not None:
            return now
        if not step_.over:
            return KEEP
        return self.close_segment(step_)

    def close_segment(self, step_: SentenceStep) -> Next:
        """The segment is over: its largest violation is the update (a restart may follow); with
        none, a final update with the best correct finished item ends the sentence."""
        self.update.at_segment_end(self, step_)
        track = self.tracks[step_.b]
        if track.worst is not None:
            worst, track.worst = track.worst, None
            self.add_update(track, worst.update, worst.pos_row)
            return END if worst.restart_row is None else Restart(worst.restart_row)
        if step_.best is None:
            self.rec.stuck += 1
            return END
        final = Update(step_.best_node, step_.neg_node, step_.beam, not step_.neg_ok)
        self.add_update(track, final, self.candidate_row(step_.s, step_.best[1], step_.best[2]))
        return END

    def prefix_violation(self, b: int, track: Track, best: int) -> Violation:
        """The largest violation of a finished segment against prefixes of its best complete
        correct derivation (node ``best``), as latent structure training defines the positive
        (Björkelund & Nivre 2015): the step's negative against the prefix of the same length."""
        nodes, score, depth = self.node_table()
        chain = [best]
        while nodes[chain[-1], 0] >= 0:
            chain.append(int(nodes[chain[-1], 0]))
        chain.reverse()  # chain[d]: the prefix of d transitions
        worst = None
        for wrong in track.wrong:
            pos = chain[min(int(depth[wrong.neg]), len(chain) - 1)]
            gap = wrong.score - float(score[pos])
            if worst is None or gap > worst[0]:
                worst = (gap, pos, wrong)
        track.wrong = []
        assert worst is not None
        gap, pos, wrong = worst
        pos_row = self.row_of_node(pos)
        restart = self.restart.row(self, b, wrong.neg, pos_row, lambda: wrong.neg_row)
        return Violation(gap, Update(pos, wrong.neg, wrong.beam, True), pos_row, restart)

    def row_of_node(self, node: int) -> np.ndarray:
        """The configuration a node stands for: its restart point's row and transitions since."""
        root, actions = self.derivation(node)
        row = self.restart_rows[root].copy()
        for a in actions:
            self.layout.apply(row, np.array([a]))
        return row

    def add_update(self, track: Track, update: Update, pos_row: np.ndarray) -> None:
        self.rec.updates.append(update)
        self.rec.violations += update.violation
        track.last_pos_row = pos_row

    def advance(self, pieces: list[tuple[int, int, Next]], selected: Selection) -> None:
        """The rows of the next step: kept candidates, or a fresh segment from a restart row."""
        s = selected.s
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
            node[dest] = flatten(groups, s.count, selected.node)
            depth[dest] = flatten(groups, s.count, selected.depth)
            correct[dest] = flatten(groups, s.count, s.marked)
            score[dest] = flatten(groups, s.count, s.total)
        if restarts:
            dest = starts[restart_at]
            states[dest] = np.concatenate(restarts)
            roots = self.new_nodes(np.full((len(dest), 3), -1))
            self.restart_rows.update((int(r), row) for r, row in zip(roots, restarts))
            node[dest], correct[dest], score[dest] = roots, True, 0.0
        self.states, self.node, self.correct, self.item_score, self.starts = states, node, correct, score, starts
        self.depth = depth


__all__ = ["GlobalRecord", "GlobalSearch", "GlobalSettings", "Update"]
