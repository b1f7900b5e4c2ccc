"""Parse text with a trained model.

    python -m nparse.parse model=CKPT [input=IN] [output=OUT] [format=auto|conllu|text]
                           [beam_size=K] [nbest=k] [decoder=greedy|beam|mst] [device=auto|cpu|cuda]
                           [batch_size=N]

Input is CoNLL-U (HEAD/DEPREL are filled in, everything else is written back untouched) or
pre-tokenized plain text, one sentence per line; standard input/output when omitted.
beam_size defaults to the decoder the model was trained with (1 is greedy). With nbest=k every
sentence is written once per tree for its k best distinct trees (fewer if the beam holds fewer),
best first, each with the comments "# nbest = i" and "# score = S" (S: the derivation score, the
sum of its transition scores, plus the scores of its factors with a completion model).
decoder=mst parses with the first-order factor of a completion model alone (Chu-Liu/Edmonds,
one root dependent); decoder=greedy is beam_size=1.
"""

from __future__ import annotations

import io
import sys
import time
from dataclasses import replace

from .cli import parse_args
from .io.conllu import CoNLLUError, decode_utf8, read_conllu, read_text, read_utf8, sniff_format, write_conllu


def main(argv: list[str] | None = None) -> int:
    args = parse_args(
        argv,
        required=("model",),
        optional={
            "input": "-",
            "output": "-",
            "format": "auto",
            "device": "auto",
            "batch_size": None,
            "beam_size": None,
            "nbest": None,
            "decoder": None,
        },
        usage=__doc__,
    )
    from .api import MissingPOSError, Parser, nbest_sentences

    try:
        if args["input"] in (None, "-"):
            text = decode_utf8(sys.stdin.buffer.read(), "<stdin>")
            source = io.StringIO(text)
            source.name = "<stdin>"
        else:
            text = read_utf8(args["input"])
            source = io.StringIO(text)
            source.name = args["input"]
        fmt = sniff_format(text) if args["format"] == "auto" else args["format"]
        if fmt not in ("conllu", "text"):
            raise ValueError(f"format must be auto, conllu or text, not {fmt!r}")
        sentences = read_conllu(source, allow_missing_heads=True) if fmt == "conllu" else read_text(source)
        beam_size, nbest, batch_size = (_positive(args, key) for key in ("beam_size", "nbest", "batch_size"))
        parser = Parser.load(args["model"], args["device"] or "auto")
        start = time.perf_counter()
        decoder = args["decoder"] or parser.decoder
        if decoder == "greedy":
            beam_size = 1
        results = parser.parse_nbest(sentences, beam_size, nbest or 1, batch_size, True, decoder)
        seconds = time.perf_counter() - start
        if nbest:
            sentences_out = [t for s, parses in zip(sentences, results) for t in nbest_sentences(s, parses)]
        else:
            sentences_out = [replace(s, heads=p[0].heads, deprels=p[0].labels) for s, p in zip(sentences, results)]
        out = sys.stdout if args["output"] in (None, "-") else open(args["output"], "w", encoding="utf-8")
        try:
            write_conllu(sentences_out, out, [s.heads for s in sentences_out], [s.deprels for s in sentences_out])
        finally:
            if out is not sys.stdout:
                out.close()
    except (CoNLLUError, MissingPOSError, OSError, ValueError, RuntimeError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    words = sum(len(s) for s in sentences)
    print(
        f"parsed {len(sentences)} sentences ({words} words) in {seconds:.1f} s "
        f"on {parser.model.device}, "
        f"{'mst' if decoder == 'mst' else f'beam {beam_size or parser.beam_size}'}: {words / max(seconds, 1e-9):.0f} words/s",
        file=sys.stderr,
    )
    return 0


def _positive(args: dict, key: str) -> int | None:
    """An optional positive integer argument."""
    value = args.get(key)
    if value in (None, ""):
        return None
    if not value.isdigit() or int(value) < 1:
        raise ValueError(f"{key}={value}: expected a positive integer")
    return int(value)


if __name__ == "__main__":
    sys.exit(main())
