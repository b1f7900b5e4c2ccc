"""Inference: the parse command line, plain text, untagged input, pretrained vectors."""

from __future__ import annotations

import subprocess
import sys

import pytest

from nparse.io.conllu import read_conllu, tree_problem
from nparse.models.encoder import read_vectors
from nparse.paths import PROJECT_ROOT

from .conftest import EWT_DEV, run_train


def parse_cmd(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "nparse.parse", *args]
    return subprocess.run(cmd, cwd=PROJECT_ROOT, input=stdin, capture_output=True, text=True, timeout=300)


def test_parse_conllu_file_changes_only_head_and_deprel(tiny_run, tmp_path):
    gold = EWT_DEV.read_text(encoding="utf-8")
    source = tmp_path / "in.conllu"
    source.write_text("\n\n".join(gold.split("\n\n")[:40]) + "\n\n", encoding="utf-8")
    out = tmp_path / "out.conllu"
    proc = parse_cmd(f"model={tiny_run / 'best.pt'}", f"input={source}", f"output={out}")
    assert proc.returncode == 0, proc.stderr
    assert "words/s" in proc.stderr
    before, after = source.read_text().splitlines(), out.read_text().splitlines()
    assert len(before) == len(after)
    for a, b in zip(before, after):
        ca, cb = a.split("\t"), b.split("\t")
        if len(ca) == 10 and ca[0].isdigit():
            assert ca[:6] + ca[8:] == cb[:6] + cb[8:]
        else:
            assert a == b  # comments, multiword tokens, empty nodes, blank lines
    assert all(tree_problem(s.heads) is None for s in read_conllu(out))


def test_parse_reads_stdin_and_writes_stdout(tiny_run):
    sent = "1\tDogs\tdog\tNOUN\tNNS\t_\t_\t_\t_\t_\n2\tbark\tbark\tVERB\tVBP\t_\t_\t_\t_\t_\n\n"
    proc = parse_cmd(f"model={tiny_run / 'best.pt'}", stdin=sent)
    assert proc.returncode == 0, proc.stderr
    rows = [line.split("\t") for line in proc.stdout.strip().splitlines()]
    assert sorted(r[6] for r in rows) == ["0", "1"] or sorted(r[6] for r in rows) == ["0", "2"]


def test_model_with_pos_refuses_untagged_text(tiny_run):
    proc = parse_cmd(f"model={tiny_run / 'best.pt'}", stdin="The cat sleeps .\n")
    assert proc.returncode == 1
    assert "trained with UPOS features" in proc.stderr and "<stdin>:1:" in proc.stderr


def test_model_without_pos_parses_plain_text(tmp_path):
    run = tmp_path / "nopos"
    run_train(
        run,
        "+exp=archybrid_static",
        "data.max_train_sentences=60",
        "trainer.epochs=1",
        "model.upos_dim=0",
        "data.test=null",
        f"data.dev={EWT_DEV}",
    )
    proc = parse_cmd(f"model={run / 'best.pt'}", "format=text", stdin="The cat sleeps .\n\nDogs bark\n")
    assert proc.returncode == 0, proc.stderr
    sents = proc.stdout.strip().split("\n\n")
    assert len(sents) == 2
    assert "# text = The cat sleeps ." in sents[0]


def test_python_api_parses_token_lists(tiny_run):
    import nparse

    parser = nparse.load(tiny_run / "best.pt", device="cpu")
    with pytest.raises(ValueError, match="UPOS"):
        parser.parse([["The", "cat", "sleeps", "."]])


def test_bad_checkpoint_path_is_a_clear_error(tmp_path):
    proc = parse_cmd(f"model={tmp_path / 'missing.pt'}", stdin="1\ta\t_\tX\t_\t_\t_\t_\t_\t_\n\n")
    assert proc.returncode == 1 and "checkpoint not found" in proc.stderr


def test_pretrained_vectors_file(tmp_path):
    path = tmp_path / "vec.txt"
    path.write_text("2 3\nthe 0.1 0.2 0.3\ncat 1 2 3\n")
    words, vectors = read_vectors(path)
    assert words == ["the", "cat"] and vectors.shape == (2, 3)
    path.write_text("the 0.1 0.2 0.3\ncat 1 2\n")
    with pytest.raises(ValueError, match=r"vec.txt:2: expected 3 values"):
        read_vectors(path)
