"""Issue 56's stress test: spaCy's ``nlp.pipe(n_process=2)`` after a parse in the parent, many tries.

    python experiments/fork_stress.py --model CKPT [--tries 50] [--paragraphs 12] [--timeout 30] [--compare DIR] [--out F]

A try is a new Python process that builds ``nparse.spacy.load(CKPT, threads=1)`` (the checkpoint
needs its segmenter), parses the raw text of EWT dev's first ``--paragraphs`` paragraphs with
``nlp.pipe(batch_size=16)`` in that process, parses four of them again on two torch threads
(OpenMP's thread team now exists and was used; /proc/self/task counts the threads), then all of
them with ``n_process=2``: spaCy forks two workers, which parse with the model they inherited. A try over ``--timeout`` seconds is a hang (the process
group is killed: the try and its workers). The forked parses must equal the one-process ones. A CPU-bound
process runs beside every try, as on the machine where the hang was seen.

``--compare DIR``: every other try runs the nparse of DIR (a worktree of an older commit: the
fix reverted). Prints one line per try and the counts; ``--out`` also writes them as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from common import ROOT

CHILD = r"""
import json, os, sys
paragraphs = json.loads(sys.stdin.read())
import torch
import nparse.spacy

import time
clock = time.perf_counter()
def phase(name):
    print(f"{name} at {time.perf_counter() - clock:.1f} s", file=sys.stderr, flush=True)
nlp = nparse.spacy.load(sys.argv[1], threads=1)  # one thread: fast beside the busy core
phase("loaded")
def read(docs):
    return [[(t.text, t.head.i, t.dep_) for t in doc] for doc in docs]
one = read(nlp.pipe(paragraphs, batch_size=16))
phase("parsed in one process")
torch.set_num_threads(2)  # a parse on two threads: OpenMP's team exists and was used at the fork
read(nlp.pipe(paragraphs[:4], batch_size=16))
phase("parsed again on two threads")
threads = len(os.listdir("/proc/self/task"))
two = read(nlp.pipe(paragraphs, batch_size=16, n_process=2))
print(json.dumps({"same": one == two, "words": sum(map(len, one)), "parent_threads": threads,
                  "torch_threads": torch.get_num_threads(), "nparse": os.path.dirname(nparse.__file__)}))
"""


def ewt_paragraphs(n: int) -> list[str]:
    """The raw text of EWT dev's first ``n`` paragraphs (``# newpar`` and ``# text`` comments)."""
    paragraphs: list[list[str]] = []
    for line in (ROOT / "data/ud/en_ewt/en_ewt-ud-dev.conllu").read_text(encoding="utf-8").splitlines():
        if line.startswith("# newpar") or not paragraphs:
            paragraphs.append([])
        if line.startswith("# text = "):
            paragraphs[-1].append(line[len("# text = ") :])
    return [" ".join(p) for p in paragraphs if p][:n]


def one_try(model: Path, paragraphs: list[str], timeout: float, code: Path | None) -> dict:
    env = dict(os.environ)
    if code is not None:
        env["PYTHONPATH"] = str(code)
    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(model)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, cwd=code or ROOT, start_new_session=True)  # fmt: skip
    try:
        out, err = proc.communicate(json.dumps(paragraphs), timeout=timeout)
        lines = out.strip().splitlines()
        result = json.loads(lines[-1]) if lines and lines[-1].startswith("{") else {"error": err[-2000:]}
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # the try and the workers it forked
        _, err = proc.communicate()
        result = {"hang": True, "stderr": err[-300:]}
    finally:
        hog.kill()
        hog.wait()
    return {**result, "seconds": round(time.perf_counter() - start, 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", type=Path, required=True)
    ap.add_argument("--tries", type=int, default=50)
    ap.add_argument("--timeout", type=float, default=30, help="seconds a try may take (about 10 normally)")
    ap.add_argument("--paragraphs", type=int, default=12)
    ap.add_argument("--compare", type=Path, help="also a checkout whose nparse alternate tries run (the fix reverted)")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    paragraphs = ewt_paragraphs(args.paragraphs)
    sides = (
        {"this checkout": None} if args.compare is None else {"this checkout": None, str(args.compare): args.compare}
    )
    rows: dict[str, list[dict]] = {side: [] for side in sides}
    for k in range(args.tries):
        for side, code in sides.items():  # alternating: both sides meet the same machine
            row = one_try(args.model.resolve(), paragraphs, args.timeout, code)
            rows[side].append(row)
            print(k + 1, side, json.dumps(row), flush=True)
            if args.out:
                args.out.write_text(json.dumps(rows, indent=1) + "\n")
    for side, done in rows.items():
        hangs = sum(bool(r.get("hang")) for r in done)
        errors = sum("error" in r for r in done)
        differ = sum(r.get("same") is False for r in done)
        print(f"{side}: {len(done)} tries ({len(paragraphs)} paragraphs each, {args.timeout:.0f} s each at most): "
              f"{hangs} hung, {errors} failed, {differ} with parses unlike one process's")  # fmt: skip


if __name__ == "__main__":
    main()
