"""Training and parsing speed on EWT with the current code.

    python tools/bench.py [+exp=archybrid_dynamic] [key=value ...] [--train-sentences N] [--epoch E]
                          [--beam K] [--global]

Trains one greedy epoch (exploration on, as in epoch E of a real run; default 2) on the training
set, then parses dev + test with the resulting model greedily and, with ``--beam K``, with a
beam of K (for a model with a completion model, ``model.completion.factors``, also with the
same beam without the completion model and with ``decoder=mst``); with ``--global`` it then trains one more epoch with beam search (the config's
``trainer=global`` settings, or the defaults of conf/trainer/global.yaml, beam size K). Prints
sentences/s and tokens/s of each, the ratios to greedy, the machine, device, precision and
number of processes, and where the time went (encoder, scorer, state handling, oracle, loss;
"other" is the rest: backward pass, optimizer, batching). Overrides are Hydra overrides of the
training config.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf


from nparse import timing
from nparse.api import Parser
from nparse import config_schema  # noqa: F401  (registers the config schemas)
from nparse.config import Config
from nparse.paths import CONF_DIR
from nparse.runtime import choose_precision
from nparse.training.objectives import Global, Greedy, build_objective
from nparse.training.trainer import Trainer


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    gpu = f", GPU {torch.cuda.get_device_name()}" if torch.cuda.is_available() else ""
    return (
        f"{cpu}, {os.cpu_count()} cores, torch {torch.__version__} with {torch.get_num_threads()} threads"
        f"{gpu}, Python {platform.python_version()}"
    )


def split(parts: dict[str, float], seconds: float, oracle: float = 0.0) -> dict[str, float]:
    """Shares of ``seconds`` per part; nested timings are taken apart (see nparse/timing.py)."""
    parts = dict(parts)
    if "search" in parts:  # global training: the search holds scorer and oracle calls
        parts["state"] = parts.pop("search") - parts.get("scorer", 0.0) - oracle
    elif oracle:
        parts["state"] = parts.get("state", 0.0) - oracle
    if oracle:
        parts["oracle"] = oracle
    parts["other"] = seconds - sum(parts.values())
    return {k: round(v / seconds, 3) for k, v in parts.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("overrides", nargs="*", help="Hydra overrides (default: +exp=archybrid_dynamic)")
    ap.add_argument("--train-sentences", type=int, default=0, help="train on the first N sentences only")
    ap.add_argument("--epoch", type=int, default=2, help="epoch number to imitate (decides exploration)")
    ap.add_argument("--beam", type=int, default=0, help="also parse with a beam of K")
    ap.add_argument("--global", dest="global_epoch", action="store_true", help="also train one global epoch")
    ap.add_argument("--json", action="store_true", help="print one JSON line instead of a table")
    ap.add_argument(
        "--precision", default="auto", help="of parsing: auto, fp32 or bf16 (training follows trainer.precision)"
    )
    args = ap.parse_args()
    overrides = args.overrides or ["+exp=archybrid_dynamic"]
    if args.train_sentences:
        overrides.append(f"data.max_train_sentences={args.train_sentences}")
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose(config_name="config", overrides=overrides + ["trainer.log_every=1000000"])
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        trainer = Trainer(Config.composed(cfg), Path(tmp))
        objective = trainer.objective
        if isinstance(objective, Global):  # the first epoch is greedy
            greedy = replace(trainer.cfg, trainer=replace(trainer.cfg.trainer, name="greedy"))
            trainer.objective = build_objective(greedy, trainer.oracle, trainer.rng)
        train_tokens = sum(len(e) for e in trainer.train_examples)
        timing.enabled = True
        timing.take()
        stats = trainer.train_epoch(args.epoch)
        shares = {"training": split(timing.take(), stats["seconds"], stats["oracle_seconds"])}
        parser = Parser(trainer.model, trainer.cfg)  # decoder.scores etc. of the config
        parse_precision = choose_precision(args.precision, trainer.device)
        trainer.model.set_precision(parse_precision[0])
        sents = trainer.data.dev + trainer.data.test
        tokens = sum(len(s) for s in sents)
        parser.parse_nbest(sents[:100], batch_size=cfg.decoder.batch_size, beam_size=1)  # warm-up
        timings = {}
        cache = trainer.model.encoder.char_cache
        for k in [1] + ([args.beam] if args.beam else []):
            if cache is not None:
                cache.clear()  # every timed parse starts with no cached character vectors, as a new process does
            timing.take()
            start = time.perf_counter()
            parser.parse_nbest(sents, batch_size=cfg.decoder.batch_size, beam_size=k)
            timings[k] = time.perf_counter() - start
            shares[f"parsing, beam {k}"] = split(timing.take(), timings[k])
        model = trainer.model
        if args.beam and model.completion is not None:
            kept = model.completion, model.factor_mask
            model.completion, model.factor_mask = None, 0  # the same beam without the completion model
            if cache is not None:
                cache.clear()
            start = time.perf_counter()
            parser.parse_nbest(sents, batch_size=cfg.decoder.batch_size, beam_size=args.beam)
            timings["plain"] = time.perf_counter() - start
            model.completion, model.factor_mask = kept
            if model.has_arc_factor:
                if cache is not None:
                    cache.clear()
                start = time.perf_counter()
                parser.parse_nbest(sents, batch_size=cfg.decoder.batch_size, decoder="mst")
                timings["mst"] = time.perf_counter() - start
        global_stats = None
        if args.global_epoch:
            if isinstance(objective, Greedy):  # a greedy experiment: the defaults of conf/trainer/global.yaml
                defaults: Any = OmegaConf.to_container(OmegaConf.load(CONF_DIR / "trainer" / "global.yaml"))
                defaults.pop("defaults")
                defaults["beam_size"] = args.beam or defaults["beam_size"]
                beam_cfg = replace(trainer.cfg, trainer=replace(trainer.cfg.trainer, **defaults))
                objective = build_objective(beam_cfg, trainer.oracle, trainer.rng)
            trainer.objective = objective
            trainer.model.set_precision(trainer.precision)  # back to the training precision
            timing.take()
            global_stats = trainer.train_epoch(args.epoch)
            shares["global training"] = split(timing.take(), global_stats["seconds"], global_stats["oracle_seconds"])
        trainer.writer.close()
    parse_seconds = timings[1]
    result = {
        "exp": cfg.exp_name,
        "train_sentences": len(trainer.train_examples),
        "train_tokens": train_tokens,
        "train_seconds": round(stats["seconds"], 2),
        "train_sentences_per_s": round(stats["sentences_per_s"], 1),
        "train_tokens_per_s": round(stats["tokens_per_s"], 1),
        "oracle_share": round(stats["oracle_share"], 3),
        "parse_sentences": len(sents),
        "parse_tokens": tokens,
        "parse_seconds": round(parse_seconds, 2),
        "parse_sentences_per_s": round(len(sents) / parse_seconds, 1),
        "parse_tokens_per_s": round(tokens / parse_seconds, 1),
        "machine": machine(),
        "device": str(trainer.device),
        "precision": f"training {trainer.precision}, parsing {parse_precision[0]} ({parse_precision[1]})",
        "processes": trainer.ranks.world,
        "time_split": shares,
    }
    if args.beam:
        beam_seconds = timings[args.beam]
        result.update(
            beam=args.beam,
            beam_parse_seconds=round(beam_seconds, 2),
            beam_parse_sentences_per_s=round(len(sents) / beam_seconds, 1),
            beam_parse_tokens_per_s=round(tokens / beam_seconds, 1),
            beam_parse_ratio=round(beam_seconds / parse_seconds, 2),
        )
    for key, label in (("plain", "beam_without_completion"), ("mst", "mst")):
        if key in timings:
            result.update(
                {
                    f"{label}_parse_seconds": round(timings[key], 2),
                    f"{label}_parse_sentences_per_s": round(len(sents) / timings[key], 1),
                    f"{label}_parse_tokens_per_s": round(tokens / timings[key], 1),
                }
            )
    if "plain" in timings:
        result["completion_ratio"] = round(timings[args.beam] / timings["plain"], 2)
    if global_stats is not None:
        gs = trainer.objective.settings
        result.update(
            global_settings=f"beam {gs.beam_size}, {gs.update}, {gs.loss}, restart={gs.restart}",
            global_train_seconds=round(global_stats["seconds"], 2),
            global_train_sentences_per_s=round(global_stats["sentences_per_s"], 1),
            global_train_tokens_per_s=round(global_stats["tokens_per_s"], 1),
            global_oracle_share=round(global_stats["oracle_share"], 3),
            global_train_ratio=round(global_stats["seconds"] / stats["seconds"], 2),
        )
    if args.json:
        print(json.dumps(result))
        return
    print(
        f"machine: {result['machine']} (device {result['device']}, precision {result['precision']}, "
        f"{result['processes']} process{'es' if result['processes'] > 1 else ''})"
    )
    print(f"experiment: {result['exp']} (oracle: {100 * result['oracle_share']:.1f}% of the training epoch)")
    print("| work | sentences | tokens | seconds | sentences/s | tokens/s |")
    print("|---|---|---|---|---|---|")
    print(
        f"| training (1 epoch) | {result['train_sentences']} | {train_tokens} | {result['train_seconds']} "
        f"| {result['train_sentences_per_s']:.0f} | {result['train_tokens_per_s']:.0f} |"
    )
    print(
        f"| greedy parsing (dev+test) | {len(sents)} | {tokens} | {result['parse_seconds']} "
        f"| {result['parse_sentences_per_s']:.0f} | {result['parse_tokens_per_s']:.0f} |"
    )
    if args.beam:
        print(
            f"| beam {args.beam} parsing (dev+test) | {len(sents)} | {tokens} | {result['beam_parse_seconds']} "
            f"| {result['beam_parse_sentences_per_s']:.0f} | {result['beam_parse_tokens_per_s']:.0f} |"
        )
    for key, label in (
        ("plain", f"beam {args.beam} without the completion model"),
        ("mst", "mst (first-order factor)"),
    ):
        if key in timings:
            print(
                f"| {label} parsing (dev+test) | {len(sents)} | {tokens} | {timings[key]:.2f} "
                f"| {len(sents) / timings[key]:.0f} | {tokens / timings[key]:.0f} |"
            )
    if global_stats is not None:
        print(
            f"| global training (1 epoch: {result['global_settings']}) | {result['train_sentences']} | {train_tokens} "
            f"| {result['global_train_seconds']} | {result['global_train_sentences_per_s']:.0f} "
            f"| {result['global_train_tokens_per_s']:.0f} |"
        )
    if args.beam:
        print(f"beam {args.beam} parsing takes {result['beam_parse_ratio']}x the time of greedy parsing")
    if "plain" in timings:
        factors = list(cfg.model.completion.factors)
        print(
            f"beam {args.beam} with the completion model {factors} takes {result['completion_ratio']}x the time without it"
        )
    if global_stats is not None:
        print(
            f"a global training epoch takes {result['global_train_ratio']}x a greedy one "
            f"(oracle: {100 * result['global_oracle_share']:.1f}% of it)"
        )
    print_split(shares)


def print_split(shares: dict[str, dict[str, float]]) -> None:
    names = ["encoder", "scorer", "state", "completion", "oracle", "loss", "other"]
    print("| time split | " + " | ".join(names) + " |")
    print("|---" * (len(names) + 1) + "|")
    for work, parts in shares.items():
        print(f"| {work} | " + " | ".join(f"{100 * parts[n]:.0f}%" if n in parts else "-" for n in names) + " |")


if __name__ == "__main__":
    random.seed(0)
    main()
