"""Where the project's files are, and how relative paths in configs are resolved."""

from __future__ import annotations

import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
CONF_DIR = PROJECT_ROOT / "conf"


def resolve_path(path: str | os.PathLike, key: str = "path") -> Path:
    """A config path: absolute, or relative to the working directory, or to the project root.

    Raises FileNotFoundError naming the config key when neither exists.
    """
    p = Path(os.path.expanduser(str(path)))
    candidates = [p] if p.is_absolute() else [Path.cwd() / p, PROJECT_ROOT / p]
    for c in candidates:
        if c.exists():
            return c.resolve()
    tried = ", ".join(str(c) for c in candidates)
    raise FileNotFoundError(f"{key}={path}: file not found (tried {tried})")
