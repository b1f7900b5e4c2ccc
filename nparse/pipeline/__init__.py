"""The parsing pipeline behind every front door: ``python -m nparse.parse``, ``Parser.parse_file``
and the streaming ``Parser.iter_parse`` read, parse and write through it.

Input is CoNLL-U (HEAD/DEPREL are filled in, everything else is written back untouched),
pre-tokenized plain text (one sentence per line) or raw text (split into sentences and tokens by
spaCy's rules for the model's language, or by a segmenter trained on the treebank), read
``chunk`` sentences at a time (default 4096: memory is bounded by the chunk, not the file;
``reading.py``). Each chunk is batched by length and parsed, here or in ``workers`` processes
(``workers.py``: the same batches, the output in input order, byte for byte that of one
process), and written as CoNLL-U (with ``nbest``, every sentence once per tree, best first, with
``# nbest`` and ``# score`` comments) or as one HTML page of tree pictures (``writing.py``). An
output file is written beside its destination and renamed over it at the end, so an error (a bad
input line, a full disk) leaves no half-written file; errors name ``file:line`` of the input, the
first one in input order whatever the number of workers.
"""

from __future__ import annotations

import gc
import multiprocessing
import sys
import time
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from functools import partial
from typing import IO, TYPE_CHECKING, Any, Callable, Iterator

from tqdm import tqdm

from ..io.conllu import Sentence, atomic_text, iter_blocks, iter_text, sniff_lines, utf8_lines
from ..io.rawtext import iter_raw
from ..io.segmenter import Segmenter
from ..viz.page import page_head, page_tail
from .driven import DrivenParser
from .reading import CHUNK, ConlluChunk, Part, chunks, open_input, part_sentences
from .workers import ChunkJob, parallel, worker_count
from . import writing
from .writing import output_is_html

if TYPE_CHECKING:
    from ..decoding.settings import DecodeSettings

FORMATS = ("auto", "conllu", "text", "raw")


@dataclass
class Report:
    """What a parse has done so far (kept up to date while it runs, so that a front door can say
    how much was written before an error)."""

    sentences: int = 0
    words: int = 0
    seconds: float = 0.0  # reading, parsing and writing (and starting the workers)
    detected: str | None = None  # the format format=auto chose
    workers: int = 1


def read_parts(lines: Iterator[str], fmt: str, name: str, size: int, lang: str,
               segmenter: Callable[[str], list] | None) -> Iterator[Part]:  # fmt: skip
    """The input in chunks of ``size`` sentences: CoNLL-U blocks, or read sentences."""
    if fmt == "raw":
        return chunks(iter_raw(lines, lang, name, segmenter), size)
    if fmt == "text":
        return chunks(iter_text(lines, name), size)
    return (ConlluChunk(name, c) for c in chunks(iter_blocks(lines, name), size))


def read_sentences(source: str | Path, fmt: str, lang: str, segmenter: Callable[[str], list] | None) -> list[Sentence]:
    """A whole file's sentences, read as ``parse_file`` reads it (``fmt`` auto sniffed; raw text
    split by ``segmenter``); ``Parser.parse`` reads a path with it. Errors name ``file:line``."""
    with ExitStack() as stack:
        handle, name = open_input(str(source), stack, sniff=fmt == "auto")
        if fmt == "auto":
            fmt = sniff_lines(utf8_lines(handle, name))
            handle.seek(0)
        parts = read_parts(utf8_lines(handle, name), fmt, name, CHUNK, lang, segmenter if fmt == "raw" else None)
        return [sent for part in parts for sent in part_sentences(part)]


def check_request(fmt: str, output_format: str, target: Any, source: Any = None) -> bool:
    """Refuse a format, an output format, an output folder or an input file that cannot work,
    before anything is loaded or read; returns whether the output is HTML."""
    if isinstance(source, (str, Path)) and str(source) != "-":
        open(source, "rb").close()  # a missing or unreadable input: its own error, before the model loads
    if fmt not in FORMATS:
        raise ValueError(f"format must be auto, conllu, text or raw, not {fmt!r}")
    name_out = None if target is None or not isinstance(target, (str, Path)) else str(target)
    html = output_is_html(output_format, name_out)
    if name_out not in (None, "-") and Path(name_out).is_dir():  # before parsing, not after
        raise ValueError(f"output={name_out} is a directory: name a file in it")
    return html


def parse_file(  # noqa: C901 (one pipeline, step after step)
    parser: DrivenParser,
    source: str | Path | None,
    target: str | Path | IO[str] | None,
    *,
    fmt: str = "auto",
    output_format: str = "auto",
    workers: int | str = 1,
    chunk: int | None = None,
    settings: "DecodeSettings | None" = None,
    nbest: bool = False,
    lang: str | None = None,
    segmenter: str | None = None,
    report: Report | None = None,
    progress: bool | None = None,
) -> Report:
    """Parse ``source`` with ``parser`` (an ``api.Parser``; a path; None or ``-``: standard input) into ``target`` (a path, an open
    text stream; None or ``-``: standard output).

    ``fmt``: auto, conllu, text or raw; ``output_format``: auto (html for a target named *.html),
    conllu or html; ``workers``: processes (``auto``: the CPUs the thread policy would use, one on
    a GPU); ``settings``: the decoder (default: the parser's); ``nbest``: write every tree of
    ``settings.nbest``; ``lang`` and ``segmenter`` (a .udpipe model): how raw text is split.
    Returns the ``report`` (given or new), updated as chunks are written."""
    report = report or Report()
    html = check_request(fmt, output_format, target, source)
    name_out = None if target is None or not isinstance(target, (str, Path)) else str(target)
    on_gpu = parser.model.device.type == "cuda"
    if isinstance(workers, int) and not isinstance(workers, bool) and workers >= 1:
        n = workers  # a count already checked (the command line's worker_count)
    else:
        n = worker_count(str(workers), on_gpu)
    report.workers = n
    if n > 1 and (on_gpu or "fork" not in multiprocessing.get_all_start_methods()) and parser.name == "<model>":
        raise ValueError(f"workers={n}: spawned workers load the model from its checkpoint, and this parser was "
                         "built in code (load it with nparse.load, or parse with workers=1)")  # fmt: skip
    settings = (settings or parser.settings).for_model(parser.config, parser.calibration)
    with ExitStack() as stack:
        handle, name = open_input(None if source is None else str(source), stack, sniff=fmt == "auto")
        if fmt == "auto":
            fmt = report.detected = sniff_lines(utf8_lines(handle, name))
            handle.seek(0)
        lines = utf8_lines(handle, name)
        parser.prepare()
        # The garbage collector no longer walks the objects of the loaded model: its full
        # collections while parsing did (EWT train, one thread: 5.8 -> 5.25 s), and in forked
        # workers they wrote to every inherited page (copying it; workers=2: 3.7 -> 3.2 s).
        if not gc.get_freeze_count():  # (a caller's own frozen objects stay frozen)
            gc.freeze()
            stack.callback(gc.unfreeze)
        size = chunk or CHUNK
        split = (Segmenter(segmenter) if segmenter else parser.segmenter) if fmt == "raw" else None
        parts = read_parts(lines, fmt, name, size, lang or parser.lang, split)
        if fmt != "raw" and (segmenter or lang):
            given = " and ".join(f"{key}=" for key, value in (("segmenter", segmenter), ("lang", lang)) if value)
            print(f"warning: {given} apply only to format=raw; {name} is read as {fmt}", file=sys.stderr)
        if target is None or name_out == "-":
            out: IO[str] = sys.stdout
        elif name_out is None:
            out = target  # type: ignore[assignment]  # an open text stream
        else:
            out = stack.enter_context(atomic_text(name_out))
        if html:
            out.write(page_head(f"nparse: {source if source is not None else '<stdin>'}"))
        bar = stack.enter_context(
            tqdm(unit="sent", desc="parsing", disable=None if progress is None else not progress, leave=False)
        )
        # Spawned workers load the model again: from its checkpoints, on its device, at its precision.
        load = partial(type(parser).load, parser.name, str(parser.model.device), 1, parser.precision[0])
        job = ChunkJob(load, settings, nbest, html)
        job.parser = parser
        start = time.perf_counter()
        results = map(job, parts) if n == 1 else parallel(job, parts, n, stack, size)
        for text, sents, words in results:
            writing.write_chunk(text, out)
            report.sentences += sents
            report.words += words
            report.seconds = time.perf_counter() - start
            bar.update(sents)
        report.seconds = time.perf_counter() - start
        if html:
            out.write(page_tail())
    return report
