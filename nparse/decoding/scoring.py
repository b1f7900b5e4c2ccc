"""What decoders and training loops need from a network: the scores of every transition.

Decoding and the training loops never see the model class: they take a ``TransitionScores``,
anything that scores feature rows against a table it precomputed for a batch (the first MLP
layer of every word in every feature slot, see ``models/scorer.py``). Another network (a
biaffine scorer, a transformer over the stack) plugs in by meeting this protocol.
"""

from __future__ import annotations

from typing import Protocol

import torch


class TransitionScores(Protocol):
    n_actions: int  # columns of ``scores``: one per transition of the system

    def scores(self, table: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
        """[N, n_actions] scores of configurations whose feature slot s reads ``table`` row
        ``rows[i, s]`` (the table's last row is the empty position)."""
        ...
