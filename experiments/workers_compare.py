"""nparse-parse with worker processes against one process: words/s and identical output.

    python experiments/workers_compare.py --model CKPT [--input FILE] [--rounds 3] [--workers 2]
                                          [--options KEY=VALUE ...] [--api]

Runs ``python -m nparse.parse`` on the input (default: EWT train, 12,544 sentences) in
interleaved rounds as one process of one thread, one process with the default threads, and
``--workers`` processes, and prints, per run, the time and words/s from the command's last line
(model loaded to output written) and the MD5 of the output, then each round's ratio of the
workers to one process of one thread. ``--options`` go to every run (e.g. ``batch_size=512``,
the default of models trained now, for a checkpoint trained with another). With ``--api`` every run
goes through the Python API instead, ``nparse.load(CKPT, threads=...)`` then
``Parser.parse_file(input, output, workers=...)`` in a new process (``API_RUN``; its report's
seconds: the same span as the command's).
"""

from __future__ import annotations

import argparse
import hashlib
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from common import split_path, treebank

LAST_LINE = re.compile(r"in ([0-9.]+) s .*: ([0-9]+) words/s")
# One parse through the API, printing the command's last line (options: threads=N, workers=N).
API_RUN = """
import sys, nparse
opts = dict(o.split("=", 1) for o in sys.argv[4:])
parser = nparse.load(sys.argv[1], threads=int(opts["threads"]) if "threads" in opts else None)
report = parser.parse_file(sys.argv[2], sys.argv[3], workers=int(opts.get("workers", 1)))
print(f"parsed in {report.seconds:.1f} s (API): {report.words / report.seconds:.0f} words/s", file=sys.stderr)
"""


def run(model: str, data: Path, out: Path, options: list[str], api: bool = False) -> tuple[float, int, str]:
    """Seconds and words/s as the command reports them, and the output's MD5."""
    cmd = [sys.executable, "-m", "nparse.parse", f"model={model}", f"input={data}", f"output={out}", *options]
    if api:
        cmd = [sys.executable, "-c", API_RUN, model, str(data), str(out), *options]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=True)
    found = LAST_LINE.search(proc.stderr.strip().splitlines()[-1])
    assert found, proc.stderr
    return float(found.group(1)), int(found.group(2)), hashlib.md5(out.read_bytes()).hexdigest()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True)
    ap.add_argument("--input", type=Path, default=None, help="CoNLL-U file (default: EWT train)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--options", nargs="*", default=[], help="more nparse-parse options for every run")
    ap.add_argument("--api", action="store_true", help="through nparse.load and Parser.parse_file")
    args = ap.parse_args()
    data = args.input or split_path(treebank("en_ewt"), "train")
    setups = {"1 process, 1 thread": ["threads=1"], "1 process, default threads": [],
              f"{args.workers} workers": [f"workers={args.workers}"]}  # fmt: skip
    print(f"input: {data}; options: {' '.join(args.options) or 'none'}; {'API' if args.api else 'command line'}")
    print("| round | setup | seconds | words/s | output MD5 |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(1, args.rounds + 1):
            speeds = {}
            for name, options in setups.items():
                seconds, speed, md5 = run(args.model, data, Path(tmp) / "out.conllu", options + args.options, args.api)
                speeds[name] = speed
                print(f"| {r} | {name} | {seconds:.1f} | {speed:,} | {md5[:12]} |", flush=True)
            ratio = speeds[f"{args.workers} workers"] / speeds["1 process, 1 thread"]
            print(f"| {r} | ratio of {args.workers} workers to 1 process of 1 thread | | {ratio:.2f}x | |", flush=True)


if __name__ == "__main__":
    main()
