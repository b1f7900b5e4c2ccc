"""The trainer behind ``python -m nparse.train``: data, model, epochs, evaluation, checkpoints.

Each run writes ``runs/<exp>/<date>_<time>/``: the resolved config (``config.yaml`` and Hydra's
``.hydra/``), TensorBoard events, ``last.pt`` (every epoch), ``best.pt`` (best dev LAS), dev and
test predictions, ``metrics.json`` and ``skipped.tsv`` (training sentences left out, and why).
"""

from __future__ import annotations

import json
import logging
import os
import random
import signal
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from omegaconf import DictConfig, OmegaConf
from tqdm import tqdm

from .. import checkpoint
from ..api import model_from_state, pick_device
from ..io.conllu import Sentence, iter_conllu, read_conllu, tree_problem, write_conllu
from ..io.data import Example, Vocabs, bucket_batches, collate, encode
from ..models.encoder import extend_with_pretrained
from ..eval.scores import Scores, score
from ..models.parser import ParserModel
from ..paths import resolve_path
from ..systems import Oracle, StaticOracle, make_oracle, make_system
from ..systems.factors import factor_mask
from .distributed import Ranks, barrier, gather_counters, sum_gradients, total
from .global_loop import LOSSES, RESTART_FROM, UPDATES, GlobalSettings

log = logging.getLogger("nparse.train")

ORACLE_TRAINING_KEYS = ("name", "explore_p", "explore_from_epoch")
# Per-epoch statistics drawn in TensorBoard under train/ (greedy or global training).
TRAIN_CURVES = (
    "transitions_per_sentence", "exploration_rate", "error_rate", "explore_p", "oracle_share",
    "beam_size", "updates_per_sentence", "derivation_share_updated", "end_reached",
)  # fmt: skip


@dataclass
class Data:
    train: list[Sentence]
    dev: list[Sentence]
    test: list[Sentence]
    skipped: list[tuple[str, str]]  # (sent_id, reason)


def load_data(cfg: DictConfig) -> Data:
    """Read train/dev/test; training sentences that are not single-rooted trees are skipped."""
    train_path = resolve_path(cfg.data.train, "data.train")
    limit = int(cfg.data.get("max_train_sentences") or 0)
    train, skipped = [], []
    for sent in iter_conllu(train_path):
        problem = tree_problem(sent.heads)
        if problem:
            skipped.append((sent.name, f"not a single-rooted tree: {problem}"))
        else:
            train.append(sent)
            if len(train) == limit:
                break
    dev = read_conllu(resolve_path(cfg.data.dev, "data.dev")) if cfg.data.get("dev") else []
    test = read_conllu(resolve_path(cfg.data.test, "data.test")) if cfg.data.get("test") else []
    return Data(train, dev, test, skipped)


def prepare_examples(sents: list[Sentence], vocabs: Vocabs, oracle: Oracle, skipped: list) -> list[Example]:
    """Encode training sentences and let the oracle precompute; refused trees go to ``skipped``."""
    examples = []
    fallbacks: list[str] = []
    for sent in tqdm(sents, desc="oracle data", unit="sent", leave=False, disable=None):
        ex = encode(sent, vocabs)
        ex.gold = oracle.prepare(sent.heads)
        if ex.gold is None:
            skipped.append((sent.name, f"not covered by the {oracle.system.name} {oracle.name} oracle"))
        else:
            examples.append(ex)
            if getattr(ex.gold, "fallback", False):
                fallbacks.append(sent.name)
    if fallbacks:
        log.warning(
            "oracle %s: search over the time limit (oracle.time_limit) on %d sentence(s), trained with the "
            "LAZY sequence instead: %s",
            oracle.name,
            len(fallbacks),
            ", ".join(fallbacks[:20]) + (" ..." if len(fallbacks) > 20 else ""),
        )
    return examples


def system_options(cfg: DictConfig) -> dict[str, Any]:
    return {k: v for k, v in OmegaConf.to_container(cfg.system, resolve=True).items()}  # type: ignore[union-attr]


def oracle_options(cfg: DictConfig) -> dict[str, Any]:
    opts = OmegaConf.to_container(cfg.oracle, resolve=True)
    return {k: v for k, v in opts.items() if k not in ORACLE_TRAINING_KEYS}  # type: ignore[union-attr]


def global_settings(cfg: DictConfig, oracle: Oracle) -> GlobalSettings:
    """The beam-training settings of ``trainer=global``; combinations that make no sense stop here."""
    tc = cfg.trainer
    settings = GlobalSettings(
        beam_size=int(tc.beam_size),
        update=str(tc["update"]),
        loss=str(tc.global_loss),
        restart=bool(tc.restart),
        restart_from=str(tc.restart_from),
    )
    for key, value, choices in (
        ("trainer.update", settings.update, UPDATES),
        ("trainer.global_loss", settings.loss, LOSSES),
        ("trainer.restart_from", settings.restart_from, RESTART_FROM),
    ):
        if value not in choices:
            raise ValueError(f"{key}={value}: choose one of {', '.join(choices)}")
    if settings.beam_size < 1:
        raise ValueError(f"trainer.beam_size={settings.beam_size}: must be at least 1")
    where = f"oracle={oracle.name} (system={oracle.system.name})"
    if settings.restart and isinstance(oracle, StaticOracle):
        raise ValueError(
            f"trainer.restart=true with {where}: a static oracle is defined only along its own "
            "sequence, so there is nothing to restart from; use a dynamic or non-deterministic oracle"
        )
    if settings.restart and settings.update == "full":
        raise ValueError(
            "trainer.restart=true with trainer.update=full: a full update decodes to the end, nothing is left to restart"
        )
    if settings.restart_from == "negative" and not settings.restart:
        raise ValueError("trainer.restart_from=negative needs trainer.restart=true")
    if settings.restart_from == "negative" and not oracle.complete:
        raise ValueError(
            f"trainer.restart_from=negative with {where}: restarting from the negative example needs an "
            "oracle defined in every configuration (a dynamic oracle)"
        )
    return settings


def check_reachable(settings: GlobalSettings | None, examples: list[Example], oracle: Oracle) -> None:
    """The softmax loss with full updates is the likelihood of the gold derivation: refuse it when
    some training tree cannot be built by the system (its correct derivations end elsewhere)."""
    if settings is None or settings.loss != "softmax" or settings.update != "full":
        return
    missing = [e.sent.name for e in examples if not oracle.reaches(e.gold)]  # type: ignore[arg-type]
    if missing:
        raise ValueError(
            f"trainer.global_loss=softmax with trainer.update=full: {len(missing)} training trees "
            f"({', '.join(missing[:3])}{', ...' if len(missing) > 3 else ''}) cannot be built by "
            f"system={oracle.system.name}, so the gold derivation is unreachable; use trainer.update=early "
            "or max_violation, or a system that builds every tree"
        )


def check_completion(cfg: DictConfig, settings: GlobalSettings | None) -> None:
    """The completion model is trained by the global loss; decoder=mst needs its arc factor."""
    factors = list((cfg.model.get("completion") or {}).get("factors") or [])
    mask = factor_mask(factors)
    if mask and settings is None:
        raise ValueError(
            f"model.completion.factors={factors} needs trainer=global: the factors are trained "
            "with the global loss of beam training (e.g. +exp=completion_2a)"
        )
    if cfg.decoder.get("name") == "mst" and not mask & 1:
        raise ValueError(
            "decoder=mst decodes the completion model's first-order factor: set "
            "model.completion.factors to a list with 1 (e.g. [1,2a]) and trainer=global"
        )


def cpu_threads(setting: int | None) -> int:
    """Torch CPU threads: ``trainer.threads`` when set, else the CPUs this job was given
    (``SLURM_CPUS_PER_TASK``, then ``OMP_NUM_THREADS`` when the user set it, then the affinity
    mask): more threads than CPUs spin against each other and run many times slower."""
    if setting:
        return int(setting)
    for variable in ("SLURM_CPUS_PER_TASK", "OMP_NUM_THREADS"):
        value = os.environ.get(variable, "")
        if value.isdigit() and int(value) > 0:
            return int(value)
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


class Preempted(Exception):
    """Training stopped on SIGTERM/SIGUSR1/SIGINT (Ctrl-C) after writing last.pt; a rerun with
    trainer.resume=auto (or the path) goes on from there."""

    def __init__(self, message: str, signum: int | None = None):
        super().__init__(message)
        self.signum = signum


STOP_SIGNALS = (signal.SIGTERM, signal.SIGUSR1, signal.SIGINT)
PRECISIONS = ("fp32", "bf16", "fp16")


# Keys an override may change when resuming: how the run goes on, not what it trains.
RESUME_HARMLESS = (
    "trainer.epochs", "trainer.device", "trainer.threads", "trainer.log_every", "trainer.checkpoint_every",
    "trainer.precision", "trainer.resume", "decoder.batch_size", "decoder.batch_tokens",
)  # fmt: skip


def _leaves(cfg: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(cfg, dict):
        out: dict[str, Any] = {}
        for k, v in cfg.items():
            out.update(_leaves(v, f"{prefix}{k}."))
        return out
    return {prefix[:-1]: cfg}


def resumed_config(saved: dict, current: DictConfig, overrides: list[str] | None) -> tuple[DictConfig, list[str]]:
    """The run's own saved config, with the harmless changes of ``current`` applied (logged).

    ``overrides`` are the command line's (Hydra's task overrides): only their keys count as
    asked for. Without them (a config built in code) every key of ``current`` does. A change of
    what is trained (data, system, oracle, model, training settings, preset) is refused.
    Returns the config and the changes applied, for the log."""
    now = _leaves(OmegaConf.to_container(current, resolve=True))
    before = _leaves(saved)
    if overrides is None:
        asked = [k for k in now if k in before or k.startswith(("trainer.", "data."))]
    else:
        asked = []
        for item in overrides:
            key, _, value = item.lstrip("+~").partition("=")
            if key == "exp":
                if value != saved.get("exp_name"):
                    raise ValueError(
                        f"trainer.resume: +exp={value} is not the preset of the run being resumed "
                        f"({saved.get('exp_name')}); drop it to resume, or start a new run"
                    )
                continue
            if not key.startswith("hydra."):
                asked.append(key)
    out = OmegaConf.create(saved)
    notes = []
    for key in asked:
        if key not in now or now[key] == before.get(key):
            continue
        if key in RESUME_HARMLESS:
            OmegaConf.update(out, key, now[key], force_add=True)
            notes.append(f"{key}={now[key]} (the run had {before.get(key)})")
        else:
            raise ValueError(
                f"trainer.resume: {key}={now[key]} would change what the run trains (it was trained with "
                f"{key}={before.get(key)}); resuming takes the run's own config, so drop the override, or "
                "start a new run (trainer.init_from to start from its weights)"
            )
    return out, notes


# (key, smallest value) of the integer settings checked before anything is loaded.
INTEGER_SETTINGS = (
    ("trainer.epochs", 1), ("trainer.batch_size", 1), ("trainer.batch_tokens", 0), ("trainer.seed", None),
    ("trainer.log_every", 1), ("trainer.checkpoint_every", 0), ("trainer.threads", 0),
    ("decoder.batch_size", 1), ("decoder.batch_tokens", 0), ("decoder.beam_size", 1),
    ("data.max_train_sentences", 1),
)  # fmt: skip


def check_settings(cfg: DictConfig) -> None:
    """Values that cannot work stop the run at once, with the key named (not after loading data,
    not as a traceback)."""
    if not cfg.data.get("train"):
        raise ValueError("data.train is not set: give a CoNLL-U file (data.train=PATH) or a data preset (data=en_ewt)")
    for key, least in INTEGER_SETTINGS:
        value = OmegaConf.select(cfg, key)
        if value is None and key in ("data.max_train_sentences", "trainer.batch_tokens", "decoder.batch_tokens"):
            continue
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{key}={value}: expected an integer")
        if least is not None and value < least:
            raise ValueError(f"{key}={value}: must be at least {least}")
    lr = OmegaConf.select(cfg, "trainer.lr")
    if isinstance(lr, bool) or not isinstance(lr, (int, float)) or lr <= 0:
        raise ValueError(f"trainer.lr={lr}: expected a positive number")


class NoWriter:
    """TensorBoard writer of the ranks that do not write (all but rank 0)."""

    def add_scalar(self, *args, **kwargs) -> None:
        pass

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass


class Trainer:
    def __init__(self, cfg: DictConfig, run_dir: Path, ranks: Ranks | None = None, overrides: list[str] | None = None):
        check_settings(cfg)
        resume = cfg.trainer.get("resume")
        if resume == "auto":
            last = run_dir / "last.pt"
            resume = last if last.exists() else None
            if resume is None:
                log.info("trainer.resume=auto: no last.pt in %s, starting fresh", run_dir)
        if resume:  # the run's own config, with harmless overrides only
            resume = resolve_path(resume, "trainer.resume")
            cfg, self.resume_notes = resumed_config(checkpoint.load(resume)["config"], cfg, overrides)
        self.cfg = cfg
        self.run_dir = run_dir
        self.ranks = ranks or Ranks()
        if self.ranks.main:
            run_dir.mkdir(parents=True, exist_ok=True)
        tc = cfg.trainer
        torch.set_num_threads(cpu_threads(tc.get("threads")))
        self.stop_signal: int | None = None
        self.log_handler: logging.Handler | None = None  # train.log of a resumed run
        self.partial: dict | None = None  # the epoch in progress of a mid-epoch last.pt
        self.device = pick_device(tc.device)
        if self.device.type == "cuda" and self.ranks.active:
            self.device = torch.device("cuda", self.ranks.local)
        self.precision = str(tc.get("precision") or "fp32")
        if self.precision not in PRECISIONS:
            raise ValueError(f"trainer.precision={self.precision}: choose one of {', '.join(PRECISIONS)}")
        if self.precision == "fp16" and self.device.type == "cpu":
            raise ValueError("trainer.precision=fp16 needs a GPU; on CPU use bf16 or fp32")
        self.rng = random.Random(tc.seed)
        torch.manual_seed(tc.seed)
        self.data = load_data(cfg)
        self.system = make_system(**system_options(cfg))
        self.oracle = make_oracle(self.system, cfg.oracle.name, **oracle_options(cfg))
        self.global_settings = global_settings(cfg, self.oracle) if tc.get("name") == "global" else None
        check_completion(cfg, self.global_settings)
        self.epoch = 0
        self.best_las = -1.0
        self.history: list[dict] = []
        self.step = 0
        if resume:
            self._resume(resume)
        elif tc.get("init_from"):
            self._init_from(resolve_path(tc.init_from, "trainer.init_from"))
        else:
            self._build()
        start = time.perf_counter()
        self.train_examples = prepare_examples(self.data.train, self.vocabs, self.oracle, self.data.skipped)
        self.prepare_seconds = time.perf_counter() - start
        log.info("oracle data for %d sentences prepared in %.1f s", len(self.data.train), self.prepare_seconds)
        self._report_skipped()
        if not self.train_examples:
            reasons = sorted({reason for _, reason in self.data.skipped})
            raise ValueError(
                f"data.train={cfg.data.train}: no sentence to train on"
                + (
                    f" ({len(self.data.skipped)} skipped: {'; '.join(reasons[:3])})"
                    if reasons
                    else " (the file is empty)"
                )
            )
        check_reachable(self.global_settings, self.train_examples, self.oracle)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=tc.lr, betas=tuple(tc.betas))
        self.model.precision = self.precision
        # fp16 gradients underflow without loss scaling; bf16 has float32's range and needs none.
        self.scaler = torch.amp.GradScaler(self.device.type, enabled=self.precision == "fp16")
        if resume:
            self.optimizer.load_state_dict(self.resume_state["optimizer"])
            self._restore_rng(self.resume_state["rng"])
            del self.resume_state
        if self.ranks.main:
            from torch.utils.tensorboard import SummaryWriter

            self.writer: Any = SummaryWriter(str(self.run_dir), purge_step=self.step if resume else None)
        else:
            self.writer = NoWriter()
        if self.ranks.active:  # every rank starts from rank 0's weights
            for tensor in self.model.state_dict().values():
                torch.distributed.broadcast(tensor, src=0)

    # -- set-up -----------------------------------------------------------------------------
    def _build(self) -> None:
        mc = self.cfg.model
        self.vocabs = Vocabs.build(self.data.train, lowercase=mc.lowercase)
        pretrained = None
        options = {k: v for k, v in OmegaConf.to_container(mc, resolve=True).items()}  # type: ignore[union-attr]
        if mc.get("pretrained"):
            pretrained = extend_with_pretrained(
                self.vocabs, str(resolve_path(mc.pretrained, "model.pretrained")), int(mc.pretrained_max)
            )
            options["word_dim"] = pretrained.shape[1]
        self.model = ParserModel(self.vocabs, self.system, options, pretrained).to(self.device)

    def _init_from(self, path: Path) -> None:
        """Start from a trained model's weights (and its vocabularies and sizes), fresh optimizer."""
        state = checkpoint.load(path, self.device)
        if state["system"] != system_options(self.cfg):
            raise ValueError(
                f"trainer.init_from={path}: the checkpoint's system {state['system']} differs from "
                f"system={system_options(self.cfg)}; fine-tune with the same system and options"
            )
        wanted = OmegaConf.to_container(self.cfg.model, resolve=True)
        completion = wanted.get("completion")  # type: ignore[union-attr]
        if completion and completion.get("factors") and completion != state["model_options"].get("completion"):
            # The completion model is the part being fine-tuned: the config's, initialised fresh.
            options = {**state["model_options"], "completion": completion}
            self.model = ParserModel(Vocabs.from_state(state["vocabs"]), self.system, options)
            weights = {k: v for k, v in state["model"].items() if not k.startswith("completion.")}
            missing, unexpected = self.model.load_state_dict(weights, strict=False)
            if unexpected or any(not k.startswith("completion.") for k in missing):
                raise ValueError(f"trainer.init_from={path}: weights do not fit the model ({missing}, {unexpected})")
            self.model.to(self.device)
            log.info("completion model %s: new, initialised at random", completion)
        else:
            self.model = model_from_state(state, self.device, path)
        self.vocabs = self.model.vocabs
        ignored = {
            k for k, v in wanted.items()  # type: ignore[union-attr]
            if k in self.model.options and self.model.options[k] != v
        }  # fmt: skip
        log.info("initialised from %s (epoch %d)", path, state.get("epoch", 0))
        if ignored:
            log.warning("model.%s: taken from the checkpoint, not the config", ", model.".join(sorted(ignored)))

    def _resume(self, path: Path) -> None:
        state = checkpoint.load(path, self.device, resume=True)
        self.model = model_from_state(state, self.device, path)
        self.vocabs = self.model.vocabs
        self.epoch = state["epoch"]
        self.best_las = state["best_las"]
        self.history = state["history"]
        self.step = state["step"]
        self.partial = state.get("partial")
        self.resume_state = state
        # Carry on in the directory of the checkpoint so curves, logs and checkpoints stay together.
        self.run_dir = path.parent
        handler = logging.FileHandler(self.run_dir / "train.log", encoding="utf-8")
        handler.setFormatter(logging.Formatter("[%(asctime)s][%(name)s][%(levelname)s] - %(message)s"))
        logging.getLogger().addHandler(handler)
        self.log_handler = handler
        where = f", batch {self.partial['done']} of epoch {self.partial['epoch']}" if self.partial else ""
        log.info("resuming %s after epoch %d%s", path, self.epoch, where)
        for note in getattr(self, "resume_notes", []):
            log.info("resume with %s", note)

    def _report_skipped(self) -> None:
        if not self.ranks.main:
            return
        skipped = self.data.skipped
        with open(self.run_dir / "skipped.tsv", "w", encoding="utf-8") as handle:
            handle.write("sent_id\treason\n")
            for name, reason in skipped:
                handle.write(f"{name}\t{reason}\n")
        if skipped:
            shown = ", ".join(name for name, _ in skipped[:5])
            log.warning(
                "skipped %d of %d training sentences (%s%s); list in %s",
                len(skipped),
                len(skipped) + len(self.train_examples),
                shown,
                ", ..." if len(skipped) > 5 else "",
                self.run_dir / "skipped.tsv",
            )
        log.info("training on %d sentences", len(self.train_examples))

    def _rng_state(self) -> dict:
        return {"python": self.rng.getstate(), "torch": torch.get_rng_state()}

    def _restore_rng(self, state: dict) -> None:
        self.rng.setstate(state["python"])
        torch.set_rng_state(state["torch"].cpu())

    # -- training ---------------------------------------------------------------------------
    def explore_p(self, epoch: int) -> float:
        oc = self.cfg.oracle
        if not self.oracle.complete or epoch < int(oc.get("explore_from_epoch", 1)):
            return 0.0
        return float(oc.get("explore_p", 0.0))

    def train_epoch(self, epoch: int) -> dict[str, float]:
        tc = self.cfg.trainer
        self.model.train()
        totals: Counter = Counter()
        actions: Counter = Counter()
        start = time.perf_counter()
        partial, self.partial = self.partial, None
        if partial is not None and partial["epoch"] == epoch:  # resume within the epoch
            order, done = partial["order"], partial["done"]
            totals.update(partial["totals"])
            actions.update(partial["actions"])
            start -= partial["seconds"]
        else:
            index = {id(e): i for i, e in enumerate(self.train_examples)}
            batched = bucket_batches(self.train_examples, tc.batch_size, self.rng, int(tc.get("batch_tokens") or 0))
            order, done = [[index[id(e)] for e in b] for b in batched], 0
        batches = [[self.train_examples[i] for i in b] for b in order]
        explore_p = self.explore_p(epoch)
        every = int(tc.get("checkpoint_every") or 0)
        # An update takes ``world`` consecutive batches, one per rank (see distributed.py).
        world, rank = self.ranks.world, self.ranks.rank
        updates = (len(batches) + world - 1) // world
        bar = tqdm(total=updates, initial=done, desc=f"epoch {epoch}", unit="batch",
                   disable=None if self.ranks.main else True, leave=False)  # fmt: skip
        window = {"loss": 0.0, "tokens": 0, "sents": 0, "t": time.perf_counter()}
        for k in range(done, updates):
            mine = k * world + rank
            batch_examples = batches[mine] if mine < len(batches) else []
            tokens = sum(len(e) for e in batch_examples)
            group_tokens = total(tokens, self.ranks)
            self.optimizer.zero_grad(set_to_none=True)
            value = 0.0
            if batch_examples:
                loss, counts, taken = self._train_batch(collate(batch_examples), explore_p)
                self.scaler.scale(loss / group_tokens).backward()
                value = float(loss.detach())
                totals.update({"loss": value, "sents": len(batch_examples), "tokens": tokens, **counts})
                actions.update(taken)
            sum_gradients(self.model, self.ranks)
            if tc.clip:
                self.scaler.unscale_(self.optimizer)
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), tc.clip)
            self.scaler.step(self.optimizer)
            self.scaler.update()
            self.step += 1
            window["loss"] += value
            window["tokens"] += tokens
            window["sents"] += len(batch_examples)
            if self.step % tc.log_every == 0:
                self._log_window(window, bar)
                window = {"loss": 0.0, "tokens": 0, "sents": 0, "t": time.perf_counter()}
            bar.update(1)
            last = k + 1 == updates
            stop = self.stop_signal is not None
            if self.ranks.active:  # every rank stops after the same update
                stop = total(float(stop), self.ranks) > 0
            if stop or (every and (k + 1) % every == 0 and not last):
                if self.ranks.main:
                    mid = {"epoch": epoch, "order": order, "done": k + 1, "totals": dict(totals),
                           "actions": dict(actions), "seconds": time.perf_counter() - start}  # fmt: skip
                    checkpoint.save_atomic({**self.checkpoint_state(with_optimizer=True), "partial": mid},
                                           self.run_dir / "last.pt")  # fmt: skip
                if stop:
                    bar.close()
                    name = signal.Signals(self.stop_signal).name if self.stop_signal else "a stop on another rank"
                    raise Preempted(
                        f"{name}: stopped after batch {k + 1} of {updates} of epoch {epoch}; "
                        f"{self.run_dir / 'last.pt'} written; rerun with trainer.resume=auto "
                        f"hydra.run.dir={self.run_dir} to go on",
                        self.stop_signal,
                    )
        if window["tokens"]:
            self._log_window(window, bar)
        bar.close()
        if self.ranks.active:  # the epoch's counts over all ranks
            totals, actions = gather_counters(totals, self.ranks), gather_counters(actions, self.ranks)
        seconds = time.perf_counter() - start
        sents = max(totals["sents"], 1)
        stats = {
            "loss_per_token": totals["loss"] / max(totals["tokens"], 1),
            "seconds": seconds,
            "sentences_per_s": totals["sents"] / seconds,
            "tokens_per_s": totals["tokens"] / seconds,
            "oracle_seconds": totals["oracle"],
            "oracle_share": totals["oracle"] / seconds,
        }
        if self.global_settings is None:
            stats.update(
                transitions_per_sentence=totals["transitions"] / sents,
                error_rate=totals["errors"] / max(totals["transitions"], 1),
                exploration_rate=totals["explored"] / max(totals["transitions"], 1),
                explore_p=explore_p,
            )
        else:
            stats.update(
                beam_size=self.global_settings.beam_size,
                updates_per_sentence=totals["updates"] / sents,
                derivation_share_updated=totals["covered"] / sents,
                end_reached=totals["reached_end"] / sents,
            )
            if totals["stuck"]:
                log.warning("%d sentences had no correct transition left (oracle dead end)", totals["stuck"])
        for name, count in sorted(actions.items()):
            stats[f"{name}_per_sentence"] = count / sents
        return stats

    def _train_batch(self, batch, explore_p: float) -> tuple[torch.Tensor, dict[str, float], Counter]:
        """Loss, counters and transitions taken of one batch, greedy or global."""
        if self.global_settings is None:
            loss, steps = self.model.train_step(batch, self.oracle, explore_p, self.rng)
            counts = {
                "transitions": len(steps.rows), "errors": steps.errors, "explored": steps.explored,
                "oracle": steps.oracle_seconds,
            }  # fmt: skip
            return loss, counts, steps.actions
        loss, rec = self.model.global_train_step(batch, self.oracle, self.global_settings)
        counts = {
            "updates": rec.violations, "covered": rec.covered, "reached_end": rec.reached_end,
            "stuck": rec.stuck, "oracle": rec.oracle_seconds,
        }  # fmt: skip
        return loss, counts, rec.actions

    def _log_window(self, window: dict, bar) -> None:
        """TensorBoard points for the batches since the last point."""
        elapsed = max(time.perf_counter() - window["t"], 1e-9)
        loss = window["loss"] / window["tokens"]
        self.writer.add_scalar("train/loss_per_token", loss, self.step)
        self.writer.add_scalar("speed/train_sentences_per_s", window["sents"] / elapsed, self.step)
        self.writer.add_scalar("speed/train_tokens_per_s", window["tokens"] / elapsed, self.step)
        self.writer.add_scalar("train/lr", self.optimizer.param_groups[0]["lr"], self.step)
        bar.set_postfix(loss=f"{loss:.3f}", sent_s=f"{window['sents'] / elapsed:.0f}")

    def evaluate(self, sents: list[Sentence], out_path: Path | None) -> Scores:
        from ..api import Parser, parsed_sentence

        dc = self.cfg.decoder
        parser = Parser(self.model, {"decoder": OmegaConf.to_container(dc, resolve=True)})
        decoder = "mst" if dc.get("name") == "mst" else "beam"
        best = [p[0] for p in parser.parse_nbest(sents, dc.beam_size, 1, dc.batch_size, decoder=decoder)]
        if out_path is not None:
            parsed = [parsed_sentence(s, p) for s, p in zip(sents, best)]
            write_conllu(parsed, out_path, [p.heads for p in best], [p.labels for p in best])
        tags = [p.tags for p in best] if self.model.tagger is not None else None
        return score(sents, [p.heads for p in best], [p.labels for p in best], tags)

    def checkpoint_state(self, with_optimizer: bool) -> dict:
        state = {
            "config": OmegaConf.to_container(self.cfg, resolve=True),
            "system": system_options(self.cfg),
            "model_options": self.model.options,
            "vocabs": self.vocabs.state_dict(),
            "model": self.model.state_dict(),
            "epoch": self.epoch,
            "step": self.step,
            "best_las": self.best_las,
            "history": self.history,
        }
        if with_optimizer:
            state["optimizer"] = self.optimizer.state_dict()
            state["rng"] = self._rng_state()
        return state

    def write_metrics(self, extra: dict | None = None) -> dict:
        if not self.ranks.main:
            return {}
        best = max(self.history, key=lambda h: h.get("dev_las", -1.0)) if self.history else None
        metrics = {
            "exp": self.cfg.exp_name,
            "treebank": self.cfg.data.get("name", "?"),
            "system": self.system.describe(),
            "oracle": self.oracle.name,
            "prepare_seconds": self.prepare_seconds,
            "epochs": self.history,
            "best": best,
            **(extra or {}),
        }
        (self.run_dir / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
        return metrics

    def _on_signal(self, signum: int, frame) -> None:
        if self.stop_signal is None:
            log.warning("%s received: finishing the current batch, then writing last.pt", signal.Signals(signum).name)
        self.stop_signal = signum

    def run(self) -> dict:
        """Train to the last epoch, then test; on SIGTERM/SIGUSR1 write last.pt and raise Preempted."""
        handlers = {}
        try:
            for sig in STOP_SIGNALS:
                handlers[sig] = signal.signal(sig, self._on_signal)
        except ValueError:  # not the main thread: no signal handling
            pass
        try:
            return self._run()
        except Preempted:
            self.writer.close()
            raise
        finally:
            for sig, previous in handlers.items():
                signal.signal(sig, previous)
            if self.log_handler is not None:
                logging.getLogger().removeHandler(self.log_handler)
                self.log_handler.close()

    def _run(self) -> dict:
        tc = self.cfg.trainer
        main = self.ranks.main
        if main:
            OmegaConf.save(self.cfg, self.run_dir / "config.yaml", resolve=True)
        log.info("run directory: %s", self.run_dir)
        if self.ranks.active:
            log.info("rank %d of %d", self.ranks.rank, self.ranks.world)
        log.info("system %s, oracle %s, device %s", self.system.describe(), self.oracle.name, self.device)
        for epoch in range(self.epoch + 1, tc.epochs + 1):
            stats = self.train_epoch(epoch)
            record: dict[str, Any] = {"epoch": epoch, **stats}
            if self.data.dev and main:
                dev = self.evaluate(self.data.dev, self.run_dir / "dev.pred.conllu")
                record.update({f"dev_{k}": v for k, v in dev.as_dict().items() if k != "words_nopunct"})
                self.writer.add_scalar("dev/uas", dev.uas, epoch)
                self.writer.add_scalar("dev/las", dev.las, epoch)
            for key in TRAIN_CURVES:
                if key in stats:
                    self.writer.add_scalar(f"train/{key}", stats[key], epoch)
            for key, value in stats.items():
                if key.endswith("_per_sentence") and key != "transitions_per_sentence":
                    self.writer.add_scalar(f"transitions/{key}", value, epoch)
            self.writer.add_scalar("speed/epoch_seconds", stats["seconds"], epoch)
            self.writer.flush()
            self.history.append(record)
            self.epoch = epoch
            improved = record.get("dev_las", 0.0) > self.best_las or not self.data.dev
            if improved:
                self.best_las = record.get("dev_las", 0.0)
            if main:
                if improved:
                    checkpoint.save_atomic(self.checkpoint_state(with_optimizer=False), self.run_dir / "best.pt")
                checkpoint.save_atomic(self.checkpoint_state(with_optimizer=True), self.run_dir / "last.pt")
                self.write_metrics()
            barrier(self.ranks)  # the other ranks wait for rank 0's evaluation and checkpoints
            log.info(
                "epoch %d: loss %.4f, %.0f tokens/s, %.1f s%s%s",
                epoch,
                stats["loss_per_token"],
                stats["tokens_per_s"],
                stats["seconds"],
                (f", dev UPOS {record['dev_upos']:.2f}" if "dev_upos" in record else "")
                + (f", dev UAS {record['dev_uas']:.2f} LAS {record['dev_las']:.2f}" if "dev_las" in record else ""),
                " (best)" if improved and "dev_las" in record else "",
            )
        extra = {}
        if main and self.data.test and (self.run_dir / "best.pt").exists():
            state = checkpoint.load(self.run_dir / "best.pt", self.device)
            self.model = model_from_state(state, self.device)
            test = self.evaluate(self.data.test, self.run_dir / "test.pred.conllu")
            extra["test"] = test.as_dict()
            log.info("test (best dev epoch %d): UAS %.2f LAS %.2f", state["epoch"], test.uas, test.las)
        self.writer.close()
        return self.write_metrics(extra)
