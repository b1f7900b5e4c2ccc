"""Self-contained HTML pages: inline style (and inline script where a page needs one), nothing
fetched from the network, so a page opens anywhere and can be mailed or archived."""

from __future__ import annotations

from html import escape

CSS = """
body{font-family:-apple-system,'Segoe UI',Helvetica,Arial,sans-serif;margin:24px auto;max-width:1200px;padding:0 16px;color:#222}
h1{font-size:24px}h2{font-size:19px;margin-top:32px;border-bottom:1px solid #ddd;padding-bottom:4px}h3{font-size:15px}
table{border-collapse:collapse;margin:8px 0 16px;font-size:13px}th,td{border:1px solid #ddd;padding:3px 8px;text-align:right}
th{background:#f4f6f8}td:first-child,th:first-child{text-align:left}
figure{margin:14px 0 22px}figcaption{font-size:13px;color:#444;margin-bottom:4px}
.legend span{display:inline-block;margin-right:14px;font-size:13px}.muted{color:#666;font-size:13px}
pre{background:#f7f7f7;padding:8px;font-size:13px;overflow-x:auto}
.pair{display:flex;flex-wrap:wrap;gap:24px;align-items:flex-start}
"""


def html_page(title: str, body: str, script: str = "") -> str:
    """A complete HTML document with ``body`` and an optional inline ``script``."""
    tail = f"<script>\n{script}\n</script>\n" if script else ""
    return (
        f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>{escape(title)}</title>\n'
        f"<style>{CSS}</style>\n</head>\n<body>\n{body}\n{tail}</body>\n</html>\n"
    )


def page_head(title: str) -> str:
    """The opening of a page written in parts (``page_tail`` closes it)."""
    return html_page(title, "\x00").split("\x00")[0]


def page_tail() -> str:
    return html_page("", "\x00").split("\x00")[1]
