"""End-to-end training: learning, run folder layout, resume, checkpoints, multirun."""

from __future__ import annotations

import json
import os
import signal
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from nparse.config import Config
from nparse import checkpoint
from nparse.io.conllu import read_conllu, tree_problem
from nparse.eval.scores import score
from nparse.paths import PROJECT_ROOT
from nparse.trees import previous_word_baseline

from .conftest import EWT_DEV, compose_config, run_train

pytestmark = pytest.mark.slow  # it trains or runs a command (pytest -m 'not slow' leaves it out)

udeval = pytest.importorskip("udtools.udeval")


def small_dev(tmp_path: Path, n: int = 150) -> Path:
    """The first n sentences of EWT dev, as a file."""
    text = EWT_DEV.read_text(encoding="utf-8")
    path = tmp_path / "dev.conllu"
    path.write_text("\n\n".join(text.split("\n\n")[:n]) + "\n\n", encoding="utf-8")
    return path


def test_two_epochs_on_200_sentences_beat_previous_word_baseline(tiny_run):
    metrics = json.loads((tiny_run / "metrics.json").read_text())
    gold = read_conllu(EWT_DEV)
    baseline = score(gold, [previous_word_baseline(len(s)) for s in gold], [s.deprels for s in gold])
    assert len(metrics["epochs"]) == 2
    assert metrics["best"]["dev_uas"] > baseline.uas + 10, (metrics["best"]["dev_uas"], baseline.uas)


def test_run_folder_holds_everything(tiny_run):
    for name in ("config.yaml", "last.pt", "best.pt", "dev.pred.conllu", "metrics.json", "skipped.tsv", "train.log"):
        assert (tiny_run / name).is_file(), name
    assert (tiny_run / ".hydra" / "config.yaml").is_file()
    assert list(tiny_run.glob("events.out.tfevents.*"))
    from nparse import checkpoint

    calibration = checkpoint.load(tiny_run / "best.pt", torch.device("cpu"))["calibration"]  # fitted on dev
    assert 0.02 <= calibration["temperature"] <= 50 and calibration["nll"] <= calibration["nll_at_1"] + 1e-9
    epoch = json.loads((tiny_run / "metrics.json").read_text())["epochs"][-1]
    for key in (
        "loss_per_token",
        "dev_uas",
        "dev_las",
        "exploration_rate",
        "transitions_per_sentence",
        "sentences_per_s",
        "SHIFT_per_sentence",
    ):
        assert key in epoch, key
    # Every predicted sentence is a single-rooted tree the official scorer accepts.
    pred = read_conllu(tiny_run / "dev.pred.conllu")
    assert all(tree_problem(s.heads) is None for s in pred)
    official = udeval.evaluate(
        udeval.load_conllu_file(str(EWT_DEV)), udeval.load_conllu_file(str(tiny_run / "dev.pred.conllu"))
    )
    assert official["UAS"].f1 * 100 == pytest.approx(epoch["dev_uas"], abs=0.5)


def test_tensorboard_has_the_promised_curves(tiny_run):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(tiny_run))
    acc.Reload()
    tags = set(acc.Tags()["scalars"])
    for tag in (
        "train/loss_per_token",
        "dev/uas",
        "dev/las",
        "train/exploration_rate",
        "train/explore_p",
        "train/transitions_per_sentence",
        "speed/train_sentences_per_s",
        "train/lr",
    ):
        assert tag in tags, tag


def test_checkpoint_is_enough_to_parse(tiny_run):
    import nparse

    parser = nparse.load(tiny_run / "best.pt", device="cpu")
    sents = read_conllu(EWT_DEV)[:400]
    parsed = parser.parse(sents)
    assert all(tree_problem(s.heads) is None for s in parsed)
    assert all(lab != "_" for s in parsed for lab in s.deprels[1:])
    # The label respects the tree: root iff the head is the root (UD validator level 3).
    for decoder in ("greedy", "beam"):
        for s in parser.parse(sents, decoder=decoder, beam_size=None if decoder == "greedy" else 4):
            assert all((s.deprels[d] == "root") == (s.heads[d] == 0) for d in range(1, len(s) + 1))


def test_api_inputs_line_up_with_outputs_or_are_refused(tiny_run):
    import nparse

    parser = nparse.load(tiny_run / "best.pt", device="cpu")
    for bad, message in [
        ([["a", "b"], [], ["c"]], "sentence 1: empty"),
        (["The cat sleeps ."], "sentence 0: expected a list of tokens"),
        ([["New York", "is", "big"]], "sentence 0, token 0: 'New York'"),
        ([["a", ""]], "sentence 0, token 1"),
    ]:
        with pytest.raises(ValueError, match=message):
            parser.parse(bad)


@pytest.mark.parametrize("content", ["", "# sent_id = 1\n1\ta\t_\tX\t_\t_\t1\tdep\t_\t_\n\n"],
                         ids=["empty", "every-sentence-skipped"])  # fmt: skip
def test_training_on_nothing_stops_with_a_message(tmp_path, content):
    train = tmp_path / "train.conllu"
    train.write_text(content, encoding="utf-8")
    cmd = [sys.executable, "-m", "nparse.train", f"hydra.run.dir={tmp_path / 'run'}", f"data.train={train}",
           "data.dev=null", "data.test=null"]  # fmt: skip
    proc = subprocess.run(cmd, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1 and "no sentence to train on" in proc.stderr and "Traceback" not in proc.stderr
    assert not (tmp_path / "run" / "best.pt").exists()


def test_killed_run_resumes_to_the_same_metrics(tmp_path):
    dev = small_dev(tmp_path)
    common = [
        "+exp=archybrid_dynamic",
        "data.max_train_sentences=60",
        f"data.dev={dev}",
        "data.test=null",
        "trainer.epochs=3",
        "trainer.batch_size=8",
        "oracle.explore_from_epoch=1",
        "trainer.threads=1",
    ]
    full = run_train(tmp_path / "full", *common)

    killed = tmp_path / "killed"
    cmd = [sys.executable, "-m", "nparse.train", f"hydra.run.dir={killed}", *common]
    proc = subprocess.Popen(cmd, cwd=PROJECT_ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 300
    while not (killed / "last.pt").exists():
        assert proc.poll() is None, "training ended before it could be killed"
        assert time.time() < deadline
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    done = checkpoint.load(killed / "last.pt")["epoch"]
    assert done < 3
    cmd = [
        sys.executable,
        "-m",
        "nparse.train",
        f"hydra.run.dir={tmp_path / 'resume_cfg'}",
        *common,
        f"trainer.resume={killed / 'last.pt'}",
    ]
    proc = subprocess.run(cmd, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    # The resumed run carries on in the killed run's folder.
    resumed = json.loads((killed / "metrics.json").read_text())
    assert "resuming" in (killed / "train.log").read_text()

    def strip(epochs):
        timing = ("seconds", "sentences_per_s", "tokens_per_s", "oracle_seconds", "oracle_share")
        return [{k: v for k, v in e.items() if k not in timing} for e in epochs]

    assert strip(resumed["epochs"]) == strip(full["epochs"])


def test_resume_auto_in_a_new_folder_points_at_the_latest_earlier_run(tmp_path):
    """Hydra gives every run a new timestamped folder, so resume=auto without hydra.run.dir finds
    no last.pt there: the warning names the earlier run that has one."""
    from nparse.training.resume import latest_sibling_run

    new = tmp_path / "2026-11-26_10-00-00"
    new.mkdir()
    assert latest_sibling_run(new) is None
    for i, name in enumerate(["2026-11-25_09-00-00", "2026-11-25_12-00-00", "no_last"]):
        (tmp_path / name).mkdir()
        if name != "no_last":
            (tmp_path / name / "last.pt").write_bytes(b"x")
            os.utime(tmp_path / name / "last.pt", (1000 + i, 1000 + i))
    assert latest_sibling_run(new) == tmp_path / "2026-11-25_12-00-00"
    chosen = tmp_path / "en_ewt_s2"  # hydra.run.dir, as experiments/seed_runs.py sets: meant to be new
    chosen.mkdir()
    assert latest_sibling_run(chosen) is None


def test_sigterm_mid_epoch_then_resume_auto_matches_an_uninterrupted_run(tmp_path):
    """SIGTERM during a batch: the batch is finished, last.pt (with the epoch's position) written
    and Preempted raised; trainer.resume=auto in the same directory goes on from there and ends
    with the metrics of an uninterrupted run. In an empty directory resume=auto starts fresh."""
    from hydra import compose, initialize_config_dir

    from nparse import config_schema  # noqa: F401  (registers the config schemas)
    from nparse.paths import CONF_DIR
    from nparse.training.trainer import Preempted, Trainer

    dev = small_dev(tmp_path)
    common = ["+exp=archybrid_dynamic", "data.max_train_sentences=120", f"data.dev={dev}", "data.test=null",
              "trainer.epochs=3", "trainer.batch_size=8", "oracle.explore_from_epoch=1", "trainer.threads=1",
              "trainer.resume=auto", "trainer.lr_schedule=linear", "trainer.plateau=1"]  # fmt: skip
    # (a decaying rate and a plateau: metrics.json records each epoch's starting rate, "lr")
    threads = torch.get_num_threads()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = Config.composed(compose(config_name="config", overrides=common))
    try:
        full = Trainer(cfg, tmp_path / "full").run()
        run = tmp_path / "stopped"
        trainer = Trainer(cfg, run)
        original, calls = trainer.objective.batch_loss, []

        def batch_then_signal(*args, **kwargs):
            calls.append(1)
            if len(calls) == 20:  # batch 5 of epoch 2 (15 batches per epoch)
                os.kill(os.getpid(), signal.SIGTERM)
            return original(*args, **kwargs)

        trainer.objective.batch_loss = batch_then_signal  # type: ignore[method-assign]
        with pytest.raises(Preempted, match="SIGTERM: stopped after batch 5 of 15 of epoch 2"):
            trainer.run()
        state = checkpoint.load(run / "last.pt")
        assert state["epoch"] == 1 and state["partial"]["epoch"] == 2 and state["partial"]["done"] == 5
        resumed = Trainer(cfg, run).run()
        # Ctrl-C (SIGINT) takes the same path: no KeyboardInterrupt traceback, last.pt, how to resume.
        ctrl_c = Trainer(cfg, tmp_path / "ctrl_c")
        first, seen = ctrl_c.objective.batch_loss, []

        def batch_then_ctrl_c(*args, **kwargs):
            seen.append(1)
            if len(seen) == 3:
                os.kill(os.getpid(), signal.SIGINT)
            return first(*args, **kwargs)

        ctrl_c.objective.batch_loss = batch_then_ctrl_c  # type: ignore[method-assign]
        with pytest.raises(
            Preempted, match="SIGINT: stopped after batch 3 of 15 of epoch 1.*trainer.resume=auto"
        ) as stop:
            ctrl_c.run()
        assert stop.value.signum == signal.SIGINT
        assert checkpoint.load(tmp_path / "ctrl_c" / "last.pt")["partial"]["done"] == 3
    finally:
        torch.set_num_threads(threads)
    assert json.loads((run / "metrics.json").read_text())["epochs"] == resumed["epochs"]  # in the same folder

    def strip(epochs):
        timing = ("seconds", "sentences_per_s", "tokens_per_s", "oracle_seconds", "oracle_share")
        return [{k: v for k, v in e.items() if k not in timing} for e in epochs]

    assert strip(resumed["epochs"]) == strip(full["epochs"])


def test_thread_policy_honours_settings_and_never_exceeds_the_allowed_cpus(monkeypatch):
    from nparse.runtime import choose_threads, set_threads

    two = {0, 1}
    assert choose_threads(3, env={"OMP_NUM_THREADS": "1"}, cpus=two, busy=0.0)[0] == 3  # explicit first
    with pytest.raises(ValueError, match=r"^trainer.threads=-1: give a number of CPU threads above 0"):
        set_threads(-1, key="trainer.threads")  # torch's own error named no setting
    assert choose_threads(None, env={"OMP_NUM_THREADS": "1", "SLURM_CPUS_PER_TASK": "5"}, cpus=two)[0] == 5
    assert choose_threads(0, env={"OMP_NUM_THREADS": "1"}, cpus=two) == (1, "from OMP_NUM_THREADS")
    for cpus in ({0}, two, set(range(8))):
        for busy in (0.0, 0.4, 1.0, 1.6, 7.5, 40.0):
            threads, why = choose_threads(None, env={}, cpus=cpus, busy=busy)
            assert 1 <= threads <= len(cpus), (cpus, busy, threads)
    assert choose_threads(None, env={}, cpus=two, busy=0.1)[0] == 2  # a quiet machine: every CPU
    assert choose_threads(None, env={}, cpus=two, busy=1.0)[0] == 1  # one busy core left alone
    assert choose_threads(None, env={}, cpus=set(range(8)), busy=3.0)[0] == 5
    monkeypatch.delenv("SLURM_CPUS_PER_TASK", raising=False)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    threads, why = set_threads(None)  # measured on this machine
    assert 1 <= threads <= len(os.sched_getaffinity(0)) and "CPU" in why
    assert torch.get_num_threads() == threads
    torch.set_num_threads(1)


def test_bf16_training_runs_on_cpu_and_fp16_is_refused(tmp_path):
    """trainer.precision=bf16 trains on CPU (the BiLSTMs stay float32 there), and the model still
    parses; fp16 without a GPU stops at start-up with the key named."""
    from hydra import compose, initialize_config_dir

    from nparse.api import Parser
    from nparse import config_schema  # noqa: F401  (registers the config schemas)
    from nparse.paths import CONF_DIR
    from nparse.training.trainer import Trainer

    overrides = ["+exp=archybrid_dynamic", "data.max_train_sentences=40", "data.dev=null", "data.test=null",
                 "trainer.epochs=1", "trainer.precision=bf16"]  # fmt: skip
    threads = torch.get_num_threads()
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = Config.composed(compose(config_name="config", overrides=overrides))
        fp16 = Config.composed(
            compose(config_name="config", overrides=[*overrides, "trainer.precision=fp16", "trainer.device=cpu"])
        )
    try:
        trainer = Trainer(cfg, tmp_path / "bf16")
        metrics = trainer.run()
        with pytest.raises(ValueError, match="trainer.precision=fp16 needs a GPU"):
            Trainer(fp16, tmp_path / "fp16")
    finally:
        torch.set_num_threads(threads)
    assert metrics["epochs"][0]["loss_per_token"] > 0
    parsed = Parser(trainer.model).parse(read_conllu(EWT_DEV)[:20])
    assert all(tree_problem(s.heads) is None for s in parsed)


class _Planted:
    """Unpickling this creates a file: what a crafted checkpoint could do."""

    def __init__(self, target: str):
        self.target = target

    def __reduce__(self):
        return (Path.touch, (Path(self.target),))


def test_a_checkpoint_that_would_run_code_is_refused(tmp_path):
    import nparse

    target = tmp_path / "planted"
    bad = tmp_path / "bad.pt"
    torch.save({"format": checkpoint.FORMAT, "model": {}, "payload": _Planted(str(target))}, bad)
    with pytest.raises(ValueError, match="refused: it holds Python objects"):
        nparse.load(bad, device="cpu")
    proc = subprocess.run([sys.executable, "-m", "nparse.parse", f"model={bad}", f"input={EWT_DEV}"],
                          cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert proc.returncode == 1 and "refused" in proc.stderr and "Traceback" not in proc.stderr
    assert not target.exists()


def test_files_that_are_not_checkpoints_get_a_message(tmp_path, tiny_run):
    """Issue 10, case 10: a non-checkpoint pickle as model, or a damaged checkpoint."""
    import nparse

    good = torch.load(tiny_run / "best.pt", weights_only=True)
    cases = {
        "tensor": (torch.zeros(3), "holds a Tensor"),
        "dict": ({"a": 1}, "format None"),
        "missing": ({k: v for k, v in good.items() if k != "vocabs"}, "missing vocabs"),
        "shapes": (
            {**good, "model": {**good["model"], "scorer.first.weight": torch.zeros(2, 2)}},
            r"incompatible nparse checkpoint \(Error\(s\) in loading state_dict.* size mismatch for scorer\.first\.weight",
        ),
        "best_as_resume": (good, "no optimizer state"),
    }
    for name, (obj, message) in cases.items():
        path = tmp_path / f"{name}.pt"
        torch.save(obj, path)
        if name == "best_as_resume":
            with pytest.raises(ValueError, match=message):
                checkpoint.load(path, resume=True)
            continue
        with pytest.raises(ValueError, match=message) as err:
            nparse.load(path, device="cpu")
        assert str(path) in str(err.value)
    with pytest.raises(ValueError, match=r"not an nparse checkpoint \(not a file torch.save wrote\)"):
        nparse.load(EWT_DEV, device="cpu")  # the input given as the model
    (tmp_path / "run").mkdir()
    torch.save(good, tmp_path / "run" / "best.pt")
    with pytest.raises(IsADirectoryError, match=r"is a folder, not a file \(a run's folder\? give its best.pt\)"):
        nparse.load(tmp_path / "run", device="cpu")
    (tmp_path / "cut.pt").write_bytes((tmp_path / "run" / "best.pt").read_bytes()[:1000])
    with pytest.raises(ValueError, match=r"or one cut short \(an interrupted copy\?\)"):
        nparse.load(tmp_path / "cut.pt", device="cpu")
    proc = subprocess.run([sys.executable, "-m", "nparse.parse", f"model={tmp_path / 'tensor.pt'}", f"input={EWT_DEV}"],
                          cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert proc.returncode == 1 and "holds a Tensor" in proc.stderr and "Traceback" not in proc.stderr


def test_interrupted_save_keeps_the_previous_checkpoint(tmp_path, monkeypatch):
    path = tmp_path / "last.pt"
    checkpoint.save_atomic({"epoch": 1, **{k: {} for k in checkpoint.MODEL_KEYS}}, path)

    def broken_save(obj, handle):
        handle.write(b"partial")
        raise KeyboardInterrupt

    monkeypatch.setattr(torch, "save", broken_save)
    with pytest.raises(KeyboardInterrupt):
        checkpoint.save_atomic({"epoch": 2}, path)
    monkeypatch.undo()
    assert checkpoint.load(path)["epoch"] == 1
    assert [p.name for p in tmp_path.iterdir()] == ["last.pt"]


def test_multirun_sweeps_over_ud_treebanks_by_name(tmp_path):
    """``-m data=ud data.treebank=A,B data.ud_root=ROOT``: one run per treebank of a UD release
    (here two codes, each 30 EWT dev sentences, in the release layout)."""
    dev = small_dev(tmp_path, 30)
    for code, folder in (("xx_one", "UD_X-One"), ("yy_two", "UD_Y-Two")):
        (tmp_path / "ud" / folder).mkdir(parents=True)
        for split in ("train", "dev"):
            shutil.copy(dev, tmp_path / "ud" / folder / f"{code}-ud-{split}.conllu")
    cmd = [
        sys.executable,
        "-m",
        "nparse.train",
        "-m",
        "+exp=archybrid_static",
        "data=ud",
        "data.treebank=xx_one,yy_two",
        f"data.ud_root={tmp_path / 'ud'}",
        "trainer.epochs=1",
        f"hydra.sweep.dir={tmp_path / 'sweep'}",
    ]
    proc = subprocess.run(cmd, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    for job, code in (("0", "xx_one"), ("1", "yy_two")):
        assert json.loads((tmp_path / "sweep" / job / "metrics.json").read_text())["treebank"] == code
        assert (tmp_path / "sweep" / job / "best.pt").is_file()


def test_bad_data_path_names_the_key(tmp_path):
    cmd = [sys.executable, "-m", "nparse.train", f"hydra.run.dir={tmp_path}", "data.train=nope.conllu"]
    proc = subprocess.run(cmd, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0
    assert "data.train=nope.conllu: file not found" in proc.stderr


def test_init_from_starts_from_the_checkpoint_weights(tiny_run, tmp_path):
    from hydra import compose, initialize_config_dir

    from nparse import config_schema  # noqa: F401  (registers the config schemas)
    from nparse.paths import CONF_DIR
    from nparse.training.trainer import Trainer

    overrides = ["+exp=beam_archybrid_imp_maxv", f"trainer.init_from={tiny_run / 'best.pt'}",
                 "data.max_train_sentences=20", "data.dev=null", "data.test=null", "model.lstm_dim=7"]  # fmt: skip
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = Config.composed(compose(config_name="config", overrides=overrides))
    trainer = Trainer(cfg, tmp_path)
    trainer.writer.close()
    state = checkpoint.load(tiny_run / "best.pt")["model"]
    mine = trainer.model.state_dict()
    assert mine.keys() == state.keys()
    assert all(torch.equal(mine[k], state[k]) for k in state)  # model.lstm_dim=7 is ignored (logged)


def test_global_fine_tuning_with_a_completion_model_from_a_greedy_checkpoint(tiny_run, tmp_path):
    """trainer.init_from + trainer=global + completion factors: the run starts from the greedy
    model's weights (the factor scorers new), trains with beam search and logs the global
    statistics; the checkpoint parses with its beam, and with decoder=mst in the API and CLI."""
    import nparse
    from nparse.io.conllu import read_conllu, tree_problem

    dev = small_dev(tmp_path, 60)
    run = tmp_path / "global"
    metrics = run_train(
        run,
        "+exp=beam_archybrid_imp_maxv",
        "model.completion.factors=[1,2a,3c]",
        f"trainer.init_from={tiny_run / 'best.pt'}",
        "data.max_train_sentences=64",
        f"data.dev={dev}",
        "data.test=null",
        "trainer.epochs=1",
        "trainer.beam_size=4",
        "decoder.beam_size=4",
    )
    epoch = metrics["epochs"][0]
    for key in ("updates_per_sentence", "derivation_share_updated", "end_reached", "beam_size", "SHIFT_per_sentence"):
        assert key in epoch, key
    assert epoch["end_reached"] == 1.0 and epoch["beam_size"] == 4  # restart covers every sentence
    log = (run / "train.log").read_text()
    assert "initialised from" in log and "completion model" in log
    parser = nparse.load(run / "best.pt", device="cpu")
    assert parser.beam_size == 4 and parser.model.completion is not None
    greedy = checkpoint.load(tiny_run / "best.pt")["model"]
    mine = parser.model.state_dict()
    assert {k for k in mine if k not in greedy} == {k for k in mine if k.startswith("completion.")}
    sents = read_conllu(dev)
    for decoder in ("beam", "mst"):
        for parses in parser.parse_nbest(sents, decoder=decoder):
            assert tree_problem(parses[0].heads) is None, decoder
    out = tmp_path / "mst.conllu"
    proc = subprocess.run([sys.executable, "-m", "nparse.parse", f"model={run / 'best.pt'}", f"input={dev}",
                           f"output={out}", "decoder=mst"], cwd=PROJECT_ROOT, capture_output=True, text=True)  # fmt: skip
    assert proc.returncode == 0 and "mst" in proc.stderr, proc.stderr[-2000:]
    assert all(tree_problem(s.heads) is None for s in read_conllu(out))
    # A model without the first-order factor cannot decode with mst: a message, not a traceback.
    proc = subprocess.run([sys.executable, "-m", "nparse.parse", f"model={tiny_run / 'best.pt'}", f"input={dev}",
                           "decoder=mst"], cwd=PROJECT_ROOT, capture_output=True, text=True)  # fmt: skip
    assert proc.returncode == 1 and "first-order factor" in proc.stderr and "Traceback" not in proc.stderr
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(run))
    acc.Reload()
    tags = set(acc.Tags()["scalars"])
    for tag in ("train/updates_per_sentence", "train/derivation_share_updated", "train/end_reached",
                "train/beam_size", "speed/epoch_seconds"):  # fmt: skip
        assert tag in tags, tag


@pytest.mark.parametrize(
    "overrides,message",
    [
        (["+exp=beam_swapstd_ndall", "trainer.restart=true", "trainer.restart_from=negative"],
         "trainer.restart_from=negative with oracle=ndall"),
        (["+exp=beam_imp_early", "trainer.update=full"], "trainer.restart=true with trainer.update=full"),
        (["+exp=beam_early", "trainer.restart_from=negative"], "trainer.restart_from=negative needs trainer.restart=true"),
        (["+exp=beam_early", "trainer.update=late"], "trainer.update=late: choose one of"),
        (["+exp=beam_early", "trainer.beam_size=0"], "trainer.beam_size=0"),
    ],
)  # fmt: skip
def test_global_settings_that_make_no_sense_are_refused(overrides, message):
    from nparse.systems import make_oracle, make_system
    from nparse.training.settings import global_settings

    cfg = compose_config(*overrides)
    oracle = make_oracle(make_system(cfg.system.name), cfg.oracle.name)
    with pytest.raises(ValueError, match=message):
        global_settings(cfg, oracle)


@pytest.mark.parametrize(
    "overrides,message",
    [
        (["+exp=beam_early", "trainer.restart=true"], "trainer.restart=true with oracle=static"),
        (["+exp=beam_imp_early", "trainer.restart=false", "trainer.update=full", "trainer.global_loss=softmax"],
         "trainer.global_loss=softmax with trainer.update=full"),
    ],
)  # fmt: skip
def test_training_stops_at_start_up_naming_the_keys(tmp_path, overrides, message):
    cmd = [sys.executable, "-m", "nparse.train", f"hydra.run.dir={tmp_path}", "data.max_train_sentences=300",
           "data.dev=null", "data.test=null", *overrides]  # fmt: skip
    proc = subprocess.run(cmd, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert message in proc.stderr and "Traceback" not in proc.stderr


def test_init_from_refuses_another_system(tiny_run, tmp_path):
    cmd = [sys.executable, "-m", "nparse.train", f"hydra.run.dir={tmp_path}", "+exp=beam_early",
           f"trainer.init_from={tiny_run / 'best.pt'}", "data.max_train_sentences=10", "data.dev=null",
           "data.test=null"]  # fmt: skip
    proc = subprocess.run(cmd, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1 and "trainer.init_from=" in proc.stderr and "system" in proc.stderr


BEAM_PRESETS = sorted(
    p.stem for p in (PROJECT_ROOT / "conf" / "exp").glob("*.yaml") if "beam" in p.stem or "completion" in p.stem
)


@pytest.mark.parametrize("exp", BEAM_PRESETS)
def test_beam_presets_compose_into_valid_global_settings(exp):
    from nparse.systems import make_oracle, make_system
    from nparse.training.settings import check_completion, global_settings, system_options

    cfg = compose_config(f"+exp={exp}")
    oracle = make_oracle(make_system(**system_options(cfg)), cfg.oracle.name, **cfg.oracle.options)
    settings = global_settings(cfg, oracle)
    assert cfg.trainer.name == "global" and settings.beam_size == 8 and cfg.decoder.beam_size == 8
    check_completion(cfg, settings)
    assert bool(cfg.model.completion.factors) == ("completion" in exp)
    if exp.startswith("completion_eager_swap_"):  # the paper's system (Bohnet & Kuhn 2012)
        assert cfg.system.name == "arceager_swap" and cfg.oracle.name == ("lazy" if "_lazy" in exp else "eager")
    elif exp.startswith("completion_"):
        assert cfg.system.name == "swapstandard" and cfg.oracle.name == "ndall"


@pytest.mark.parametrize(
    "overrides,message",
    [
        (["model.completion.factors=[1,2a]"], "needs trainer=global"),
        (["+exp=beam_early", "model.completion.factors=[2c]"], "unknown factor '2c'"),
        (["+exp=beam_early", "decoder=mst"], "decoder=mst decodes the completion model's first-order factor"),
        (["+exp=completion_2a", "model.completion.factors=[2a]", "decoder=mst"], "set model.completion.factors"),
    ],
)  # fmt: skip
def test_completion_settings_that_make_no_sense_are_refused(overrides, message):
    from nparse.systems import make_oracle, make_system
    from nparse.training.settings import check_completion, global_settings

    cfg = compose_config(*overrides)
    oracle = make_oracle(make_system(cfg.system.name), cfg.oracle.name)
    settings = global_settings(cfg, oracle) if cfg.trainer.name == "global" else None
    with pytest.raises(ValueError, match=message):
        check_completion(cfg, settings)


def test_submitit_local_multirun_writes_both_runs(tmp_path):
    """The launcher the SLURM config builds on, run locally: two jobs, two complete runs."""
    sweep = tmp_path / "sweep"
    cmd = [sys.executable, "-m", "nparse.train", "-m", "hydra/launcher=submitit_local", "+exp=archybrid_dynamic",
           "trainer.seed=1,2", "data.max_train_sentences=30", "trainer.epochs=1", "data.dev=null", "data.test=null",
           "trainer.threads=1", f"hydra.sweep.dir={sweep}"]  # fmt: skip
    proc = subprocess.run(cmd, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    for job in ("0", "1"):
        metrics = json.loads((sweep / job / "metrics.json").read_text())
        assert len(metrics["epochs"]) == 1 and (sweep / job / "best.pt").exists()
    seeds = {json.loads((sweep / j / "metrics.json").read_text())["epochs"][0]["loss_per_token"] for j in "01"}
    assert len(seeds) == 2  # different seeds, different runs


def test_slurm_launcher_config_composes():
    from hydra import compose, initialize_config_dir

    from nparse import config_schema  # noqa: F401  (registers the config schemas)
    from nparse.paths import CONF_DIR

    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose(config_name="config", overrides=["hydra/launcher=slurm"], return_hydra_config=True)
    launcher = cfg.hydra.launcher
    assert launcher._target_.endswith("SlurmLauncher")
    for key in ("partition", "timeout_min", "gpus_per_node", "tasks_per_node", "mem_gb", "setup", "max_num_timeout"):
        assert key in launcher, key


def test_resume_takes_the_runs_own_config(tmp_path):
    """trainer.resume=PATH alone goes on with the run's data and settings (harmless overrides,
    epochs and the teacher's cache, are applied); another preset, or an override of what is trained, is refused by name."""
    first = tmp_path / "first"
    run_train(first, "+exp=archybrid_dynamic", "data.max_train_sentences=30", "data.dev=null", "data.test=null",
              "trainer.epochs=1", "trainer.threads=1")  # fmt: skip
    last = first / "last.pt"

    def resume(*overrides: str) -> subprocess.CompletedProcess:
        cmd = [sys.executable, "-m", "nparse.train", f"hydra.run.dir={tmp_path / 'again'}", f"trainer.resume={last}",
               *overrides]  # fmt: skip
        return subprocess.run(cmd, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=300)

    proc = resume("+exp=2planar_dynamic")
    assert proc.returncode == 1 and "+exp=2planar_dynamic is not the preset" in proc.stderr, proc.stderr[-2000:]
    # Also in the run's own folder, where Hydra rewrites its record of the command line first
    proc = subprocess.run([sys.executable, "-m", "nparse.train", f"hydra.run.dir={first}", "trainer.resume=auto",
                           "+exp=2planar_dynamic"], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert proc.returncode == 1 and "(archybrid_dynamic)" in proc.stderr, proc.stderr[-2000:]
    proc = resume("data.max_train_sentences=100")
    assert proc.returncode == 1 and "data.max_train_sentences=100 would change what the run trains" in proc.stderr
    assert "Traceback" not in proc.stderr
    proc = resume("trainer.epochs=2", "trainer.distill_cache_mb=512")  # how it goes on, not what it trains
    assert proc.returncode == 0, proc.stderr[-3000:]
    metrics = json.loads((first / "metrics.json").read_text())
    assert len(metrics["epochs"]) == 2 and metrics["epochs"][1]["sentences_per_s"] > 0
    log = (first / "train.log").read_text()
    assert "training on 30 sentences" in log.split("resuming")[-1] and "trainer.epochs=2" in log
    assert "trainer.distill_cache_mb=512" in log
    # Resumed in its own folder (hydra.run.dir= the run, as the preemption message says): Hydra's
    # handler writes the run's train.log already, and each line is there once.
    # ... and goes on to a final phase it was trained without (before the phase, how the run ends)
    proc = subprocess.run([sys.executable, "-m", "nparse.train", f"hydra.run.dir={first}", "trainer.resume=auto",
                           "trainer.epochs=3", "trainer.final_decay=1"], cwd=PROJECT_ROOT, capture_output=True,
                          text=True, timeout=300)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    log = (first / "train.log").read_text()
    assert log.count("epoch 3:") == 1 and log.count("resuming") == 2, log
    assert "trainer.final_decay: 1 epochs from the weights of epoch" in log and log.count("epoch 4:") == 1, log
    metrics = json.loads((first / "metrics.json").read_text())
    assert [e.get("final_decay", False) for e in metrics["epochs"]] == [False, False, False, True]


def test_resume_takes_the_runs_own_file_named_another_way(tmp_path, monkeypatch):
    """A path override naming the run's own file (relative, through a link) is no change; another
    file is refused by name. The final phase may be added before it has begun."""
    from nparse.training.resume import resumed_config

    (tmp_path / "lex.tsv").write_text("a\ta\tNOUN\n", encoding="utf-8")
    (tmp_path / "other.tsv").write_text("b\tb\tVERB\n", encoding="utf-8")
    (tmp_path / "link").symlink_to(tmp_path)
    monkeypatch.chdir(tmp_path)
    saved = compose_config(f"model.lexicon={tmp_path / 'lex.tsv'}", "model.lexicon_dim=8").to_dict()
    for same in ("lex.tsv", "link/lex.tsv", "./link/./lex.tsv"):
        current = compose_config(f"model.lexicon={same}", "model.lexicon_dim=8")
        resumed, notes = resumed_config(saved, current, [f"model.lexicon={same}"])
        assert resumed.model.lexicon == str(tmp_path / "lex.tsv") and notes == []
    current = compose_config("model.lexicon=other.tsv", "model.lexicon_dim=8")
    with pytest.raises(ValueError, match="model.lexicon=other.tsv would change what the run trains"):
        resumed_config(saved, current, ["model.lexicon=other.tsv"])
    # The final phase may be set until it has begun, not after
    current = compose_config(f"model.lexicon={tmp_path / 'lex.tsv'}", "model.lexicon_dim=8", "trainer.final_decay=8")
    resumed, notes = resumed_config(saved, current, ["trainer.final_decay=8"])
    assert resumed.trainer.final_decay == 8 and notes == ["trainer.final_decay=8 (the run had 0)"]
    with pytest.raises(ValueError, match="final phase has begun with trainer.final_decay=0"):
        resumed_config(saved, current, ["trainer.final_decay=8"], in_phase=True)
    current = compose_config("model.lexicon=missing.tsv", "model.lexicon_dim=8")
    with pytest.raises(ValueError, match="model.lexicon=missing.tsv would change"):
        resumed_config(saved, current, ["model.lexicon=missing.tsv"])


@pytest.mark.parametrize(
    "override,message",
    [("trainer.batch_size=0", "trainer.batch_size=0: must be at least 1"),
     ("decoder.batch_size=-5", "decoder.batch_size=-5: must be at least 1"),
     ("trainer.beam_size=16", "trainer.beam_size=16 is a beam-training setting: add trainer=global"),
     ("data.train=null", "data.train is not set"),
     ("+exp=beam_early trainer.completion_init=ones", "trainer.completion_init=ones: expected zero or random"),
     ("model.segmenter=true model.segmenter_epochs=0", "model.segmenter_epochs=0: must be at least 1")],
)  # fmt: skip
def test_settings_that_cannot_work_stop_before_loading(override, message):
    from nparse.training.settings import check_settings

    with pytest.raises(ValueError, match=message):
        check_settings(compose_config(*override.split()))


@pytest.mark.parametrize(
    "override,message",
    [("trainer.epochs=abc", "could not be converted to Integer"), ("model.dropout=high", "converted to Float"),
     ("trainer.precision=[1]", "trainer.precision")],
)  # fmt: skip
def test_values_of_the_wrong_type_stop_at_composition(override, message):
    """The structured configs (nparse/config_schema.py) type every key of the schema'd groups."""
    from hydra import compose, initialize_config_dir
    from hydra.errors import ConfigCompositionException

    from nparse import config_schema  # noqa: F401  (registers the config schemas)
    from nparse.paths import CONF_DIR

    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        with pytest.raises(ConfigCompositionException) as err:
            compose(config_name="config", overrides=[override])
    text = f"{err.value} {err.value.__cause__}"
    assert override.split("=")[0] in text and message in text, text


def test_typed_values_arrive_converted():
    from hydra import compose, initialize_config_dir

    from nparse import config_schema  # noqa: F401  (registers the config schemas)
    from nparse.paths import CONF_DIR

    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose(config_name="config", overrides=["trainer.lr=1", "+exp=completion_2a"])
    assert isinstance(cfg.trainer.lr, float) and cfg.trainer.lr == 1.0
    assert list(cfg.model.completion.factors) == ["1", "2a"]  # kinds are names, 1 included
    assert cfg.trainer.beam_size == 8  # trainer=global sets the beam keys


def test_projective_only_skips_crossing_trees_and_says_why(tmp_path):
    from nparse.training.data import load_data

    def sentence(name: str, heads: list[int]) -> str:
        rows = [f"{i}\tw{i}\t_\tX\t_\t_\t{h}\t{'root' if h == 0 else 'dep'}\t_\t_" for i, h in enumerate(heads, 1)]
        return f"# sent_id = {name}\n" + "\n".join(rows) + "\n\n"

    path = tmp_path / "train.conllu"
    path.write_text(sentence("flat", [2, 0, 2, 3]) + sentence("crossing", [3, 4, 0, 3]), encoding="utf-8")
    for only, kept in ((False, ["flat", "crossing"]), (True, ["flat"])):
        data = load_data(compose_config(f"data.train={path}", "data.dev=null", "data.test=null",
                                        f"data.projective_only={only}"))  # fmt: skip
        assert [s.name for s in data.train] == kept
    assert data.skipped == [("crossing", "not projective (data.projective_only=true)")]


@pytest.mark.parametrize("start", ["zero", "random"])
def test_a_new_completion_model_starts_as_the_beam_model_it_fine_tunes(tiny_run, start):
    """trainer.completion_init=zero: the new factor scorers score every factor 0, so before any
    update the fine-tuned model's beam gives exactly the trees of the same beam without them;
    random factors change them (the test would pass vacuously if they did not)."""
    from nparse.api import Parser
    from nparse.systems import make_system
    from nparse.training.models import fine_tuned_model
    from nparse.training.settings import system_options

    cfg = compose_config(
        "+exp=beam_archybrid_imp_maxv", "model.completion.factors=[2a,2b,3c]",
        f"trainer.init_from={tiny_run / 'best.pt'}", f"trainer.completion_init={start}",
    )  # fmt: skip
    torch.manual_seed(0)
    model = fine_tuned_model(tiny_run / "best.pt", cfg, make_system(**system_options(cfg)), torch.device("cpu")).eval()
    assert model.completion is not None
    sents = read_conllu(EWT_DEV)[:60]
    parser = Parser(model, compose_config("decoder.scores=raw"))
    with_factors = [p[0].heads for p in parser.parse_nbest(sents, beam_size=4)]
    model.completion, model.factor_mask = None, 0
    without = [p[0].heads for p in parser.parse_nbest(sents, beam_size=4)]
    assert (with_factors == without) == (start == "zero")


def test_distillation_from_a_trained_model(tiny_run, tmp_path):
    """trainer.distill_from: a small model trains on the teacher's transition scores beside the
    greedy loss; a student of the teacher's own scores has no divergence; another system is refused."""
    import random

    from nparse.io.data import collate, encode
    from nparse.training.distill import Teacher, distill_loss
    from nparse.systems.adapters.arrays import Layout
    from nparse.training.local import train_loop
    from nparse.training.settings import system_options

    cfg = compose_config("+exp=archybrid_dynamic")
    teacher = Teacher(tiny_run / "best.pt", system_options(cfg), torch.device("cpu"))
    model = teacher.model
    sents = read_conllu(EWT_DEV)[:16]
    batch = collate([encode(s, model.vocabs) for s in sents])
    for e in batch.examples:
        e.gold = make_oracle_for(model.system).prepare(e.sent.heads)
    with torch.no_grad():
        _, table = model.encode(batch)
    steps = train_loop(Layout(model.system, batch.width), make_oracle_for(model.system), model.scorer, table,
                       [e.gold for e in batch.examples], [len(e) for e in batch.examples], 0.0, random.Random(0))  # fmt: skip
    target = teacher.log_probs(teacher.table(batch), steps)
    assert distill_loss(model.scorer, table, steps, target, teacher.temperature).item() < 1e-4  # itself
    assert distill_loss(model.scorer, table * 0.5, steps, target, teacher.temperature).item() > 0.1
    metrics = run_train(tmp_path / "student", "+exp=archybrid_dynamic", "model=fast", "data.max_train_sentences=60",
                        "trainer.epochs=1", "data.dev=null", "data.test=null",
                        f"trainer.distill_from={tiny_run / 'best.pt'}")  # fmt: skip
    assert metrics["epochs"][0]["loss_per_token"] > 0
    assert "distilling from" in (tmp_path / "student" / "train.log").read_text()
    cmd = [sys.executable, "-m", "nparse.train", f"hydra.run.dir={tmp_path / 'other'}", "+exp=arceager_dynamic",
           "data.max_train_sentences=20", "data.dev=null", "data.test=null", f"trainer.distill_from={tiny_run / 'best.pt'}"]  # fmt: skip
    proc = subprocess.run(cmd, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1 and "distill_from" in proc.stderr and "differs" in proc.stderr


def test_distillation_teacher_tables_kept_across_batches(tiny_run):
    """trainer.distill_cache_mb: a sentence's teacher table is computed once and reused in later
    batches of other sentences, laid out as computing it in that batch lays it out; beyond the
    budget, the rows are computed and not kept."""
    from nparse.io.data import collate, encode
    from nparse.training.distill import Teacher
    from nparse.training.settings import system_options

    options = system_options(compose_config("+exp=archybrid_dynamic"))
    fresh = Teacher(tiny_run / "best.pt", options, torch.device("cpu"))
    kept = Teacher(tiny_run / "best.pt", options, torch.device("cpu"), cache_mb=64)
    examples = [encode(s, fresh.model.vocabs) for s in read_conllu(EWT_DEV)[:12]]
    first, second = collate(examples[:8]), collate(examples[4:])  # sentences 4-7 in both, other widths
    assert torch.equal(kept.table(first), fresh.table(first))  # computed in this very batch
    assert len(kept.kept) == 8
    calls = []
    encode_batch = kept.encode
    kept.encode = lambda ex: calls.append(len(ex)) or encode_batch(ex)  # type: ignore[method-assign]
    table = kept.table(second)
    assert calls == [4]  # only the sentences not seen before
    assert table.shape == fresh.table(second).shape
    torch.testing.assert_close(table, fresh.table(second), rtol=1e-5, atol=1e-5)
    width = second.width
    padding = [b * width + i for b, e in enumerate(second.examples) for i in range(len(e.words), width)]
    assert padding and not table[padding].any()
    small = Teacher(tiny_run / "best.pt", options, torch.device("cpu"), cache_mb=0)
    small.cache_bytes = int(kept.kept_bytes / 2)  # room for some sentences only
    torch.testing.assert_close(small.table(second), fresh.table(second), rtol=1e-5, atol=1e-5)
    assert 0 < len(small.kept) < 8 and small.kept_bytes <= small.cache_bytes


def make_oracle_for(system):
    from nparse.systems import make_oracle

    return make_oracle(system, "dynamic")


def test_freed_memory_is_kept_unless_the_user_tuned_malloc(monkeypatch):
    """keep_freed_memory sets glibc's thresholds, and leaves them alone when malloc's
    environment variables say the user chose them."""
    import platform

    from nparse.runtime import keep_freed_memory

    monkeypatch.setenv("MALLOC_MMAP_THRESHOLD_", "65536")
    assert keep_freed_memory() is False
    monkeypatch.delenv("MALLOC_MMAP_THRESHOLD_")
    for name in ("MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_", "GLIBC_TUNABLES"):
        monkeypatch.delenv(name, raising=False)
    if platform.libc_ver()[0] == "glibc":
        assert keep_freed_memory() is True


def test_freezing_for_a_run_first_frees_the_garbage_of_the_previous_one():
    """A Hydra sweep trains its jobs in one process: what the previous job left in reference
    cycles (its trainer) is freed before the next job freezes what is alive, not kept all run."""
    import gc
    import weakref

    from nparse.runtime import collector_freeze

    class Job:
        pass

    job = Job()
    job.me = job  # a cycle, as Trainer's scheduler closure makes
    gone = weakref.ref(job)
    del job
    try:
        collector_freeze()
        assert gone() is None
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


def test_without_a_dev_set_metrics_name_the_last_epoch_as_best_pt_holds_it(tmp_path):
    """Without dev scores every epoch replaces best.pt, so metrics.json's best is the last epoch
    (it named epoch 1)."""
    from hydra import compose, initialize_config_dir

    from nparse import config_schema  # noqa: F401  (registers the config schemas)
    from nparse.paths import CONF_DIR
    from nparse.training.trainer import Trainer

    overrides = ["+exp=archybrid_dynamic", "data.max_train_sentences=16", "data.dev=null", "data.test=null",
                 "trainer.epochs=2", "trainer.batch_size=8", "trainer.threads=1"]  # fmt: skip
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = Config.composed(compose(config_name="config", overrides=overrides))
    threads = torch.get_num_threads()
    try:
        metrics = Trainer(cfg, tmp_path / "run").run()
    finally:
        torch.set_num_threads(threads)
    saved = torch.load(tmp_path / "run" / "best.pt", map_location="cpu", weights_only=False)["epoch"]
    assert metrics["best"]["epoch"] == saved == 2


def test_a_signal_during_the_dev_evaluation_stops_after_that_epoch_and_later_at_once(tmp_path, monkeypatch):
    """A stop signal that arrives while an epoch is evaluated stops the run once that epoch's
    last.pt is written (it trained a batch of the next epoch first); one that arrives after the
    last epoch stops the final evaluation at once (it went on). Resuming finishes the run."""
    import signal

    from hydra import compose, initialize_config_dir

    from nparse import config_schema  # noqa: F401  (registers the config schemas)
    from nparse.paths import CONF_DIR
    from nparse.training.resume import Preempted
    from nparse.training.trainer import Trainer

    overrides = ["+exp=archybrid_dynamic", "data.max_train_sentences=16", f"data.dev={small_dev(tmp_path, 20)}",
                 "data.test=null", "trainer.epochs=2", "trainer.batch_size=8", "trainer.threads=1",
                 "trainer.resume=auto"]  # fmt: skip
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = Config.composed(compose(config_name="config", overrides=overrides))
    from nparse.training.evaluation import Evaluation

    evaluate = Trainer.evaluate

    def signalled(self, *args, **kwargs):
        os.kill(os.getpid(), signal.SIGTERM)
        return evaluate(self, *args, **kwargs)

    threads = torch.get_num_threads()
    try:
        monkeypatch.setattr(Trainer, "evaluate", signalled)
        with pytest.raises(Preempted, match="SIGTERM: stopped after epoch 1;"):
            Trainer(cfg, tmp_path / "run").run()
        last = torch.load(tmp_path / "run" / "last.pt", map_location="cpu", weights_only=False)
        assert last["epoch"] == 1 and "partial" not in last
        monkeypatch.setattr(Evaluation, "calibrate", lambda self, model: os.kill(os.getpid(), signal.SIGTERM))
        monkeypatch.setattr(Trainer, "evaluate", evaluate)
        with pytest.raises(Preempted, match="before the run's final evaluation ended"):
            Trainer(cfg, tmp_path / "run").run()
    finally:
        torch.set_num_threads(threads)
    assert torch.load(tmp_path / "run" / "last.pt", map_location="cpu", weights_only=False)["epoch"] == 2
