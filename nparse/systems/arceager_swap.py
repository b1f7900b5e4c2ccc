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
met, as EAGER does in SwapStandard; a LAZY order (postponing swaps to move finished subtrees as
one word) is not built.
"""

from __future__ import annotations

from typing import Hashable, Sequence

from ..trees import is_ancestor, projective_order
from .arceager import LEFT, REDUCE, RIGHT, SHIFT, ArcEager
from .base import NONE, Config, Gold, StaticOracle
from .kernels import arceager_swap as kernel

SWAP = 4


class ArcEagerSwap(ArcEager):
    name = "arceager_swap"
    code = kernel.CODE
    actions = ("SHIFT", "LEFT", "RIGHT", "REDUCE", "SWAP")  # type: ignore[assignment]  # arc-eager's and SWAP

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
        if s0 != 0 and gh[s0] == b0:
            return LEFT
        if gh[b0] == s0:
            return RIGHT
        if c.heads[s0] != NONE:  # reduce if b0 has an arc with a word further down the stack
            below = stack[:-1]
            if gh[b0] in below or any(gh[k] == b0 for k in below if c.heads[k] == NONE):
                return REDUCE
        return SHIFT
