"""Forked children of a process that ran nparse use torch on one CPU thread.

torch's CPU thread pool is GNU OpenMP's, which is not fork-safe: once the parent has run a
parallel region, the pool's threads are gone in a forked child while OpenMP still counts on
them, and the child can wait forever at its own first parallel region. spaCy's
``nlp.pipe(..., n_process=2)`` forks its workers itself and hung that way (issue 56: both workers
at 0% CPU inside ``torch.nn.functional.embedding``, in 1 try of 40). With one thread torch runs
no parallel region (its parallel loops and MKL then run on the calling thread), so a child never
reaches the parent's pool. nparse's own parse workers set one thread too (``pipeline/workers.py``);
this covers every fork, whoever makes it. A child that wants more threads must be spawned.
"""

from __future__ import annotations

import os
import sys

_registered = False
forked = False  # whether this process is such a child: ``runtime.set_threads`` then keeps one thread


def one_thread() -> None:
    """The child's side of the fork: torch to one thread before its first operation (nothing
    when the parent never imported torch)."""
    global forked
    forked = True
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)


def guard() -> None:
    """Register ``one_thread`` to run in every child forked from now on, once per process."""
    global _registered
    if not _registered and hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=one_thread)
        _registered = True
