"""Preemption and resume: the exception a stopped run raises, and the config a resumed run takes."""

from __future__ import annotations

import logging
import signal
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

from ..config import Config, upgrade_config


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
    saved: dict, current: Config, overrides: list[str] | None, preset: str | None = None
) -> tuple[Config, list[str]]:
    """The run's own saved config, with the harmless changes of ``current`` applied (logged).

    ``overrides`` are the command line's (Hydra's task overrides): only their keys count as
    asked for. Without them (a config built in code) every key of ``current`` does. A change of
    what is trained (data, system, oracle, model, training settings, preset) is refused. The
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
        if key in RESUME_HARMLESS:
            group, name = key.split(".")
            saved[group][name] = now[key]
            notes.append(f"{key}={now[key]} (the run had {before.get(key)})")
        else:
            raise ValueError(
                f"trainer.resume: {key}={now[key]} would change what the run trains (it was trained with "
                f"{key}={before.get(key)}); resuming takes the run's own config, so drop the override, or "
                "start a new run (trainer.init_from to start from its weights)"
            )
    return Config.from_dict(saved), notes
