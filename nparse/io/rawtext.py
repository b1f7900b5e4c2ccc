"""Raw text to CoNLL-U: sentence splitting and tokenization with spaCy's rule-based tokenizer.

spaCy's blank pipelines (``spacy.blank(lang)`` plus its ``sentencizer``) need no model download,
run offline and cover several dozen languages, English, Greek and Hungarian included; the
tokenizer keeps every character of the input, so the text can be rebuilt. spaCy is an optional
extra: ``pip install -e ".[raw]"``.

The input is read paragraph by paragraph (a paragraph ends at a blank line), so memory follows
the longest paragraph, not the file. Every sentence gets ``# sent_id`` and ``# text`` comments
(``# text``: its tokens joined by one space where the input had any whitespace). MISC records the
whitespace exactly: ``SpaceAfter=No`` where none followed a token, ``SpacesAfter=`` where it was
not a single space, and ``SpacesBefore=`` on a paragraph's first token for whitespace before it;
both are written with ``\\s`` (space), ``\\t``, ``\\n``, ``\\r`` and ``\\uXXXX`` for other
whitespace. ``rebuild_text`` inverts this exactly.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Iterable, Iterator

from .conllu import Sentence, _build

INSTALL = 'pip install -e ".[raw]"'
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


def paragraphs(lines: Iterable[str]) -> Iterator[tuple[int, str]]:
    """(first line number, text) of each paragraph: its lines plus the blank lines after it (and,
    for the first, those before it), so that every character of the input is in one paragraph."""
    buf: list[str] = []
    start, has_text, in_gap = 1, False, False
    for lineno, line in enumerate(lines, 1):
        blank = not line.strip()
        if not blank and in_gap:  # text after blank lines after text: a new paragraph
            yield start, "".join(buf)
            buf, start, has_text, in_gap = [], lineno, False, False
        in_gap = in_gap or (blank and has_text)
        has_text = has_text or not blank
        buf.append(line)
    if buf:
        yield start, "".join(buf)


def iter_raw(lines: Iterable[str], lang: str, path: str = "<text>") -> Iterator[Sentence]:
    """Sentences of raw text (an iterable of lines with their line ends)."""
    nlp = pipeline(lang)
    count = 0
    for lineno, text in paragraphs(lines):
        doc = nlp(text)
        words = [t for t in doc if not t.is_space]
        if not words:
            continue
        ends = [t.idx for t in words[1:]] + [len(text)]
        after = {t.i: text[t.idx + len(t.text) : nxt] for t, nxt in zip(words, ends)}
        before = text[: words[0].idx]
        for span in doc.sents:
            tokens = [t for t in span if not t.is_space]
            if not tokens:
                continue
            count += 1
            rows, shown = [], []
            for k, tok in enumerate(tokens, 1):
                misc = []
                if tok.i == words[0].i and before:
                    misc.append(f"SpacesBefore={escape(before)}")
                gap = after[tok.i]
                if gap == "":
                    misc.append("SpaceAfter=No")
                elif gap != " ":
                    misc.append(f"SpacesAfter={escape(gap)}")
                rows.append(f"{k}\t{tok.text}\t_\t_\t_\t_\t_\t_\t_\t{'|'.join(misc) or '_'}")
                shown.append(tok.text + (" " if gap and k < len(tokens) else ""))
            sent = _build(path, lineno, [f"# sent_id = {count}", f"# text = {''.join(shown)}", *rows], True)
            sent.line = lineno - 2  # messages about a word point at its paragraph's first line
            yield sent


def misc_value(misc: str, key: str) -> str | None:
    for item in misc.split("|"):
        k, _, v = item.partition("=")
        if k == key:
            return v
    return None


def rebuild_text(sentences: Iterable[Sentence]) -> str:
    """The raw text back from sentences read by ``iter_raw`` (tokens and their MISC spacing)."""
    out: list[str] = []
    for sent in sentences:
        for i in range(1, len(sent) + 1):
            misc = sent.lines[sent.word_lines[i]].split("\t")[9]
            before = misc_value(misc, "SpacesBefore")
            if before is not None:
                out.append(unescape(before))
            out.append(sent.forms[i])
            after = misc_value(misc, "SpacesAfter")
            if after is not None:
                out.append(unescape(after))
            elif misc_value(misc, "SpaceAfter") != "No":
                out.append(" ")
    return "".join(out)
