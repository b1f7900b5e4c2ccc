"""The GPU rows of the speed study: parsing and one training epoch on a GPU, fp32 against bf16.

    python experiments/gpu_rows.py --model CKPT [--data en_ewt] [--beams 1 8] [--precisions fp32 bf16]
                                   [--repeats 3] [--batch-sizes 0] [--exp archybrid_dynamic]
                                   [--epoch-sentences 0] [--epoch-repeats 1] [--cpu-reference] [--profile] [--out rows.md]

Parsing: the checkpoint is loaded on the GPU in each precision and parses the test file with
gold UPOS the way ``nparse-parse`` does (CoNLL-U read, parsed, written), each beam size,
``--repeats`` rounds interleaved, best time kept, after a warm-up parse (CUDA kernels chosen,
compiled search kernels ready). ``--batch-sizes 0`` is the checkpoint's own batch size.
Prints sentences/s, tokens/s and test LAS per row. ``--cpu-reference`` adds the same parse on
one CPU thread of that machine, fp32 and greedy, for scale.

Training: one greedy epoch of ``+exp=EXP`` on the treebank's training set (epoch 2 of a run, so
exploration is on as in bench.py), on the GPU, under each ``trainer.precision``, from the same
seed; then dev LAS of that one-epoch model with greedy decoding. ``--epoch-sentences N`` trains
on the first N sentences only (a smoke test).

Each part is run under its own guard: a failure is printed with its traceback and the other
rows are still measured, since a GPU machine is lent for minutes at a time.
"""

from __future__ import annotations

import argparse
import gc
import io
import json
import platform
import tempfile
import time
import traceback
from pathlib import Path

import torch
from common import split_path, split_sentences, treebank, with_ud_root
from udpipe_compare import las, nparse_parse
from hydra import compose, initialize_config_dir

from nparse import config_schema  # noqa: F401  (registers the config schemas)
from nparse.api import Parser
from nparse.paths import CONF_DIR
from nparse.training.trainer import Trainer


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    gpu = torch.cuda.get_device_name() if torch.cuda.is_available() else "no GPU"
    return f"{gpu}; CPU {cpu}; torch {torch.__version__}, CUDA {torch.version.cuda}, Python {platform.python_version()}"


def parse_rows(args, report) -> None:
    gold = split_sentences(treebank(args.data), "test")
    text = split_path(treebank(args.data), "test").read_text(encoding="utf-8")
    n_sents, n_words = len(gold), sum(len(s) for s in gold)
    parsers: dict[str, Parser] = {}
    for p in args.precisions:
        parsers[f"{args.device} {p}"] = Parser.load(args.model, args.device, precision=p)
    if args.cpu_reference:
        parsers["reference: CPU fp32, 1 thread"] = Parser.load(args.model, "cpu", threads=1, precision="fp32")
    gc.freeze()  # as nparse-parse does once the model is loaded: no full collections over the model
    best: dict[tuple[str, int, int], tuple[str, float]] = {}
    for name, parser in parsers.items():
        for beam in args.beams:
            if name.startswith("reference") and beam != 1:
                continue
            nparse_parse(parser, "\n\n".join(text.split("\n\n", 200)[:200]) + "\n\n", None, beam)  # warm-up
    for _ in range(args.repeats):
        for name, parser in parsers.items():
            for beam in args.beams:
                for bs in args.batch_sizes:
                    if name.startswith("reference") and (beam != 1 or bs != args.batch_sizes[0]):
                        continue
                    try:
                        done = nparse_parse(parser, text, bs or None, beam)
                    except Exception:
                        report(f"FAILED parse {name} beam {beam} batch {bs}:\n{traceback.format_exc()}")
                        continue
                    key = (name, beam, bs)
                    best[key] = min(best.get(key, done), done, key=lambda r: r[1])
                    report(f"# {name} beam {beam} batch {bs or 'default'}: {done[1]:.3f} s", quiet=True)
    report(f"\nParsing {args.data} test ({n_sents} sentences, {n_words} words), best of {args.repeats}:\n")
    report("| device, precision | beam | batch | sentences/s | tokens/s | test LAS |")
    report("|---|---|---|---|---|---|")
    for (name, beam, bs), (out, seconds) in best.items():
        report(f"| {name} | {beam} | {bs or 'default'} | {n_sents / seconds:,.0f} | {n_words / seconds:,.0f} "
               f"| {las(gold, out):.2f} |")  # fmt: skip
    if args.profile:  # where a greedy parse's time goes: the top of cProfile's list, by own time
        import cProfile
        import pstats

        parser = parsers[f"{args.device} {args.precisions[-1]}"]
        profile = cProfile.Profile()
        profile.enable()
        nparse_parse(parser, text, None, 1)
        profile.disable()
        buf = io.StringIO()
        pstats.Stats(profile, stream=buf).sort_stats("tottime").print_stats(25)
        report(f"\ncProfile of a greedy {args.precisions[-1]} parse, by own time:\n```\n{buf.getvalue()}```")
    if torch.cuda.is_available():
        report(f"\npeak GPU memory while parsing: {torch.cuda.max_memory_allocated() / 2**20:,.0f} MiB")


def trainer_for(args, precision: str, sentences: int, tmp: str) -> Trainer:
    overrides = [f"+exp={args.exp}", f"data={args.data}", f"trainer.device={args.device}",
                 f"trainer.precision={precision}", "trainer.seed=1", "trainer.log_every=1000000"]  # fmt: skip
    if sentences:
        overrides.append(f"data.max_train_sentences={sentences}")
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose(config_name="config", overrides=with_ud_root(overrides))
    return Trainer(cfg, Path(tmp))


def epoch_rows(args, report) -> None:
    with tempfile.TemporaryDirectory() as tmp:  # first an untimed epoch on 200 sentences: kernels compiled
        warm = trainer_for(args, args.precisions[0], 200, tmp)
        warm.train_epoch(2)
        warm.writer.close()
    rows = []
    for round in range(args.epoch_repeats):
        for p in args.precisions:
            try:
                with tempfile.TemporaryDirectory() as tmp:
                    trainer = trainer_for(args, p, args.epoch_sentences, tmp)
                    cuda = trainer.device.type == "cuda"
                    if cuda:
                        torch.cuda.reset_peak_memory_stats()
                    stats = trainer.train_epoch(2)
                    peak = torch.cuda.max_memory_allocated() / 2**20 if cuda else 0.0
                    start = time.perf_counter()
                    dev = trainer.evaluate(trainer.data.dev, None)
                    dev_seconds = time.perf_counter() - start
                    trainer.writer.close()
                rows.append((round + 1, p, stats, peak, dev.las, dev_seconds))
                numbers = {k: v for k, v in stats.items() if isinstance(v, (int, float))}
                report(f"# epoch {p}: {json.dumps(numbers)}", quiet=True)
            except Exception:
                report(f"FAILED epoch {p}:\n{traceback.format_exc()}")
    report(f"\nOne greedy training epoch, +exp={args.exp} on {args.data} train, seed 1:\n")
    report(
        "| round | trainer.precision | seconds | sentences/s | tokens/s | peak GPU MiB | dev LAS after it | dev parse s |"
    )
    report("|---|---|---|---|---|---|---|---|")
    for round, p, stats, peak, dev_las, dev_seconds in rows:
        report(f"| {round} | {p} | {stats['seconds']:.1f} | {stats['sentences_per_s']:,.0f} "
               f"| {stats['tokens_per_s']:,.0f} | {peak:,.0f} | {dev_las:.2f} | {dev_seconds:.2f} |")  # fmt: skip
    if args.profile:  # where a training epoch's time goes (on 2,000 sentences)
        import cProfile
        import pstats

        with tempfile.TemporaryDirectory() as tmp:
            trainer = trainer_for(args, args.precisions[-1], 2000, tmp)
            profile = cProfile.Profile()
            profile.enable()
            trainer.train_epoch(2)
            profile.disable()
            trainer.writer.close()
        buf = io.StringIO()
        pstats.Stats(profile, stream=buf).sort_stats("tottime").print_stats(25)
        report(
            f"\ncProfile of a {args.precisions[-1]} epoch on 2,000 sentences, by own time:\n```\n{buf.getvalue()}```"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True, help="checkpoint to parse with")
    ap.add_argument("--data", default="en_ewt")
    ap.add_argument("--beams", type=int, nargs="+", default=[1, 8])
    ap.add_argument("--precisions", nargs="+", default=["fp32", "bf16"])
    ap.add_argument("--batch-sizes", type=int, nargs="+", default=[0], help="0: the checkpoint's own")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--exp", default="archybrid_dynamic", help="preset of the training epoch")
    ap.add_argument("--epoch-repeats", type=int, default=1, help="epochs per precision, interleaved")
    ap.add_argument("--epoch-sentences", type=int, default=0, help="train on the first N sentences (0: all)")
    ap.add_argument("--cpu-reference", action="store_true")
    ap.add_argument("--profile", action="store_true", help="also profile a greedy parse and an epoch (cProfile)")
    ap.add_argument("--device", default="cuda", help="cuda; cpu to try the script without a GPU")
    ap.add_argument("--skip", nargs="*", default=[], choices=["parse", "epoch"])
    ap.add_argument("--out", type=Path, help="also write the report here")
    args = ap.parse_args()
    lines: list[str] = []

    def report(line: str, quiet: bool = False) -> None:
        print(line, flush=True)
        if not quiet:
            lines.append(line)
        if args.out:
            args.out.write_text("\n".join(lines) + "\n")

    report(f"Machine: {machine()}")
    if args.device == "cuda" and not torch.cuda.is_available():
        raise SystemExit("no GPU: the GPU rows need one (--device cpu runs the same rows on the CPU)")
    for part, run in (("parse", parse_rows), ("epoch", epoch_rows)):
        if part in args.skip:
            continue
        start = time.perf_counter()
        try:
            run(args, report)
        except Exception:
            report(f"FAILED {part}:\n{traceback.format_exc()}")
        report(f"# {part} took {time.perf_counter() - start:.0f} s", quiet=True)


if __name__ == "__main__":
    main()
