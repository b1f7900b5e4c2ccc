"""``python -m nparse.segmenter``: train a segmenter on a treebank (``nparse/io/segmenter.py``),
report its dev scores and optionally attach it to a parser's checkpoint."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from .cli import parse_args
from .io.conllu import read_conllu
from .io.segmenter import Segmenter, train
from .training.segmenting import SEGMENTATION, raw_scores
from .io import segmenter as _segmenter

USAGE = _segmenter.__doc__ or ""


def main(argv: list[str] | None = None) -> int:
    args = parse_args(
        argv, required=("train", "out"), optional={"dev": None, "epochs": "20", "attach": None}, usage=USAGE
    )
    train_path, out, dev, attach_to = str(args["train"]), str(args["out"]), args["dev"], args["attach"]
    try:
        start = time.perf_counter()
        model = train(train_path, dev, f"epochs={int(str(args['epochs']))}")
        Path(out).write_bytes(model)
        print(f"segmenter trained in {time.perf_counter() - start:.0f} s: {out}", file=sys.stderr)
        if attach_to:
            from .checkpoint import attach_segmenter

            attach_segmenter(attach_to, model)
            print(f"attached to {attach_to}", file=sys.stderr)
        if dev:
            scores = raw_scores(read_conllu(dev), "xx", Segmenter(out), None)
            print(" ".join(f"{k} {scores[k]:.2f}" for k in SEGMENTATION))
    except (OSError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
