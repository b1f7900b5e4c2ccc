"""Batched greedy training on rows: the transition loop with an oracle and exploration.

All items of a batch are rows of one state array (``systems/adapters/arrays.py``), as in decoding. A step
is three compiled calls and one scorer call for every live item at once: the feature rows, the
oracle (``systems/adapters/row_oracle.py``), the scores, then the decision (the prediction, the target,
exploration with the trainer's own random generator, ``mersenne.py``) and the transitions. The
loop runs without autograd, recording each step's feature rows and its legal and correct
transitions; the loss is then computed for all recorded steps in one call (see models/scorer.py).
``tests/reference_local.py`` keeps the walk on Python ``Config`` objects this one replaced; with
the same seed both take the same transitions (tests/test_walk_identity.py).
"""

from __future__ import annotations

import random
import time
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
import torch
from numba import njit

from ..decoding.scoring import TransitionScores
from ..systems import Oracle
from ..systems.adapters.arrays import Layout, feature_row
from ..systems.kernels.dispatch import apply_one, terminal_row
from ..systems.kernels.oracles import may_explore_row
from ..systems.adapters.row_oracle import RowOracle
from ..timing import timed
from . import mersenne

NEG_INF = float("-inf")


def as_tensor(array, dtype: type, device: torch.device) -> torch.Tensor:
    """A tensor of equal-length rows (feature rows, legal or correct flags), built through numpy:
    ``torch.tensor`` walks nested lists 4x slower."""
    return torch.from_numpy(np.asarray(array, dtype=dtype)).to(device)


@dataclass
class Steps:
    """What training recorded: one entry per parser step of every sentence, step after step."""

    rows: np.ndarray  # [S, slots] feature rows (table indices)
    legal: np.ndarray  # [S, actions] legal transitions
    correct: np.ndarray  # [S, actions] the oracle's correct ones
    explored: int = 0  # steps where the parser followed its own wrong prediction
    errors: int = 0  # steps where the best-scoring legal transition was not correct
    actions: Counter = field(default_factory=Counter)  # action name -> times taken
    oracle_seconds: float = 0.0  # time spent asking the oracle

    def __len__(self) -> int:
        return len(self.rows)


@njit(cache=True)
def _features(states, live, off, code, n_base, mod_left, mod_src, width, empty, rows):
    words = np.empty(rows.shape[1], dtype=np.int64)
    for k in range(live.shape[0]):
        i = live[k]
        feature_row(states[i], off, code, n_base, mod_left, mod_src, i * width, empty, words, rows[k])


@njit(cache=True)
def _best(scores, allowed):
    """The first allowed action of highest score (-1: none), as Python's ``max`` picks it."""
    best = -1
    for a in range(scores.shape[0]):
        if allowed[a] and (best < 0 or scores[a] > scores[best]):
            best = a
    return best


@njit(cache=True)
def _decide(
    states, live, off, code, root_end, ocode, gold, gstart, scores, legal, correct, explore_p, mt, counts, kept
):
    """Take every live row's transition: its prediction where correct; else its target (the
    best-scoring correct transition), or with exploration, with probability ``explore_p`` (one
    draw per wrong prediction, in row order) and where the oracle allows it, the prediction.
    ``kept`` receives the rows still live after the step; returns (live count, errors, explored),
    or errors = -1 - k where live item k had no correct legal transition."""
    errors = explored = 0
    target_ok = np.empty(legal.shape[1], dtype=np.bool_)
    m = 0
    for k in range(live.shape[0]):
        i = live[k]
        pred = _best(scores[k], legal[k])
        if pred < 0:  # no legal transition in a live row: a kernel bug, reported as a dead end
            return 0, -1 - k, explored
        action = pred
        if not correct[k, pred]:
            errors += 1
            for a in range(legal.shape[1]):
                target_ok[a] = legal[k, a] and correct[k, a]
            action = _best(scores[k], target_ok)
            if action < 0:
                return 0, -1 - k, explored
            if explore_p > 0:  # row i is sentence i of the batch's gold fields
                if mersenne.draw(mt) < explore_p and may_explore_row(
                    ocode, states[i], off, gold[:, gstart[i] : gstart[i + 1]], pred
                ):
                    action = pred
                    explored += 1
        counts[action] += 1
        apply_one(states[i], off, code, action)
        if not terminal_row(states[i], off, code, root_end):
            kept[m] = i
            m += 1
    return m, errors, explored


def train_loop(
    layout: Layout,
    oracle: Oracle,
    scorer: TransitionScores,
    table: torch.Tensor,
    golds: list,
    lengths: list[int],
    explore_p: float,
    rng: random.Random,
) -> Steps:
    """Run the batch to the end following the oracle (or, with exploration, the model's errors).

    The target of a step is the best-scoring correct transition (latent sequences, Goldberg &
    Nivre 2013). When the prediction is wrong the parser follows it with probability
    ``explore_p`` (only for complete oracles), otherwise it follows the target. Sentence b is row
    b, whose words read the table from row ``b * layout.width``.
    """
    explore = explore_p if explore_p > 0 and oracle.complete else 0.0
    rows_oracle = RowOracle(oracle, golds)
    g = rows_oracle.gold
    off, code, root_end = layout.offsets, layout.code, layout.root_end
    n_slots, n_actions = layout.n_base + len(layout.mod_src), layout.n_actions
    empty = table.shape[0] - 1
    states = layout.initial(np.asarray(lengths, dtype=np.int64))
    sent = np.arange(len(lengths), dtype=np.int64)
    live = np.flatnonzero(~layout.inspect(states, sent * layout.width, empty)[2]).astype(np.int64)
    mt = mersenne.state_of(rng) if explore else np.zeros(0, dtype=np.int64)
    counts = np.zeros(n_actions, dtype=np.int64)
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    errors = explored = 0
    oracle_seconds = 0.0
    while len(live):
        with timed("state"):
            rows = np.empty((len(live), n_slots), dtype=np.int64)
            _features(
                states, live, off, code, layout.n_base, layout.mod_left, layout.mod_src, layout.width, empty, rows
            )
            start = time.perf_counter()
            legal, _, correct = rows_oracle.ask(layout, states, live, sent)
            oracle_seconds += time.perf_counter() - start
        with torch.no_grad(), timed("scorer"):
            scores = scorer.scores(table, torch.from_numpy(rows).to(table.device)).float().cpu().numpy()
        with timed("state"):
            kept = np.empty(len(live), dtype=np.int64)
            m, wrong, went = _decide(states, live, off, code, root_end, rows_oracle.code, g.fields, g.starts,
                                     scores, legal, correct, explore, mt, counts, kept)  # fmt: skip
            if wrong < 0:
                b = int(live[-1 - wrong])
                raise RuntimeError(f"{oracle.system.name} {oracle.name}: no correct legal transition for sentence {b} "
                                   f"of the batch, row {states[b].tolist()}")  # fmt: skip
            errors, explored = errors + wrong, explored + went
            parts.append((rows, legal, correct))
            live = kept[:m]
    if explore:
        mersenne.restore(rng, mt)
    names = layout.system.actions
    rows, legal, correct = (
        np.concatenate([p[k] for p in parts]) if parts else np.zeros((0, w), dtype=t)
        for k, (w, t) in enumerate(((n_slots, np.int64), (n_actions, np.bool_), (n_actions, np.bool_)))
    )
    steps = Steps(rows, legal, correct, explored=explored, errors=errors, oracle_seconds=oracle_seconds)
    steps.actions.update({names[a]: int(c) for a, c in enumerate(counts) if c})
    return steps
