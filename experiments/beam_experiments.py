"""Greedy model, the same model decoded with a beam, and global fine-tuning from it: one table.

    python experiments/beam_experiments.py --data el_gdt [--greedy-exp arceager_dynamic] [--greedy-epochs 30]
        [--greedy-run RUN] [--exps beam_early beam_maxv beam_imp_early beam_imp_maxv]
        [--global-epochs 3] [--beam 8] [--seed 1] [--threads 0] [-- extra Hydra overrides of the global runs]

1. trains the greedy model (``--greedy-exp``, or reuses a finished ``--greedy-run``);
2. parses dev and test with it greedily and with a beam of ``--beam``;
3. fine-tunes a copy of it with every global preset of ``--exps`` (``trainer.init_from``, a fresh
   optimizer, ``--global-epochs`` epochs, beam ``--beam``), one run after the other (the machine
   has 2 cores), into runs/<exp>/<date>_<time>_<data>/;
4. prints a Markdown table: dev scores of the best epoch, test scores of that checkpoint,
   seconds per epoch and updates per sentence.
Every global row starts from the same greedy checkpoint with the same budget.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from common import parse_scores, split_sentences, stamped_run, train

from nparse.api import Parser

DEFAULT_EXPS = ["beam_early", "beam_maxv", "beam_imp_early", "beam_imp_maxv"]


def train_run(exp: str, data: str, run_dir: Path, *overrides: str) -> Path:
    train(f"+exp={exp}", f"data={data}", f"hydra.run.dir={run_dir}", *overrides)
    return run_dir


def fine_tune(exp: str, data: str, greedy: Path, args: argparse.Namespace) -> Path:
    """A global run of ``exp`` started from the greedy run's best checkpoint, with the budget of
    ``args`` (global_epochs, seed, beam, threads, overrides), into runs/<exp>/<date>_<time>_<data>/."""
    return train_run(
        exp, data, stamped_run(exp, data),
        f"trainer.init_from={greedy / 'best.pt'}", f"trainer.epochs={args.global_epochs}",
        f"trainer.seed={args.seed}", f"trainer.beam_size={args.beam}", f"decoder.beam_size={args.beam}",
        f"trainer.threads={args.threads}", *args.overrides,
    )  # fmt: skip


def decode_scores(run: Path, beam: int) -> dict[str, tuple[float, float]]:
    """Dev and test (UAS, LAS) of a run's best checkpoint decoded with a beam."""
    parser = Parser.load(run / "best.pt", "cpu")
    out = {}
    for split in ("dev", "test"):
        s = parse_scores(parser, split_sentences(parser.config.data, split), beam_size=beam)
        out[split] = (s.uas, s.las)
    return out


def row(name: str, run: Path, dev: tuple[float, float] | None = None, test: tuple[float, float] | None = None) -> str:
    metrics = json.loads((run / "metrics.json").read_text())
    best = metrics["best"]
    epochs = metrics["epochs"]
    dev = dev or (best["dev_uas"], best["dev_las"])
    test = test or (metrics["test"]["uas"], metrics["test"]["las"])
    seconds = sum(e["seconds"] for e in epochs) / len(epochs)
    updates = best.get("updates_per_sentence")
    return (
        f"| {name} | {metrics['treebank']} | {len(epochs)} ({best['epoch']}) | {dev[0]:.2f} | {dev[1]:.2f} "
        f"| {test[0]:.2f} | {test[1]:.2f} | {seconds:.1f} | {'-' if updates is None else f'{updates:.2f}'} |"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", nargs="+", default=["el_gdt"])
    ap.add_argument("--greedy-exp", default="arceager_dynamic")
    ap.add_argument("--greedy-epochs", type=int, default=30)
    ap.add_argument("--greedy-run", type=Path, nargs="*", default=[], help="finished greedy runs, one per --data")
    ap.add_argument("--exps", nargs="+", default=DEFAULT_EXPS)
    ap.add_argument("--global-epochs", type=int, default=3)
    ap.add_argument("--beam", type=int, default=8)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=0, help="trainer.threads of every run (1 if anything else runs)")
    ap.add_argument("overrides", nargs="*", help="extra Hydra overrides of the global runs (after --)")
    args = ap.parse_args()
    lines = []
    for i, data in enumerate(args.data):
        if i < len(args.greedy_run):
            greedy = args.greedy_run[i]
        else:
            greedy = train_run(
                args.greedy_exp, data, stamped_run(args.greedy_exp, data),
                f"trainer.epochs={args.greedy_epochs}", f"trainer.seed={args.seed}", f"trainer.threads={args.threads}",
            )  # fmt: skip
        lines.append(row(f"{args.greedy_exp} (greedy)", greedy))
        beam = decode_scores(greedy, args.beam)
        lines.append(row(f"{args.greedy_exp}, decoded with beam {args.beam}", greedy, beam["dev"], beam["test"]))
        for exp in args.exps:
            run = fine_tune(exp, data, greedy, args)
            lines.append(row(exp, run))
    print(
        "| model | treebank | epochs (best) | dev UAS | dev LAS | test UAS | test LAS | s / epoch | updates / sentence |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
