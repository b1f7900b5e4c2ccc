"""Batched beam search over array configurations; greedy decoding is the same search with K=1
(``greedy_search`` takes each step's argmax directly, with the same results).

Design (see ``systems/adapters/arrays.py``): the configurations of every item of every sentence of a
batch are rows of one integer array. A parser step is
1. one compiled pass over all rows: feature rows, legal transitions, terminal flags;
2. one scorer call for the rows that are not terminal (the first-layer table was computed once
   per sentence, so scoring is a gather and a sum);
3. one compiled selection of the K best candidates of every sentence;
4. a gather of the selected parents' rows (``states[parents]``) and one compiled ``apply``.
Nothing is done per item in Python. An item that is terminal stays in the beam with its score
(its "stay" candidate competes with the extensions of the others) until the K best candidates
of its sentence are all terminal; the best of them is the parse. The score of an item is the
sum of its transition scores (float64, so that sums do not tie where the scores differ), plus,
with a completion model, the scores of its complete factors (``completion.py``).

Ties are broken by the transition's own score and then by item and action order, so with K=1
the search takes exactly the argmax of every step, as the greedy decoder did.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from numba import njit

from ..timing import timed
from ..systems.adapters.arrays import L_STEPS, Layout
from .completion import Completion
from .scoring import LegalScores, NumpyScores, TransitionScores

NEG_INF = -np.inf


@njit(cache=True)
def _better(tot, loc, x, y):
    """Whether candidate x ranks before candidate y."""
    if tot[x] != tot[y]:
        return tot[x] > tot[y]
    if loc[x] != loc[y]:
        return loc[x] > loc[y]
    return x < y


@njit(cache=True)
def select(
    starts, item_score, scores, allowed, done, marked, marked_done, k,
    out_parent, out_action, out_score, out_marked, out_count, best_marked,
):  # fmt: skip
    """The k best candidates of every group of rows ``starts[g]:starts[g+1]`` (a sentence's beam).

    Candidates are (row i, action a) for ``allowed[i, a]`` of rows that are not ``done``, scored
    ``item_score[i] + scores[i, a]``, and (row i, -1), "stay", for done rows, scored
    ``item_score[i]``. Outputs are [G, k] arrays (``out_count[g]`` filled); ``marked``/
    ``marked_done`` flag candidates (the correct ones, in training): ``out_marked`` says which
    selected ones are, and ``best_marked[g]`` is (parent, action, score) of the best flagged
    candidate before truncation, parent -1 if there is none.
    """
    n_actions = scores.shape[1]
    width = 0
    for g in range(starts.shape[0] - 1):
        width = max(width, (starts[g + 1] - starts[g]) * (n_actions + 1))
    tot = np.empty(width)
    loc = np.empty(width)
    par = np.empty(width, dtype=np.int64)
    act = np.empty(width, dtype=np.int64)
    flag = np.empty(width, dtype=np.bool_)
    taken = np.empty(width, dtype=np.bool_)
    for g in range(starts.shape[0] - 1):
        m = 0
        for i in range(starts[g], starts[g + 1]):
            if done[i]:
                tot[m], loc[m], par[m], act[m], flag[m] = item_score[i], 0.0, i, -1, marked_done[i]
                m += 1
                continue
            for a in range(n_actions):
                if allowed[i, a]:
                    tot[m] = item_score[i] + scores[i, a]
                    loc[m], par[m], act[m], flag[m] = scores[i, a], i, a, marked[i, a]
                    m += 1
        best = -1
        for c in range(m):
            taken[c] = False
            if flag[c] and (best < 0 or _better(tot, loc, c, best)):
                best = c
        if best >= 0:
            best_marked[g, 0], best_marked[g, 1] = par[best], act[best]
            best_marked[g, 2] = tot[best]
        else:
            best_marked[g, 0], best_marked[g, 1], best_marked[g, 2] = -1, -1, NEG_INF
        count = min(k, m)
        for r in range(count):
            top = -1
            for c in range(m):
                if not taken[c] and (top < 0 or _better(tot, loc, c, top)):
                    top = c
            taken[top] = True
            out_parent[g, r], out_action[g, r], out_score[g, r], out_marked[g, r] = (
                par[top],
                act[top],
                tot[top],
                flag[top],
            )
        out_count[g] = count


@dataclass
class Step:
    """The candidates one parser step selected for every group ([G, K] arrays)."""

    parent: np.ndarray  # row of the candidate's parent
    action: np.ndarray  # its transition (-1: the parent stays, finished)
    total: np.ndarray  # its score (sum of transition scores)
    marked: np.ndarray  # whether it is marked (correct, in training)
    count: np.ndarray  # [G] how many were selected
    best_marked: np.ndarray  # [G, 3] parent, action, score of the best marked candidate


def score_rows(
    scorer: TransitionScores, table: torch.Tensor, rows: np.ndarray, done: np.ndarray, legal: np.ndarray | None = None
) -> np.ndarray:
    """Transition scores (float64) of every row, in one scorer call for the rows not yet terminal.
    A scorer whose scores depend on the legal transitions (an ensemble's averaged probabilities,
    ``models/ensemble.py``) gets them."""
    scores = np.zeros((rows.shape[0], scorer.n_actions))
    live = ~done
    if live.any():
        with torch.no_grad(), timed("scorer"):
            if legal is not None and isinstance(scorer, LegalScores):
                scores[live] = scorer.legal_scores(table, rows[live], legal[live])
            elif table.device.type == "cpu" and table.dtype == torch.float32 and isinstance(scorer, NumpyScores):
                scores[live] = scorer.numpy_scores(table.numpy(), rows[live])
            else:
                index = torch.from_numpy(rows[live]).to(table.device)
                scores[live] = scorer.scores(table, index).double().cpu().numpy()
    return scores


def step(
    layout: Layout,
    scorer: TransitionScores,
    table: torch.Tensor,
    states: np.ndarray,
    offsets: np.ndarray,
    item_score: np.ndarray,
    starts: np.ndarray,
    k: int,
    allowed: np.ndarray | None = None,
    marked: np.ndarray | None = None,
    marked_done: np.ndarray | None = None,
    inspected: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
    scores: np.ndarray | None = None,
) -> Step:
    """Score every row and select the K best candidates of every group (nothing is applied)."""
    rows, legal, done = inspected if inspected is not None else layout.inspect(states, offsets, table.shape[0] - 1)
    if scores is None:
        scores = score_rows(scorer, table, rows, done, legal)
    m, groups = states.shape[0], starts.shape[0] - 1
    if marked is None:
        marked = np.zeros_like(legal)
        marked_done = np.zeros(m, dtype=np.bool_)
    out = [np.empty((groups, k), dtype=np.int64) for _ in range(2)]
    total = np.empty((groups, k))
    flags = np.empty((groups, k), dtype=np.bool_)
    count = np.empty(groups, dtype=np.int64)
    best_marked = np.empty((groups, 3))
    select(
        starts, item_score, scores, legal if allowed is None else allowed, done, marked, marked_done, k,
        out[0], out[1], total, flags, count, best_marked,
    )  # fmt: skip
    return Step(out[0], out[1], total, flags, count, best_marked)


def flatten(groups: np.ndarray, count: np.ndarray, values: np.ndarray) -> np.ndarray:
    """The first ``count[g]`` entries of every listed group's row of a [G, K] array, in order."""
    k = values.shape[1]
    mask = np.arange(k)[None, :] < count[groups, None]
    return values[groups][mask]


@dataclass
class Finished:
    """The final beam of one sentence, best first: derivation scores, heads as built and the
    number of transitions of each derivation."""

    scores: list[float]
    heads: list[list[int]]
    steps: list[int]


def local_scores(scores: np.ndarray, legal: np.ndarray, temperature: float) -> np.ndarray:
    """Log-softmax of ``scores / temperature`` over each row's legal transitions (0 where illegal
    or where a row has none: those entries are never candidates)."""
    z = np.where(legal, scores / temperature, NEG_INF)
    top = z.max(1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):  # rows without a legal transition
        lse = top + np.log(np.exp(z - top).sum(1, keepdims=True))
        return np.where(legal, z - lse, 0.0)


def beam_search(
    layout: Layout,
    scorer: TransitionScores,
    table: torch.Tensor,
    lengths: list[int],
    k: int,
    completion: Completion | None = None,
    temperature: float | None = None,
    greedy_shortcut: bool = True,
    row_starts: np.ndarray | None = None,
) -> list[Finished]:
    """Decode a batch: sentence b's words are table rows ``row_starts[b] + w`` (by default
    ``b * layout.width``, a padded table). With a completion model, candidates also score the
    factors their transition completes.

    ``temperature``: None sums the scorer's raw transition scores (what global training
    optimises); a number sums locally normalised ones, log-softmax(score / temperature) over the
    legal transitions. Raw scores favour long derivations when items finish at different steps
    (a finished item keeps its score while the others still add scores of either sign: a
    greedily trained 2-Planar model took 30% more transitions per word in a beam of 8 than
    greedily and lost 5 LAS); log-probabilities are never positive, so waiting cannot gain, and
    a temperature fitted on held-out data (``training/calibration.py``) keeps one confident
    step from outweighing several uncertain ones. With K=1 both give the greedy parse, which
    ``greedy_search`` takes directly unless ``greedy_shortcut`` is off (the tests compare the two)."""
    if k == 1 and completion is None and greedy_shortcut:
        return greedy_search(layout, scorer, table, lengths, temperature, row_starts)
    n_sent = len(lengths)
    starts_of = first_rows(layout, n_sent, row_starts)
    states = layout.initial(np.array(lengths))
    sent = np.arange(n_sent)
    item_score = np.zeros(n_sent)
    starts = np.arange(n_sent + 1)
    results: list[Finished | None] = [None] * n_sent
    while len(sent):
        offsets = starts_of[sent]
        with timed("state"):
            rows, legal, done = layout.inspect(states, offsets, table.shape[0] - 1)
        scores = score_rows(scorer, table, rows, done, legal)
        if temperature is not None:
            scores = local_scores(scores, legal, temperature)
        if completion is not None:
            with timed("completion"):
                scores += completion.candidates(layout, states, sent, legal, done)[0]
        with timed("state"):
            s = step(
                layout, scorer, table, states, offsets, item_score, starts, k,
                inspected=(rows, legal, done), scores=scores,
            )  # fmt: skip
        groups = sent[starts[:-1]]
        ended = ((s.action < 0) | (np.arange(k)[None, :] >= s.count[:, None])).all(1)
        for g in np.flatnonzero(ended):
            c = s.count[g]
            results[groups[g]] = Finished(
                s.total[g, :c].tolist(), [layout.heads(states, int(p)) for p in s.parent[g, :c]],
                states[s.parent[g, :c], layout.offsets[L_STEPS]].tolist(),
            )  # fmt: skip
        going = np.flatnonzero(~ended)
        parents = flatten(going, s.count, s.parent)
        actions = flatten(going, s.count, s.action)
        item_score = flatten(going, s.count, s.total)
        with timed("state"):
            states = states[parents]
            layout.apply(states, actions)
        sent = sent[parents]
        starts = np.concatenate([[0], np.cumsum(s.count[going])])
    return results  # type: ignore[return-value]


def first_rows(layout: Layout, n_sent: int, row_starts: np.ndarray | None) -> np.ndarray:
    """The table row of each sentence's root: ``row_starts``, or those of a padded table."""
    return np.arange(n_sent) * layout.width if row_starts is None else np.asarray(row_starts, dtype=np.int64)


def greedy_search(
    layout: Layout,
    scorer: TransitionScores,
    table: torch.Tensor,
    lengths: list[int],
    temperature: float | None = None,
    row_starts: np.ndarray | None = None,
) -> list[Finished]:
    """``beam_search`` with K=1 and no completion model: the argmax of every step (the first
    legal transition of the highest score, as ``select`` orders them), without the K-best
    selection and the beam bookkeeping, which were a third of greedy decoding with the fast
    model on EWT. Same results, scores included (tests/test_beam.py)."""
    n_sent = len(lengths)
    states = layout.initial(np.array(lengths))
    sent = np.arange(n_sent)
    total = np.zeros(n_sent)
    starts_of = first_rows(layout, n_sent, row_starts)
    results: list[Finished | None] = [None] * n_sent
    while len(sent):
        with timed("state"):
            rows, legal, done = layout.inspect(states, starts_of[sent], table.shape[0] - 1)
        scores = score_rows(scorer, table, rows, done, legal)
        if temperature is not None:
            scores = local_scores(scores, legal, temperature)
        ended = done | ~legal.any(1)  # a row without a legal transition ends with no parse, as in the beam
        for i in np.flatnonzero(ended):
            if done[i]:
                steps = int(states[i, layout.offsets[L_STEPS]])
                results[sent[i]] = Finished([float(total[i])], [layout.heads(states, int(i))], [steps])
            else:
                results[sent[i]] = Finished([], [], [])
        if ended.any():
            going = np.flatnonzero(~ended)
            states, sent, total, scores, legal = states[going], sent[going], total[going], scores[going], legal[going]
        masked = np.where(legal & ~np.isnan(scores), scores, NEG_INF)
        actions = masked.argmax(1)
        items = np.arange(len(actions))
        stuck = ~legal[items, actions]
        if stuck.any():  # no finite legal score (an overflow): the first legal transition, as ``select`` takes it
            actions[stuck] = legal[stuck].argmax(1)
        total = total + masked[items, actions]
        with timed("state"):
            layout.apply(states, actions)
    return results  # type: ignore[return-value]
