"""Issue 11, part 1: raw text to CoNLL-U (spaCy's rule-based tokenizer), rebuilt exactly."""

from __future__ import annotations

import io
import re
import subprocess
import sys

import pytest

from nparse.io import rawtext
from nparse.paths import PROJECT_ROOT

from .conftest import EWT_DEV

pytestmark = pytest.mark.slow  # it trains or runs a command (pytest -m 'not slow' leaves it out)

pytest.importorskip("spacy")


def real_text() -> str:
    """EWT dev's sentences as running text: documents as paragraphs, with odd spacing added."""
    paragraphs, cur = [], []
    for line in EWT_DEV.read_text(encoding="utf-8").splitlines()[:3000]:
        if line.startswith("# newdoc") and cur:
            paragraphs.append(" ".join(cur))
            cur = []
        elif line.startswith("# text = "):
            cur.append(line[len("# text = ") :])
    paragraphs.append(" ".join(cur))
    return "  " + "\n\n".join(paragraphs).replace(". ", ".  ", 3) + "\n\t \n"


def test_raw_text_round_trip_rebuilds_the_input_exactly():
    text = real_text()
    sents = list(rawtext.iter_raw(io.StringIO(text).readlines(), "en", "story.txt"))
    assert len(sents) > 50
    assert rawtext.rebuild_text(sents) == text
    for s in sents:
        assert s.sent_id and any(line.startswith("# text = ") for line in s.lines)
        assert all(" " not in f and f for f in s.forms[1:])
    # SpaceAfter=No where the text had none: "# text" is the tokens joined by it.
    first = sents[0]
    shown = next(line for line in first.lines if line.startswith("# text = "))[len("# text = ") :]
    rebuilt = "".join(
        f + ("" if "SpaceAfter=No" in first.lines[first.word_lines[i]] or i == len(first) else " ")
        for i, f in enumerate(first.forms[1:], 1)
    )
    assert shown == rebuilt


def test_paragraphs_are_marked_as_udpipe_marks_them(monkeypatch):
    """``# newdoc`` on the first sentence, ``# newpar`` on each paragraph's first, none on a cut
    of a long paragraph: ``text_of`` finds the input's paragraphs again in the output."""
    text = real_text()
    sents = list(rawtext.iter_raw(io.StringIO(text).readlines(), "en"))
    marks = [[line for line in s.lines if line.startswith(("# newdoc", "# newpar"))] for s in sents]
    assert marks[0] == ["# newdoc", "# newpar"] and all("# newdoc" not in m for m in marks[1:])
    paragraphs = ["".join(p.split()) for p in text.split("\n\n") if p.strip()]  # without spacing
    assert sum(m == ["# newpar"] for m in marks[1:]) == len(paragraphs) - 1 > 3
    assert ["".join(p.split()) for p in rawtext.text_of(sents).split("\n\n")] == paragraphs
    monkeypatch.setattr(rawtext, "PARAGRAPH_CHARS", 300)  # one paragraph, cut into several
    lines = [f"Sentence number {i} ends here.\n" for i in range(100)]
    cut = list(rawtext.iter_raw(lines, "en"))
    assert sum(any(line == "# newpar" for line in s.lines) for s in cut) == 1 and len(cut) == 100


def test_greek_and_hungarian_tokenize_too():
    for lang, text in (("el", "Η Επιτροπή ξεκίνησε. Μία στρατηγική!"), ("hu", "Szakemberek szerint jó. Nem az.")):
        sents = list(rawtext.iter_raw([text], lang))
        assert len(sents) == 2 and rawtext.rebuild_text(sents) == text


def test_without_spacy_raw_text_asks_for_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "spacy", None)
    rawtext.pipeline.cache_clear()
    try:
        with pytest.raises(rawtext.RawTextError, match=r'pip install -e "\.\[raw\]"'):
            list(rawtext.iter_raw(["Hello there."], "en"))
    finally:
        rawtext.pipeline.cache_clear()
    monkeypatch.undo()
    with pytest.raises(rawtext.RawTextError, match="lang=xx-nope"):
        rawtext.pipeline("xx-nope")


def test_parse_cli_reads_raw_text(tiny_run, tmp_path):
    """A gold-UPOS model cannot parse raw text: the message says so at the paragraph's line."""
    story = tmp_path / "story.txt"
    story.write_text("The cat sleeps. It dreams.\n", encoding="utf-8")
    cmd = [sys.executable, "-m", "nparse.parse", f"model={tiny_run / 'best.pt'}", f"input={story}", "format=raw"]
    proc = subprocess.run(cmd, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and f"{story}:1:" in proc.stderr and "UPOS" in proc.stderr


def test_a_text_without_blank_lines_is_read_in_bounded_paragraphs():
    """Memory follows the longest paragraph: a file with no blank line is cut after the line
    that takes a paragraph past the limit, and no character is lost."""
    from nparse.io.rawtext import paragraphs

    lines = [f"Sentence number {i} ends here.\n" for i in range(200)]
    parts = list(paragraphs(lines, limit=300))
    assert len(parts) > 10
    assert "".join(text for _, text in parts) == "".join(lines)
    assert all(len(text) <= 300 + max(map(len, lines)) for _, text in parts)
    assert [start for start, _ in parts][:2] == [1, 1 + parts[0][1].count("\n")]
    blank = ["A line.\n", "\n", "\n", "Another.\n"]
    assert [text for _, text in paragraphs(blank, limit=3)] == ["A line.\n\n\n", "Another.\n"]


def test_text_a_tokenizer_leaves_out_is_refused_at_its_line_and_column():
    """Characters between tokens that are not whitespace would be written as spacing and never
    parsed: an error names where they are (a whole paragraph left out, too)."""

    def drops_some_words(text: str) -> list[list[rawtext.Token]]:
        words = [(m.group(), m.start(), m.end(), [m.group()]) for m in re.finditer(r"\S+", text)]
        kept = [w for w in words if w[0] not in ("lost", "alone")]
        return [kept] if kept else []

    with pytest.raises(rawtext.RawTextError, match=r"t.txt:2: the tokenizer skipped the text at column 5 \('lost'\)"):
        list(rawtext.iter_raw(["One two\n", "and lost\n"], "en", "t.txt", drops_some_words))
    with pytest.raises(rawtext.RawTextError, match=r"t.txt:3: .* column 1 \('alone'\)"):
        list(rawtext.iter_raw(["One two\n", "\n", "alone\n"], "en", "t.txt", drops_some_words))


def test_parse_refuses_an_unknown_format_and_points_a_long_string_at_fmt_raw(tiny_run):
    """Parser.parse checks fmt as the command does, and a string of text longer than a file name
    may be (the OS refuses it) still gets the hint, not OSError 'File name too long'."""
    import nparse

    parser = nparse.load(tiny_run / "best.pt", device="cpu")
    with pytest.raises(ValueError, match="fmt='conll': expected auto, conllu, text or raw"):
        parser.parse(str(tiny_run / "best.pt"), fmt="conll")
    with pytest.raises(FileNotFoundError, match="call parse\\(text, fmt='raw'\\)"):
        parser.parse("A sentence of words. " * 20)
