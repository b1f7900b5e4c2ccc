"""The bare word BiLSTM of a model in float32 and bfloat16 on CPU: tokens/s, forward and backward.

    python experiments/lstm_precision.py [--data en_ewt] [--batch-size 128] [--repeats 3]
                                         [--input 225 --hidden 125 --layers 2]

The default sizes are the default model's (words 100 + UPOS 25 + character vector 100; two layers
of 125 units per direction). Random inputs of the lengths of the treebank's dev and test
sentences (+1 for the root), batched by length as parsing batches them, are packed and run
through ``nn.LSTM`` on one thread: forward without gradients (parsing) and forward + backward
(training), with float32 weights, and with bfloat16 copies of the weights and inputs (what
``nparse.models.encoder.run_lstm`` does when parsing in bf16). The best of ``--repeats`` rounds
is printed with the CPU's bf16 flags, and the largest difference of the bf16 outputs from fp32.
"""

from __future__ import annotations

import argparse
import time

import torch
from common import split_sentences, treebank
from torch import nn
from torch.func import functional_call
from torch.nn.utils.rnn import pack_padded_sequence

from nparse.io.data import length_batches
from nparse.runtime import NATIVE_BF16_FLAGS, cpu_flags


def batches(lengths: list[int], batch_size: int, dim: int) -> list:
    out = []
    for batch in length_batches(lengths, batch_size):
        lens = torch.tensor([lengths[i] for i in batch])
        x = torch.randn(len(batch), int(lens.max()), dim)
        out.append(pack_padded_sequence(x, lens, batch_first=True, enforce_sorted=False))
    return out


def run(lstm: nn.LSTM, packed: list, dtype: torch.dtype, backward: bool) -> tuple[float, list[torch.Tensor]]:
    weights = {name: p.to(dtype) for name, p in lstm.named_parameters()}
    outs = []
    start = time.perf_counter()
    with torch.set_grad_enabled(backward):
        for p in packed:
            out, _ = functional_call(lstm, weights, (p._replace(data=p.data.to(dtype)),))
            if backward:
                out.data.float().sum().backward()
            else:
                outs.append(out.data.float())
    return time.perf_counter() - start, outs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default="en_ewt")
    ap.add_argument("--batch-size", type=int, default=128)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--input", type=int, default=225)
    ap.add_argument("--hidden", type=int, default=125)
    ap.add_argument("--layers", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(1)
    sents = split_sentences(treebank(args.data), "dev") + split_sentences(treebank(args.data), "test")
    lengths = [len(s) + 1 for s in sents]
    tokens = sum(lengths)
    lstm = nn.LSTM(args.input, args.hidden, args.layers, bidirectional=True, batch_first=True)
    packed = batches(lengths, args.batch_size, args.input)
    flags = sorted(set(NATIVE_BF16_FLAGS) & (cpu_flags() or set()))
    print(f"{args.data} dev+test: {len(sents)} sentences, {tokens} tokens; LSTM {args.input} -> {args.hidden} x 2, "
          f"{args.layers} layers; batches of {args.batch_size}; 1 thread; torch {torch.__version__}; "
          f"CPU bf16 flags: {', '.join(flags) or 'none'}")  # fmt: skip
    print("| pass | fp32 tokens/s | bf16 tokens/s | bf16 / fp32 |")
    print("|---|---|---|---|")
    for backward in (False, True):
        best = {}
        outputs = {}
        for _ in range(args.repeats):
            for dtype in (torch.float32, torch.bfloat16):
                seconds, outs = run(lstm, packed, dtype, backward)
                best[dtype] = min(best.get(dtype, seconds), seconds)
                outputs[dtype] = outs
        fp32, bf16 = tokens / best[torch.float32], tokens / best[torch.bfloat16]
        name = "forward + backward (training)" if backward else "forward, no gradients (parsing)"
        print(f"| {name} | {fp32:,.0f} | {bf16:,.0f} | {bf16 / fp32:.2f}x |")
        if not backward:
            diff = max(float((a - b).abs().max()) for a, b in zip(outputs[torch.float32], outputs[torch.bfloat16]))
            print(f"| largest difference of a bf16 output from fp32 | {diff:.4f} | | |")


if __name__ == "__main__":
    main()
