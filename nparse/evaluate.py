"""UAS and LAS as the CoNLL 2018 shared-task scorer counts them, for gold tokenization.

Every syntactic word counts, punctuation included; multiword-token lines and empty nodes do
not. LAS compares DEPREL on its universal part (before ':'). The punctuation-excluded variant
leaves out words whose gold UPOS is PUNCT.

    python -m nparse.evaluate gold=GOLD.conllu pred=PRED.conllu
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict, dataclass
from typing import Sequence

from .cli import parse_args
from .io.conllu import CoNLLUError, Sentence, read_conllu


@dataclass
class Scores:
    uas: float
    las: float
    uas_nopunct: float
    las_nopunct: float
    words: int
    words_nopunct: int

    def as_dict(self) -> dict:
        return asdict(self)

    def summary(self) -> str:
        return (
            f"UAS {self.uas:.2f}  LAS {self.las:.2f}  ({self.words} words)\n"
            f"without punctuation: UAS {self.uas_nopunct:.2f}  LAS {self.las_nopunct:.2f}  ({self.words_nopunct} words)"
        )


def universal(deprel: str) -> str:
    return deprel.split(":", 1)[0]


def score(gold: Sequence[Sentence], heads: Sequence[Sequence[int]], deprels: Sequence[Sequence[str]]) -> Scores:
    """Scores of predicted heads/deprels (index 0 = root) against gold sentences."""
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

    return Scores(
        pct(counts[1], counts[0]),
        pct(counts[2], counts[0]),
        pct(counts[4], counts[3]),
        pct(counts[5], counts[3]),
        counts[0],
        counts[3],
    )


def score_files(gold_path: str, pred_path: str) -> Scores:
    """Compare two CoNLL-U files with the same sentences and words."""
    gold = read_conllu(gold_path)
    pred = read_conllu(pred_path, allow_missing_heads=True)
    if len(gold) != len(pred):
        raise CoNLLUError(pred_path, 1, f"{len(pred)} sentences, but the gold file has {len(gold)}")
    for g, p in zip(gold, pred):
        if g.forms[1:] != p.forms[1:]:
            k = next((i for i in range(1, min(len(g), len(p)) + 1) if g.forms[i] != p.forms[i]), min(len(g), len(p)))
            raise CoNLLUError(
                pred_path, p.word_line(max(k, 1)), f"words differ from the gold sentence at {g.path}:{g.line}"
            )
    return score(gold, [p.heads for p in pred], [p.deprels for p in pred])


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv, required=("gold", "pred"), optional={"json": "false"}, usage=__doc__)
    try:
        result = score_files(args["gold"], args["pred"])
    except (CoNLLUError, OSError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    if args["json"].lower() in ("1", "true", "yes"):
        print(json.dumps(result.as_dict()))
    else:
        print(result.summary())
    return 0


if __name__ == "__main__":
    sys.exit(main())
