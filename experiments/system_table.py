"""Transition systems compared on finished runs: accuracy, non-projective arcs built, speed.

    python experiments/system_table.py RUN [RUN ...] [--threads 1]

For every run folder (``python -m nparse.train`` output): dev UAS/LAS of the best epoch and test
UAS/LAS (``metrics.json``); on its test predictions, the share of predicted arcs that cross
another predicted arc ("non-proj. arcs"; gold's share is printed beside it) and the recall of
the gold crossing arcs; training tokens/s (median over epochs); greedy parsing tokens/s of the
test file with ``best.pt`` (timed here, ``--threads`` torch threads, after a warm-up batch).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import torch
from omegaconf import OmegaConf

from common import split_sentences

from nparse.api import load
from nparse.io.conllu import read_conllu
from nparse.trees import arcs_cross


def crossing(heads: list[int]) -> list[tuple[int, int]]:
    """The arcs (head, dependent) that cross another arc of the same tree."""
    arcs = [(heads[d], d) for d in range(1, len(heads))]
    return [(h, d) for h, d in arcs if any(arcs_cross(h, d, h2, d2) for h2, d2 in arcs)]


def row(run: Path) -> str:
    metrics = json.loads((run / "metrics.json").read_text())
    cfg = OmegaConf.load(run / "config.yaml")
    best, test = metrics.get("best") or {}, metrics.get("test") or {}
    gold = split_sentences(cfg.data, "test")
    pred = read_conllu(run / "test.pred.conllu")
    words = sum(len(s) for s in gold)
    built = sum(len(crossing(p.heads)) for p in pred)
    gold_crossing = [crossing(g.heads) for g in gold]
    found = sum(p.heads[d] == h for p, arcs in zip(pred, gold_crossing) for h, d in arcs)
    total = sum(len(a) for a in gold_crossing)
    train_speed = statistics.median(e["tokens_per_s"] for e in metrics["epochs"])
    parser = load(run / "best.pt", device="cpu")
    parser.parse_nbest(gold[:50], beam_size=1)  # warm-up: compiled kernels
    start = time.perf_counter()
    parser.parse_nbest(gold, beam_size=1)
    parse_speed = words / (time.perf_counter() - start)
    return (
        f"| {metrics['exp']} | {metrics.get('treebank', '?')} | {len(metrics['epochs'])} | {best.get('epoch', '-')} "
        f"| {best.get('dev_uas', 0):.2f} | {best.get('dev_las', 0):.2f} | {test.get('uas', 0):.2f} "
        f"| {test.get('las', 0):.2f} | {100 * built / words:.2f}% ({100 * total / words:.2f}%) "
        f"| {100 * found / max(total, 1):.1f}% | {train_speed:,.0f} | {parse_speed:,.0f} |"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("runs", nargs="+", type=Path)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    print(
        "| experiment | treebank | epochs | best epoch | dev UAS | dev LAS | test UAS | test LAS "
        "| non-proj. arcs (gold) | crossing-arc recall | train tokens/s | parse tokens/s |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for run in args.runs:
        print(row(run), flush=True)


if __name__ == "__main__":
    main()
