"""The plane-agnostic loss of a 2-Planar configuration: the fewest gold arcs lost under the best
assignment of the arcs still to build to the two planes (``oracle.plane_agnostic=true``).

Why it has this form (proof sketch in docs/experiments/nonprojective-gold-oracles.md): an arc
still to build, (lo, hi) with hi in the buffer, can be built on plane p if lo is in the buffer or
on p's stack; the arcs a plane builds from now on must not cross one another (a plane's stack is
that of arc-eager), and no other condition ties the planes, since at every buffer front the
active plane builds its arcs, one SWITCH lets the other build its own, then SHIFT. So:

1. the gold arcs unreachable one by one are lost (head taken, an end gone, a cycle with A, the
   root's one dependent taken), as in the canonical loss but with either stack;
2. among the rest, two arcs that cross need different planes. The crossing graph of a 2-planar
   gold subset is bipartite, with the canonical planes ``gplane`` as one 2-colouring, so each
   connected component has two colourings: the canonical one or its flip. An arc whose earlier
   end is on one stack only demands one of them ("same" or "flip"). The fewest arcs to give up so
   that no component holds both demands is a minimum vertex cut between the two demand sets
   (max-flow on split vertices);
3. every cycle of A plus the reachable arcs loses one of its arcs (as in the Covington oracle).
   An arc of a cycle that is also in the cut pays once for both: the cycles whose arcs lie in the
   crossing graph are tried with each of those arcs given up in advance (the product of their
   sizes plus one flows; no such cycle on the gold path, and rarely one off it).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .rows import L_BUF, L_HEADS, L_LMOD, L_N, L_NB, L_NS, L_NS2, L_STACK, L_STACK2, NONE


@njit(cache=True)
def _cross(h1, d1, h2, d2) -> bool:
    a1, b1 = (h1, d1) if h1 < d1 else (d1, h1)
    a2, b2 = (h2, d2) if h2 < d2 else (d2, h2)
    return (a1 < a2 < b1 < b2) or (a2 < a1 < b2 < b1)


@njit(cache=True)
def count_cycles(row, heads, n, reach, cycle, state) -> int:
    """Cycles of the graph where every word points to its head in A or to ``reach``, its
    reachable gold head; ``cycle[w]`` is set to the first word of w's cycle (0 when on none).
    ``cycle`` and ``state`` come zeroed. (The canonical oracle's ``fast_costs`` uses it too.)"""
    count = 0
    for start in range(1, n + 1):
        if state[start] != 0:
            continue
        w = start
        while w > 0 and state[w] == 0:
            state[w] = start
            h = row[heads + w]
            w = h if h >= 0 else reach[w]
        if w > 0 and state[w] == start:
            count += 1
            first = w
            while cycle[w] == 0:
                cycle[w] = first
                h = row[heads + w]
                w = h if h >= 0 else reach[w]
    return count


@njit(cache=True)
def min_vertex_cut(adj, demand, removed) -> int:
    """The fewest vertices (not ``removed``) whose removal leaves no path between a vertex of
    demand 0 and one of demand 1 (demand -1: none), by augmenting paths on split vertices."""
    k = demand.shape[0]
    src, snk, size = 2 * k, 2 * k + 1, 2 * k + 2
    big = k + 1
    cap = np.zeros((size, size), dtype=np.int64)
    for i in range(k):
        if removed[i]:
            continue
        cap[2 * i, 2 * i + 1] = 1
        if demand[i] == 0:
            cap[src, 2 * i] = big
        elif demand[i] == 1:
            cap[2 * i + 1, snk] = big
        for j in range(k):
            if adj[i, j] and not removed[j]:
                cap[2 * i + 1, 2 * j] = big
    parent = np.empty(size, dtype=np.int64)
    queue = np.empty(size, dtype=np.int64)
    flow = 0
    while True:
        for v in range(size):
            parent[v] = -1
        parent[src] = src
        queue[0], head, tail = src, 0, 1
        while head < tail and parent[snk] < 0:
            u = queue[head]
            head += 1
            for v in range(size):
                if parent[v] < 0 and cap[u, v] > 0:
                    parent[v] = u
                    queue[tail] = v
                    tail += 1
        if parent[snk] < 0:
            return flow
        v = snk  # every path crosses a vertex edge of capacity 1: push one unit
        while v != src:
            u = parent[v]
            cap[u, v] -= 1
            cap[v, u] += 1
            v = u
        flow += 1


@njit(cache=True)
def loss(row, off, gh, gplane, gcross, work) -> int:
    """The plane-agnostic loss of a configuration not entered by a SWITCH (``gcross``: 1 where a
    gold arc of the 2-planar subset crosses another one; ``work``: [5, n + 1] scratch)."""
    n = row[off[L_N]]
    nb = row[off[L_NB]]
    b0 = row[off[L_BUF] + nb - 1] if nb > 0 else n + 1  # the buffer is always b0..n
    heads = off[L_HEADS]
    on, comp, reach, cycle, words = work[0], work[1], work[2], work[3], work[4]
    for w in range(n + 1):
        on[w] = 0  # bit 0: on plane 0's stack, bit 1: on plane 1's
        reach[w] = -1
        cycle[w] = 0  # the first word of w's cycle in A + reach, 0: none
    for k in range(row[off[L_NS]]):
        on[row[off[L_STACK] + k]] |= 1
    for k in range(row[off[L_NS2]]):
        on[row[off[L_STACK2] + k]] |= 2
    for w in range(n + 1):  # comp: the root of each word's tree in A
        x = w
        while row[heads + x] >= 0:
            x = row[heads + x]
        comp[w] = x
    root_taken = row[off[L_LMOD]] != NONE
    unreachable = wrong = 0
    for d in range(1, n + 1):
        h = gh[d]
        wrong += row[heads + d] >= 0 and row[heads + d] != h
        if gplane[d] < 0:
            unreachable += 1  # not in the 2-planar gold subset
        elif row[heads + d] == h:
            continue  # built, on whichever plane
        elif row[heads + d] >= 0:
            unreachable += 1
        else:
            lo, hi = (h, d) if h < d else (d, h)
            if hi < b0 or (lo < b0 and on[lo] == 0) or comp[h] == comp[d] or (h == 0 and root_taken):
                unreachable += 1
            else:
                reach[d] = h
    cycles = count_cycles(row, heads, n, reach, cycle, np.zeros(n + 1, dtype=np.int64)) if wrong else 0
    # The crossing graph of the reachable arcs, and what each demands of its component.
    k = 0
    for d in range(1, n + 1):
        if reach[d] >= 0 and gcross[d]:
            words[k] = d
            k += 1
    if k < 2:
        return unreachable + cycles
    demand = np.full(k, -1, dtype=np.int64)
    seen = 0  # bit 0: some arc demands the canonical colouring, bit 1: the flipped one
    for i in range(k):
        d = words[i]
        lo = d if d < reach[d] else reach[d]
        if lo < b0 and on[lo] != 3:
            demand[i] = (on[lo] - 1) ^ gplane[d]  # plane (0 or 1) xor canonical plane
            seen |= 1 << demand[i]
    if seen != 3:
        return unreachable + cycles
    adj = np.zeros((k, k), dtype=np.bool_)
    for i in range(k):
        for j in range(i + 1, k):
            if _cross(reach[words[i]], words[i], reach[words[j]], words[j]):
                adj[i, j] = adj[j, i] = True
    removed = np.zeros(k, dtype=np.bool_)
    cut = min_vertex_cut(adj, demand, removed)
    if cut == 0 or cycles == 0:
        return unreachable + cycles + cut
    # Cycles with arcs in the crossing graph: give one of those arcs up in advance, or none.
    owner = np.zeros(k, dtype=np.int64)  # the cycle (its first word) of each vertex, 0: none
    firsts = np.empty(k, dtype=np.int64)
    m = 0
    for i in range(k):
        owner[i] = cycle[words[i]]
        if owner[i] != 0:
            new = True
            for r in range(m):
                new = new and firsts[r] != owner[i]
            if new:
                firsts[m] = owner[i]
                m += 1
    choice = np.zeros(m, dtype=np.int64)  # per cycle: 0 none, c > 0 its c-th vertex in the graph
    sizes = np.zeros(m, dtype=np.int64)
    for r in range(m):
        for i in range(k):
            sizes[r] += owner[i] == firsts[r]
    best = cut
    while True:
        r = 0  # next combination (mixed radix)
        while r < m and choice[r] == sizes[r]:
            choice[r] = 0
            r += 1
        if r == m or best == 0:
            break
        choice[r] += 1
        for i in range(k):
            removed[i] = False
        for q in range(m):
            c = choice[q]
            for i in range(k):
                if c > 0 and owner[i] == firsts[q]:
                    c -= 1
                    if c == 0:
                        removed[i] = True
        value = min_vertex_cut(adj, demand, removed)
        if value < best:
            best = value
    return unreachable + cycles + best
