"""``python -m nparse.segmenter``: train a segmenter on a treebank (see ``nparse/io/segmenter.py``)."""

from __future__ import annotations

import sys

from .io.segmenter import main

if __name__ == "__main__":
    sys.exit(main())
