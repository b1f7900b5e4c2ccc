"""Preemption and resume: where a run starts (a new run, or the last.pt it goes on from, with the
config it takes), the signals that stop it, and the exception a stopped run raises."""

from __future__ import annotations

import logging
import random
import re
import signal
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

import torch

from .. import checkpoint
from ..config import Config, upgrade_config
from ..paths import resolve_path
from .distributed import Ranks, total

log = logging.getLogger("nparse.train")


class Preempted(Exception):
    """Training stopped on SIGTERM/SIGUSR1/SIGINT (Ctrl-C) after writing last.pt; a rerun with
    trainer.resume=auto (or the path) goes on from there."""

    def __init__(self, message: str, signum: int | None = None):
        super().__init__(message)
        self.signum = signum


STOP_SIGNALS = (signal.SIGTERM, signal.SIGUSR1, signal.SIGINT)


def _stopped(signum: int | None, what: str, run_dir: Path) -> Preempted:
    """What stopped the run, ``what`` it stopped after and where last.pt stands, and how to go on."""
    name = signal.Signals(signum).name if signum else "a stop on another rank"
    return Preempted(f"{name}: stopped {what}; rerun with trainer.resume=auto hydra.run.dir={run_dir} to go on", signum)


def preempted(signum: int | None, done: int, updates: int, epoch: int, run_dir: Path) -> Preempted:
    """The error a stopped run raises once last.pt is written: what stopped it and how to go on."""
    return _stopped(signum, f"after batch {done} of {updates} of epoch {epoch}; {run_dir / 'last.pt'} written", run_dir)


def preempted_between(signum: int | None, epoch: int, run_dir: Path, finishing: bool = False) -> Preempted:
    """The error of a stop that came outside the training batches: during an epoch's evaluation
    and checkpoints (``last.pt`` holds the whole epoch), or, ``finishing``, after the last epoch."""
    where = "before the run's final evaluation ended" if finishing else f"after epoch {epoch}"
    return _stopped(signum, f"{where}; {run_dir / 'last.pt'} holds epoch {epoch}", run_dir)


@contextmanager
def stop_signals(handler: Callable[[int, Any], None]) -> Iterator[None]:
    """``handler`` receives the stop signals for the duration (it sets a flag the training loop
    reads after each batch); the previous handlers are restored after. Outside the main thread
    signals cannot be caught, and nothing is installed."""
    previous = {}
    try:
        for sig in STOP_SIGNALS:
            previous[sig] = signal.signal(sig, handler)
    except ValueError:  # not the main thread
        pass
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def log_to(run_dir: Path) -> logging.Handler | None:
    """Append the log to a resumed run's own train.log, where Hydra writes to a new run directory;
    None where a handler writes there already (``hydra.run.dir=`` the run: each line once)."""
    target = (run_dir / "train.log").resolve()
    for known in logging.getLogger().handlers:
        if isinstance(known, logging.FileHandler) and Path(known.baseFilename).resolve() == target:
            return None
    handler = logging.FileHandler(target, encoding="utf-8")
    handler.setFormatter(logging.Formatter("[%(asctime)s][%(name)s][%(levelname)s] - %(message)s"))
    logging.getLogger().addHandler(handler)
    return handler


# Keys an override may change when resuming: how the run goes on, not what it trains.
RESUME_HARMLESS = (
    "trainer.epochs", "trainer.patience", "trainer.plateau", "trainer.plateau_factor", "trainer.device", "trainer.threads", "trainer.log_every", "trainer.checkpoint_every",
    "trainer.precision", "trainer.resume", "trainer.distill_cache_mb", "decoder.batch_size", "decoder.batch_tokens",
)  # fmt: skip


# Config keys that name files: an override naming the run's own file another way (relative to
# the working directory, through a link) is the same setting.
RESUME_PATHS = (
    "data.train", "data.dev", "data.test", "data.ud_root", "model.lexicon", "model.pretrained", "trainer.init_from",
)  # fmt: skip


# How the run ends, harmless while its final phase has not begun: a run trained without one
# (or with another length) can go on to it, as ``trainer.epochs`` can be raised.
RESUME_BEFORE_PHASE = ("trainer.final_decay", "trainer.final_decay_lr")


def same_file(a: Any, b: Any) -> bool:
    """Whether two config paths name one existing file (as ``resolve_path`` finds them)."""
    if not (isinstance(a, str) and isinstance(b, str)):
        return False
    try:
        return resolve_path(a) == resolve_path(b)
    except FileNotFoundError:
        return False


def _leaves(cfg: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(cfg, dict):
        out: dict[str, Any] = {}
        for k, v in cfg.items():
            out.update(_leaves(v, f"{prefix}{k}."))
        return out
    return {prefix[:-1]: cfg}


def preset_of(overrides: list[str] | None) -> str | None:
    """The ``+exp=`` preset a command line names (None without one). Saved in every checkpoint
    (``preset``): Hydra's own record, ``.hydra/overrides.yaml``, is rewritten by the resuming
    command when it runs in the same folder, and ``exp_name=`` may have replaced the name."""
    for item in overrides or []:
        key, _, value = item.lstrip("+~").partition("=")
        if key == "exp" and not item.startswith("~"):
            return value
    return None


def resumed_config(
    saved: dict, current: Config, overrides: list[str] | None, preset: str | None = None, in_phase: bool = False
) -> tuple[Config, list[str]]:
    """The run's own saved config, with the harmless changes of ``current`` applied (logged).

    ``overrides`` are the command line's (Hydra's task overrides): only their keys count as
    asked for. Without them (a config built in code) every key of ``current`` does. A change of
    what is trained (data, system, oracle, model, training settings, preset) is refused; a path
    naming the run's own file another way is no change (``RESUME_PATHS``), and the final phase
    may be set until it has begun (``in_phase``: the checkpoint's ``decay_start``). The
    preset is the run's ``preset`` (saved in its checkpoints, ``preset_of``) where known, else its ``exp_name`` (which a
    preset sets, unless the command line set it too). Returns the config and the changes
    applied, for the log."""
    saved = upgrade_config(saved)
    now = _leaves(current.to_dict())
    before = _leaves(saved)
    if overrides is None:
        asked = [k for k in now if k in before or k.startswith(("trainer.", "data."))]
    else:
        asked = []
        for item in overrides:
            key, _, value = item.lstrip("+~").partition("=")
            if key == "exp":
                if value != (preset or saved.get("exp_name")):
                    raise ValueError(
                        f"trainer.resume: +exp={value} is not the preset of the run being resumed "
                        f"({preset or saved.get('exp_name')}); drop it to resume, or start a new run"
                    )
                continue
            if not key.startswith("hydra."):
                asked.append(key)
    notes = []
    for key in asked:
        if key not in now or now[key] == before.get(key):
            continue
        if key in RESUME_PATHS and same_file(now[key], before.get(key)):
            continue  # the run's own file, named another way: its config keeps its spelling
        if key in RESUME_HARMLESS or (key in RESUME_BEFORE_PHASE and not in_phase):
            group, name = key.split(".")
            saved[group][name] = now[key]
            notes.append(f"{key}={now[key]} (the run had {before.get(key)})")
        else:
            if key in RESUME_BEFORE_PHASE:
                raise ValueError(
                    f"trainer.resume: {key}={now[key]}: the run's final phase has begun with {key}="
                    f"{before.get(key)}; drop the override, or start a new run (trainer.init_from)"
                )
            raise ValueError(
                f"trainer.resume: {key}={now[key]} would change what the run trains (it was trained with "
                f"{key}={before.get(key)}); resuming takes the run's own config, so drop the override, or "
                "start a new run (trainer.init_from to start from its weights)"
            )
    return Config.from_dict(saved), notes


TIMESTAMPED = re.compile(r"\d{4}-\d{2}-\d{2}_\d{2}-\d{2}-\d{2}")  # Hydra's default run folder names


def latest_sibling_run(run_dir: Path) -> Path | None:
    """The most recently written other timestamped run folder beside ``run_dir`` that holds a
    last.pt, when ``run_dir`` is one too (Hydra's default: a folder chosen with hydra.run.dir, a
    sweep's numbered ones or a seed's in experiments/seed_runs.py, is meant to be new)."""
    if not TIMESTAMPED.fullmatch(run_dir.name):
        return None
    try:
        found = [d for d in run_dir.parent.iterdir()
                 if d != run_dir and TIMESTAMPED.fullmatch(d.name) and (d / "last.pt").is_file()]  # fmt: skip
    except OSError:
        return None
    return max(found, key=lambda d: (d / "last.pt").stat().st_mtime, default=None)


@dataclass
class Start:
    """Where a run starts: its config (a resumed run's own, with harmless overrides), the last.pt
    it resumes (None: a new run), its preset and the overrides applied on resuming (for the log)."""

    cfg: Config
    resume: Path | None
    preset: str | None
    notes: list[str]


def start_point(cfg: Config, run_dir: Path, overrides: list[str] | None) -> Start:
    """``trainer.resume`` read: ``auto`` resumes ``run_dir/last.pt`` when there is one (and warns
    when a newer timestamped sibling run is likely the one meant), a path resumes that file."""
    resume: Any = cfg.trainer.resume
    if resume == "auto":
        last = run_dir / "last.pt"
        resume = last if last.exists() else None
        if resume is None:
            log.info("trainer.resume=auto: no last.pt in %s, starting fresh", run_dir)
            earlier = latest_sibling_run(run_dir)
            if earlier is not None:  # a new timestamped folder: the run meant is likely this one
                log.warning(
                    "trainer.resume=auto looks in this run's own folder, %s, which is new; to go on with "
                    "%s add hydra.run.dir=%s", run_dir, earlier / "last.pt", earlier,
                )  # fmt: skip
    if not resume:
        return Start(cfg, None, preset_of(overrides), [])
    path = resolve_path(resume, "trainer.resume")
    saved = checkpoint.load(path)
    preset = saved.get("preset")
    resumed, notes = resumed_config(saved["config"], cfg, overrides, preset, saved.get("decay_start") is not None)
    return Start(resumed, path, preset, notes)


class StopControl:
    """The stop signals of a run (SIGTERM, SIGUSR1, Ctrl-C): the first lets the current batch, or
    the epoch's evaluation and checkpoints, finish and last.pt be written (the training loop asks
    ``stopping``); after the last epoch (``finishing``) a signal stops the run at once.
    ``where`` says the epoch reached and the run folder, for the message."""

    def __init__(self, where: Callable[[], tuple[int, Path]]):
        self.where = where
        self.signal: int | None = None
        self.finishing = False

    def __call__(self, signum: int, frame: Any) -> None:
        if self.finishing:  # calibration, test parse, segmenter: nothing to finish first
            epoch, run_dir = self.where()
            raise preempted_between(signum, epoch, run_dir, finishing=True)
        if self.signal is None:
            log.warning(
                "%s received: finishing the current batch (or the epoch's evaluation), then stopping with last.pt written",
                signal.Signals(signum).name,
            )
        self.signal = signum

    def stopping(self, ranks: Ranks) -> bool:
        """Whether a signal arrived, on any rank (so that every rank stops after the same update)."""
        stop = self.signal is not None
        return total(float(stop), ranks) > 0 if ranks.active else stop


def resumed_log(start: Start, saved: dict, run_dir: Path, main: bool) -> logging.Handler | None:
    """Log a resume (where the run goes on, the overrides applied) and, on rank 0, append the log
    to the run's own train.log (``log_to``; the other ranks' lines stay on their stderr)."""
    handler = log_to(run_dir) if main else None
    partial = saved.get("partial")
    where = f", batch {partial['done']} of epoch {partial['epoch']}" if partial else ""
    log.info("resuming %s after epoch %d%s", start.resume, saved["epoch"], where)
    for note in start.notes:
        log.info("resume with %s", note)
    return handler


def rng_state(rng: random.Random) -> dict:
    """The run's random generators, as last.pt keeps them."""
    return {"python": rng.getstate(), "torch": torch.get_rng_state()}


def restore_rng(rng: random.Random, state: dict) -> None:
    rng.setstate(state["python"])
    torch.set_rng_state(state["torch"].cpu())
