"""Where computation runs: the torch device and the number of CPU threads."""

from __future__ import annotations

import gc
import logging
import os
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Mapping

import torch

from . import forks


def pick_device(name: str = "auto") -> torch.device:
    """'auto' is the GPU when there is one, else the CPU."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise RuntimeError(f"device {name!r} requested but CUDA is not available")
    return torch.device(name)


THREAD_VARIABLES = ("SLURM_CPUS_PER_TASK", "OMP_NUM_THREADS")


def allowed_cpus() -> set[int]:
    """The CPUs this process may run on (its affinity mask; every CPU where there is none)."""
    try:
        return set(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return set(range(os.cpu_count() or 1))


def _cpu_ticks(cpus: set[int]) -> tuple[int, int] | None:
    """(busy, total) clock ticks of ``cpus`` since boot, from /proc/stat; None without it."""
    try:
        lines = Path("/proc/stat").read_text().splitlines()
    except OSError:
        return None
    busy = total = 0
    for line in lines:
        name, *values = line.split() or [""]
        if name.startswith("cpu") and name[3:].isdigit() and int(name[3:]) in cpus:
            ticks = [int(v) for v in values[:8]]  # user nice system idle iowait irq softirq steal
            total += sum(ticks)
            busy += sum(ticks) - ticks[3] - ticks[4]
    return (busy, total) if total else None


def busy_cpus(cpus: set[int], seconds: float = 0.25) -> float:
    """How many of ``cpus`` other processes keep busy now: the busy share of their clock ticks
    over ``seconds`` while this process sleeps, times their number. Without /proc/stat (not
    Linux), the one-minute load average stands in."""
    first = _cpu_ticks(cpus)
    if first is None:
        return min(float(len(cpus)), os.getloadavg()[0]) if hasattr(os, "getloadavg") else 0.0
    time.sleep(seconds)
    second = _cpu_ticks(cpus)
    if second is None or second[1] <= first[1]:
        return 0.0
    return len(cpus) * (second[0] - first[0]) / (second[1] - first[1])


def choose_threads(
    setting: int | None,
    env: Mapping[str, str] | None = None,
    cpus: set[int] | None = None,
    busy: float | None = None,
) -> tuple[int, str]:
    """Torch CPU threads and why. In order: an explicit ``setting`` (> 0); the CPUs a job was
    given (``SLURM_CPUS_PER_TASK``, then ``OMP_NUM_THREADS``); else the CPUs this process may use
    less those other processes keep busy (``busy_cpus``, measured once per process), at least one. More threads than
    free CPUs make torch's threads wait for each other: with one other busy process on two
    cores, parsing ran 2-2.5x slower with two threads than with one. Measured once per process."""
    if setting:
        return int(setting), "set explicitly"
    env = os.environ if env is None else env
    for variable in THREAD_VARIABLES:
        value = env.get(variable, "")
        if value.isdigit() and int(value) > 0:
            return int(value), f"from {variable}"
    if cpus is None and busy is None:
        if not _MEASURED:  # once per process: a second load must not wait another quarter second
            _MEASURED.append(choose_threads(None, env, allowed_cpus(), None))
        return _MEASURED[0]
    cpus = allowed_cpus() if cpus is None else cpus
    if len(cpus) == 1:
        return 1, "1 CPU allowed"
    busy = busy_cpus(cpus) if busy is None else busy
    threads = max(1, min(len(cpus), len(cpus) - round(busy)))
    return threads, f"{len(cpus)} CPUs allowed, {busy:.1f} kept busy by other processes"


_MEASURED: list[tuple[int, str]] = []  # the automatic choice, made once per process


def set_threads(setting: int | None, log: logging.Logger | None = None, key: str = "threads") -> tuple[int, str]:
    """Apply ``choose_threads`` to torch (process-wide), log the choice and return it; a negative
    ``setting`` is refused naming ``key`` (torch's own error names no setting)."""
    if setting is not None and int(setting) < 0:
        raise ValueError(f"{key}={setting}: give a number of CPU threads above 0, or 0 to choose them automatically")
    threads, why = choose_threads(setting)
    if forks.forked and threads > 1:  # more threads in a forked child is what hangs (forks.py)
        threads, why = 1, f"a forked process keeps one thread, not {threads} (nparse/forks.py)"
    torch.set_num_threads(threads)
    if log is not None:
        log.info("torch CPU threads: %d (%s; threads=N overrides)", threads, why)
    return threads, why


# glibc's malloc maps every block above its mmap threshold afresh and returns it to the kernel
# when freed, and trims the heap top above its trim threshold: tensors of a parsing batch are
# such blocks, and the page faults of mapping them again took 3.7 s of system time out of 12 s
# when parsing EWT train on one thread (chunk=1024; 0.8 s with these values, 1.48x the words/s,
# peak memory 1.64 GB instead of 1.43). Freed memory stays in the process for the next batch.
MALLOC_MMAP_THRESHOLD = 256 << 20
MALLOC_TRIM_THRESHOLD = 1 << 30
_MALLOC_VARIABLES = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_", "GLIBC_TUNABLES")


def keep_freed_memory() -> bool:
    """Raise glibc's mmap and trim thresholds (process-wide, see above); nothing where the C
    library is not glibc or the user set malloc's environment variables. True if applied."""
    if any(v in os.environ for v in _MALLOC_VARIABLES):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    m_trim_threshold, m_mmap_threshold = -1, -3  # malloc.h
    return bool(mallopt(m_mmap_threshold, MALLOC_MMAP_THRESHOLD)) and bool(
        mallopt(m_trim_threshold, MALLOC_TRIM_THRESHOLD)
    )


PRECISIONS = ("auto", "fp32", "bf16", "fp16")
NATIVE_BF16_FLAGS = ("avx512_bf16", "amx_bf16")  # /proc/cpuinfo flags of CPUs that compute bfloat16 natively


def cpu_flags() -> set[str] | None:
    """The CPU's feature flags (/proc/cpuinfo; None where there is none: not Linux)."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    except OSError:
        return None
    return set()


def choose_precision(setting: str, device: torch.device) -> tuple[str, str]:
    """The precision of the encoder and tables, and why. ``auto``: bfloat16 where the hardware
    computes it natively (a GPU with bf16, compute capability 8.0 and later; a CPU with AVX-512
    BF16 or AMX), float32 elsewhere. CPU training in bfloat16 runs its padded BiLSTMs on bfloat16
    weights (``models/encoder.padded_bilstm``): 1.17-1.21x the float32 epoch on an AMD EPYC with
    AVX-512 BF16 (``docs/experiments/training-speed.md``; not measured with AMX)."""
    if setting not in PRECISIONS:
        raise ValueError(f"precision={setting}: choose one of {', '.join(PRECISIONS)}")
    if setting != "auto":
        if setting == "fp16" and device.type != "cuda":
            raise ValueError("precision=fp16 needs a GPU; on CPU use bf16 or fp32")
        return setting, "set explicitly"
    if device.type == "cuda":
        if torch.cuda.is_bf16_supported():
            return "bf16", f"auto: {torch.cuda.get_device_name(device)} computes bfloat16"
        return "fp32", f"auto: {torch.cuda.get_device_name(device)} has no bfloat16"
    flags = cpu_flags()
    native = sorted(set(NATIVE_BF16_FLAGS) & (flags or set()))
    if native and torch.backends.mkldnn.is_available():
        return "bf16", f"auto: the CPU computes bfloat16 natively ({', '.join(native)})"
    why = "CPU flags unknown" if flags is None else "no avx512_bf16 or amx_bf16 on this CPU"
    return "fp32", f"auto: {why}"


def collector_freeze() -> None:
    """Leave everything alive now out of the collector's full collections (``gc.freeze``; the
    caller unfreezes), after collecting what is garbage already: a Hydra sweep's previous job
    leaves its trainer in reference cycles, and frozen with the next job's data it would stay
    alive, model and optimizer state included, for that whole job."""
    gc.collect()
    gc.freeze()


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic garbage collector off for the block (a parse), then as it was.

    A parse allocates many short-lived containers. The collections they trigger promote those
    alive at the time, and every few thousand sentences that brings a full collection, which walks
    every object of the process (torch's and the model's: 262k objects, 127 ms on a 2-core AMD
    EPYC). Parsing 108 short el_gdt sentences per call with the fast model, 80 calls, took 9.8-11.3 ms
    per call with the collector off during the calls against 12.1-12.9 ms with it on. Cycles left
    by the block are collected after it, when the collector runs again."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
