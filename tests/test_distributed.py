"""Data-parallel training on CPU with the gloo backend: the gradient of a 2-process update equals
one process's on the union of the shards, and torchrun writes one run directory."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
import torch
import torch.multiprocessing as mp

from nparse.config import Config
from nparse.paths import PROJECT_ROOT

pytestmark = pytest.mark.slow  # it trains or runs a command (pytest -m 'not slow' leaves it out)

OVERRIDES = [
    "+exp=archybrid_dynamic", "model=kg", "model.word_dropout=0", "data.max_train_sentences=16",
    "data.dev=null", "data.test=null", "trainer.threads=1", "trainer.clip=0",
    "trainer.precision=fp32",  # bf16 rounds differently for batches of 8 and of 16; the sum is what is tested
]  # fmt: skip


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_trainer(run_dir: Path, batch_size: int, rank: int = 0, world: int = 1):
    """A Trainer of OVERRIDES on ``world`` gloo ranks (this process is ``rank``)."""
    from hydra import compose, initialize_config_dir

    from nparse import config_schema  # noqa: F401  (registers the config schemas)
    from nparse.paths import CONF_DIR
    from nparse.training.distributed import Ranks, setup
    from nparse.training.trainer import Trainer

    ranks = Ranks(rank, world, 0)
    setup(ranks, cuda=False)
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = Config.composed(compose(config_name="config", overrides=[*OVERRIDES, f"trainer.batch_size={batch_size}"]))
    return Trainer(cfg, run_dir, ranks)


def epoch_gradients(run_dir: Path, batch_size: int, rank: int = 0, world: int = 1) -> dict[str, torch.Tensor]:
    """Gradients of the last update of one training epoch (dropout and exploration off)."""
    trainer = make_trainer(run_dir, batch_size, rank, world)
    trainer.train_epoch(1)
    trainer.writer.close()
    return {name: p.grad.clone() for name, p in trainer.model.named_parameters() if p.grad is not None}


def _rank(rank: int, world: int, port: int, run_dir: str, out: str) -> None:
    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(port)
    grads = epoch_gradients(Path(run_dir), 8, rank, world)
    torch.save(grads, f"{out}.{rank}")
    torch.distributed.destroy_process_group()


def test_two_gloo_ranks_give_the_gradient_of_one_process_on_the_union(tmp_path):
    """16 sentences: 2 ranks with batches of 8 make one update from both halves; one process with
    batches of 16 makes one update from all of them: the gradients agree to 1e-5."""
    out = str(tmp_path / "grads")
    mp.spawn(_rank, args=(2, free_port(), str(tmp_path / "ddp"), out), nprocs=2, join=True)
    ranks = [torch.load(f"{out}.{r}") for r in range(2)]
    threads = torch.get_num_threads()
    try:
        single = epoch_gradients(tmp_path / "single", 16)
    finally:
        torch.set_num_threads(threads)
    assert single.keys() == ranks[0].keys() == ranks[1].keys()
    for name, grad in single.items():
        assert torch.equal(ranks[0][name], ranks[1][name]), name  # the ranks hold the same sum
        assert torch.allclose(ranks[0][name], grad, atol=1e-5, rtol=1e-4), name
    assert any(float(g.abs().sum()) > 0 for g in single.values())
    assert not (tmp_path / "ddp" / "best.pt").exists()  # train_epoch alone writes no checkpoint


def _orders(rank: int, world: int, port: int, run_dir: str, out: str) -> None:
    import random

    from nparse.io.data import bucket_batches

    os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(port)
    trainer = make_trainer(Path(run_dir), 4, rank, world)
    for _ in range(3 + 5 * rank):  # exploration draws: as many as the rank's wrong predictions
        trainer.rng.random()
    own = random.Random()
    own.setstate(trainer.rng.getstate())
    index = {id(e): i for i, e in enumerate(trainer.train_examples)}
    own_order = [
        [index[id(e)] for e in b]
        for b in bucket_batches(trainer.train_examples, 4, own, trainer.cfg.trainer.batch_tokens)
    ]
    torch.save({"shared": trainer.epoch_order(), "own": own_order}, f"{out}.{rank}")
    trainer.writer.close()
    torch.distributed.destroy_process_group()


def test_ranks_train_one_batch_order_whatever_their_exploration_drew(tmp_path):
    """Exploration draws from the trainer's generator on wrong predictions only, so after an epoch
    the ranks' generators differ; the epoch's order still comes from rank 0, the same on every
    rank (shuffled on each rank, it would differ: some sentences twice in an epoch, others never)."""
    out = str(tmp_path / "orders")
    mp.spawn(_orders, args=(2, free_port(), str(tmp_path / "ddp"), out), nprocs=2, join=True)
    orders = [torch.load(f"{out}.{r}") for r in range(2)]
    assert orders[0]["own"] != orders[1]["own"]  # what each rank alone would have drawn
    assert orders[0]["shared"] == orders[1]["shared"] == orders[0]["own"]
    assert sorted(i for batch in orders[0]["shared"] for i in batch) == list(range(16))


def test_torchrun_writes_one_run_directory(tmp_path):
    """torchrun --nproc_per_node=2 -m nparse.train on CPU: one timestamped run directory (rank 0's)
    with one set of checkpoints, logs and metrics; dev scores from rank 0."""
    exp = f"test_ddp_{uuid.uuid4().hex[:8]}"
    runs = PROJECT_ROOT / "runs" / exp
    dev = tmp_path / "dev.conllu"
    lines = (PROJECT_ROOT / "data" / "ud" / "en_ewt" / "en_ewt-ud-dev.conllu").read_text(encoding="utf-8")
    dev.write_text("\n\n".join(lines.split("\n\n")[:40]) + "\n\n", encoding="utf-8")
    cmd = [sys.executable, "-m", "torch.distributed.run", "--nproc_per_node=2", f"--master_port={free_port()}",
           "-m", "nparse.train", "+exp=archybrid_dynamic", f"exp_name={exp}", "data.max_train_sentences=48",
           f"data.dev={dev}", "data.test=null", "trainer.epochs=2", "trainer.threads=1"]  # fmt: skip
    env = {**os.environ, "PYTHONFAULTHANDLER": "1"}  # an abort prints each rank's Python stack
    try:
        proc = subprocess.run(cmd, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=300, env=env)
        assert proc.returncode == 0, (
            proc.stderr[:4000] + "\n[...]\n" + proc.stderr[-3000:]
        )  # the ranks' own lines first
        made = list(runs.iterdir())
        assert len(made) == 1, made
        files = {p.name for p in made[0].iterdir()}
        assert {"best.pt", "last.pt", "metrics.json", "train.log", "config.yaml"} <= files
        assert len([f for f in files if f.startswith("events.out.tfevents")]) == 1
        log = (made[0] / "train.log").read_text()
        assert "rank 0 of 2" in log and "rank 1 of 2" not in log
        assert log.count("epoch 2:") == 1
        # Resumed for a third epoch: the run's train.log still gets rank 0's lines only.
        proc = subprocess.run([*cmd[:-2], "trainer.epochs=3", "trainer.threads=1", "trainer.resume=auto", f"hydra.run.dir={made[0]}"],
                              cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=300, env=env)  # fmt: skip
        assert proc.returncode == 0, proc.stderr[:4000] + "\n[...]\n" + proc.stderr[-3000:]
        log = (made[0] / "train.log").read_text()
        assert log.count("epoch 3:") == 1 and "rank 1 of 2" not in log, log
    finally:
        shutil.rmtree(runs, ignore_errors=True)
