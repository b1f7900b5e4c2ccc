"""Error analysis in the manner of MaltEval (Nilsson & Nivre 2008): accuracy of every gold word
grouped by sentence length, dependency distance, gold label, gold UPOS and whether its gold arc
is non-projective, a label confusion matrix, and the sentences with the most errors.

Words are counted as ``scores.py`` counts them (every syntactic word, punctuation included;
labels on their universal part), so the totals of every grouping are the scorer's UAS and LAS.
The prediction has the gold words (a parse of the gold tokenization), or its own tokenization
aligned to them (``aligned_words_of``: a parse of raw text).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Sequence

from ..io.conllu import Sentence
from ..trees import arcs_cross
from .scores import LENGTH_BINS, universal

if TYPE_CHECKING:
    from .aligned import Alignment

DISTANCE_BINS = ((1, 1), (2, 2), (3, 3), (4, 4), (5, 6), (7, 9), (10, None))


@dataclass(frozen=True)
class Word:
    """One gold word and how a prediction got it."""

    sent: int  # index of its sentence
    i: int  # its position (from 1)
    length: int  # words in the sentence
    distance: int  # |gold head - i| (0 for the root's dependent)
    label: str  # gold universal label
    upos: str  # gold UPOS
    nonprojective: bool  # its gold arc crosses another gold arc
    head_ok: bool
    label_ok: bool  # head and universal label right (LAS)
    pred_label: str  # predicted universal label


def crossing_dependents(heads: Sequence[int]) -> set[int]:
    """Words whose gold arc crosses another arc (the root's arc included)."""
    arcs = [(heads[d], d) for d in range(1, len(heads))]
    out = set()
    for k, (h1, d1) in enumerate(arcs):
        for h2, d2 in arcs[k + 1 :]:
            if arcs_cross(h1, d1, h2, d2):
                out |= {d1, d2}
    return out


def words_of(gold: Sequence[Sentence], pred: Sequence[Sentence]) -> list[Word]:
    """Every gold word with its prediction (``scores.read_pair`` checks that the words match)."""
    out = []
    for k, (g, p) in enumerate(zip(gold, pred)):
        crossing = crossing_dependents(g.heads)
        for i in range(1, len(g) + 1):
            head_ok = p.heads[i] == g.heads[i]
            label, pred_label = universal(g.deprels[i]), universal(p.deprels[i])
            distance = abs(g.heads[i] - i) if g.heads[i] > 0 else 0
            out.append(Word(k, i, len(g), distance, label, g.upos[i], i in crossing, head_ok,
                            head_ok and label == pred_label, pred_label))  # fmt: skip
    return out


def aligned_words_of(gold: Sequence[Sentence], pred: Sequence[Sentence], found: "Alignment") -> list[Word]:
    """Every gold word with the prediction of a parse with its own tokenization (``found``: the
    words aligned by character offsets, as the CoNLL 2018 scorer aligns them): right where its
    aligned word has the aligned head (``Alignment.head_ok``); a word with no aligned word is
    wrong, its predicted label ``-``."""
    out = []
    g = 0
    for k, sent in enumerate(gold):
        crossing = crossing_dependents(sent.heads)
        for i in range(1, len(sent) + 1):
            p = found.pairs.get(g)
            label = universal(sent.deprels[i])
            pred_label = "-"
            head_ok = False
            if p is not None:
                pk, pi = found.pred_at[p]
                pred_label = universal(pred[pk].deprels[pi])
                head_ok = found.head_ok(g, p)
            distance = abs(sent.heads[i] - i) if sent.heads[i] > 0 else 0
            out.append(Word(k, i, len(sent), distance, label, sent.upos[i], i in crossing, head_ok,
                            head_ok and label == pred_label, pred_label))  # fmt: skip
            g += 1
    return out


def _bin(value: int, bins: Sequence[tuple[int, int | None]]) -> str:
    for lo, hi in bins:
        if hi is None or value <= hi:
            return f"{lo}+" if hi is None else (str(lo) if lo == hi else f"{lo}-{hi}")
    raise AssertionError(value)


def _bin_names(bins: Sequence[tuple[int, int | None]]) -> list[str]:
    return [f"{lo}+" if hi is None else (str(lo) if lo == hi else f"{lo}-{hi}") for lo, hi in bins]


@dataclass
class Group:
    name: str
    words: int
    uas: float
    las: float


GROUPINGS: dict[str, tuple[str, Callable[[Word], str], Callable[[list[str]], list[str]]]] = {
    "length": ("sentence length (words)", lambda w: _bin(w.length, LENGTH_BINS), lambda seen: _bin_names(LENGTH_BINS)),
    "distance": ("dependency distance (gold)", lambda w: "root" if w.distance == 0 else _bin(w.distance, DISTANCE_BINS),
                 lambda seen: ["root", *_bin_names(DISTANCE_BINS)]),
    "label": ("gold label", lambda w: w.label, sorted),
    "upos": ("gold UPOS", lambda w: w.upos, sorted),
    "projectivity": ("gold arc", lambda w: "non-projective" if w.nonprojective else "projective",
                     lambda seen: ["projective", "non-projective"]),
}  # fmt: skip


def group_scores(words: Sequence[Word], by: str) -> list[Group]:
    """UAS and LAS of the words in every group of ``by`` (a key of ``GROUPINGS``), in order."""
    _, key, order = GROUPINGS[by]
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for w in words:
        c = counts[key(w)]
        c[0] += 1
        c[1] += w.head_ok
        c[2] += w.label_ok
    names = [n for n in order(list(counts)) if n in counts]
    return [
        Group(n, counts[n][0], 100.0 * counts[n][1] / counts[n][0], 100.0 * counts[n][2] / counts[n][0]) for n in names
    ]


@dataclass
class LabelScore:
    label: str
    gold: int  # words with this gold label
    predicted: int  # words predicted with it
    recall: float  # LAS over the gold ones
    precision: float  # head and label right over the predicted ones
    f1: float


def label_scores(words: Sequence[Word]) -> list[LabelScore]:
    """Per label: recall, precision and F1 of head and label together (MaltEval's per-label LAS)."""
    gold: Counter[str] = Counter()
    predicted: Counter[str] = Counter()
    right: Counter[str] = Counter()
    for w in words:
        gold[w.label] += 1
        predicted[w.pred_label] += 1
        right[w.label] += w.label_ok
    out = []
    for label in sorted(set(gold) | set(predicted)):
        r = 100.0 * right[label] / gold[label] if gold[label] else 0.0
        p = 100.0 * right[label] / predicted[label] if predicted[label] else 0.0
        out.append(LabelScore(label, gold[label], predicted[label], r, p, 2 * r * p / (r + p) if r + p else 0.0))
    return out


def confusion(words: Sequence[Word]) -> tuple[list[str], dict[tuple[str, str], int]]:
    """(labels, counts of (gold label, predicted label)) over the words whose head is right:
    what the labeller confuses, apart from attachment errors."""
    counts: Counter = Counter((w.label, w.pred_label) for w in words if w.head_ok)
    labels = sorted({g for g, _ in counts} | {p for _, p in counts})
    return labels, dict(counts)


def worst_sentences(words: Sequence[Word], count: int) -> list[tuple[int, int, int]]:
    """(sentence, LAS errors, words) of the ``count`` sentences with the most errors (ties: the
    higher error rate, then the earlier sentence)."""
    errors: Counter = Counter()
    sizes: Counter = Counter()
    for w in words:
        errors[w.sent] += not w.label_ok
        sizes[w.sent] += 1
    ranked = sorted(errors, key=lambda k: (-errors[k], -errors[k] / sizes[k], k))
    return [(k, errors[k], sizes[k]) for k in ranked[:count] if errors[k]]


@dataclass
class Agreement:
    """Where two systems A and B are right (head and label) on the same words."""

    both: int
    only_a: int
    only_b: int
    neither: int

    @property
    def words(self) -> int:
        return self.both + self.only_a + self.only_b + self.neither


def agreement(a: Sequence[Word], b: Sequence[Word]) -> Agreement:
    pairs = Counter((x.label_ok, y.label_ok) for x, y in zip(a, b, strict=True))
    return Agreement(pairs[(True, True)], pairs[(True, False)], pairs[(False, True)], pairs[(False, False)])
