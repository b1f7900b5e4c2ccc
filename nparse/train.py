"""Training entry point: ``python -m nparse.train +exp=NAME [key=value ...]``.

Each run writes ``runs/<exp>/<date>_<time>/``: the resolved config (``config.yaml`` and Hydra's
``.hydra/``), TensorBoard events, ``last.pt`` (every epoch), ``best.pt`` (best dev LAS), dev and
test predictions, ``metrics.json`` and ``skipped.tsv`` (training sentences left out, and why).
The trainer itself is ``nparse.training.trainer.Trainer``.
"""

from __future__ import annotations

from pathlib import Path

import hydra
from omegaconf import DictConfig

from .paths import CONF_DIR
from .training.trainer import Trainer


@hydra.main(config_path=str(CONF_DIR), config_name="config", version_base="1.3")
def main(cfg: DictConfig) -> float:
    from hydra.core.hydra_config import HydraConfig

    run_dir = Path(HydraConfig.get().runtime.output_dir)
    metrics = Trainer(cfg, run_dir).run()
    best = metrics.get("best") or {}
    return float(best.get("dev_las", 0.0))


if __name__ == "__main__":
    main()
