"""Whether a beam is biased towards long (or short) derivations: greedy against beam decoding.

    python experiments/beam_length.py RUN_OR_CHECKPOINT... [--split dev] [--beam 8]
                                [--temperatures 0.5 1 2] [--calibrate] [--save] [--tolerance 2]

For every model, the split of its own treebank is parsed greedily and with a beam of K summing
raw scores, local scores at T = 1, at the listed temperatures, and at the model's own setting
(``scores=auto``: its fitted temperature, or raw for a globally trained model). Prints UAS/LAS,
transitions per word and their ratio to greedy. ``--calibrate`` fits the
temperature on the split first (``training/calibration.py``) and ``--save`` writes it into the
checkpoint (atomically), so that later decoding uses it.

Exits with status 1 when a model's own beam setting takes more than ``--tolerance`` percent
more transitions per word than greedy (the length-bias check of issue 18).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

from common import split_sentences

from nparse import checkpoint
from nparse.api import Parser
from nparse.eval.scores import score
from nparse.io.data import encode
from nparse.systems import make_oracle
from nparse.training.calibration import calibrate


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("models", nargs="+", type=Path)
    ap.add_argument("--split", default="dev")
    ap.add_argument("--beam", type=int, default=8)
    ap.add_argument("--temperatures", type=float, nargs="*", default=[])
    ap.add_argument("--calibrate", action="store_true", help="fit the temperature on the split first")
    ap.add_argument("--save", action="store_true", help="with --calibrate: write it into the checkpoint")
    ap.add_argument("--tolerance", type=float, default=2.0, help="percent more transitions per word allowed")
    args = ap.parse_args()
    torch.set_num_threads(1)
    print("| model | decoding | UAS | LAS | transitions/word | vs greedy |")
    print("|---|---|---|---|---|---|")
    failed = []
    for path in args.models:
        path = path / "best.pt" if path.is_dir() else path
        parser = Parser.load(path, "cpu")
        config = parser.config
        assert config is not None  # a checkpoint's parser
        name = f"{config.exp_name} ({config.data.name})"
        sents = split_sentences(config.data, args.split)
        if args.calibrate:
            oracle = make_oracle(parser.model.system, config.oracle.name, **config.oracle.options)
            cal = calibrate(parser.model, oracle, [encode(s, parser.model.vocabs) for s in sents])
            print(
                f"<!-- {name}: T = {cal.temperature:.3f} (NLL per step {cal.nll:.4f}, at T=1 {cal.nll_at_1:.4f}; "
                f"{cal.steps} steps of {cal.sentences} sentences) -->"
            )
            parser = Parser(parser.model, parser.config, cal.as_dict())  # settings resolved with it
            if args.save:
                state = checkpoint.load(path, torch.device("cpu"))
                state["calibration"] = cal.as_dict()
                checkpoint.save_atomic(state, path)
        runs = [("greedy", dict(beam_size=1)), (f"beam {args.beam} raw", dict(scores="raw"))]
        runs += [
            (f"beam {args.beam} local T={t:g}", dict(scores="local", temperature=t)) for t in [1.0, *args.temperatures]
        ]
        own = parser.settings.override(beam_size=args.beam).for_model(parser.config, parser.calibration)
        own_name = f"beam {args.beam} auto ({own.scores}" + (
            f", T={own.temperature:.3f})" if own.scores == "local" else ")"
        )
        runs.append((own_name, dict(scores="auto")))
        greedy_rate = None
        for label, options in runs:
            options = {"beam_size": args.beam, **options}
            parses = parser.parse_nbest(sents, decoder="beam", **options)
            best = [p[0] for p in parses]
            s = score(sents, [p.heads for p in best], [p.labels for p in best])
            words = sum(len(x) for x in sents)
            rate = sum(p.steps for p in best) / words
            greedy_rate = greedy_rate or rate
            ratio = rate / greedy_rate
            print(f"| {name} | {label} | {s.uas:.2f} | {s.las:.2f} | {rate:.3f} | {100 * (ratio - 1):+.1f}% |")
            if label == own_name and 100 * (ratio - 1) > args.tolerance:
                failed.append(name)
    if failed:
        print(f"longer than greedy by more than {args.tolerance}%: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
