"""The temperature of locally normalised transition scores, fitted on held-out sentences.

A beam that sums log-softmax(score / T) over the legal transitions compares derivations of
different lengths fairly only if the probabilities mean something (``decoding/beam.py``). A
hinge-trained scorer's scores are margins, not log-odds, so one scalar T is fitted as in
temperature scaling (Guo et al. 2017): T minimises the negative log-likelihood, on dev sentences
walked by the oracle, of the oracle's correct transitions (with several correct ones, their
total probability). The walk follows the best-scoring correct transition at every step and never
explores, so the steps are the ones a good parse goes through. No decoding is involved, so
fitting costs about one greedy pass over dev. The result is saved in the checkpoint
(``calibration``) and used by every later decoding with local scores.
"""

from __future__ import annotations

import math
import random
from dataclasses import asdict, dataclass, replace

import numpy as np
import torch

from ..io.data import Example, bucket_batches, collate
from ..models.parser import ParserModel
from ..systems import Oracle
from ..systems.adapters.arrays import Layout
from .local import as_tensor, train_loop


@dataclass
class Calibration:
    temperature: float
    nll: float  # mean negative log-likelihood per step at that temperature
    nll_at_1: float  # and at T = 1
    steps: int  # oracle steps it was fitted on
    sentences: int

    def as_dict(self) -> dict:
        return asdict(self)


@torch.no_grad()
def oracle_steps(
    model: ParserModel, oracle: Oracle, examples: list[Example], batch_size: int = 256
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """(scores, legal, correct) [steps, actions] of the oracle walks of every example the oracle
    can prepare, and how many examples that was."""
    ready = []
    for e in examples:
        gold = oracle.prepare(e.sent.heads)
        if gold is not None:
            ready.append(replace(e, gold=gold))
    model.eval()
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    rng = random.Random(0)  # unused: the walk never explores
    for batch in bucket_batches(ready, batch_size):
        collated = collate(batch)
        _, table = model.encode(collated)
        assert table is not None
        layout = Layout(model.system, collated.width)
        steps = train_loop(
            layout, oracle, model.scorer, table, [e.gold for e in batch], [len(e) for e in batch], 0.0, rng
        )
        if not len(steps):
            continue
        scores = model.scorer.scores(table, as_tensor(steps.rows, np.int64, table.device)).double().cpu().numpy()
        parts.append((scores, steps.legal, steps.correct & steps.legal))
    if not parts:
        width = len(model.system.actions)
        return np.zeros((0, width)), np.zeros((0, width), bool), np.zeros((0, width), bool), len(ready)
    return (*(np.concatenate(p) for p in zip(*parts)), len(ready))  # type: ignore[return-value]


def nll(scores: np.ndarray, legal: np.ndarray, correct: np.ndarray, temperature: float) -> float:
    """Mean over steps of -log P(correct set) under softmax(scores / T) over the legal transitions."""
    z = np.where(legal, scores / temperature, -np.inf)
    top = z.max(1, keepdims=True)
    total = np.log(np.exp(z - top).sum(1)) + top[:, 0]
    good = np.log(np.exp(np.where(correct, z, -np.inf) - top).sum(1)) + top[:, 0]
    return float(np.mean(total - good))


def fit_temperature(scores: np.ndarray, legal: np.ndarray, correct: np.ndarray) -> float:
    """The T in [0.02, 50] of least ``nll``: a log-spaced grid, then a finer one around its best."""
    useful = (legal & ~correct).any(1) & correct.any(1)  # steps with a choice
    scores, legal, correct = scores[useful], legal[useful], correct[useful]
    if not len(scores):
        return 1.0
    grid = np.exp(np.linspace(math.log(0.02), math.log(50.0), 41))
    best = min(grid, key=lambda t: nll(scores, legal, correct, t))
    fine = best * np.exp(np.linspace(-0.2, 0.2, 21))
    return float(min(fine, key=lambda t: nll(scores, legal, correct, t)))


def calibrate(model: ParserModel, oracle: Oracle, examples: list[Example]) -> Calibration:
    """Fit the temperature of ``model``'s local scores on ``examples`` (dev)."""
    scores, legal, correct, sentences = oracle_steps(model, oracle, examples)
    if not len(scores):
        return Calibration(1.0, float("nan"), float("nan"), 0, sentences)
    t = fit_temperature(scores, legal, correct)
    return Calibration(t, nll(scores, legal, correct, t), nll(scores, legal, correct, 1.0), len(scores), sentences)
