"""Maximum spanning tree decoding (Chu-Liu/Edmonds) with exactly one dependent of the root.

``decoder=mst`` parses with the completion model's first-order factor alone, as a graph-based
parser (Kiperwasser & Goldberg 2016; McDonald et al. 2005). The single-root constraint is exact
and costs nothing extra: every arc from the root is lowered by a constant larger than the spread
of any two trees' scores, so a tree with two root dependents always loses to one with a single
root dependent, and among single-rooted trees (each lowered by the same constant) the order is
unchanged.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def _find_cycle(heads):
    """Nodes of a cycle of the head graph (as a boolean mask), or an all-False mask."""
    n = heads.shape[0]
    color = np.zeros(n, dtype=np.int64)  # 0 new, 1 on the current path, 2 done
    mask = np.zeros(n, dtype=np.bool_)
    for start in range(n):
        if color[start] != 0:
            continue
        v = start
        while v >= 0 and color[v] == 0:
            color[v] = 1
            v = heads[v]
        if v >= 0 and color[v] == 1:  # closed a cycle through v
            u = v
            while True:
                mask[u] = True
                u = heads[u]
                if u == v:
                    break
        v = start
        while v >= 0 and color[v] == 1:
            color[v] = 2
            v = heads[v]
        if mask.any():
            return mask
    return mask


@njit(cache=True)
def chu_liu_edmonds(scores):
    """Heads of the maximum spanning arborescence rooted at node 0 of ``scores[h, d]`` (float64;
    -inf forbids an arc). heads[0] = -1."""
    n = scores.shape[0]
    heads = np.full(n, -1, dtype=np.int64)
    for d in range(1, n):
        best, arg = -np.inf, -1
        for h in range(n):
            if h != d and scores[h, d] > best:
                best, arg = scores[h, d], h
        heads[d] = arg if arg >= 0 else 0
    cycle = _find_cycle(heads)
    if not cycle.any():
        return heads
    # Contract the cycle into one node (the last index of the smaller graph).
    new_index = np.full(n, -1, dtype=np.int64)
    old_index = np.empty(n, dtype=np.int64)
    m = 0
    for v in range(n):
        if not cycle[v]:
            new_index[v] = m
            old_index[m] = v
            m += 1
    c = m
    sub = np.full((m + 1, m + 1), -np.inf)
    enter = np.full(m + 1, -1, dtype=np.int64)  # cycle node entered from each outside node
    leave = np.full(m + 1, -1, dtype=np.int64)  # cycle node leaving to each outside node
    for u in range(n):
        for v in range(n):
            if u == v or scores[u, v] == -np.inf:
                continue
            if not cycle[u] and not cycle[v]:
                sub[new_index[u], new_index[v]] = scores[u, v]
            elif not cycle[u] and cycle[v]:
                val = scores[u, v] - scores[heads[v], v]
                if val > sub[new_index[u], c]:
                    sub[new_index[u], c] = val
                    enter[new_index[u]] = v
            elif cycle[u] and not cycle[v]:
                if scores[u, v] > sub[c, new_index[v]]:
                    sub[c, new_index[v]] = scores[u, v]
                    leave[new_index[v]] = u
    inner = chu_liu_edmonds(sub)
    out = heads.copy()  # cycle nodes keep their cycle heads, but for the one entered
    for v in range(1, n):
        if cycle[v]:
            continue
        h = inner[new_index[v]]
        out[v] = leave[new_index[v]] if h == c else old_index[h]
    u = inner[c]
    out[enter[u]] = old_index[u]
    return out


def mst_heads(scores: np.ndarray) -> list[int]:
    """Heads (index 0 = root, heads[0] = -1) of the best tree with one root dependent, for arc
    scores [n+1, n+1] (head, dependent); the diagonal and arcs into the root are ignored."""
    s = np.array(scores, dtype=np.float64)
    n = s.shape[0] - 1
    finite = s[np.isfinite(s)]
    spread = float(finite.max() - finite.min()) if finite.size else 0.0
    s[np.arange(n + 1), np.arange(n + 1)] = -np.inf
    s[:, 0] = -np.inf
    s[0, 1:] -= (n + 1) * spread + 1.0
    return chu_liu_edmonds(s).tolist()
