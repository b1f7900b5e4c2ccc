"""Where computation runs: the torch device and the number of CPU threads."""

from __future__ import annotations

import os

import torch


def pick_device(name: str = "auto") -> torch.device:
    """'auto' is the GPU when there is one, else the CPU."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise RuntimeError(f"device {name!r} requested but CUDA is not available")
    return torch.device(name)


def cpu_threads(setting: int | None) -> int:
    """Torch CPU threads: ``trainer.threads`` when set, else the CPUs this job was given
    (``SLURM_CPUS_PER_TASK``, then ``OMP_NUM_THREADS`` when the user set it, then the affinity
    mask): more threads than CPUs spin against each other and run many times slower."""
    if setting:
        return int(setting)
    for variable in ("SLURM_CPUS_PER_TASK", "OMP_NUM_THREADS"):
        value = os.environ.get(variable, "")
        if value.isdigit() and int(value) > 0:
            return int(value)
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1
