"""Wall-clock time per part of the work (encoder, scorer, state handling, oracle, loss), so that
``tools/bench.py`` shows where the next bottleneck is. Off unless a tool turns it on; on a GPU
the parts are timed without synchronising, so asynchronous kernels count where they are waited for.
"""

from __future__ import annotations

import time
from collections import defaultdict
from contextlib import contextmanager
from typing import Iterator

TOTALS: defaultdict[str, float] = defaultdict(float)
enabled = False


@contextmanager
def timed(part: str) -> Iterator[None]:
    if not enabled:
        yield
        return
    start = time.perf_counter()
    try:
        yield
    finally:
        TOTALS[part] += time.perf_counter() - start


def take() -> dict[str, float]:
    """The totals since the last call, reset."""
    out = dict(TOTALS)
    TOTALS.clear()
    return out
