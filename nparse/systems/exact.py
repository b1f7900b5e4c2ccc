"""What the exact dynamic oracles share on Python configurations (arc-standard's, and arc-hybrid's
and arc-eager's on non-projective gold): the gold tree with its span tables, handed to the
compiled twin as ``seq``, the units of a configuration, and costs from the losses after each
move. The program itself is ``kernels/reachable.py``."""

from __future__ import annotations

from typing import Any, ClassVar, Sequence

import numpy as np

from ..trees import is_projective
from .base import Config, Gold
from .kernels.reachable import EXACT_NONPROJECTIVE, relative_to_least, sentence_spans

NO_SPANS = np.zeros(0, dtype=np.int64)


def gold_with_spans(heads: Sequence[int], exact: bool) -> Gold:
    """The gold tree, with (``exact``) the span tables of ``reachable.sentence_spans``."""
    gold = Gold(heads)
    gold.spans = sentence_spans(np.asarray(gold.heads, dtype=np.int64)) if exact else NO_SPANS
    return gold


def config_units(c: Config) -> np.ndarray:
    """A configuration's units: its stack bottom to top, then its buffer from b0."""
    return np.array(c.stack + c.buffer[::-1], dtype=np.int64)


def costs_of(losses: np.ndarray, legal: list[bool]) -> list[int | None]:
    """The exact costs from the losses after each legal move (None for illegal moves)."""
    relative_to_least(losses, np.array(legal))
    return [int(x) if ok else None for x, ok in zip(losses, legal)]


class SpanTables:
    """An oracle whose compiled twin reads the gold tree's span tables as its ``seq``."""

    def replayed(self, gold: Gold) -> np.ndarray:
        """Not a sequence: the sentence's span tables (``reachable.sentence_spans``, empty where
        none are needed), computed once when the sentence was prepared."""
        return gold.spans


class ExactOnNonprojective(SpanTables):
    """``exact_nonprojective``: the exact costs on non-projective gold trees (``gold.nonprojective``,
    ``G_NONPROJ`` on rows), the cheap formulas on the others. Mixed into a ``CostOracle``."""

    gold_fields: ClassVar[tuple[str, ...]] = ("nonprojective",)

    def __init__(self, system: Any, exact_nonprojective: bool = False):
        super().__init__(system)  # type: ignore[call-arg]
        self.exact_nonprojective = exact_nonprojective

    def prepare(self, heads: Sequence[int]) -> Gold:
        exact = self.exact_nonprojective and not is_projective(list(heads))
        gold = gold_with_spans(heads, exact)
        gold.nonprojective = exact
        return gold

    def row_options(self) -> int:
        return EXACT_NONPROJECTIVE if self.exact_nonprojective else 0
