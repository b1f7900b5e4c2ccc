"""A transition system added by its declaration alone (``nparse/systems/declare.py``): a toy
two-move system, its oracle and their kernels live in this module, and nothing in nparse's
dispatchers or registries is edited. Greedy training and decoding run on the compiled rows."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import types
from pathlib import Path
from typing import Hashable

import pytest
from numba import njit

from nparse.paths import PROJECT_ROOT
from nparse.systems import SYSTEMS, Config, Gold, StaticOracle, TransitionSystem
from nparse.systems.declare import OracleDeclaration, SystemDeclaration, declare
from nparse.systems.kernels.gold import G_HEAD
from nparse.systems.kernels.rows import L_BUF, L_HEADS, L_NB, NONE, initial_single

from .conftest import EWT_DEV, compose_config

pytestmark = pytest.mark.slow  # it trains (and compiles the drivers again for the toy system)

CODE = 99
ACTIONS = ("LINK", "ROOT")  # b0 gets the previous word (word 1: the root), or the root, and leaves
LINK, ROOT = 0, 1


@njit(cache=True)
def initial(row, off, root_end, n):
    initial_single(row, off, root_end, n)


@njit(cache=True)
def terminal(row, off, root_end):
    return row[off[L_NB]] == 0


@njit(cache=True)
def legal(row, off, root_end, out):
    out[LINK] = out[ROOT] = row[off[L_NB]] > 0


@njit(cache=True)
def b0(row, off):
    nb = row[off[L_NB]]
    return row[off[L_BUF] + nb - 1] if nb > 0 else NONE


@njit(cache=True)
def positions(row, off, out):
    w = b0(row, off)
    out[0] = w
    out[1] = w - 1 if w > 0 else NONE


@njit(cache=True)
def apply(row, off, a):
    w = b0(row, off)
    row[off[L_HEADS] + w] = w - 1 if a == LINK else 0
    row[off[L_NB]] -= 1


@njit(cache=True)
def chain_oracle(row, off, root_end, opt, gold, seq, legal, cost, out):
    w = b0(row, off)
    if w > 0:
        out[LINK if gold[G_HEAD, w] == w - 1 else ROOT] = True


class Toy(TransitionSystem):
    """The reference on Python configurations: the words leave the buffer in order."""

    name = "toy"
    code = CODE
    actions = ACTIONS
    base_slots = ("b0", "b0-1")
    roots = ("start",)

    def initial(self, n: int) -> Config:
        return Config([0], list(range(n, 0, -1)), n)

    def terminal(self, c: Config) -> bool:
        return not c.buffer

    def legal(self, c: Config) -> list[bool]:
        return self.flags(LINK=bool(c.buffer), ROOT=bool(c.buffer))

    def _apply(self, c: Config, a: int) -> None:
        w = c.buffer.pop()
        c.attach(w - 1 if a == LINK else 0, w)

    def positions(self, c: Config) -> list[int]:
        w = c.buffer[-1] if c.buffer else NONE
        return [w, w - 1 if w > 0 else NONE]

    def state_key(self, c: Config) -> Hashable:
        return len(c.buffer)


class Chain(StaticOracle[Toy, Gold]):
    name = "chain"

    def next(self, c: Config, gold: Gold) -> int:
        w = c.buffer[-1]
        return LINK if gold.heads[w] == w - 1 else ROOT


def kernel(without: str | None = None) -> types.ModuleType:
    module = types.ModuleType("toy_kernel")
    for attr in ("CODE", "ACTIONS", "initial", "terminal", "legal", "positions", "apply"):
        if attr != without:
            setattr(module, attr, globals()[attr])
    return module


def chain_file(tmp_path: Path, count: int = 60) -> Path:
    """EWT dev sentences whose trees are made chains (every word headed by the one before)."""
    out = []
    for block in EWT_DEV.read_text(encoding="utf-8").split("\n\n")[:count]:
        lines = []
        for line in block.splitlines():
            cols = line.split("\t")
            if len(cols) == 10 and cols[0].isdigit():
                cols[6] = str(int(cols[0]) - 1)
                cols[7] = "root" if cols[0] == "1" else "dep"
                cols[8] = "_"
            lines.append("\t".join(cols))
        out.append("\n".join(lines))
    path = tmp_path / "chains.conllu"
    path.write_text("\n\n".join(out) + "\n\n", encoding="utf-8")
    return path


def train_and_parse(folder: Path) -> None:
    """Declare the toy system (a declaration lacking a kernel function first: refused, naming
    it), train it greedily on chain trees and parse them back; asserts what must hold."""
    from nparse.api import Parser
    from nparse.io.conllu import read_conllu
    from nparse.training.trainer import Trainer

    with pytest.raises(TypeError, match="system 'toy': its kernel module toy_kernel has no 'legal'"):
        declare(
            SystemDeclaration("toy", Toy, kernel(without="legal"), (OracleDeclaration("chain", Chain, chain_oracle),))
        )
    assert "toy" not in SYSTEMS
    declare(SystemDeclaration("toy", Toy, kernel(), (OracleDeclaration("chain", Chain, chain_oracle),)))

    data = chain_file(folder)
    base = compose_config(
        "+exp=archybrid_static", f"data.train={data}", f"data.dev={data}", "data.test=null", "trainer.epochs=3",
        "trainer.threads=1", "trainer.batch_size=8", "model.lstm_dim=32", "model.word_dim=32", "model.upos_dim=8",
        "model.char_dim=0", "model.hidden=32", "model.label_hidden=32",
    )  # fmt: skip
    cfg = dataclasses.replace(
        base,
        system=dataclasses.replace(base.system, name="toy", root="start"),
        oracle=dataclasses.replace(base.oracle, name="chain", options={}),
    )
    metrics = Trainer(cfg, folder / "run").run()
    assert metrics["best"]["dev_uas"] > 99.0, metrics["best"]  # the chain, learned
    parsed = Parser.load(folder / "run" / "best.pt", device="cpu").parse(read_conllu(data))
    for sent in parsed:  # decoded on the rows: every word headed by the one before
        assert list(sent.heads[1:]) == list(range(len(sent.heads) - 1)), sent.heads


def test_a_system_declared_in_a_test_trains_and_parses_on_the_rows(tmp_path):
    """In a process of its own: declaring compiles nparse's drivers again there (uncached), which
    the suite's other tests in this worker need not pay for."""
    code = f"from tests.test_declare import train_and_parse; from pathlib import Path; train_and_parse(Path({str(tmp_path)!r}))"
    proc = subprocess.run([sys.executable, "-c", code], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
