"""The error-analysis report of ``python -m nparse.evaluate gold=G pred=P report=report.html``:
one self-contained HTML file (inline style, inline SVG, one small inline script; nothing fetched
from the network) with the scores as the command prints them, accuracy by sentence length,
dependency distance, gold label, UPOS and projectivity (tables and bar charts), the label
confusion matrix, and the sentences with the most errors drawn gold over predicted, which a
label filter narrows down. With ``pred2=P2`` it compares two systems: where each is right and
the other wrong, accuracy side by side, and the paired bootstrap of ``significance.py``. A parse
with its own tokenization (of raw text) gets the same report over the gold words, its words
aligned as ``aligned.py`` scores them, with the tokenization and segmentation scores on top.
"""

from __future__ import annotations

from collections import Counter
from html import escape
from pathlib import Path
from typing import Sequence

import numpy as np

from ..io.conllu import Sentence, atomic_text
from ..viz.page import html_page
from ..viz.plots import bar_chart
from ..viz.svg import COLOURS, compare_svg, scrollable, tree_svg
from .aligned import LABELS, METRICS, Alignment, aligned_scores, alignment
from .analysis import (
    GROUPINGS, Word, agreement, aligned_words_of, confusion, group_scores, label_scores, words_of, worst_sentences,
)  # fmt: skip
from .scores import predicted_tags, score
from .significance import correct_per_sentence, paired_bootstrap

FILTER_SCRIPT = """
const filter = document.getElementById("label-filter");
const shown = document.getElementById("shown");
if (location.hash.startsWith("#label=")) {  // a link can name the label: report.html#label=nsubj
  filter.value = decodeURIComponent(location.hash.slice(7));
}
function apply() {
  let n = 0;
  for (const fig of document.querySelectorAll("figure.worst")) {
    const on = !filter.value || fig.dataset.labels.split(" ").includes(filter.value);
    fig.style.display = on ? "" : "none";
    n += on ? 1 : 0;
  }
  shown.textContent = n;
}
filter.addEventListener("change", () => {
  history.replaceState(null, "", filter.value ? "#label=" + encodeURIComponent(filter.value) : "#");
  apply();
});
apply();
"""


def _table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    def cell(v: object) -> str:
        return f"{v:.2f}" if isinstance(v, float) else escape(str(v))

    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{cell(v)}</td>" for v in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _grouping(name: str, systems: dict[str, list[Word]]) -> str:
    title = GROUPINGS[name][0]
    tables = {sys: {g.name: g for g in group_scores(words, name)} for sys, words in systems.items()}
    order = list(next(iter(tables.values())))
    header = [title, "words"] + [f"{m} {sys}" if len(systems) > 1 else m for sys in systems for m in ("UAS", "LAS")]
    rows = []
    for g in order:
        first = next(iter(tables.values()))[g]
        rows.append([g, first.words] + [v for t in tables.values() for v in (t[g].uas, t[g].las)])
    series: dict[str, list[float | None]] = {}
    if len(systems) == 1:
        series = {"UAS": [r[2] for r in rows], "LAS": [r[3] for r in rows]}  # type: ignore[misc]
    else:
        series = {f"LAS {sys}": [t[g].las for g in order] for sys, t in tables.items()}
    chart = bar_chart(order, series, f"accuracy by {title}")
    return (
        f'<section id="by-{name}"><h2>By {escape(title)}</h2><div class="pair">'
        f"<div>{_table(header, rows)}</div>{scrollable(chart)}</div></section>"
    )


def _of(name: str | None, k: int) -> tuple[str, str]:
    """A per-system section's id suffix and heading suffix (``name``: None with one system)."""
    return ("" if k == 0 else f"-{k + 1}", "" if name is None else f" of {escape(name)}")


def _labels(words: list[Word], name: str | None = None, k: int = 0) -> str:
    scores = label_scores(words)
    rows = [[s.label, s.gold, s.predicted, s.recall, s.precision, s.f1] for s in scores]
    table = _table(["label", "gold", "predicted", "recall (LAS)", "precision", "F1"], rows)
    suffix, of = _of(name, k)
    return (
        f'<section id="label-scores{suffix}"><h2>Labels{of}: recall, precision and F1 of head and label</h2>'
        '<p class="muted">Recall: of the words with this gold label, the share with the right head and label; '
        "precision: of the words predicted with it, the share right.</p>"
        f"{table}</section>"
    )


def _confusion(words: list[Word], name: str | None = None, k: int = 0) -> str:
    labels, counts = confusion(words)
    top = max((v for (g, p), v in counts.items() if g != p), default=1)
    head = "".join(f'<th title="predicted {escape(p)}">{escape(p)}</th>' for p in labels)
    body = []
    for g in labels:
        cells = []
        for p in labels:
            v = counts.get((g, p), 0)
            colour = "#e8f0e8" if g == p and v else (f"rgba(214,39,40,{0.12 + 0.75 * v / top:.2f})" if v else "white")
            cells.append(
                f'<td style="background:{colour}" title="gold {escape(g)}, predicted {escape(p)}">{v or ""}</td>'
            )
        body.append(f"<tr><th>{escape(g)}</th>{''.join(cells)}</tr>")
    suffix, of = _of(name, k)
    return (
        f'<section id="confusion{suffix}"><h2>Label confusion{of} (words with the right head)</h2>'
        '<p class="muted">Rows: gold label; columns: predicted label. Off the diagonal, the darker, the more often.</p>'
        f'<div style="overflow-x:auto"><table class="confusion"><thead><tr><th>gold \\ predicted</th>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></div></section>"
    )


def _worst(
    gold: Sequence[Sentence], systems: dict[str, list[Sentence]], words: dict[str, list[Word]], count: int
) -> str:
    """The sentences with the most errors, drawn gold over each system's parse; with two systems,
    ranked by their errors together (a sentence only one system gets wrong is shown too)."""
    every = [w for ws in words.values() for w in ws]
    ranked = worst_sentences(every, count)
    by_sent: dict[int, list[Word]] = {}
    for w in every:
        by_sent.setdefault(w.sent, []).append(w)
    errors = {name: Counter(w.sent for w in ws if not w.label_ok) for name, ws in words.items()}
    figures, labels = [], set()
    for k, _, _ in ranked:
        g = gold[k]
        wrong = {w.label for w in by_sent[k] if not w.label_ok} | {w.pred_label for w in by_sent[k] if not w.label_ok}
        size = len(g.forms) - 1
        counts = {name: errors[name][k] for name in words}
        labels |= wrong
        pictures = []
        for name, pred in systems.items():
            p = pred[k]
            svg = compare_svg(g.forms, g.heads, g.deprels, p.heads, p.deprels, g.upos, title=f"{g.name} ({name})")
            caption = f"<div class='muted'>{escape(name)}</div>" if len(systems) > 1 else ""
            pictures.append(caption + scrollable(svg))
        text = " ".join(g.forms[1:])
        figures.append(
            f'<figure class="worst" data-labels="{escape(" ".join(sorted(wrong)))}"><figcaption><b>{escape(g.name)}</b>: '
            f"{wrong_words(counts, size)}. {escape(text)}</figcaption>{''.join(pictures)}</figure>"
        )
    together = f" ({' and '.join(escape(n) for n in systems)} together)" if len(systems) > 1 else ""
    legend = (
        '<p class="legend">'
        f'<span style="color:{COLOURS["arc"]}">&#9632; gold arc (above the words)</span>'
        f'<span style="color:{COLOURS["crossing"]}">&#9632; non-projective gold arc (dashed)</span>'
        f'<span style="color:{COLOURS["ok"]}">&#9632; predicted, right</span>'
        f'<span style="color:{COLOURS["wrong_head"]}">&#9632; predicted, wrong head</span>'
        f'<span style="color:{COLOURS["wrong_label"]}">&#9632; predicted, right head, wrong label</span></p>'
    )
    return _worst_section(f"The {len(ranked)} sentences with the most errors{together}", legend, labels, figures)


def _worst_section(heading: str, intro: str, labels: set[str], figures: list[str]) -> str:
    """The worst sentences' section: its heading, ``intro``, the label filter and the figures."""
    options = "".join(f'<option value="{escape(lab)}">{escape(lab)}</option>' for lab in sorted(labels))
    return (
        f'<section id="worst"><h2>{heading}</h2>{intro}'
        '<p><label for="label-filter">Show the sentences with an error on the label </label>'
        f'<select id="label-filter"><option value="">(any)</option>{options}</select> '
        f'<span class="muted"><span id="shown">{len(figures)}</span> shown</span></p>'
        f"{''.join(figures)}</section>"
    )


def wrong_words(counts: dict[str, int], size: int) -> str:
    """'3 of 12 words wrong', or with two systems '3 and 1 of 12 words wrong (A, B)'."""
    if len(counts) == 1:
        return f"{next(iter(counts.values()))} of {size} words wrong"
    return f"{' and '.join(map(str, counts.values()))} of {size} words wrong ({', '.join(escape(n) for n in counts)})"


def _comparison(gold: Sequence[Sentence], systems: dict[str, list[Sentence]], words: dict[str, list[Word]],
                samples: int) -> str:  # fmt: skip
    (name_a, pred_a), (name_b, pred_b) = systems.items()
    agree = agreement(words[name_a], words[name_b])
    n = agree.words or 1  # (no words: every row 0)
    rows = [
        ["both right", agree.both, 100.0 * agree.both / n],
        [f"only {name_a} right", agree.only_a, 100.0 * agree.only_a / n],
        [f"only {name_b} right", agree.only_b, 100.0 * agree.only_b / n],
        ["both wrong", agree.neither, 100.0 * agree.neither / n],
    ]
    sizes = np.array([len(s) for s in gold], dtype=np.int64)
    tests = []
    for metric in ("las", "uas") if sizes.sum() else ():  # (no words: nothing to test)
        a = correct_per_sentence(gold, pred_a, metric)
        b = correct_per_sentence(gold, pred_b, metric)
        sa, sb, delta, p = paired_bootstrap(a, b, sizes, samples, 1)
        tests.append([metric.upper(), sa, sb, delta, f"{p:.4f}"])
    return (
        f'<section id="comparison"><h2>{escape(name_a)} against {escape(name_b)}</h2>'
        "<h3>Words (head and label)</h3>"
        f"{_table(['', 'words', '%'], rows)}"
        f"<h3>Paired bootstrap over sentences ({samples:,} samples), one-sided for {escape(name_b)} &gt; {escape(name_a)}</h3>"
        f"{_table(['metric', name_a, name_b, 'difference', 'p'], tests)}</section>"
    )


def _aligned_scores(gold: Sequence[Sentence], pred: Sequence[Sentence]) -> str:
    """The tokenization, segmentation and parsing scores of a parse with its own tokenization."""
    scores = aligned_scores(gold, pred)
    rows = [[LABELS[m], scores[m].precision, scores[m].recall, scores[m].f1] for m in METRICS]
    return ("<p>Words aligned by character offsets, as the CoNLL 2018 scorer aligns them; a gold word "
            "without an aligned word counts as wrong in every table below.</p>"
            f"{_table(['metric', 'precision', 'recall', 'F1'], rows)}")  # fmt: skip


def _aligned_worst(gold: Sequence[Sentence], pred: Sequence[Sentence], words: list[Word], found: Alignment,
                   count: int) -> str:  # fmt: skip
    """The gold sentences with the most errors, each drawn over the predicted sentences that hold
    words aligned to its words (a parse of raw text splits and joins sentences its own way)."""
    ranked = worst_sentences(words, count)
    by_sent: dict[int, list[Word]] = {}
    for w in words:
        by_sent.setdefault(w.sent, []).append(w)
    first: dict[int, int] = {}  # gold sentence -> its first document word
    for d, (k, _) in enumerate(found.gold_at):
        first.setdefault(k, d)
    figures, labels = [], set()
    for k, errors, size in ranked:
        g = gold[k]
        wrong = {w.label for w in by_sent[k] if not w.label_ok} | {w.pred_label for w in by_sent[k] if not w.label_ok}
        labels |= wrong
        overlap = sorted({found.pred_at[found.pairs[d]][0] for d in range(first[k], first[k] + len(g))
                          if d in found.pairs})  # fmt: skip
        pictures = [scrollable(tree_svg(g.forms, g.heads, g.deprels, g.upos, title=f"{g.name} (gold)"))]
        for pk in overlap:
            p = pred[pk]
            pictures.append(scrollable(tree_svg(p.forms, p.heads, p.deprels, p.upos, title=f"{p.name} (parsed)")))
        figures.append(
            f'<figure class="worst" data-labels="{escape(" ".join(sorted(wrong)))}"><figcaption><b>{escape(g.name)}</b>: '
            f"{errors} of {size} words wrong. {escape(' '.join(g.forms[1:]))}</figcaption>{''.join(pictures)}</figure>"
        )
    intro = "<p class='muted'>Each gold tree, then the parsed sentences that hold its words.</p>"
    return _worst_section(f"The {len(ranked)} sentences with the most errors", intro, labels, figures)


ANALYSIS_COLUMNS = (("upos", "UPOS"), ("xpos", "XPOS"), ("feats", "UFeats"), ("lemma", "Lemmas"))


def _analysis_errors(gold: Sequence[Sentence], pred: Sequence[Sentence], name: str | None = None, k: int = 0,
                     top: int = 15) -> str:  # fmt: skip
    """Tagging and lemma errors beside the attachment errors: for UPOS, XPOS, UFeats and lemmas,
    the aligned words' accuracy and the commonest (gold -> predicted) confusions, with an
    example form; a gold lemma '_' is no error, as the scorer counts it."""
    found = alignment(gold, pred)
    tables = []
    for column, title in ANALYSIS_COLUMNS:
        errors: Counter[tuple[str, str]] = Counter()
        example: dict[tuple[str, str], str] = {}
        right = 0
        for g, p in found.pairs.items():
            gw, pw = found.gold.words[g], found.pred.words[p]
            a, b = getattr(gw, column), getattr(pw, column)
            if a == b or (column == "lemma" and a == "_"):
                right += 1
                continue
            errors[(a or "_", b or "_")] += 1
            example.setdefault((a or "_", b or "_"), gw.form)
        total = len(found.gold.words)
        rows = [[gold_value, pred_value, count, example[(gold_value, pred_value)]]
                for (gold_value, pred_value), count in errors.most_common(top)]  # fmt: skip
        accuracy = 100.0 * right / total if total else 0.0
        listed = _table(["gold", "predicted", "words", "e.g."], rows) if rows else "<p class='muted'>No errors.</p>"
        tables.append(f"<h3>{title}: {accuracy:.2f}% of {total} gold words right</h3>{listed}")
    suffix, of = _of(name, k)
    return (f'<section id="analysis{suffix}"><h2>Tagging and lemma errors{of}</h2>'
            "<p class='muted'>UFeats compares the universal features only, as the CoNLL 2018 scorer does.</p>"
            f'<div class="pair">{"".join(f"<div>{t}</div>" for t in tables)}</div></section>')  # fmt: skip


def build_report(
    gold: Sequence[Sentence],
    systems: dict[str, list[Sentence]],
    sources: dict[str, str],
    worst: int = 60,
    samples: int = 10000,
    aligned: bool = False,
) -> str:
    """The report's HTML for one or two systems (name -> predicted sentences with the gold words);
    with ``aligned``, for one parse with its own tokenization (of raw text), its words aligned to
    the gold words and the tokenization and segmentation scores on top."""
    if aligned and len(systems) != 1:
        raise ValueError("a report of a parse with its own tokenization takes one prediction (no pred2=)")
    found = alignment(gold, next(iter(systems.values()))) if aligned else None
    words = {name: aligned_words_of(gold, pred, found) if found else words_of(gold, pred)
             for name, pred in systems.items()}  # fmt: skip
    parts = [f"<h1>Error analysis</h1><p class='muted'>gold: {escape(sources['gold'])}<br>"]
    parts += [f"{escape(name)}: {escape(sources[name])}<br>" for name in systems]
    parts.append(f"{len(gold)} sentences, {sum(len(s) for s in gold)} words</p>")
    summaries = []
    for name, pred in systems.items():
        if found:
            summaries.append(_aligned_scores(gold, pred))
            continue
        scores = score(gold, [p.heads for p in pred], [p.deprels for p in pred], predicted_tags(pred))
        conll18 = aligned_scores(gold, pred)
        line = "  ".join(
            f"{LABELS[m]} {conll18[m].f1:.2f}" for m in METRICS if m not in ("tokens", "sentences", "words")
        )
        summaries.append(
            f"<h3>{escape(name)}</h3><pre>{escape(scores.summary())}\nCoNLL 2018 (F1): {escape(line)}</pre>"
        )
    parts.append(f'<section id="scores"><h2>Scores</h2>{"".join(summaries)}</section>')
    if len(systems) == 2:
        parts.append(_comparison(gold, systems, words, samples))
    for grouping in GROUPINGS:
        parts.append(_grouping(grouping, words))
    names = list(systems) if len(systems) > 1 else [None]
    parts += [_labels(ws, name, k) for k, (name, ws) in enumerate(zip(names, words.values()))]
    parts += [_confusion(ws, name, k) for k, (name, ws) in enumerate(zip(names, words.values()))]
    parts += [_analysis_errors(gold, pred, name, k) for k, (name, pred) in enumerate(zip(names, systems.values()))]
    if found:
        (pred,), (ws,) = systems.values(), words.values()
        parts.append(_aligned_worst(gold, pred, ws, found, worst))
    else:
        parts.append(_worst(gold, systems, words, worst))
    return html_page("nparse error analysis", "\n".join(parts), FILTER_SCRIPT)


def write_report(path: str | Path, gold: Sequence[Sentence], systems: dict[str, list[Sentence]],
                 sources: dict[str, str], samples: int = 10000, aligned: bool = False) -> None:  # fmt: skip
    """Write the report atomically (a failure leaves no half-written file)."""
    page = build_report(gold, systems, sources, samples=samples, aligned=aligned)
    with atomic_text(path) as handle:
        handle.write(page)
