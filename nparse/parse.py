"""Parse text with a trained model.

    python -m nparse.parse model=CKPT [input=IN] [output=OUT] [format=auto|conllu|text|raw] [lang=xx]
                           [beam_size=K] [nbest=k] [decoder=greedy|beam|mst] [device=auto|cpu|cuda|cuda:N]
                           [batch_size=N] [chunk=N] [scores=auto|local|raw] [temperature=T]
                           [threads=N] [segmenter=MODEL.udpipe] [output_format=auto|conllu|html]
                           [precision=auto|fp32|bf16|fp16] [workers=N|auto]

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

model=CKPT1,CKPT2,... parses with an ensemble: at every parser step the models' probabilities
over the legal transitions (each at its own temperature fitted on dev) are averaged, and so are
their label and tag probabilities; the models must share the transition system and the label set.
The decoding settings are the first model's.

output_format=html (the default for an output file named *.html or *.htm) writes one
self-contained HTML page with every sentence drawn as a tree (nparse/viz/svg.py) instead of
CoNLL-U.

With format=raw, segmenter=MODEL.udpipe splits the text with a segmenter trained on the
treebank (python -m nparse.segmenter; tokens, sentences and multiword tokens as the treebank has
them) instead of spaCy's rules.

precision= is that of the encoder and tables: auto (the default) is bfloat16 where the hardware
computes it natively (a CPU with avx512_bf16 or amx_bf16, a GPU with bf16), float32 elsewhere;
the last line says which, and why.

workers=N parses with N processes of one thread each; on a CPU they are forked from this process
with the model loaded. Each chunk is batched as workers=1 batches it (by sentence length) and its
batches go to the workers in groups of about 512 sentences; the chunk is written when all are
back, in input order. So every sentence is parsed in the same batch as with workers=1, and the
output is the same (byte for byte on EWT train). Memory stays bounded (two chunks in flight,
more only to give every worker two groups, at most 2 + 2N) and a failure leaves no output file;
on standard output the chunks before the first error are written, as with workers=1.
workers=auto takes SLURM_CPUS_PER_TASK when set, else the CPUs the thread policy below would use;
on a GPU it is 1 (spawned workers each load the model and start CUDA: slower than one process
there).

The last line gives the time from the model loaded to the output written (reading, parsing and
writing; with workers=N, starting them too) and the words parsed per second.

threads=N sets torch's CPU threads; by default SLURM_CPUS_PER_TASK or OMP_NUM_THREADS when set,
else the CPUs this process may use less those other processes keep busy at start-up (see
nparse/runtime.py: more threads than free CPUs run 2-2.5x slower). The last line says which.
"""

from __future__ import annotations

import gc
import shutil
import sys
from html import escape
import tempfile
import time
from contextlib import ExitStack
from dataclasses import dataclass
from itertools import islice
from multiprocessing.context import BaseContext
from pathlib import Path
from typing import IO, TYPE_CHECKING, Iterable, Iterator, TypeVar

from tqdm import tqdm

from .cli import parse_args
from .io.conllu import (
    CoNLLUError,
    Sentence,
    atomic_text,
    build_sentence,
    format_sentence,
    iter_blocks,
    iter_text,
    sniff_lines,
    utf8_lines,
    written_directly,
)
from .io.data import length_batches
from .io.rawtext import iter_raw

if TYPE_CHECKING:
    from .api import Parser
    from .decoding.settings import DecodeSettings
from .io.segmenter import Segmenter
from .viz.page import page_head, page_tail
from .viz.svg import scrollable

CHUNK = 4096  # default sentences read, parsed and written at a time (chunk=N): bounds memory
# With workers=N, a chunk's sentences are sorted and batched as one process would, and whole
# batches go to the workers in groups of about this many sentences (``sorted_groups``).
WORKER_GROUP = 512


T = TypeVar("T")


def chunks(items: Iterable[T], size: int) -> Iterator[list[T]]:
    it = iter(items)
    while chunk := list(islice(it, size)):
        yield chunk


@dataclass
class ConlluChunk:
    """CoNLL-U sentences split but not yet read (first line number and lines of each): the job
    that parses a chunk reads it, so that with workers=N reading is spread too and a chunk
    crosses processes as plain strings (pickling read Sentences cost as much as reading them)."""

    path: str
    blocks: list[tuple[int, list[str]]]

    def __getstate__(self) -> dict:
        """A block crosses processes as one string, not a list of lines: a third of the pickling
        cost (no line holds a line break)."""
        return {"path": self.path, "blocks": [(start, "\n".join(lines)) for start, lines in self.blocks]}

    def __setstate__(self, state: dict) -> None:
        self.path = state["path"]
        self.blocks = [(start, text.split("\n")) for start, text in state["blocks"]]

    def sentences(self) -> list[Sentence]:
        try:
            return [build_sentence(self.path, start, lines, True) for start, lines in self.blocks]
        except CoNLLUError:  # a worker's group is in length order: report the first bad block in the file
            for start, lines in sorted(self.blocks, key=lambda block: block[0]):
                build_sentence(self.path, start, lines, True)
            raise

    def lengths(self) -> list[int]:
        """Words of each sentence: the ID of its last word line (a whole number: not a multiword
        token or an empty node), since words are numbered 1..n. A block numbered otherwise is
        refused when it is read (``build_sentence``), so its length only places it in a batch."""
        return [last_word_id(lines) for _, lines in self.blocks]


def last_word_id(lines: list[str]) -> int:
    for line in reversed(lines):
        head = line.partition("\t")[0]
        if head.isdigit():
            return int(head)
    return 0


Part = list[Sentence] | ConlluChunk


def part_sentences(part: Part) -> list[Sentence]:
    return part.sentences() if isinstance(part, ConlluChunk) else part


def part_lengths(part: Part) -> list[int]:
    return part.lengths() if isinstance(part, ConlluChunk) else [len(s) for s in part]


def part_subset(part: Part, indices: list[int]) -> Part:
    if isinstance(part, ConlluChunk):
        return ConlluChunk(part.path, [part.blocks[i] for i in indices])
    return [part[i] for i in indices]


def open_input(name: str | None, stack: ExitStack, sniff: bool = True) -> tuple[IO[bytes], str]:
    """A binary stream of the input and its name for messages. With ``sniff`` (format=auto reads
    the start, then rewinds), standard input and other streams that cannot be rewound
    (``input=<(zcat f.gz)``, ``/dev/stdin`` from a pipe) are spooled to a temporary file first,
    in constant memory; a named stream with a format given is read as it comes."""
    if name in (None, "-"):
        source, name = sys.stdin.buffer, "<stdin>"
    else:
        source = stack.enter_context(open(name, "rb"))
        if source.seekable() or not sniff:
            return source, name
    spool = stack.enter_context(tempfile.TemporaryFile())
    shutil.copyfileobj(source, spool)
    spool.seek(0)
    return spool, name


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
            "chunk": None,
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
    detected = None  # the format format=auto chose
    try:
        beam_size, nbest, batch_size, chunk, threads = (
            _positive(args, key) for key in ("beam_size", "nbest", "batch_size", "chunk", "threads")
        )
        if args["format"] not in ("auto", "conllu", "text", "raw"):
            raise ValueError(f"format must be auto, conllu, text or raw, not {args['format']!r}")
        html = output_is_html(args["output_format"], args["output"])
        if args["output"] not in (None, "-") and Path(args["output"]).is_dir():  # before parsing, not after
            raise ValueError(f"output={args['output']} is a directory: name a file in it")
        with ExitStack() as stack:
            handle, name = open_input(args["input"], stack, sniff=args["format"] == "auto")
            fmt = args["format"]
            if fmt == "auto":
                fmt = detected = sniff_lines(utf8_lines(handle, name))
                handle.seek(0)
            lines = utf8_lines(handle, name)
            from .runtime import pick_device

            on_gpu = pick_device(args["device"] or "auto").type == "cuda"
            workers = _workers(args["workers"], on_gpu)
            # With workers, this process runs one torch thread: its model is forked into the
            # workers, and no OpenMP thread pool may exist when a process forks.
            parser = Parser.load(str(args["model"]), args["device"] or "auto", threads=1 if workers > 1 else threads,
                                 precision=str(args["precision"]))  # fmt: skip
            parser.prepare()
            # The garbage collector no longer walks the objects of the loaded model: its full
            # collections while parsing did (EWT train, one thread: 5.8 -> 5.25 s), and in forked
            # workers they wrote to every inherited page (copying it; workers=2: 3.7 -> 3.2 s).
            gc.freeze()
            stack.callback(gc.unfreeze)
            size = chunk or CHUNK
            parts: Iterator[list[Sentence]] | Iterator[ConlluChunk]
            if fmt == "raw":
                segmenter = Segmenter(args["segmenter"]) if args["segmenter"] else parser.segmenter
                parts = chunks(iter_raw(lines, args["lang"] or parser.lang, name, segmenter), size)
            elif fmt == "text":
                parts = chunks(iter_text(lines, name), size)
            else:
                parts = (ConlluChunk(name, c) for c in chunks(iter_blocks(lines, name), size))
            if fmt != "raw" and (args["segmenter"] or args["lang"]):
                given = " and ".join(f"{key}=" for key in ("segmenter", "lang") if args[key])
                print(f"warning: {given} apply only to format=raw; {name} is read as {fmt}", file=sys.stderr)
            temperature = None if args["temperature"] is None else _number(args, "temperature")
            settings = parser.settings.override(
                decoder=args["decoder"], beam_size=beam_size, nbest=nbest or 1, batch_size=batch_size,
                scores=args["scores"], temperature=temperature,
            ).for_model(parser.config, parser.calibration)  # fmt: skip
            out = sys.stdout if args["output"] in (None, "-") else stack.enter_context(atomic_text(args["output"]))
            if html:
                out.write(page_head(f"nparse: {args['input']}"))
            bar = stack.enter_context(tqdm(unit="sent", desc="parsing", disable=None, leave=False))
            job = ChunkJob(
                str(args["model"]), args["device"] or "auto", str(args["precision"]), settings, bool(nbest), html
            )
            job.parser = parser
            start = time.perf_counter()
            results: Iterator[tuple[str, int, int]]
            if workers == 1:
                results = map(job, parts)
            else:
                results = parallel(job, parts, workers, stack, size)
            for text, sents, words in results:
                write_chunk(text, out)
                n_sents += sents
                n_words += words
                bar.update(sents)
            seconds = time.perf_counter() - start
            if html:
                out.write(page_tail())
    except (CoNLLUError, MissingPOSError, OSError, ValueError, RuntimeError) as err:
        hint = ""
        if (
            isinstance(err, CoNLLUError)
            and detected == "conllu"
            and err.message.startswith("expected 10 tab-separated")
        ):
            # (a numbered recipe, or tab-separated tokens starting with a number: "12\tApril\t2019")
            hint = (" (read as CoNLL-U, as format=auto judged it; if the file is plain text, format=text reads "
                    "one sentence of tokens per line)")  # fmt: skip
        print(f"error: {err}{hint}", file=sys.stderr)
        target = args["output"]
        if target not in (None, "-") and n_sents and written_directly(target):
            print(f"error: only the first {n_sents} sentences were written to {target} (a stream or device: "
                  "written as parsed)", file=sys.stderr)  # fmt: skip
        elif target not in (None, "-"):
            print(f"error: nothing written to {target}", file=sys.stderr)
        elif n_sents:
            print(f"error: only the first {n_sents} sentences were written to standard output", file=sys.stderr)
        return 1
    if not n_sents:
        print(f"warning: {args['input']}: no sentences to parse", file=sys.stderr)
    print(
        f"parsed {n_sents} sentences ({n_words} words) in {seconds:.1f} s (read, parsed and written, the "
        f"{model_note(parser)} loaded{'; with the workers starting' if workers > 1 else ''}) "
        f"on {parser.model.device}{threads_note(parser.threads, workers)}, precision {parser.precision[0]} ({parser.precision[1]}), "
        f"{'mst' if settings.decoder == 'mst' else f'beam {settings.beam_size}'}: {n_words / max(seconds, 1e-9):.0f} words/s",
        file=sys.stderr,
    )
    return 0


def model_note(parser) -> str:
    """What the last line says was loaded: the model, or an ensemble of N models (model=CKPT1,CKPT2,...)."""
    members = getattr(parser.model, "members", None)
    return "model" if members is None else f"ensemble of {len(members)} models"


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

    def __getstate__(self) -> dict:
        return {**self.__dict__, "parser": None}

    def __call__(self, part: Part) -> tuple[str, int, int]:
        sentences = part_sentences(part)
        return "".join(self.texts(sentences)), len(sentences), sum(len(s) for s in sentences)

    def texts(self, part: Part) -> list[str]:
        """The output of every sentence of ``part`` (its k best with nbest=k), in order."""
        from .api import nbest_sentences, parsed_sentence

        assert self.parser is not None
        sentences = part_sentences(part)
        s = self.settings
        results = self.parser.parse_nbest(
            sentences, beam_size=s.beam_size, nbest=s.nbest, batch_size=s.batch_size, decoder=s.decoder,
            scores=s.scores, temperature=s.temperature,
        )  # fmt: skip
        out = []
        for sent, parses in zip(sentences, results):
            done = nbest_sentences(sent, parses) if self.nbest else [parsed_sentence(sent, parses[0])]
            if self.html:
                out.append("".join(sentence_figure(d) for d in done))
            else:
                out.append("".join(format_sentence(d, d.heads, d.deprels) for d in done))
        return out


_JOB: ChunkJob | None = None  # a worker process's job, its model loaded once


def worker_start(job: ChunkJob) -> None:
    """A spawned worker loads the model itself."""
    from .api import Parser

    global _JOB
    job.parser = Parser.load(job.model, job.device, threads=1, precision=job.precision)
    job.parser.prepare()
    _JOB = job


def worker_forked(job: ChunkJob) -> None:
    """A forked worker inherits the job with its model loaded (fork passes it unpickled)."""
    import torch

    global _JOB
    torch.set_num_threads(1)
    _JOB = job


def worker_parse(part: Part) -> list[str]:
    assert _JOB is not None
    return _JOB.texts(part)


def sorted_groups(lengths: list[int], settings: DecodeSettings, size: int = WORKER_GROUP) -> list[list[int]]:
    """The sentences of a part (indices; ``lengths``: their words) in the batches one process
    parsing it forms (``length_batches``: by increasing length), in groups of whole batches of
    about ``size`` sentences. A group is a run of those batches, so a worker batching it again
    forms the same ones."""
    groups: list[list[int]] = [[]]
    for batch in length_batches(lengths, settings.sentences_per_batch, max_tokens=settings.batch_tokens):
        if len(groups[-1]) >= size:
            groups.append([])
        groups[-1].extend(batch)
    return [g for g in groups if g]


def first_line(part: Part) -> int:
    """The file line of a part's first sentence in file order."""
    if isinstance(part, ConlluChunk):
        return min(start for start, _ in part.blocks)
    return min(sent.line for sent in part)


@dataclass(eq=False)  # chunks are told apart by identity
class _Pending:
    """A chunk being parsed by workers: its sentences' texts as they come back."""

    lengths: list[int]
    texts: list[str]
    left: int  # groups not yet back
    error: tuple[tuple[int, int], BaseException] | None = None  # the first failure one process meets

    def failed(self, line: int, error: BaseException) -> None:
        """A group failed (``line``: its first sentence's): keep the error one process would
        meet first. One process reads the whole chunk, then checks its POS tags, then parses,
        each in file order; so a reading error comes before a missing tag, and that before any
        other, each at its earliest line (errors that know their line: at that line)."""
        from .api import MissingPOSError

        phase = 0 if isinstance(error, CoNLLUError) else 1 if isinstance(error, MissingPOSError) else 2
        at = getattr(error, "line", None)
        key = (phase, at if isinstance(at, int) else line)
        if self.error is None or key < self.error[0]:
            self.error = (key, error)

    def result(self) -> tuple[str, int, int]:
        if self.error is not None:
            raise self.error[1]
        return "".join(self.texts), len(self.lengths), sum(self.lengths)


def parallel(
    job: ChunkJob, parts: Iterable[Part], workers: int, stack: ExitStack, size: int = CHUNK
) -> Iterator[tuple[str, int, int]]:
    """The chunks (of ``size`` sentences) parsed by ``workers`` processes, each as
    ``sorted_groups`` of its sentences, yielded in input order. Chunks are read ahead while
    fewer than two are waiting, or fewer than 2 x ``workers`` groups are queued or out (and at
    most 2 + 2 x ``workers`` chunks wait: memory stays bounded by the chunk size and the
    workers); 2 x ``workers`` groups are out at a time.

    Groups go out longest first, chunk after chunk; once the input is read to its end, all
    groups not yet out go longest first, so that the file ends on its shortest groups on every
    worker (EWT train ended on its last chunk's 256 sentences on one worker, 0.07 s after the
    other). Errors come as with one process: the chunks before the first bad one are yielded,
    then its error is raised, the one nearest the file's start (a worker's, a broken pool's, or
    one found here while reading ahead).

    On a CPU the workers are forked from this process with its model loaded and prepared
    (``Parser.prepare``): spawned workers each imported torch and loaded the model, 3 s of a 7 s
    parse of EWT train. The parent runs one torch thread (``main``), so no OpenMP pool is
    forked. On a GPU (CUDA cannot be forked) or without fork, they are spawned and load it."""
    import multiprocessing
    from collections import deque
    from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait

    assert job.parser is not None
    context: BaseContext = multiprocessing.get_context("spawn")
    initializer = worker_start
    if job.parser.model.device.type == "cpu" and "fork" in multiprocessing.get_all_start_methods():
        context, initializer = multiprocessing.get_context("fork"), worker_forked
    pool = stack.enter_context(
        ProcessPoolExecutor(workers, mp_context=context, initializer=initializer, initargs=(job,))
    )
    ahead: deque[_Pending] = deque()
    queue: list[tuple[_Pending, list[int], Part, int]] = []  # chunk, group, its part, its words
    out: dict[Future, tuple[_Pending, list[int], int]] = {}  # and the group's first line
    reading = iter(parts)
    more = True
    read_error: Exception | None = None  # raised once the chunks read before it are yielded
    while True:
        while more and (len(ahead) < 2 or (len(queue) + len(out) < 2 * workers and len(ahead) < 2 * workers + 2)):
            try:
                part = next(reading, None)
            except Exception as err:  # noqa: BLE001 (any reading error, raised in its turn)
                read_error, part = err, None
            if part is None:
                more = False
                queue.sort(key=lambda task: -task[3])  # the end of the input: longest first
                break
            lengths = part_lengths(part)
            groups = sorted_groups(lengths, job.settings)
            chunk = _Pending(lengths, [""] * len(lengths), len(groups))
            ahead.append(chunk)
            queue += [(chunk, g, part_subset(part, g), sum(lengths[i] for i in g)) for g in reversed(groups)]
            if len(lengths) < size:  # the last chunk
                more = False
                queue.sort(key=lambda task: -task[3])
        while queue and len(out) < 2 * workers:
            chunk, group, part, _ = queue.pop(0)
            try:
                out[pool.submit(worker_parse, part)] = (chunk, group, first_line(part))
            except Exception as err:  # noqa: BLE001 (a broken pool: raised in its chunk's turn)
                more = False
                chunk.left -= 1
                chunk.failed(first_line(part), err)
        if ahead and not ahead[0].left:
            yield ahead.popleft().result()
            continue
        if not out:
            if read_error is not None:
                raise read_error
            return
        done, _ = wait(out, return_when=FIRST_COMPLETED)
        for future in done:
            chunk, group, line = out.pop(future)
            chunk.left -= 1
            error = future.exception()
            if error is not None:
                more = False  # no more chunks: the error is raised when its chunk's turn comes
                chunk.failed(line, error)
                later = list(ahead)[list(ahead).index(chunk) + 1 :]  # never written: not parsed
                queue = [task for task in queue if task[0] not in later]
                continue
            for i, text in zip(group, future.result()):
                chunk.texts[i] = text


def _workers(value: str | None, on_gpu: bool = False) -> int:
    """workers=N, or auto: SLURM_CPUS_PER_TASK, else the CPUs the thread policy would use; on a
    GPU, auto is one process (spawned workers each load the model and start CUDA: on an H200,
    EWT train took 5.2 s with workers=2 against 1.6 s in one process, docs/gpus-clusters.md)."""
    if value in (None, "", "1"):
        return 1
    if value == "auto":
        if on_gpu:
            return 1
        from .runtime import choose_threads

        return max(1, choose_threads(None)[0])
    if not str(value).isdigit() or int(value) < 1:
        raise ValueError(f"workers={value}: expected a positive integer or auto")
    if on_gpu and int(value) > 1:
        print(
            f"warning: workers={value} on a GPU: each worker is a new process that loads the model and starts "
            "CUDA, which costs more than it gains for one GPU (workers=auto parses in one process there)",
            file=sys.stderr,
        )
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
