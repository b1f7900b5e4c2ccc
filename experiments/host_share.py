"""How much of a greedy training epoch is host work, not torch: what keeps a GPU waiting.

    python experiments/host_share.py [+exp=2planar_dynamic] [key=value ...] [--train-sentences N]

Trains one epoch (epoch 2, exploration on, one thread) after a warm-up epoch, under cProfile, and
splits the profiled time by where each function's own time is spent: in torch (its C++ calls and
its Python code under site-packages/torch) or elsewhere (nparse's compiled kernels and Python,
numpy, the standard library). cProfile adds its own overhead to every Python call, so the
host figure is an upper bound; the epoch's wall time without the profiler is printed beside it.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import tempfile
import time
from pathlib import Path

from hydra import compose, initialize_config_dir

from nparse import config_schema  # noqa: F401  (registers the config schemas)
from nparse.config import Config
from nparse.paths import CONF_DIR
from nparse.training.trainer import Trainer


def in_torch(key: tuple[str, int, str]) -> bool:
    filename, _, name = key
    return "site-packages/torch/" in filename or (filename == "~" and ("torch" in name or "_C." in name))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("overrides", nargs="*")
    ap.add_argument("--train-sentences", type=int, default=0)
    args = ap.parse_args()
    overrides = (args.overrides or ["+exp=2planar_dynamic"]) + ["trainer.threads=1", "trainer.log_every=1000000"]
    if args.train_sentences:
        overrides.append(f"data.max_train_sentences={args.train_sentences}")
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose(config_name="config", overrides=overrides)
    with tempfile.TemporaryDirectory() as tmp:
        trainer = Trainer(Config.composed(cfg), Path(tmp))
        trainer.train_epoch(1)  # warm-up: numba's cache, torch's kernels
        start = time.perf_counter()
        trainer.train_epoch(2)
        wall = time.perf_counter() - start
        profile = cProfile.Profile()
        profile.enable()
        trainer.train_epoch(2)
        profile.disable()
    stats = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    torch_time = sum(s[2] for key, s in stats.items() if in_torch(key))
    host_time = sum(s[2] for key, s in stats.items() if not in_torch(key))
    top = sorted(((s[2], key) for key, s in stats.items() if not in_torch(key)), reverse=True)[:12]
    tokens = sum(len(e) for e in trainer.train_examples)
    print(
        f"{cfg.exp_name}: {len(trainer.train_examples)} sentences, {tokens} tokens; epoch {wall:.2f} s without the profiler"
    )
    print(f"profiled: torch {torch_time:.2f} s, host (everything else) {host_time:.2f} s")
    for seconds, (filename, line, name) in top:
        print(f"  {seconds:6.3f} s  {name} ({Path(filename).name}:{line})")


if __name__ == "__main__":
    main()
