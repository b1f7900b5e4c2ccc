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
from the config in ``GlobalSettings``; this module runs the step loop and asks them at every step
through ``updates.SearchView``. The derivation tree and the recorded feature rows are
``derivations.Derivations``, the live beam items ``beam_items.BeamItems``.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
import torch

from ..decoding.beam import Step, local_scores, score_rows, step
from ..decoding.completion import Completion, Factors
from ..decoding.scoring import TransitionScores
from ..timing import timed
from ..systems import Oracle, StaticOracle
from ..systems.adapters.arrays import L_HEADS, L_N, Layout
from ..systems.adapters.row_oracle import RowOracle
from .beam_items import BeamItems
from .derivations import Derivations
from .updates import END, KEEP, GlobalSettings, Next, Restart, SentenceStep, Track, Update, Violation


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


class GlobalSearch:
    """Beam search over a batch with the updates of ``settings`` (one instance per batch): the
    step loop, and the operations the strategies use (``updates.SearchView``)."""

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
        self.completion, self.settings = completion, settings
        self.tracks = [Track() for _ in lengths]
        # The oracle's compiled twin, asked about correct items only (a static oracle's follow
        # its sequence from the start, so it cannot restart).
        if isinstance(oracle, StaticOracle) and settings.restart_policy.restarts:
            raise ValueError(f"{oracle.name} is a static oracle: it cannot restart")
        self.row_oracle = RowOracle(oracle, golds)
        empty = np.zeros(0, dtype=np.int64)
        self.rec = GlobalRecord(empty, empty, empty, empty, sentences=len(lengths))
        self.tree = Derivations(layout)
        kinds = 2 if settings.update_strategy.gold_beam else 1  # a gold beam beside the beam
        self.items = BeamItems(layout, lengths, kinds, self.tree)

    def run(self) -> GlobalRecord:
        with timed("search"):  # includes the scorer and oracle calls of the search
            while len(self.items.sent):
                self.step()
        self.rec.reached_end, self.rec.covered = coverage(self.layout, self.tracks)
        return completed(self.rec, self.tree, self.layout, self.settings.local_scores)

    def step(self) -> None:
        layout, items, k = self.layout, self.items, self.settings.beam_size
        rows, legal, done = layout.inspect(items.states, items.sent * layout.width, self.table.shape[0] - 1)
        self.tree.record_step(rows, legal if self.settings.local_scores else None)
        scores = score_rows(self.scorer, self.table, rows, done)
        if self.settings.local_scores:  # as the decoder sums them (T = 1: the training sets the scale)
            scores = local_scores(scores, legal, 1.0)
        found = None
        if self.completion is not None:  # candidates also score the factors they complete
            delta, found = self.completion.candidates(layout, items.states, items.sent, legal, done)
            scores = scores + delta
        # The oracle, asked only about correct items that can still move.
        ok = np.zeros_like(legal)
        clock = time.perf_counter()
        ask = np.flatnonzero(items.correct & ~done)
        ok[ask] = self.row_oracle(layout, items.states, ask, items.sent) & legal[ask]
        self.rec.oracle_seconds += time.perf_counter() - clock
        allowed = np.where((items.kind == 0)[:, None], legal, ok)
        s = step(
            layout, self.scorer, self.table, items.states, items.sent * layout.width, items.score, items.starts,
            k, allowed=allowed, marked=ok, marked_done=items.correct & done, inspected=(rows, legal, done),
            scores=scores,
        )  # fmt: skip
        nodes, depths = items.candidate_nodes(s.parent, s.action, s.count, s.total)
        if found is not None:
            self.tree.keep_factors(found, s, legal.shape, k)
        # Sentences with nothing to decide (no error, no possible violation, not finished) go on.
        valid: np.ndarray = np.arange(k)[None, :] < s.count[:, None]
        finished: np.ndarray = ((s.action < 0) | ~valid).all(1)
        free = np.arange(0, len(items.starts) - 1, items.kinds)
        over = finished[free] & finished[free + items.kinds - 1]
        attention = self.settings.update_strategy.attention(s.marked, valid, free) | over
        pieces = []
        for g, look in zip(free.tolist(), attention.tolist()):
            b = int(items.sent[items.starts[g]])
            pieces.append((b, g, self.decide(b, g, s, nodes) if look else KEEP))
        items.advance(pieces, s, nodes, depths)

    def decide(self, b: int, gf: int, s: Step, nodes: np.ndarray) -> Next:
        """What sentence b does next: keep its selected items, restart from a row, or end."""
        step_ = sentence_step(b, gf, s, nodes, self.items.kinds == 2)
        now = self.settings.update_strategy.at_step(self, step_)
        if now is not None:
            return now
        return KEEP if not step_.over else self.close_segment(step_)

    def close_segment(self, step_: SentenceStep) -> Next:
        """The segment is over: its largest violation is the update (a restart may follow); with
        none, a final update with the best correct finished item ends the sentence."""
        self.settings.update_strategy.at_segment_end(self, step_)
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

    # -- updates.SearchView: what the strategies may do --

    def track(self, b: int) -> Track:
        return self.tracks[b]

    def candidate_row(self, s: Step, g: int, r: int) -> np.ndarray:
        return self.items.candidate_row(s, g, r)

    def materialize(self, parent: int, action: int) -> np.ndarray:
        return self.items.materialize(parent, action)

    def new_positive(self, parent: int, action: int, total: np.ndarray) -> int:
        nodes, _ = self.items.candidate_nodes(np.array([[parent]]), np.array([[action]]), np.array([1]), total)
        return int(nodes[0, 0])

    def negative_row(self, step_: SentenceStep) -> np.ndarray | None:
        keeps = self.settings.restart_policy.keeps_negative
        return self.candidate_row(step_.s, step_.gf, 0) if keeps else None

    def restart_row(self, step_: SentenceStep, pos_row: np.ndarray) -> np.ndarray | None:
        neg_row = lambda: self.candidate_row(step_.s, step_.gf, 0)  # noqa: E731
        return self.settings.restart_policy.row(self, step_.b, step_.neg_node, pos_row, neg_row)

    def prefix_violation(self, b: int, track: Track, best: int) -> Violation:
        """The step's negative against the prefix of the same length of the best complete
        correct derivation (latent structure training, Björkelund & Nivre 2015)."""
        wrongs, track.wrong = track.wrong, []
        prefixes = self.tree.prefixes(best, [w.neg for w in wrongs])
        gaps = [w.score - pos_score for w, (_, pos_score) in zip(wrongs, prefixes)]
        i = int(np.argmax(gaps))  # the first of equal gaps
        wrong, pos = wrongs[i], prefixes[i][0]
        pos_row = self.tree.row_of_node(pos)
        restart = self.settings.restart_policy.row(self, b, wrong.neg, pos_row, lambda: wrong.neg_row)
        return Violation(gaps[i], Update(pos, wrong.neg, wrong.beam, True), pos_row, restart)

    def explorable(self, node: int, b: int) -> bool:
        """``Oracle.may_explore`` at every transition of the node's derivation it does not call
        correct; oracles that never object are not asked."""
        if type(self.oracle).may_explore is Oracle.may_explore:
            return True
        root, actions = self.tree.derivation(node)
        return self.row_oracle.explorable(self.layout, self.tree.restart_rows[root], actions, b)

    def add_update(self, track: Track, update: Update, pos_row: np.ndarray) -> None:
        self.rec.updates.append(update)
        self.rec.violations += update.violation
        track.last_pos_row = pos_row

    def stuck(self) -> None:
        self.rec.stuck += 1


def sentence_step(b: int, gf: int, s: Step, nodes: np.ndarray, gold_beam: bool) -> SentenceStep:
    """Sentence b after the step: its beam, the negative, the best correct item known now (the
    beam's correct items first, as max keeps the first of equal scores and an identical
    derivation is not counted twice, then the gold beam) and whether the segment is over."""
    count = int(s.count[gf])
    beam = nodes[gf, :count].tolist()
    options = [(s.total[gf, r], gf, r) for r in range(count) if s.marked[gf, r]]
    over = bool((s.action[gf, :count] < 0).all())
    if gold_beam:
        gg = gf + 1
        options += [(s.total[gg, r], gg, r) for r in range(s.count[gg])]
        over = over and bool((s.action[gg, : s.count[gg]] < 0).all())
    best = max(options, key=lambda o: o[0]) if options else None
    return SentenceStep(b, gf, s, nodes, beam, beam[0], bool(s.marked[gf, 0]), best, over)


def completed(rec: GlobalRecord, tree: Derivations, layout: Layout, local: bool) -> GlobalRecord:
    """The record with the derivation tree, the feature rows (and their legal transitions for
    local scores), the factors and the transitions the positive examples teach."""
    rec.rows = np.concatenate(tree.rows) if tree.rows else np.zeros((0, 1), dtype=np.int64)
    if local:
        width = layout.n_actions
        rec.legal = np.concatenate(tree.legal_rows) if tree.legal_rows else np.zeros((0, width), dtype=bool)
    rec.factors = tree.factors()
    nodes, _, _ = tree.node_table()
    rec.parent, rec.row, rec.action = nodes[:, 0], nodes[:, 1], nodes[:, 2]
    names = layout.system.actions
    for u in rec.updates:
        node = u.pos
        while rec.action[node] >= 0:
            rec.actions[names[rec.action[node]]] += 1
            node = rec.parent[node]
    return rec


def coverage(layout: Layout, tracks: list[Track]) -> tuple[int, float]:
    """(sentences whose last positive is terminal, the sum of the shares of words it attached; 1
    for a terminal one)."""
    ends = [t.last_pos_row for t in tracks if t.last_pos_row is not None]
    if not ends:
        return 0, 0.0
    last = np.concatenate(ends)
    off = layout.offsets
    _, _, terminal = layout.inspect(last, np.zeros(len(last), dtype=np.int64), 0)
    n = last[:, off[L_N]]
    width = int(n.max()) + 1
    heads = last[:, off[L_HEADS] + 1 : off[L_HEADS] + width]
    attached = ((heads >= 0) & (np.arange(1, width)[None, :] <= n[:, None])).sum(1)
    return int(terminal.sum()), float(np.where(terminal, 1.0, attached / n).sum())


__all__ = ["GlobalRecord", "GlobalSearch", "GlobalSettings", "Update"]
