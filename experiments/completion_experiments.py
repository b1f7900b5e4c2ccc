"""The completion model against the same beam parser without it: one table per treebank.

    python experiments/completion_experiments.py --data el_gdt --greedy-run runs/swapstd_lazy/RUN
        [--exps beam_swapstd_ndall completion_2a completion_2ab completion_2ab3abc]
        [--global-epochs 5] [--beam 8] [--seed 1] [--threads 1] [-- extra Hydra overrides]

Every row is fine-tuned from the same greedy checkpoint (``--greedy-run``, e.g. a
``+exp=swapstd_lazy`` run: same system as the presets) with the same budget (``--global-epochs``
epochs, beam ``--beam``, seed ``--seed``), one run after the other (the machine has 2 cores),
into runs/<exp>/<date>_<time>_<data>/ (or reuses finished runs given with ``--runs``). Then the
best checkpoint of every run parses dev and test in this process, timed (model loaded, I/O
excluded, ``--threads`` torch threads): with its beam, and for models with the first-order factor
also with ``decoder=mst``. Prints a Markdown table: dev and test UAS/LAS, parsing tokens/s.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import torch
from beam_experiments import fine_tune
from common import ROOT, SPLITS, parse_scores, split_sentences

from nparse.api import Parser

DEFAULT_EXPS = ["beam_swapstd_ndall", "completion_2a", "completion_2ab", "completion_2ab3abc"]


def measure(run: Path, decoder: str) -> tuple[dict[str, tuple[float, float]], float]:
    """Dev and test (UAS, LAS) of a run's best checkpoint, and tokens/s over dev + test."""
    parser = Parser.load(run / "best.pt", "cpu")
    splits = {s: split_sentences(parser.config.data, s) for s in SPLITS}
    parser.parse_nbest(splits["dev"][:50], decoder=decoder)  # warm-up (compiled kernels)
    out, seconds, tokens = {}, 0.0, 0
    for split, sents in splits.items():
        start = time.perf_counter()
        s = parse_scores(parser, sents, decoder=decoder)
        seconds += time.perf_counter() - start
        tokens += sum(len(sent) for sent in sents)
        out[split] = (s.uas, s.las)
    return out, tokens / seconds


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", nargs="+", default=["el_gdt"])
    ap.add_argument("--greedy-run", type=Path, nargs="+", required=True, help="finished greedy runs, one per --data")
    ap.add_argument("--exps", nargs="+", default=DEFAULT_EXPS)
    ap.add_argument("--runs", type=Path, nargs="*", default=[], help="finished runs to reuse instead of training")
    ap.add_argument("--global-epochs", type=int, default=5)
    ap.add_argument("--beam", type=int, default=8)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("overrides", nargs="*", help="extra Hydra overrides of the runs (after --)")
    args = ap.parse_args()
    args.runs = [r.resolve() for r in args.runs]
    torch.set_num_threads(args.threads)
    lines = []
    for data, greedy in zip(args.data, args.greedy_run):
        runs = []
        for exp in args.exps:
            done = [r for r in args.runs if r.parent.name == exp and r.name.endswith(data)]
            if done:
                runs.append((exp, done[0]))
                continue
            run = fine_tune(exp, data, greedy, args)
            runs.append((exp, run))
        for exp, run in runs:
            decoders = ["beam"]
            if Parser.load(run / "best.pt", "cpu").model.has_arc_factor:
                decoders.append("mst")
            for decoder in decoders:
                scores, speed = measure(run, decoder)
                name = exp if decoder == "beam" else f"{exp}, decoder=mst"
                lines.append(
                    f"| {name} | {data} | {scores['dev'][0]:.2f} | {scores['dev'][1]:.2f} | {scores['test'][0]:.2f} "
                    f"| {scores['test'][1]:.2f} | {speed:.0f} | {run.relative_to(ROOT)} |"
                )
                print(lines[-1], flush=True)
    print("| model | treebank | dev UAS | dev LAS | test UAS | test LAS | parsing tokens/s | run |")
    print("|---|---|---|---|---|---|---|---|")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
