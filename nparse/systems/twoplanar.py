"""2-Planar (Gómez-Rodríguez & Nivre 2010) with its static oracle and the dynamic oracle of
Fernández-González & Gómez-Rodríguez (2018).

Configurations have an active and an inactive stack (both start as [root]), a buffer and arcs.
SHIFT pushes b0 onto both stacks; REDUCE pops the active stack; LEFT adds b0 -> s0 and RIGHT adds
s0 -> b0 (s0 = top of the active stack) without popping; SWITCH exchanges the stacks, never twice
in a row. Arcs respect single head and acyclicity; the root takes one dependent only (single
root). The parse ends when the buffer is empty; words still headless are attached by
``TransitionSystem.output`` (to the root's dependent). The arcs built while a stack is active
form one plane, so the output is 2-planar.

Static oracle: the one of the 2010 paper as implemented by its author in MaltParser: build the
arc between s0 and b0; switch if the inactive top has the arc; reduce if b0 has a pending arc
deeper in the active stack (in the active plane); switch if it has one deeper in the inactive
stack; else shift. An arc goes to the plane that is active when it is built unless a crossing
arc already fixed its plane (crossing arcs get different planes). The plane of every gold arc
in that run is the canonical plane assignment; arcs the run cannot build (trees that are not
2-planar) are left out of the assignment.

Dynamic oracle: loss(c) = |unreachable gold arcs of both planes| + cycles in A ∪ I
(Fernández-González & Gómez-Rodríguez 2018); an arc built on the other plane counts as unreachable, so the oracle is exact with respect to the
canonical plane assignment (checked by exhaustive search), not plane-agnostically. With
``plane_agnostic`` the loss is the minimum over every assignment of the gold arcs still to build
to the two planes (``kernels/twoplanar_agnostic.py``: the crossing graph's two colourings per
component, a minimum vertex cut between the components' conflicting demands, and cycles as in
the Covington oracle), exact for plain Hamming loss on 2-planar trees (checked by exhaustive
search); trees that are not 2-planar keep the canonical run's 2-planar subset.
cost(t) = loss(t(c)) - loss(c) except that SWITCH looks one step ahead (its cost is the best
loss after the forced next transition) and so does the loss of a configuration entered by a
SWITCH. Switch regularization (default on) makes SWITCH non-zero-cost whenever another
transition is zero-cost, SHIFT included: a SWITCH then only delays it (the paper's "any zero-cost
transition available in the active plane"). Reading it as LEFT/RIGHT/REDUCE only let switches
grow from 0.2 to 2.7 per sentence over 15 epochs on el_gdt (SWITCH, SHIFT, SWITCH, ... all
zero-cost), the lengthening the regularization is meant to stop.
"""

from __future__ import annotations

from typing import Hashable, Sequence

import numpy as np

from ..trees import arcs_cross, is_ancestor
from .kernels import twoplanar_oracle as oracle_kernels
from .kernels import twoplanar_search as search_kernels
from .adapters.arrays import Layout
from .kernels import twoplanar as kernel
from .kernels.rows import L_ACTIVE, L_NS, L_NS2, L_PLANE, L_STACK, L_STACK2, L_SWITCHED
from .kernels import oracles as row_kernels
from .base import NONE, Config, CostOracle, Gold, StaticOracle, TransitionSystem, front_arc
from .verify.search import ExactLoss

SHIFT, LEFT, RIGHT, REDUCE, SWITCH = kernel.SHIFT, kernel.LEFT, kernel.RIGHT, kernel.REDUCE, kernel.SWITCH


class TwoPlanarConfig(Config):
    """``stack`` is the active stack, ``stack2`` the inactive one; ``active`` names the plane of
    ``stack`` (0 or 1); ``plane[d]`` is the plane of the arc to d; ``switched`` says the last
    transition was a SWITCH."""

    __slots__ = ("stack2", "active", "plane", "switched")

    def __init__(self, n: int):
        super().__init__([0], list(range(n, 0, -1)), n)
        self.stack2 = [0]
        self.active = 0
        self.plane = [NONE] * (n + 1)
        self.switched = False

    def __repr__(self) -> str:
        return (
            f"TwoPlanarConfig(active={self.active}, stack={self.stack}, stack2={self.stack2}, "
            f"buffer={self.buffer[::-1]}, heads={self.heads}, plane={self.plane}, switched={self.switched})"
        )


class TwoPlanar(TransitionSystem[TwoPlanarConfig]):
    name = "twoplanar"
    code = kernel.CODE
    row_blocks = ("stack2", "plane")
    actions = kernel.ACTIONS
    base_slots = ("s0", "s1", "s2", "b0", "t0", "t1")  # t: the inactive stack
    roots = ("start",)

    modifier_slots = ("lmod(s0)", "rmod(s0)", "lmod(s1)", "rmod(s1)", "lmod(b0)")

    def read_row(self, c: TwoPlanarConfig, row: list[int], off: list[int]) -> None:
        """A row keeps plane 0's stack in ``L_STACK`` and plane 1's in ``L_STACK2``; ``c.stack``
        is the active plane's."""
        c.active, c.switched = row[off[L_ACTIVE]], bool(row[off[L_SWITCHED]])
        if c.active:
            c.stack, c.stack2 = c.stack2, c.stack
        c.plane = row[off[L_PLANE] : off[L_PLANE] + c.n + 1]

    def write_row(self, c: TwoPlanarConfig, row: np.ndarray, off: list[int]) -> None:
        if c.active:  # the stacks by plane: plane 0's (c.stack2 now) first
            width = off[L_STACK2] - off[L_STACK]
            row[off[L_STACK] : off[L_STACK] + 2 * width] = 0
            row[off[L_STACK] : off[L_STACK] + len(c.stack2)] = c.stack2
            row[off[L_STACK2] : off[L_STACK2] + len(c.stack)] = c.stack
            row[off[L_NS]], row[off[L_NS2]] = len(c.stack2), len(c.stack)
        row[off[L_ACTIVE]], row[off[L_SWITCHED]] = c.active, c.switched
        row[off[L_PLANE] : off[L_PLANE] + c.n + 1] = c.plane

    def parts(self, c: TwoPlanarConfig) -> list[tuple[str, list[int]]]:
        planes = (c.stack, c.stack2) if c.active == 0 else (c.stack2, c.stack)
        return [("plane 0", planes[0]), ("plane 1", planes[1]), ("buffer", c.buffer[::-1])]

    def initial(self, n: int) -> TwoPlanarConfig:
        return TwoPlanarConfig(n)

    def terminal(self, c: TwoPlanarConfig) -> bool:
        return not c.buffer

    def legal(self, c: TwoPlanarConfig) -> list[bool]:
        stack, heads = c.stack, c.heads
        if not c.buffer:
            return self.flags(SHIFT=False, LEFT=False, RIGHT=False, REDUCE=False, SWITCH=False)
        b0 = c.buffer[-1]
        if stack:
            s0 = stack[-1]
            left = s0 != 0 and heads[s0] == NONE and not is_ancestor(heads, s0, b0)
            right = heads[b0] == NONE and not is_ancestor(heads, b0, s0) and (s0 != 0 or c.lmod[0] == NONE)
        else:
            left = right = False
        return self.flags(SHIFT=True, LEFT=left, RIGHT=right, REDUCE=bool(stack), SWITCH=not c.switched)

    def _apply(self, c: TwoPlanarConfig, a: int) -> None:
        c.switched = False
        if a == SHIFT:
            b0 = c.buffer.pop()
            c.stack.append(b0)
            c.stack2.append(b0)
        elif a == LEFT:
            d = c.stack[-1]
            c.attach(c.buffer[-1], d)
            c.plane[d] = c.active
        elif a == RIGHT:
            d = c.buffer[-1]
            c.attach(c.stack[-1], d)
            c.plane[d] = c.active
        elif a == REDUCE:
            c.stack.pop()
        else:
            c.stack, c.stack2 = c.stack2, c.stack
            c.active = 1 - c.active
            c.switched = True

    def arc_of(self, c: TwoPlanarConfig, a: int) -> tuple[int, int] | None:
        return front_arc(c, a, LEFT, RIGHT)

    def positions(self, c: TwoPlanarConfig) -> list[int]:
        stack, other = c.stack, c.stack2
        ns, no = len(stack), len(other)
        return [
            stack[-1] if ns > 0 else NONE,
            stack[-2] if ns > 1 else NONE,
            stack[-3] if ns > 2 else NONE,
            c.buffer[-1] if c.buffer else NONE,
            other[-1] if no > 0 else NONE,
            other[-2] if no > 1 else NONE,
        ]

    def state_key(self, c: TwoPlanarConfig) -> Hashable:
        # Only words still on a stack or in the buffer can get arcs. For them, what the arcs
        # already built decide is the top of their tree: a word with a head cannot take another,
        # and h -> d closes a cycle exactly when d is the top of h's tree.
        heads = c.heads
        alive = sorted(set(c.stack) | set(c.stack2) | set(c.buffer))
        tops = []
        for w in alive:
            while heads[w] != NONE:
                w = heads[w]
            tops.append(w)
        return (
            tuple(c.stack), tuple(c.stack2), c.active, len(c.buffer),
            c.switched, c.lmod[0] != NONE, tuple(tops),
        )  # fmt: skip


# -- gold trees, planes ------------------------------------------------------------------------


def crossing_graph(heads: Sequence[int]) -> list[list[int]]:
    """For every dependent d, the dependents whose gold arcs cross the arc to d."""
    n = len(heads) - 1
    cross: list[list[int]] = [[] for _ in range(n + 1)]
    for d in range(1, n + 1):
        for e in range(d + 1, n + 1):
            if arcs_cross(heads[d], d, heads[e], e):
                cross[d].append(e)
                cross[e].append(d)
    return cross


def is_two_planar(heads: Sequence[int]) -> bool:
    """Whether the arcs can be split into two non-crossing sets (the crossing graph is bipartite)."""
    cross = crossing_graph(heads)
    color = [NONE] * len(heads)
    for start in range(1, len(heads)):
        if color[start] != NONE:
            continue
        color[start] = 0
        todo = [start]
        while todo:
            d = todo.pop()
            for e in cross[d]:
                if color[e] == NONE:
                    color[e] = 1 - color[d]
                    todo.append(e)
                elif color[e] == color[d]:
                    return False
    return True


ANY, NO_PLANE = -1, -2


class TwoPlanarGold(Gold):
    """Gold tree with its canonical plane assignment and static transition sequence.

    ``plane[d]`` is the plane (0/1) of the gold arc to d in the static oracle's run, or NONE if
    the run cannot build it. ``covered`` says every arc was built. ``crossing[d]`` is 1 where the
    arc to d crosses another arc of that 2-planar subset (only those can compete for a plane).
    """

    def __init__(self, heads: Sequence[int], system: "TwoPlanar"):
        super().__init__(heads)
        self.cross = crossing_graph(self.heads)
        self.plane, self.sequence = _static_run(self, system)
        self.covered = all(self.plane[d] != NONE for d in range(1, self.n + 1))
        self.gh = np.array(self.heads, dtype=np.int64)
        self.gplane = np.array(self.plane, dtype=np.int64)
        self.root_child = self.children[0][0] if self.children[0] else NONE
        kept = [d for d in range(1, self.n + 1) if self.plane[d] != NONE]
        self.crossing = np.zeros(self.n + 1, dtype=np.int64)
        for d in kept:
            self.crossing[d] = any(self.plane[e] != NONE for e in self.cross[d])


def _static_run(gold: "TwoPlanarGold", system: TwoPlanar) -> tuple[list[int], list[int]]:
    """Run the static oracle once, fixing arc planes on the fly as MaltParser does."""
    heads, n = gold.heads, gold.n
    constraint = [ANY] * (n + 1)  # per dependent: ANY, 0, 1 or NO_PLANE

    def fix(d: int, plane: int) -> None:
        todo = [(d, plane)]
        while todo:
            d, plane = todo.pop()
            constraint[d] = plane
            if plane < 0:
                continue
            for e in gold.cross[d]:
                if constraint[e] == ANY:
                    todo.append((e, 1 - plane))
                elif constraint[e] == plane:
                    todo.append((e, NO_PLANE))

    def decision(d: int, active: int) -> int:
        """The plane the arc to d goes to: its constraint, or the active plane if it has none."""
        return active if constraint[d] == ANY else constraint[d]

    def pending_below(c: TwoPlanarConfig, stack: list[int], plane: int) -> bool:
        """Whether b0 has an unbuilt gold arc, decided for ``plane``, with a word below the top."""
        b0 = c.buffer[-1]
        top = stack[-1] if stack else NONE
        active = c.active
        for k in gold.children[b0]:
            if k < top and c.heads[k] == NONE and decision(k, active) == plane:
                return True
        h = heads[b0]
        return h < top and c.heads[b0] == NONE and decision(b0, active) == plane

    c = system.initial(n)
    seq: list[int] = []
    while not system.terminal(c):
        legal = system.legal(c)
        b0 = c.buffer[-1]
        s0 = c.stack[-1] if c.stack else NONE
        t0 = c.stack2[-1] if c.stack2 else NONE
        a = SHIFT
        if s0 != NONE and s0 != 0 and heads[s0] == b0 and c.heads[s0] == NONE and legal[LEFT]:
            a = LEFT
            fix(s0, c.active)
        elif s0 != NONE and heads[b0] == s0 and c.heads[b0] == NONE and legal[RIGHT]:
            a = RIGHT
            fix(b0, c.active)
        elif (
            legal[SWITCH]
            and t0 != NONE
            and ((t0 != 0 and heads[t0] == b0 and c.heads[t0] == NONE) or (heads[b0] == t0 and c.heads[b0] == NONE))
        ):
            a = SWITCH
        elif c.stack and pending_below(c, c.stack, c.active):
            a = REDUCE
        elif legal[SWITCH] and pending_below(c, c.stack2, 1 - c.active):
            a = SWITCH
        seq.append(a)
        system.apply(c, a)
    plane = [NONE] * (n + 1)
    for d in range(1, n + 1):
        if c.heads[d] == heads[d]:
            plane[d] = c.plane[d]
    return plane, seq


class TwoPlanarStatic(StaticOracle[TwoPlanar, TwoPlanarGold]):
    """Replays the static run of ``TwoPlanarGold`` (trees it cannot build are refused)."""

    name = "static"
    row_code = row_kernels.REPLAY

    def prepare(self, heads):
        gold = TwoPlanarGold(heads, self.system)
        return gold if gold.covered else None

    def next(self, c: Config, gold: TwoPlanarGold) -> int:
        # Static training follows the oracle, so the configuration is the run's c.steps-th one.
        return gold.sequence[c.steps]

    def replayed(self, gold: TwoPlanarGold) -> list[int]:
        return gold.sequence


class TwoPlanarDynamic(CostOracle[TwoPlanar, TwoPlanarGold]):
    """Fernández-González & Gómez-Rodríguez (2018), exact for the canonical plane assignment;
    with ``plane_agnostic``, exact for any plane assignment (the minimum over all of them)."""

    name = "dynamic"
    row_code = row_kernels.TWOPLANAR_DYNAMIC
    gold_fields = ("plane", "crossing")

    def reaches(self, gold: TwoPlanarGold) -> bool:
        return gold.covered

    def __init__(
        self, system: TwoPlanar, switch_regularization: bool = True, plane_agnostic: bool = False,
        prefer_canonical: bool = True,
    ):  # fmt: skip
        super().__init__(system)
        self.switch_regularization = switch_regularization
        self.plane_agnostic = plane_agnostic
        self.prefer_canonical = prefer_canonical
        self._layouts: dict[int, Layout] = {}  # rows of one sentence length, for ``costs``

    def prepare(self, heads):
        return TwoPlanarGold(heads, self.system)

    def row_options(self) -> int:
        agnostic = oracle_kernels.AGNOSTIC | (oracle_kernels.PREFER_CANONICAL if self.prefer_canonical else 0)
        return (oracle_kernels.REGULARIZE if self.switch_regularization else 0) | (
            agnostic if self.plane_agnostic else 0
        )

    def raw_costs(self, c: Config, gold: TwoPlanarGold, regularize: bool, agnostic: bool) -> list[int | None]:
        """Every move's cost (None where illegal), with or without switch regularization, from
        the canonical or the plane-agnostic loss."""
        layout = self._layouts.get(c.n)
        if layout is None:
            layout = self._layouts[c.n] = Layout(self.system, c.n + 1)
        out = np.empty(5, dtype=np.int64)
        g: TwoPlanarGold = gold
        cross = g.crossing if agnostic else np.zeros(0, dtype=np.int64)
        oracle_kernels.costs(layout.from_config(c), layout.offsets, g.gh, g.gplane, cross, regularize, out)
        return [None if x == oracle_kernels.ILLEGAL else x for x in out.tolist()]

    def costs(self, c: Config, gold: TwoPlanarGold) -> list[int | None]:
        if self.plane_agnostic and self.prefer_canonical:
            return self._preferred(c, gold)[0]
        return self.raw_costs(c, gold, self.switch_regularization, self.plane_agnostic)

    def correct(self, c: Config, gold: TwoPlanarGold) -> list[bool]:
        if self.plane_agnostic and self.prefer_canonical:
            return self._preferred(c, gold)[1]
        return super().correct(c, gold)

    def _preferred(self, c: Config, gold: TwoPlanarGold) -> tuple[list[int | None], list[bool]]:
        """Costs and correct set with ``prefer_canonical``: of the plane-agnostic best moves, only
        those the canonical oracle also calls best where there are any, both taken before switch
        regularization. Every plane assignment that loses no more arcs is optimal, and free
        choices between them let training drift into switching (8.8 SWITCHes a sentence on
        hu_szeged). On the canonical oracle's own paths this is its correct set."""

        def best(costs: list[int | None]) -> list[bool]:
            least = min(x for x in costs if x is not None)
            return [x is not None and x == least for x in costs]

        costs = self.raw_costs(c, gold, regularize=False, agnostic=True)
        out = best(costs)
        canonical = best(self.raw_costs(c, gold, regularize=False, agnostic=False))
        if any(a and b for a, b in zip(out, canonical)):
            out = [a and b for a, b in zip(out, canonical)]
        if self.switch_regularization:
            if out[SWITCH] and any(out[:SWITCH]):
                out[SWITCH] = False
            if costs[SWITCH] == 0 and not out[SWITCH]:
                costs[SWITCH] = 1
        return costs, out


def reference_search(system: TwoPlanar, gold: TwoPlanarGold, plane_agnostic: bool = False) -> ExactLoss:
    """Exhaustive search the dynamic oracle is checked against.

    Under the canonical plane assignment an arc counts as correct only on its own plane; with
    ``plane_agnostic`` any plane will do (plain Hamming loss). Inside the search, wrong arcs are
    only tried right after a SWITCH (as the filler move the no-double-SWITCH rule may need):
    anywhere else dropping them keeps every later move legal and never raises the loss.
    """

    def good(c: Config, h: int, d: int) -> bool:
        return gold.heads[d] == h and (plane_agnostic or gold.plane[d] == c.active)  # type: ignore[attr-defined]

    def arc_loss(c: Config, a: int, h: int, d: int) -> int:
        return int(not good(c, h, d))

    def prune(c: Config, a: int) -> bool:
        arc = system.arc_of(c, a)  # type: ignore[arg-type]  # the search walks this system's configurations
        return arc is not None and not c.switched and not good(c, *arc)  # type: ignore[attr-defined]

    def built_loss(c: Config) -> int:
        wrong = 0
        for d in range(1, c.n + 1):
            h = c.heads[d]
            if h != NONE and (h != gold.heads[d] or (not plane_agnostic and c.plane[d] != gold.plane[d])):  # type: ignore[attr-defined]
                wrong += 1
        return wrong

    return ExactLoss(system, gold.heads, arc_loss=arc_loss, prune=prune, built_loss=built_loss)


class CompiledSearch:
    """``reference_search`` compiled on rows (``kernels/twoplanar_search.py``), with the same
    ``moves``/``cost``/``future``/``built`` as ``ExactLoss``: fast enough for every 2-planar tree
    of up to 6 words. Sentences of at most 14 words."""

    def __init__(self, system: TwoPlanar, gold: TwoPlanarGold, plane_agnostic: bool = False):
        if gold.n > 14:
            raise ValueError(f"the compiled 2-Planar search takes at most 14 words, not {gold.n}")
        self.system, self.gold, self.agnostic = system, gold, plane_agnostic
        self.layout = Layout(system, gold.n + 1)
        self.memo = search_kernels.new_memo()

    def moves(self, c: Config) -> list[int]:
        return [a for a, ok in enumerate(self.system.legal(c)) if ok]  # type: ignore[arg-type]

    def _gain(self, c: Config) -> int:
        row = self.layout.from_config(c)
        return search_kernels.gain(row, self.layout.offsets, self.gold.gh, self.gold.gplane, self.agnostic, self.memo)

    def future(self, c: Config) -> int:
        return sum(1 for d in range(1, c.n + 1) if c.heads[d] == NONE) + self._gain(c)

    def built(self, c: Config) -> int:
        g, plane = self.gold, c.plane  # type: ignore[attr-defined]  # a TwoPlanarConfig
        return sum(
            1 for d in range(1, c.n + 1)
            if c.heads[d] != NONE and (c.heads[d] != g.heads[d] or (not self.agnostic and plane[d] != g.plane[d]))
        )  # fmt: skip

    def cost(self, c: Config, a: int) -> int:
        nxt = c.copy()
        arc = self.system.arc_of(c, a)  # type: ignore[arg-type]
        step = 0
        if arc is not None:
            h, d = arc
            step = int(self.gold.heads[d] != h or (not self.agnostic and self.gold.plane[d] != c.active))  # type: ignore[attr-defined]
        self.system.apply(nxt, a)  # type: ignore[arg-type]
        return step + self.future(nxt) - self.future(c)


def compiled_search(system: TwoPlanar, gold: TwoPlanarGold, plane_agnostic: bool = False) -> CompiledSearch:
    return CompiledSearch(system, gold, plane_agnostic)
