"""Configurations of many parser items as rows of one integer array, with compiled transitions.

The Python ``Config`` objects of each system module are the reference (oracles and exhaustive
search read them); decoding and beam training keep the configurations of all items of a batch
in one ``int32`` array instead, one row per item, and run legal/terminal/features/apply for all
rows at once in compiled code (numba). Branching a beam is a gather of rows by parent index
(``states[parents]``, one copy in C) followed by ``apply`` on the new rows: no Python object is
created or copied per item and step. ``to_config`` turns a row back into the system's ``Config``
when an oracle has to read it; ``tests/test_arrays.py`` runs every system in lockstep with its
Python twin.

Each system's compiled transitions live in ``kernels/<name>.py`` (its class names the kernel by
``code``) and ``kernels/dispatch.py`` dispatches on the code, one line per system; this module
holds the layout of a row (``kernels/rows.py`` says where each part lives) and the batched kernels.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ..base import NONE, Config, TransitionSystem
from .factors import grow, open_words, scan
from ..kernels.dispatch import KERNELS, apply_one, initial_one, legal_row, positions_row, terminal_row
from ..kernels.rows import (  # noqa: F401  (the offsets are part of this module's interface)
    L_ACTIVE, L_BUF, L_COUNTED, L_HEADS, L_LMOD, L_N, L_NB, L_NS, L_NS2, L_PLANE, L_RMOD, L_STACK, L_STACK2,
    L_STEPS, L_SWITCHED, L_WIDTH,
)  # fmt: skip


class Layout:
    """Where each part of a configuration lives in a row, for one system and batch width.

    ``factors`` is the bit mask of the completion model's factor kinds (``factors.factor_mask``);
    with a non-zero mask every ``apply`` also counts the factors that became complete.
    """

    def __init__(self, system: TransitionSystem, width: int, factors: int = 0):
        self.system = system
        self.code = system.code
        if self.code not in KERNELS:
            raise ValueError(f"{system.name}: no compiled kernel with code {self.code} (systems/kernels/)")
        self.root_end = getattr(system, "root", "start") == "end"
        self.width = width
        blocks = system.row_blocks
        self.factors = int(factors)
        sizes = [width, width if "stack2" in blocks else 0, width, width, width, width,
                 width if "plane" in blocks else 0, width if factors else 0]  # fmt: skip
        offsets, col = [], 0
        for size in sizes:
            offsets.append(col)
            col += size
        offsets += [col + k for k in range(7)]  # the seven scalars
        offsets.append(col + 7)  # row width
        self.offsets = np.array(offsets, dtype=np.int64)
        self._columns = offsets  # the same as Python ints, for per-row Python code
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
        c.stack = row[off[L_STACK] : off[L_STACK] + row[off[L_NS]]]
        if "stack2" in self.system.row_blocks:
            c.stack2 = row[off[L_STACK2] : off[L_STACK2] + row[off[L_NS2]]]
        self.system.read_row(c, row, self._columns)  # what the system keeps in its own blocks
        return c

    def from_config(self, c: Config) -> np.ndarray:
        """The row of a ``Config`` (the inverse of ``to_config``), for oracles that read rows.
        Completion bits are not part of a ``Config`` and stay 0."""
        stack, buf, heads, n = c.stack, c.buffer, c.heads, c.n
        other: list[int] = list(getattr(c, "stack2", ()))
        if n + 1 > self.width:
            raise ValueError(f"a configuration of {n} words does not fit rows of width {self.width}")
        o = self._columns
        row = np.zeros(o[L_WIDTH], dtype=np.int32)
        row[o[L_HEADS] : o[L_HEADS] + n + 1] = heads
        row[o[L_LMOD] : o[L_LMOD] + n + 1] = c.lmod
        row[o[L_RMOD] : o[L_RMOD] + n + 1] = c.rmod
        row[o[L_BUF] : o[L_BUF] + len(buf)] = buf
        row[o[L_STACK] : o[L_STACK] + len(stack)] = stack
        if other:
            row[o[L_STACK2] : o[L_STACK2] + len(other)] = other
        row[o[L_NS]], row[o[L_NS2]], row[o[L_NB]], row[o[L_STEPS]], row[o[L_N]] = (
            len(stack), len(other), len(buf), c.steps, n
        )  # fmt: skip
        self.system.write_row(c, row, o)  # what the system keeps in its own blocks
        return row


# -- batched kernels ---------------------------------------------------------------------------


@njit(cache=True)
def _initial(states, off, code, root_end, lengths):
    for i in range(states.shape[0]):
        initial_one(states[i], off, code, root_end, lengths[i])


@njit(cache=True)
def feature_row(row, off, code, n_base, mod_left, mod_src, offset, empty, words, out):
    """The feature row of one configuration: the table row of the word at every position
    (``offset + word``), ``empty`` where there is none; ``words`` is scratch of the same width."""
    positions_row(row, off, code, words)
    for k in range(mod_src.shape[0]):
        w = words[mod_src[k]]
        if w == NONE:
            words[n_base + k] = NONE
        else:
            words[n_base + k] = row[(off[L_LMOD] if mod_left[k] else off[L_RMOD]) + w]
    for k in range(out.shape[0]):
        out[k] = empty if words[k] == NONE else offset + words[k]


@njit(cache=True)
def _inspect(states, off, code, root_end, n_base, mod_left, mod_src, offsets, empty, rows, legal, done):
    words = np.empty(rows.shape[1], dtype=np.int64)
    for i in range(states.shape[0]):
        row = states[i]
        feature_row(row, off, code, n_base, mod_left, mod_src, offsets[i], empty, words, rows[i])
        legal_row(row, off, code, root_end, legal[i])
        done[i] = terminal_row(row, off, code, root_end)


@njit(cache=True)
def _apply(states, off, code, actions):
    for i in range(states.shape[0]):
        if actions[i] >= 0:
            apply_one(states[i], off, code, actions[i])


# -- completion model bookkeeping (see factors.py) ---------------------------------------------


@njit(cache=True)
def _open(row, off, code, root_end, opened):
    n = row[off[L_N]]
    ns1 = row[off[L_NS2]]  # 0 for systems with one stack
    terminal = terminal_row(row, off, code, root_end)
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
            apply_one(scratch, off, code, a)
            _open(scratch, off, code, root_end, opened)
            stop = scan(scratch, off[L_HEADS], off[L_LMOD], off[L_RMOD], off[L_COUNTED], n, mask, opened, True,
                        out_kind, out_nodes, end)  # fmt: skip
            for k in range(end, stop):
                out_row[k], out_act[k] = i, a
            end = stop
    return end, states.shape[0]
