"""Paired bootstrap test over sentences: is system B's LAS (or UAS) better than system A's?

    python tools/significance.py GOLD.conllu --a A.conllu [A2.conllu ...] --b B.conllu [B2.conllu ...]
                                 [--metric las|uas] [--samples 10000] [--seed 1]

Each ``--a``/``--b`` file is a prediction for GOLD (e.g. a run's test.pred.conllu); with several
(one per seed), A_i is paired with B_i and their sentences are pooled, so the test is over
sentence-and-seed pairs. Scores are counted as ``nparse.eval.scores`` counts them (every
syntactic word, punctuation included; LAS on universal relations). The p-value is one-sided,
for B > A, as in Berg-Kirkpatrick et al. (2012): the share of bootstrap samples (sentences drawn
with replacement) whose difference exceeds twice the observed one.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from nparse.eval.scores import universal
from nparse.io.conllu import Sentence, read_conllu


def correct_per_sentence(gold: list[Sentence], pred: list[Sentence], metric: str) -> np.ndarray:
    """Words with the right head (and label, for LAS) in every sentence."""
    if len(gold) != len(pred):
        raise SystemExit(f"{len(pred)} predicted sentences, gold has {len(gold)}")
    out = np.zeros(len(gold), dtype=np.int64)
    for k, (g, p) in enumerate(zip(gold, pred)):
        for i in range(1, len(g) + 1):
            ok = p.heads[i] == g.heads[i]
            if metric == "las":
                ok = ok and universal(p.deprels[i]) == universal(g.deprels[i])
            out[k] += ok
    return out


def paired_bootstrap(
    a: np.ndarray, b: np.ndarray, words: np.ndarray, samples: int, seed: int
) -> tuple[float, float, float, float]:
    """(score A, score B, B - A, p-value) in percent, over aligned per-sentence counts."""
    total = words.sum()
    score_a, score_b = 100.0 * a.sum() / total, 100.0 * b.sum() / total
    delta = score_b - score_a
    rng = np.random.default_rng(seed)
    n = len(words)
    exceed = 0
    for start in range(0, samples, 1000):
        draw = rng.integers(0, n, size=(min(1000, samples - start), n))
        w = words[draw].sum(1)
        d = 100.0 * (b[draw].sum(1) - a[draw].sum(1)) / w
        exceed += int((d > 2 * delta).sum())
    return score_a, score_b, delta, exceed / samples


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("gold", type=Path)
    ap.add_argument("--a", nargs="+", type=Path, required=True)
    ap.add_argument("--b", nargs="+", type=Path, required=True)
    ap.add_argument("--metric", choices=("las", "uas"), default="las")
    ap.add_argument("--samples", type=int, default=10000)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    if len(args.a) != len(args.b):
        raise SystemExit(f"{len(args.a)} files for A but {len(args.b)} for B: pair them one to one (by seed)")
    gold = read_conllu(args.gold)
    words = np.array([len(s) for s in gold] * len(args.a), dtype=np.int64)
    a = np.concatenate([correct_per_sentence(gold, read_conllu(f), args.metric) for f in args.a])
    b = np.concatenate([correct_per_sentence(gold, read_conllu(f), args.metric) for f in args.b])
    score_a, score_b, delta, p = paired_bootstrap(a, b, words, args.samples, args.seed)
    print(
        f"{args.metric.upper()}: A {score_a:.2f}, B {score_b:.2f}, B - A {delta:+.2f}, p = {p:.4f} "
        f"(one-sided, {args.samples} paired bootstrap samples over {len(words)} sentences x runs)"
    )


if __name__ == "__main__":
    main()
