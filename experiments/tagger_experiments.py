"""Gold UPOS, predicted UPOS and raw text on a test set: what parsing real text costs.

    python experiments/tagger_experiments.py [--exp 2planar_dynamic] [--data en_ewt] [--epochs E]
                                       [--threads 1] [--out runs/tagger]

Trains ``EXP`` (reads gold UPOS) and ``EXP_tagger`` (a jointly trained tagger, no UPOS input)
for the same epochs and seed (skipped when ``OUT/NAME/metrics.json`` shows a finished run of
``E`` epochs; a shorter or interrupted run is resumed to ``E``), then
parses the test set three ways and scores each against gold with ``nparse.evaluate``'s counts:

1. gold tokens + gold UPOS: the first model on the test file as it is;
2. gold tokens + predicted UPOS: the tagger model on the test file with UPOS and XPOS blanked;
3. raw text: the test set's ``# text`` lines (a new paragraph at ``# newpar``/``# newdoc``),
   split and tokenized by ``format=raw`` (spaCy), tagged and parsed by the tagger model, scored
   with words aligned by character offsets.

Prints one Markdown table: tokens, sentences, words, UPOS, UAS and LAS F1 and parsing speed
(model loaded, I/O and tokenization excluded for rows 1-2; row 3 includes tokenization).
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import time
from pathlib import Path


import torch
from common import RUNS, split_sentences, treebank
from common import train as train_run

import nparse
from nparse.eval.aligned import aligned_scores
from nparse.api import parsed_sentence
from nparse.io.conllu import Sentence, read_conllu, write_conllu
from nparse.io.rawtext import iter_raw, text_of


def train(exp: str, data: str, epochs: int, threads: int, out: Path) -> Path:
    """The run of ``exp`` on ``data`` for ``epochs`` epochs: trained, found finished, or resumed.

    A finished run of fewer epochs, or an interrupted one, is resumed from its last.pt to
    ``epochs`` (the schedule is a fresh run's: constant learning rate, restored random state);
    one of more epochs is refused rather than reported under the wrong budget."""
    run = out / f"{data}_{exp}"
    metrics = run / "metrics.json"
    done = json.loads(metrics.read_text()) if metrics.is_file() else {}
    trained = len(done.get("epochs", []))
    if "test" in done and trained == epochs:
        print(f"{run}: finished {epochs}-epoch run found, not retrained", file=sys.stderr)
        return run
    if trained > epochs:
        sys.exit(f"{run} was trained for {trained} epochs, not {epochs}: pass --epochs {trained} or another --out")
    if (run / "last.pt").is_file():  # a shorter finished run, or an interrupted one
        print(f"{run}: run found after {trained} epochs, resumed to {epochs}", file=sys.stderr)
        what = [f"trainer.resume={run / 'last.pt'}"]
    else:
        what = [f"+exp={exp}", f"data={data}", f"hydra.run.dir={run}"]
    train_run(*what, f"trainer.epochs={epochs}", f"trainer.threads={threads}", log=sys.stderr)
    return run


def untagged(sent: Sentence) -> Sentence:
    """The sentence with UPOS and XPOS blanked in its lines and fields."""
    lines = list(sent.lines)
    for i in range(1, len(sent) + 1):
        cols = lines[sent.word_lines[i]].split("\t")
        cols[3] = cols[4] = "_"
        lines[sent.word_lines[i]] = "\t".join(cols)
    n = len(sent) + 1
    return Sentence(lines, sent.forms, ["<root>"] + ["_"] * (n - 1), ["<root>"] + ["_"] * (n - 1), sent.heads,
                    sent.deprels, sent.word_lines, sent.path, sent.line, sent.sent_id)  # fmt: skip


raw_text = text_of


def row(name: str, gold: list[Sentence], parsed: list[Sentence], seconds: float, words: int, folder: Path) -> dict:
    path = folder / f"{name.replace(' ', '_')}.conllu"
    write_conllu(parsed, path, [s.heads for s in parsed], [s.deprels for s in parsed])
    scores = aligned_scores(gold, read_conllu(path))
    return {"name": name, **{k: round(v.f1, 2) for k, v in scores.items()}, "tokens_per_s": round(words / seconds)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--exp", default="2planar_dynamic")
    ap.add_argument("--data", default="en_ewt")
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", type=Path, default=RUNS / "tagger")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    gold_run = train(args.exp, args.data, args.epochs, args.threads, args.out)
    tag_run = train(f"{args.exp}_tagger", args.data, args.epochs, args.threads, args.out)
    config = json.loads((gold_run / "metrics.json").read_text())
    gold = split_sentences(treebank(args.data), "test")
    words = sum(len(s) for s in gold)
    rows = []
    for name, run, sents in (("gold tokens + gold UPOS", gold_run, gold),
                             ("gold tokens + predicted UPOS", tag_run, [untagged(s) for s in gold])):  # fmt: skip
        parser = nparse.load(run / "best.pt", device="cpu")
        parser.parse_nbest(sents[:50])  # warm-up
        start = time.perf_counter()
        best = parser.parse_nbest(sents)
        seconds = time.perf_counter() - start
        rows.append(row(name, gold, [parsed_sentence(s, b[0]) for s, b in zip(sents, best)], seconds, words,
                        args.out))  # fmt: skip
    parser = nparse.load(tag_run / "best.pt", device="cpu")
    text = raw_text(gold)
    start = time.perf_counter()
    sents = list(iter_raw(io.StringIO(text).readlines(), parser.lang, "raw"))
    best = parser.parse_nbest(sents)
    seconds = time.perf_counter() - start
    rows.append(row("raw text (spaCy tokenizer + tagger)", gold, [parsed_sentence(s, b[0]) for s, b in zip(sents, best)],
                    seconds, sum(len(s) for s in sents), args.out))  # fmt: skip
    tag_metrics = json.loads((tag_run / "metrics.json").read_text())
    print(f"{args.data} test, {args.exp} and {args.exp}_tagger, {args.epochs} epochs, seed 1 "
          f"(tagger test UPOS accuracy: {tag_metrics['test'].get('upos', float('nan')):.2f}; "
          f"{config.get('exp')} dev LAS {config['best']['dev_las']:.2f}, tagger dev LAS {tag_metrics['best']['dev_las']:.2f})")  # fmt: skip
    print("| input | Tokens | Sentences | Words | UPOS | UAS | LAS | tokens/s |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['name']} | {r['tokens']:.2f} | {r['sentences']:.2f} | {r['words']:.2f} | {r['upos']:.2f} "
              f"| {r['uas']:.2f} | {r['las']:.2f} | {r['tokens_per_s']:,} |")  # fmt: skip


if __name__ == "__main__":
    main()
