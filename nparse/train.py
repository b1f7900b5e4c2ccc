"""Training entry point: ``python -m nparse.train +exp=NAME [key=value ...]``.

Each run writes ``runs/<exp>/<date>_<time>/``: the resolved config (``config.yaml`` and Hydra's
``.hydra/``), TensorBoard events, ``last.pt`` (every epoch), ``best.pt`` (best dev LAS), dev and
test predictions, ``metrics.json`` and ``skipped.tsv`` (training sentences left out, and why).
The trainer itself is ``nparse.training.trainer.Trainer``.
"""

from __future__ import annotations

import gc
import logging
import os
import shutil
import sys
from pathlib import Path
from typing import NoReturn

import hydra
from omegaconf import DictConfig

from . import config_schema  # noqa: F401  (registers the config schemas)
from .config import Config
from .paths import CONF_DIR
from .runtime import collector_freeze, pick_device
from .training.distributed import Ranks, barrier, broadcast, ranks_from_env, setup, shutdown
from .training.trainer import Preempted, Trainer


@hydra.main(config_path=str(CONF_DIR), config_name="config", version_base="1.3")
def main(cfg: DictConfig) -> float:
    from hydra.core.hydra_config import HydraConfig

    run_dir = Path(HydraConfig.get().runtime.output_dir)
    ranks = ranks_from_env()
    if ranks.active:
        run_dir = join_ranks(cfg, ranks, run_dir)
    try:
        overrides = list(HydraConfig.get().overrides.task)
        trainer = Trainer(Config.composed(cfg), run_dir, ranks, overrides)  # typed once, here
    except (ValueError, OSError) as err:  # bad settings or input: the message names the key or file
        logging.getLogger("nparse.train").error("%s", err)
        print(f"error: {err}", file=sys.stderr)
        shutdown(ranks)  # a process group left to interpreter exit can abort it
        sys.exit(1)
    # The data and the model, loaded now, live as long as the run: full collections no longer walk
    # them (as nparse-parse does). Training 3,000 EWT sentences, a full collection came about once
    # an epoch and took 0.24-0.28 s, 16-26 ms frozen; a whole EWT epoch did not measurably change.
    collector_freeze()
    try:
        metrics = trainer.run()
        # Every rank leaves together, after rank 0's last evaluation and checkpoints: a rank that
        # tore its process group down while another still ran once aborted on exit (SIGABRT,
        # "terminate called without an active exception") in a loaded 2-process CPU test run.
        barrier(ranks)
    except OSError as err:  # a full disk or a run directory that went away: no traceback, no half files
        logging.getLogger("nparse.train").error("%s", err)
        print(
            f"error: {err}\n(checkpoints are written atomically: {run_dir} keeps the last complete ones)",
            file=sys.stderr,
        )
        sys.exit(1)
    except Preempted as stop:
        logging.getLogger("nparse.train").warning("%s", stop)
        print(f"stopped: {stop}", file=sys.stderr)
        sys.exit(128 + (stop.signum or 15))  # as if killed by the signal: 143 for SIGTERM, 130 for Ctrl-C
    finally:
        gc.unfreeze()  # a Hydra sweep runs its jobs in this process, one after another
        shutdown(ranks)
    best = metrics.get("best") or {}
    return float(best.get("dev_las", 0.0))


def join_ranks(cfg: DictConfig, ranks: Ranks, own: Path) -> Path:
    """Join the process group; every rank works in rank 0's run directory, and only rank 0
    logs to files (the others keep warnings and errors on stderr)."""
    setup(ranks, cuda=pick_device(cfg.trainer.device).type == "cuda")
    shared = Path(str(broadcast(str(own), ranks)))
    if not ranks.main:
        root = logging.getLogger()
        for handler in list(root.handlers):
            root.removeHandler(handler)
            handler.close()
        stderr = logging.StreamHandler()
        stderr.setLevel(logging.WARNING)
        root.addHandler(stderr)
        if own != shared and own.is_dir():  # Hydra made a folder of its own for this rank: drop it
            if all(p.name in (".hydra", "train.log") for p in own.iterdir()):
                shutil.rmtree(own, ignore_errors=True)
    return shared


def check_run_dir(argv: list[str]) -> str | None:
    """Why the run directory cannot be created (None if it can), checked before Hydra tries and
    fails with a traceback: the nearest existing folder of ``hydra.run.dir`` (default ``runs/``)
    must be a writable directory."""
    given = [a.split("=", 1)[1] for a in argv if a.startswith(("hydra.run.dir=", "hydra.sweep.dir="))]
    for target in given or ["runs"]:
        path = Path(target).absolute()
        while not path.exists() and path != path.parent:
            path = path.parent
        if not path.is_dir():
            return f"cannot create the run directory {target}: {path} is not a directory"
        if not os.access(path, os.W_OK | os.X_OK):
            return f"cannot create the run directory {target}: {path} is not writable"
    return None


def cli() -> None:
    """``python -m nparse.train`` and ``nparse-train``: the run directory is checked before Hydra starts."""
    problem = check_run_dir(sys.argv[1:])
    if problem:
        print(f"error: {problem}", file=sys.stderr)
        sys.exit(1)
    if not ranks_from_env().active:
        main()
        return
    try:
        main()
    except SystemExit as stop:  # an error or a preemption, already reported
        leave(stop.code if isinstance(stop.code, int) else int(stop.code is not None))
    leave(0)


def leave(code: int) -> NoReturn:
    """End a rank of a distributed run once it has written everything and left its process group,
    without the interpreter's finalization: there, gloo's threads twice aborted a rank whose run
    had finished (SIGABRT, "terminate called without an active exception", in the loaded
    2-process CPU test under pytest -n 2; not reproduced in 17 runs, nor in 24 repetitions of its
    two runs beside one or two busy cores;
    PyTorch's own account of such aborts puts them in finalization). Logs and streams are flushed
    first; checkpoints and metrics are written atomically before this point."""
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    cli()
