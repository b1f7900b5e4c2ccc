"""Reading the input of a parse in chunks: CoNLL-U blocks (read where they are parsed), plain
text (one sentence of tokens per line) or raw text (split and tokenized), ``chunk`` sentences at a
time so that memory is bounded by the chunk, not the file; errors name ``file:line``."""

from __future__ import annotations

import shutil
import sys
import tempfile
from contextlib import ExitStack
from dataclasses import dataclass
from itertools import islice
from typing import IO, Iterable, Iterator, TypeVar

from ..io.conllu import CoNLLUError, Sentence, build_sentence

CHUNK = 4096  # default sentences read, parsed and written at a time (chunk=N): bounds memory


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


def first_line(part: Part) -> int:
    """The file line of a part's first sentence in file order."""
    if isinstance(part, ConlluChunk):
        return min(start for start, _ in part.blocks)
    return min(sent.line for sent in part)
