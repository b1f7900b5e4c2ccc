"""The interface every transition system and oracle implements.

A transition system defines configurations, legal transitions, how to apply them, the terminal
test and the feature positions the scorer reads. Oracles live in the same module as their system
and say which transitions are correct in a configuration for a gold tree.

Configurations are plain objects of small Python lists: ``copy()`` is what a beam uses to branch,
``heads``/``lmod``/``rmod`` expose the partial tree (for higher-order factors), and
``system.state_key(c)`` is a hashable summary of everything that decides the future (used by
exhaustive search and by beam recombination). Words are numbered 1..n and 0 is the root.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar, Generic, Hashable, Sequence, TypeVar

import numpy as np

from ..trees import children_of
from .kernels.rows import NONE  # "no word": empty feature position, missing head, missing modifier


class Config:
    """Stack(s), buffer and partial tree. The buffer is stored reversed: ``buffer[-1]`` is b0."""

    __slots__ = ("stack", "buffer", "heads", "lmod", "rmod", "n", "steps")

    def __init__(self, stack: list[int], buffer: list[int], n: int):
        self.stack = stack
        self.buffer = buffer
        self.n = n
        self.steps = 0  # transitions applied so far
        self.heads = [NONE] * (n + 1)
        self.lmod = [NONE] * (n + 1)  # leftmost dependent attached so far
        self.rmod = [NONE] * (n + 1)  # rightmost dependent attached so far

    def copy(self) -> "Config":
        """An independent copy (lists copied). Spelled out for the base slots: exhaustive search
        copies a configuration per move tried, and a loop over the slots took a third of its time."""
        other = object.__new__(type(self))
        other.stack = self.stack[:]
        other.buffer = self.buffer[:]
        other.heads = self.heads[:]
        other.lmod = self.lmod[:]
        other.rmod = self.rmod[:]
        other.n = self.n
        other.steps = self.steps
        for name in _extra_slots(type(self)):
            value = getattr(self, name)
            setattr(other, name, value[:] if isinstance(value, list) else value)
        return other

    def attach(self, h: int, d: int) -> None:
        """Add the arc h -> d and keep the leftmost/rightmost-modifier tables current."""
        self.heads[d] = h
        if self.lmod[h] == NONE or d < self.lmod[h]:
            self.lmod[h] = d
        if self.rmod[h] == NONE or d > self.rmod[h]:
            self.rmod[h] = d

    def subtree_roots(self) -> list[int]:
        """The top of the partial tree every word belongs to (index 0 stays 0)."""
        tops = [0] * (self.n + 1)
        for w in range(1, self.n + 1):
            top = w
            while self.heads[top] != NONE:
                top = self.heads[top]
            tops[w] = top
        return tops

    def __repr__(self) -> str:
        return f"{type(self).__name__}(stack={self.stack}, buffer={self.buffer[::-1]}, heads={self.heads})"


_SLOTS_CACHE: dict[type, tuple[str, ...]] = {}


def _all_slots(cls: type) -> tuple[str, ...]:
    slots = _SLOTS_CACHE.get(cls)
    if slots is None:
        names: list[str] = []
        for klass in reversed(cls.__mro__):
            names.extend(getattr(klass, "__slots__", ()))
        slots = _SLOTS_CACHE[cls] = tuple(dict.fromkeys(names))
    return slots


_EXTRA_CACHE: dict[type, tuple[str, ...]] = {}


def _extra_slots(cls: type) -> tuple[str, ...]:
    """The slots a subclass adds to ``Config``'s (a second stack, planes, ...)."""
    extra = _EXTRA_CACHE.get(cls)
    if extra is None:
        extra = _EXTRA_CACHE[cls] = tuple(s for s in _all_slots(cls) if s not in Config.__slots__)
    return extra


class Gold:
    """A gold tree with what oracles precompute once per sentence.

    Subclasses add what their oracles read (``proj``, ``mpc``, ``plane``, ``crossing``); an
    oracle names the fields its compiled twin reads in ``Oracle.gold_fields``, and
    ``row_oracle.gold_fields`` fails on a declared field the gold object lacks."""

    nonprojective: bool = False  # the exact oracles' mark of a tree whose costs they compute apart
    spans: np.ndarray  # the exact oracles' span tables (``exact.SpanTables``)
    row_fields: "tuple[np.ndarray, np.ndarray] | None" = None  # the compiled oracles' arrays, kept

    def __init__(self, heads: Sequence[int]):
        self.heads = list(heads)
        self.n = len(self.heads) - 1
        self.children = children_of(self.heads)

    def complete(self, heads: Sequence[int], w: int) -> bool:
        """Whether every gold dependent of word ``w`` is attached in ``heads`` (a configuration's
        heads): the static oracles attach a word to its head only then."""
        return all(heads[k] != NONE for k in self.children[w])


C = TypeVar("C", bound=Config)  # a system's configuration type
G = TypeVar("G", bound=Gold)  # what an oracle prepares per sentence
S = TypeVar("S", bound="TransitionSystem[Any]")  # the system an oracle is for


def front_arc(c: Config, a: int, left: int, right: int) -> tuple[int, int] | None:
    """The arc of action ``a`` in systems whose arcs join the stack top and b0: ``left`` adds
    b0 -> s0, ``right`` adds s0 -> b0 (arc-eager, 2-Planar, Covington)."""
    if a == left:
        return c.buffer[-1], c.stack[-1]
    if a == right:
        return c.stack[-1], c.buffer[-1]
    return None


def single_rooted(heads: Sequence[int]) -> list[int]:
    """Heads of a finished parse (index 0 = root) completed to a single-rooted tree.

    Systems that can stop with words still headless (arc-eager, 2-Planar) are completed here:
    every leftover word goes to the root's dependent; if the root has none, the leftmost
    leftover word becomes it. Systems that always build a full tree pass through unchanged.
    """
    heads = list(heads)
    n = len(heads) - 1
    left = [d for d in range(1, n + 1) if heads[d] == NONE]
    if left:
        top = next((d for d in range(1, n + 1) if heads[d] == 0), None)
        if top is None:
            top = left.pop(0)
            heads[top] = 0
        for d in left:
            heads[d] = top
    return heads


class TransitionSystem(ABC, Generic[C]):
    """A transition system over configurations of type ``C``: legal transitions, their effect,
    features."""

    name: ClassVar[str]
    actions: ClassVar[tuple[str, ...]]
    base_slots: ClassVar[tuple[str, ...]]  # names of the feature positions without modifiers
    code: ClassVar[int]  # the ``CODE`` of the system's compiled kernel module (systems/kernels/)
    row_blocks: ClassVar[tuple[str, ...]] = ()  # optional row blocks it uses: "stack2", "plane"

    roots: ClassVar[tuple[str, ...]] = ("end", "start")  # root placements supported, default first
    # Leftmost/rightmost dependents of base positions, e.g. "lmod(s0)": added when modifiers=True.
    modifier_slots: ClassVar[tuple[str, ...]] = ()

    def __init__(self, root: str | None = None, modifiers: bool = False):
        root = root or self.roots[0]
        if root not in self.roots:
            raise ValueError(f"{self.name}: root must be one of {self.roots}, not {root!r}")
        self.root = root
        self.modifiers = modifiers
        # (leftmost?, index of the base position) for every modifier slot
        self._modifier_sources = [(s.startswith("lmod"), self.base_slots.index(s[5:-1])) for s in self.modifier_slots]

    @property
    def slots(self) -> tuple[str, ...]:
        """Names of the feature positions, in the order ``features`` returns them."""
        return self.base_slots + (self.modifier_slots if self.modifiers else ())

    @property
    def n_slots(self) -> int:
        return len(self.slots)

    def action_index(self, name: str) -> int:
        return self.actions.index(name)

    def flags(self, **by_name: bool) -> list[bool]:
        """Legal flags given by action name, returned in ``actions`` order, so no flag depends on
        remembering the order. The names are the first ``len(by_name)`` actions: a system that
        extends another (SWAP after arc-standard's moves) adds its own to the parent's ``named``."""
        names = self.actions[: len(by_name)]
        if tuple(by_name) == tuple(names):  # given in order (exhaustive search calls this millions of times)
            return [bool(v) for v in by_name.values()]
        if set(by_name) != set(names):
            raise TypeError(f"{self.name}.flags: expected the actions {names}, got {sorted(by_name)}")
        return [bool(by_name[a]) for a in names]

    def named(self, flags: Sequence[bool]) -> dict[str, bool]:
        """One flag per action name (for messages, walkthroughs and systems that extend another)."""
        return dict(zip(self.actions, flags))

    @abstractmethod
    def initial(self, n: int) -> C: ...

    @abstractmethod
    def terminal(self, c: C) -> bool: ...

    @abstractmethod
    def legal(self, c: C) -> list[bool]:
        """One flag per action; at least one is true in every non-terminal configuration."""

    def apply(self, c: C, a: int) -> None:
        """Apply action ``a`` in place (``c.copy()`` first to branch)."""
        self._apply(c, a)
        c.steps += 1

    @abstractmethod
    def _apply(self, c: C, a: int) -> None:
        """The system's own effect of action ``a``."""

    def features(self, c: C) -> list[int]:
        """Word index (0 = root) at every feature position, NONE where the position is empty."""
        feats = self.positions(c)
        if self.modifiers:
            lmod, rmod = c.lmod, c.rmod
            for leftmost, i in self._modifier_sources:
                w = feats[i]
                feats.append(NONE if w == NONE else (lmod if leftmost else rmod)[w])
        return feats

    @abstractmethod
    def positions(self, c: C) -> list[int]:
        """Word index at every base position (``base_slots``), NONE where it is empty."""

    @abstractmethod
    def state_key(self, c: C) -> Hashable:
        """Everything that decides the transitions and arcs still possible from ``c``."""

    def arc_of(self, c: C, a: int) -> tuple[int, int] | None:
        """The arc (head, dependent) that action ``a`` adds in ``c``, if any."""
        return None

    def read_row(self, c: C, row: list[int], off: list[int]) -> None:
        """Set what the system keeps in its own row blocks on ``c``, made from a row by
        ``Layout.to_config`` (the stacks, buffer and tree are set already; ``off``: the
        layout's offsets, ``kernels/rows.py``). Systems without blocks of their own keep this."""

    def write_row(self, c: C, row: np.ndarray, off: list[int]) -> None:
        """Write what the system keeps in its own row blocks into ``row``, made from ``c`` by
        ``Layout.from_config`` (``c.stack`` in ``L_STACK``, ``c.stack2`` in ``L_STACK2``
        already)."""

    def output(self, c: C) -> list[int]:
        """Heads of the finished parse as a single-rooted tree (see ``single_rooted``)."""
        return single_rooted(c.heads)

    def parts(self, c: C) -> list[tuple[str, list[int]]]:
        """The configuration's word lists in reading order, named (for walkthroughs and errors)."""
        return [("stack", c.stack), ("buffer", c.buffer[::-1])]

    def describe(self) -> str:
        return f"{self.name}(root={self.root}, modifiers={self.modifiers})"


class Oracle(ABC, Generic[S, G]):
    """Says which transitions are correct.

    ``complete`` oracles (dynamic ones) are defined in every configuration, so training may
    follow the model's own mistakes (exploration); the others are only defined on configurations
    from which the gold tree is still reachable.
    """

    name: ClassVar[str]
    complete: ClassVar[bool] = False
    row_code: ClassVar[int]  # its compiled twin in kernels/oracles.py (one code per oracle)
    # the optional gold fields (kernels/gold.py's OPTIONAL) its compiled twin reads
    gold_fields: ClassVar[tuple[str, ...]] = ()

    def __init__(self, system: S):
        self.system = system

    def prepare(self, heads: Sequence[int]) -> G | None:
        """Per-sentence precomputation; None if this oracle cannot train on the tree."""
        return Gold(heads)  # type: ignore[return-value]  # oracles with their own Gold override this

    @abstractmethod
    def correct(self, c: Config, gold: G) -> list[bool]:
        """One flag per action: the transitions this oracle accepts in ``c`` (a configuration
        of ``system``)."""

    def row_options(self) -> int:
        """The option bits the compiled twin reads (``opt`` in ``kernels/oracles.py``)."""
        return 0

    def replayed(self, gold: G) -> "Sequence[int] | np.ndarray":
        """What the compiled twin reads as ``seq``, computed once when the sentence was prepared:
        the transition sequence a replayed static oracle reads at the step count, or the span
        tables of the exact oracles (``kernels/reachable.sentence_spans``); empty for the others."""
        return ()

    def may_explore(self, c: Config, gold: G, action: int) -> bool:
        """Whether training with exploration may follow a wrong ``action`` here."""
        return True

    def reaches(self, gold: G) -> bool:
        """Whether the correct derivations rebuild the gold tree itself (not only the best
        reachable one): false for trees the system cannot build that the oracle still accepts."""
        return True


class StaticOracle(Oracle[S, G]):
    """A deterministic oracle: one correct transition per configuration."""

    @abstractmethod
    def next(self, c: Config, gold: G) -> int: ...

    def correct(self, c: Config, gold: G) -> list[bool]:
        flags = [False] * len(self.system.actions)
        flags[self.next(c, gold)] = True
        return flags

    def sequence(self, gold: G) -> list[int]:
        """The whole transition sequence the oracle produces for the gold tree."""
        c = self.system.initial(gold.n)
        seq = []
        while not self.system.terminal(c):
            a = self.next(c, gold)
            if not self.system.legal(c)[a]:
                raise RuntimeError(f"{self.name} oracle chose illegal {self.system.actions[a]} in {c}")
            self.system.apply(c, a)
            seq.append(a)
        return seq


class CostOracle(Oracle[S, G]):
    """A dynamic oracle given by transition costs; correct = legal with minimal cost."""

    complete = True

    @abstractmethod
    def costs(self, c: Config, gold: G) -> list[int | None]:
        """Cost of every action (None for illegal ones)."""

    def correct(self, c: Config, gold: G) -> list[bool]:
        costs = self.costs(c, gold)
        best = min(x for x in costs if x is not None)
        return [x is not None and x == best for x in costs]
