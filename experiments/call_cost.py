"""What one call of ``Parser.parse_nbest`` costs on a few short sentences, and how much of it is
Python's garbage collector: the API and spaCy-component use, one small call after another.

    python experiments/call_cost.py --model CKPT [--data en_ewt] [--split test] [--lengths 6 14]
                                    [--sizes 1 10] [--calls 150]

For each ``--sizes`` N, the first N sentences of the split with ``--lengths`` words parse
``--calls`` times in a row, one thread, the results kept as a caller keeps them; prints the
best per-call time of 5 rounds of 20 calls, then the mean per-call time over the calls and the
collector's time per call (``gc.callbacks``) with its collections by generation.
"""

from __future__ import annotations

import argparse
import gc
import time

import torch

import nparse
from common import split_sentences, treebank


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True)
    ap.add_argument("--data", default="en_ewt")
    ap.add_argument("--split", default="test")
    ap.add_argument("--lengths", nargs=2, type=int, default=[6, 14])
    ap.add_argument("--sizes", nargs="+", type=int, default=[1, 10])
    ap.add_argument("--calls", type=int, default=150)
    args = ap.parse_args()
    torch.set_num_threads(1)
    parser = nparse.load(args.model, device="cpu", threads=1)
    lo, hi = args.lengths
    pool = [s for s in split_sentences(treebank(args.data), args.split) if lo <= len(s) <= hi]
    collector = {"seconds": 0.0, "runs": [0, 0, 0]}
    started: list[float] = []

    def timing(phase: str, info: dict) -> None:
        if phase == "start":
            started.append(time.perf_counter())
        elif started:
            collector["seconds"] += time.perf_counter() - started.pop()  # type: ignore[operator]
            collector["runs"][info["generation"]] += 1  # type: ignore[index]

    print(
        "| sentences per call | best ms per call | mean ms per call | collector ms per call | collections (gen 0, 1, 2) |"
    )
    print("|---|---|---|---|---|")
    for size in args.sizes:
        sents = pool[:size]
        for _ in range(20):
            parser.parse_nbest(sents)
        best = min(_per_call(parser, sents, 20) for _ in range(5))
        collector.update(seconds=0.0, runs=[0, 0, 0])
        gc.callbacks.append(timing)
        kept = []
        start = time.perf_counter()
        for _ in range(args.calls):
            kept.append(parser.parse_nbest(sents))
        mean = (time.perf_counter() - start) / args.calls
        gc.callbacks.remove(timing)
        spent = collector["seconds"] / args.calls  # type: ignore[operator]
        print(
            f"| {len(sents)} | {best * 1000:.2f} | {mean * 1000:.2f} | {spent * 1000:.2f} | {collector['runs']} |",
            flush=True,
        )


def _per_call(parser, sents, calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        parser.parse_nbest(sents)
    return (time.perf_counter() - start) / calls


if __name__ == "__main__":
    main()
