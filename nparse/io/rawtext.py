"""Raw text to CoNLL-U: sentence splitting and tokenization with spaCy's rule-based tokenizer.

spaCy's blank pipelines (``spacy.blank(lang)`` plus its ``sentencizer``) need no model download,
run offline and cover several dozen languages, English, Greek and Hungarian included; the
tokenizer keeps every character of the input, so the text can be rebuilt. spaCy is an optional
extra: ``pip install -e ".[raw]"``.

The input is read paragraph by paragraph (a paragraph ends at a blank line), so memory follows
the longest paragraph, not the file; a paragraph is also cut after the line that takes it past
``PARAGRAPH_CHARS`` characters (a file with no blank lines is not read whole; a sentence that
crosses such a cut is split there, once per million characters at most). Every sentence gets
``# sent_id`` and ``# text`` comments (``# text``: its tokens joined by one space where the
input had any whitespace); the first sentence of each paragraph gets ``# newpar`` (and the
file's first, ``# newdoc`` before it), as UDPipe writes them, so ``text_of`` finds the paragraphs
again. MISC records the whitespace exactly: ``SpaceAfter=No`` where none followed a token,
``SpacesAfter=`` where it was not a single space, and ``SpacesBefore=`` on a paragraph's first
token for whitespace before it; both are written with ``\\s`` (space),
``\\t``, ``\\n``, ``\\r`` and ``\\uXXXX`` for other whitespace. ``rebuild_text`` inverts this exactly.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Callable, Iterable, Iterator

from .conllu import Sentence, build_sentence

INSTALL = 'pip install -e ".[raw]"'
PARAGRAPH_CHARS = 1_000_000  # longest paragraph read at once (see the module docstring)
ESCAPES = {" ": "\\s", "\t": "\\t", "\n": "\\n", "\r": "\\r"}


class RawTextError(ValueError):
    """Raw text cannot be read (no tokenizer installed, unknown language)."""


@lru_cache(maxsize=8)
def pipeline(lang: str) -> Any:
    """spaCy's blank pipeline for ``lang`` with a rule-based sentencizer."""
    try:
        import spacy
    except ImportError:
        raise RawTextError(f"format=raw needs spaCy's tokenizer: {INSTALL}") from None
    try:
        nlp = spacy.blank(lang)
    except Exception as err:  # spaCy raises ImportError or its own errors for unknown codes
        raise RawTextError(f"lang={lang}: spaCy has no tokenizer for this language code ({err})") from None
    nlp.add_pipe("sentencizer")
    nlp.max_length = 10**8  # one paragraph at a time; the blank pipeline holds no large buffers
    return nlp


def escape(space: str) -> str:
    return "".join(ESCAPES.get(ch, f"\\u{ord(ch):04x}") for ch in space)


def unescape(value: str) -> str:
    back = {v: k for k, v in ESCAPES.items()}
    return re.sub(r"\\(u[0-9a-f]{4}|[stnr])", lambda m: back.get("\\" + m[1]) or chr(int(m[1][1:], 16)), value)


def paragraphs(lines: Iterable[str], limit: int | None = None) -> Iterator[tuple[int, str]]:
    """(first line number, text) of each paragraph: its lines plus the blank lines after it (and,
    for the first, those before it), so that every character of the input is in one paragraph.
    A paragraph longer than ``limit`` characters (default ``PARAGRAPH_CHARS``) ends after the
    line that takes it past the limit."""
    limit = PARAGRAPH_CHARS if limit is None else limit
    buf: list[str] = []
    start, has_text, in_gap, size = 1, False, False, 0
    for lineno, line in enumerate(lines, 1):
        blank = not line.strip()
        if not blank and (in_gap or (size > limit and has_text)):  # a new paragraph
            yield start, "".join(buf)
            buf, start, has_text, in_gap, size = [], lineno, False, False, 0
        in_gap = in_gap or (blank and has_text)
        has_text = has_text or not blank
        buf.append(line)
        size += len(line)
    if buf:
        yield start, "".join(buf)


Token = tuple[str, int, int, list[str]]  # surface form, start and end in the paragraph, its words


def spacy_sentences(lang: str) -> Callable[[str], list[list[Token]]]:
    """Sentences of tokens of a paragraph by spaCy's blank tokenizer and rule-based sentencizer
    (one word per token: it does not split multiword tokens)."""
    nlp = pipeline(lang)

    def split(text: str) -> list[list[Token]]:
        doc = nlp(text)
        return [[(t.text, t.idx, t.idx + len(t.text), [t.text]) for t in span if not t.is_space] for span in doc.sents]

    return split


def iter_raw(
    lines: Iterable[str], lang: str, path: str = "<text>", segmenter: Callable[[str], list[list[Token]]] | None = None
) -> Iterator[Sentence]:
    """Sentences of raw text (an iterable of lines with their line ends), split by ``segmenter``
    (a trained one, ``nparse/io/segmenter.py``) or else by spaCy for ``lang``."""
    split = segmenter or spacy_sentences(lang)
    count = 0
    new_par = True  # the next sentence starts a paragraph (not a cut of a long one)
    for lineno, text in paragraphs(lines):
        sentences = [tokens for tokens in split(text) if tokens]
        if not sentences:
            check_skipped(text, 0, path, lineno)
            continue
        starts = (["# newdoc"] if count == 0 else []) + (["# newpar"] if new_par else [])
        new_par = not text.splitlines()[-1].strip()  # it ended at a blank line, not at a cut
        flat = [t for tokens in sentences for t in tokens]
        after = {id(t): text[t[2] : nxt[1]] for t, nxt in zip(flat, flat[1:])}
        after[id(flat[-1])] = text[flat[-1][2] :]
        before = text[: flat[0][1]]
        check_skipped(before, 0, path, lineno, text)
        for t in flat:
            check_skipped(after[id(t)], t[2], path, lineno, text)
        for tokens in sentences:
            count += 1
            rows, shown = [], []
            k = 1
            for j, tok in enumerate(tokens):
                form, words = tok[0], tok[3]
                gap = after[id(tok)]
                spacing = spacing_misc(before if tok is flat[0] else "", gap)
                if len(words) > 1:  # a multiword token: its range line, then its words
                    rows.append(f"{k}-{k + len(words) - 1}\t{form}\t_\t_\t_\t_\t_\t_\t_\t{spacing}")
                    rows += [f"{k + m}\t{w}\t_\t_\t_\t_\t_\t_\t_\t_" for m, w in enumerate(words)]
                else:
                    rows.append(f"{k}\t{form}\t_\t_\t_\t_\t_\t_\t_\t{spacing}")
                k += len(words)
                shown.append(form + (" " if gap and j < len(tokens) - 1 else ""))
            comments = [*starts, f"# sent_id = {count}", f"# text = {''.join(shown)}"]
            starts = []
            sent = build_sentence(path, lineno, [*comments, *rows], True)
            sent.line = lineno - len(comments)  # messages about a word point at its paragraph's first line
            yield sent


def check_skipped(gap: str, at: int, path: str, lineno: int, text: str | None = None) -> None:
    """Refuse text that the tokenizer left out of every token (``gap``: the characters between
    two tokens, at offset ``at`` of the paragraph ``text``, which starts on line ``lineno``):
    written as spacing, it would never be parsed. UDPipe's tokenizer stops reading at a NUL
    character and drops the rest of the paragraph; no other character does that."""
    if not gap or gap.isspace():
        return
    start = at + next(i for i, ch in enumerate(gap) if not ch.isspace())
    text = gap if text is None else text
    line = lineno + text.count("\n", 0, start)
    column = start - (text.rfind("\n", 0, start) + 1) + 1
    nul = (
        ": it holds a NUL character (U+0000), where UDPipe's tokenizer stops reading; remove them, "
        "e.g. with tr -d '\\000'"
        if "\x00" in gap
        else ""
    )
    snippet = gap.strip()[:40]
    raise RawTextError(f"{path}:{line}: the tokenizer skipped the text at column {column} ({snippet!r}){nul}")


def spacing_misc(before: str, after: str) -> str:
    """A token's MISC for the whitespace before it (a paragraph's start) and after it."""
    misc = [f"SpacesBefore={escape(before)}"] if before else []
    if after == "":
        misc.append("SpaceAfter=No")
    elif after != " ":
        misc.append(f"SpacesAfter={escape(after)}")
    return "|".join(misc) or "_"


def misc_spacing(misc: str) -> tuple[str, str]:
    """The whitespace before and after a token as its MISC records it (``spacing_misc``'s inverse)."""
    before, spaces = misc_value(misc, "SpacesBefore"), misc_value(misc, "SpacesAfter")
    after = unescape(spaces) if spaces is not None else "" if misc_value(misc, "SpaceAfter") == "No" else " "
    return ("" if before is None else unescape(before)), after


def misc_value(misc: str, key: str) -> str | None:
    for item in misc.split("|"):
        k, _, v = item.partition("=")
        if k == key:
            return v
    return None


def rebuild_text(sentences: Iterable[Sentence]) -> str:
    """The raw text back from sentences read by ``iter_raw`` (tokens, multiword tokens by their
    surface form, and their MISC spacing)."""
    out: list[str] = []
    for sent in sentences:
        covered = 0  # last word of the latest multiword token
        for line in sent.lines:
            if line.startswith("#"):
                continue
            cols = line.split("\t")
            first, dash, last = cols[0].partition("-")
            if "." in cols[0] or (not dash and int(first) <= covered):
                continue  # an empty node, or a word of a multiword token
            if dash:
                covered = int(last)
            before, after = misc_spacing(cols[9])
            out += [before, cols[1], after]
    return "".join(out)


def text_of(sentences: Iterable[Sentence]) -> str:
    """The raw text of gold sentences, for evaluating raw-text parsing: their ``# text`` lines
    joined by a space, a blank line before each ``# newpar``/``# newdoc``."""
    paragraphs: list[list[str]] = []
    for s in sentences:
        if not paragraphs or any(line.startswith(("# newpar", "# newdoc")) for line in s.lines):
            paragraphs.append([])
        paragraphs[-1].append(next(line[len("# text = ") :] for line in s.lines if line.startswith("# text = ")))
    return "\n\n".join(" ".join(p) for p in paragraphs) + "\n"
