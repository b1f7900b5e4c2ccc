"""Today's greedy decoder on Python configurations: the reference the batched beam search with
K=1 must reproduce tree for tree (it was nparse's decoder before beam search)."""

from __future__ import annotations

import torch

from nparse.models.scorer import TransitionScorer
from nparse.systems import Config, TransitionSystem
from nparse.training.local import NEG_INF

from .reference_local import _rows


def decode(
    system: TransitionSystem,
    scorer: TransitionScorer,
    table: torch.Tensor,
    configs: list[Config],
    offsets: list[int],
) -> None:
    """Drive every configuration to a terminal one, always taking the best legal transition."""
    empty = table.shape[0] - 1
    live = [i for i, c in enumerate(configs) if not system.terminal(c)]
    device = table.device
    while live:
        rows, legal = _rows(system, configs, live, offsets, empty)
        with torch.no_grad():
            scores = scorer.scores(table, torch.tensor(rows, device=device))
            legal_t = torch.tensor(legal, device=device)
            best = scores.masked_fill(~legal_t, NEG_INF).argmax(1).tolist()
        apply = system.apply
        for i, a in zip(live, best):
            apply(configs[i], a)
        live = [i for i in live if not system.terminal(configs[i])]
