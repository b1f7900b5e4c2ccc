"""Data-parallel training over processes (``torchrun --nproc_per_node=N -m nparse.train``, or one
SLURM task per GPU): ranks from torchrun's or SLURM's environment, a ``torch.distributed``
process group (NCCL on GPUs, gloo on CPU), and the gradient sum of every update.

Why not the ``DistributedDataParallel`` wrapper: a training step here is not one ``forward``
call (the encoder runs once, then a transition loop without autograd, then one batched loss), and
with global training some parameters get no gradient in some batches. Summing the flattened
gradients with one ``all_reduce`` per update is what DDP does underneath, without its
assumptions. Rank 0 draws each epoch's batch order and sends it to every rank
(``Trainer.epoch_order``), and each rank takes its share of each group of ``world`` consecutive
batches; the loss is divided by the tokens of the whole group, so an update equals, up to float
rounding, that of one process on the union of the shards.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import timedelta

import torch
import torch.distributed as dist


@dataclass
class Ranks:
    rank: int = 0
    world: int = 1
    local: int = 0

    @property
    def main(self) -> bool:
        """Rank 0 writes logs, TensorBoard, checkpoints and predictions."""
        return self.rank == 0

    @property
    def active(self) -> bool:
        return self.world > 1


def ranks_from_env() -> Ranks:
    """Ranks set by torchrun (RANK, WORLD_SIZE, LOCAL_RANK) or by srun (SLURM_PROCID, ...)."""
    env = os.environ
    if "RANK" in env and "WORLD_SIZE" in env:
        return Ranks(int(env["RANK"]), int(env["WORLD_SIZE"]), int(env.get("LOCAL_RANK", 0)))
    if int(env.get("SLURM_NTASKS", "1")) > 1 and "SLURM_PROCID" in env and "SLURM_STEP_ID" in env:
        return Ranks(int(env["SLURM_PROCID"]), int(env["SLURM_NTASKS"]), int(env.get("SLURM_LOCALID", 0)))
    return Ranks()


def setup(ranks: Ranks, cuda: bool) -> None:
    """Join the process group (a no-op for one process)."""
    if not ranks.active or dist.is_initialized():
        return
    if "MASTER_ADDR" not in os.environ:  # srun without torchrun: one node, or the first host of the job
        nodes = os.environ.get("SLURM_JOB_NODELIST", "127.0.0.1")
        os.environ["MASTER_ADDR"] = nodes.split(",")[0].split("[")[0] if "[" not in nodes else "127.0.0.1"
        os.environ.setdefault("MASTER_PORT", str(20000 + int(os.environ.get("SLURM_JOB_ID", "0")) % 20000))
    if cuda:
        torch.cuda.set_device(ranks.local)
    dist.init_process_group(
        "nccl" if cuda else "gloo", rank=ranks.rank, world_size=ranks.world, timeout=timedelta(hours=2)
    )


def total(value: float, ranks: Ranks) -> float:
    """The sum of a number over ranks."""
    if not ranks.active:
        return value
    # NCCL reduces CUDA tensors only (gloo, CPU ones)
    device = torch.device("cuda", torch.cuda.current_device()) if dist.get_backend() == "nccl" else None
    t = torch.tensor([float(value)], dtype=torch.float64, device=device)
    dist.all_reduce(t)
    return float(t.item())


def sum_gradients(model: torch.nn.Module, ranks: Ranks) -> None:
    """Replace every gradient by its sum over ranks (absent gradients count as zeros)."""
    if not ranks.active:
        return
    params = [p for p in model.parameters() if p.requires_grad]
    flat = torch.cat([(p.grad if p.grad is not None else torch.zeros_like(p)).reshape(-1) for p in params])
    dist.all_reduce(flat)
    offset = 0
    for p in params:
        n = p.numel()
        p.grad = flat[offset : offset + n].view_as(p).clone()
        offset += n


def broadcast(obj: object, ranks: Ranks) -> object:
    """Rank 0's value of a picklable object, on every rank."""
    if not ranks.active:
        return obj
    box = [obj]
    dist.broadcast_object_list(box, src=0)
    return box[0]


def barrier(ranks: Ranks) -> None:
    if ranks.active:
        dist.barrier()


def shutdown(ranks: Ranks) -> None:
    if ranks.active and dist.is_initialized():
        dist.destroy_process_group()


def gather_counters(counts, ranks: Ranks):
    """The sum over ranks of a Counter (keys may differ between ranks)."""
    from collections import Counter

    if not ranks.active:
        return counts
    parts: list = [None] * ranks.world
    dist.all_gather_object(parts, dict(counts))
    out: Counter = Counter()
    for part in parts:
        out.update(part)
    return out


class NoWriter:
    """TensorBoard writer of the ranks that do not write (all but rank 0)."""

    def add_scalar(self, *args, **kwargs) -> None:
        pass

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass
