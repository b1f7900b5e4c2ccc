"""Parsing batch sizes compared in one process: words/s of each on a test set, and the same output.

    python experiments/batch_size_compare.py --models en_ewt=CKPT [el_gdt=CKPT ...] [--sizes 128 512 1024]
                                             [--rounds 4] [--beam 1] [--precision auto]

Each model is loaded once (one thread) and parses its treebank's test file as nparse-parse does
(CoNLL-U read, parsed, written; ``udpipe_compare.nparse_parse``) with every ``decoder.batch_size``
(beam items per batch: batch_size // beam sentences) in turn,
``--rounds`` times, interleaved, so that the machine's changing speed falls on all sizes alike;
the best time of each is kept. Prints words/s per size and whether the outputs are identical.
"""

from __future__ import annotations

import argparse
import gc
from pathlib import Path

import torch
from common import split_path, treebank
from udpipe_compare import cpu, nparse_parse

from nparse.api import Parser


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", nargs="+", required=True, help="DATA=CHECKPOINT")
    ap.add_argument(
        "--sizes", nargs="+", type=int, default=[256, 1024, 4096], help="decoder.batch_size values (beam items)"
    )
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--beam", type=int, default=1)
    ap.add_argument("--precision", default="auto")
    args = ap.parse_args()
    torch.set_num_threads(1)
    print(f"CPU: {cpu()}; torch {torch.__version__}, 1 thread, beam {args.beam}, precision {args.precision}")
    print("| treebank | model | " + " | ".join(f"batch {s} words/s" for s in args.sizes) + " | outputs |")
    print("|---|---|" + "---|" * len(args.sizes) + "---|")
    for spec in args.models:
        data, ckpt = spec.split("=", 1)
        text = split_path(treebank(data), "test").read_text(encoding="utf-8")
        words = sum(1 for line in text.splitlines() if line.split("\t", 1)[0].isdigit())
        parser = Parser.load(ckpt, "cpu", threads=1, precision=args.precision)
        parser.prepare()
        parser.settings = parser.settings.override(beam_size=args.beam, decoder="beam" if args.beam > 1 else None)
        gc.freeze()  # as nparse-parse does once the model is loaded
        best: dict[int, float] = {}
        outputs: dict[int, str] = {}
        for _ in range(args.rounds):
            for size in args.sizes:
                outputs[size], seconds = nparse_parse(parser, text, size)
                best[size] = min(best.get(size, seconds), seconds)
        same = "identical" if len(set(outputs.values())) == 1 else "DIFFER"
        speeds = " | ".join(f"{words / best[s]:,.0f}" for s in args.sizes)
        print(f"| {data} | {Path(ckpt).parent.parent.name} | {speeds} | {same} |", flush=True)
        gc.unfreeze()


if __name__ == "__main__":
    main()
