"""Where numba keeps nparse's compiled kernels: a directory named for the kernels' sources.

Numba invalidates a cached function when its own file changes, not when a function it calls
from another file does (numba's documented limitation). Our dispatchers (``systems/adapters/arrays.py``)
inline every system's kernel, so an edited kernel left the old one running through the cached
dispatcher: a fixed cycle check in ``kernels/arceager_swap.py`` still let cycles through until
the cache was deleted by hand. Naming the cache directory by a digest of every source file that
holds numba code makes any edit start a fresh cache, and keeps the package directory clean for
read-only installs.

The directory is ``$NUMBA_CACHE_DIR/nparse-<digest>`` when the user set ``NUMBA_CACHE_DIR``,
else ``$XDG_CACHE_HOME/nparse/numba-<digest>`` (``~/.cache`` by default); each is about 4 MB.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent


def kernel_sources(root: Path = PACKAGE) -> list[Path]:
    """Every source file under ``root`` that imports numba, in a fixed order."""
    return sorted(p for p in root.rglob("*.py") if "numba" in p.read_text(encoding="utf-8"))


def digest(files: list[Path], root: Path = PACKAGE) -> str:
    """A short digest of the files' names (relative to ``root``) and contents."""
    h = hashlib.sha256()
    for p in files:
        h.update(str(p.relative_to(root)).encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def cache_dir(root: Path = PACKAGE) -> Path:
    """The cache directory for the kernels under ``root`` as they are now."""
    key = digest(kernel_sources(root), root)
    user = os.environ.get("NUMBA_CACHE_DIR")
    if user and Path(user).name in (f"nparse-{key}", f"numba-{key}"):
        return Path(user)  # set by configure() in a parent process
    if user:
        return Path(user) / f"nparse-{key}"
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "nparse" / f"numba-{key}"


def configure() -> None:
    """Point numba's cache at ``cache_dir()``; must run before any ``@njit(cache=True)``.

    Through the environment while numba is not imported yet (importing it costs 0.2 s, which
    ``import nparse`` need not pay), else through its live configuration."""
    path = str(cache_dir())
    numba = sys.modules.get("numba")
    if numba is None:
        os.environ["NUMBA_CACHE_DIR"] = path  # numba reads it at import; child processes inherit it
    else:
        numba.config.CACHE_DIR = path
