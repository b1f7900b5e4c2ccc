"""Raw-text segmentation against the gold test set: spaCy's rules against a segmenter trained on
the treebank (UDPipe 1's tokenizer, ``nparse/io/segmenter.py``).

    python experiments/segmenter_compare.py [--data en_ewt el_gdt hu_szeged] [--epochs 20]
                                      [--out runs/segmenters] [--model TAGGER_PARSER.pt ...]

For every treebank the raw text of the test set (its ``# text`` lines, a paragraph per
``# newpar``, ``rawtext.text_of``) is split by (a) spaCy's blank tokenizer and sentencizer and
(b) a UDPipe tokenizer trained on the training file (``--epochs``, the dev file choosing the
epoch; the model is kept in ``--out`` and reused). Prints Tokens/Sentences/Words F1 of each
(``nparse/eval/aligned.py``, the CoNLL 2018 alignment) and its speed. With ``--model`` (one per
treebank, a model with a tagger), each segmentation is then tagged and parsed and UPOS/UAS/LAS
F1 are added, with a first row for the same model on the gold tokens (what raw text costs), and
the speed of the whole (segmenting, tagging and parsing).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from common import split_path, split_sentences, treebank

from nparse.api import Parser, parsed_sentence
from nparse.eval.aligned import aligned_scores
from nparse.io.rawtext import iter_raw, text_of
from nparse.io.segmenter import Segmenter, train

TREEBANKS = ("en_ewt", "el_gdt", "hu_szeged")
METRICS = ("tokens", "sentences", "words", "upos", "uas", "las")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", nargs="+", default=list(TREEBANKS))
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--out", default="runs/segmenters")
    ap.add_argument("--model", nargs="*", default=[], help="a tagger+parser checkpoint per treebank, in --data order")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    print("| treebank | segmentation | " + " | ".join(m.capitalize() if m in METRICS[:3] else m.upper() for m in METRICS)
          + " | segmenting tokens/s | all tokens/s | trained in (s) |")  # fmt: skip
    print("|---" * (len(METRICS) + 5) + "|")
    for k, name in enumerate(args.data):
        data = treebank(name)
        lang = str(data.lang)
        gold = split_sentences(data, "test")
        text = text_of(gold)
        model_path = out / f"{name}.e{args.epochs}.udpipe"
        trained = "-"
        if not model_path.exists():
            start = time.perf_counter()
            model_path.write_bytes(train(split_path(data, "train"), split_path(data, "dev"), f"epochs={args.epochs}"))
            trained = f"{time.perf_counter() - start:.0f}"
        parser = Parser.load(args.model[k], "cpu") if k < len(args.model) else None
        if parser is not None:
            start = time.perf_counter()
            best = parser.parse_nbest(gold)
            seconds = time.perf_counter() - start
            scores = aligned_scores(gold, [parsed_sentence(s, p[0]) for s, p in zip(gold, best)])
            words = sum(len(s) for s in gold)
            print(f"| {name} | gold tokens | " + " | ".join(f"{scores[m].f1:.2f}" for m in METRICS)
                  + f" | - | {words / seconds:,.0f} | - |", flush=True)  # fmt: skip
        arms = [
            ("spaCy rules", None, "-"),
            (f"UDPipe 1 trained ({args.epochs} epochs)", Segmenter(model_path), trained),
        ]
        for label, segmenter, seconds_trained in arms:
            start = time.perf_counter()
            sents = list(iter_raw(text.splitlines(keepends=True), lang, "<test>", segmenter))
            seconds = time.perf_counter() - start
            total = "-"
            words = sum(len(s) for s in sents)
            if parser is not None:
                best = parser.parse_nbest(sents)
                sents = [parsed_sentence(s, p[0]) for s, p in zip(sents, best)]
                total = f"{words / (time.perf_counter() - start):,.0f}"
            scores = aligned_scores(gold, sents)
            cells = [f"{scores[m].f1:.2f}" if m in scores and (parser or m in METRICS[:3]) else "-" for m in METRICS]
            print(f"| {name} | {label} | " + " | ".join(cells)
                  + f" | {words / seconds:,.0f} | {total} | {seconds_trained} |", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
