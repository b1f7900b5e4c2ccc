"""Score the raw or the averaged weights of a run's ``last.pt`` on a split of its treebank.

    python experiments/checkpoint_weights.py RUN/last.pt [RUN2/last.pt ...] [--weights raw average]
                                            [--split test] [--threads 1]

A run trained with ``trainer.average=ema|polyak`` keeps both its raw weights and their average
in ``last.pt`` (``training/averaging.py``), while ``best.pt`` holds only the average at the best
dev epoch. To compare the two at the same epoch (is the average better, or does it only stop
earlier?), each checkpoint is loaded once per ``--weights`` and parses the split greedily in the
parsing default precision (``precision=auto``); prints the epoch, UAS and LAS as a Markdown table.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import torch

import nparse
from nparse import checkpoint
from common import parse_scores, split_sentences


def with_weights(path: Path, weights: str, out: Path) -> int | None:
    """Write ``path`` with its raw or averaged weights as a loadable checkpoint; its epoch (None:
    it has no averaged weights)."""
    state = checkpoint.load(path, torch.device("cpu"))
    if weights == "average":
        kept = (state.get("average") or {}).get("average")
        if not kept:
            return None
        state["model"] = {k: (kept[k].to(v.dtype) if k in kept else v) for k, v in state["model"].items()}
    for key in ("optimizer", "scheduler", "average", "rng"):
        state.pop(key, None)
    torch.save(state, out)
    return int(state.get("epoch", 0))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("checkpoints", nargs="+", type=Path, help="last.pt files")
    ap.add_argument("--weights", nargs="+", choices=("raw", "average"), default=["raw", "average"])
    ap.add_argument("--split", default="test")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    print(f"| checkpoint | weights | epoch | {args.split} UAS | {args.split} LAS |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for path in args.checkpoints:
            for weights in args.weights:
                out = Path(tmp) / "weights.pt"
                epoch = with_weights(path, weights, out)
                if epoch is None:
                    print(f"| {path} | {weights} | none kept (trained without trainer.average) | | |", flush=True)
                    continue
                parser = nparse.load(out, device="cpu", threads=args.threads)
                found = parse_scores(parser, split_sentences(parser.config.data, args.split))
                print(f"| {path} | {weights} | {epoch} | {found.uas:.2f} | {found.las:.2f} |", flush=True)


if __name__ == "__main__":
    main()
