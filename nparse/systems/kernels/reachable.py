"""The most gold arcs a completion of a configuration can still build, for the systems whose
reachable trees are projective trees over the configuration's units (its unattached words in
order: the stack bottom to top, then the buffer) under conditions on the stack words: Eisner's
(1996) dynamic program with those conditions, O(n^3). It serves the exact costs of the
arc-standard dynamic oracle (every gold tree) and of the arc-hybrid one on non-projective gold
trees; ``systems/arcstandard.py`` and ``systems/archybrid.py`` say why each condition holds,
and exhaustive search checks both (``tests/test_oracles.py``).

Spans that lie wholly in the buffer meet no condition and hold consecutive words, so their best
values are those of the unconstrained program over the sentence: ``sentence_spans`` computes
them once per sentence (kept with its gold tree, handed to the kernels as ``seq``), and each call
computes only the spans that start on the stack, O(k n^2) for k stack words."""

from __future__ import annotations

import numpy as np
from numba import njit

from .rows import L_BUF, L_NB, L_NS, L_STACK

NEG = -(1 << 28)
# What a stack word (below s0, or any) may not do, by system:
ARCSTANDARD = 0  # reach left on the stack (head or dependent) unless its subtree spans s0
ARCHYBRID = 1  # take a left dependent, or a head on its left other than the word just below
EXACT_NONPROJECTIVE = 1  # the option bit of the arc-hybrid and arc-eager oracles' exact costs


@njit(cache=True)
def row_units(row, off):
    """A row's units: its stack bottom to top, then its buffer from b0."""
    ns, nb = row[off[L_NS]], row[off[L_NB]]
    units = np.empty(ns + nb, np.int64)
    for i in range(ns):
        units[i] = row[off[L_STACK] + i]
    for j in range(nb):
        units[ns + j] = row[off[L_BUF] + nb - 1 - j]
    return units


@njit(cache=True)
def relative_to_least(cost, legal):
    """The losses after each legal move less the least of them: the exact costs."""
    best = 1 << 30
    for a in range(cost.shape[0]):
        if legal[a] and cost[a] < best:
            best = cost[a]
    for a in range(cost.shape[0]):
        if legal[a]:
            cost[a] -= best


@njit(cache=True, inline="always")
def best_split(cr, cl, s, t, far_from):
    """The best ``cr[s, r] + cl[t, r + 1]`` over every split r of the span s..t, and over the
    splits at or after ``far_from`` (pass s for no bound)."""
    best_any, best_far = NEG, NEG
    for r in range(s, t):
        value = cr[s, r] + cl[t, r + 1]
        if value > best_any:
            best_any = value
        if r >= far_from and value > best_far:
            best_far = value
    return best_any, best_far


@njit(cache=True, inline="always")
def complete_right(ir, cr, s, t, skip_from, skip_to):
    """The best ``ir[s, d] + cr[d, t]`` over the last dependents d of s, leaving out
    ``skip_from <= d < skip_to``."""
    best = NEG
    for d in range(s + 1, t + 1):
        if skip_from <= d < skip_to:
            continue
        value = ir[s, d] + cr[d, t]
        if value > best:
            best = value
    return best


@njit(cache=True, inline="always")
def complete_left(cl, il_first, il_rest, s, t):
    """The best ``cl[d, s] + il[t, d]`` over the first dependents d of t: ``il_first`` where d is
    s (its own left half empty), ``il_rest`` otherwise."""
    best = NEG
    for d in range(s, t):
        value = cl[d, s] + (il_first[t, d] if d == s else il_rest[t, d])
        if value > best:
            best = value
    return best


@njit(cache=True)
def span_tables(size, lo, hi):
    """Four empty span tables [size, size] (``NEG`` everywhere), the complete spans of one
    word (``cr[i, i]``, ``cl[i, i]``) set to 0 for i in lo..hi."""
    a = np.full((size, size), NEG, np.int64)
    b = np.full((size, size), NEG, np.int64)
    c = np.full((size, size), NEG, np.int64)
    d = np.full((size, size), NEG, np.int64)
    for i in range(lo, hi + 1):
        a[i, i] = 0
        b[i, i] = 0
    return a, b, c, d


@njit(cache=True)
def sentence_spans(gold_head):
    """The best spans of the unconstrained program over the words 1..n (the root left out) that
    a constrained span can read: ``cr[h, e]``, ``cl[h, l]`` and ``il[h, d]`` by word, each
    [n + 1, n + 1], flattened one after the other."""
    n1 = gold_head.shape[0]
    cr, cl, ir, il = span_tables(n1, 1, n1 - 1)
    for length in range(1, n1 - 1):
        for s in range(1, n1 - length):
            t = s + length
            best = best_split(cr, cl, s, t, s)[0]
            ir[s, t] = best + (1 if gold_head[t] == s else 0)
            il[t, s] = best + (1 if gold_head[s] == t else 0)
            cr[s, t] = complete_right(ir, cr, s, t, 0, 0)
            cl[t, s] = complete_left(cl, il, il, s, t)
    out = np.empty(3 * n1 * n1, np.int64)
    out[: n1 * n1] = cr.ravel()
    out[n1 * n1 : 2 * n1 * n1] = cl.ravel()
    out[2 * n1 * n1 :] = il.ravel()
    return out


@njit(cache=True)
def fill_buffer_spans(units, first, hi, spans, cr, cl, il_any, il_far):
    """Copy the spans of units ``first..hi`` (consecutive buffer words) from ``sentence_spans``.
    Returns where the spans left to compute start: ``first``, or past ``hi`` when there are no
    tables (every span is computed)."""
    if spans.shape[0] == 0:
        return hi + 1
    n1 = int(round(np.sqrt(spans.shape[0] // 3)))
    for s in range(first, hi + 1):
        for t in range(s, hi + 1):
            cr[s, t] = spans[units[s] * n1 + units[t]]
            cl[t, s] = spans[n1 * n1 + units[t] * n1 + units[s]]
            if t > s:
                il_any[t, s] = il_far[t, s] = spans[2 * n1 * n1 + units[t] * n1 + units[s]]
    return first


@njit(cache=True)
def best_gain(units, n, root_first, first_stack, top, gold_head, mode, spans):
    """The most gold arcs among ``units[:n]`` a completion can build. The root is ``units[0]``
    (``root_first``) or ``units[n - 1]``, and takes one dependent; the stack words are
    ``units[first_stack : top + 1]`` (``top``: s0's place; below ``first_stack`` when the stack
    holds no word); ``gold_head[w]``: w's gold head; ``mode``: ARCSTANDARD or ARCHYBRID;
    ``spans``: the sentence's ``sentence_spans`` (or empty: every span is computed)."""
    if n <= 1:
        return 0
    lo, hi = (1, n - 1) if root_first else (0, n - 2)
    # cr[h, e]: h and its right dependents' subtrees up to e; cl[h, l]: h and its left
    # dependents' subtrees from l; ir[h, d]: h -> d, d right of h; il_any[h, d]: h -> d, d left of
    # h, any right end of d; il_far: the same with d's right half reaching s0 where d must
    cr, cl, ir, il_any = span_tables(n, lo, hi)
    il_far = np.full((n, n), NEG, np.int64)
    start = fill_buffer_spans(units, max(top + 1, lo), hi, spans, cr, cl, il_any, il_far)
    for length in range(1, hi - lo + 1):
        for s in range(lo, min(hi - length, start - 1) + 1):
            t = s + length
            w_st = 1 if gold_head[units[t]] == units[s] else 0
            w_ts = 1 if gold_head[units[s]] == units[t] else 0
            bound = mode == ARCSTANDARD and first_stack <= s < top
            best_any, best_far = best_split(cr, cl, s, t, top if bound else s)
            t_stack = first_stack <= t <= top
            if not (mode == ARCHYBRID and t_stack and s != t - 1):
                ir[s, t] = best_any + w_st
            if not (mode == ARCHYBRID and t_stack):
                il_any[t, s] = best_any + w_ts
                il_far[t, s] = best_far + w_ts
            # an arc-standard stack word below s0 whose head is on its left: its right half reaches s0
            bounded = mode == ARCSTANDARD and t < top
            cr[s, t] = complete_right(ir, cr, s, t, first_stack if bounded else 0, top if bounded else 0)
            cl[t, s] = complete_left(cl, il_any, il_far, s, t)
    root = units[0] if root_first else units[n - 1]
    best = NEG
    for c in range(lo, hi + 1):
        if mode == ARCHYBRID and root_first and first_stack <= c <= top and c != 1:
            continue  # a stack word's head on its left is the word just below
        value = cl[c, lo] + cr[c, hi] + (1 if gold_head[units[c]] == root else 0)
        if value > best:
            best = value
    return best


@njit(cache=True)
def best_gain_eager(units, headed, n, top, gold_head, root_free, spans):
    """``best_gain`` for arc-eager: ``units[0]`` is the root, the stack words are
    ``units[1 : top + 1]`` (``headed[i]``: unit i already has its head, which is then the stack word
    just below it), the buffer follows. A stack word takes no left dependent; a headed one keeps
    its head (its arc is counted already); a headless one gets a head in the buffer or none. Any
    word may stay headless (it then stands in the root's span like a dependent of the root, but
    gains nothing); the root takes at most one new dependent, a buffer word, only while
    ``root_free``, and only as its first: every word before it must be reduced. The gain counts
    the new gold arcs. ``spans``: as ``best_gain``'s."""
    if n <= 1:
        return 0
    cr, cl, ir, il = span_tables(n, 1, n - 1)
    start = fill_buffer_spans(units, top + 1, n - 1, spans, cr, cl, il, il)
    for length in range(1, n - 1):
        for s in range(1, min(n - 1 - length, start - 1) + 1):
            t = s + length
            best_any = best_split(cr, cl, s, t, s)[0]
            t_stack, s_stack = t <= top, s <= top
            if not t_stack:  # a buffer word's head on its left
                ir[s, t] = best_any + (1 if gold_head[units[t]] == units[s] else 0)
            elif headed[t] and s == t - 1:  # the arc built already
                ir[s, t] = best_any
            if not t_stack and not (s_stack and headed[s]):  # t takes s as a left dependent
                il[t, s] = best_any + (1 if gold_head[units[s]] == units[t] else 0)
            cr[s, t] = complete_right(ir, cr, s, t, 0, 0)
            cl[t, s] = complete_left(cl, il, il, s, t)
    # The root's span: its dependents' subtrees one after the other (a stack word headed by the
    # root first, or the root's new dependent first, or words that stay headless).
    span = np.full(n, NEG, np.int64)
    span[0] = 0
    for e in range(1, n):
        best = NEG
        for first in range(1, e + 1):
            if span[first - 1] == NEG:
                continue
            for c in range(first, e + 1):
                if c <= top and headed[c]:
                    if c != 1 or first != 1:
                        continue  # a headed stack word's head is below it: the root only for the first
                    gain = 0
                elif first == 1 and root_free and c > top:
                    gain = 1 if gold_head[units[c]] == units[0] else 0  # the root's new dependent, or headless
                else:
                    gain = 0  # stays headless
                value = span[first - 1] + cl[c, first] + cr[c, e] + gain
                if value > best:
                    best = value
        span[e] = best
    return span[n - 1]
