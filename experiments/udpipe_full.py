"""UDPipe 1 with its default tagger and parser, trained on a treebank's own files, as issue 55 asks.

    python experiments/udpipe_full.py --data hu_szeged [--out runs/udpipe_full]

Trains ``Trainer.train("morphodita_parsito", train, dev, Trainer.NONE, Trainer.DEFAULT,
Trainer.DEFAULT)`` (no tokenizer, the default tagger and parser: UPOS, XPOS, FEATS, lemmas and
trees) with ``ufal.udpipe`` from PyPI, then tags and parses the test file's gold tokens (every
column but the forms cleared first) and writes ``<data>.test.udpipe.conllu``; score it with
``python -m nparse.evaluate gold=TEST pred=THAT`` (the CoNLL 2018 metrics). Prints the training
and parsing seconds. Needs ``pip install -e ".[segmenter]"``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from common import RUNS, split_path, treebank

from nparse.io.segmenter import udpipe_sentences


def gold_tokens_only(text: str) -> str:
    """The CoNLL-U text with every column after FORM cleared ('_'), comments and MWT lines kept."""
    out = []
    for line in text.splitlines():
        cols = line.split("\t")
        if len(cols) == 10 and cols[0][:1].isdigit() and "-" not in cols[0] and "." not in cols[0]:
            cols = cols[:2] + ["_"] * 8
        out.append("\t".join(cols))
    return "\n".join(out) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default="hu_szeged")
    ap.add_argument("--out", type=Path, default=RUNS / "udpipe_full")
    args = ap.parse_args()
    import ufal.udpipe as u

    group = treebank(args.data)
    args.out.mkdir(parents=True, exist_ok=True)
    model_path = args.out / f"{args.data}.udpipe"
    if not model_path.is_file():
        start = time.perf_counter()
        error = u.ProcessingError()
        trained = u.Trainer.train(
            "morphodita_parsito", udpipe_sentences(split_path(group, "train")), udpipe_sentences(split_path(group, "dev")),
            u.Trainer.NONE, u.Trainer.DEFAULT, u.Trainer.DEFAULT, error,
        )  # fmt: skip
        if error.occurred():
            raise SystemExit(f"{args.data}: {error.message}")
        model_path.write_bytes(trained)
        print(f"{model_path}: trained in {time.perf_counter() - start:.0f} s", flush=True)
    model = u.Model.load(str(model_path))
    pipeline = u.Pipeline(model, "conllu", u.Pipeline.DEFAULT, u.Pipeline.DEFAULT, "conllu")
    test = split_path(group, "test")
    error = u.ProcessingError()
    start = time.perf_counter()
    parsed = pipeline.process(gold_tokens_only(test.read_text(encoding="utf-8")), error)
    if error.occurred():
        raise SystemExit(f"UDPipe: {error.message}")
    target = args.out / f"{args.data}.test.udpipe.conllu"
    target.write_text(parsed, encoding="utf-8")
    print(f"{target}: tagged and parsed in {time.perf_counter() - start:.1f} s")
    print(f"python -m nparse.evaluate gold={test} pred={target}")


if __name__ == "__main__":
    main()
