"""Pages as a person sees them: headless Chromium opens the error-analysis report of a model's
EWT dev predictions and a Jupyter-style rendering of a non-projective sentence; no console
message, the expected elements there after the page's script ran, and a screenshot saved (to
``$NPARSE_SCREENSHOTS`` when set, else the test's temporary folder).

Chromium is Debian's ``chromium`` package (``.ci/run`` installs it); without it these tests are
skipped with the install command."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from nparse import evaluate as evaluate_cli
from nparse.io.conllu import read_conllu
from nparse.trees import is_projective

from .conftest import EWT_DEV

BROWSER = next((shutil.which(b) for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None)
pytestmark = [
    pytest.mark.slow,  # it runs a command (pytest -m 'not slow' leaves it out)
    pytest.mark.skipif(
        BROWSER is None,
        reason="no headless Chromium: apt-get install chromium (Debian's package) to run the browser tests",
    ),
]
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--hide-scrollbars",
]  # fmt: skip


def browse(url: str, profile: Path, *extra: str) -> subprocess.CompletedProcess:
    cmd = [str(BROWSER), *FLAGS, f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0", *extra, url]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=180)


def open_page(path: Path, tmp: Path, name: str, fragment: str = "", height: int = 2400) -> str:
    """The DOM of the page after its scripts ran; fails on any console message. Saves a screenshot."""
    url = path.resolve().as_uri() + fragment
    dom = browse(url, tmp / "profile-dom", "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    console = [line for line in dom.stderr.splitlines() if ":CONSOLE" in line]
    assert not console, console
    shots = Path(os.environ.get("NPARSE_SCREENSHOTS", tmp))
    shots.mkdir(parents=True, exist_ok=True)
    shot = shots / f"{name}.png"
    proc = browse(url, tmp / "profile-shot", f"--screenshot={shot}", f"--window-size=1280,{height}")
    assert proc.returncode == 0 and shot.stat().st_size > 20_000, proc.stderr[-2000:]
    return dom.stdout


def test_the_error_report_opens_with_its_sections_and_filter(tiny_run, tmp_path):
    report = tmp_path / "report.html"
    pred = tiny_run / "dev.pred.conllu"
    assert evaluate_cli.main([f"gold={EWT_DEV}", f"pred={pred}", f"pred2={pred}", f"report={report}"]) == 0
    dom = open_page(report, tmp_path, "report")
    for section in ("scores", "comparison", "by-length", "by-distance", "by-label", "by-upos", "by-projectivity",
                    "label-scores", "confusion", "analysis", "worst"):  # fmt: skip
        assert f'id="{section}"' in dom, section
    figures = re.findall(r'<figure class="worst"[^>]*>', dom)
    assert len(figures) == 60
    assert dom.count('class="nparse-chart"') == 5 and dom.count('class="nparse-tree"') == 2 * 60
    shown = re.search(r'<span id="shown">(\d+)</span>', dom)
    assert shown and int(shown[1]) == 60  # the script ran: every sentence shown without a filter
    # A label in the link filters the sentences to those with an error on it.
    dom = open_page(report, tmp_path, "report-nsubj", "#label=nsubj", height=1200)
    hidden = re.findall(r'<figure class="worst" data-labels="([^"]*)" style="display: none;">', dom)
    visible = re.findall(r'<figure class="worst" data-labels="([^"]*)"(?: style="")?>', dom)
    assert hidden and visible and all("nsubj" not in h.split() for h in hidden)
    assert all("nsubj" in v.split() for v in visible)
    assert re.search(r'<span id="shown">(\d+)</span>', dom)[1] == str(len(visible))  # type: ignore[index]


def test_a_non_projective_sentence_renders_as_in_jupyter(tmp_path):
    sent = next(s for s in read_conllu(EWT_DEV) if not is_projective(s.heads) and 10 <= len(s) <= 18)
    page = tmp_path / "jupyter.html"
    html = sent._repr_html_()  # what a notebook cell shows for a Sentence
    page.write_text(f'<!DOCTYPE html><html><head><meta charset="utf-8"></head><body>{html}</body></html>', "utf-8")
    dom = open_page(page, tmp_path, "jupyter-nonprojective", height=500)
    assert dom.count("<svg") == 1 and 'class="nparse-scroll"' in dom
    assert 'stroke-dasharray="5,3"' in dom  # the crossing arcs are drawn dashed
    text = dom.replace("&amp;", "&")
    for i, form in enumerate(sent.forms[1:], 1):  # each word with its hover text: lemma, XPOS, features
        assert f">{form}<title>lemma {sent.lemmas[i]} · XPOS {sent.xpos[i]}" in text, form
