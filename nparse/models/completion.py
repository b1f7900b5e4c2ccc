"""Factor scorers of the completion model (Bohnet & Kuhn 2012): graph-based factors over the
BiLSTM vectors, added to the transition scores of beam items (``decoding/completion.py``).

Form: one MLP per factor kind over the concatenated vectors of the factor's nodes,
``w_k . tanh(sum_s W_{k,s} v_{node_s} + b_{k,dir}) + c_k``, with a learned vector for a missing
node (no sibling, no grandchild) and a bias per attachment direction. Why an MLP and not
biaffine/triaffine forms: the factors have two to four nodes, and a first layer that is linear in
the concatenation is computed once per word and slot (``table``), exactly like the transition
scorer, so scoring a factor of any arity is a gather, a sum and a dot product, and all factors of
a parser step (any mix of kinds) go through one call. The first-order kind is Kiperwasser &
Goldberg's (2016) graph-based arc scorer, which is what ``decoder=mst`` decodes with.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from ..systems.adapters.factors import ARITY, SLOTS


class FactorScorer(nn.Module):
    slot_start: torch.Tensor  # buffers
    arity: torch.Tensor

    def __init__(self, in_dim: int, mask: int, hidden: int):
        super().__init__()
        self.mask, self.in_dim, self.hidden = int(mask), in_dim, hidden
        kinds = [k for k in range(len(ARITY)) if self.mask >> k & 1]
        start = torch.zeros(len(ARITY), dtype=torch.long)
        total = 0
        for k in kinds:
            start[k] = total
            total += int(ARITY[k])
        self.n_slots = total
        self.register_buffer("slot_start", start, persistent=False)
        self.register_buffer("arity", torch.as_tensor(ARITY), persistent=False)
        self.weight = nn.Parameter(torch.randn(total, hidden, in_dim) * in_dim**-0.5)
        self.bias = nn.Parameter(torch.zeros(len(ARITY), 2, hidden))  # per kind and direction
        self.none = nn.Parameter(torch.randn(in_dim) * 0.1)  # vector of a missing node
        self.out = nn.Parameter(torch.randn(len(ARITY), hidden) * hidden**-0.5)
        self.out_bias = nn.Parameter(torch.zeros(len(ARITY)))

    def table(self, vectors: torch.Tensor, lengths: list[int]) -> torch.Tensor:
        """First-layer contribution of every real token (root and words, no padding) in every
        slot: [N + 2, slots, hidden], sentence b's token w at row ``sum(lengths[:b] + 1) + w``.

        Row N is the missing node, row N + 1 is zero (padding of factors with fewer nodes).
        """
        width = vectors.shape[1]
        keep = (
            torch.arange(width, device=vectors.device)[None, :] <= torch.tensor(lengths, device=vectors.device)[:, None]
        )
        flat = vectors[keep]
        flat = torch.cat([flat, self.none[None], torch.zeros_like(self.none)[None]], dim=0)
        return torch.einsum("nd,shd->nsh", flat, self.weight)

    def scores(self, table: torch.Tensor, kind: torch.Tensor, nodes: torch.Tensor, right: torch.Tensor) -> torch.Tensor:
        """Scores [F] of factors of ``kind`` [F] whose slot s reads table row ``nodes[:, s]``
        (padding row beyond the kind's arity); ``right``: the head is left of the dependent."""
        slot = (self.slot_start[kind][:, None] + torch.arange(SLOTS, device=kind.device)).clamp(max=self.n_slots - 1)
        flat = table.reshape(-1, self.hidden)
        hidden = flat[nodes * self.n_slots + slot].sum(1) + self.bias[kind, right.long()]
        return (torch.tanh(hidden) * self.out[kind]).sum(1) + self.out_bias[kind]

    def arc_scores(self, vectors: torch.Tensor, lengths: list[int], chunk: int = 1 << 22) -> list[torch.Tensor]:
        """First-order scores [n+1, n+1] (head, dependent; the diagonal is meaningless) of every
        sentence, for ``decoder=mst``: only the head and dependent slots are computed, and only
        for real word pairs, in chunks of ``chunk`` hidden units."""
        width = vectors.shape[1]
        device = vectors.device
        keep = torch.arange(width, device=device)[None, :] <= torch.tensor(lengths, device=device)[:, None]
        pair = torch.einsum("nd,shd->nsh", vectors[keep], self.weight[:2])  # [N, 2, hidden]
        heads, deps, sizes, base = [], [], [], 0
        for n in lengths:
            idx = torch.arange(base, base + n + 1, device=device)
            heads.append(idx.repeat_interleave(n + 1))
            deps.append(idx.repeat(n + 1))
            sizes.append((n + 1) ** 2)
            base += n + 1
        h, d = torch.cat(heads), torch.cat(deps)
        out = []
        step = max(1, chunk // self.hidden)
        for k in range(0, len(h), step):
            hk, dk = h[k : k + step], d[k : k + step]
            hidden = pair[hk, 0] + pair[dk, 1] + self.bias[0, (dk > hk).long()]
            out.append(torch.tanh(hidden) @ self.out[0] + self.out_bias[0])
        flat = torch.cat(out)
        return [s.view(n + 1, n + 1) for s, n in zip(flat.split(sizes), lengths)]

    def head_loss(self, vectors: torch.Tensor, lengths: list[int], heads: list[list[int]]) -> torch.Tensor:
        """Head-selection cross-entropy of the first-order factor on gold trees (every word's
        gold head against all other words and the root; Dozat & Manning 2017), summed over words.

        The global loss fixes factor scores only relative to the transition scores (a score can
        move between a transition and the arc it builds), so without this loss the arc factor
        alone is no parser: ``decoder=mst`` on it scored 0.7-1.8 UAS on GDT dev."""
        width = max(lengths) + 1
        padded = vectors.new_full((len(lengths), width, width), float("-inf"))
        for b, (n, scores) in enumerate(zip(lengths, self.arc_scores(vectors, lengths))):
            padded[b, : n + 1, : n + 1] = scores
        eye = torch.eye(width, dtype=torch.bool, device=vectors.device)
        padded = padded.masked_fill(eye, float("-inf"))  # no word heads itself
        logits = padded.transpose(1, 2)  # [B, dependent, head]
        target = torch.full((len(lengths), width), -100, dtype=torch.long, device=vectors.device)
        for b, h in enumerate(heads):
            for d in range(1, lengths[b] + 1):
                if h[d] >= 0:
                    target[b, d] = h[d]
        return F.cross_entropy(logits.reshape(-1, width), target.reshape(-1), ignore_index=-100, reduction="sum")
