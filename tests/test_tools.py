"""The tools that users run on finished runs, and the study drivers' run statistics."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from nparse.paths import PROJECT_ROOT

pytestmark = pytest.mark.slow  # it trains or runs a command (pytest -m 'not slow' leaves it out)

pytest.importorskip("matplotlib")


def fake_run(folder, exp, las):
    folder.mkdir()
    epochs = [{"epoch": e + 1, "loss_per_token": 2.0 / (e + 1), "dev_las": v} for e, v in enumerate(las)]
    (folder / "metrics.json").write_text(json.dumps({"exp": exp, "treebank": "en_ewt", "epochs": epochs}))
    return folder


def test_plot_runs_writes_a_png_for_two_runs(tmp_path):
    a = fake_run(tmp_path / "a", "archybrid_dynamic", [70.0, 80.0, 84.0])
    b = fake_run(tmp_path / "b", "2planar_dynamic", [68.0, 79.0])
    out = tmp_path / "plots" / "curves.png"
    cmd = [sys.executable, "tools/plot_runs.py", str(a), str(b / "metrics.json"), "--out", str(out)]
    proc = subprocess.run(cmd, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 10_000
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = subprocess.run([sys.executable, "tools/plot_runs.py", str(empty)], cwd=PROJECT_ROOT,
                          capture_output=True, text=True, timeout=120)  # fmt: skip
    assert proc.returncode == 1 and "no metrics.json" in proc.stderr


def test_console_scripts_name_the_entry_points():
    """nparse-train, nparse-parse and nparse-eval (pyproject [project.scripts]) load the same
    functions as python -m nparse.train / parse / evaluate."""
    from importlib.metadata import entry_points

    import nparse.evaluate
    import nparse.parse
    import nparse.train

    scripts = {e.name: e for e in entry_points(group="console_scripts") if e.name.startswith("nparse-")}
    assert sorted(scripts) == ["nparse-eval", "nparse-parse", "nparse-train"]
    assert scripts["nparse-train"].load() is nparse.train.cli
    assert scripts["nparse-parse"].load() is nparse.parse.main
    assert scripts["nparse-eval"].load() is nparse.evaluate.main


def test_run_stats_averages_epochs_over_seeds(tmp_path):
    arm = tmp_path / "arm"
    for seed, seconds in ((1, [2.0, 4.0]), (2, [6.0, 8.0])):
        run = arm / f"hu_szeged_s{seed}"
        run.mkdir(parents=True)
        epochs = [{"epoch": e + 1, "seconds": s, "updates_per_sentence": 0.5 * seed} for e, s in enumerate(seconds)]
        (run / "metrics.json").write_text(json.dumps({"epochs": epochs}))
    cmd = [
        sys.executable,
        "experiments/run_stats.py",
        str(arm),
        "--keys",
        "seconds",
        "updates_per_sentence",
        "end_reached",
    ]
    proc = subprocess.run(cmd, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    row = proc.stdout.strip().splitlines()[-1]
    # mean seconds 5.0 over 4 epochs, updates (0.5, 0.5, 1, 1) -> 0.75, no end_reached, 10 s per run
    assert row == "| arm | hu_szeged | 4 | 5.000 | 0.750 | - | 10.000 |"


def test_gpu_rows_measures_every_part_of_the_full_analysis_on_a_cpu(tmp_path):
    """The script a lent GPU machine runs (for minutes, so a broken part costs scarce time), tried
    as the docs say on a CPU, small: every part writes its rows, the analysis columns come out of
    the parse, and no part fails."""
    out = tmp_path / "rows"
    cmd = [sys.executable, "experiments/gpu_rows.py", "--device", "cpu", "--exp", "2planar_dynamic_ud",
           "--overrides", "model.segmenter=false", "--arms", "fp32/32", "--epochs", "1",
           "--train-sentences", "40", "--global-sentences", "10", "--profile-sentences", "20",
           "--parse-sentences", "20", "--precisions", "bf16", "--beam", "2", "--repeats", "1",
           "--threads", "1", "--cpu-threads", "1", "--out", str(out)]  # fmt: skip
    env = {**os.environ, "UD_ROOT": "data/ud"}  # the bundled EWT: no other treebank is needed
    proc = subprocess.run(cmd, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = (out / "rows.md").read_text()
    assert "FAILED" not in report, report
    assert "cProfile of greedy epoch 2" in report and "Host synchronisations: not measured (no GPU)" in report
    rows = json.loads((out / "rows.json").read_text())
    assert {r["part"] for r in rows} == {"greedy", "parse", "global"}
    parses = {(r["parser"], r["beam"]): r for r in rows if r["part"] == "parse"}
    assert set(parses) == {("cpu bf16", 1), ("cpu bf16", 2), ("cpu fp32", 1), ("cpu fp32", 2)}
    assert all(r["upos"] > 0 and r["lemmas"] > 0 for r in parses.values())  # the analysis was written
    assert parses[("cpu fp32", 1)]["same_bytes"] == "-"
    (glob,) = [r for r in rows if r["part"] == "global"]  # fine-tuned on local scores: before and after compare
    assert "local scores" in glob["settings"] and 0 <= glob["dev_las_before"] <= 100, glob


def test_seed_runs_skips_finished_runs_unless_told_to_go_on():
    """A finished run (its metrics.json says why it stopped) is skipped; with --go-on it goes on
    from its last.pt with the overrides (the command printed, then a bad key stops it at once)."""
    import shutil
    import uuid

    arm = f"test_go_on_{uuid.uuid4().hex[:8]}"
    run = PROJECT_ROOT / "runs" / arm / "en_ewt_s1"
    run.mkdir(parents=True)
    try:
        (run / "metrics.json").write_text(json.dumps({"epochs": [], "stopped": "trained trainer.epochs=15 epochs"}))
        cmd = [sys.executable, "experiments/seed_runs.py", "--exp", "2planar_dynamic_ud", "--name", arm,
               "--data", "en_ewt", "--seeds", "1", "--", "trainer.epochs=100", "trainer.no_such_key=1"]  # fmt: skip
        proc = subprocess.run(cmd, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0 and f"done already: {run}" in proc.stdout, proc.stderr[-2000:]
        proc = subprocess.run([*cmd[:2], "--go-on", *cmd[2:]], cwd=PROJECT_ROOT, capture_output=True, text=True,
                              timeout=120)  # fmt: skip
        assert "done already" not in proc.stdout and proc.returncode != 0
        assert f"hydra.run.dir={run} trainer.resume=auto trainer.epochs=100" in proc.stdout, proc.stdout
    finally:
        shutil.rmtree(run.parent)
