"""The choices of global training as small objects, chosen once from the config: when to update
(early, max-violation, full), which correct derivation is the positive of a max-violation update
(the latent gold prefix or the best correct item), where a sentence goes on after an update
(nowhere, the positive, the negative) and what a sentence does next after a step (keep its
items, restart from a configuration, or end).

``GlobalSearch`` (``global_loop.py``) runs the beam and asks these objects at every step; the
objects read the step through ``SentenceStep`` and act only through ``SearchView``, the few
operations of the search they need, so the loop holds no branch on a setting's name and neither
module reads the other's internals. ``GlobalSettings`` keeps the config's names (for logs and
checks) and builds the objects from them.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, ClassVar, Protocol

import numpy as np

if TYPE_CHECKING:
    from ..decoding.beam import Step


# -- what a sentence does after a step -------------------------------------------------------


@dataclass(frozen=True)
class Keep:
    """Go on with the items the step selected."""


@dataclass(frozen=True)
class Restart:
    """A fresh segment from ``row`` (a configuration; Aufrant et al. 2017, Algorithm 3)."""

    row: np.ndarray


@dataclass(frozen=True)
class End:
    """The sentence is done."""


KEEP, END = Keep(), End()
Next = Keep | Restart | End


# -- records ---------------------------------------------------------------------------------


@dataclass
class Update:
    """One update; derivations are counted from their segment's restart point."""

    pos: int  # node of the positive example
    neg: int  # node of the negative example (the beam's best)
    beam: list[int]  # nodes of the beam at the update (the softmax normaliser, with pos)
    violation: bool  # the negative is wrong (only then does the margin loss apply)


@dataclass
class Violation:
    """The largest violation of a segment so far, with where to restart after its update."""

    gap: float
    update: Update
    pos_row: np.ndarray
    restart_row: np.ndarray | None  # the configuration to restart from (None: no restart)


@dataclass
class WrongStep:
    """A step whose best item is wrong, kept until the latent gold positive is known."""

    neg: int  # the negative's node
    score: float  # its derivation score
    beam: list[int]  # nodes of the beam at that step
    neg_row: np.ndarray | None  # its configuration, when the restart policy may go on from it


@dataclass
class Track:
    """Per-sentence bookkeeping between steps."""

    worst: Violation | None = None  # largest violation of the current segment
    wrong: list[WrongStep] = field(default_factory=list)  # wrong steps of the segment (latent gold positives)
    last_pos_row: np.ndarray | None = None  # the configuration of the last positive example


@dataclass
class SentenceStep:
    """One sentence after a step: the rows of its beam (group ``gf``) and, with a gold beam, of
    its gold beam (``gf + 1``) in the step's selection ``s`` (``decoding.beam.step``)."""

    b: int  # the sentence
    gf: int  # the group of its beam
    s: Step  # the step's selection (parent, action, total, marked, best_marked, count per group)
    sel_node: np.ndarray  # [G, K] node of every selected candidate
    beam: list[int]  # nodes of the beam's selected items, best first
    neg_node: int  # the beam's best item: the negative of an update now
    neg_ok: bool  # whether it is correct
    best: tuple[float, int, int] | None  # the best correct item known now: (score, group, rank)
    over: bool  # every item (of the beam and the gold beam) has finished: the segment ends

    @property
    def best_node(self) -> int:
        assert self.best is not None
        return int(self.sel_node[self.best[1], self.best[2]])


# -- what the strategies may do in the search ----------------------------------------------


class SearchView(Protocol):
    """The operations of the search that update strategies, positives and restart policies use
    (``global_loop.GlobalSearch`` implements them)."""

    def track(self, b: int) -> Track:
        """Sentence b's bookkeeping between steps."""
        ...

    def candidate_row(self, s: Step, g: int, r: int) -> np.ndarray:
        """The configuration of selected candidate ``r`` of group ``g`` of the step ``s``."""
        ...

    def materialize(self, parent: int, action: int) -> np.ndarray:
        """The configuration of the current item ``parent`` after ``action``."""
        ...

    def new_positive(self, parent: int, action: int, total: np.ndarray) -> int:
        """A node for the candidate (item ``parent``, ``action``, score ``total`` [1, 1])."""
        ...

    def negative_row(self, step: SentenceStep) -> np.ndarray | None:
        """The negative's configuration where the restart policy may go on from it, else None."""
        ...

    def restart_row(self, step: SentenceStep, pos_row: np.ndarray) -> np.ndarray | None:
        """Where sentence ``step.b`` goes on after an update at this step (None: it ends)."""
        ...

    def prefix_violation(self, b: int, track: Track, best: int) -> Violation:
        """The largest violation of the finished segment against prefixes of node ``best``."""
        ...

    def explorable(self, node: int, b: int) -> bool:
        """Whether the oracle may explore along a node's derivation."""
        ...

    def add_update(self, track: Track, update: Update, pos_row: np.ndarray) -> None:
        """Record an update of the sentence."""
        ...

    def stuck(self) -> None:
        """Count a sentence where no correct transition was left."""
        ...


# -- restart policies ------------------------------------------------------------------------


class RestartPolicy(ABC):
    """Where a sentence goes on after an update (``trainer.restart``, ``trainer.restart_from``)."""

    restarts: ClassVar[bool] = True
    keeps_negative: ClassVar[bool] = False  # the negative's configuration is needed later

    @abstractmethod
    def row(
        self, search: SearchView, b: int, neg_node: int, pos_row: np.ndarray, neg_row: Callable[[], np.ndarray | None]
    ) -> np.ndarray | None:
        """The configuration sentence ``b`` restarts from (None: it ends)."""


class NoRestart(RestartPolicy):
    """The sentence ends at its first update (early update, max-violation as published)."""

    restarts = False

    def row(self, search, b, neg_node, pos_row, neg_row):
        return None


class FromPositive(RestartPolicy):
    """Go on from the positive example (Aufrant et al. 2017)."""

    def row(self, search, b, neg_node, pos_row, neg_row):
        return pos_row


class FromNegative(RestartPolicy):
    """Go on from the negative example (exploration), where the oracle may explore along it;
    from the positive elsewhere."""

    keeps_negative = True

    def row(self, search, b, neg_node, pos_row, neg_row):
        if search.explorable(neg_node, b):
            row = neg_row()
            if row is not None:
                return row
        return pos_row


# -- positives of max-violation --------------------------------------------------------------


class Positive(ABC):
    """What a max-violation update compares the negative with (``trainer.positive``)."""

    @abstractmethod
    def at_wrong_step(self, search: SearchView, step: SentenceStep) -> None:
        """The beam's best item is wrong at this step: note the violation."""

    def at_segment_end(self, search: SearchView, step: SentenceStep) -> None:
        """The segment is over: settle its largest violation (``Track.worst``)."""


class LatentGoldPrefix(Positive):
    """The prefix of the best complete correct derivation as long as the negative (latent gold
    sequences, Björkelund & Nivre 2015): known only when the segment ends."""

    def at_wrong_step(self, search, step):
        score = float(step.s.total[step.gf, 0])
        search.track(step.b).wrong.append(WrongStep(step.neg_node, score, step.beam, search.negative_row(step)))

    def at_segment_end(self, search, step):
        track = search.track(step.b)
        if track.wrong and step.best is not None:
            track.worst = search.prefix_violation(step.b, track, step.best_node)


class BestCorrect(Positive):
    """The best correct item known at the step (of the beam and the gold beam)."""

    def at_wrong_step(self, search, step):
        if step.best is None:
            return
        track = search.track(step.b)
        gap = step.s.total[step.gf, 0] - step.best[0]
        if track.worst is None or gap > track.worst.gap:
            pos_row = search.candidate_row(step.s, step.best[1], step.best[2])
            up = Update(step.best_node, step.neg_node, step.beam, True)
            track.worst = Violation(gap, up, pos_row, search.restart_row(step, pos_row))


# -- update strategies -----------------------------------------------------------------------


class UpdateStrategy(ABC):
    """When an update happens (``trainer.update``)."""

    gold_beam: ClassVar[bool] = True  # a gold beam (correct transitions only) is decoded beside the beam
    restartable: ClassVar[bool] = True  # an update may leave part of the sentence to restart on

    @abstractmethod
    def attention(self, marked: np.ndarray, valid: np.ndarray, free: np.ndarray) -> np.ndarray:
        """Which sentences (their beams' groups ``free``) may need an update now, besides those
        whose segment ended."""

    def at_step(self, search: SearchView, step: SentenceStep) -> Next | None:
        """An update at this step, and what the sentence does next; None: none now."""
        return None

    def at_segment_end(self, search: SearchView, step: SentenceStep) -> None:
        """The segment is over: settle its largest violation, if the strategy tracks them."""


class EarlyUpdate(UpdateStrategy):
    """Update as soon as no item of the beam is correct (Collins & Roark 2004; Algorithm 2 of
    Aufrant et al. 2017): the best correct candidate before truncation against the beam's best."""

    gold_beam = False

    def attention(self, marked, valid, free):
        return ~(marked & valid)[free].any(1)

    def at_step(self, search, step):
        s, gf = step.s, step.gf
        if s.marked[gf, : s.count[gf]].any():
            return None
        parent, action = int(s.best_marked[gf, 0]), int(s.best_marked[gf, 1])
        if parent < 0:
            search.stuck()
            return END
        pos_node = search.new_positive(parent, action, s.best_marked[gf : gf + 1, 2:3])
        pos_row = search.materialize(parent, action)
        search.add_update(search.track(step.b), Update(pos_node, step.neg_node, step.beam, True), pos_row)
        row = search.restart_row(step, pos_row)
        return END if row is None else Restart(row)


class MaxViolation(UpdateStrategy):
    """Decode to the end beside a gold beam and update where the beam's best item is most
    ahead of the positive (Huang et al. 2012; Björkelund & Nivre 2015)."""

    def __init__(self, positive: Positive):
        self.positive = positive

    def attention(self, marked, valid, free):
        return ~marked[free, 0]

    def at_step(self, search, step):
        if not step.neg_ok:
            self.positive.at_wrong_step(search, step)
        return None

    def at_segment_end(self, search, step):
        self.positive.at_segment_end(search, step)


class FullUpdate(UpdateStrategy):
    """Decode to the end; the positive is the best complete correct derivation."""

    restartable = False

    def attention(self, marked, valid, free):
        return np.zeros(len(free), dtype=bool)


# -- the settings ----------------------------------------------------------------------------

UPDATES: dict[str, Callable[[Positive], UpdateStrategy]] = {
    "early": lambda positive: EarlyUpdate(),
    "max_violation": MaxViolation,
    "full": lambda positive: FullUpdate(),
}
POSITIVES: dict[str, type[Positive]] = {"prefix": LatentGoldPrefix, "best": BestCorrect}
RESTART_FROM: dict[str, type[RestartPolicy]] = {"positive": FromPositive, "negative": FromNegative}
LOSSES = ("margin", "softmax")
SCORES = {"raw": False, "local": True}  # whether derivations sum local scores (log-softmax)


@dataclass
class GlobalSettings:
    """Beam-training settings by their config names (``trainer.*``); ``update_strategy`` and
    ``restart_policy`` are the objects the loop uses, built from the names once."""

    beam_size: int = 8
    update: str = "early"
    loss: str = "margin"
    restart: bool = False
    restart_from: str = "positive"
    scores: str = (
        "raw"  # what derivations sum: raw transition scores, or local ones (log-softmax over the legal transitions)
    )
    positive: str = "prefix"  # max_violation's positive: "prefix" of the best complete correct derivation, or "best" correct item at the step

    def __post_init__(self) -> None:
        for key, value, choices in (
            ("trainer.update", self.update, UPDATES),
            ("trainer.global_loss", self.loss, LOSSES),
            ("trainer.restart_from", self.restart_from, RESTART_FROM),
            ("trainer.global_scores", self.scores, SCORES),
            ("trainer.positive", self.positive, POSITIVES),
        ):
            if value not in choices:
                raise ValueError(f"{key}={value}: choose one of {', '.join(choices)}")
        self.update_strategy = UPDATES[self.update](POSITIVES[self.positive]())
        self.restart_policy: RestartPolicy = RESTART_FROM[self.restart_from]() if self.restart else NoRestart()
        self.local_scores = SCORES[self.scores]


__all__ = [
    "END", "KEEP", "BestCorrect", "EarlyUpdate", "End", "FromNegative", "FromPositive", "FullUpdate", "GlobalSettings",
    "Keep", "LatentGoldPrefix", "MaxViolation", "Next", "NoRestart", "Positive", "Restart", "RestartPolicy",
    "SearchView", "SentenceStep", "Track", "Update", "UpdateStrategy", "Violation", "WrongStep",
]  # fmt: skip
