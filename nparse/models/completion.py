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

from ..systems.factors import ARITY, SLOTS


class FactorScorer(nn.Module):
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

    def table(self, vectors: torch.Tensor) -> torch.Tensor:
        """First-layer contribution of every token in every slot: [B*T + 2, slots, hidden].

        Row B*T is the missing node, row B*T + 1 is zero (padding of factors with fewer nodes).
        """
        flat = vectors.reshape(-1, self.in_dim)
        flat = torch.cat([flat, self.none[None], torch.zeros_like(self.none)[None]], dim=0)
        return torch.einsum("nd,shd->nsh", flat, self.weight)

    def scores(self, table: torch.Tensor, kind: torch.Tensor, nodes: torch.Tensor, right: torch.Tensor) -> torch.Tensor:
        """Scores [F] of factors of ``kind`` [F] whose slot s reads table row ``nodes[:, s]``
        (padding row beyond the kind's arity); ``right``: the head is left of the dependent."""
        slot = (self.slot_start[kind][:, None] + torch.arange(SLOTS, device=kind.device)).clamp(max=self.n_slots - 1)
        flat = table.reshape(-1, self.hidden)
        hidden = flat[nodes * self.n_slots + slot].sum(1) + self.bias[kind, right.long()]
        return (torch.tanh(hidden) * self.out[kind]).sum(1) + self.out_bias[kind]

    def arc_scores(self, table: torch.Tensor, sentences: int, width: int, chunk: int = 1 << 24) -> torch.Tensor:
        """First-order scores [B, T, T] (head, dependent) of every sentence of a batch whose
        words are table rows ``b * T + w`` (the diagonal is meaningless); computed in chunks of
        sentences so that the [b, T, T, hidden] intermediate stays under ``chunk`` numbers."""
        rows = table[: sentences * width].view(sentences, width, self.n_slots, self.hidden)
        right = torch.ones(width, width, dtype=torch.bool, device=table.device).triu(1)
        bias = torch.where(right[..., None], self.bias[0, 1], self.bias[0, 0])  # [T, T, hidden]
        step = max(1, chunk // (width * width * self.hidden))
        parts = []
        for b in range(0, sentences, step):
            part = rows[b : b + step]
            hidden = part[:, :, None, 0] + part[:, None, :, 1] + bias  # slots 0, 1: head, dependent
            parts.append(torch.tanh(hidden) @ self.out[0] + self.out_bias[0])
        return torch.cat(parts)
