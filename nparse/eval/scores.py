"""UAS and LAS as the CoNLL 2018 shared-task scorer counts them, for gold tokenization.

Every syntactic word counts, punctuation included; multiword-token lines and empty nodes do
not. LAS compares DEPREL on its universal part (before ':'). The punctuation-excluded variant
leaves out words whose gold UPOS is PUNCT. ``breakdown`` groups by position quarter or length.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Sequence

from ..io.conllu import CoNLLUError, Sentence, read_conllu


@dataclass
class Scores:
    uas: float
    las: float
    uas_nopunct: float
    las_nopunct: float
    words: int
    words_nopunct: int
    upos: float | None = None  # UPOS accuracy, when the prediction has its own tags

    def as_dict(self) -> dict:
        return {k: v for k, v in asdict(self).items() if v is not None}

    def summary(self) -> str:
        tagged = f"UPOS {self.upos:.2f}  " if self.upos is not None else ""
        return (
            f"{tagged}UAS {self.uas:.2f}  LAS {self.las:.2f}  ({self.words} words)\n"
            f"without punctuation: UAS {self.uas_nopunct:.2f}  LAS {self.las_nopunct:.2f}  ({self.words_nopunct} words)"
        )


def predicted_tags(pred: Sequence[Sentence]) -> list[list[str] | None]:
    """Each predicted sentence's UPOS column, None where it is empty ('_'): ``score`` reports UPOS
    accuracy when every sentence has one (a tagger model's tags, or the tags its input had)."""
    return [p.tags for p in pred]


def universal(deprel: str) -> str:
    return deprel.split(":", 1)[0]


def score(
    gold: Sequence[Sentence],
    heads: Sequence[Sequence[int]],
    deprels: Sequence[Sequence[str]],
    tags: Sequence[Sequence[str] | None] | None = None,
) -> Scores:
    """Scores of predicted heads/deprels (index 0 = root) against gold sentences; with ``tags``
    (predicted UPOS per sentence) also UPOS accuracy."""
    if not (len(gold) == len(heads) == len(deprels)):
        raise ValueError(f"{len(gold)} gold sentences but {len(heads)} predictions")
    counts = [0, 0, 0, 0, 0, 0]  # words, uas, las, words-np, uas-np, las-np
    for sent, h, d in zip(gold, heads, deprels):
        for i in range(1, len(sent) + 1):
            head_ok = h[i] == sent.heads[i]
            label_ok = head_ok and universal(d[i]) == universal(sent.deprels[i])
            counts[0] += 1
            counts[1] += head_ok
            counts[2] += label_ok
            if sent.upos[i] != "PUNCT":
                counts[3] += 1
                counts[4] += head_ok
                counts[5] += label_ok

    def pct(a: int, b: int) -> float:
        return 100.0 * a / b if b else 0.0

    upos = None
    if tags is not None and all(t is not None for t in tags):
        right = sum(t[i] == sent.upos[i] for sent, t in zip(gold, tags) for i in range(1, len(sent) + 1))  # type: ignore[index]
        upos = pct(right, counts[0])
    return Scores(
        pct(counts[1], counts[0]),
        pct(counts[2], counts[0]),
        pct(counts[4], counts[3]),
        pct(counts[5], counts[3]),
        counts[0],
        counts[3],
        upos,
    )


LENGTH_BINS = ((1, 10), (11, 20), (21, 30), (31, 40), (41, None))


def group_of(by: str, i: int, n: int) -> str:
    """The group of word i of an n-word sentence for ``by=quarter|length``."""
    if by == "quarter":
        return f"quarter {-(-4 * i // n)}"
    for lo, hi in LENGTH_BINS:
        if hi is None or n <= hi:
            return f"{lo}-{hi}" if hi else f"{lo}+"
    raise AssertionError


def breakdown(
    gold: Sequence[Sentence], heads: Sequence[Sequence[int]], deprels: Sequence[Sequence[str]], by: str
) -> list[tuple[str, int, float, float]]:
    """(group, words, UAS, LAS) for every group of ``by`` (quarter or length), in order."""
    if by not in ("quarter", "length"):
        raise ValueError(f"by={by}: choose quarter or length")
    counts: dict[str, list[int]] = {}
    for sent, h, d in zip(gold, heads, deprels):
        n = len(sent)
        for i in range(1, n + 1):
            c = counts.setdefault(group_of(by, i, n), [0, 0, 0])
            head_ok = h[i] == sent.heads[i]
            c[0] += 1
            c[1] += head_ok
            c[2] += head_ok and universal(d[i]) == universal(sent.deprels[i])
    if by == "quarter":
        order = [f"quarter {q}" for q in range(1, 5)]
    else:
        order = [f"{lo}-{hi}" if hi else f"{lo}+" for lo, hi in LENGTH_BINS]
    return [
        (g, counts[g][0], 100.0 * counts[g][1] / counts[g][0], 100.0 * counts[g][2] / counts[g][0])
        for g in order
        if g in counts
    ]


def read_pair(gold_path: str, pred_path: str) -> tuple[list[Sentence], list[Sentence]]:
    """Gold and predicted sentences, checked to have the same words."""
    gold = read_conllu(gold_path)
    pred = read_conllu(pred_path, allow_missing_heads=True)
    check_words(gold, pred, pred_path)
    return gold, pred


def check_words(gold: Sequence[Sentence], pred: Sequence[Sentence], pred_path: str) -> None:
    """Refuse a prediction whose sentences or words are not the gold ones, at the line where
    they part (a score over other words would be silently wrong)."""
    if not gold and not pred:  # a score of 0.00 over no words would read as a result
        raise CoNLLUError(pred_path, 1, "no words to score: it and the gold file hold no sentences")
    if len(gold) != len(pred):
        if len(pred) > len(gold):  # point at the first sentence without a partner
            extra = pred[len(gold)]
            raise CoNLLUError(
                extra.path,
                extra.line,
                f"{len(pred)} sentences, but the gold file has {len(gold)}: this one is past its end",
            )
        missing = gold[len(pred)]
        raise CoNLLUError(
            pred_path,
            1,
            f"{len(pred)} sentences, but the gold file has {len(gold)}: none for {missing.path}:{missing.line}",
        )
    for g, p in zip(gold, pred):
        if g.forms[1:] != p.forms[1:]:
            k = next((i for i in range(1, min(len(g), len(p)) + 1) if g.forms[i] != p.forms[i]), min(len(g), len(p)))
            raise CoNLLUError(
                pred_path, p.word_line(max(k, 1)), f"words differ from the gold sentence at {g.path}:{g.line}"
            )


def score_files(gold_path: str, pred_path: str) -> Scores:
    """Compare two CoNLL-U files with the same sentences and words."""
    gold, pred = read_pair(gold_path, pred_path)
    return score(gold, [p.heads for p in pred], [p.deprels for p in pred])


def same_tokenization(gold: Sequence[Sentence], pred: Sequence[Sentence]) -> bool:
    return len(gold) == len(pred) and all(g.forms[1:] == p.forms[1:] for g, p in zip(gold, pred))
