"""UD treebanks by name (``data=ud data.treebank=CODE data.ud_root=PATH``, nparse/io/treebanks.py):
found in a UD release's layout, in a folder named for the code and flat; refused with the root
and the places searched named; and no preset reads a folder outside the repository."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from omegaconf import OmegaConf

from nparse.io.treebanks import find_treebank
from nparse.paths import CONF_DIR

from .conftest import EWT_DEV, compose_config


def fake_release(root: Path, layout: str, code: str = "el_gdt", splits=("train", "dev", "test")) -> Path:
    """A UD root holding ``code``'s files (copies of EWT dev) laid out as ``layout`` says."""
    folder = {"release": root / "UD_Greek-GDT", "folder": root / code, "flat": root}[layout]
    folder.mkdir(parents=True, exist_ok=True)
    for split in splits:
        shutil.copy(EWT_DEV, folder / f"{code}-ud-{split}.conllu")
    return folder


@pytest.mark.parametrize("layout", ["release", "folder", "flat"])
def test_a_treebank_is_found_by_its_code_in_every_layout(tmp_path, layout):
    folder = fake_release(tmp_path, layout)
    config = compose_config("data=ud", "data.treebank=el_gdt", f"data.ud_root={tmp_path}")
    assert config.data.train == str(folder / "el_gdt-ud-train.conllu")
    assert config.data.test == str(folder / "el_gdt-ud-test.conllu")
    assert (config.data.name, config.data.lang, config.data.ud_root) == ("el_gdt", "el", str(tmp_path))


def test_the_greek_preset_reads_ud_root_from_the_environment_and_a_missing_split_is_null(tmp_path, monkeypatch):
    fake_release(tmp_path, "release", splits=("train", "test"))
    monkeypatch.setenv("UD_ROOT", str(tmp_path))
    config = compose_config("data=el_gdt")
    assert config.data.train.endswith("UD_Greek-GDT/el_gdt-ud-train.conllu") and config.data.dev is None
    assert compose_config("data=el_gdt", "data.dev=null", "data.test=null").data.test is None  # overrides win


def test_a_missing_treebank_names_the_root_and_what_was_searched(tmp_path, monkeypatch):
    monkeypatch.delenv("UD_ROOT", raising=False)
    with pytest.raises(Exception, match=r"no UD root folder: set data.ud_root=PATH or the UD_ROOT"):
        compose_config("data=hu_szeged")
    with pytest.raises(FileNotFoundError) as err:
        find_treebank(tmp_path, "hu_szeged")
    text = str(err.value)
    assert f"data.ud_root={tmp_path}" in text
    for place in ("UD_*/hu_szeged-ud-train.conllu", "hu_szeged/hu_szeged-ud-train.conllu"):
        assert str(tmp_path / place) in text
    fake_release(tmp_path, "release")
    fake_release(tmp_path, "folder")  # a second copy, in a layout searched later
    assert find_treebank(tmp_path, "el_gdt")["dev"] == tmp_path / "UD_Greek-GDT" / "el_gdt-ud-dev.conllu"


def test_no_data_preset_reads_a_folder_outside_the_repository():
    for preset in (CONF_DIR / "data").glob("*.yaml"):
        values = OmegaConf.to_container(OmegaConf.load(preset))
        for key, value in values.items():
            assert not (isinstance(value, str) and (".." in value or value.startswith("/"))), (preset.name, key)
