"""nparse inside spaCy against nparse-parse format=raw, on a test set's raw text, one model.

    python experiments/spacy_compare.py --model runs/.../best.pt [--data en_ewt] [--threads 1] [--repeats 3]
    python experiments/spacy_compare.py --model runs/.../best.pt --n-process 2 [--repeats 3] [--split train]

The model needs a tagger and a trained segmenter (``model.segmenter=true``). The raw text is the
test set's ``# text`` lines, a paragraph per ``# newpar`` (``rawtext.text_of``). Four ways,
scored against gold with the CoNLL 2018 alignment (``eval/aligned.py``):

1. ``format=raw``: what ``nparse-parse format=raw`` does (the checkpoint's segmenter, then
   tagging and parsing, CoNLL-U written), timed in this process without loading;
2. ``nparse.spacy.load``: the spaCy pipeline with the same segmenter as its tokenizer, over the
   paragraphs with ``nlp.pipe``, written back with ``nparse.spacy.to_sentences``;
3. ``add_pipe``: spaCy's blank tokenizer for the language, then ``nlp.add_pipe("nparse")``
   (sentences from the checkpoint's segmenter, matched to spaCy's tokens);
4. ``format=raw`` with spaCy's rules instead of the segmenter (for reference).

Prints the F1 table, tokens/s (best of ``--repeats`` alternating runs, one thread) and whether
ways 1 and 2 give the same words, heads and labels. With ``--n-process N`` it times ways 2 and 3
with spaCy's own processes instead, ``nlp.pipe(paragraphs, n_process=1)`` against ``n_process=N``
(one torch thread each, alternating; ``--batch-size`` paragraphs per batch, default 64), and checks that the Docs are
the same.
"""

from __future__ import annotations

import argparse
import io
import time

import spacy
import torch
from common import split_sentences, treebank

import nparse.spacy
from nparse.api import Parser, parsed_sentence
from nparse.eval.aligned import aligned_scores
from nparse.io.conllu import Sentence, format_sentence, read_conllu
from nparse.io.rawtext import iter_raw, paragraphs, text_of

METRICS = ("tokens", "sentences", "words", "upos", "uas", "las")


def cli_raw(parser: Parser, text: str, segmenter) -> list[Sentence]:
    """What ``nparse-parse format=raw`` computes and writes (CoNLL-U text), read back."""
    sents = list(iter_raw(text.splitlines(keepends=True), parser.lang, "<text>", segmenter))
    done = [parsed_sentence(s, p[0]) for s, p in zip(sents, parser.parse_nbest(sents))]
    return read_conllu(io.StringIO("".join(format_sentence(d, d.heads, d.deprels) for d in done)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True)
    ap.add_argument("--data", default="en_ewt")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--n-process", type=int, default=0, help="time nlp.pipe with n_process=1 against this")
    ap.add_argument("--batch-size", type=int, default=64, help="paragraphs per nlp.pipe batch (with --n-process)")
    ap.add_argument("--split", default="test", help="the split whose raw text is parsed")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    gold = split_sentences(treebank(args.data), args.split)
    text = text_of(gold)
    parts = [p for _, p in paragraphs(text.splitlines(keepends=True))]
    loaded = nparse.spacy.load(args.model, device="cpu", threads=args.threads)
    parser = loaded.get_pipe("nparse").parser
    blank = spacy.blank(parser.lang)
    blank.add_pipe("nparse", config={"model": args.model, "device": "cpu", "threads": args.threads})
    if args.n_process:
        processes(parts, {"nparse.spacy.load": loaded, 'spacy.blank + add_pipe("nparse")': blank}, args)
        raw = cli_raw(parser, text, parser.segmenter)
        spacy_sents = [s for d in loaded.pipe(parts, n_process=args.n_process, batch_size=args.batch_size)
                       for s in nparse.spacy.to_sentences(d)]  # fmt: skip
        same = [(s.forms, s.heads, s.deprels) for s in raw] == [(s.forms, s.heads, s.deprels) for s in spacy_sents]
        print(f"format=raw and nparse.spacy.load with n_process={args.n_process} give the same words, heads and "
              f"labels: {same} ({len(raw)} and {len(spacy_sents)} sentences)")  # fmt: skip
        return
    ways = {
        "format=raw (segmenter)": lambda: cli_raw(parser, text, parser.segmenter),
        "nparse.spacy.load": lambda: [s for d in loaded.pipe(parts) for s in nparse.spacy.to_sentences(d)],
        'spacy.blank + add_pipe("nparse")': lambda: [
            s for d in blank.pipe(parts) for s in nparse.spacy.to_sentences(d)
        ],
        "format=raw (spaCy rules)": lambda: cli_raw(parser, text, None),
    }
    results: dict[str, list[Sentence]] = {}
    best: dict[str, float] = {}
    for _ in range(args.repeats):
        for name, run in ways.items():
            start = time.perf_counter()
            results[name] = run()
            seconds = time.perf_counter() - start
            best[name] = min(best.get(name, seconds), seconds)
    tokens = sum(len(s) for s in gold)
    print(f"{args.data} test, {tokens} gold words, {len(parts)} paragraphs; best of {args.repeats} runs, "
          f"{args.threads} thread(s)")  # fmt: skip
    print("| way | " + " | ".join(m.upper() if m in ("upos", "uas", "las") else m.capitalize() for m in METRICS)
          + " | tokens/s | time vs format=raw |")  # fmt: skip
    print("|---" * (len(METRICS) + 3) + "|")
    base = best["format=raw (segmenter)"]
    for name, sents in results.items():
        scores = aligned_scores(gold, sents)
        cells = " | ".join(f"{scores[m].f1:.2f}" for m in METRICS)
        print(f"| {name} | {cells} | {tokens / best[name]:,.0f} | {best[name] / base:.2f}x |")
    a, b = results["format=raw (segmenter)"], results["nparse.spacy.load"]
    same = [(s.forms, s.heads, s.deprels, s.upos) for s in a] == [(s.forms, s.heads, s.deprels, s.upos) for s in b]
    print(f"format=raw and nparse.spacy.load give the same words, heads, labels and tags: {same} "
          f"({len(a)} and {len(b)} sentences)")  # fmt: skip


def processes(parts: list[str], pipelines: dict, args) -> None:
    """``nlp.pipe`` with one process against ``args.n_process``: seconds, words/s, the same Docs."""
    print(f"{len(parts)} paragraphs; best of {args.repeats} alternating runs, 1 torch thread per process")
    print(f"| pipeline | n_process=1 (s) | n_process={args.n_process} (s) | speed-up | same Docs |")
    print("|---|---|---|---|---|")
    for name, nlp in pipelines.items():
        best: dict[int, float] = {}
        docs: dict[int, list] = {}
        for _ in range(args.repeats):
            for n in (1, args.n_process):
                start = time.perf_counter()
                docs[n] = [
                    [(t.text, t.head.i, t.dep_, t.pos_) for t in d]
                    for d in nlp.pipe(parts, n_process=n, batch_size=args.batch_size)
                ]
                best[n] = min(best.get(n, 1e9), time.perf_counter() - start)
        same = docs[1] == docs[args.n_process]
        print(f"| {name} | {best[1]:.2f} | {best[args.n_process]:.2f} | {best[1] / best[args.n_process]:.2f}x | {same} |",
              flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
