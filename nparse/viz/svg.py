"""Dependency trees as SVG pictures, with no dependency beyond the standard library.

Words sit on one row (their UPOS under them when given); every arc is a curve from the head to
the dependent with an arrowhead at the dependent and its label at the top. An arc's height is
one level above the tallest arc inside its span, so nested arcs never overlap; an arc that
crosses another (non-projective) is drawn dashed in its own colour, so crossing curves stay
readable. The root's dependent gets a vertical arrow labelled ``root``. Long sentences make wide
pictures: ``scrollable`` wraps one in a horizontally scrolling ``<div>``.

``compare_svg`` draws gold over predicted in one picture: gold arcs above the words, predicted
arcs mirrored below them, a predicted arc with the wrong head in red and one with the right head
but the wrong label in orange (universal part of the label, as LAS counts it).
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from typing import Sequence

FONT = 14  # px
CHAR = 8.0  # px: the width of a character of FONT, about
LEVEL = 34  # px between arc levels
GAP = 22  # px between words
COLOURS = {"arc": "#3b4a6b", "crossing": "#b5179e", "wrong_head": "#d62728", "wrong_label": "#e67e00", "ok": "#7f8c9a"}
STYLE = (
    "text{font-family:-apple-system,'Segoe UI',Helvetica,Arial,sans-serif;font-size:%dpx}"
    ".w{fill:#111}.t{fill:#666;font-size:%dpx}.l{font-size:%dpx}.bad{fill:#d62728;font-weight:bold}"
    % (FONT, FONT - 3, FONT - 3)
)


@dataclass(frozen=True)
class Arc:
    head: int  # 0: the root
    dep: int
    label: str
    colour: str
    dashed: bool = False
    note: str = ""  # tooltip


def crossing_arcs(heads: Sequence[int]) -> set[int]:
    """Dependents whose arc crosses another arc (the root's arc included, from position 0)."""
    arcs = [(min(h, d), max(h, d), d) for d, h in enumerate(heads) if d > 0 and h >= 0]
    out = set()
    for a, b, d in arcs:
        for c, e, d2 in arcs:
            if a < c < b < e or c < a < e < b:
                out |= {d, d2}
    return out


def levels(arcs: Sequence[Arc]) -> dict[int, int]:
    """Height level (from 1) of every non-root arc, keyed by dependent: one above the tallest
    arc whose span lies within its own."""
    spans = sorted((abs(a.head - a.dep), min(a.head, a.dep), max(a.head, a.dep), a.dep) for a in arcs if a.head > 0)
    out: dict[int, int] = {}
    done: list[tuple[int, int, int]] = []
    for _, lo, hi, dep in spans:
        inner = [lvl for (c, e, lvl) in done if lo <= c and e <= hi]
        out[dep] = 1 + max(inner, default=0)
        done.append((lo, hi, out[dep]))
    return out


def word_positions(forms: Sequence[str], tags: Sequence[str] | None) -> tuple[list[float], float]:
    """Centre x of every word (index 0 unused) and the picture's width."""
    xs = [0.0]
    x = 10.0
    for i in range(1, len(forms)):
        width = max(len(forms[i]), len(tags[i]) if tags else 0, 2) * CHAR
        xs.append(x + width / 2)
        x += width + GAP
    return xs, x + 10


def _arc_paths(arc: Arc, xs: list[float], base: float, level: int, up: bool) -> str:
    """One arc (its curve, arrowhead and label) above (``up``) or below the word row at ``base``."""
    sign = -1 if up else 1
    colour = COLOURS[arc.colour] if arc.colour in COLOURS else arc.colour
    dash = ' stroke-dasharray="5,3"' if arc.dashed else ""
    title = f"<title>{escape(arc.note)}</title>" if arc.note else ""
    if arc.head == 0:  # the root: a vertical arrow
        x = xs[arc.dep]
        top = base + sign * (level * LEVEL + 6)
        lab_y = top - 5 if up else top + 14
        return (
            f'<g>{title}<path d="M{x:.1f},{top:.1f} L{x:.1f},{base:.1f}" stroke="{colour}" stroke-width="1.6" '
            f'fill="none"{dash}/>{_arrow(x, base, up, colour)}'
            f'<text class="l" x="{x:.1f}" y="{lab_y:.1f}" text-anchor="middle" fill="{colour}">{escape(arc.label)}</text></g>'
        )
    x1 = xs[arc.head] + (4 if arc.dep > arc.head else -4)
    x2 = xs[arc.dep]
    height = level * LEVEL
    y = base + sign * height
    path = f"M{x1:.1f},{base:.1f} C{x1:.1f},{y:.1f} {x2:.1f},{y:.1f} {x2:.1f},{base:.1f}"
    mid_x, mid_y = (x1 + x2) / 2, base + sign * height * 0.75
    width = len(arc.label) * (CHAR - 1.5) + 6
    return (
        f'<g>{title}<path d="{path}" stroke="{colour}" stroke-width="1.6" fill="none"{dash}/>{_arrow(x2, base, up, colour)}'
        f'<rect x="{mid_x - width / 2:.1f}" y="{mid_y - 9:.1f}" width="{width:.1f}" height="14" fill="white" opacity="0.85"/>'
        f'<text class="l" x="{mid_x:.1f}" y="{mid_y + 2:.1f}" text-anchor="middle" fill="{colour}">{escape(arc.label)}</text></g>'
    )


def _arrow(x: float, base: float, up: bool, colour: str) -> str:
    tip = base - 2 if up else base + 2
    back = tip - 7 if up else tip + 7
    return f'<path d="M{x:.1f},{tip:.1f} L{x - 4:.1f},{back:.1f} L{x + 4:.1f},{back:.1f} Z" fill="{colour}"/>'


def _svg(width: float, height: float, body: list[str], title: str | None) -> str:
    head = f"<title>{escape(title)}</title>" if title else ""
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="nparse-tree" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" role="img"><style>{STYLE}</style>{head}{"".join(body)}</svg>'
    )


def _words(
    forms: Sequence[str], tags: Sequence[str] | None, xs: list[float], y: float, bad: set[int],
    notes: Sequence[str] | None = None,
) -> list[str]:  # fmt: skip
    out = []
    for i in range(1, len(forms)):
        cls = "w bad" if i in bad else "w"
        hover = f"<title>{escape(notes[i])}</title>" if notes and notes[i] else ""
        out.append(
            f'<text class="{cls}" x="{xs[i]:.1f}" y="{y:.1f}" text-anchor="middle">{escape(forms[i])}{hover}</text>'
        )
        if tags and tags[i] not in ("_", ""):
            out.append(
                f'<text class="t" x="{xs[i]:.1f}" y="{y + 15:.1f}" text-anchor="middle">{escape(tags[i])}</text>'
            )
    return out


def tree_arcs(heads: Sequence[int], labels: Sequence[str], colour: str = "arc") -> list[Arc]:
    """The arcs of a tree (dependents with a head), crossing ones dashed in their own colour."""
    crossing = crossing_arcs(heads)
    arcs = []
    for d in range(1, len(heads)):
        if heads[d] < 0:
            continue
        cross = d in crossing
        arcs.append(
            Arc(heads[d], d, labels[d], "crossing" if cross else colour, cross, "non-projective arc" if cross else "")
        )
    return arcs


def tree_svg(
    forms: Sequence[str],
    heads: Sequence[int],
    labels: Sequence[str],
    tags: Sequence[str] | None = None,
    title: str | None = None,
    notes: Sequence[str] | None = None,
) -> str:
    """A tree as an SVG picture (lists indexed from 1, index 0 the root; a head of -1 is no arc);
    ``notes``: what hovering over each word shows (its lemma, XPOS and features)."""
    xs, width = word_positions(forms, tags)
    arcs = tree_arcs(heads, labels)
    level = levels(arcs)
    top = max(level.values(), default=0) + 1
    base = top * LEVEL + 26  # room for the root's label above its arrow
    body = [_arc_paths(a, xs, base, level.get(a.dep, top), up=True) for a in arcs]
    body += _words(forms, tags, xs, base + 18, set(), notes)
    return _svg(width, base + (36 if tags else 24), body, title)


def word_notes(lemmas: Sequence[str], xpos: Sequence[str], feats: Sequence[str]) -> list[str] | None:
    """Each word's hover text: "lemma walk · XPOS VBD · Mood=Ind|Tense=Past" (the parts that are
    not '_'); None when no word has any."""
    notes = [""]
    for lemma, tag, morph in zip(lemmas[1:], xpos[1:], feats[1:]):
        parts = [f"lemma {lemma}" if lemma not in ("_", "") else "", f"XPOS {tag}" if tag not in ("_", "") else "",
                 morph if morph not in ("_", "") else ""]  # fmt: skip
        notes.append(" · ".join(p for p in parts if p))
    return notes if any(notes) else None


def compare_arcs(
    gold_heads: Sequence[int], gold_labels: Sequence[str], pred_heads: Sequence[int], pred_labels: Sequence[str]
) -> list[Arc]:
    """Predicted arcs coloured by what is wrong: ``wrong_head``, ``wrong_label`` (right head, other
    universal label) or ``ok``."""
    arcs = []
    for d in range(1, len(pred_heads)):
        if pred_heads[d] < 0:
            continue
        if pred_heads[d] != gold_heads[d]:
            colour, note = "wrong_head", f"wrong head (gold: {gold_heads[d]})"
        elif pred_labels[d].split(":")[0] != gold_labels[d].split(":")[0]:
            colour, note = "wrong_label", f"wrong label (gold: {gold_labels[d]})"
        else:
            colour, note = "ok", ""
        arcs.append(Arc(pred_heads[d], d, pred_labels[d], colour, False, note))
    return arcs


def compare_svg(
    forms: Sequence[str],
    gold_heads: Sequence[int],
    gold_labels: Sequence[str],
    pred_heads: Sequence[int],
    pred_labels: Sequence[str],
    tags: Sequence[str] | None = None,
    title: str | None = None,
) -> str:
    """Gold arcs above the words and predicted arcs below them, errors marked (module docstring)."""
    xs, width = word_positions(forms, tags)
    gold = tree_arcs(gold_heads, gold_labels)
    pred = compare_arcs(gold_heads, gold_labels, pred_heads, pred_labels)
    gold_level, pred_level = levels(gold), levels(pred)
    top = max(gold_level.values(), default=0) + 1
    bottom = max(pred_level.values(), default=0) + 1
    base = top * LEVEL + 40
    words_y = base + 18
    below = words_y + (24 if tags else 10)
    wrong = {a.dep for a in pred if a.colour == "wrong_head"}
    body = [  # the captions at the right end, clear of the root's label
        f'<text class="t" x="{width - 4:.0f}" y="12" text-anchor="end">gold</text>',
        *(_arc_paths(a, xs, base, gold_level.get(a.dep, top), up=True) for a in gold),
        *_words(forms, tags, xs, words_y, wrong),
        *(_arc_paths(a, xs, below, pred_level.get(a.dep, bottom), up=False) for a in pred),
        f'<text class="t" x="{width - 4:.0f}" y="{below + bottom * LEVEL + 22:.0f}" text-anchor="end">predicted</text>',
    ]
    return _svg(width, below + bottom * LEVEL + 28, body, title)


def scrollable(svg: str) -> str:
    """An SVG in a ``<div>`` that scrolls sideways when the sentence is wider than the page."""
    return f'<div class="nparse-scroll" style="overflow-x:auto;max-width:100%">{svg}</div>'
