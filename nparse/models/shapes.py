"""Few distinct matrix shapes when parsing in bfloat16 on CPU.

oneDNN builds a kernel for every shape of a bfloat16 matrix product or LSTM it is given, and
keeps up to 1,024 of them. A packed LSTM runs one product per step batch size, and every batch
brings its own row counts, so parsing a large file kept creating kernels: EWT train x4 took 2.35x
the memory of EWT dev through the API (``docs/reliability.md``). Rounding the row counts up to a
few sizes per octave bounds the kernels by the sizes of a batch, not by the length of the file.
"""

from __future__ import annotations

import torch


def bucket(n: int, per_octave: int = 8) -> int:
    """``n`` rounded up to one of ``per_octave`` sizes between each power of two and the next
    (exact up to 2 * per_octave): at most 1/per_octave of padding, and about 8 sizes per doubling."""
    if n <= 2 * per_octave:
        return n
    step = 1 << (n.bit_length() - per_octave.bit_length())
    return -(-n // step) * step


def pad_rows(x: torch.Tensor, rows: int) -> torch.Tensor:
    """``x`` with zero rows appended up to ``rows`` (the rows of a matrix product are independent)."""
    if x.shape[0] >= rows:
        return x
    return torch.cat([x, x.new_zeros((rows - x.shape[0], *x.shape[1:]))])


def bf16_cpu_inference(x: torch.Tensor) -> bool:
    """Whether ``x`` is computed in bfloat16 on CPU without gradients (parsing, dev evaluation):
    where oneDNN builds a kernel per shape."""
    return (
        x.device.type == "cpu"
        and not torch.is_grad_enabled()
        and torch.is_autocast_enabled("cpu")
        and torch.get_autocast_dtype("cpu") == torch.bfloat16
    )
