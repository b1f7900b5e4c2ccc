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
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
import torch

from ..decoding.beam import flatten, local_scores, score_rows, step
from ..decoding.completion import Completion, Factors
from ..decoding.scoring import TransitionScores
from ..timing import timed
from ..systems import Oracle, StaticOracle
from ..systems.arrays import L_HEADS, L_N, L_STEPS, Layout

UPDATES = ("early", "max_violation", "full")
LOSSES = ("margin", "softmax")
RESTART_FROM = ("positive", "negative")
POSITIVES = ("prefix", "best")


@dataclass
class GlobalSettings:
    beam_size: int = 8
    update: str = "early"
    loss: str = "margin"
    restart: bool = False
    restart_from: str = "positive"
    scores: str = "raw"  # what derivations sum: raw transition scores, or local ones (log-softmax over the legal transitions)
    positive: str = "prefix"  # max_violation's positive: "prefix" of the best complete correct derivation, or "best" correct item at the step


@dataclass
class Update:
    """One update; derivations are counted from their segment's restart point."""

    pos: int  # node of the positive example
    neg: int  # node of the negative example (the beam's best)
    beam: list[int]  # nodes of the beam at the update (the softmax normaliser, with pos)
    violation: bool  # the negative is wrong (only then does the margin loss apply)


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
class _Violation:
    gap: float
    update: Update
    pos_row: np.ndarray
    restart_row: np.ndarray | None  # the configuration to restart from (None: no restart)


@dataclass
class _Track:
    """Per-sentence bookkeeping between steps."""

    worst: _Violation | None = None  # largest violation of the current segment
    wrong: list = field(default_factory=list)  # (neg node, its score, beam nodes, neg row) per wrong step (prefix positives)
    last_pos_row: np.ndarray | None = None  # the configuration of the last positive example


def static_sequence(oracle: StaticOracle, gold) -> list[int]:
    """The oracle's transition sequence for a gold tree (it prepared), computed once, kept with it."""
    if not hasattr(gold, "static_sequence"):
        gold.static_sequence = oracle.sequence(gold)
    return gold.static_sequence


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
        self.k = settings.beam_size
        self.kinds = 1 if settings.update == "early" else 2  # a gold beam beside the beam
        self.tracks = [_Track() for _ in lengths]
        # A static oracle's correct items follow its sequence from the start: read it, do not ask.
        self.sequences = None
        if isinstance(oracle, StaticOracle):
            if settings.restart:
                raise ValueError(f"{oracle.name} is a static oracle: it cannot restart")
            self.sequences = [static_sequence(oracle, g) for g in golds]
        else:
            self.row_oracle = oracle.for_rows(golds)
        empty = np.zeros(0, dtype=np.int64)
        self.rec = GlobalRecord(empty, empty, empty, empty, sentences=len(lengths))
        self.rows: list[np.ndarray] = []
        self.legal_rows: list[np.ndarray] = []
        self.n_rows = 0
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
        if self.settings.scores == "local":
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
        if self.settings.scores == "local":  # as the decoder sums them (T = 1: the training sets the scale)
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
        if self.sequences is not None:  # a static oracle: the next transition of its sequence
            steps = self.states[ask, layout.offsets[L_STEPS]]
            ok[ask, [self.sequences[self.sent[i]][t] for i, t in zip(ask, steps)]] = True
            ok &= legal
        else:
            ok[ask] = self.row_oracle(layout, self.states, ask, self.sent) & legal[ask]
        rec.oracle_seconds += time.perf_counter() - clock
        allowed = np.where((self.kind == 0)[:, None], legal, ok)
        s = step(
            layout, self.scorer, self.table, self.states, self.sent * layout.width, self.item_score, self.starts,
            self.k, allowed=allowed, marked=ok, marked_done=self.correct & done,
            inspected=(rows, legal, done), scores=scores,
        )  # fmt: skip
        self.s = s
        self.sel_node, self.sel_depth = self.candidate_nodes(s.parent, s.action, s.count, s.total)
        if found is not None:
            self.keep_factors(found, s, legal.shape)
        # Sentences with nothing to decide (no error, no possible violation, not finished) go on.
        valid: np.ndarray = np.arange(self.k)[None, :] < s.count[:, None]
        finished: np.ndarray = ((s.action < 0) | ~valid).all(1)
        free = np.arange(0, len(self.starts) - 1, self.kinds)
        over = finished[free] & finished[free + self.kinds - 1]
        if self.settings.update == "early":
            attention = ~(s.marked & valid)[free].any(1) | over
        elif self.settings.update == "max_violation":
            attention = ~s.marked[free, 0] | over
        else:
            attention = over
        pieces = []
        for g, look in zip(free.tolist(), attention.tolist()):
            b = int(self.sent[self.starts[g]])
            pieces.append((b, g, self.decide(b, g) if look else "keep"))
        self.advance(pieces)

    def keep_factors(self, found: Factors, s, shape: tuple[int, int]) -> None:
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
        c = self.layout.to_config(self.restart_rows[root], 0)
        gold = self.golds[b]
        for a in actions:
            if not self.oracle.correct(c, gold)[a] and not self.oracle.may_explore(c, gold, a):
                return False
            self.layout.system.apply(c, a)
        return True

    def derivation(self, node: int) -> tuple[int, list[int]]:
        """(restart point node, transitions since it) of a node, for tests and tools."""
        nodes, _, _ = self.node_table()
        actions = []
        while nodes[node, 0] >= 0 or nodes[node, 2] >= 0:
            actions.append(int(nodes[node, 2]))
            node = int(nodes[node, 0])
        return node, actions[::-1]

    def materialize(self, parent: int, action: int) -> np.ndarray:
        row = self.states[parent : parent + 1].copy()
        self.layout.apply(row, np.array([action]))
        return row

    def decide(self, b: int, gf: int) -> object:
        """What sentence b does next: "keep" its selected items, restart from a row, or None (end)."""
        s, track, rec, settings = self.s, self.tracks[b], self.rec, self.settings
        count = s.count[gf]
        beam = self.sel_node[gf, :count].tolist()
        neg_node, neg_ok = beam[0], bool(s.marked[gf, 0])
        free_done = bool((s.action[gf, :count] < 0).all())
        gg = gf + 1
        two = self.kinds == 2
        gold_done = bool((s.action[gg, : s.count[gg]] < 0).all()) if two else True

        def row_of(g: int, r: int) -> np.ndarray:
            return self.materialize(int(s.parent[g, r]), int(s.action[g, r]))

        def restart_row(pos_row: np.ndarray, violation: bool) -> np.ndarray | None:
            if not (settings.restart and violation):
                return None
            if settings.restart_from == "negative" and self.explorable(neg_node, b):
                return row_of(gf, 0)
            return pos_row

        if settings.update == "early" and not s.marked[gf, :count].any():
            parent, action = int(s.best_marked[gf, 0]), int(s.best_marked[gf, 1])
            if parent < 0:
                rec.stuck += 1
                return None
            pos_node = self.candidate_nodes(
                np.array([[parent]]), np.array([[action]]), np.array([1]), s.best_marked[gf : gf + 1, 2:3]
            )[0][0, 0]  # fmt: skip
            pos_row = self.materialize(parent, action)
            self.add_update(track, Update(int(pos_node), neg_node, beam, True), pos_row)
            return restart_row(pos_row, True)

        # The best correct item known now: the beam's correct items first (max keeps the first
        # of equal scores, so an identical derivation is not counted twice), then the gold beam.
        options = [(s.total[gf, r], gf, r) for r in range(count) if s.marked[gf, r]]
        if two:
            options += [(s.total[gg, r], gg, r) for r in range(s.count[gg])]
        best = max(options, key=lambda o: o[0]) if options else None
        prefix = settings.update == "max_violation" and settings.positive == "prefix"
        if prefix and not neg_ok:  # the positive is known when the best complete correct one is
            neg_row = row_of(gf, 0) if settings.restart and settings.restart_from == "negative" else None
            track.wrong.append((neg_node, float(s.total[gf, 0]), beam, neg_row))
        elif settings.update == "max_violation" and not neg_ok and best is not None:
            gap = s.total[gf, 0] - best[0]
            if track.worst is None or gap > track.worst.gap:
                pos_row = row_of(best[1], best[2])
                up = Update(int(self.sel_node[best[1], best[2]]), neg_node, beam, True)
                track.worst = _Violation(gap, up, pos_row, restart_row(pos_row, True))
        if not (free_done and gold_done):
            return "keep"
        # The segment is over.
        if prefix and track.wrong and best is not None:
            track.worst = self.prefix_violation(b, track, int(self.sel_node[best[1], best[2]]))
        if track.worst is not None:
            worst, track.worst = track.worst, None
            self.add_update(track, worst.update, worst.pos_row)
            return worst.restart_row
        if best is None:
            rec.stuck += 1
            return None
        final = Update(int(self.sel_node[best[1], best[2]]), neg_node, beam, not neg_ok)
        self.add_update(track, final, row_of(best[1], best[2]))
        return None

    def prefix_violation(self, b: int, track: _Track, best: int) -> _Violation:
        """The largest violation of a finished segment against prefixes of its best complete
        correct derivation (node ``best``), as latent structure training defines the positive
        (Björkelund & Nivre 2015): the step's negative against the prefix of the same length."""
        nodes, score, depth = self.node_table()
        chain = [best]
        while nodes[chain[-1], 0] >= 0:
            chain.append(int(nodes[chain[-1], 0]))
        chain.reverse()  # chain[d]: the prefix of d transitions
        worst = None
        for neg, neg_score, beam, neg_row in track.wrong:
            pos = chain[min(int(depth[neg]), len(chain) - 1)]
            gap = neg_score - float(score[pos])
            if worst is None or gap > worst[0]:
                worst = (gap, pos, neg, beam, neg_row)
        track.wrong = []
        assert worst is not None
        gap, pos, neg, beam, neg_row = worst
        pos_row = self.row_of_node(pos)
        restart = None
        if self.settings.restart:
            restart = pos_row
            if self.settings.restart_from == "negative" and neg_row is not None and self.explorable(neg, b):
                restart = neg_row
        return _Violation(gap, Update(pos, neg, beam, True), pos_row, restart)

    def row_of_node(self, node: int) -> np.ndarray:
        """The configuration a node stands for: its restart point's row and transitions since."""
        root, actions = self.derivation(node)
        row = self.restart_rows[root].copy()
        for a in actions:
            self.layout.apply(row, np.array([a]))
        return row

    def add_update(self, track: _Track, update: Update, pos_row: np.ndarray) -> None:
        self.rec.updates.append(update)
        self.rec.violations += update.violation
        track.last_pos_row = pos_row

    def advance(self, pieces: list[tuple[int, int, object]]) -> None:
        """The rows of the next step: kept candidates, or a fresh segment from a restart row."""
        s, kinds = self.s, self.kinds
        keep: list[int] = []
        keep_at: list[int] = []
        restarts: list[np.ndarray] = []
        restart_at: list[int] = []
        seg_sent: list[int] = []
        seg_kind: list[int] = []
        sizes: list[int] = []
        for b, gf, what in pieces:
            if what is None:
                continue
            for kd in range(kinds):
                if isinstance(what, str):
                    keep.append(gf + kd)
                    keep_at.append(len(sizes))
                    sizes.append(int(s.count[gf + kd]))
                else:
                    assert isinstance(what, np.ndarray)  # a restart row
                    restarts.append(what)
                    restart_at.append(len(sizes))
                    sizes.append(1)
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
            node[dest] = flatten(groups, s.count, self.sel_node)
            depth[dest] = flatten(groups, s.count, self.sel_depth)
            correct[dest] = flatten(groups, s.count, s.marked)
            score[dest] = flatten(groups, s.count, s.total)
        if restarts:
            dest = starts[restart_at]
            states[dest] = np.concatenate(restarts)  # type: ignore[arg-type]
            roots = self.new_nodes(np.full((len(dest), 3), -1))
            self.restart_rows.update((int(r), row) for r, row in zip(roots, restarts))  # type: ignore[misc]
            node[dest], correct[dest], score[dest] = roots, True, 0.0
        self.states, self.node, self.correct, self.item_score, self.starts = states, node, correct, score, starts
        self.depth = depth


__all__ = ["GlobalRecord", "GlobalSearch", "GlobalSettings", "Update"]
