"""The compiled greedy walk on rows trains exactly as the Python walk it replaced
(tests/reference_local.py): for every greedy preset, three batches of EWT train with exploration
on give the same recorded steps (feature rows, legal and correct transitions), the same
transitions taken and explored, the same losses and weights (to 1e-5), and leave the random
generator in the same state."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
import torch

from nparse.io.conllu import read_conllu, write_conllu
from nparse.paths import CONF_DIR
from nparse.training import objectives
from nparse.training.local import Steps
from nparse.training.trainer import Trainer

from . import reference_local
from .conftest import BUNDLED, compose_config

pytestmark = pytest.mark.slow  # it trains or runs a command (pytest -m 'not slow' leaves it out)

GREEDY = sorted(
    p.stem for p in (CONF_DIR / "exp").glob("*.yaml")
    if "/trainer: global" not in p.read_text()
)  # fmt: skip


def reference_walk(layout, oracle, scorer, table, golds, lengths, explore_p, rng):
    """The Python walk, called as the compiled one is."""
    system = layout.system
    configs = [system.initial(n) for n in lengths]
    offsets = [b * layout.width for b in range(len(lengths))]
    old = reference_local.train_loop(system, oracle, scorer, table, configs, golds, offsets, explore_p, rng)
    return Steps(
        np.array(old.rows, dtype=np.int64).reshape(-1, layout.n_base + len(layout.mod_src)),
        np.array(old.legal, dtype=bool).reshape(-1, layout.n_actions),
        np.array(old.correct, dtype=bool).reshape(-1, layout.n_actions),
        old.explored,
        old.errors,
        old.actions,
        old.oracle_seconds,
    )


def train_three_batches(preset: str, train: Path, run_dir: Path, walk) -> tuple[list, Trainer]:
    """One epoch of 96 sentences (3 batches) with exploration from the first, recording each batch's steps."""
    cfg = compose_config(f"+exp={preset}", f"data.train={train}", "data.dev=null", "data.test=null",
                         "model=fast", "trainer.threads=1", "oracle.explore_from_epoch=1")  # fmt: skip
    recorded = []

    def recording(*args):
        steps = walk(*args)
        recorded.append(steps)
        return steps

    original = objectives.train_loop
    objectives.train_loop = recording
    try:
        trainer = Trainer(cfg, run_dir)
        trainer.train_epoch(1)
    finally:
        objectives.train_loop = original
    return recorded, trainer


@pytest.fixture(scope="module")
def train_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("walk") / "train.conllu"
    write_conllu(read_conllu(BUNDLED / "en_ewt-ud-train.conllu")[:96], path)
    return path


@pytest.mark.parametrize("preset", GREEDY)
def test_the_compiled_walk_trains_as_the_python_walk(preset, train_file, tmp_path):
    new, a = train_three_batches(preset, train_file, tmp_path / "new", objectives.train_loop)
    old, b = train_three_batches(preset, train_file, tmp_path / "old", reference_walk)
    assert len(new) == len(old) == 3
    for x, y in zip(new, old):
        assert np.array_equal(x.rows, y.rows) and np.array_equal(x.legal, y.legal)
        assert np.array_equal(x.correct, y.correct)
        assert (x.actions, x.errors, x.explored) == (y.actions, y.errors, y.explored)
    if a.oracle.complete:
        assert sum(s.explored for s in new) > 0  # exploration was on and followed
    assert a.rng.getstate() == b.rng.getstate()
    for p, q in zip(a.model.parameters(), b.model.parameters()):
        assert torch.allclose(p, q, atol=1e-5, rtol=1e-5)


def test_compiled_draws_are_the_generators_own():
    """``mersenne.draw`` continues a ``random.Random`` exactly (across regenerations of its state),
    and ``restore`` leaves the generator where the draws stopped."""
    from nparse.training import mersenne

    rng = random.Random(11)
    rng.random()
    twin = random.Random()
    twin.setstate(rng.getstate())
    state = mersenne.state_of(rng)
    assert [mersenne.draw(state) for _ in range(2000)] == [twin.random() for _ in range(2000)]
    mersenne.restore(rng, state)
    assert rng.random() == twin.random()


def test_evaluation_after_training_steps_reads_the_new_weights(train_file, tmp_path):
    """After optimizer steps, encoding without gradients (dev evaluation: bf16 LSTM copies and the
    character cache, kept while the weights' version counters stay) gives what a fresh copy of
    the model gives: a fused Adam that left the counters unchanged froze dev LAS at epoch 1."""
    import copy

    from nparse.io.data import collate

    cfg = compose_config("+exp=archybrid_dynamic", f"data.train={train_file}", "data.dev=null", "data.test=null",
                         "trainer.threads=1", "trainer.precision=bf16")  # fmt: skip
    trainer = Trainer(cfg, tmp_path)
    batch = collate(trainer.train_examples[:8])
    model = trainer.model
    model.eval()
    with torch.no_grad():
        model.encode(batch)  # fills the caches
    model.train()
    trainer.train_epoch(1)
    model.eval()
    with torch.no_grad():
        kept = model.encode(batch)[0]
        fresh = copy.deepcopy(model).encode(batch)[0]
    assert torch.equal(kept, fresh)
