"""A gold tree as the compiled oracles read it: one ``int64`` array of fields by words.

``gold[F, w]`` for the words w = 0..n of one sentence (a batch concatenates its sentences, see
``row_oracle.BatchGold``). Every oracle gets the heads and dependents; the others (``OPTIONAL``)
only where the oracle declares them (``Oracle.gold_fields``), and hold 0 elsewhere:

- ``G_HEAD``: the gold head of every word (-1 for the root);
- ``G_KIDS`` / ``G_KID_START``: the gold dependents of every word, grouped by head in word order;
  word h's dependents are ``gold[G_KIDS, kid_start(h) : kid_end(h)]``;
- ``G_PROJ``: the position of every word in the projective order (SWAP systems);
- ``G_MPC``: the maximal projective component of every word (LAZY oracles; each system's own);
- ``G_PLANE``: the plane of every gold arc in the canonical assignment (2-Planar), -1 for none;
- ``G_NONPROJ``: 1 at every word of a non-projective tree where an oracle computes those apart
  (the arc-hybrid dynamic oracle's exact costs), else 0;
- ``G_CROSS``: 1 at every word whose gold arc crosses another of the 2-planar subset (2-Planar's
  plane-agnostic oracle), else 0.

A replayed static oracle (2-Planar static, SwapStandard MINIMAL) also gets its transition
sequence, read at the configuration's step count.
"""

from __future__ import annotations

from numba import njit

from .rows import L_HEADS, L_STEPS, NONE

G_HEAD, G_KIDS, G_KID_START, G_PROJ, G_MPC, G_PLANE, G_NONPROJ, G_CROSS = range(8)
N_FIELDS = 8
# The fields only some oracles read, by the name of the gold object's attribute that fills them
# (an oracle declares the ones it reads: ``Oracle.gold_fields``); every oracle gets the others.
OPTIONAL = {"proj": G_PROJ, "mpc": G_MPC, "plane": G_PLANE, "nonprojective": G_NONPROJ, "crossing": G_CROSS}


@njit(cache=True)
def kid_start(gold, h):
    return gold[G_KID_START, h]


@njit(cache=True)
def kid_end(gold, h):
    """End of word h's dependents in ``G_KIDS`` (the sentence has n words: the last group ends at n)."""
    return gold[G_KID_START, h + 1] if h + 1 < gold.shape[1] else gold.shape[1] - 1


@njit(cache=True)
def complete(row, off, gold, w):
    """Whether every gold dependent of w is attached in the row (the static oracles' test)."""
    heads = off[L_HEADS]
    for k in range(kid_start(gold, w), kid_end(gold, w)):
        if row[heads + gold[G_KIDS, k]] == NONE:
            return False
    return True


ILLEGAL = -1  # the cost of an illegal transition (and of every transition of a static oracle)


@njit(cache=True)
def minimal(cost, out):
    """The correct transitions of a cost oracle: the legal ones of minimal cost."""
    best = -1
    for a in range(cost.shape[0]):
        if cost[a] != ILLEGAL and (best < 0 or cost[a] < best):
            best = cost[a]
    for a in range(cost.shape[0]):
        out[a] = cost[a] != ILLEGAL and cost[a] == best


@njit(cache=True)
def lost_kids_from(row, off, gold, h, first):
    """Gold dependents of h at or after word ``first`` (still in the buffer: lost once h leaves)."""
    count = 0
    for k in range(kid_start(gold, h), kid_end(gold, h)):
        if gold[G_KIDS, k] >= first:
            count += 1
    return count


@njit(cache=True)
def replay(row, off, root_end, opt, gold, seq, legal, cost, out):
    """A static oracle whose sequence was computed once (SwapStandard MINIMAL, 2-Planar static):
    the configuration is the sequence's step-th (nothing is correct past its end)."""
    t = row[off[L_STEPS]]
    if t < seq.shape[0]:
        out[seq[t]] = True
