"""CoNLL-U input and output.

A line is split on tabs only (a FORM may hold spaces) and only the columns a parser reads are
interpreted: ID (a word, a multiword range ``3-4`` or an empty node ``5.1``) and HEAD (``_`` or
an integer), by the rules of the CoNLL-U format. Every raw line of a sentence is kept, so that
writing a parse changes nothing but HEAD and DEPREL of syntactic words: comments, multiword-token
lines and empty nodes go back out byte for byte. Every problem in the input is reported with the
file and line it was found on.
"""

from __future__ import annotations

import io
import os
import re
import stat
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Iterable, Iterator

from ..trees import tree_problem  # noqa: F401  (re-exported: readers check trees with it)

ROOT_FORM = "<root>"


class CoNLLUError(ValueError):
    """Malformed input; the message starts with ``file:line:``."""

    def __init__(self, path: str, line: int, message: str):
        super().__init__(f"{path}:{line}: {message}")
        self.path, self.line, self.message = path, line, message

    def __reduce__(self):  # rebuilt from its parts when it crosses processes (parse workers=N)
        return (type(self), (self.path, self.line, self.message))


class MissingPOSError(ValueError):
    """The model reads POS tags the input does not have (``line``: where, in its file)."""

    def __init__(self, message: str, line: int | None = None):
        super().__init__(message)
        self.line = line

    def __reduce__(self):  # rebuilt with its line when it crosses processes (parse workers=N)
        return (type(self), (str(self), self.line))


@dataclass
class Sentence:
    """One sentence: its raw lines plus the syntactic words, indexed from 1 (0 is the root).

    ``heads[i]``/``deprels[i]`` are the annotation of word i (``heads[0] == -1``); a missing HEAD
    (``_``) is -1. ``word_lines[i]`` is the index in ``lines`` of word i's line.
    """

    lines: list[str]
    forms: list[str]
    upos: list[str]
    xpos: list[str]
    heads: list[int]
    deprels: list[str]
    word_lines: list[int]
    path: str = "<string>"
    line: int = 1  # line number of the sentence's first line
    sent_id: str | None = None
    score: float | None = None  # derivation score of an n-best parse
    tagged: bool = False  # upos holds predicted tags (a model with a tagger): written to the UPOS column
    lemmas: list[str] = field(default_factory=list)  # the LEMMA column (index 0: the root), as read
    feats: list[str] = field(default_factory=list)  # the FEATS column (index 0: the root), as read
    analysed: bool = False  # lemmas, xpos and feats hold predictions (a model with ``model.analysis``): written out

    def __len__(self) -> int:
        return len(self.forms) - 1

    @property
    def name(self) -> str:
        """The sent_id, or ``file:line`` for sentences without one."""
        return self.sent_id or f"{self.path}:{self.line}"

    def word_line(self, i: int) -> int:
        """File line number of word i (for error messages)."""
        return self.line + self.word_lines[i]

    @property
    def tags(self) -> list[str] | None:
        """The UPOS column, None where it is empty ('_'): what pictures draw and scores count."""
        return self.upos if any(t not in ("_", "") for t in self.upos[1:]) else None

    def svg(self) -> str:
        """The sentence's tree as an SVG picture (``viz/svg.py``; words without a head have no arc;
        hovering over a word shows its lemma, XPOS and features)."""
        from ..viz.svg import tree_svg, word_notes

        notes = word_notes(self.lemmas, self.xpos, self.feats) if self.lemmas else None
        return tree_svg(self.forms, self.heads, self.deprels, self.tags, title=self.name, notes=notes)

    def _repr_svg_(self) -> str:  # Jupyter shows the tree
        return self.svg()

    def _repr_html_(self) -> str:  # Jupyter prefers HTML: the tree, scrolling sideways when wide
        from ..viz.svg import scrollable

        return scrollable(self.svg())


WORD_ID = re.compile(r"0|[1-9][0-9]*")
RANGE_ID = re.compile(r"([1-9][0-9]*)-([1-9][0-9]*)")
EMPTY_ID = re.compile(r"([0-9]+)\.([1-9][0-9]*)")
INTEGER = re.compile(r"0|-?[1-9][0-9]*")


def parse_id(text: str) -> int | tuple[int, str, int] | None:
    """A word ID as an int, a multiword range as ``(first, "-", last)``, an empty node as
    ``(word, ".", k)``; None for anything else."""
    if text.isascii() and text.isdigit() and (text[0] != "0" or text == "0"):  # the common case, no regex
        return int(text)
    if WORD_ID.fullmatch(text):
        return int(text)
    if m := RANGE_ID.fullmatch(text):
        return (int(m[1]), "-", int(m[2]))
    if m := EMPTY_ID.fullmatch(text):
        return (int(m[1]), ".", int(m[2]))
    return None


def build_sentence(path: str, start: int, lines: list[str], allow_missing_heads: bool) -> Sentence:
    """A sentence from its lines (comments first, then token lines), the first at line ``start``
    of ``path``; malformed lines raise ``CoNLLUError`` at their line. ``allow_missing_heads``:
    HEAD ``_`` reads as -1 (input to parse) instead of being refused (a gold tree)."""
    forms, upos, xpos, heads, deprels, word_lines = [ROOT_FORM], ["<root>"], ["<root>"], [-1], ["_"], [0]
    lemmas, feats = [ROOT_FORM], ["_"]
    sent_id = None
    seen_tokens = False
    next_range_end = 0  # last word covered by the latest multiword token
    range_line = 0  # the line of that multiword token
    for k, raw in enumerate(lines):
        lineno = start + k
        if raw.startswith("#"):
            if seen_tokens:
                raise CoNLLUError(path, lineno, "comment line inside the token lines of a sentence")
            key, _, value = raw[1:].partition("=")
            if key.strip() == "sent_id":
                sent_id = value.strip()
            continue
        seen_tokens = True
        cols = raw.split("\t")
        bom = (
            " (the line starts with a byte-order mark, U+FEFF: files joined with cat?)"
            if raw.startswith("\ufeff")
            else ""
        )
        if len(cols) != 10:
            raise CoNLLUError(path, lineno, f"expected 10 tab-separated columns, found {len(cols)}{bom}")
        tid = parse_id(cols[0])
        n = len(forms) - 1
        if isinstance(tid, int):
            if tid < 1:
                raise CoNLLUError(path, lineno, f"word ID {tid}: IDs start at 1 (0 is the root)")
            if tid != n + 1:
                what = "duplicate" if tid <= n else "non-consecutive"
                raise CoNLLUError(path, lineno, f"{what} word ID {tid} (expected {n + 1})")
            if cols[6] == "_":
                if not allow_missing_heads:
                    raise CoNLLUError(path, lineno, "HEAD is '_' (a gold tree is required here)")
                head = -1
            elif not (cols[6].isascii() and cols[6].isdigit() and cols[6][0] != "0") and not INTEGER.fullmatch(cols[6]):
                raise CoNLLUError(path, lineno, f"HEAD {cols[6]!r} is not an integer")
            elif cols[6].startswith("-"):
                raise CoNLLUError(path, lineno, f"HEAD {cols[6]} is negative")
            else:
                head = int(cols[6])
            forms.append(cols[1])
            lemmas.append(cols[2])
            upos.append(cols[3])
            xpos.append(cols[4])
            feats.append(cols[5])
            heads.append(head)
            deprels.append(cols[7])
            word_lines.append(k)
        elif isinstance(tid, tuple) and len(tid) == 3 and tid[1] == "-":
            first, last = tid[0], tid[2]
            if first <= next_range_end:
                raise CoNLLUError(
                    path,
                    lineno,
                    f"multiword token {cols[0]} overlaps the one on line {range_line} (up to word {next_range_end})",
                )
            if last <= first:
                raise CoNLLUError(path, lineno, f"multiword token {cols[0]}: a range spans two words or more")
            if first != n + 1:
                raise CoNLLUError(path, lineno, f"multiword token {cols[0]} out of order (next word is {n + 1})")
            next_range_end, range_line = last, lineno
        elif isinstance(tid, tuple) and len(tid) == 3 and tid[1] == ".":
            if tid[0] != n:
                raise CoNLLUError(path, lineno, f"empty node {cols[0]} out of order (after word {n})")
        else:
            raise CoNLLUError(path, lineno, f"bad ID {cols[0]!r}{bom}")
    n = len(forms) - 1
    if n == 0:
        if all(line.startswith("#") for line in lines):
            raise CoNLLUError(
                path, start, "comment lines followed by no words (a sentence's comments come right before its words)"
            )
        raise CoNLLUError(path, start, "sentence without words")
    if next_range_end > n:
        raise CoNLLUError(
            path, range_line, f"multiword token reaches word {next_range_end} but the sentence has {n} words"
        )
    for i in range(1, n + 1):
        if heads[i] > n:
            raise CoNLLUError(path, start + word_lines[i], f"HEAD {heads[i]} out of range (sentence has {n} words)")
    return Sentence(
        lines, forms, upos, xpos, heads, deprels, word_lines, path, start, sent_id, lemmas=lemmas, feats=feats
    )


def decode_utf8(data: bytes, path: str) -> str:
    """The text of a file's bytes (a leading byte-order mark dropped); invalid UTF-8 is reported
    as ``file:line:`` with the byte and its column (see ``utf8_lines``)."""
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError:
        return "".join(utf8_lines(io.BytesIO(data), path))  # raises, at the bad line


def utf16_hint(data: bytes) -> str:
    """A hint for the commonest wrong encoding, recognised by its byte-order mark."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return " (the file looks UTF-16 encoded: convert it to UTF-8, e.g. iconv -f UTF-16 -t UTF-8)"
    return ""


def read_utf8(path: str | Path) -> str:
    """A UTF-8 text file (see ``decode_utf8``)."""
    return decode_utf8(Path(path).read_bytes(), str(path))


def utf8_lines(handle: IO[bytes], path: str) -> Iterator[str]:
    """The lines of a binary stream, decoded one at a time (memory bounded by the longest line):
    a leading byte-order mark dropped, invalid UTF-8 reported as ``file:line:`` like ``decode_utf8``."""
    for lineno, data in enumerate(handle, 1):
        try:
            line = data.decode("utf-8")
        except UnicodeDecodeError as err:
            raise CoNLLUError(
                path,
                lineno,
                f"invalid UTF-8: byte 0x{data[err.start]:02x} at column {err.start + 1}"
                + (utf16_hint(data) if lineno == 1 else ""),
            ) from None
        yield line.removeprefix("\ufeff") if lineno == 1 else line


def _text_stream(path: str | Path) -> IO[str]:
    handle = io.StringIO(read_utf8(path))
    handle.name = str(path)
    return handle


def iter_conllu(
    source: str | Path | IO[str] | Iterable[str], allow_missing_heads: bool = False, path: str | None = None
) -> Iterator[Sentence]:
    """Yield the sentences of a CoNLL-U file (path, open text stream or iterable of lines)."""
    if isinstance(source, (str, Path)):
        yield from iter_conllu(_text_stream(source), allow_missing_heads)
        return
    path = path or str(getattr(source, "name", "<stream>"))
    for start, block in iter_blocks(source, path):
        yield build_sentence(path, start, block, allow_missing_heads)


def iter_blocks(source: IO[str] | Iterable[str], path: str) -> Iterator[tuple[int, list[str]]]:
    """The sentences of CoNLL-U lines as (first line number, lines), not yet read into
    ``Sentence``s: cheap to split, so that ``build_sentence`` can run elsewhere (the parse
    workers). Line breaks and blank lines are checked here."""
    block: list[str] = []
    start = 1
    lineno = 0
    for lineno, raw in enumerate(source, 1):
        raw = raw.removesuffix("\n").removesuffix("\r")  # one line end (LF or CRLF): another CR is refused
        if "\r" in raw:
            raise CoNLLUError(path, lineno, lone_cr_message(raw))
        if raw == "":
            if block:
                yield start, block
            block = []
            start = lineno + 1
        elif raw.isspace():
            raise CoNLLUError(path, lineno, "line of whitespace only (sentence breaks must be empty lines)")
        else:
            block.append(raw)
    if block:
        yield start, block


def lone_cr_message(line: str) -> str:
    """Why a carriage return inside a line is refused: Python's text mode, the ``conllu``
    library's usual callers and most editors read it as a line break, so the sentence would be
    cut in two by every one of them, and the output we would write would carry it on. Refusing
    is the only choice that changes no field; a file with old Mac line ends (CR only) lands here
    at its first line."""
    column = line.index("\r") + 1
    field = line[:column].count("\t")
    where = f" ({FIELD_NAMES[field]})" if "\t" in line and not line.startswith("#") and field < 10 else ""
    return (
        f"carriage return (\\r) at column {column}{where}: most readers take it for a line break; "
        "remove it, or convert CR line ends with: tr '\\r' '\\n'"
    )


FIELD_NAMES = ("ID", "FORM", "LEMMA", "UPOS", "XPOS", "FEATS", "HEAD", "DEPREL", "DEPS", "MISC")


def read_conllu(source: str | Path | IO[str], allow_missing_heads: bool = False) -> list[Sentence]:
    """All sentences of a CoNLL-U file."""
    return list(iter_conllu(source, allow_missing_heads))


def read_text(source: str | Path | IO[str]) -> list[Sentence]:
    """Pre-tokenized plain text, one sentence per line, tokens separated by whitespace."""
    return list(iter_text(source))


def iter_text(source: str | Path | Iterable[str], path: str | None = None) -> Iterator[Sentence]:
    """Yield the sentences of pre-tokenized plain text (path, text stream or iterable of lines)."""
    if isinstance(source, (str, Path)):
        yield from iter_text(_text_stream(source))
        return
    path = path or str(getattr(source, "name", "<stream>"))
    count = 0
    for lineno, raw in enumerate(source, 1):
        line = raw.removesuffix("\n").removesuffix("\r")
        if "\r" in line:  # str.split() would take it for a space and join two sentences
            raise CoNLLUError(path, lineno, lone_cr_message(line))
        tokens = line.split()
        if not tokens:
            continue
        count += 1
        lines = [f"# sent_id = {count}", "# text = " + " ".join(tokens)]
        lines += [f"{i}\t{tok}\t_\t_\t_\t_\t_\t_\t_\t_" for i, tok in enumerate(tokens, 1)]
        sent = build_sentence(path, lineno, lines, allow_missing_heads=True)
        sent.line = lineno - 2  # word i is on file line ``lineno`` for every i
        yield sent


CONLLU_COMMENTS = ("# sent_id", "# text", "# newdoc", "# newpar", "# global.columns")


def sniff_format(text: str) -> str:
    """'conllu' if the text looks like CoNLL-U anywhere, else 'text': a CoNLL-U comment
    (sent_id, text, newdoc, ...), a line starting with a word ID and a tab, or three lines in a
    row numbered 1, 2, 3 (columns split by spaces): such a file is read as CoNLL-U, so that a
    malformed line is reported at its line instead of the file being parsed as plain text."""
    return sniff_lines(text.removeprefix("\ufeff").splitlines())


def sniff_lines(lines: Iterable[str]) -> str:
    """``sniff_format`` over lines, stopping at the first sign of CoNLL-U (a file is read once
    more to the end only when it is plain text)."""
    run = 0
    empty = True
    for raw in lines:
        raw = raw.rstrip("\r\n")
        empty = empty and not raw.strip()
        if raw.startswith(CONLLU_COMMENTS):
            return "conllu"
        first = raw.split(None, 1)[0] if raw.strip() else ""
        word_id = first.replace("-", "").replace(".", "").isdigit()
        if word_id and raw.startswith(first + "\t"):
            return "conllu"
        run = run + 1 if first == str(run + 1) and len(raw.split()) >= 3 else (1 if first == "1" else 0)
        if run == 3:
            return "conllu"
    return "conllu" if empty else "text"


def with_comments(sent: Sentence, comments: list[str]) -> Sentence:
    """A copy of the sentence with comment lines added after its own comments."""
    k = next((i for i, line in enumerate(sent.lines) if not line.startswith("#")), len(sent.lines))
    lines = sent.lines[:k] + comments + sent.lines[k:]
    word_lines = [0] + [w + len(comments) for w in sent.word_lines[1:]]
    return replace(sent, lines=lines, word_lines=word_lines)


def format_sentence(sent: Sentence, heads: list[int] | None = None, deprels: list[str] | None = None) -> str:
    """The sentence as CoNLL-U text with HEAD/DEPREL of words replaced (and UPOS, when the
    sentence carries predicted tags, and LEMMA, XPOS and FEATS, when it carries a predicted
    analysis); everything else untouched."""
    lines = list(sent.lines)
    if heads is not None or deprels is not None or sent.tagged or sent.analysed:
        for i in range(1, len(sent) + 1):
            k = sent.word_lines[i]
            cols = lines[k].split("\t")
            if sent.tagged:
                cols[3] = sent.upos[i]
            if sent.analysed:
                cols[2], cols[4], cols[5] = sent.lemmas[i], sent.xpos[i], sent.feats[i]
            if heads is not None:
                cols[6] = str(heads[i])
            if deprels is not None:
                cols[7] = deprels[i]
            lines[k] = "\t".join(cols)
    return "\n".join(lines) + "\n\n"


def write_conllu(
    sentences: Iterable[Sentence],
    target: str | Path | IO[str],
    heads: Iterable[list[int]] | None = None,
    deprels: Iterable[list[str]] | None = None,
) -> None:
    """Write sentences, optionally with new HEAD/DEPREL columns (lists indexed like Sentence.heads)."""
    if isinstance(target, (str, Path)):
        with atomic_text(target) as handle:
            write_conllu(sentences, handle, heads, deprels)
        return
    sentences = list(sentences)
    hs = list(heads) if heads is not None else [None] * len(sentences)
    ds = list(deprels) if deprels is not None else [None] * len(sentences)
    for sent, h, d in zip(sentences, hs, ds, strict=True):
        target.write(format_sentence(sent, h, d))


__all__ = [
    "CoNLLUError",
    "Sentence",
    "build_sentence",
    "format_sentence",
    "iter_conllu",
    "read_conllu",
    "read_text",
    "sniff_format",
    "tree_problem",
    "with_comments",
    "write_conllu",
]


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


STREAM_PATH = re.compile(r"/dev/(stdout|stderr|fd/[0-9]+)|/proc/self/fd/[0-9]+")


def stream_fd(path: str | Path) -> int | None:
    """The file descriptor that ``/dev/stdout``, ``/dev/stderr``, ``/dev/fd/N`` or
    ``/proc/self/fd/N`` names; None for any other path."""
    text = str(path)
    if not STREAM_PATH.fullmatch(text):
        return None
    return {"/dev/stdout": 1, "/dev/stderr": 2}.get(text) or int(text.rsplit("/", 1)[1])


def is_device(path: str | Path) -> bool:
    """Whether ``path`` (links followed) is a device or pipe: written directly, never replaced."""
    real = Path(os.path.realpath(path))
    return real.exists() and not real.is_file() and not real.is_dir()


def written_directly(path: str | Path) -> bool:
    """Whether ``atomic_text`` writes ``path`` as the text comes (a stream descriptor, a device or
    a pipe), so that an error leaves what was written before it."""
    return stream_fd(path) is not None or is_device(path)


@contextmanager
def atomic_text(path: str | Path) -> Iterator[IO[str]]:
    """A UTF-8 file written next to ``path`` and renamed over it when complete: a full disk, an
    error or a kill never leaves half-written output (the temporary file is removed). A symbolic
    link is followed (the file it names is replaced, not the link, and keeps its permissions); a
    device or pipe (``/dev/null``, a FIFO) is written directly, since renaming over it would
    replace it with a file. ``/dev/stdout`` and the like are written through their descriptor,
    as the shell set it up: to a pipe, or appended to a file redirected with ``>>``."""
    fd = stream_fd(path)
    if fd is not None:
        try:
            with os.fdopen(os.dup(fd), "w", encoding="utf-8", newline="\n") as handle:
                yield handle
        except OSError as err:
            raise OSError(f"cannot write {path}: {err.strerror or err}") from None
        return
    path = Path(os.path.realpath(path))
    if is_device(path):
        try:
            with open(path, "w", encoding="utf-8", newline="\n") as handle:
                yield handle
        except OSError as err:
            raise OSError(f"cannot write {path}: {err.strerror or err}") from None
        return
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as err:
        raise OSError(f"cannot write {path}: {err.strerror}") from None
    try:
        # The replaced file's permissions, or a new file's usual ones (not mkstemp's private 0600)
        mode = stat.S_IMODE(path.stat().st_mode) if path.is_file() else 0o666 & ~_umask()
        os.fchmod(fd, mode)
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except OSError as err:
        Path(tmp).unlink(missing_ok=True)
        raise OSError(f"cannot write {path}: {err.strerror or err}") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
