"""Bar charts as inline SVG, for the error-analysis report: no plotting library, no script."""

from __future__ import annotations

from html import escape
from typing import Mapping, Sequence

PALETTE = ("#3b6fb6", "#e67e00", "#2a9d8f", "#b5179e")


def bar_chart(
    categories: Sequence[str],
    series: Mapping[str, Sequence[float | None]],
    title: str,
    y_label: str = "%",
    y_max: float = 100.0,
    y_min: float | None = None,
) -> str:
    """Grouped vertical bars: one group per category, one bar per series (None: no bar), with
    the value written above each bar and a legend when there are several series. The axis starts
    at ``y_min``; by default at the tens below the lowest value less 5 (accuracies differ by a few
    points, which a bar from 0 would hide), and the axis says where it starts."""
    names = list(series)
    n = max(len(categories), 1)
    bar = 14 if len(names) > 1 else 22
    group = bar * len(names) + 14
    left, top, plot_h = 44, 30, 180
    width = left + n * group + 20
    height = top + plot_h + 70
    values = [v for vs in series.values() for v in vs if v is not None]
    if y_min is None:
        y_min = max(0.0, (min(values, default=0.0) - 5) // 10 * 10)
    body = [f'<text x="{left}" y="16" class="title">{escape(title)}</text>']
    for tick in range(0, 101, 25):
        value = y_min + (y_max - y_min) * tick / 100
        y = top + plot_h * (1 - tick / 100)
        body.append(f'<line x1="{left}" x2="{width - 10}" y1="{y:.1f}" y2="{y:.1f}" stroke="#e3e3e3"/>')
        body.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end" class="tick">{value:g}</text>')
    body.append(f'<text x="10" y="{top + plot_h / 2:.0f}" class="tick" transform="rotate(-90 10 {top + plot_h / 2:.0f})" '
                f'text-anchor="middle">{escape(y_label)}</text>')  # fmt: skip
    for c, category in enumerate(categories):
        x0 = left + c * group + 7
        for s, name in enumerate(names):
            got = series[name][c]
            if got is None:
                continue
            value = got
            h = plot_h * max(0.0, min(value, y_max) - y_min) / (y_max - y_min)
            x = x0 + s * bar
            body.append(
                f'<rect x="{x:.1f}" y="{top + plot_h - h:.1f}" width="{bar - 2}" height="{h:.1f}" '
                f'fill="{PALETTE[s % len(PALETTE)]}"><title>{escape(name)} {escape(category)}: {value:.2f}</title></rect>'
            )
            if len(names) == 1:
                body.append(f'<text x="{x + bar / 2 - 1:.1f}" y="{top + plot_h - h - 3:.1f}" text-anchor="middle" '
                            f'class="val">{value:.1f}</text>')  # fmt: skip
        label_x, label_y = x0 + group / 2 - 7, top + plot_h + 12
        body.append(f'<text x="{label_x:.1f}" y="{label_y}" class="tick" text-anchor="end" '
                    f'transform="rotate(-40 {label_x:.1f} {label_y})">{escape(category)}</text>')  # fmt: skip
    if len(names) > 1:
        for s, name in enumerate(names):
            x = left + s * 120
            body.append(f'<rect x="{x}" y="{height - 14}" width="10" height="10" fill="{PALETTE[s % len(PALETTE)]}"/>')
            body.append(f'<text x="{x + 14}" y="{height - 5}" class="tick">{escape(name)}</text>')
    style = ("text{font-family:-apple-system,'Segoe UI',Helvetica,Arial,sans-serif}.title{font-size:13px;font-weight:600}"
             ".tick{font-size:10px;fill:#555}.val{font-size:9px;fill:#333}")  # fmt: skip
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="nparse-chart" width="{width:.0f}" height="{height}" '
        f'viewBox="0 0 {width:.0f} {height}" role="img"><style>{style}</style>{"".join(body)}</svg>'
    )
