"""``key=value`` command lines for the small tools (evaluate, parse), in the style of Hydra."""

from __future__ import annotations

import functools
import os
import sys
from typing import Callable, Mapping, Sequence


def parse_args(
    argv: Sequence[str] | None,
    required: Sequence[str] = (),
    optional: Mapping[str, str | None] | None = None,
    usage: str | None = "",
) -> dict[str, str | None]:
    """Parse ``key=value`` arguments; unknown or missing keys exit with a usage message."""
    argv = list(sys.argv[1:] if argv is None else argv)
    optional = dict(optional or {})
    known = set(required) | set(optional)
    if any(a in ("-h", "--help") for a in argv):
        print(usage or "", file=sys.stderr)
        sys.exit(0)
    values: dict[str, str | None] = dict(optional)
    for arg in argv:
        key, sep, value = arg.partition("=")
        if not sep or key not in known:
            _fail(f"unexpected argument {arg!r}; expected key=value with key in {sorted(known)}", usage)
        values[key] = value
    missing = [k for k in required if k not in values]
    if missing:
        _fail(f"missing argument(s): {', '.join(k + '=...' for k in missing)}", usage)
    return values


def usage_error(message: str, usage: str | None) -> int:
    """Print a command-line error and the usage; the exit code of a usage error (2)."""
    print(f"error: {message}", file=sys.stderr)
    if usage:
        print(usage.strip(), file=sys.stderr)
    return 2


def _fail(message: str, usage: str | None) -> None:
    sys.exit(usage_error(message, usage))


def reader_may_stop(main: Callable[..., int]) -> Callable[..., int]:
    """A command whose standard output is cut off by its reader (``nparse-eval ... | head -1``)
    ends quietly with 141, as a program killed by SIGPIPE does, instead of with a traceback
    (Python ignores SIGPIPE, so the write raises BrokenPipeError)."""

    @functools.wraps(main)
    def run(*args, **kwargs) -> int:
        try:
            code = main(*args, **kwargs)
            sys.stdout.flush()
            return code
        except BrokenPipeError:
            # Python flushes standard output again at exit: point it at nothing first.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            return 141

    return run
