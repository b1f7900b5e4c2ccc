"""Every oracle on rows, by its code: one line per oracle (numba compiles the branch the code
selects), and the batched call that training makes.

An oracle kernel has the signature ``(row, off, root_end, opt, gold, seq, legal, cost, out)``:
``gold`` is the sentence's fields (``gold.py``), ``seq`` its replayed sequence (empty for the
others), ``opt`` the oracle's option bits, ``legal`` the row's legal transitions; it sets
``out[a]`` for the correct transitions and, a cost oracle, ``cost[a]`` for every legal one
(``ILLEGAL`` elsewhere). Each mirrors the Python oracle whose class names its code
(``Oracle.row_code``); ``tests/test_row_oracles.py`` walks both in lockstep on treebank sentences.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from . import (
    arceager_oracle, arceager_swap_oracle, archybrid_oracle, archybrid_swap_oracle, arcstandard_oracle,
    covington_oracle, swapstandard_oracle, twoplanar_oracle,
)  # fmt: skip
from .dispatch import apply_one, legal_row
from .gold import ILLEGAL, replay

(
    ARCHYBRID_STATIC, ARCHYBRID_DYNAMIC, ARCEAGER_STATIC, ARCEAGER_DYNAMIC, ARCSTANDARD_STATIC,
    SWAP_EAGER, SWAP_LAZY, SWAP_NDSW, SWAP_NDALL, HYBRID_SWAP_STATIC, HYBRID_SWAP_DYNAMIC,
    EAGER_SWAP_EAGER, EAGER_SWAP_LAZY, TWOPLANAR_DYNAMIC, COVINGTON_STATIC, COVINGTON_DYNAMIC, REPLAY,
    ARCSTANDARD_DYNAMIC,
) = range(18)  # fmt: skip


@njit(cache=True)
def oracle_row(code, row, off, root_end, opt, gold, seq, legal, cost, out):
    if code == ARCHYBRID_STATIC:
        archybrid_oracle.static(row, off, root_end, opt, gold, seq, legal, cost, out)
    elif code == ARCHYBRID_DYNAMIC:
        archybrid_oracle.dynamic(row, off, root_end, opt, gold, seq, legal, cost, out)
    elif code == ARCEAGER_STATIC:
        arceager_oracle.static(row, off, root_end, opt, gold, seq, legal, cost, out)
    elif code == ARCEAGER_DYNAMIC:
        arceager_oracle.dynamic(row, off, root_end, opt, gold, seq, legal, cost, out)
    elif code == ARCSTANDARD_STATIC:
        arcstandard_oracle.static(row, off, root_end, opt, gold, seq, legal, cost, out)
    elif code == ARCSTANDARD_DYNAMIC:
        arcstandard_oracle.dynamic(row, off, root_end, opt, gold, seq, legal, cost, out)
    elif code == SWAP_EAGER:
        swapstandard_oracle.eager(row, off, root_end, opt, gold, seq, legal, cost, out)
    elif code == SWAP_LAZY:
        swapstandard_oracle.lazy(row, off, root_end, opt, gold, seq, legal, cost, out)
    elif code == SWAP_NDSW:
        swapstandard_oracle.ndsw(row, off, root_end, opt, gold, seq, legal, cost, out)
    elif code == SWAP_NDALL:
        swapstandard_oracle.ndall(row, off, root_end, opt, gold, seq, legal, cost, out)
    elif code == HYBRID_SWAP_STATIC:
        archybrid_swap_oracle.static(row, off, root_end, opt, gold, seq, legal, cost, out)
    elif code == HYBRID_SWAP_DYNAMIC:
        archybrid_swap_oracle.static_dynamic(row, off, root_end, opt, gold, seq, legal, cost, out)
    elif code == EAGER_SWAP_EAGER:
        arceager_swap_oracle.eager(row, off, root_end, opt, gold, seq, legal, cost, out)
    elif code == EAGER_SWAP_LAZY:
        arceager_swap_oracle.lazy(row, off, root_end, opt, gold, seq, legal, cost, out)
    elif code == TWOPLANAR_DYNAMIC:
        twoplanar_oracle.dynamic(row, off, root_end, opt, gold, seq, legal, cost, out)
    elif code == COVINGTON_STATIC:
        covington_oracle.static(row, off, root_end, opt, gold, seq, legal, cost, out)
    elif code == COVINGTON_DYNAMIC:
        covington_oracle.dynamic(row, off, root_end, opt, gold, seq, legal, cost, out)
    elif code == REPLAY:
        replay(row, off, root_end, opt, gold, seq, legal, cost, out)
    else:
        raise ValueError("unknown oracle code: not among kernels/oracles.py's codes")


@njit(cache=True)
def may_explore_row(code, row, off, gold, action):
    """``Oracle.may_explore``: only arc-hybrid+SWAP's static-dynamic oracle ever objects."""
    if code == HYBRID_SWAP_DYNAMIC:
        return archybrid_swap_oracle.may_explore(row, off, gold, action)
    return True


@njit(cache=True)
def ask(states, i, g, off, system, root_end, code, opt, gold, gstart, seq, sstart, legal, cost, out):
    """The legal transitions of row ``states[i]`` (sentence g) and the oracle's answer on it."""
    row = states[i]
    for a in range(legal.shape[0]):
        legal[a] = False
        cost[a] = ILLEGAL
        out[a] = False
    legal_row(row, off, system, root_end, legal)
    oracle_row(code, row, off, root_end, opt, gold[:, gstart[g] : gstart[g + 1]], seq[sstart[g] : sstart[g + 1]],
               legal, cost, out)  # fmt: skip


@njit(cache=True)
def oracle_rows(states, items, sent, off, system, root_end, code, opt, gold, gstart, seq, sstart, legal, cost, out):
    """Legal flags, costs and correct flags [k] of the rows ``states[items[k]]``, row i belonging
    to sentence ``sent[i]`` of the batch's gold fields (sentence g from column ``gstart[g]``)."""
    for k in range(items.shape[0]):
        i = items[k]
        ask(states, i, sent[i], off, system, root_end, code, opt, gold, gstart, seq, sstart, legal[k], cost[k], out[k])


@njit(cache=True)
def may_explore_rows(states, items, sent, actions, off, code, gold, gstart):
    """``may_explore_row`` of every listed row with its action."""
    out = np.ones(items.shape[0], dtype=np.bool_)
    for k in range(items.shape[0]):
        i = items[k]
        g = sent[i]
        out[k] = may_explore_row(code, states[i], off, gold[:, gstart[g] : gstart[g + 1]], actions[k])
    return out


@njit(cache=True)
def explorable(row, actions, off, system, root_end, code, opt, gold, seq, n_actions):
    """Whether a derivation from ``row`` (a copy, advanced in place) takes only transitions the
    oracle calls correct or lets exploration follow (global training's restart from a negative)."""
    legal = np.empty(n_actions, dtype=np.bool_)
    cost = np.empty(n_actions, dtype=np.int64)
    out = np.empty(n_actions, dtype=np.bool_)
    for a in actions:
        for t in range(n_actions):
            legal[t], cost[t], out[t] = False, ILLEGAL, False
        legal_row(row, off, system, root_end, legal)
        oracle_row(code, row, off, root_end, opt, gold, seq, legal, cost, out)
        if not out[a] and not may_explore_row(code, row, off, gold, a):
            return False
        apply_one(row, off, system, a)
    return True
