"""Configurations of many parser items as rows of one integer array, with compiled transitions.

The Python ``Config`` objects of each system module are the reference (oracles and exhaustive
search read them); decoding and beam training keep the configurations of all items of a batch
in one ``int32`` array instead, one row per item, and run legal/terminal/features/apply for all
rows at once in compiled code (numba). Branching a beam is a gather of rows by parent index
(``states[parents]``, one copy in C) followed by ``apply`` on the new rows: no Python object is
created or copied per item and step. ``to_config`` turns a row back into the system's ``Config``
when an oracle has to read it; ``tests/test_arrays.py`` runs every system in lockstep with its
Python twin.

A row holds, in column blocks of the batch width ``C`` (longest sentence + 1):
the stack (bottom first; for 2-Planar the stack of plane 0), the second stack of 2-Planar (the
stack of plane 1), the buffer reversed (b0 last, as in ``Config``), heads, leftmost and rightmost
modifiers, for 2-Planar the plane of every arc, and with a completion model the bits of the
factors counted per word (``factors.py``); then scalars: stack lengths, buffer length, the active
plane, whether the last transition was a SWITCH, transitions applied, and n.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .base import NONE, Config, TransitionSystem
from .factors import grow, open_words, scan

# System codes of the compiled kernels.
ARCHYBRID, ARCEAGER, ARCSTANDARD, SWAPSTANDARD, TWOPLANAR, ARCHYBRID_SWAP = range(6)
CODES = {
    "archybrid": ARCHYBRID,
    "arceager": ARCEAGER,
    "arcstandard": ARCSTANDARD,
    "swapstandard": SWAPSTANDARD,
    "twoplanar": TWOPLANAR,
    "archybrid_swap": ARCHYBRID_SWAP,
}

# Indices into the layout vector: column offsets of the blocks and scalars of a row.
L_STACK, L_STACK2, L_BUF, L_HEADS, L_LMOD, L_RMOD, L_PLANE, L_COUNTED = range(8)
L_NS, L_NS2, L_NB, L_ACTIVE, L_SWITCHED, L_STEPS, L_N, L_WIDTH = range(8, 16)


class Layout:
    """Where each part of a configuration lives in a row, for one system and batch width.

    ``factors`` is the bit mask of the completion model's factor kinds (``factors.factor_mask``);
    with a non-zero mask every ``apply`` also counts the factors that became complete.
    """

    def __init__(self, system: TransitionSystem, width: int, factors: int = 0):
        self.system = system
        self.code = CODES[system.name]
        self.root_end = getattr(system, "root", "start") == "end"
        self.width = width
        two = self.code == TWOPLANAR
        self.factors = int(factors)
        sizes = [width, width if two else 0, width, width, width, width, width if two else 0, width if factors else 0]
        offsets, col = [], 0
        for size in sizes:
            offsets.append(col)
            col += size
        offsets += [col + k for k in range(7)]  # the seven scalars
        offsets.append(col + 7)  # row width
        self.offsets = np.array(offsets, dtype=np.int64)
        sources = system._modifier_sources if system.modifiers else []
        self.n_base = len(system.base_slots)
        self.mod_left = np.array([left for left, _ in sources], dtype=np.bool_)
        self.mod_src = np.array([i for _, i in sources], dtype=np.int64)
        self.n_actions = len(system.actions)
        self.config_type = type(system.initial(1))

    @property
    def row_width(self) -> int:
        return int(self.offsets[L_WIDTH])

    def initial(self, lengths: np.ndarray) -> np.ndarray:
        """One initial configuration per sentence length."""
        states = np.zeros((len(lengths), self.row_width), dtype=np.int32)
        _initial(states, self.offsets, self.code, self.root_end, np.asarray(lengths, dtype=np.int64))
        if self.factors:  # nothing is complete before the first arc, unless n = 0 (terminal)
            _mark(states, self.offsets, self.code, self.root_end, self.factors, np.zeros(len(states), dtype=np.int64))
        return states

    def inspect(self, states: np.ndarray, offsets: np.ndarray, empty: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Feature rows (``offsets[i] + word``, ``empty`` for none), legal flags and terminal flags."""
        m = states.shape[0]
        rows = np.empty((m, self.n_base + len(self.mod_src)), dtype=np.int64)
        legal = np.empty((m, self.n_actions), dtype=np.bool_)
        done = np.empty(m, dtype=np.bool_)
        _inspect(
            states, self.offsets, self.code, self.root_end, self.n_base, self.mod_left, self.mod_src,
            np.asarray(offsets, dtype=np.int64), empty, rows, legal, done,
        )  # fmt: skip
        return rows, legal, done

    def apply(self, states: np.ndarray, actions: np.ndarray) -> None:
        """Apply ``actions[i]`` to row i in place (a negative action leaves the row as it is);
        with factors, the factors that became complete are marked counted."""
        actions = np.asarray(actions, dtype=np.int64)
        _apply(states, self.offsets, self.code, actions)
        if self.factors:
            _mark(states, self.offsets, self.code, self.root_end, self.factors, actions)

    def candidates(
        self, states: np.ndarray, legal: np.ndarray, done: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The factors each candidate (row i, legal action a) would complete: arrays (row, action,
        kind, nodes [F, 4] as word indices, NONE-padded), one entry per factor."""
        m = states.shape[0]
        cap = 16 * m + 64
        out = (np.empty(cap, dtype=np.int64), np.empty(cap, dtype=np.int64), np.empty(cap, dtype=np.int64),
               np.empty((cap, 4), dtype=np.int64))  # fmt: skip
        start = end = 0
        while True:
            end, start = _candidates(
                states, self.offsets, self.code, self.root_end, self.factors, legal, done, start, end, *out
            )
            if start == m:
                return tuple(a[:end] for a in out)  # type: ignore[return-value]
            out = grow(out, 2 * out[0].shape[0])

    def counted(self, states: np.ndarray, i: int) -> list[int]:
        """Bits of the factors counted per word (index 0 unused) of row i."""
        off = self.offsets
        n = int(states[i, off[L_N]])
        return states[i, off[L_COUNTED] : off[L_COUNTED] + n + 1].tolist()

    def heads(self, states: np.ndarray, i: int) -> list[int]:
        """Heads (index 0 = root) of row i as built so far."""
        off = self.offsets
        n = int(states[i, off[L_N]])
        return states[i, off[L_HEADS] : off[L_HEADS] + n + 1].tolist()

    def to_config(self, states: np.ndarray, i: int) -> Config:
        """Row i as the system's ``Config``, for the oracles (every slot set from the row)."""
        off = self.offsets
        row = states[i].tolist()
        n = row[off[L_N]]
        c = object.__new__(self.config_type)
        heads, lmod, rmod, buf = off[L_HEADS], off[L_LMOD], off[L_RMOD], off[L_BUF]
        c.n, c.steps = n, row[off[L_STEPS]]
        c.heads, c.lmod, c.rmod = row[heads : heads + n + 1], row[lmod : lmod + n + 1], row[rmod : rmod + n + 1]
        c.buffer = row[buf : buf + row[off[L_NB]]]
        stack = row[off[L_STACK] : off[L_STACK] + row[off[L_NS]]]
        if self.code == TWOPLANAR:
            other = row[off[L_STACK2] : off[L_STACK2] + row[off[L_NS2]]]
            active = row[off[L_ACTIVE]]
            c.stack, c.stack2 = (stack, other) if active == 0 else (other, stack)  # type: ignore[attr-defined]
            c.active, c.switched = active, bool(row[off[L_SWITCHED]])  # type: ignore[attr-defined]
            c.plane = row[off[L_PLANE] : off[L_PLANE] + n + 1]  # type: ignore[attr-defined]
        else:
            c.stack = stack
        return c


# -- compiled kernels --------------------------------------------------------------------------


@njit(cache=True)
def _initial(states, off, code, root_end, lengths):
    for i in range(states.shape[0]):
        row = states[i]
        n = lengths[i]
        for k in range(n + 1):
            row[off[L_HEADS] + k] = NONE
            row[off[L_LMOD] + k] = NONE
            row[off[L_RMOD] + k] = NONE
        nb = 0
        if root_end:
            row[off[L_BUF]] = 0
            nb = 1
        for w in range(n, 0, -1):
            row[off[L_BUF] + nb] = w
            nb += 1
        row[off[L_NB]] = nb
        row[off[L_NS]] = 0 if root_end else 1
        row[off[L_STACK]] = 0
        if code == TWOPLANAR:
            row[off[L_STACK2]] = 0
            row[off[L_NS2]] = 1
            for k in range(n + 1):
                row[off[L_PLANE] + k] = NONE
        row[off[L_N]] = n


@njit(cache=True)
def _plane_stack(row, off, plane):
    """(column of the bottom, length) of the stack of a plane (plane 0: the only stack but in 2-Planar)."""
    if plane == 0:
        return off[L_STACK], row[off[L_NS]]
    return off[L_STACK2], row[off[L_NS2]]


@njit(cache=True)
def _active_stack(row, off):
    return _plane_stack(row, off, row[off[L_ACTIVE]])


@njit(cache=True)
def _top(row, off, k):
    """The k-th word from the top of the active stack (0 = s0), or NONE."""
    base, length = _active_stack(row, off)
    return row[base + length - 1 - k] if length > k else NONE


@njit(cache=True)
def _inactive_stack(row, off):
    return _plane_stack(row, off, 1 - row[off[L_ACTIVE]])


@njit(cache=True)
def _buffer(row, off, k):
    """The k-th buffer word (0 = b0), or NONE."""
    nb = row[off[L_NB]]
    return row[off[L_BUF] + nb - 1 - k] if nb > k else NONE


@njit(cache=True)
def _is_ancestor(row, off, a, w):
    heads = off[L_HEADS]
    while w != NONE:
        if w == a:
            return True
        w = row[heads + w]
    return False


@njit(cache=True)
def _terminal(row, off, code, root_end):
    ns, nb = row[off[L_NS]], row[off[L_NB]]
    if code == ARCHYBRID or code == ARCHYBRID_SWAP:
        if root_end:
            return ns == 0 and nb == 1
        return nb == 0 and ns == 1
    if code == ARCSTANDARD or code == SWAPSTANDARD:
        return nb == 0 and ns == 1
    return nb == 0  # arc-eager, 2-Planar


@njit(cache=True)
def _legal(row, off, code, root_end, out):
    ns, nb = row[off[L_NS]], row[off[L_NB]]
    heads, lmod = off[L_HEADS], off[L_LMOD]
    for a in range(out.shape[0]):
        out[a] = False
    if code == ARCHYBRID or code == ARCHYBRID_SWAP:
        if root_end:
            b0 = _buffer(row, off, 0)
            b0_root = b0 == 0
            out[0] = not b0_root
            out[1] = ns > 0 and (not b0_root or ns == 1)
            out[2] = ns > 1
            if code == ARCHYBRID_SWAP:
                out[3] = ns > 0 and b0 != 0 and _top(row, off, 0) < b0
        else:
            out[0] = nb > 0
            out[1] = ns > 1 and nb > 0
            out[2] = ns > 2 or (ns == 2 and nb == 0)
    elif code == ARCEAGER:
        s0 = _top(row, off, 0)
        headless = row[heads + s0] == NONE
        out[0] = nb > 0
        out[1] = nb > 0 and s0 != 0 and headless
        out[2] = nb > 0 and (s0 != 0 or row[lmod] == NONE)
        out[3] = s0 != 0 and not headless
    elif code == ARCSTANDARD or code == SWAPSTANDARD:
        pair = ns > 1
        s1_word = pair and _top(row, off, 1) != 0
        out[0] = nb > 0
        out[1] = s1_word
        out[2] = pair and (s1_word or nb == 0)
        if code == SWAPSTANDARD:
            s1 = _top(row, off, 1)
            out[3] = ns > 2 and 0 < s1 and s1 < _top(row, off, 0)
    else:  # 2-Planar
        if nb == 0:
            return
        b0 = _buffer(row, off, 0)
        _, na = _active_stack(row, off)
        if na > 0:
            s0 = _top(row, off, 0)
            out[1] = s0 != 0 and row[heads + s0] == NONE and not _is_ancestor(row, off, s0, b0)
            out[2] = row[heads + b0] == NONE and not _is_ancestor(row, off, b0, s0) and (s0 != 0 or row[lmod] == NONE)
        out[0] = True
        out[3] = na > 0
        out[4] = row[off[L_SWITCHED]] == 0


@njit(cache=True)
def _positions(row, off, code, out):
    if code == TWOPLANAR:
        out[0] = _top(row, off, 0)
        out[1] = _top(row, off, 1)
        out[2] = _top(row, off, 2)
        out[3] = _buffer(row, off, 0)
        base, length = _inactive_stack(row, off)
        out[4] = row[base + length - 1] if length > 0 else NONE
        out[5] = row[base + length - 2] if length > 1 else NONE
    elif code == ARCEAGER:
        out[0] = _top(row, off, 0)
        out[1] = _top(row, off, 1)
        out[2] = _buffer(row, off, 0)
        out[3] = _buffer(row, off, 1)
    else:  # arc-hybrid, arc-standard and their SWAP variants: s0 s1 s2 b0
        out[0] = _top(row, off, 0)
        out[1] = _top(row, off, 1)
        out[2] = _top(row, off, 2)
        out[3] = _buffer(row, off, 0)


@njit(cache=True)
def _inspect(states, off, code, root_end, n_base, mod_left, mod_src, offsets, empty, rows, legal, done):
    words = np.empty(rows.shape[1], dtype=np.int64)
    for i in range(states.shape[0]):
        row = states[i]
        _positions(row, off, code, words)
        for k in range(mod_src.shape[0]):
            w = words[mod_src[k]]
            if w == NONE:
                words[n_base + k] = NONE
            else:
                words[n_base + k] = row[(off[L_LMOD] if mod_left[k] else off[L_RMOD]) + w]
        for k in range(rows.shape[1]):
            rows[i, k] = empty if words[k] == NONE else offsets[i] + words[k]
        _legal(row, off, code, root_end, legal[i])
        done[i] = _terminal(row, off, code, root_end)


@njit(cache=True)
def _attach(row, off, h, d):
    row[off[L_HEADS] + d] = h
    lm, rm = off[L_LMOD] + h, off[L_RMOD] + h
    if row[lm] == NONE or d < row[lm]:
        row[lm] = d
    if row[rm] == NONE or d > row[rm]:
        row[rm] = d


@njit(cache=True)
def _push(row, off, which, w):
    """Push w on stack block ``which`` (L_STACK or L_STACK2)."""
    length = L_NS if which == L_STACK else L_NS2
    row[off[which] + row[off[length]]] = w
    row[off[length]] += 1


@njit(cache=True)
def _pop_buffer(row, off):
    row[off[L_NB]] -= 1
    return row[off[L_BUF] + row[off[L_NB]]]


@njit(cache=True)
def _shift(row, off):
    """b0 onto the stack (single-stack systems)."""
    _push(row, off, L_STACK, _pop_buffer(row, off))


@njit(cache=True)
def _left_pop(row, off):
    """The arc b0 -> s0, s0 popped (arc-eager and arc-hybrid LEFT)."""
    row[off[L_NS]] -= 1
    _attach(row, off, _buffer(row, off, 0), row[off[L_STACK] + row[off[L_NS]]])


@njit(cache=True)
def _apply_one(row, off, code, a):
    stack, ns = off[L_STACK], off[L_NS]
    if code == TWOPLANAR:
        row[off[L_SWITCHED]] = 0
        active = row[off[L_ACTIVE]]
        if a == 0:  # SHIFT onto both stacks
            b0 = _pop_buffer(row, off)
            _push(row, off, L_STACK, b0)
            _push(row, off, L_STACK2, b0)
        elif a == 1:  # LEFT: b0 -> s0
            d = _top(row, off, 0)
            _attach(row, off, _buffer(row, off, 0), d)
            row[off[L_PLANE] + d] = active
        elif a == 2:  # RIGHT: s0 -> b0
            d = _buffer(row, off, 0)
            _attach(row, off, _top(row, off, 0), d)
            row[off[L_PLANE] + d] = active
        elif a == 3:  # REDUCE
            row[off[L_NS if active == 0 else L_NS2]] -= 1
        else:  # SWITCH
            row[off[L_ACTIVE]] = 1 - active
            row[off[L_SWITCHED]] = 1
    elif code == ARCEAGER:
        if a == 0:
            _shift(row, off)
        elif a == 1:
            _left_pop(row, off)
        elif a == 2:
            b0 = _pop_buffer(row, off)
            _attach(row, off, _top(row, off, 0), b0)
            _push(row, off, L_STACK, b0)
        else:
            row[ns] -= 1
    elif code == ARCHYBRID or code == ARCHYBRID_SWAP:
        if a == 0:
            _shift(row, off)
        elif a == 1:
            _left_pop(row, off)
        elif a == 2:
            row[ns] -= 1
            _attach(row, off, row[stack + row[ns] - 1], row[stack + row[ns]])
        else:  # SWAP: s0 goes back into the buffer behind b0
            row[ns] -= 1
            buf, nb = off[L_BUF], row[off[L_NB]]
            row[buf + nb] = row[buf + nb - 1]
            row[buf + nb - 1] = row[stack + row[ns]]
            row[off[L_NB]] = nb + 1
    else:  # arc-standard, SwapStandard
        if a == 0:
            _shift(row, off)
        elif a == 1:  # LEFT: s0 -> s1, s1 removed
            top = row[ns]
            d = row[stack + top - 2]
            row[stack + top - 2] = row[stack + top - 1]
            row[ns] = top - 1
            _attach(row, off, row[stack + top - 2], d)
        elif a == 2:  # RIGHT: s1 -> s0, s0 popped
            row[ns] -= 1
            _attach(row, off, row[stack + row[ns] - 1], row[stack + row[ns]])
        else:  # SWAP: s1 back to the buffer
            top = row[ns]
            s1 = row[stack + top - 2]
            row[stack + top - 2] = row[stack + top - 1]
            row[ns] = top - 1
            buf, nb = off[L_BUF], row[off[L_NB]]
            row[buf + nb] = s1
            row[off[L_NB]] = nb + 1
    row[off[L_STEPS]] += 1


@njit(cache=True)
def _apply(states, off, code, actions):
    for i in range(states.shape[0]):
        if actions[i] >= 0:
            _apply_one(states[i], off, code, actions[i])


# -- completion model bookkeeping (see factors.py) ---------------------------------------------


@njit(cache=True)
def _open(row, off, code, root_end, opened):
    n = row[off[L_N]]
    ns1 = row[off[L_NS2]] if code == TWOPLANAR else 0
    terminal = _terminal(row, off, code, root_end)
    open_words(row, off[L_STACK], row[off[L_NS]], off[L_STACK2], ns1, off[L_BUF], row[off[L_NB]], n, terminal, opened)


@njit(cache=True)
def _mark(states, off, code, root_end, mask, actions):
    """Set the bits of the factors that are complete in the rows (after ``actions``; -1 = stay)."""
    opened = np.empty(off[L_WIDTH] + 1, dtype=np.bool_)
    kinds = np.empty(0, dtype=np.int64)
    nodes = np.empty((0, 4), dtype=np.int64)
    for i in range(states.shape[0]):
        if actions[i] < 0 and states[i, off[L_STEPS]] > 0:
            continue
        row = states[i]
        _open(row, off, code, root_end, opened)
        scan(row, off[L_HEADS], off[L_LMOD], off[L_RMOD], off[L_COUNTED], row[off[L_N]], mask, opened, False,
             kinds, nodes, 0)  # fmt: skip


@njit(cache=True)
def _candidates(states, off, code, root_end, mask, legal, done, start, end, out_row, out_act, out_kind, out_nodes):
    """Emit, from index ``end`` on, the factors every legal transition of every live row from
    ``start`` on would complete; stops before a row whose factors might not fit.
    Returns (end, next row)."""
    opened = np.empty(off[L_WIDTH] + 1, dtype=np.bool_)
    scratch = np.empty(states.shape[1], dtype=states.dtype)
    cap = out_row.shape[0]
    for i in range(start, states.shape[0]):
        if done[i]:
            continue
        n = states[i, off[L_N]]
        room = legal.shape[1] * 8 * (n + 1)  # at most every factor of every arc per candidate
        if end + room > cap:
            return end, i
        for a in range(legal.shape[1]):
            if not legal[i, a]:
                continue
            scratch[:] = states[i]
            _apply_one(scratch, off, code, a)
            _open(scratch, off, code, root_end, opened)
            stop = scan(scratch, off[L_HEADS], off[L_LMOD], off[L_RMOD], off[L_COUNTED], n, mask, opened, True,
                        out_kind, out_nodes, end)  # fmt: skip
            for k in range(end, stop):
                out_row[k], out_act[k] = i, a
            end = stop
    return end, states.shape[0]
