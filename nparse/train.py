"""Training entry point: ``python -m nparse.train +exp=NAME [key=value ...]``.

Each run writes ``runs/<exp>/<date>_<time>/``: the resolved config (``config.yaml`` and Hydra's
``.hydra/``), TensorBoard events, ``last.pt`` (every epoch), ``best.pt`` (best dev LAS), dev and
test predictions, ``metrics.json`` and ``skipped.tsv`` (training sentences left out, and why).
The trainer itself is ``nparse.training.trainer.Trainer``.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import hydra
from omegaconf import DictConfig

from .paths import CONF_DIR
from .training.trainer import Preempted, Trainer

PREEMPTED_EXIT = 143  # 128 + SIGTERM: what a job killed by SIGTERM reports


@hydra.main(config_path=str(CONF_DIR), config_name="config", version_base="1.3")
def main(cfg: DictConfig) -> float:
    from hydra.core.hydra_config import HydraConfig

    run_dir = Path(HydraConfig.get().runtime.output_dir)
    try:
        trainer = Trainer(cfg, run_dir)
    except (ValueError, OSError) as err:  # bad settings or input: the message names the key or file
        logging.getLogger("nparse.train").error("%s", err)
        print(f"error: {err}", file=sys.stderr)
        sys.exit(1)
    try:
        metrics = trainer.run()
    except Preempted as stop:
        logging.getLogger("nparse.train").warning("%s", stop)
        print(f"preempted: {stop}", file=sys.stderr)
        sys.exit(PREEMPTED_EXIT)
    best = metrics.get("best") or {}
    return float(best.get("dev_las", 0.0))


if __name__ == "__main__":
    main()
