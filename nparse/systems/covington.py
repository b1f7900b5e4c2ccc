"""NL-Covington (Covington 2001; Nivre 2008) with its static oracle and the dynamic oracle of
Gómez-Rodríguez & Fernández-González (2015).

Configurations are (λ1, λ2, B, A) with the root 0 at the left end: initially λ1 = [0], λ2 = [],
B = [1..n]. λ1 followed by λ2 (left to right) is always exactly the words 0..j-1, where j = b0;
i is the last word of λ1. So λ1 = 0..i and λ2 = i+1..j-1, and a configuration is fully given by
(i, j, A). Transitions:

- SHIFT: (λ1, λ2, j|B) -> (λ1·λ2·j, [], B); legal iff B is non-empty.
- NOARC: (λ1|i, λ2, B) -> (λ1, i|λ2, B); legal iff λ1 and B are non-empty.
- LEFT: as NOARC, adding j -> i; also needs i != 0, i headless and i not an ancestor of j.
- RIGHT: as NOARC, adding i -> j; also needs j headless and j not an ancestor of i.

Every pair of words (i, j), i < j, meets once (when j is b0 and i the top of λ1), so any forest
can be built, non-projective or not. Single root: RIGHT from the root is legal only while the
root has no dependent (the root's dependents are always to its right; ``attach`` sets both its
lmod and rmod, and ``root_taken`` reads lmod as arc-eager does). The parse ends when the buffer
is empty; words left headless are attached by ``TransitionSystem.output`` (to the root's
dependent).

Static oracle (Nivre 2008): LEFT if gold head(i) = j; RIGHT if gold head(j) = i; NOARC if j has
an unbuilt gold arc with a word further left in λ1; else SHIFT. It rebuilds every tree.

Dynamic oracle: Covington is not arc-decomposable (gold arcs that are each reachable may close
a cycle with wrong arcs), so the cost comes from an exact loss (Gómez-Rodríguez &
Fernández-González 2015): loss(c) = |U(c)| + number of cycles in A ∪ I(c), where I(c) is the set
of unbuilt gold arcs h -> d that are individually reachable, and U(c) the other unbuilt gold
arcs. With l = min(h, d), r = max(h, d), h -> d is individually reachable iff d is headless in
A, d is not an ancestor of h in A, (r > j, or r = j and l is still in λ1, i.e. l <= i), and,
when h = 0, the root has no dependent yet (the single-root rule; the paper has no such rule).
cost(t) = loss(t(c)) - loss(c) for every legal t, computed in O(n) per configuration (the
successors of (i, j, A) are (i-1, j, A [+ arc]) and (j, j+1, A); cycles are counted in the
in-degree-1 graph A ∪ I by colouring).

Checked (tests/test_covington.py): the definitions above needed no correction. The costs equal
those of exhaustive search (``ExactLoss``, Hamming loss with headless words counting as wrong)
for every legal transition in every configuration met on random walks over all legal
transitions and on zero-cost walks, for every tree up to 6 words and random trees of 7-8 words
(about 950,000 costs); the zero-cost sets agree with ``check_oracle``; equal ``state_key``s give
equal legal moves and equal futures for every reachable configuration up to 5 words; the static
oracle rebuilds every tree up to 6 words and random trees of 7-20 words. The no-cycle-with-A
condition of reachability does not change the loss (a gold arc h -> d with d an ancestor of h
closes exactly one cycle in A ∪ I, counted instead of the arc); it is kept as in the paper.
"""

from __future__ import annotations

from typing import Hashable, Sequence

import numpy as np

from ..trees import is_ancestor
from .kernels import covington_oracle as oracle_kernels
from .kernels import covington as kernel
from .kernels import oracles as row_kernels
from .base import NONE, Config, CostOracle, Gold, StaticOracle, TransitionSystem, front_arc
from .verify.search import ExactLoss

SHIFT, LEFT, RIGHT, NOARC = kernel.SHIFT, kernel.LEFT, kernel.RIGHT, kernel.NOARC


class CovingtonConfig(Config):
    """``stack`` is λ1 (top = i), ``stack2`` is λ2 stored as a stack: its last element is the
    leftmost word of λ2, the one nearest λ1."""

    __slots__ = ("stack2",)

    def __init__(self, n: int):
        super().__init__([0], list(range(n, 0, -1)), n)
        self.stack2: list[int] = []

    def __repr__(self) -> str:
        return (
            f"CovingtonConfig(stack={self.stack}, stack2={self.stack2[::-1]}, "
            f"buffer={self.buffer[::-1]}, heads={self.heads})"
        )


def tops_of(heads: Sequence[int]) -> list[int]:
    """The top of the partial tree of every node (a headless node is its own top)."""
    tops = [NONE] * len(heads)
    for w in range(len(heads)):
        path = []
        x = w
        while tops[x] == NONE and heads[x] != NONE:
            path.append(x)
            x = heads[x]
        top = tops[x] if tops[x] != NONE else x
        tops[x] = top
        for y in path:
            tops[y] = top
    return tops


class Covington(TransitionSystem[CovingtonConfig]):
    name = "covington"
    code = kernel.CODE
    row_blocks = ("stack2",)  # λ2
    actions = kernel.ACTIONS
    base_slots = ("s0", "s1", "b0", "b1", "d0")  # d0: leftmost word of λ2 (the last moved there)
    roots = ("start",)

    modifier_slots = ("lmod(s0)", "rmod(s0)", "lmod(b0)", "rmod(b0)")

    def initial(self, n: int) -> CovingtonConfig:
        return CovingtonConfig(n)

    def terminal(self, c: CovingtonConfig) -> bool:
        return not c.buffer

    def parts(self, c: CovingtonConfig) -> list[tuple[str, list[int]]]:
        return [("λ1", c.stack), ("λ2", c.stack2[::-1]), ("buffer", c.buffer[::-1])]

    @staticmethod
    def root_taken(c: CovingtonConfig) -> bool:
        return c.lmod[0] != NONE

    def legal(self, c: CovingtonConfig) -> list[bool]:
        if not c.buffer:
            return self.flags(SHIFT=False, LEFT=False, RIGHT=False, NOARC=False)
        if not c.stack:
            return self.flags(SHIFT=True, LEFT=False, RIGHT=False, NOARC=False)
        heads = c.heads
        i, j = c.stack[-1], c.buffer[-1]
        left = i != 0 and heads[i] == NONE and not is_ancestor(heads, i, j)
        right = heads[j] == NONE and not is_ancestor(heads, j, i) and (i != 0 or not self.root_taken(c))
        return self.flags(SHIFT=True, LEFT=left, RIGHT=right, NOARC=True)

    def _apply(self, c: CovingtonConfig, a: int) -> None:
        stack2 = c.stack2
        if a == SHIFT:
            c.stack.extend(reversed(stack2))
            stack2.clear()
            c.stack.append(c.buffer.pop())
            return
        if a == LEFT:
            c.attach(c.buffer[-1], c.stack[-1])
        elif a == RIGHT:
            c.attach(c.stack[-1], c.buffer[-1])
        stack2.append(c.stack.pop())

    def arc_of(self, c: CovingtonConfig, a: int) -> tuple[int, int] | None:
        return front_arc(c, a, LEFT, RIGHT)

    def positions(self, c: CovingtonConfig) -> list[int]:
        stack, buffer, stack2 = c.stack, c.buffer, c.stack2
        return [
            stack[-1] if stack else NONE,
            stack[-2] if len(stack) > 1 else NONE,
            buffer[-1] if buffer else NONE,
            buffer[-2] if len(buffer) > 1 else NONE,
            stack2[-1] if stack2 else NONE,
        ]

    def state_key(self, c: CovingtonConfig) -> Hashable:
        # λ1 = 0..i and λ2 = i+1..j-1, so (len(buffer), len(stack)) places i and j. Every word
        # left of the buffer can still get arcs; what A decides for the future is the top of
        # every word's tree: w is headless iff top(w) = w, and for headless d, h -> d closes a
        # cycle iff top(h) = d. Adding h -> d maps top d to top(h), so tops evolve on their own.
        # (Whether the root has a dependent is also in the tops; kept explicit for clarity.)
        return len(c.buffer), len(c.stack), tuple(tops_of(c.heads)), self.root_taken(c)


class CovingtonStatic(StaticOracle):
    """Nivre (2008): LEFT, RIGHT, NOARC while j has a pending gold arc further left in λ1, SHIFT."""

    name = "static"
    row_code = row_kernels.COVINGTON_STATIC

    def prepare(self, heads: Sequence[int]) -> Gold:
        return Gold(heads)  # every tree, projective or not

    def next(self, c: Config, gold: Gold) -> int:
        if not c.stack:
            return SHIFT
        gh, heads = gold.heads, c.heads
        i, j = c.stack[-1], c.buffer[-1]
        if gh[i] == j:
            return LEFT
        if gh[j] == i:
            return RIGHT
        # λ1 = 0..i: a word k < i with an unbuilt gold arc to or from j.
        if 0 <= gh[j] < i and heads[j] == NONE:
            return NOARC
        if any(k < i and heads[k] == NONE for k in gold.children[j]):
            return NOARC
        return SHIFT


class CovingtonDynamic(CostOracle):
    """Gómez-Rodríguez & Fernández-González (2015) with the single-root rule (module docstring)."""

    name = "dynamic"
    row_code = row_kernels.COVINGTON_DYNAMIC

    def costs(self, c: Config, gold: Gold) -> list[int | None]:
        """The costs of ``reference_costs``, computed by the compiled kernel."""
        if not c.buffer:
            return [None, None, None, None]
        gh = getattr(gold, "array", None)
        if gh is None:
            gh = gold.array = np.asarray(gold.heads, dtype=np.int64)  # type: ignore[attr-defined]
        out = np.empty(4, dtype=np.int64)
        legal = np.asarray(self.system.legal(c), dtype=np.bool_)
        i = c.stack[-1] if c.stack else NONE
        taken = Covington.root_taken(c)  # type: ignore[arg-type]  # a CovingtonConfig
        oracle_kernels.costs(gh, np.asarray(c.heads, dtype=np.int64), i, c.buffer[-1], taken, legal, out)
        return [int(x) if ok else None for x, ok in zip(out, legal)]

    def reference_costs(self, c: Config, gold: Gold) -> list[int | None]:
        """cost(t) = loss(t(c)) - loss(c) for every legal t, in Python (the kernel's reference)."""
        legal = self.system.legal(c)
        out: list[int | None] = [None, None, None, None]
        if not c.buffer:
            return out
        heads = c.heads
        i = c.stack[-1] if c.stack else NONE
        j = c.buffer[-1]
        taken = Covington.root_taken(c)  # type: ignore[arg-type]
        base = loss(gold, heads, i, j, taken)
        if legal[SHIFT]:
            out[SHIFT] = loss(gold, heads, j, j + 1, taken) - base
        if legal[NOARC]:
            out[NOARC] = loss(gold, heads, i - 1, j, taken) - base
        if legal[LEFT] or legal[RIGHT]:
            for a, h, d in ((LEFT, j, i), (RIGHT, i, j)):
                if legal[a]:
                    after = list(heads)
                    after[d] = h
                    out[a] = loss(gold, after, i - 1, j, taken or h == 0) - base
        return out


def loss(gold: Gold, heads: Sequence[int], i: int, j: int, root_taken: bool) -> int:
    """Minimum Hamming loss reachable from the configuration (i, j, A = ``heads``): |U| + cycles
    in A ∪ I, in O(n). i is the top of λ1 (NONE if λ1 is empty), j = b0 (n + 1 once the buffer is
    empty)."""
    parent, unreachable = reachable_graph(gold, heads, i, j, root_taken)
    return unreachable + count_cycles(parent)


def reachable_graph(gold: Gold, heads: Sequence[int], i: int, j: int, root_taken: bool) -> tuple[list[int], int]:
    """The graph A ∪ I (every node's parent, NONE for none) and |U| (see ``loss``)."""
    gh = gold.heads
    tops = tops_of(heads)
    parent = list(heads)  # in-degree at most 1: I only has arcs to headless words
    unreachable = 0
    for d in range(1, len(gh)):
        h = gh[d]
        if heads[d] == h:
            continue
        reachable = False
        if heads[d] == NONE and tops[h] != d and (h != 0 or not root_taken):
            lo, r = (h, d) if h < d else (d, h)
            reachable = r > j or (r == j and lo <= i)
        if reachable:
            parent[d] = h
        else:
            unreachable += 1
    return parent, unreachable


def count_cycles(parent: Sequence[int]) -> int:
    """Cycles in a graph given by each node's single parent (NONE for none)."""
    state = [0] * len(parent)  # 0 unseen, 1 on the current path, 2 done
    cycles = 0
    for start in range(len(parent)):
        w = start
        while w != NONE and state[w] == 0:
            state[w] = 1
            w = parent[w]
        if w != NONE and state[w] == 1:
            cycles += 1
        w = start
        while w != NONE and state[w] == 1:
            state[w] = 2
            w = parent[w]
    return cycles


def reference_search(system: Covington, gold: Gold) -> ExactLoss:
    """Exhaustive search with wrong arcs pruned inside it (the oracle is checked against it).

    A LEFT/RIGHT that builds a non-gold arc is dominated by NOARC: both move i to λ2 the same way
    and leave j and B alone, and the NOARC successor has a subset of the arcs. Fewer arcs only
    relax every legality condition (headless dependent, no cycle, root still free), so every
    sequence legal after the wrong arc is legal after NOARC and builds the same arcs; the word
    that got the wrong head is wrong either way, so the loss is never higher. The first move of
    every cost query is still tried (``ExactLoss.cost``); ``tests/test_covington.py`` checks the
    argument against the unpruned search on small trees.
    """
    heads = gold.heads

    def prune(c: Config, a: int) -> bool:
        arc = system.arc_of(c, a)  # type: ignore[arg-type]  # the search walks this system's configurations
        return arc is not None and heads[arc[1]] != arc[0]

    return ExactLoss(system, heads, prune=prune)
