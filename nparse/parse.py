"""Parse text with a trained model.

    python -m nparse.parse model=CKPT [input=IN] [output=OUT] [format=auto|conllu|text|raw] [lang=xx]
                           [beam_size=K] [nbest=k] [decoder=greedy|beam|mst] [device=auto|cpu|cuda]
                           [batch_size=N] [chunk=N] [scores=auto|local|raw] [temperature=T]
                           [threads=N] [segmenter=MODEL.udpipe] [output_format=auto|conllu|html]
                           [precision=auto|fp32|bf16]

Input is CoNLL-U (HEAD/DEPREL are filled in, everything else is written back untouched) or
pre-tokenized plain text, one sentence per line, or (format=raw) raw text, split into sentences and
tokens by spaCy's rule-based tokenizer for the model's language (lang= overrides; needs
pip install -e ".[raw]"); standard input/output when omitted.
beam_size defaults to the decoder the model was trained with (1 is greedy). With nbest=k every
sentence is written once per tree for its k best distinct trees (fewer if the beam holds fewer),
best first, each with the comments "# nbest = i" and "# score = S" (S: the derivation score, the
sum of its transition scores, plus the scores of its factors with a completion model).
The input is read, parsed and written chunk=N sentences at a time (default 4096), so memory is
bounded by the chunk, not the file; an output file is written next to its destination and renamed
over it at the end, so an error (bad input line, full disk) leaves no half-written output.
decoder=mst parses with the first-order factor of a completion model alone (Chu-Liu/Edmonds,
one root dependent); decoder=greedy is beam_size=1. scores= says what a beam sums: local
(log-softmax of the transition scores over the legal ones, divided by temperature: by default the
one fitted on dev when the model was trained), raw (the scores as global training optimises them)
or auto (the default: raw for globally trained models, local otherwise).

output_format=html (the default for an output file named *.html or *.htm) writes one
self-contained HTML page with every sentence drawn as a tree (nparse/viz/svg.py) instead of
CoNLL-U.

With format=raw, segmenter=MODEL.udpipe splits the text with a segmenter trained on the
treebank (python -m nparse.segmenter; tokens, sentences and multiword tokens as the treebank has
them) instead of spaCy's rules.

precision= is that of the encoder and tables: auto (the default) is bfloat16 where the hardware
computes it natively (a CPU with avx512_bf16 or amx_bf16, a GPU with bf16), float32 elsewhere;
the last line says which, and why.

threads=N sets torch's CPU threads; by default SLURM_CPUS_PER_TASK or OMP_NUM_THREADS when set,
else the CPUs this process may use less those other processes keep busy at start-up (see
nparse/runtime.py: more threads than free CPUs run 2-2.5x slower). The last line says which.
"""

from __future__ import annotations

import shutil
import sys
from html import escape
import tempfile
import time
from contextlib import ExitStack
from itertools import islice
from typing import IO, Iterable, Iterator

from tqdm import tqdm

from .cli import parse_args
from .io.conllu import (
    CoNLLUError,
    Sentence,
    atomic_text,
    iter_conllu,
    iter_text,
    sniff_lines,
    utf8_lines,
    write_conllu,
)
from .io.rawtext import iter_raw
from .io.segmenter import Segmenter
from .viz.page import page_head, page_tail
from .viz.svg import scrollable

CHUNK = 4096  # default sentences read, parsed and written at a time (chunk=N): bounds memory


def chunks(items: Iterable[Sentence], size: int) -> Iterator[list[Sentence]]:
    it = iter(items)
    while chunk := list(islice(it, size)):
        yield chunk


def open_input(name: str | None, stack: ExitStack) -> tuple[IO[bytes], str]:
    """A seekable binary stream of the input (standard input is spooled to a temporary file, so
    that it can be sniffed and then read, in constant memory) and its name for messages."""
    if name in (None, "-"):
        spool = stack.enter_context(tempfile.TemporaryFile())
        shutil.copyfileobj(sys.stdin.buffer, spool)
        spool.seek(0)
        return spool, "<stdin>"
    return stack.enter_context(open(name, "rb")), name


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
            "chunk": str(CHUNK),
            "lang": None,
            "scores": None,
            "temperature": None,
            "threads": None,
            "segmenter": None,
            "output_format": "auto",
            "precision": "auto",
        },
        usage=__doc__,
    )
    from .api import MissingPOSError, Parser, nbest_sentences, parsed_sentence

    n_sents = n_words = 0
    seconds = 0.0
    try:
        beam_size, nbest, batch_size, chunk, threads = (
            _positive(args, key) for key in ("beam_size", "nbest", "batch_size", "chunk", "threads")
        )
        if args["format"] not in ("auto", "conllu", "text", "raw"):
            raise ValueError(f"format must be auto, conllu, text or raw, not {args['format']!r}")
        html = output_is_html(args["output_format"], args["output"])
        with ExitStack() as stack:
            handle, name = open_input(args["input"], stack)
            fmt = args["format"]
            if fmt == "auto":
                fmt = sniff_lines(utf8_lines(handle, name))
                handle.seek(0)
            lines = utf8_lines(handle, name)
            parser = Parser.load(str(args["model"]), args["device"] or "auto", threads=threads,
                                 precision=str(args["precision"]))  # fmt: skip
            if fmt == "raw":
                segmenter = Segmenter(args["segmenter"]) if args["segmenter"] else parser.segmenter
                sentences = iter_raw(lines, args["lang"] or parser.lang, name, segmenter)
            else:
                sentences = iter_conllu(lines, True, name) if fmt == "conllu" else iter_text(lines, name)
            temperature = None if args["temperature"] is None else _number(args, "temperature")
            settings = parser.settings.override(
                decoder=args["decoder"], beam_size=beam_size, nbest=nbest or 1, batch_size=batch_size,
                scores=args["scores"], temperature=temperature,
            ).for_model(parser.config, parser.calibration)  # fmt: skip
            out = sys.stdout if args["output"] in (None, "-") else stack.enter_context(atomic_text(args["output"]))
            if html:
                out.write(page_head(f"nparse: {args['input']}"))
            bar = stack.enter_context(tqdm(unit="sent", desc="parsing", disable=None, leave=False))
            for part in chunks(sentences, chunk or CHUNK):
                start = time.perf_counter()
                results = parser.parse_nbest(
                    part, beam_size=settings.beam_size, nbest=settings.nbest, batch_size=settings.batch_size,
                    decoder=settings.decoder, scores=settings.scores, temperature=settings.temperature,
                )  # fmt: skip
                seconds += time.perf_counter() - start
                if nbest:
                    done = [t for s, parses in zip(part, results) for t in nbest_sentences(s, parses)]
                else:
                    done = [parsed_sentence(s, p[0]) for s, p in zip(part, results)]
                if html:
                    out.write("".join(sentence_figure(sent) for sent in done))
                else:
                    write_parsed(done, out)
                n_sents += len(part)
                n_words += sum(len(s) for s in part)
                bar.update(len(part))
            if html:
                out.write(page_tail())
    except (CoNLLUError, MissingPOSError, OSError, ValueError, RuntimeError) as err:
        print(f"error: {err}", file=sys.stderr)
        if args["output"] not in (None, "-"):
            print(f"error: nothing written to {args['output']}", file=sys.stderr)
        return 1
    print(
        f"parsed {n_sents} sentences ({n_words} words) in {seconds:.1f} s "
        f"on {parser.model.device}{threads_note(parser.threads)}, precision {parser.precision[0]} ({parser.precision[1]}), "
        f"{'mst' if settings.decoder == 'mst' else f'beam {settings.beam_size}'}: {n_words / max(seconds, 1e-9):.0f} words/s",
        file=sys.stderr,
    )
    return 0


def threads_note(threads: tuple[int, str] | None) -> str:
    return f" with {threads[0]} CPU threads ({threads[1]})" if threads else ""


def output_is_html(setting: str | None, output: str | None) -> bool:
    """Whether to write HTML: ``output_format=html``, or ``auto`` and an output named *.html."""
    if setting not in ("auto", "conllu", "html"):
        raise ValueError(f"output_format={setting}: choose auto, conllu or html")
    if setting == "auto":
        return str(output or "").lower().endswith((".html", ".htm"))
    return setting == "html"


def sentence_figure(sent: Sentence) -> str:
    """One parsed sentence in an HTML page: its id and text, then its tree."""
    text = next((line[9:] for line in sent.lines if line.startswith("# text = ")), " ".join(sent.forms[1:]))
    score = "" if sent.score is None else f" (score {sent.score:.4f})"
    return f"<figure><figcaption><b>{escape(sent.name)}</b>{score}: {escape(text)}</figcaption>{scrollable(sent.svg())}</figure>\n"


def write_parsed(sentences: list[Sentence], out: IO[str]) -> None:
    write_conllu(sentences, out, [s.heads for s in sentences], [s.deprels for s in sentences])


def _positive(args: dict, key: str) -> int | None:
    """An optional positive integer argument."""
    value = args.get(key)
    if value in (None, ""):
        return None
    if not value.isdigit() or int(value) < 1:
        raise ValueError(f"{key}={value}: expected a positive integer")
    return int(value)


def _number(args: dict, key: str) -> float:
    """A positive number argument."""
    try:
        value = float(args[key])
    except ValueError:
        raise ValueError(f"{key}={args[key]}: expected a positive number") from None
    if not value > 0:
        raise ValueError(f"{key}={args[key]}: expected a positive number")
    return value


if __name__ == "__main__":
    sys.exit(main())
