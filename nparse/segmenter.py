"""``python -m nparse.segmenter``: train a segmenter on a treebank (``nparse/io/segmenter.py``),
report its dev scores and optionally attach it to a parser's checkpoint, or attach one trained
before (``model=``)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from .cli import parse_args, usage_error
from .io.conllu import read_conllu
from .io.segmenter import Segmenter, train
from .training.segmenting import SEGMENTATION, raw_scores
from .io import segmenter as _segmenter

USAGE = _segmenter.__doc__ or ""


def main(argv: list[str] | None = None) -> int:
    args = parse_args(
        argv,
        optional={"train": None, "out": None, "dev": None, "epochs": "20", "attach": None, "model": None},
        usage=USAGE,
    )
    train_path, out, dev, attach_to, trained = (args[k] for k in ("train", "out", "dev", "attach", "model"))
    if trained is not None and (train_path is not None or out is not None or attach_to is None):
        return usage_error(
            "model= attaches a trained segmenter: give it with attach=CHECKPOINT, without train= or out=", USAGE
        )
    if trained is None and (train_path is None or out is None):
        return usage_error(
            "give train=TRAIN.conllu and out=MODEL.udpipe (or model=MODEL.udpipe attach=CHECKPOINT)", USAGE
        )
    try:
        if trained is not None:  # one segmenter for several checkpoints (the seeds of a run)
            # a clear error for a missing or broken model, before the checkpoint is touched
            Segmenter(trained, option="model")
            model, out = Path(trained).read_bytes(), trained
        else:
            start = time.perf_counter()
            model = train(str(train_path), dev, f"epochs={int(str(args['epochs']))}")
            Path(str(out)).write_bytes(model)
            print(f"segmenter trained in {time.perf_counter() - start:.0f} s: {out}", file=sys.stderr)
        if attach_to:
            from .checkpoint import attach_segmenter

            attach_segmenter(attach_to, model)
            print(f"attached to {attach_to}", file=sys.stderr)
        if dev:
            scores = raw_scores(read_conllu(dev), "xx", Segmenter(str(out)), None)
            print(" ".join(f"{k} {scores[k]:.2f}" for k in SEGMENTATION))
    except (OSError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
