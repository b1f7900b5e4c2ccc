"""Arms of a comparison over seeds: mean and sd of dev/test LAS, greedy and with a beam, and the
paired bootstrap against a baseline arm.

    python experiments/seed_table.py --arms hinge=runs/hinge xent=runs/xent [--baseline hinge]
                               [--beam 8] [--threads 1] [--samples 10000]

An arm is a folder of runs named ``<data>_s<seed>`` (``experiments/seed_runs.py`` writes them). For
every treebank and arm, each run's ``best.pt`` parses dev and test greedily and with a beam of
``--beam`` with the model's own scores (``decoder.scores=auto``: local scores at the temperature
fitted on dev for greedily trained models, what ``trainer.global_scores`` says for global ones),
written once to ``{dev,test}.{greedy,beam<K>}.conllu`` in the run folder; the table gives the
mean and sd over seeds of their LAS (and test UAS), the epochs trained and the best dev epoch
(means over seeds), and the wall time of training with its dev evaluations (train.log). ``p``
is the one-sided paired bootstrap on the pooled test sets (seed i of the arm paired with seed i of the baseline, same decoding;
``nparse/eval/significance.py``); ``beam - greedy`` is the same test within an arm.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections import defaultdict
from pathlib import Path

import torch
from common import SPLITS, mean_sd, split_path, split_sentences
from omegaconf import OmegaConf

from nparse.api import Parser
from nparse.eval.scores import score
from nparse.eval.significance import compare_files
from nparse.io.conllu import read_conllu, write_conllu


def predictions(run: Path, beam: int) -> dict[str, tuple[Path, float, float]]:
    """(prediction file, LAS, UAS) of dev and test parsed by the run's best.pt with a beam of
    ``beam`` (1: greedy) and the model's own scores."""
    cfg = OmegaConf.load(run / "config.yaml")
    parser = None
    out = {}
    name = "greedy" if beam == 1 else f"beam{beam}"
    for split in SPLITS:
        path = run / f"{split}.{name}.conllu"
        gold = split_sentences(cfg.data, split)
        if not path.is_file():
            parser = parser or Parser.load(run / "best.pt", "cpu")
            best = [p[0] for p in parser.parse_nbest(gold, beam_size=beam, decoder="beam")]
            write_conllu(gold, path, [p.heads for p in best], [p.labels for p in best])
        pred = read_conllu(path)
        scores = score(gold, [s.heads for s in pred], [s.deprels for s in pred])
        out[split] = (path, scores.las, scores.uas)
    return out


def training(run: Path, metrics: dict) -> tuple[int, int, float | None]:
    """Epochs trained, the best dev epoch and the wall time in minutes (train.log's first to
    last line: the epochs and their dev evaluations; None for a run copied without its log)."""
    if not (run / "train.log").is_file():
        return len(metrics["epochs"]), int(metrics["best"]["epoch"]), None
    stamps = [line[1:24] for line in (run / "train.log").read_text().splitlines() if line.startswith("[20")]
    first, last = (time.mktime(time.strptime(s[:19], "%Y-%m-%d %H:%M:%S")) for s in (stamps[0], stamps[-1]))
    return len(metrics["epochs"]), int(metrics["best"]["epoch"]), (last - first) / 60


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--arms", nargs="+", required=True, help="NAME=FOLDER")
    ap.add_argument("--baseline", help="the arm the others are tested against (default: the first)")
    ap.add_argument("--beam", type=int, default=8)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--samples", type=int, default=10000)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    arms = dict(a.rsplit("=", 1) for a in args.arms)  # a name may hold "=", a folder does not
    for arm, folder in arms.items():
        if not Path(folder).is_dir():
            raise SystemExit(f"--arms {arm}={folder}: no such folder")
    baseline = args.baseline or next(iter(arms))
    # rows[(data, arm, decoding)][seed] = (dev LAS, test LAS, test prediction file, test UAS)
    rows: dict[tuple[str, str, str], dict[int, tuple[float, float, Path, float]]] = defaultdict(dict)
    trained: dict[tuple[str, str], dict[int, tuple[int, int, float]]] = defaultdict(dict)
    golds: dict[str, Path] = {}
    for arm, folder in arms.items():
        for run in sorted(Path(folder).glob("*_s*")):
            if not (run / "metrics.json").is_file():
                continue
            data, seed = run.name.rsplit("_s", 1)
            metrics = json.loads((run / "metrics.json").read_text())
            if "test" not in metrics:  # still training
                continue
            cfg = OmegaConf.load(run / "config.yaml")
            golds[data] = split_path(cfg.data, "test")
            trained[(data, arm)][int(seed)] = training(run, metrics)
            for k in sorted({1, args.beam}):
                got = predictions(run, k)
                rows[(data, arm, "greedy" if k == 1 else f"beam {k}")][int(seed)] = (
                    got["dev"][1], got["test"][1], got["test"][0], got["test"][2]
                )  # fmt: skip
    print(
        f"| treebank | arm | decoding | seeds | epochs (best) | wall min | dev LAS | test UAS | test LAS "
        f"| test vs {baseline} (p) | test beam vs greedy (p) |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for data in sorted(golds):
        gold = read_conllu(golds[data])
        for arm in arms:
            for decoding in ("greedy", f"beam {args.beam}") if args.beam > 1 else ("greedy",):
                got = rows.get((data, arm, decoding))
                if not got:
                    continue
                seeds = sorted(got)
                dev = [got[s][0] for s in seeds]
                test = [got[s][1] for s in seeds]
                uas = [got[s][3] for s in seeds]
                runs = [trained[(data, arm)][s] for s in seeds]
                epochs = f"{statistics.mean(r[0] for r in runs):.0f} ({statistics.mean(r[1] for r in runs):.0f})"
                walls = [r[2] for r in runs if r[2] is not None]
                wall = f"{statistics.mean(walls):.1f}" + ("" if len(walls) == len(runs) else f" ({len(walls)} logged)")
                wall = wall if walls else "not logged"
                versus = "-"
                base = rows.get((data, baseline, decoding), {})
                paired = [s for s in seeds if s in base]
                if arm != baseline and paired:
                    _, _, delta, p = compare_files(
                        gold, [base[s][2] for s in paired], [got[s][2] for s in paired], samples=args.samples
                    )  # fmt: skip
                    versus = f"{delta:+.2f} (p = {p:.4f})"
                within = "-"
                greedy = rows.get((data, arm, "greedy"), {})
                if decoding != "greedy":
                    _, _, delta, p = compare_files(
                        gold, [greedy[s][2] for s in seeds], [got[s][2] for s in seeds], samples=args.samples
                    )  # fmt: skip
                    within = f"{delta:+.2f} (p = {p:.4f})"
                print(
                    f"| {data} | {arm} | {decoding} | {','.join(map(str, seeds))} | {epochs} | {wall} | {mean_sd(dev)} "
                    f"| {mean_sd(uas)} | {mean_sd(test)} "
                    f"| {versus} | {within} |"
                )


if __name__ == "__main__":
    main()
