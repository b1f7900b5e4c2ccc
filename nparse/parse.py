"""Parse text with a trained model.

    python -m nparse.parse model=CKPT [input=IN] [output=OUT] [format=auto|conllu|text|raw] [lang=xx]
                           [beam_size=K] [nbest=k] [decoder=greedy|beam|mst] [device=auto|cpu|cuda]
                           [batch_size=N] [chunk=N] [scores=auto|local|raw] [temperature=T]
                           [threads=N] [segmenter=MODEL.udpipe] [output_format=auto|conllu|html]
                           [precision=auto|fp32|bf16] [workers=N|auto]

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

workers=N parses with N processes of one thread each, chunk by chunk: the output is byte for
byte that of workers=1 (the same chunks, parsed the same way, written in input order), memory
stays bounded (each worker holds its model and one chunk; at most 2N chunks are in flight), and a
failure leaves no output file. workers=auto takes SLURM_CPUS_PER_TASK when set, else the CPUs
the thread policy below would use. A file shorter than two chunks keeps one worker busy: lower
chunk= to spread it.

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
from typing import IO, TYPE_CHECKING, Iterable, Iterator

from tqdm import tqdm

from .cli import parse_args
from .io.conllu import (
    CoNLLUError,
    Sentence,
    atomic_text,
    format_sentence,
    iter_conllu,
    iter_text,
    sniff_lines,
    utf8_lines,
)
from .io.rawtext import iter_raw

if TYPE_CHECKING:
    from .api import Parser
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
            "workers": "1",
        },
        usage=__doc__,
    )
    from .api import MissingPOSError, Parser

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
            job = ChunkJob(str(args["model"]), args["device"] or "auto", str(args["precision"]), settings, bool(nbest), html)
            workers = _workers(args["workers"])
            start = time.perf_counter()
            results: Iterator[tuple[str, int, int]]
            if workers == 1:
                job.parser = parser
                results = map(job, chunks(sentences, chunk or CHUNK))
            else:
                results = parallel(job, chunks(sentences, chunk or CHUNK), workers, stack)
            for text, sents, words in results:
                write_chunk(text, out)
                n_sents += sents
                n_words += words
                bar.update(sents)
            seconds = time.perf_counter() - start if workers > 1 else job.seconds
            if html:
                out.write(page_tail())
    except (CoNLLUError, MissingPOSError, OSError, ValueError, RuntimeError) as err:
        print(f"error: {err}", file=sys.stderr)
        if args["output"] not in (None, "-"):
            print(f"error: nothing written to {args['output']}", file=sys.stderr)
        return 1
    print(
        f"parsed {n_sents} sentences ({n_words} words) in {seconds:.1f} s "
        f"on {parser.model.device}{threads_note(parser.threads, workers)}, precision {parser.precision[0]} ({parser.precision[1]}), "
        f"{'mst' if settings.decoder == 'mst' else f'beam {settings.beam_size}'}: {n_words / max(seconds, 1e-9):.0f} words/s",
        file=sys.stderr,
    )
    return 0


def threads_note(threads: tuple[int, str] | None, workers: int = 1) -> str:
    if workers > 1:
        return f" with {workers} worker processes of 1 CPU thread"
    return f" with {threads[0]} CPU threads ({threads[1]})" if threads else ""


class ChunkJob:
    """Parse one chunk of sentences and format it (CoNLL-U or HTML): what workers=1 does in this
    process and each of workers=N's processes does with its own copy of the model."""

    def __init__(self, model: str, device: str, precision: str, settings, nbest: bool, html: bool):
        self.model, self.device, self.precision = model, device, precision
        self.settings, self.nbest, self.html = settings, nbest, html
        self.parser: Parser | None = None  # loaded where the job runs (``worker_start``), or given
        self.seconds = 0.0  # parsing time (the model loaded)

    def __getstate__(self) -> dict:
        return {**self.__dict__, "parser": None}

    def __call__(self, part: list[Sentence]) -> tuple[str, int, int]:
        from .api import nbest_sentences, parsed_sentence

        assert self.parser is not None
        s = self.settings
        start = time.perf_counter()
        results = self.parser.parse_nbest(
            part, beam_size=s.beam_size, nbest=s.nbest, batch_size=s.batch_size, decoder=s.decoder,
            scores=s.scores, temperature=s.temperature,
        )  # fmt: skip
        self.seconds += time.perf_counter() - start
        if self.nbest:
            done = [t for sent, parses in zip(part, results) for t in nbest_sentences(sent, parses)]
        else:
            done = [parsed_sentence(sent, p[0]) for sent, p in zip(part, results)]
        if self.html:
            text = "".join(sentence_figure(sent) for sent in done)
        else:
            text = "".join(format_sentence(sent, sent.heads, sent.deprels) for sent in done)
        return text, len(part), sum(len(sent) for sent in part)


_JOB: ChunkJob | None = None  # a worker process's job, its model loaded once


def worker_start(job: ChunkJob) -> None:
    from .api import Parser

    global _JOB
    job.parser = Parser.load(job.model, job.device, threads=1, precision=job.precision)
    _JOB = job


def worker_parse(part: list[Sentence]) -> tuple[str, int, int]:
    assert _JOB is not None
    return _JOB(part)


def parallel(job: ChunkJob, parts: Iterable[list[Sentence]], workers: int, stack: ExitStack) -> Iterator[tuple[str, int, int]]:
    """The chunks parsed by ``workers`` processes, yielded in input order; at most 2 x workers
    chunks are read ahead (memory stays bounded)."""
    import multiprocessing
    from collections import deque
    from concurrent.futures import ProcessPoolExecutor

    pool = stack.enter_context(ProcessPoolExecutor(
        workers, mp_context=multiprocessing.get_context("spawn"), initializer=worker_start, initargs=(job,)
    ))  # fmt: skip
    pending: deque = deque()
    for part in parts:
        pending.append(pool.submit(worker_parse, part))
        if len(pending) >= 2 * workers:
            yield pending.popleft().result()
    while pending:
        yield pending.popleft().result()


def _workers(value: str | None) -> int:
    """workers=N, or auto: SLURM_CPUS_PER_TASK, else the CPUs the thread policy would use."""
    if value in (None, "", "1"):
        return 1
    if value == "auto":
        from .runtime import choose_threads

        return max(1, choose_threads(None)[0])
    if not str(value).isdigit() or int(value) < 1:
        raise ValueError(f"workers={value}: expected a positive integer or auto")
    return int(value)


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


def write_chunk(text: str, out: IO[str]) -> None:
    """One parsed chunk onto the output (a file written atomically, or standard output)."""
    out.write(text)


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
