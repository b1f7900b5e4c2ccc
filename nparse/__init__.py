"""nparse: neural transition-based dependency parsing."""

from __future__ import annotations

__version__ = "0.1.0"

from . import forks as _forks
from . import jitcache as _jitcache

_jitcache.configure()  # before any compiled kernel is defined (see jitcache.py)
_forks.guard()  # forked children run torch on one thread (see forks.py)


def load(path, device: str = "auto", threads: int | None = None, precision: str = "auto"):
    """Load a trained parser from a checkpoint: ``nparse.load("runs/.../best.pt").parse(...)``
    (``precision``: auto, fp32 or bf16; auto is bfloat16 where the hardware computes it natively)."""
    from .api import load as _load

    return _load(path, device, threads, precision)


__all__ = ["load", "__version__"]
