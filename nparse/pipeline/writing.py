"""Writing a parse: CoNLL-U, or one HTML page with every sentence drawn as a tree."""

from __future__ import annotations

from html import escape
from typing import IO

from ..io.conllu import Sentence
from ..viz.svg import scrollable


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
