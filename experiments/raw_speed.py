"""End-to-end speed on raw text, as a user runs it: ``nparse-parse format=raw`` on one thread
(segmenting, tagging and analysing, parsing, writing), on a treebank's test text repeated.

    python experiments/raw_speed.py --model runs/.../best.pt [--data en_ewt] [--times 3] [--rounds 3]
                                    [--format raw|conllu]

The raw text is the test set's ``# text`` lines, a paragraph per ``# newpar``
(``rawtext.text_of``), ``--times`` over; ``--format conllu`` parses the gold-tokenized test file
(repeated the same way) instead. Each round runs the command line in a new process; the words/s
it reports (read, parsed and written, the model loaded) are printed per round with the median.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from common import split_path, treebank

from nparse.io.conllu import read_conllu
from nparse.io.rawtext import text_of

SPEED = re.compile(r"parsed (\d+) sentences \((\d+) words\) in ([0-9.]+) s.*: (\d+) words/s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True)
    ap.add_argument("--data", default="en_ewt")
    ap.add_argument("--times", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--format", choices=("raw", "conllu"), default="raw")
    args = ap.parse_args()
    test = split_path(treebank(args.data), "test")
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / f"input.{'txt' if args.format == 'raw' else 'conllu'}"
        if args.format == "raw":
            source.write_text(text_of(read_conllu(test)) * args.times, encoding="utf-8")
        else:
            source.write_text(Path(test).read_text(encoding="utf-8") * args.times, encoding="utf-8")
        speeds = []
        for k in range(args.rounds):
            cmd = [sys.executable, "-m", "nparse.parse", f"model={args.model}", f"input={source}",
                   f"output={Path(tmp) / 'out.conllu'}", f"format={args.format}", "threads=1", "device=cpu"]  # fmt: skip
            proc = subprocess.run(cmd, capture_output=True, text=True, check=True)
            found = SPEED.search(proc.stderr)
            if not found:
                raise SystemExit(f"no speed line in: {proc.stderr[-500:]}")
            speeds.append(int(found[4]))
            print(f"round {k + 1}: {found[1]} sentences, {found[2]} words in {found[3]} s: {found[4]} words/s")
    print(
        f"median {statistics.median(speeds):,.0f} words/s ({args.data} test x{args.times}, format={args.format}, 1 thread)"
    )


if __name__ == "__main__":
    main()
