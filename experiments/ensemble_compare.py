"""An ensemble of runs against its best member: test LAS, paired bootstrap and parsing speed.

    python experiments/ensemble_compare.py --runs runs/pat15_e100/hu_szeged_s1 runs/pat15_e100/hu_szeged_s2 \
        runs/pat15_e100/hu_szeged_s3 [--beam 1] [--repeats 3] [--threads 1] [--precision auto]

Every run's ``best.pt`` parses the test set of its treebank (written once to ``test.greedy.conllu``
or ``test.beam<K>.conllu`` in the run folder, as ``seed_table.py`` does), and so does the
ensemble of all of them (``nparse.load([...])``, written next to the first run as
``test.ensemble<N>.<decoding>.conllu``). The best member is the one with the highest test LAS
(the strictest baseline); ``p`` is the one-sided paired bootstrap over test sentences of the
ensemble against it (``nparse/eval/significance.py``). Speed: the best member and the ensemble
parse and write the test set ``--repeats`` times, interleaved, on ``--threads`` threads with the
models loaded; the median words/s is reported.
"""

from __future__ import annotations

import argparse
import io
import statistics
import time
from pathlib import Path

import torch
from common import split_path, split_sentences
from omegaconf import OmegaConf

from nparse.api import Parser
from nparse.eval.scores import score
from nparse.eval.significance import compare_files
from nparse.io.conllu import Sentence, read_conllu, write_conllu


def parse_to(parser: Parser, gold: list[Sentence], path: Path, beam: int) -> None:
    best = [p[0] for p in parser.parse_nbest(gold, beam_size=beam, decoder="beam")]
    write_conllu(gold, path, [p.heads for p in best], [p.labels for p in best])


def words_per_second(parser: Parser, gold: list[Sentence], beam: int) -> float:
    """Parse and write (to memory) the sentences once: words per second."""
    start = time.perf_counter()
    best = [p[0] for p in parser.parse_nbest(gold, beam_size=beam, decoder="beam")]
    write_conllu(gold, io.StringIO(), [p.heads for p in best], [p.labels for p in best])
    return sum(len(s) for s in gold) / (time.perf_counter() - start)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", nargs="+", type=Path, required=True)
    ap.add_argument("--beam", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--precision", default="auto")
    ap.add_argument("--samples", type=int, default=10000)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    cfg = OmegaConf.load(args.runs[0] / "config.yaml")
    gold_path = split_path(cfg.data, "test")
    gold = split_sentences(cfg.data, "test")
    decoding = "greedy" if args.beam == 1 else f"beam{args.beam}"
    members: list[tuple[Path, Parser, float, float]] = []
    for run in args.runs:
        parser = Parser.load(run / "best.pt", "cpu", threads=args.threads, precision=args.precision)
        path = run / f"test.{decoding}.conllu"
        if not path.is_file():
            parse_to(parser, gold, path, args.beam)
        pred = read_conllu(path)
        s = score(gold, [p.heads for p in pred], [p.deprels for p in pred])
        members.append((path, parser, s.uas, s.las))
    ensemble = Parser.load([r / "best.pt" for r in args.runs], "cpu", threads=args.threads, precision=args.precision)
    ens_path = args.runs[0] / f"test.ensemble{len(args.runs)}.{decoding}.conllu"
    parse_to(ensemble, gold, ens_path, args.beam)
    pred = read_conllu(ens_path)
    ens = score(gold, [p.heads for p in pred], [p.deprels for p in pred])
    best_path, best_parser, best_uas, best_las = max(members, key=lambda m: m[3])
    _, _, delta, p = compare_files(read_conllu(gold_path), [best_path], [ens_path], samples=args.samples)
    speeds: dict[str, list[float]] = {"best member": [], "ensemble": []}
    for _ in range(args.repeats):
        speeds["best member"].append(words_per_second(best_parser, gold, args.beam))
        speeds["ensemble"].append(words_per_second(ensemble, gold, args.beam))
    single, joint = (statistics.median(speeds[k]) for k in ("best member", "ensemble"))
    print(f"treebank {cfg.data.name}, {decoding}, precision {ensemble.precision[0]}, {args.threads} thread(s)")
    print("| model | test UAS | test LAS | words/s |")
    print("|---|---|---|---|")
    for path, _, uas, las in members:
        print(
            f"| {path.parent.name} | {uas:.2f} | {las:.2f} | {single:.0f} |"
            if path == best_path
            else f"| {path.parent.name} | {uas:.2f} | {las:.2f} | |"
        )
    print(f"| ensemble of {len(members)} | {ens.uas:.2f} | {ens.las:.2f} | {joint:.0f} |")
    print(
        f"ensemble - best member ({best_path.parent.name}): {delta:+.2f} LAS, p = {p:.4f}; speed {joint / single:.2f}x"
    )


if __name__ == "__main__":
    main()
