"""Parse text with a trained model.

    python -m nparse.parse model=CKPT [input=IN] [output=OUT] [format=auto|conllu|text]
                           [device=auto|cpu|cuda] [batch_size=1024]

Input is CoNLL-U (HEAD/DEPREL are filled in, everything else is written back untouched) or
pre-tokenized plain text, one sentence per line; standard input/output when omitted.
"""

from __future__ import annotations

import io
import sys
import time

from .cli import parse_args
from .io.conllu import CoNLLUError, read_conllu, read_text, sniff_format, write_conllu


def main(argv: list[str] | None = None) -> int:
    args = parse_args(
        argv,
        required=("model",),
        optional={"input": "-", "output": "-", "format": "auto", "device": "auto", "batch_size": "1024"},
        usage=__doc__,
    )
    from .api import MissingPOSError, Parser

    try:
        if args["input"] in (None, "-"):
            text = sys.stdin.read()
            source = io.StringIO(text)
            source.name = "<stdin>"
        else:
            with open(args["input"], encoding="utf-8") as handle:
                text = handle.read()
            source = io.StringIO(text)
            source.name = args["input"]
        fmt = sniff_format(text) if args["format"] == "auto" else args["format"]
        if fmt not in ("conllu", "text"):
            raise ValueError(f"format must be auto, conllu or text, not {fmt!r}")
        sentences = read_conllu(source, allow_missing_heads=True) if fmt == "conllu" else read_text(source)
        parser = Parser.load(args["model"], args["device"] or "auto")
        start = time.perf_counter()
        results = parser.parse_sentences(sentences, int(args["batch_size"] or 1024), progress=True)
        seconds = time.perf_counter() - start
        out = sys.stdout if args["output"] in (None, "-") else open(args["output"], "w", encoding="utf-8")
        try:
            write_conllu(sentences, out, [h for h, _ in results], [lab for _, lab in results])
        finally:
            if out is not sys.stdout:
                out.close()
    except (CoNLLUError, MissingPOSError, OSError, ValueError, RuntimeError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    words = sum(len(s) for s in sentences)
    print(
        f"parsed {len(sentences)} sentences ({words} words) in {seconds:.1f} s "
        f"on {parser.model.device}: {words / max(seconds, 1e-9):.0f} words/s",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
