"""What the study drivers share: training a run in a subprocess, run folders, a treebank's files,
and scoring a model on a split of its own treebank.

The drivers run as scripts (``python experiments/NAME.py``), so they import this module as
``common``. Runs are trained one after the other: the development machines have 2 cores.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

from nparse.eval.scores import Scores, score
from nparse.io.conllu import Sentence, read_conllu
from nparse.paths import CONF_DIR, PROJECT_ROOT, resolve_path

ROOT = PROJECT_ROOT
RUNS = ROOT / "runs"
SPLITS = ("dev", "test")


def train(*overrides: str, log=sys.stdout) -> None:
    """``python -m nparse.train OVERRIDES...`` in the project root; the command is printed first
    (to ``log``) so that every figure of a study can be traced to it. Stops on failure."""
    cmd = [sys.executable, "-m", "nparse.train", *overrides]
    print(" ".join(cmd[1:]), file=log, flush=True)
    subprocess.run(cmd, cwd=ROOT, check=True)


def stamped_run(exp: str, data: str) -> Path:
    """A new run folder ``runs/<exp>/<date>_<time>_<data>/`` (not created)."""
    return RUNS / exp / f"{time.strftime('%Y-%m-%d_%H-%M-%S')}_{data}"


def _get(group: Any, key: str) -> Any:
    return group[key] if isinstance(group, Mapping) else getattr(group, key)


def split_path(data: Any, split: str) -> Path:
    """The file of ``split`` (train, dev, test) of a ``data`` config group (a run's config, a
    parser's config, or ``treebank(name)``)."""
    return resolve_path(str(_get(data, split)), f"data.{split}")


def split_sentences(data: Any, split: str) -> list[Sentence]:
    """The gold sentences of ``split`` of a ``data`` config group."""
    return read_conllu(split_path(data, split))


def treebank(name: str) -> Any:
    """The ``data`` config group of a preset (``conf/data/<name>.yaml``), for drivers that read
    a treebank without a model."""
    path = CONF_DIR / "data" / f"{name}.yaml"
    if not path.is_file():
        raise SystemExit(f"no data preset {name}: choose one of {', '.join(p.stem for p in (CONF_DIR / 'data').glob('*.yaml'))}")
    return OmegaConf.load(path)


def parse_scores(parser: Any, sents: list[Sentence], **decode: Any) -> Scores:
    """UAS/LAS of ``parser`` (``nparse.load``) on gold ``sents``, decoded as ``decode`` says
    (``beam_size``, ``decoder``)."""
    results = parser.parse_sentences(sents, **decode)
    return score(sents, [h for h, _ in results], [lab for _, lab in results])


def mean_sd(values: list[float]) -> str:
    """``mean ± sd`` over seeds (one value: the value; none: ``-``)."""
    if len(values) < 2:
        return f"{values[0]:.2f}" if values else "-"
    return f"{statistics.mean(values):.2f} ± {statistics.stdev(values):.2f}"
