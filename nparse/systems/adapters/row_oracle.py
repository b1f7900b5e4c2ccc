"""An oracle asked on rows: the gold trees of a batch as compiled oracles read them, and the call.

Greedy and global training keep their parser states as rows (``arrays.Layout``) and ask the
compiled twin of the configured oracle (``kernels/oracles.py``) for all rows of a step at once;
the Python oracles stay the reference that tests, tools and exhaustive search read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ..kernels import oracles as kernels
from ..kernels.gold import G_HEAD, G_KID_START, G_KIDS, N_FIELDS, OPTIONAL

if TYPE_CHECKING:
    from .arrays import Layout
    from ..base import Gold, Oracle


def gold_fields(gold: "Gold", oracle: "Oracle[Any, Any]") -> np.ndarray:
    """The fields of ``kernels/gold.py`` for one gold tree: heads, dependents, and the optional
    fields the oracle declares (``oracle.gold_fields``: the projective order ``proj``,
    components ``mpc``, planes ``plane``, crossing arcs ``crossing``, the mark ``nonprojective``
    of a tree computed apart); 0 in the others. A declared field the gold object lacks is an
    error, not zeros."""
    heads = np.asarray(gold.heads, dtype=np.int64)
    n1 = len(heads)
    out = np.zeros((N_FIELDS, n1), dtype=np.int64)
    out[G_HEAD] = heads
    out[G_HEAD, 0] = -1
    words = np.arange(1, n1)
    order = np.argsort(heads[1:], kind="stable")  # dependents grouped by head, in word order
    out[G_KIDS, : n1 - 1] = words[order]
    out[G_KID_START] = np.searchsorted(heads[1:][order], np.arange(n1), "left")
    for name in oracle.gold_fields:
        if name not in OPTIONAL:
            raise ValueError(f"oracle {oracle.name!r} declares gold field {name!r}: not one of {sorted(OPTIONAL)}")
        values = getattr(gold, name, None)
        if values is None:
            raise ValueError(
                f"oracle {oracle.name!r} reads gold field {name!r}, but its prepare() gave a "
                f"{type(gold).__name__} without it"
            )
        out[OPTIONAL[name]] = values
    return out


class BatchGold:
    """The gold fields and replayed sequences of a batch's sentences, end to end (each kept with
    its gold object after the first time: batches change every epoch, sentences do not)."""

    def __init__(self, oracle: "Oracle[Any, Any]", golds: Sequence["Gold"]):
        fields, seqs = [], []
        for g in golds:
            kept = g.row_fields
            if kept is None:
                kept = (gold_fields(g, oracle), np.asarray(oracle.replayed(g), dtype=np.int64))
                g.row_fields = kept
            fields.append(kept[0])
            seqs.append(kept[1])
        self.fields = np.concatenate(fields, axis=1) if fields else np.zeros((N_FIELDS, 0), dtype=np.int64)
        self.starts = np.cumsum([0] + [f.shape[1] for f in fields]).astype(np.int64)
        self.seq = np.concatenate(seqs) if seqs else np.zeros(0, dtype=np.int64)
        self.seq_starts = np.cumsum([0] + [len(s) for s in seqs]).astype(np.int64)


class RowOracle:
    """An oracle's answers for rows of a batch of sentences, in one compiled call per step."""

    def __init__(self, oracle: "Oracle[Any, Any]", golds: Sequence["Gold"]):
        self.oracle, self.golds = oracle, golds
        self.code, self.options = oracle.row_code, oracle.row_options()
        self.gold = BatchGold(oracle, golds)

    def ask(
        self, layout: "Layout", states: np.ndarray, items: np.ndarray, sent: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(legal flags, costs, correct flags) [len(items), actions] of rows ``states[items]``, row i
        belonging to sentence ``sent[i]``; costs are ``ILLEGAL`` (-1) where illegal, and for the
        static oracles everywhere."""
        m, width = len(items), layout.n_actions
        legal = np.empty((m, width), dtype=np.bool_)
        cost = np.empty((m, width), dtype=np.int64)
        out = np.empty((m, width), dtype=np.bool_)
        g = self.gold
        kernels.oracle_rows(
            states, np.asarray(items, dtype=np.int64), np.asarray(sent, dtype=np.int64), layout.offsets, layout.code,
            layout.root_end, self.code, self.options, g.fields, g.starts, g.seq, g.seq_starts, legal, cost, out,
        )  # fmt: skip
        return legal, cost, out

    def __call__(self, layout: "Layout", states: np.ndarray, items: np.ndarray, sent: np.ndarray) -> np.ndarray:
        """Correct flags [len(items), actions] of rows ``states[items]``."""
        return self.ask(layout, states, items, sent)[2]

    def may_explore(
        self, layout: "Layout", states: np.ndarray, items: np.ndarray, sent: np.ndarray, actions: np.ndarray
    ) -> np.ndarray:
        """``Oracle.may_explore`` of every listed row with its action."""
        g = self.gold
        return kernels.may_explore_rows(
            states, np.asarray(items, dtype=np.int64), np.asarray(sent, dtype=np.int64),
            np.asarray(actions, dtype=np.int64), layout.offsets, self.code, g.fields, g.starts,
        )  # fmt: skip

    def explorable(self, layout: "Layout", row: np.ndarray, actions: list[int], b: int) -> bool:
        """Whether exploration may follow ``actions`` from ``row`` (sentence b): each one correct
        or allowed by ``may_explore``."""
        g = self.gold
        lo, hi, so, se = g.starts[b], g.starts[b + 1], g.seq_starts[b], g.seq_starts[b + 1]
        return bool(kernels.explorable(
            row.reshape(-1).copy(), np.asarray(actions, dtype=np.int64), layout.offsets, layout.code, layout.root_end,
            self.code, self.options, g.fields[:, lo:hi], g.seq[so:se], layout.n_actions,
        ))  # fmt: skip
