"""The docs cannot drift from the code: every configuration key is on the configuration page and
the page names no key that does not exist; the worked sequences are what the code does; the
README keeps its promises (short, the parse command and the API up front); nothing under
``tests/`` or ``nparse/`` imports the scripts of ``tools/`` or ``experiments/``.

``mkdocs build --strict`` (broken links, missing pages) runs in ``.ci/run``."""

from __future__ import annotations

import dataclasses
import inspect
import re
import typing

import pytest

from nparse.config import SCHEMAS, OracleConfig
from nparse.paths import PROJECT_ROOT
from nparse.systems import ORACLES
from nparse.systems.verify.walkthrough import with_walkthroughs

DOCS = PROJECT_ROOT / "docs"
GROUP_KEY = re.compile(r"^(data|model|system|oracle|trainer|decoder)\.[a-z_]+(\.[a-z_]+)?$")


def schema_keys() -> set[str]:
    """Every key of the configuration: the schema'd groups' fields (nested groups dotted), the
    oracle's own keys and every option of a registered oracle's constructor, and exp_name."""

    def fields(kind: type, prefix: str) -> set[str]:
        out = set()
        hints = typing.get_type_hints(kind)
        for f in dataclasses.fields(kind):
            if dataclasses.is_dataclass(hints[f.name]):
                out |= fields(hints[f.name], f"{prefix}{f.name}.")
            else:
                out.add(prefix + f.name)
        return out

    keys = {"exp_name"}
    for group, kind in SCHEMAS.items():
        keys |= fields(kind, f"{group}.")
    keys |= {f"oracle.{f.name}" for f in dataclasses.fields(OracleConfig) if f.name != "options"}
    for oracles in ORACLES.values():
        for cls in oracles.values():
            keys |= {f"oracle.{p}" for p in list(inspect.signature(cls.__init__).parameters)[2:]}
    return keys


def page_keys(text: str) -> tuple[set[str], set[str]]:
    """(keys in the first cell of a table row, every key named in a code span anywhere)."""
    rows = set()
    for line in text.splitlines():
        m = re.match(r"^\|\s*`([^`]+)`\s*\|", line)
        if m and (GROUP_KEY.match(m[1]) or m[1] == "exp_name"):
            rows.add(m[1])
    named = set()
    for span in re.findall(r"`([^`\n]+)`", text):
        for word in span.split():
            key = word.lstrip("+~").split("=", 1)[0]
            if GROUP_KEY.match(key):
                named.add(key)
    return rows, named


def test_the_configuration_page_has_every_key_and_no_other():
    rows, named = page_keys((DOCS / "configuration.md").read_text(encoding="utf-8"))
    keys = schema_keys()
    assert not keys - rows, f"keys missing from docs/configuration.md: {sorted(keys - rows)}"
    assert not rows - keys, f"docs/configuration.md documents keys that do not exist: {sorted(rows - keys)}"
    assert not named - keys, f"docs/configuration.md names keys that do not exist: {sorted(named - keys)}"


def test_the_key_check_catches_a_missing_and_an_invented_key():
    text = (DOCS / "configuration.md").read_text(encoding="utf-8")
    rows, _ = page_keys(text.replace("| `trainer.epochs` |", "| epochs |"))
    assert "trainer.epochs" in schema_keys() - rows
    rows, named = page_keys(text + "\n| `trainer.invented` | 5 | invented |\n")
    assert "trainer.invented" in rows - schema_keys() and "trainer.invented" in named


def test_the_worked_sequences_are_what_the_code_does():
    page = (DOCS / "worked-sequences.md").read_text(encoding="utf-8")
    assert page == with_walkthroughs(page), (
        "docs/worked-sequences.md is stale: run python tools/oracle_walkthrough.py --write docs/worked-sequences.md"
    )
    assert page.count("### ") == sum(len(oracles) for oracles in ORACLES.values())


def test_a_changed_cost_in_the_worked_sequences_is_caught():
    page = (DOCS / "worked-sequences.md").read_text(encoding="utf-8")
    stale = page.replace("| SHIFT=0 RIGHT=2 | SHIFT |", "| SHIFT=0 RIGHT=1 | SHIFT |", 1)
    assert stale != page and with_walkthroughs(stale) != stale and with_walkthroughs(stale) == page


def test_the_readme_is_the_short_first_page_of_the_manual():
    lines = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 250, len(lines)
    first = "\n".join(lines[:60])
    assert "python -m nparse.parse model=" in first and "nparse.load(" in first
    commands = [line.strip() for line in lines]
    assert "pip install -e . && python -m nparse.train +exp=2planar_dynamic" in commands
    assert 'pip install -e ".[test]" && pytest' in commands
    for link in re.findall(r"\]\((docs/[^)#]+)", "\n".join(lines)):
        assert (PROJECT_ROOT / link).is_file(), link


@pytest.mark.parametrize("folder", ["tests", "nparse"])
def test_no_code_imports_the_scripts_of_tools_or_experiments(folder):
    scripts = {p.stem for d in ("tools", "experiments") for p in (PROJECT_ROOT / d).glob("*.py")}
    for path in (PROJECT_ROOT / folder).rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"sys\.path\.(insert|append)\([^)]*(tools|experiments)", text), path
        for module in re.findall(r"^\s*(?:from|import)\s+([\w.]+)", text, flags=re.M):
            assert module.split(".")[0] not in scripts | {"tools", "experiments"}, (path, module)


def test_code_reads_typed_settings_not_defaults_of_its_own():
    """No ``.get("key") or default`` of a configuration key in the package: the typed config
    has every value (``upgrade_config`` fills what older checkpoints lack)."""
    names = {k.rsplit(".", 1)[-1] for k in schema_keys()}
    for path in (PROJECT_ROOT / "nparse").rglob("*.py"):
        if path.name == "config.py":  # the one place that fills keys of older checkpoints
            continue
        for key in re.findall(r"\.get\(\s*[\"'](\w+)[\"'][^)]*\)\s*or\b", path.read_text(encoding="utf-8")):
            assert key not in names, (path, key)
