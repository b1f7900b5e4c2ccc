"""Weight averaging and the learning-rate schedule: the weights evaluated and saved are the
average, the model is restored after evaluation, and a checkpoint holds what was evaluated."""

from __future__ import annotations

import pytest
import torch

from nparse import checkpoint
from nparse.api import Parser
from nparse.eval.scores import score
from nparse.io.conllu import read_conllu
from nparse.training.averaging import WeightAverage
from nparse.training.schedule import lr_schedule

from .conftest import compose_config, run_train
from .test_training import small_dev

pytestmark = pytest.mark.slow  # it trains or runs a command (pytest -m 'not slow' leaves it out)


def test_polyak_is_the_mean_and_ema_the_closed_form_and_applied_restores():
    model = torch.nn.Linear(3, 2)
    polyak, ema = WeightAverage(model, "polyak"), WeightAverage(model, "ema", decay=0.9)
    start = model.weight.detach().clone()
    seen = []
    for k in range(5):
        with torch.no_grad():
            model.weight.add_(float(k + 1))
        seen.append(model.weight.detach().clone())
        polyak.update()
        ema.update()
    want_ema = start.clone()
    for w in seen:
        want_ema = 0.9 * want_ema + 0.1 * w
    last = model.weight.detach().clone()
    with polyak.applied():
        assert torch.allclose(model.weight, torch.stack(seen).mean(0))
    with ema.applied():
        assert torch.allclose(model.weight, want_ema)
    assert torch.equal(model.weight, last)  # the training weights are back
    other = WeightAverage(model, "polyak")
    other.load_state_dict(polyak.state_dict())
    with other.applied():
        assert torch.allclose(model.weight, torch.stack(seen).mean(0))
    with pytest.raises(ValueError, match="trainer.average=mean"):
        WeightAverage(model, "mean")


def test_warmup_and_linear_decay():
    opt = torch.optim.Adam(torch.nn.Linear(2, 2).parameters(), lr=1.0)
    sched = lr_schedule(opt, "linear", warmup=4, total=10)
    rates = []
    for _ in range(10):
        rates.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    assert rates[:4] == pytest.approx([0.25, 0.5 * 0.9, 0.75 * 0.8, 1.0 * 0.7])
    assert rates[-1] == pytest.approx(0.1) and rates == sorted(rates[:4]) + rates[4:]


def test_a_linear_schedule_ends_at_zero_on_the_last_update_also_with_batch_tokens(tmp_path):
    """The schedule counts the epoch's real updates: trainer.batch_tokens closes batches before
    trainer.batch_size (60 sentences in far more than 8 batches of 8), and an estimate from
    batch_size alone reached rate 0 halfway through and trained the rest at rate 0."""
    from nparse.training.trainer import Trainer

    cfg = compose_config(
        "+exp=archybrid_dynamic", "data.max_train_sentences=60", "data.dev=null", "data.test=null",
        "trainer.epochs=2", "trainer.batch_size=8", "trainer.batch_tokens=120", "trainer.lr_schedule=linear",
        "trainer.threads=1",
    )  # fmt: skip
    trainer = Trainer(cfg, tmp_path)
    trainer.run()
    updates, factor = trainer.updates.scheduler.last_epoch, trainer.updates.scheduler.lr_lambdas[0]
    assert updates > 2 * 8
    assert factor(updates - 1) > 0 and factor(updates) == 0


def test_best_checkpoint_holds_the_averaged_weights_it_was_evaluated_with(tmp_path):
    dev = small_dev(tmp_path)
    run = tmp_path / "run"
    metrics = run_train(
        run, "+exp=archybrid_dynamic", "data.max_train_sentences=150", "trainer.epochs=2", "data.test=null",
        f"data.dev={dev}", "trainer.average=ema", "trainer.average_decay=0.9", "trainer.lr_schedule=linear",
        "trainer.warmup=2", "trainer.precision=fp32",  # parsed again below in fp32, as the trainer evaluated
    )  # fmt: skip
    last = checkpoint.load(run / "last.pt", torch.device("cpu"))
    best = checkpoint.load(run / "best.pt", torch.device("cpu"))
    assert last["average"]["kind"] == "ema" and last["average"]["updates"] > 0 and "scheduler" in last
    if best["epoch"] == last["epoch"]:  # the same moment: best.pt is the average, last.pt the raw weights
        for name, avg in last["average"]["average"].items():
            assert torch.allclose(best["model"][name].float(), avg)
        assert any(not torch.equal(best["model"][k], last["model"][k]) for k in last["average"]["average"])
    # Parsing dev with best.pt gives the dev LAS the run recorded for it.
    sents = read_conllu(dev)
    parsed = [
        p[0] for p in Parser.load(run / "best.pt", "cpu", precision="fp32").parse_nbest(sents)
    ]  # as the trainer evaluated
    las = score(sents, [p.heads for p in parsed], [p.labels for p in parsed]).las
    assert las == pytest.approx(metrics["best"]["dev_las"], abs=1e-9)
