"""Paired bootstrap over sentences (Berg-Kirkpatrick et al. 2012): is B's LAS (or UAS) above A's?

Used by ``tools/significance.py`` (two sets of prediction files) and ``experiments/seed_table.py``
(arms of a comparison over seeds). Scores are counted as ``scores.py`` counts them (every
syntactic word, punctuation included; LAS on universal relations). With one file per seed, A_i
is paired with B_i and their sentences are pooled, so the test is over sentence-and-seed pairs.
The p-value is one-sided, for B > A: the share of bootstrap samples (sentences drawn with
replacement) whose difference exceeds twice the observed one. ``label_accuracy_on_shared_heads``
(``tools/significance.py --labels``) tells a LAS difference in the labels from one in the heads.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import numpy as np

from ..io.conllu import Sentence, read_conllu
from .aligned import F1, aligned_scores
from .scores import check_words, universal


# The CoNLL 2018 metrics the test also takes (besides las and uas): counted per sentence by
# ``aligned.aligned_scores``. CLAS, MLAS and BLEX are F1 over content words (by relation), and a
# parse that labels a word wrong may count it as content where the gold does not: their sums
# are 2 x correct over gold + predicted content words, so that the bootstrap's score is the
# scorer's F1 (on gold words the others' precision equals their recall).
CONLL18 = ("upos", "xpos", "ufeats", "alltags", "lemmas", "clas", "mlas", "blex")
CONTENT = ("clas", "mlas", "blex")
METRICS = ("las", "uas", *CONLL18)


def totals_per_sentence(gold: Sequence[Sentence], metric: str) -> np.ndarray:
    """What a metric counts in every gold sentence: its words, or its content words."""
    if metric in ("clas", "mlas", "blex"):
        return np.array([aligned_scores([g], [g])[metric].gold for g in gold], dtype=np.int64)
    return np.array([len(g) for g in gold], dtype=np.int64)


def correct_per_sentence(gold: Sequence[Sentence], pred: Sequence[Sentence], metric: str) -> np.ndarray:
    """Words with the right head (and label, for LAS) in every sentence; for a CoNLL 2018
    metric (``CONLL18``), the words it counts right."""
    if metric in CONLL18:
        return np.array([f.correct for f in sentence_scores(gold, pred, metric)], dtype=np.int64)
    if len(gold) != len(pred):
        raise ValueError(f"{len(pred)} predicted sentences, gold has {len(gold)}")
    out = np.zeros(len(gold), dtype=np.int64)
    for k, (g, p) in enumerate(zip(gold, pred)):
        for i in range(1, len(g) + 1):
            ok = p.heads[i] == g.heads[i]
            if metric == "las":
                ok = ok and universal(p.deprels[i]) == universal(g.deprels[i])
            out[k] += ok
    return out


def sentence_scores(gold: Sequence[Sentence], pred: Sequence[Sentence], metric: str) -> list[F1]:
    """A CoNLL 2018 metric's counts (``aligned.aligned_scores``) in every sentence."""
    if len(gold) != len(pred):
        raise ValueError(f"{len(pred)} predicted sentences, gold has {len(gold)}")
    return [aligned_scores([g], [p])[metric] for g, p in zip(gold, pred)]


def paired_bootstrap(
    a: np.ndarray, b: np.ndarray, words: np.ndarray, samples: int, seed: int, words_b: np.ndarray | None = None
) -> tuple[float, float, float, float]:
    """(score A, score B, B - A, p-value) in percent, over aligned per-sentence counts: A's and
    B's counts over ``words`` (or over ``words`` and ``words_b``, where each system's score has
    its own denominator, as an F1's has)."""
    words_a, words_b = words, words if words_b is None else words_b
    score_a, score_b = 100.0 * a.sum() / words_a.sum(), 100.0 * b.sum() / words_b.sum()
    delta = score_b - score_a
    if a.sum() * words_b.sum() == b.sum() * words_a.sum():  # no difference to test: B is not better
        return score_a, score_b, 0.0, 1.0  # (the count below would give 0)
    rng = np.random.default_rng(seed)
    n = len(words)
    exceed = 0
    for start in range(0, samples, 1000):
        draw = rng.integers(0, n, size=(min(1000, samples - start), n))
        d = 100.0 * (b[draw].sum(1) / words_b[draw].sum(1) - a[draw].sum(1) / words_a[draw].sum(1))
        exceed += int((d > 2 * delta).sum())
    return score_a, score_b, delta, exceed / samples


def f1_counts(gold: Sequence[Sentence], pred: Sequence[Sentence], metric: str) -> tuple[np.ndarray, np.ndarray]:
    """Per sentence, 2 x the words a content-word metric (``CONTENT``) counts right, and the gold
    plus predicted content words: summed, their ratio is the scorer's F1."""
    scores = sentence_scores(gold, pred, metric)
    right = np.array([2 * f.correct for f in scores], dtype=np.int64)
    return right, np.array([f.gold + f.predicted for f in scores], dtype=np.int64)


def read_checked(gold: Sequence[Sentence], path: Path) -> list[Sentence]:
    """A prediction file, refused (at its line) unless it has the gold sentences and words."""
    pred = read_conllu(path, allow_missing_heads=True)
    check_words(gold, pred, str(path))
    return pred


def compare_files(
    gold: Sequence[Sentence],
    a: Sequence[Path],
    b: Sequence[Path],
    metric: str = "las",
    samples: int = 10000,
    seed: int = 1,
) -> tuple[float, float, float, float]:
    """``paired_bootstrap`` of prediction files A_i against B_i (paired one to one, e.g. by seed)."""
    if len(a) != len(b):
        raise ValueError(f"{len(a)} files for A but {len(b)} for B: pair them one to one (by seed)")
    if metric in CONTENT:
        fa = [f1_counts(gold, read_checked(gold, f), metric) for f in a]
        fb = [f1_counts(gold, read_checked(gold, f), metric) for f in b]
        return paired_bootstrap(
            np.concatenate([r for r, _ in fa]), np.concatenate([r for r, _ in fb]),
            np.concatenate([w for _, w in fa]), samples, seed, words_b=np.concatenate([w for _, w in fb]),
        )  # fmt: skip
    words = np.tile(totals_per_sentence(gold, metric), len(a))
    ca = np.concatenate([correct_per_sentence(gold, read_checked(gold, f), metric) for f in a])
    cb = np.concatenate([correct_per_sentence(gold, read_checked(gold, f), metric) for f in b])
    return paired_bootstrap(ca, cb, words, samples, seed)


def label_accuracy_on_shared_heads(
    gold: Sequence[Sentence], a: Sequence[Path], b: Sequence[Path]
) -> tuple[int, float, float]:
    """(words, label accuracy of A, of B) over the words that A_i and B_i both attach to their
    gold head, pooled over the pairs: separates labelling from attachment, since LAS alone
    cannot say whether a lower LAS comes from worse labels or from harder words attached."""
    if len(a) != len(b):
        raise ValueError(f"{len(a)} files for A but {len(b)} for B: pair them one to one (by seed)")
    words = right_a = right_b = 0
    for fa, fb in zip(a, b):
        pa, pb = read_checked(gold, fa), read_checked(gold, fb)
        if not (len(gold) == len(pa) == len(pb)):
            raise ValueError(f"{fa}: {len(pa)} sentences, {fb}: {len(pb)}, gold: {len(gold)}")
        for g, x, y in zip(gold, pa, pb):
            for i in range(1, len(g) + 1):
                if x.heads[i] == y.heads[i] == g.heads[i]:
                    label = universal(g.deprels[i])
                    words += 1
                    right_a += universal(x.deprels[i]) == label
                    right_b += universal(y.deprels[i]) == label
    if not words:
        raise ValueError("no word has the gold head in both A and B")
    return words, 100.0 * right_a / words, 100.0 * right_b / words
