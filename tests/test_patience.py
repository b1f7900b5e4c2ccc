"""trainer.patience, trainer.plateau and trainer.final_decay: training stops, and its rate is cut,
on dev-score rules; a resumed run keeps its count."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from nparse.config import Config
from nparse.eval.scores import Scores
from nparse.training.patience import epochs_without_gain, patience_exhausted, plateau_cuts, stop_line

from .conftest import EWT_DEV

pytestmark = pytest.mark.slow  # it trains or runs a command (pytest -m 'not slow' leaves it out)


def history(scores: list[float]) -> list[dict]:
    return [{"epoch": i, "dev_las": s} for i, s in enumerate(scores, 1)]


def first_stop(scores: list[float], patience: int) -> int | None:
    """The epoch after which the rule stops training, or None."""
    return next((n for n in range(1, len(scores) + 1) if patience_exhausted(history(scores[:n]), patience)), None)


def test_patience_stops_at_the_right_epoch_on_scripted_dev_scores():
    dev = [50.0, 60.0, 59.0, 60.0, 58.0, 61.0, 55.0]  # a tie (epoch 4) is no gain
    assert first_stop(dev, 2) == 4
    assert first_stop(dev, 3) == 5
    assert first_stop(dev, 4) is None and first_stop(dev, 0) is None  # 0: always trainer.epochs
    assert epochs_without_gain(history(dev)) == 1
    line = stop_line(history(dev[:4]), 2, 30)
    assert "stopped after epoch 4: no dev LAS gain for 2 epochs" in line and "best dev LAS 60.00 at epoch 2" in line
    assert stop_line(history(dev), 0, 7).startswith("trained trainer.epochs=7 epochs")
    # Resumed with settings below what the run had done: the line says what happened.
    assert stop_line(history(dev[:5]), 2, 30).startswith("stopped after epoch 5: no dev LAS gain for 3 epochs")
    assert stop_line(history(dev), 0, 5).startswith("trained 7 epochs (trainer.epochs=5)")
    assert not patience_exhausted([{"epoch": 1}, {"epoch": 2}, {"epoch": 3}], 1)  # no dev set: never


def test_plateau_cuts_count_epochs_without_gain_since_the_best_or_the_last_cut():
    dev = [10.0, 20.0, 15.0, 14.0, 13.0, 12.0, 30.0, 30.0]  # a tie (epoch 8) is no gain
    assert [plateau_cuts(history(dev[:n]), 2) for n in range(1, 9)] == [0, 0, 0, 1, 1, 2, 2, 2]
    assert [plateau_cuts(history(dev[:n]), 1) for n in range(1, 9)] == [0, 0, 1, 2, 3, 4, 4, 5]
    assert plateau_cuts(history(dev), 0) == 0  # 0: never
    assert plateau_cuts([{"epoch": 1}, {"epoch": 2}, {"epoch": 3}], 1) == 0  # no dev set: never


def test_a_resumed_run_keeps_its_patience(tmp_path, monkeypatch, caplog):
    """A trainer with scripted dev scores stops where the rule says, also when the run is cut
    and resumed in between, and a finished run resumed does not train again."""
    from hydra import compose, initialize_config_dir

    from nparse import config_schema  # noqa: F401  (registers the config schemas)
    from nparse.paths import CONF_DIR
    from nparse.training.trainer import Trainer

    script = iter([10.0, 20.0, 15.0, 14.0, 30.0, 40.0, 50.0, 60.0])

    def scripted(self, sents, out_path, calibrate=False):
        las = next(script) if out_path is not None and Path(out_path).name == "dev.pred.conllu" else 0.0
        return Scores(las, las, las, las, 1, 1)

    monkeypatch.setattr(Trainer, "evaluate", scripted)
    dev = tmp_path / "dev.conllu"
    dev.write_text("\n\n".join(EWT_DEV.read_text(encoding="utf-8").split("\n\n")[:20]) + "\n\n", encoding="utf-8")

    def config(epochs: int):
        overrides = ["+exp=archybrid_dynamic", "data.max_train_sentences=30", f"data.dev={dev}", "data.test=null",
                     f"trainer.epochs={epochs}", "trainer.patience=2", "trainer.batch_size=8", "trainer.threads=1",
                     "trainer.resume=auto", "trainer.plateau=1", "trainer.plateau_factor=0.5"]  # fmt: skip
        with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
            return Config.composed(compose(config_name="config", overrides=overrides))

    threads = torch.get_num_threads()
    caplog.set_level("INFO", logger="nparse")
    try:
        run = tmp_path / "run"
        first = Trainer(config(3), run).run()  # cut after epoch 3: dev 10, 20, 15
        assert [e["dev_las"] for e in first["epochs"]] == [10.0, 20.0, 15.0]
        resumed = Trainer(config(8), run).run()  # epoch 4 (14) is the second without a gain
        assert [e["dev_las"] for e in resumed["epochs"]] == [10.0, 20.0, 15.0, 14.0]
        # trainer.plateau=1: the rate is halved after epoch 3 (no gain), also across the resume
        assert [e["lr"] for e in resumed["epochs"]] == [1e-3, 1e-3, 1e-3, 5e-4]
        assert resumed["stopped"].startswith("stopped after epoch 4: no dev LAS gain for 2 epochs")
        again = Trainer(config(8), run).run()  # already stopped: no epoch more
        assert len(again["epochs"]) == 4
    finally:
        torch.set_num_threads(threads)
    assert json.loads((run / "metrics.json").read_text())["stopped"] == again["stopped"]
    assert "stopped after epoch 4: no dev LAS gain for 2 epochs" in caplog.text
    assert "epoch 3: " in caplog.text and "dev UAS 15.00 LAS 15.00, 1/2 epochs without a gain" in caplog.text


@pytest.mark.parametrize(
    "overrides, message",
    [
        (["trainer.patience=-1"], "trainer.patience=-1: must be at least 0"),
        (["trainer.plateau=-2"], "trainer.plateau=-2: must be at least 0"),
        (["trainer.plateau=3", "trainer.plateau_factor=1.5"], "trainer.plateau_factor=1.5: must be between 0 and 1"),
        (["trainer.final_decay=-1"], "trainer.final_decay=-1: must be at least 0"),
        (
            ["trainer.final_decay=8", "trainer.final_decay_lr=0"],
            "trainer.final_decay_lr=0.0: expected a positive number",
        ),
    ],
)
def test_bad_patience_settings_are_refused_at_start(overrides, message):
    from hydra import compose, initialize_config_dir

    from nparse import config_schema  # noqa: F401  (registers the config schemas)
    from nparse.config import Config
    from nparse.paths import CONF_DIR
    from nparse.training.settings import check_settings

    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose(config_name="config", overrides=["+exp=archybrid_dynamic", *overrides])
    with pytest.raises(ValueError, match=message):
        check_settings(Config.composed(cfg))


def test_final_decay_goes_on_from_the_best_epoch_at_a_decaying_rate(tmp_path, monkeypatch):
    """trainer.final_decay=3 after a patience stop: the phase starts from the best epoch's
    weights (not the last), with a fresh optimizer whose rate falls from half of trainer.lr
    towards 0, its epochs are marked in metrics.json, best.pt is the best epoch of all, and a run
    cut within the phase and resumed goes on at the same rates."""
    from hydra import compose, initialize_config_dir

    from nparse import config_schema  # noqa: F401  (registers the config schemas)
    from nparse.paths import CONF_DIR
    from nparse.training import trainer as trainer_module
    from nparse.training.trainer import Trainer

    dev_las = [10.0, 20.0, 15.0, 14.0, 18.0, 25.0, 22.0]  # patience 2 stops after epoch 4 (best 2)
    seen: dict[int, float] = {}  # epoch -> a fingerprint of the weights it was scored with
    cut_at: list[int] = [6]

    def fingerprint(model) -> float:
        return float(sum(p.detach().double().sum() for p in model.parameters()))

    def scripted(self, sents, out_path, calibrate=False):
        epoch = self.progress.epoch + 1  # scored before progress.epoch moves on
        if out_path is None or Path(out_path).name != "dev.pred.conllu":
            return Scores(0.0, 0.0, 0.0, 0.0, 1, 1)
        if cut_at and epoch == cut_at[0]:
            cut_at.clear()
            raise KeyboardInterrupt  # the run dies in epoch 6's evaluation: last.pt holds epoch 5
        seen[epoch] = fingerprint(self.model)
        las = dev_las[epoch - 1]
        return Scores(las, las, las, las, 1, 1)

    starts: list[float] = []
    updates = trainer_module.Updates

    def recording(model, *args, **kwargs):
        starts.append(fingerprint(model))
        return updates(model, *args, **kwargs)

    monkeypatch.setattr(Trainer, "evaluate", scripted)
    monkeypatch.setattr(trainer_module, "Updates", recording)
    dev = tmp_path / "dev.conllu"
    dev.write_text("\n\n".join(EWT_DEV.read_text(encoding="utf-8").split("\n\n")[:20]) + "\n\n", encoding="utf-8")
    overrides = ["+exp=archybrid_dynamic", "data.max_train_sentences=30", f"data.dev={dev}", "data.test=null",
                 "trainer.epochs=10", "trainer.patience=2", "trainer.batch_size=8", "trainer.threads=1",
                 "trainer.resume=auto", "trainer.final_decay=3", "trainer.lr=0.002"]  # fmt: skip
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = Config.composed(compose(config_name="config", overrides=overrides))
    threads = torch.get_num_threads()
    run = tmp_path / "run"
    try:
        with pytest.raises(KeyboardInterrupt):
            Trainer(cfg, run).run()
        assert starts[1] == pytest.approx(seen[2], rel=1e-6)  # the phase began from epoch 2's weights
        assert starts[1] != pytest.approx(seen[4], rel=1e-6)  # not from the last epoch's
        metrics = Trainer(cfg, run).run()  # resumed after epoch 5, within the phase
    finally:
        torch.set_num_threads(threads)
    epochs = metrics["epochs"]
    assert [e["dev_las"] for e in epochs] == dev_las
    assert [e.get("final_decay", False) for e in epochs] == [False] * 4 + [True] * 3
    assert [e.get("lr") for e in epochs[4:]] == pytest.approx([1e-3, 1e-3 * 2 / 3, 1e-3 / 3])
    assert metrics["best"]["epoch"] == 6 and torch.load(run / "best.pt", weights_only=False)["epoch"] == 6
    assert metrics["stopped"].startswith("stopped after epoch 4: no dev LAS gain for 2 epochs")
    assert "then trainer.final_decay=3 epochs at a decaying rate; best dev LAS 25.00 at epoch 6" in metrics["stopped"]
