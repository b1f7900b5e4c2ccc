"""Forks after torch has run on several threads (issue 56): a forked child parses on one thread
and never reaches the parent's OpenMP team, and a stuck parse worker stops the parse with an
error instead of a wait forever. experiments/fork_stress.py repeats spaCy's n_process=2 case."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from nparse.paths import PROJECT_ROOT

from .conftest import EWT_DEV

pytestmark = pytest.mark.slow  # it trains or runs a command (pytest -m 'not slow' leaves it out)

FORKED = r"""
import json, os, select, sys
from nparse.api import Parser
from nparse.io.conllu import read_conllu

def threads():
    return len(os.listdir("/proc/self/task"))

sents = read_conllu(sys.argv[2])[:600]
before = threads()
parser = Parser.load(sys.argv[1], "cpu", threads=2, precision="fp32")
mine = [(p[0].heads, p[0].labels) for p in parser.parse_nbest(sents, batch_size=600)]
after = threads()
read, write = os.pipe()
pid = os.fork()
if pid == 0:  # the child: the model it inherited, no setting of its own
    import torch
    start = threads()  # the main one, and one that torch.set_num_threads(1) starts (not OpenMP's)
    theirs = [(p[0].heads, p[0].labels) for p in parser.parse_nbest(sents, batch_size=600)]
    from nparse.runtime import set_threads
    asked = set_threads(4)[0]  # refused in a forked child
    os.write(write, json.dumps({"heads": theirs, "torch": torch.get_num_threads(), "start": start, "threads": threads(), "asked": asked}).encode())
    os._exit(0)
os.close(write)
chunks = []
while True:
    ready, _, _ = select.select([read], [], [], 60)
    if not ready:
        os.kill(pid, 9)
        print(json.dumps({"stuck": True}))
        sys.exit(0)
    chunk = os.read(read, 1 << 20)
    if not chunk:
        break
    chunks.append(chunk)
os.waitpid(pid, 0)
child = json.loads(b"".join(chunks))
print(json.dumps({"before": before, "after": after, "same": child["heads"] == json.loads(json.dumps(mine)),
                  "child_torch": child["torch"], "child_start": child["start"], "child_threads": child["threads"],
                  "child_asked": child["asked"]}))
"""


def test_a_child_forked_after_a_two_thread_parse_parses_alone(tiny_run):
    """The parent parses 600 EWT dev sentences in one batch on two threads: OpenMP starts its
    second thread (the process has more threads after the parse than before: torch's operations
    ran in parallel). A child forked then parses the same sentences within a minute, to the same
    trees, on one torch thread, and its parse starts no thread (no OpenMP team forms in it);
    asking nparse for four threads there gives one."""
    proc = subprocess.run([sys.executable, "-c", FORKED, str(tiny_run / "best.pt"), str(EWT_DEV)],
                          capture_output=True, text=True, timeout=300, cwd=PROJECT_ROOT)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert not seen.get("stuck"), "the forked child did not finish its parse within 60 s"
    assert seen["after"] > seen["before"], seen  # the parent's operations ran on an OpenMP team
    assert seen["same"] and seen["child_torch"] == 1 and seen["child_asked"] == 1, seen
    assert seen["child_threads"] == seen["child_start"] < seen["after"], seen  # no team formed in the child


def test_a_stuck_worker_stops_the_parse_with_an_error(tiny_run, tmp_path, monkeypatch, capsys):
    """A parse worker that never returns (here: one that sleeps) is killed after STUCK_SECONDS,
    and nparse-parse workers=2 stops with an error naming it and writes nothing."""
    from nparse import parse as parse_cli
    from nparse.pipeline import workers

    monkeypatch.setattr(workers, "STUCK_SECONDS", 3.0)
    monkeypatch.setattr(workers.ChunkJob, "texts", lambda self, part: time.sleep(3600))  # in the forked workers
    out = tmp_path / "out.conllu"
    start = time.perf_counter()
    code = parse_cli.main([f"model={tiny_run / 'best.pt'}", f"input={EWT_DEV}", f"output={out}", "workers=2"])
    err = capsys.readouterr().err
    assert code == 1 and time.perf_counter() - start < 60
    assert "no parse worker returned a group of sentences in 3 s" in err and "stuck" in err, err
    assert f"nothing written to {out}" in err and not out.exists()
