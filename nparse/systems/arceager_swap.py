"""Arc-eager + SWAP, the transition system of the completion model (Bohnet & Kuhn 2012, §3).

Moves: SHIFT pushes b0; LEFT adds b0 -> s0 and pops s0 (s0 headless, not the root); RIGHT adds
s0 -> b0 and pushes b0 (b0 headless); REDUCE pops a headed s0; SWAP puts s0 back into the buffer
behind b0: (σ|s0, b0|β) -> (σ, b0|s0|β), legal while s0 is a word before b0 in the sentence.
The root is at the bottom of the stack, as in arc-eager, with its single-root rule (RIGHT from
the root only while the root has no dependent); the parse ends when the buffer is empty, and
words left headless are attached by ``TransitionSystem.output``.

Our reading of the paper. Its §3 lists shift, left-arc, right-arc, reduce and swap and says that
"the swap changes the order of the two top elements on the stack". Read literally with
arc-eager's moves (arcs only between s0 and b0), exchanging s0 and s1 cannot build even the
textbook non-projective sentence "A hearing is scheduled on the issue today": *hearing* must
stay on the stack for *on* while *is -> scheduled* needs both words at s0 and b0, so *hearing*
is buried (``tests/test_arceager_swap.py`` shows it by exhaustive search). Arc-eager builds an
arc when the later word is b0, so reordering must act on the buffer: SWAP moves s0 back behind
b0 (the SWAP of arc-hybrid + SWAP, de Lhoneux et al. 2017), which lets any word reach b0 and
makes every tree reachable. Each pair of words swaps at most once (s0 precedes b0 before, follows
it after), so a parse takes O(n^2) transitions at worst, as the paper says.

Oracle (EAGER, static; defined on every tree, checked to rebuild every tree): the arc-eager
static oracle (Nivre 2008) run in the projective order π of the gold tree (its in-order
traversal, in which the tree is projective), with the words presented as b0 in that order:
let w be the buffer word first in π. While b0 is not w, SHIFT b0 ("parking" it); once b0 is w,
SWAP back every parked word (they follow w in π, while the words the oracle has processed
precede it); then take arc-eager's step for s0 and b0. Words are reordered as soon as they are
met, as EAGER does in SwapStandard.

Oracle (LAZY, static, our reading of Nivre, Kuhlmann & Hall 2009 for this system): the same
order π, but parked words are first built into their maximal projective component (MPC: the
subtrees that arc-standard builds without SWAP, as for SwapStandard's LAZY), so that a whole
component crosses w with one SWAP instead of one per word. SwapStandard's LAZY postpones the
swap of s1 behind s0 until s0's component is complete; here the word that moves is s0 (behind
b0), so the component must be finished on the stack before it moves: while b0 is being parked
and s0 is a parked word of b0's MPC, take the arc between them (LEFT if s0 is complete, RIGHT if
b0 is headless), and REDUCE a parked word as soon as it has its head and all its dependents
(an MPC's words other than its root have every dependent inside it, so this never loses one).
A finished component is its root alone on the stack, and one SWAP moves it. On the training
sets of EWT, GDT and Szeged this removes 66%, 72% and 61% of EAGER's swaps
(``tools/treebank_stats.py``), and it never swaps more than EAGER on a sentence; it is checked,
like EAGER, to rebuild every tree.
"""

from __future__ import annotations

from typing import Hashable, Sequence

from ..trees import is_ancestor, projective_order
from .arceager import LEFT, REDUCE, RIGHT, SHIFT, ArcEager
from .base import NONE, Config, Gold, StaticOracle
from .kernels import arceager_swap as kernel
from .kernels import oracles as row_kernels
from .swapstandard import maximal_projective_components

SWAP = kernel.SWAP


class ArcEagerSwap(ArcEager):
    name = "arceager_swap"
    code = kernel.CODE
    actions = kernel.ACTIONS  # arc-eager's and SWAP

    def legal(self, c: Config) -> list[bool]:
        flags = self.named(super().legal(c))
        s0, buffer, heads = c.stack[-1], c.buffer, c.heads
        if buffer:  # a swapped-back b0 may have its head, or descend from s0: no cycles
            b0 = buffer[-1]
            flags["LEFT"] = flags["LEFT"] and not is_ancestor(heads, s0, b0)
            flags["RIGHT"] = flags["RIGHT"] and heads[b0] == NONE and not is_ancestor(heads, b0, s0)
        return self.flags(**flags, SWAP=bool(buffer) and 0 < s0 < buffer[-1])

    def _apply(self, c: Config, a: int) -> None:
        if a == SWAP:
            c.buffer.insert(len(c.buffer) - 1, c.stack.pop())
        else:
            super()._apply(c, a)

    def state_key(self, c: Config) -> Hashable:
        # The buffer is no longer a suffix of the sentence, and its words may have heads.
        heads = c.heads
        return tuple(c.stack), tuple(c.buffer), tuple(heads[w] != NONE for w in c.stack + c.buffer), self.root_taken(c)


class SwapOrderGold(Gold):
    """A gold tree with its projective order (the position of every word in it)."""

    def __init__(self, heads: Sequence[int]):
        super().__init__(heads)
        self.proj = projective_order(self.heads)


class ArcEagerSwapEager(StaticOracle[ArcEagerSwap, SwapOrderGold]):
    """The EAGER order of the module docstring."""

    name = "eager"
    row_code = row_kernels.EAGER_SWAP_EAGER
    gold_fields = ("proj",)

    def prepare(self, heads: Sequence[int]) -> SwapOrderGold:
        return SwapOrderGold(heads)

    def next(self, c: Config, gold: SwapOrderGold) -> int:
        proj, gh = gold.proj, gold.heads
        stack, buffer = c.stack, c.buffer
        b0 = buffer[-1]
        w = min(buffer, key=proj.__getitem__)  # the next word in projective order
        if b0 != w:
            return SHIFT
        s0 = stack[-1]
        if proj[s0] > proj[w]:
            return SWAP  # s0 was parked
        return _arc_eager_step(c, gh)


def _arc_eager_step(c: Config, gh: Sequence[int]) -> int:
    """Nivre's static arc-eager step for s0 and b0 (b0 the next word in projective order)."""
    stack = c.stack
    s0, b0 = stack[-1], c.buffer[-1]
    if s0 != 0 and gh[s0] == b0:
        return LEFT
    if gh[b0] == s0:
        return RIGHT
    if c.heads[s0] != NONE:  # reduce if b0 has an arc with a word further down the stack
        below = stack[:-1]
        if gh[b0] in below or any(gh[k] == b0 for k in below if c.heads[k] == NONE):
            return REDUCE
    return SHIFT


class LazySwapGold(SwapOrderGold):
    """A gold tree with its projective order and maximal projective components."""

    def __init__(self, heads: Sequence[int]):
        super().__init__(heads)
        self.mpc = maximal_projective_components(self)


class ArcEagerSwapLazy(StaticOracle[ArcEagerSwap, LazySwapGold]):
    """The LAZY order of the module docstring: parked words are built into their MPC first."""

    name = "lazy"
    row_code = row_kernels.EAGER_SWAP_LAZY
    gold_fields = ("proj", "mpc")

    def prepare(self, heads: Sequence[int]) -> LazySwapGold:
        return LazySwapGold(heads)

    def next(self, c: Config, gold: LazySwapGold) -> int:
        proj, gh, mpc, heads = gold.proj, gold.heads, gold.mpc, c.heads
        stack, buffer = c.stack, c.buffer
        b0, s0 = buffer[-1], stack[-1]
        w = min(buffer, key=proj.__getitem__)  # the next word in projective order
        parked = proj[s0] > proj[w]
        complete = all(heads[k] != NONE for k in gold.children[s0])  # s0 has every dependent
        if parked and complete and heads[s0] != NONE:
            return REDUCE  # a finished word of a parked component
        if b0 != w:  # b0 is parked: first build its component with the parked s0
            if parked and mpc[s0] == mpc[b0]:
                if gh[s0] == b0 and complete:
                    return LEFT
                if gh[b0] == s0 and heads[b0] == NONE:
                    return RIGHT
            return SHIFT
        if parked:
            return SWAP
        return _arc_eager_step(c, gh)
