"""The GPU rows: greedy and global training epochs, parsing, and CUDA-against-CPU bytes, in one command.

    python experiments/gpu_rows.py --out $OUT          # on a lent GPU machine, about 6 minutes
    python experiments/gpu_rows.py --exp 2planar_dynamic_ud --overrides model.segmenter=false --out $OUT
                                                       # the full UD analysis (tags, features, lemmas)
    python experiments/gpu_rows.py --device cpu --train-sentences 300 --global-sentences 100 \\
        --parse-sentences 200 --arms fp32/32 --out /tmp/rows    # the same rows on the CPU, small: a
                                                                  # check of the script (tests/test_tools.py)

Every part runs under its own guard (a failure prints its traceback and the other rows are still
measured: a GPU is lent for minutes) and every row is written to ``--out`` as soon as it is known
(``rows.md`` for people, ``rows.json`` for tools). In order:

1. **Greedy epochs**: ``+exp=EXP`` (2planar_dynamic) trained ``--epochs`` epochs from seed 1 for
   each arm ``PRECISION/BATCH[/LR]`` (``trainer.precision``, ``trainer.batch_size``,
   ``trainer.lr``); seconds, tokens/s and the GPU's utilization (``nvidia-smi`` sampled every
   200 ms) per epoch, peak GPU memory, dev LAS after the last epoch. The first arm's model is
   saved for the parts below. An untimed epoch on 200 sentences comes first (CUDA and the
   compiled kernels warmed).
2. **Host synchronisations**: a few batches of the first arm's training under
   ``torch.cuda.set_sync_debug_mode``: the lines of our code that wait for the GPU, counted per batch.
3. **Parsing**: the saved model parses the test file the way ``nparse-parse`` does (read, parsed,
   written) on the GPU in each precision, greedily and with beam ``--beam``, best of
   ``--repeats``; then on the CPU in fp32: the CUDA fp32 output must be the same bytes (the
   differing words are counted where it is not).
4. **Profile**: cProfile of a greedy epoch on 2,000 sentences, by own time.
5. **Global epoch**: ``+exp=GLOBAL_EXP`` (beam_2planar_dynamic: beam 8, max-violation, restart)
   fine-tuned one epoch from the saved model (``trainer.init_from``), in the last arm's precision:
   seconds, tokens/s, peak GPU memory, and dev LAS before and after the epoch, decoded with the
   global preset's beam. ``--global-overrides`` defaults to ``trainer.global_scores=local``: the
   greedy model stays locally normalised, so the two compare; the preset's ``raw`` scores start
   from a beam that parses worse than greedy decoding, and their first epoch lowers dev LAS
   whatever the device (docs/experiments/precision.md).
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import io
import json
import platform
import pstats
import shutil
import subprocess
import tempfile
import threading
import time
import traceback
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

import torch
from common import split_path, split_sentences, treebank, with_ud_root
from hydra import compose, initialize_config_dir
from udpipe_compare import nparse_parse

from nparse import checkpoint
from nparse import config_schema  # noqa: F401  (registers the config schemas)
from nparse.api import Parser
from nparse.config import Config
from nparse.eval.aligned import aligned_scores
from nparse.io.conllu import read_conllu
from nparse.paths import CONF_DIR, PROJECT_ROOT
from nparse.training.trainer import Trainer


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu = line.split(":", 1)[1].strip()
            break
    gpu = torch.cuda.get_device_name() if torch.cuda.is_available() else "no GPU"
    import nparse

    package = Path(nparse.__file__).parent
    git = ["git", "-C", str(PROJECT_ROOT)]
    try:  # a lent GPU machine may have no git, and the copied tree no .git: the commit is then unknown
        commit = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
        changed = subprocess.run([*git, "status", "--porcelain", "nparse"], capture_output=True, text=True).stdout
    except OSError:
        commit, changed = "", ""
    code = f"{commit or 'commit unknown'}{' with uncommitted changes' if changed.strip() else ''}, from {package}"
    return (f"{gpu}; CPU {cpu}; torch {torch.__version__}, CUDA {torch.version.cuda}, "
            f"Python {platform.python_version()}; nparse {code}")  # fmt: skip


class Utilization:
    """The GPU's utilization, sampled by ``nvidia-smi`` every 200 ms in the background; ``mean``
    over a wall-clock window. Without nvidia-smi (a CPU check) every mean is None."""

    def __init__(self) -> None:
        self.samples: list[tuple[float, float]] = []
        self.proc = None
        if shutil.which("nvidia-smi") and torch.cuda.is_available():
            cmd = ["nvidia-smi", "--query-gpu=utilization.gpu", "--format=csv,noheader,nounits", "-lms", "200"]
            self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
            threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        for line in self.proc.stdout:
            try:
                self.samples.append((time.perf_counter(), float(line.strip())))
            except ValueError:
                continue

    def mean(self, start: float, end: float) -> float | None:
        inside = [u for t, u in self.samples if start <= t <= end]
        return sum(inside) / len(inside) if inside else None

    def close(self) -> None:
        if self.proc is not None:
            self.proc.terminate()


def percent(value: float | None) -> str:
    return "not measured" if value is None else f"{value:.0f}%"


class Report:
    """Markdown lines and JSON rows, rewritten under ``--out`` after every row."""

    def __init__(self, out: Path | None) -> None:
        self.out, self.lines, self.rows = out, [], []  # type: ignore[var-annotated]
        if out:
            out.mkdir(parents=True, exist_ok=True)

    def __call__(self, line: str, quiet: bool = False) -> None:
        print(line, flush=True)
        if not quiet:
            self.lines.append(line)
        self.save()

    def row(self, **fields: Any) -> None:
        self.rows.append(fields)
        print("# " + json.dumps(fields), flush=True)
        self.save()

    def save(self) -> None:
        if self.out:
            (self.out / "rows.md").write_text("\n".join(self.lines) + "\n")
            (self.out / "rows.json").write_text(json.dumps(self.rows, indent=1) + "\n")


def trainer_for(args, exp: str, tmp: Path, sentences: int, *extra: str) -> Trainer:
    overrides = [f"+exp={exp}", f"data={args.data}", f"trainer.device={args.device}", "trainer.seed=1",
                 "trainer.log_every=1000000", f"trainer.threads={args.threads}", *args.overrides, *extra]  # fmt: skip
    if sentences:
        overrides.append(f"data.max_train_sentences={sentences}")
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose(config_name="config", overrides=with_ud_root(overrides))
    return Trainer(Config.composed(cfg), tmp)


def arm_overrides(arm: str) -> tuple[str, list[str]]:
    """``PRECISION/BATCH[/LR]`` as a label and trainer overrides."""
    parts = arm.split("/")
    over = [f"trainer.precision={parts[0]}", f"trainer.batch_size={parts[1]}"]
    if len(parts) > 2:
        over.append(f"trainer.lr={parts[2]}")
    return arm, over


def timed_epoch(trainer: Trainer, epoch: int, util: Utilization) -> tuple[dict, float | None]:
    cuda = trainer.device.type == "cuda"
    if cuda:
        torch.cuda.synchronize()
    start = time.perf_counter()
    stats = trainer.train_epoch(epoch)
    if cuda:
        torch.cuda.synchronize()
    return stats, util.mean(start, time.perf_counter())


def greedy_rows(args, report: Report, util: Utilization, work: Path) -> Path | None:
    with tempfile.TemporaryDirectory() as tmp:  # untimed: CUDA started, kernels compiled
        warm = trainer_for(args, args.exp, Path(tmp), 200)
        warm.train_epoch(1)
        warm.train_epoch(2)
        warm.writer.close()
    report(f"\nGreedy training, +exp={args.exp}{''.join(' ' + o for o in args.overrides)} on {args.data} train"
           f"{f' (first {args.train_sentences} sentences)' if args.train_sentences else ''}, seed 1, "
           f"{args.epochs} epochs per arm from scratch:\n")  # fmt: skip
    report(
        "| arm (precision/batch[/lr]) | epoch | seconds | sentences/s | tokens/s | GPU utilization | peak GPU MiB | dev LAS after it |"
    )
    report("|---|---|---|---|---|---|---|---|")
    saved = None
    for i, arm in enumerate(args.arms):
        label, over = arm_overrides(arm)
        try:
            run = work / f"arm{i}"
            trainer = trainer_for(args, args.exp, run, args.train_sentences, *over)
            cuda = trainer.device.type == "cuda"
            for epoch in range(1, args.epochs + 1):
                if cuda:
                    torch.cuda.reset_peak_memory_stats()
                stats, used = timed_epoch(trainer, epoch, util)
                peak = torch.cuda.max_memory_allocated() / 2**20 if cuda else None
                dev = trainer.evaluate(trainer.data.dev, None).las if epoch == args.epochs else None
                report.row(part="greedy", arm=label, precision=str(trainer.precision), epoch=epoch,
                           seconds=stats["seconds"], sentences_per_s=stats["sentences_per_s"],
                           tokens_per_s=stats["tokens_per_s"], utilization=used, peak_mib=peak, dev_las=dev)  # fmt: skip
                report(f"| {label} | {epoch} | {stats['seconds']:.1f} | {stats['sentences_per_s']:,.0f} "
                       f"| {stats['tokens_per_s']:,.0f} | {percent(used)} | {'-' if peak is None else f'{peak:,.0f}'} "
                       f"| {'' if dev is None else f'{dev:.2f}'} |")  # fmt: skip
            if saved is None:
                saved = work / "greedy.pt"
                checkpoint.save_atomic(trainer.checkpoint_state(with_optimizer=False), saved)
            trainer.writer.close()
        except Exception:
            report(f"FAILED greedy arm {label}:\n```\n{traceback.format_exc()}```")
    return saved


def sync_rows(args, report: Report) -> None:
    """Where training waits for the GPU: warnings of ``set_sync_debug_mode`` by line of our code."""
    if not torch.cuda.is_available() or args.device == "cpu":
        report("\nHost synchronisations: not measured (no GPU)")
        return
    with tempfile.TemporaryDirectory() as tmp:
        label, over = arm_overrides(args.arms[-1])
        trainer = trainer_for(args, args.exp, Path(tmp), 32 * args.sync_batches, *over)
        trainer.train_epoch(1)  # first batches: caches filled
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            torch.cuda.set_sync_debug_mode("warn")
            try:
                trainer.train_epoch(2)
            finally:
                torch.cuda.set_sync_debug_mode("default")
        trainer.writer.close()
    batches = max(1, len(trainer.epoch_order()))
    where = Counter(f"{Path(w.filename).name}:{w.lineno}" for w in caught if "synchroniz" in str(w.message))
    report(f"\nHost synchronisations in a greedy epoch ({label}, {batches} batches): "
           f"{sum(where.values())} in all, {sum(where.values()) / batches:.1f} per batch; by line:\n")  # fmt: skip
    for place, n in where.most_common(15):
        report(f"- {place}: {n}")


def first_sentences(text: str, n: int) -> str:
    """The first ``n`` sentences of a CoNLL-U text (blocks between blank lines)."""
    return "\n\n".join(text.split("\n\n", n)[:n]) + "\n\n"


def parse_rows(args, report: Report, model: Path) -> None:
    gold = split_sentences(treebank(args.data), "test")
    text = split_path(treebank(args.data), "test").read_text(encoding="utf-8")
    if args.parse_sentences:  # the first N sentences (a check of the script on a CPU)
        gold, text = gold[: args.parse_sentences], first_sentences(text, args.parse_sentences)
    n_sents, n_words = len(gold), sum(len(s) for s in gold)
    parsers = {f"{args.device} {p}": Parser.load(model, args.device, precision=p) for p in args.precisions}
    parsers["cpu fp32"] = Parser.load(model, "cpu", threads=args.cpu_threads, precision="fp32")
    gc.freeze()  # as nparse-parse does once the model is loaded
    head = first_sentences(text, 200)
    for parser in parsers.values():
        for beam in (1, args.beam):
            nparse_parse(parser, head, None, beam)  # warm-up
    best: dict[tuple[str, int], tuple[str, float]] = {}
    for _ in range(args.repeats):
        for name, parser in parsers.items():
            for beam in (1, args.beam):
                if name.startswith("cpu") and best.get((name, beam)):
                    continue  # the CPU's parse: once, for its bytes and scale
                try:
                    done = nparse_parse(parser, text, None, beam)
                except Exception:
                    report(f"FAILED parse {name} beam {beam}:\n```\n{traceback.format_exc()}```")
                    continue
                best[(name, beam)] = min(best.get((name, beam), done), done, key=lambda r: r[1])
    report(f"\nParsing {args.data} test ({n_sents} sentences, {n_words} words) with the first arm's model, "
           f"read, parsed and written, best of {args.repeats} (the CPU: once, {args.cpu_threads} threads):\n")  # fmt: skip
    report("| device, precision | beam | sentences/s | tokens/s | test LAS | UPOS | UFeats | Lemmas | MLAS "
           "| bytes as the CPU's fp32 parse |")  # fmt: skip
    report("|---|---|---|---|---|---|---|---|---|---|")
    for (name, beam), (out, seconds) in best.items():
        reference = best.get(("cpu fp32", beam))
        same = "-" if reference is None or name == "cpu fp32" else differing(out, reference[0])
        scores = aligned_scores(gold, read_conllu(io.StringIO(out)))
        metrics = {m: scores[m].f1 for m in TABLE_METRICS}  # a gold-tag model writes back the input's tags: 100
        report.row(part="parse", parser=name, beam=beam, seconds=seconds, tokens_per_s=n_words / seconds,
                   same_bytes=same, **metrics)  # fmt: skip
        report(
            f"| {name} | {beam} | {n_sents / seconds:,.0f} | {n_words / seconds:,.0f} | "
            + " | ".join(f"{metrics[m]:.2f}" for m in TABLE_METRICS)
            + f" | {same} |"
        )
    if torch.cuda.is_available():
        report(f"\npeak GPU memory while parsing: {torch.cuda.max_memory_allocated() / 2**20:,.0f} MiB")


TABLE_METRICS = ("las", "upos", "ufeats", "lemmas", "mlas")  # CoNLL 2018, on gold tokens


def differing(out: str, reference: str) -> str:
    """ "same" or how many word lines differ."""
    if out == reference:
        return "same"
    a, b = out.splitlines(), reference.splitlines()
    words = sum(1 for x, y in zip(a, b) if x != y and x[:1].isdigit())
    return f"{words} word lines differ" + ("" if len(a) == len(b) else f" (lines {len(a)} vs {len(b)})")


def global_rows(args, report: Report, util: Utilization, model: Path, work: Path) -> None:
    label, over = arm_overrides(args.arms[-1])
    trainer = trainer_for(args, args.global_exp, work / "global", args.global_sentences,
                          f"trainer.init_from={model}", over[0], *args.global_overrides)  # fmt: skip
    before = trainer.evaluate(trainer.data.dev, None).las  # the greedy model, decoded as the global one is
    cuda = trainer.device.type == "cuda"
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    stats, used = timed_epoch(trainer, 1, util)
    peak = torch.cuda.max_memory_allocated() / 2**20 if cuda else None
    dev = trainer.evaluate(trainer.data.dev, None).las
    trainer.writer.close()
    tc = trainer.cfg.trainer
    settings = (f"beam {tc.beam_size}, {tc.update}, restart={tc.restart}, {tc.global_scores} scores, "
                f"{trainer.precision}")  # fmt: skip
    report.row(part="global", exp=args.global_exp, settings=settings, seconds=stats["seconds"],
               sentences_per_s=stats["sentences_per_s"], tokens_per_s=stats["tokens_per_s"], utilization=used,
               peak_mib=peak, dev_las_before=before, dev_las=dev)  # fmt: skip
    report(
        f"\nOne global epoch, +exp={args.global_exp} ({settings}) from the first arm's model"
        f"{f', first {args.global_sentences} sentences' if args.global_sentences else ''}:\n"
    )
    report("| seconds | tokens/s | GPU utilization | peak GPU MiB | dev LAS before | dev LAS after it |")
    report("|---|---|---|---|---|---|")
    report(
        f"| {stats['seconds']:.1f} | {stats['tokens_per_s']:,.0f} | {percent(used)} "
        f"| {'-' if peak is None else f'{peak:,.0f}'} | {before:.2f} | {dev:.2f} |"
    )


def profile_rows(args, report: Report) -> None:
    label, over = arm_overrides(args.arms[0])
    with tempfile.TemporaryDirectory() as tmp:
        trainer = trainer_for(args, args.exp, Path(tmp), args.profile_sentences, *over)
        trainer.train_epoch(1)
        profile = cProfile.Profile()
        profile.enable()
        trainer.train_epoch(2)
        if trainer.device.type == "cuda":
            torch.cuda.synchronize()
        profile.disable()
        trainer.writer.close()
    buf = io.StringIO()
    pstats.Stats(profile, stream=buf).sort_stats("tottime").print_stats(30)
    report(f"\ncProfile of greedy epoch 2 ({label}) on {args.profile_sentences} sentences, by own time:\n"
           f"```\n{buf.getvalue()}```")  # fmt: skip


PARTS = ("greedy", "syncs", "parse", "profile", "global")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default="en_ewt")
    ap.add_argument("--exp", default="2planar_dynamic", help="greedy preset")
    ap.add_argument(
        "--global-exp", default="beam_2planar_dynamic", help="global preset, fine-tuned from the greedy model"
    )
    ap.add_argument(
        "--arms",
        nargs="+",
        default=["fp32/32", "bf16/32", "bf16/128", "bf16/128/0.002"],
        help="PRECISION/BATCH[/LR] per greedy arm; the first arm's model is parsed and fine-tuned",
    )
    ap.add_argument(
        "--overrides",
        nargs="*",
        default=[],
        help="Hydra overrides for every trainer (before the arm's), e.g. model.segmenter=false for a _ud preset",
    )
    ap.add_argument(
        "--global-overrides",
        nargs="*",
        default=["trainer.global_scores=local"],
        help="Hydra overrides of the global epoch (after --overrides); give none for the preset's raw scores",
    )
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--train-sentences", type=int, default=0, help="first N training sentences (0: all)")
    ap.add_argument("--global-sentences", type=int, default=0, help="first N for the global epoch (0: all)")
    ap.add_argument("--profile-sentences", type=int, default=2000)
    ap.add_argument("--sync-batches", type=int, default=20)
    ap.add_argument("--precisions", nargs="+", default=["fp32", "bf16"], help="of the GPU parses")
    ap.add_argument("--beam", type=int, default=8)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--parse-sentences", type=int, default=0, help="parse the first N test sentences (0: all)")
    ap.add_argument("--threads", type=int, default=0, help="trainer.threads (0: the machine's choice)")
    ap.add_argument("--cpu-threads", type=int, default=8, help="threads of the CPU reference parse")
    ap.add_argument("--model", type=Path, help="parse this checkpoint instead of the first arm's model")
    ap.add_argument("--device", default="cuda", help="cuda; cpu to try the script without a GPU")
    ap.add_argument("--skip", nargs="*", default=[], choices=PARTS)
    ap.add_argument("--out", type=Path, help="folder for rows.md and rows.json")
    args = ap.parse_args()
    report = Report(args.out)
    report(f"Machine: {machine()}")
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        raise SystemExit("no GPU: the GPU rows need one (--device cpu runs the same rows on the CPU)")
    util = Utilization()
    model = args.model
    with tempfile.TemporaryDirectory() as work_dir:
        work = Path(work_dir)
        for part in PARTS:
            if part in args.skip or (part in ("parse", "global") and model is None):
                if part not in args.skip:
                    report(f"\n{part}: not measured (no model: the greedy arms failed)")
                continue
            start = time.perf_counter()
            try:
                if part == "greedy":
                    trained = greedy_rows(args, report, util, work)
                    model = args.model or trained
                elif part == "syncs":
                    sync_rows(args, report)
                elif part == "parse":
                    parse_rows(args, report, model)
                elif part == "global":
                    global_rows(args, report, util, model, work)
                else:
                    profile_rows(args, report)
            except Exception:
                report(f"FAILED {part}:\n```\n{traceback.format_exc()}```")
            report(f"# {part} took {time.perf_counter() - start:.0f} s", quiet=True)
    util.close()


if __name__ == "__main__":
    main()
