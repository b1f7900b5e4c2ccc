"""Several trained parsers decoded as one: ``nparse.load([ck1, ck2, ...])``.

Every member encodes the batch with its own BiLSTM (reading it with its own vocabularies when
they differ from the first member's), and their first-layer tables are laid side by side, so a
parser step gathers the feature rows of all members at once. At every step each member's
transition scores become probabilities over the legal transitions (softmax at the member's own
temperature, the one fitted on dev, so that a member with larger raw scores does not outvote the
others), the probabilities are averaged and the decoder sums their logarithms. Labels and tags
are averaged the same way (softmax of each member's scores). The members must share the
transition system and the label set (and the tag set when they tag); ``check_members`` names
what differs.

An ensemble of one model passes its scores through unchanged, so it parses exactly as that model.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any, Iterator, Sequence

import numpy as np
import torch

from ..io.data import ANALYSIS, Batch, Vocabs, collate, encode
from ..io.vocab import Vocab
from ..systems.adapters.arrays import Layout
from ..timing import timed
from .parser import ParserModel
from .scorer import slot_sums

INPUT_TABLES = ("words", "chars", "upos", "xpos", "feats")  # what a member reads its input with


def vocab_difference(a: Vocabs, b: Vocabs, tables: Sequence[str]) -> str | None:
    """The first of ``tables`` in which two vocabularies differ, described; None if they agree."""
    for name in tables:
        x, y = getattr(a, name).itos, getattr(b, name).itos
        if x != y:
            only_a, only_b = sorted(set(x) - set(y)), sorted(set(y) - set(x))
            if not only_a and not only_b:
                return f"the same {len(x)} {name} in another order"
            parts = [
                f"{len(only)} only in {which} ({_few(only)})"
                for only, which in ((only_a, "the first"), (only_b, "this one"))
                if only
            ]
            return f"{name}: {'; '.join(parts)}"
    if "words" in tables and a.lowercase != b.lowercase:
        return f"words: lowercased {a.lowercase} in the first, {b.lowercase} in this one"
    return None


def _few(items: list[str]) -> str:
    return ", ".join(items[:5]) + (", ..." if len(items) > 5 else "")


def check_members(
    models: Sequence[ParserModel], names: Sequence[str], systems: Sequence[dict | None], decoding: bool = True
) -> None:
    """Refuse members that cannot be averaged, naming the member and what differs from the first:
    the transition system (``systems``: each checkpoint's system options, None for a model built
    in code), the label set and the tag set of members that tag (the same items in another order
    are taken: their scores are reordered), and (``decoding``: when they parse,
    not when they teach) a completion model, whose factor scores are not averaged."""
    if not models:
        raise ValueError("an ensemble needs at least one model")
    first, first_name = models[0], names[0]
    for model, name, system in zip(models, names, systems):
        if decoding and model.completion is not None:
            raise ValueError(
                f"ensemble member {name} has a completion model (model.completion.factors); "
                "ensembles average transition scores only: use models without factors"
            )
        if model is first:
            continue
        where = f"ensemble member {name} differs from the first member {first_name}"
        mine, theirs = model.system.describe(), first.system.describe()
        if system is not None and systems[0] is not None and mine == theirs:
            mine, theirs = str(system), str(systems[0])  # the options describe() does not show
        if (
            mine != theirs
            or model.system.actions != first.system.actions
            or model.system.n_slots != first.system.n_slots
        ):
            raise ValueError(f"{where}: transition system {mine} against {theirs}; the members must share the system")
        labels = vocab_difference(first.vocabs, model.vocabs, ("labels",))
        if labels and column_order(first.vocabs.labels, model.vocabs.labels) is None:
            raise ValueError(f"{where} in its label set, {labels}; the members must share the labels")
        if (model.tagger is None) != (first.tagger is None):
            has, lacks = (name, first_name) if model.tagger is not None else (first_name, name)
            raise ValueError(f"{where}: {has} predicts UPOS tags and {lacks} does not; the members must agree")
        if model.tagger is not None:
            tags = vocab_difference(first.vocabs, model.vocabs, ("upos",))
            if tags and column_order(first.vocabs.upos, model.vocabs.upos) is None:
                raise ValueError(f"{where} in the tags it predicts, {tags}; the members must share the tag set")
        if len(models) > 1 and (model.options.feats_factored or first.options.feats_factored):
            raise ValueError(
                f"{where}: a model with model.feats_factored=true cannot be averaged (one softmax per feature)"
            )
        if (model.analyser is None) != (first.analyser is None):
            has, lacks = (name, first_name) if model.analyser is not None else (first_name, name)
            raise ValueError(
                f"{where}: {has} predicts XPOS, FEATS and lemmas and {lacks} does not; the members must agree"
            )
        for table in ANALYSIS if model.analyser is not None else ():
            differ = vocab_difference(first.vocabs, model.vocabs, (table,))
            if differ and column_order(getattr(first.vocabs, table), getattr(model.vocabs, table)) is None:
                raise ValueError(f"{where} in the {table} it predicts, {differ}; the members must share them")
        if model.device != first.device:
            raise ValueError(f"{where}: it is on {model.device}, the first on {first.device}")


def column_order(first: Vocab, other: Vocab) -> torch.Tensor | None:
    """For a member whose labels (or tags) are the first member's in another order (vocabularies
    are sorted by frequency, so models trained on other parts of a treebank order them
    differently): the member's column of each of the first's, to reorder its scores by; None
    if the two hold different items."""
    if len(first.itos) != len(other.itos) or set(first.itos) != set(other.itos):
        return None
    return torch.tensor([other.stoi[item] for item in first.itos])


def reordered(scores: torch.Tensor, order: torch.Tensor | None) -> torch.Tensor:
    """A member's scores with their columns in the first member's order."""
    return scores if order is None else scores[..., order.to(scores.device)]


def system_of(config: Any) -> dict | None:
    """A member's system options as its checkpoint keeps them (None without a config)."""
    return None if config is None else asdict(config.system)


def _log_softmax(scores: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    """Row-wise log-softmax over the ``allowed`` entries (-inf elsewhere), finite where allowed."""
    z = np.where(allowed, scores, -np.inf)
    top = z.max(1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        return z - top - np.log(np.exp(z - top).sum(1, keepdims=True))


def log_mean_exp(logps: Sequence[np.ndarray]) -> np.ndarray:
    """The log of the mean of probabilities given as logarithms, without leaving the log domain
    (a probability below 1e-308 in every member stays finite)."""
    with np.errstate(invalid="ignore"):
        return np.logaddexp.reduce(np.stack(logps), axis=0) - np.log(len(logps))


def torch_log_mean_exp(logps: Sequence[torch.Tensor]) -> torch.Tensor:
    return torch.logsumexp(torch.stack(list(logps)), 0) - float(np.log(len(logps)))


class EnsembleScorer:
    """The transition scores of an ensemble (``decoding/scoring.TransitionScores``, plus the
    legal transitions): the members' first layers read one table with the members' columns side
    by side."""

    def __init__(self, models: Sequence[ParserModel], temperatures: Sequence[float]):
        self.scorers = [m.scorer for m in models]
        self.temperatures = [float(t) for t in temperatures]
        self.n_actions = self.scorers[0].n_actions
        self.n_slots = self.scorers[0].n_slots
        ends = np.cumsum([s.hidden for s in self.scorers])
        self.columns = list(zip([0, *ends[:-1].tolist()], ends.tolist()))
        self.hidden = int(ends[-1])

    def scores(self, table: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
        """Raw scores, for one member only: an ensemble needs the legal transitions to average
        (``legal_scores``)."""
        if len(self.scorers) != 1:
            raise TypeError("an ensemble's scores depend on the legal transitions: call legal_scores")
        return self.scorers[0].scores(table, rows)

    def legal_scores(self, table: torch.Tensor, rows: np.ndarray, legal: np.ndarray) -> np.ndarray:
        """[N, n_actions] float64: the log of the members' mean probabilities over each row's
        legal transitions (0 elsewhere); one member's raw scores unchanged."""
        numpy = table.device.type == "cpu" and table.dtype == torch.float32
        if len(self.scorers) == 1:
            only = self.scorers[0]
            if numpy:
                return only.numpy_scores(table.numpy(), rows).astype(np.float64)
            return only.scores(table, torch.from_numpy(rows).to(table.device)).double().cpu().numpy()
        hidden = self._hidden(table, rows, numpy)
        logps = []
        for scorer, (lo, hi), temperature in zip(self.scorers, self.columns, self.temperatures):
            if numpy:
                h = np.tanh(hidden[:, lo:hi] + scorer.first.bias.detach().numpy())
                member = h @ scorer.out.weight.detach().numpy().T + scorer.out.bias.detach().numpy()
            else:
                h = torch.tanh(hidden[:, lo:hi] + scorer.first.bias)
                member = scorer.out(h).double().cpu().numpy()
            logps.append(_log_softmax(member.astype(np.float64) / temperature, legal))
        return np.where(legal, log_mean_exp(logps), 0.0)

    def _hidden(self, table: torch.Tensor, rows: np.ndarray, numpy: bool) -> Any:
        """Every member's first-layer sums (without bias) for the rows, in one gather: [N, hidden]."""
        offsets = np.arange(self.n_slots)
        if numpy:
            return slot_sums(table.numpy().reshape(-1, self.hidden), rows * self.n_slots + offsets)
        index = torch.from_numpy(rows * self.n_slots + offsets).to(table.device)
        return table.reshape(-1, self.hidden)[index].sum(1)


class EnsembleTagger:
    """UPOS scores of an ensemble (or, with ``head`` and ``table``, the scores of one of its
    analysis heads: XPOS, FEATS, lemma rules): the log of the members' mean probabilities."""

    def __init__(self, models: Sequence[ParserModel], head: str = "", table: str = "upos"):
        self.taggers: list[torch.nn.Module] = []
        for m in models:  # all members have the head (check_members)
            module = m.tagger if not head else None if m.analyser is None else m.analyser[head]
            assert module is not None
            self.taggers.append(module)
        self.orders = [_order(getattr(models[0].vocabs, table), getattr(m.vocabs, table)) for m in models]

    def __call__(self, vectors: list[torch.Tensor]) -> torch.Tensor:
        if len(self.taggers) == 1:
            return self.taggers[0](vectors[0])
        return torch_log_mean_exp(
            [
                torch.log_softmax(reordered(tagger(v), order).double(), -1)
                for tagger, v, order in zip(self.taggers, vectors, self.orders)
            ]
        )


def _order(first: Vocab, other: Vocab) -> torch.Tensor | None:
    """``column_order`` where the two differ in order only (None where they agree)."""
    return None if first.itos == other.itos else column_order(first, other)


class EnsembleModel:
    """What the decoders need of a network (``decoding.scoring.Network``), computed by several."""

    completion = None  # ensembles average transition scores only (check_members)
    has_arc_factor = False

    def __init__(self, models: Sequence[ParserModel], temperatures: Sequence[float]):
        self.members = list(models)
        first = self.members[0]
        self.vocabs = first.vocabs  # decode_sentences reads the input with the first member's
        self.system = first.system
        # Members whose input vocabularies differ from the first's read the sentences again.
        self.own_inputs = [vocab_difference(first.vocabs, m.vocabs, INPUT_TABLES) is not None for m in self.members]
        self.scorer = EnsembleScorer(self.members, temperatures)
        self.tagger = EnsembleTagger(self.members) if first.tagger is not None else None
        self.analyser = (
            {name: EnsembleTagger(self.members, name, name) for name in ANALYSIS}
            if first.analyser is not None
            else None
        )
        self.label_orders = [_order(first.vocabs.labels, m.vocabs.labels) for m in self.members]

    def __len__(self) -> int:
        return len(self.members)

    @property
    def device(self) -> torch.device:
        return self.members[0].device

    @property
    def precision(self) -> str:
        return self.members[0].precision

    @property
    def pos_inputs(self) -> tuple[str, ...]:
        """The POS columns any member reads."""
        return tuple(dict.fromkeys(p for m in self.members for p in m.pos_inputs))

    def eval(self) -> "EnsembleModel":
        for m in self.members:
            m.eval()
        return self

    def fill_char_cache(self) -> None:
        for m in self.members:
            m.fill_char_cache()

    def layout(self, width: int) -> Layout:
        return Layout(self.system, width, 0)

    def member_batches(self, batch: Batch) -> Iterator[tuple[ParserModel, Batch]]:
        for model, own in zip(self.members, self.own_inputs):
            yield (
                model,
                (collate([encode(e.sent, model.vocabs, labels=False) for e in batch.examples]) if own else batch),
            )

    def encode(
        self, batch: Batch, with_table: bool = True, compact: bool = False
    ) -> tuple[list[torch.Tensor], torch.Tensor | None]:
        """Every member's BiLSTM vectors, and (unless not wanted) their first-layer tables side
        by side; ``compact``: without padding (``ParserModel.encode``; every member reads the
        same words, so the rows agree)."""
        vectors, tables = [], []
        for model, own in self.member_batches(batch):
            v, t = model.encode(own, with_table, compact)
            vectors.append(v)
            tables.append(t)
        if not with_table:
            return vectors, None
        with timed("encoder"):
            table = tables[0] if len(tables) == 1 else torch.cat(tables, dim=-1)  # type: ignore[arg-type]
        return vectors, table

    def label_scores(
        self, vectors: list[torch.Tensor], heads: Sequence[int] | np.ndarray, deps: Sequence[int] | np.ndarray
    ) -> torch.Tensor:
        """Label scores of the arcs heads[i] -> deps[i]: the log of the members' mean label
        probabilities (one member's raw scores)."""
        if len(self.members) == 1:
            return self.members[0].label_scores(vectors[0], heads, deps)
        return torch_log_mean_exp(
            [
                torch.log_softmax(reordered(m.label_scores(v, heads, deps), order).double(), -1)
                for m, v, order in zip(self.members, vectors, self.label_orders)
            ]
        )
