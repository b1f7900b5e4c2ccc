"""Batched greedy decoding: every parser step scores all live configurations with one scorer call."""

from __future__ import annotations

import torch

from ..models.scorer import TransitionScorer
from ..systems import NONE, Config, TransitionSystem

NEG_INF = float("-inf")


def _rows(system: TransitionSystem, configs: list[Config], live: list[int], offsets: list[int], empty: int):
    """Feature rows (table indices) and legal flags of the live configurations."""
    rows, legal = [], []
    for i in live:
        c = configs[i]
        off = offsets[i]
        rows.append([w + off if w != NONE else empty for w in system.features(c)])
        legal.append(system.legal(c))
    return rows, legal


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
