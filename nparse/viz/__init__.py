"""Pictures and pages with no dependency beyond the standard library: dependency trees as SVG
(``svg.py``), bar charts (``plots.py``) and self-contained HTML pages (``page.py``)."""

from .svg import compare_svg, scrollable, tree_svg

__all__ = ["compare_svg", "scrollable", "tree_svg"]
