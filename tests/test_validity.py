"""Issue 10, "valid output, always": every preset's parser, greedy and beam (and mst where it has
the arc factor), gives for every sentence in one sentence out, a single-rooted tree and labels
that agree with it, and the UD validator (udtools, GPL: tests only) passes levels 1-2 and
level 3's root-label checks. Untrained weights: validity must not depend on a good model."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf

from nparse.api import Parser
from nparse.systems import SYSTEMS
from nparse.io.conllu import read_conllu, tree_problem, write_conllu
from nparse.io.data import Vocabs
from nparse.config import model_config
from nparse.models.parser import ParserModel
from nparse import config_schema  # noqa: F401  (registers the config schemas)
from nparse.paths import CONF_DIR
from nparse.systems import make_system

from .conftest import BUNDLED

pytestmark = pytest.mark.slow  # it trains or runs a command (pytest -m 'not slow' leaves it out)

pytest.importorskip("udtools")
PRESETS = sorted(p.stem for p in (CONF_DIR / "exp").glob("*.yaml"))
SENTENCES = 25


def parser_kinds() -> dict[str, tuple[dict, dict]]:
    """Every preset's (system, model) options, one preset named per distinct pair: the output
    of a parser depends on them alone (oracles and trainers only change the weights)."""
    kinds: dict[str, tuple[dict, dict]] = {}
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        for preset in PRESETS:
            cfg = compose(config_name="config", overrides=[f"+exp={preset}"])
            pair = tuple(OmegaConf.to_container(cfg[k], resolve=True) for k in ("system", "model"))
            if pair not in kinds.values():
                kinds[preset] = pair  # type: ignore[assignment]
    return kinds


def outputs(preset: str, system_options: dict, model_options: dict, out_dir: Path) -> list[Path]:
    sents = read_conllu(BUNDLED / "en_ewt-ud-dev.conllu")[:SENTENCES]
    torch.manual_seed(0)
    morphology = model_options["analysis"] or model_options["feats_dim"] > 0
    vocabs = Vocabs.build(sents, morphology=morphology)
    model = ParserModel(vocabs, make_system(**system_options), model_config(model_options)).eval()
    parser = Parser(model)
    decoders = [("greedy", 1), ("beam", 4)]
    if 1 in model_options["completion"]["factors"]:
        decoders.append(("mst", 1))
    files = []
    for decoder, beam in decoders:
        parsed = parser.parse(sents, beam_size=beam, decoder=decoder)
        assert len(parsed) == len(sents)
        for s, p in zip(sents, parsed):
            assert p.forms == s.forms and p.lines == s.lines
            assert tree_problem(p.heads) is None, (preset, decoder, s.name)
            for h, label in zip(p.heads[1:], p.deprels[1:]):
                assert (h == 0) == (label == "root"), (preset, decoder, s.name)
        path = out_dir / f"{preset}-{decoder}.conllu"
        write_conllu(parsed, path)
        files.append(path)
    return files


def udvalidate(*args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-c", "from udtools.cli import main; main()", "--lang", "ud", "--max-err", "5", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600)


def test_every_preset_writes_valid_conllu(tmp_path):
    kinds = parser_kinds()
    systems = {pair[0]["name"] for pair in kinds.values()}
    assert systems == set(SYSTEMS)  # every registered system has a preset, and is checked here
    files = [str(f) for preset, pair in kinds.items() for f in outputs(preset, *pair, tmp_path)]
    level2 = udvalidate("--level", "2", *files)
    assert level2.returncode == 0, level2.stdout[-3000:] + level2.stderr[-3000:]
    roots = udvalidate("--level", "3", "--include-only", "0-is-not-root", "root-is-not-0", *files)
    assert roots.returncode == 0, roots.stdout[-3000:] + roots.stderr[-3000:]
