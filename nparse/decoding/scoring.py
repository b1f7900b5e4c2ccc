"""What decoders and training loops need from a network: the scores of every transition, and
the whole network as the decoders read it.

Decoding and the training loops never see the model class: they take a ``TransitionScores``,
anything that scores feature rows against a table it precomputed for a batch (the first MLP
layer of every word in every feature slot, see ``models/scorer.py``), and a ``Network``: one
trained parser (``models.parser.ParserModel``) or several averaged (``models.ensemble.
EnsembleModel``). Another network (a biaffine scorer, a transformer over the stack) plugs in by
meeting these protocols. Capabilities that only some scorers have are protocols of their own,
checked with ``isinstance`` against the protocol, never against a class.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, Sequence, runtime_checkable

import numpy as np
import torch

if TYPE_CHECKING:
    from ..io.data import Batch, Vocabs
    from ..systems import TransitionSystem
    from ..systems.adapters.arrays import Layout


class TransitionScores(Protocol):
    n_actions: int  # columns of ``scores``: one per transition of the system

    def scores(self, table: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
        """[N, n_actions] scores of configurations whose feature slot s reads ``table`` row
        ``rows[i, s]`` (the table's last row is the empty position)."""
        ...


@runtime_checkable
class LegalScores(Protocol):
    """A scorer whose scores depend on the legal transitions (an ensemble averages its members'
    probabilities over them): decoders and distillation pass them."""

    def legal_scores(self, table: torch.Tensor, rows: np.ndarray, legal: np.ndarray) -> np.ndarray:
        """[N, n_actions] float64 log-scores of the rows, over their legal transitions."""
        ...


@runtime_checkable
class NumpyScores(Protocol):
    """A scorer that also scores in numpy (faster for the small float32 CPU batches of decoding)."""

    def numpy_scores(self, table: np.ndarray, rows: np.ndarray) -> np.ndarray: ...


class Network(Protocol):
    """What the decoders (``decoding/decode.py``) and the API read from a network."""

    @property
    def vocabs(self) -> "Vocabs":
        """The input is read with these (an ensemble's: the first member's)."""
        ...

    @property
    def system(self) -> "TransitionSystem": ...

    @property
    def scorer(self) -> TransitionScores: ...

    @property
    def tagger(self) -> Any:
        """UPOS from the BiLSTM vectors, or None."""
        ...

    @property
    def analyser(self) -> Any:
        """XPOS, FEATS and lemma-rule scores by name (``io.data.ANALYSIS``) from the BiLSTM vectors, or None."""
        ...

    @property
    def completion(self) -> Any:
        """The completion model's factor scorer, or None (always None for an ensemble)."""
        ...

    @property
    def members(self) -> Sequence[Any]:
        """The trained parsers whose scores this network combines (itself, for one parser)."""
        ...

    @property
    def device(self) -> torch.device: ...

    @property
    def precision(self) -> str: ...

    @property
    def pos_inputs(self) -> tuple[str, ...]: ...

    @property
    def has_arc_factor(self) -> bool:
        """Whether ``decoder=mst`` can decode it (the completion model's first-order factor)."""
        ...

    def eval(self) -> Any: ...

    def fill_char_cache(self) -> None: ...

    def layout(self, width: int) -> "Layout": ...

    def encode(self, batch: "Batch", with_table: bool = True, compact: bool = False) -> tuple[Any, torch.Tensor | None]:
        """BiLSTM vectors and (``with_table``) the first-layer table; ``compact``: without padding."""
        ...

    def label_scores(self, vectors: Any, heads: Any, deps: Any) -> torch.Tensor: ...
