"""Numba's cache follows every kernel source, not only the file of the cached function (a stale
dispatcher once kept running an edited kernel: see ``nparse/jitcache.py``)."""

from __future__ import annotations

from pathlib import Path

import numba

from nparse import jitcache


def test_numba_cache_is_named_for_the_current_sources():
    assert Path(numba.config.CACHE_DIR) == jitcache.cache_dir()
    names = {p.relative_to(jitcache.PACKAGE).as_posix() for p in jitcache.kernel_sources()}
    assert {"systems/adapters/arrays.py", "systems/kernels/arceager_swap.py", "decoding/beam.py"} <= names


def test_editing_any_kernel_file_changes_the_cache_directory(tmp_path, monkeypatch):
    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    pkg = tmp_path / "pkg"
    (pkg / "kernels").mkdir(parents=True)
    (pkg / "dispatch.py").write_text("from numba import njit\n")
    callee = pkg / "kernels" / "callee.py"
    callee.write_text("from numba import njit\nX = 1\n")
    (pkg / "plain.py").write_text("Y = 1\n")
    before = jitcache.cache_dir(pkg)
    assert before.parent == tmp_path / "cache" / "nparse"
    (pkg / "plain.py").write_text("Y = 2\n")  # no numba code: same cache
    assert jitcache.cache_dir(pkg) == before
    callee.write_text("from numba import njit\nX = 2\n")  # a called kernel changed
    assert jitcache.cache_dir(pkg) != before


def test_a_user_cache_directory_is_kept_as_the_parent(tmp_path, monkeypatch):
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    mine = jitcache.cache_dir()
    assert mine.parent == tmp_path and mine.name.startswith("nparse-")
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(mine))  # inherited from a parent process
    assert jitcache.cache_dir() == mine
