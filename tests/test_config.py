"""The typed configuration: converted once from Hydra's composition or a checkpoint, older
checkpoints upgraded, bad configs refused with the key named."""

from __future__ import annotations

from pathlib import Path

import pytest

from nparse import checkpoint
from nparse.api import Parser
from nparse.config import ADDED_GLOBAL_KEYS, ADDED_KEYS, Config, upgrade_config
from nparse.io.conllu import read_conllu

from .conftest import EWT_DEV, compose_config

DATA = Path(__file__).parent / "data"
PRESETS = sorted(p.stem for p in (Path(__file__).parent.parent / "conf" / "exp").glob("*.yaml"))


def release_parse(parser: Parser) -> list[tuple[list[int], list[str]]]:
    return [(s.heads, s.deprels) for s in parser.parse(read_conllu(EWT_DEV)[:30])]


def test_a_checkpoint_of_the_0_1_0_release_parses_as_that_release_did():
    """``tests/data/release-0.1.0.pt`` was written by the 0.1.0 release, with its parse of 30 EWT
    dev sentences (``tests/data/make_release_checkpoint.py``)."""
    parser = Parser.load(DATA / "release-0.1.0.pt", "cpu", precision="fp32")  # as that release parsed
    assert parser.config is not None and parser.config.trainer.is_global and parser.beam_size == 4
    expected = [(s.heads, s.deprels) for s in read_conllu(DATA / "release-0.1.0.conllu")]
    assert release_parse(parser) == expected


def test_a_config_without_the_keys_added_since_parses_the_same(tmp_path):
    """What older releases did not save is filled by ``upgrade_config`` with the value that
    reproduces them: the same checkpoint without those keys parses the same trees."""
    state = checkpoint.load(DATA / "release-0.1.0.pt")
    config, options = state["config"], state["model_options"]
    for group, keys in ADDED_KEYS.items():
        for key in set(keys) - {"completion"}:  # this model has one: its release wrote the key
            if group == "model":
                options.pop(key, None)
            config[group].pop(key, None)
    for key in ADDED_GLOBAL_KEYS:
        config["trainer"].pop(key)
    old = tmp_path / "old.pt"
    checkpoint.save_atomic(state, old)
    parser = Parser.load(old, "cpu", precision="fp32")
    assert parser.config is not None and parser.config.data.lang == "en"  # from the treebank's name
    assert parser.config.trainer.global_scores == "raw" and parser.config.decoder.scores == "auto"
    assert release_parse(parser) == release_parse(Parser.load(DATA / "release-0.1.0.pt", "cpu", precision="fp32"))


@pytest.mark.parametrize("preset", PRESETS)
def test_every_preset_converts_and_round_trips(preset):
    config = compose_config(f"+exp={preset}")
    assert config.exp_name == preset
    assert Config.from_dict(config.to_dict()) == config
    assert upgrade_config(config.to_dict()) == config.to_dict()  # nothing to add to today's configs


@pytest.mark.parametrize(
    "change,message",
    [
        (lambda d: d["trainer"].pop("epochs"), "trainer.epochs is missing"),
        (lambda d: d["trainer"].update(epochs="30"), "trainer.epochs='30' is not a int"),
        (lambda d: d["model"].update(lstm_size=3), "model.lstm_size is not a key of model"),
        (lambda d: d["model"]["completion"].update(hidden=None), "model.completion.hidden=None is not a int"),
        (lambda d: d.update(extra={}), "unknown key extra"),
        (lambda d: d["oracle"].pop("name"), "oracle.name is not set"),
    ],
)  # fmt: skip
def test_a_bad_saved_config_is_refused_with_the_key_named(change, message):
    saved = compose_config().to_dict()
    change(saved)
    with pytest.raises(ValueError, match=message):
        Config.from_dict(saved)


def test_the_oracle_options_stay_flat_in_the_saved_config():
    config = compose_config("+exp=2planar_dynamic", "oracle.switch_regularization=false")
    assert config.oracle.options == {"switch_regularization": False}
    assert config.to_dict()["oracle"] == {
        "name": "dynamic", "explore_p": 0.9, "explore_from_epoch": 2, "switch_regularization": False,
    }  # fmt: skip
