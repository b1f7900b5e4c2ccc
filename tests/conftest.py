"""Shared fixtures: treebank locations and one small trained model reused by several tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

if os.environ.get("PYTEST_XDIST_WORKER"):
    # Tests run on two workers (pytest -n 2, see pyproject.toml): each, and every process it
    # starts (training and parsing subprocesses read OMP_NUM_THREADS), gets one CPU.
    os.environ["OMP_NUM_THREADS"] = "1"
    torch.set_num_threads(1)

from nparse.paths import PROJECT_ROOT

BUNDLED = PROJECT_ROOT / "data" / "ud" / "en_ewt"
SHARED = PROJECT_ROOT.parent / "shared" / "data" / "ud"
EWT_DEV = BUNDLED / "en_ewt-ud-dev.conllu"


def compose_config(*overrides: str):
    """The typed config (``nparse.config.Config``) of ``conf/`` with Hydra ``overrides``."""
    from hydra import compose, initialize_config_dir

    from nparse import config_schema  # noqa: F401  (registers the config schemas)
    from nparse.config import Config
    from nparse.paths import CONF_DIR

    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        return Config.composed(compose(config_name="config", overrides=list(overrides)))


def model_config(**values):
    """The default ``model`` group with ``values`` changed (small networks for tests)."""
    import dataclasses

    return dataclasses.replace(compose_config().model, **values)


def treebank_files(split: str | None = None) -> list[Path]:
    """Every CoNLL-U file of the bundled and shared treebanks (optionally one split)."""
    files = sorted(BUNDLED.glob("*.conllu"))
    if SHARED.is_dir():
        files += sorted(p for p in SHARED.glob("*/*.conllu") if p.parent.name != "en_ewt")
    if split:
        files = [f for f in files if f.name.endswith(f"-{split}.conllu")]
    return files


def run_train(run_dir: Path, *overrides: str, timeout: int = 600) -> dict:
    """Run ``python -m nparse.train`` into ``run_dir`` and return its metrics.json."""
    cmd = [sys.executable, "-m", "nparse.train", f"hydra.run.dir={run_dir}", *overrides]
    proc = subprocess.run(cmd, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads((run_dir / "metrics.json").read_text())


@pytest.fixture(scope="session")
def tiny_run(tmp_path_factory) -> Path:
    """A 2-epoch arc-hybrid run on 200 EWT sentences (dev: the full EWT dev set)."""
    run_dir = tmp_path_factory.mktemp("tiny_run")
    run_train(
        run_dir,
        "+exp=archybrid_dynamic",
        "data.max_train_sentences=200",
        "trainer.epochs=2",
        "data.test=null",
    )
    return run_dir


def padded_equals_compact(enc, batch) -> torch.Tensor:
    """The encoder's vectors of ``batch`` in evaluation mode, checked the same padded and compact
    (the compact ones returned)."""
    with torch.no_grad():
        enc.eval()
        padded = enc(batch)
        compact = enc(batch, compact=True)
    torch.testing.assert_close(padded[batch.real_mask()], compact, rtol=1e-5, atol=1e-6)
    return compact
