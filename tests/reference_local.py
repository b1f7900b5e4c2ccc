"""The greedy training walk on Python ``Config`` objects, one item and one step at a time: nparse's
walk before the compiled one on rows (nparse/training/local.py), kept as the reference that
tests/test_walk_identity.py trains against in lockstep (same transitions, same losses).

The loop runs without autograd, recording each step's feature rows and its legal and correct
transitions; the loss is then computed for all recorded steps in one call (see models/scorer.py).
"""

from __future__ import annotations

import random
import time
from collections import Counter
from dataclasses import dataclass, field

import numpy as np
import torch

from nparse.decoding.scoring import TransitionScores
from nparse.timing import timed
from nparse.systems import NONE, Config, Oracle, TransitionSystem

NEG_INF = float("-inf")


def as_tensor(lists: list, dtype: type, device: torch.device) -> torch.Tensor:
    """A tensor of equal-length lists (feature rows, legal or correct flags), built through
    numpy: ``torch.tensor`` walks nested lists 4x slower, once per step and loss."""
    return torch.from_numpy(np.array(lists, dtype=dtype)).to(device)


def _rows(system: TransitionSystem, configs: list[Config], live: list[int], offsets: list[int], empty: int):
    """Feature rows (table indices) and legal flags of the live configurations."""
    rows, legal = [], []
    for i in live:
        c = configs[i]
        off = offsets[i]
        rows.append([w + off if w != NONE else empty for w in system.features(c)])
        legal.append(system.legal(c))
    return rows, legal


@dataclass
class Steps:
    """What training recorded: one entry per parser step of every sentence."""

    rows: list[list[int]] = field(default_factory=list)
    legal: list[list[bool]] = field(default_factory=list)
    correct: list[list[bool]] = field(default_factory=list)
    explored: int = 0  # steps where the parser followed its own wrong prediction
    errors: int = 0  # steps where the best-scoring legal transition was not correct
    actions: Counter = field(default_factory=Counter)  # action name -> times taken
    oracle_seconds: float = 0.0  # time spent asking the oracle


def train_loop(
    system: TransitionSystem,
    oracle: Oracle,
    scorer: TransitionScores,
    table: torch.Tensor,
    configs: list[Config],
    golds: list,
    offsets: list[int],
    explore_p: float,
    rng: random.Random,
) -> Steps:
    """Run the batch to the end following the oracle (or, with exploration, the model's errors).

    The target of a step is the best-scoring correct transition (latent sequences, Goldberg &
    Nivre 2013). When the prediction is wrong the parser follows it with probability
    ``explore_p`` (only for complete oracles), otherwise it follows the target.
    """
    steps = Steps()
    empty = table.shape[0] - 1
    names = system.actions
    explore = explore_p > 0 and oracle.complete
    live = [i for i, c in enumerate(configs) if not system.terminal(c)]
    while live:
        with timed("state"):
            rows, legal = _rows(system, configs, live, offsets, empty)
        with torch.no_grad(), timed("scorer"):
            scores = scorer.scores(table, as_tensor(rows, np.int64, table.device)).tolist()
        with timed("state"):  # includes the oracle (Steps.oracle_seconds)
            clock = time.perf_counter
            for i, row, ok, sc in zip(live, rows, legal, scores):
                c = configs[i]
                start = clock()
                correct = oracle.correct(c, golds[i])
                steps.oracle_seconds += clock() - start
                pred = max((a for a in range(len(ok)) if ok[a]), key=sc.__getitem__)
                if correct[pred]:
                    action = pred
                else:
                    steps.errors += 1
                    target = max((a for a in range(len(ok)) if correct[a] and ok[a]), key=sc.__getitem__)
                    if explore and rng.random() < explore_p and oracle.may_explore(c, golds[i], pred):
                        action = pred
                        steps.explored += 1
                    else:
                        action = target
                steps.rows.append(row)
                steps.legal.append(ok)
                steps.correct.append(correct)
                steps.actions[names[action]] += 1
                system.apply(c, action)
        live = [i for i in live if not system.terminal(configs[i])]
    return steps
