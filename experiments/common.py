"""What the study drivers share: training a run in a subprocess, run folders, a treebank's files,
and scoring a model on a split of its own treebank.

The drivers run as scripts (``python experiments/NAME.py``), so they import this module as
``common``. Runs are trained one after the other: the development machines have 2 cores.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

from nparse.eval.scores import Scores, score, universal
from nparse.io.conllu import Sentence, read_conllu
from nparse.paths import CONF_DIR, PROJECT_ROOT, resolve_path

ROOT = PROJECT_ROOT
RUNS = ROOT / "runs"
SPLITS = ("dev", "test")
# Where our development machines keep the UD treebanks other than the bundled EWT (el_gdt,
# hu_szeged): the studies name it as data.ud_root unless UD_ROOT or an override says otherwise.
OUR_UD = os.environ.get("UD_ROOT", "../shared/data/ud")


def attached(pred: Sentence, gold: Sentence, i: int) -> bool:
    """Whether word ``i`` of ``pred`` counts for LAS as CoNLL 2018 counts it on gold tokens: the
    gold head and the gold universal relation."""
    return pred.heads[i] == gold.heads[i] and universal(pred.deprels[i]) == universal(gold.deprels[i])


def with_ud_root(overrides: list[str] | tuple[str, ...]) -> list[str]:
    """``overrides`` naming ``data.ud_root=OUR_UD`` unless they name one."""
    given = any(o.startswith(("data.ud_root=", "++data.ud_root=")) for o in overrides)
    return list(overrides) if given else [*overrides, f"data.ud_root={OUR_UD}"]


def train(*overrides: str, log=sys.stdout) -> None:
    """``python -m nparse.train OVERRIDES...`` in the project root (with ``data.ud_root``, see
    ``with_ud_root``); the command is printed first (to ``log``) so that every figure of a study
    can be traced to it. Stops on failure."""
    cmd = [sys.executable, "-m", "nparse.train", *with_ud_root(overrides)]
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
    """The ``data`` config group of a preset (``conf/data/<name>.yaml``, UD treebanks found under
    ``OUR_UD``), for drivers that read a treebank without a model."""
    from hydra import compose, initialize_config_dir

    from nparse import config_schema  # noqa: F401  (the schemas and the ${ud:...} interpolations)

    if not (CONF_DIR / "data" / f"{name}.yaml").is_file():
        raise SystemExit(
            f"no data preset {name}: choose one of {', '.join(p.stem for p in (CONF_DIR / 'data').glob('*.yaml'))}"
        )
    with initialize_config_dir(str(CONF_DIR), version_base=None):
        cfg = compose("config", overrides=with_ud_root([f"data={name}"]))
    return OmegaConf.create(OmegaConf.to_container(cfg.data, resolve=True))


def parse_scores(parser: Any, sents: list[Sentence], **decode: Any) -> Scores:
    """UAS/LAS of ``parser`` (``nparse.load``) on gold ``sents``, decoded as ``decode`` says
    (``beam_size``, ``decoder``)."""
    results = [(p[0].heads, p[0].labels) for p in parser.parse_nbest(sents, **decode)]
    return score(sents, [h for h, _ in results], [lab for _, lab in results])


def mean_sd(values: list[float]) -> str:
    """``mean ± sd`` over seeds (one value: the value; none: ``-``)."""
    if len(values) < 2:
        return f"{values[0]:.2f}" if values else "-"
    return f"{statistics.mean(values):.2f} ± {statistics.stdev(values):.2f}"
