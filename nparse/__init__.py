"""nparse: neural transition-based dependency parsing."""

from __future__ import annotations

__version__ = "0.1.0"

from . import jitcache as _jitcache

_jitcache.configure()  # before any compiled kernel is defined (see jitcache.py)


def load(path, device: str = "auto", threads: int | None = None):
    """Load a trained parser from a checkpoint: ``nparse.load("runs/.../best.pt").parse(...)``."""
    from .api import load as _load

    return _load(path, device, threads)


__all__ = ["load", "__version__"]
