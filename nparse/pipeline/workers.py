"""Parsing chunks in worker processes (``workers=N``): each chunk batched as one process would,
its batches sent out in groups, the output put back in input order, and the error one process
would have met raised in its turn."""

from __future__ import annotations

import sys
from contextlib import ExitStack
from dataclasses import dataclass
from multiprocessing.context import BaseContext
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator

from ..io.conllu import CoNLLUError, MissingPOSError, format_sentence
from ..io.data import length_batches
from .driven import DrivenParser
from .reading import CHUNK, Part, first_line, part_lengths, part_sentences, part_subset
from .writing import sentence_figure

if TYPE_CHECKING:
    from ..decoding.settings import DecodeSettings

# A chunk's sentences are sorted and batched as one process would, and whole batches go to the
# workers in groups of about this many sentences (``sorted_groups``).
WORKER_GROUP = 512
# The most seconds the workers may go without one group of sentences coming back: then a worker
# is taken to be stuck (a lock it can never take, issue 56), the pool is killed and the parse
# stops with an error instead of waiting forever. A group takes well under a second on EWT, and
# its sentences are bounded (a 1 MB "word" is read as 50 characters).
STUCK_SECONDS = 600.0


class ChunkJob:
    """Parse one chunk of sentences and format it (CoNLL-U or HTML): what workers=1 does in this
    process and each of workers=N's processes does with its own copy of the model."""

    def __init__(self, load: Callable[[], Any], settings: "DecodeSettings", nbest: bool, html: bool):
        """``load``: makes the parser in a spawned worker (a picklable call, ``Parser.load`` with
        its arguments: the pipeline imports no front door)."""
        self.load, self.settings, self.nbest, self.html = load, settings, nbest, html
        self.parser: DrivenParser | None = None  # loaded where the job runs (``worker_start``), or given

    def __getstate__(self) -> dict:
        return {**self.__dict__, "parser": None}

    def __call__(self, part: Part) -> tuple[str, int, int]:
        sentences = part_sentences(part)
        return "".join(self.texts(sentences)), len(sentences), sum(len(s) for s in sentences)

    def texts(self, part: Part) -> list[str]:
        """The output of every sentence of ``part`` (its k best with nbest=k), in order."""
        from ..decoding.decode import nbest_sentences, parsed_sentence

        assert self.parser is not None
        sentences = part_sentences(part)
        s = self.settings
        results = self.parser.parse_nbest(
            sentences, beam_size=s.beam_size, nbest=s.nbest, batch_size=s.batch_size, decoder=s.decoder,
            scores=s.scores, temperature=s.temperature, batch_tokens=s.batch_tokens,
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
    global _JOB
    job.parser = job.load()
    job.parser.prepare()
    _JOB = job


def worker_forked(job: ChunkJob) -> None:
    """A forked worker inherits the job with its model loaded (fork passes it unpickled); it runs
    one torch thread, as every forked child does (``nparse/forks.py``)."""
    global _JOB
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
    forked. On a GPU (CUDA cannot be forked) or without fork, they are spawned and load it.
    When no group comes back for ``STUCK_SECONDS``, the workers are killed and a RuntimeError
    says so: nothing waits forever on a stuck worker."""
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
        done, _ = wait(out, timeout=STUCK_SECONDS, return_when=FIRST_COMPLETED)
        if not done:
            stop_workers(pool)
            line = min(first for _, _, first in out.values())
            raise RuntimeError(
                f"no parse worker returned a group of sentences in {STUCK_SECONDS:.0f} s (one waiting from line {line} "
                "of the input): a worker is stuck, the workers were stopped (workers=1 parses in this process)"
            )
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


def stop_workers(pool: Any) -> None:
    """Kill a process pool's workers and shut it down: a stuck worker never returns, so shutting
    down alone would wait for it (``_processes`` is the executor's own table, Python 3.10-3.13)."""
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        process.kill()
    pool.shutdown(wait=False, cancel_futures=True)


def worker_count(value: str | None, on_gpu: bool = False) -> int:
    """workers=N, or auto: SLURM_CPUS_PER_TASK, else the CPUs the thread policy would use; on a
    GPU, auto is one process (spawned workers each load the model and start CUDA: on an H200,
    EWT train took 5.2 s with workers=2 against 1.6 s in one process, docs/gpus-clusters.md)."""
    if value in (None, "", "1"):
        return 1
    if value == "auto":
        if on_gpu:
            return 1
        from ..runtime import choose_threads

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
