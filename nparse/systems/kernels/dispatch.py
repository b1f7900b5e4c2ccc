"""One system's row kernel out of eight, by its ``CODE``: one line per system (numba compiles the
branch the code selects). ``adapters/arrays.py`` and the oracles on rows (``oracles.py``) call these. An
unknown code raises ValueError (a system added without its line here), never falls through."""

from __future__ import annotations

from types import ModuleType

from numba import njit

from . import arceager, arceager_swap, archybrid, archybrid_swap, arcstandard, covington, swapstandard, twoplanar
from .rows import L_STEPS

UNKNOWN = "unknown transition system code: not among kernels/dispatch.py's KERNELS"
FUNCTIONS = ("initial", "terminal", "legal", "positions", "apply")  # what every system kernel defines


def checked(module: ModuleType, system: str | None = None) -> ModuleType:
    """A system's kernel module with everything the dispatchers read, or an error naming the
    system (by default the module's name) and what it lacks, rather than an AttributeError
    inside numba's compiler."""
    name = system or module.__name__.rsplit(".", 1)[-1]
    for attr in ("CODE", "ACTIONS", *FUNCTIONS):
        if not hasattr(module, attr):
            raise TypeError(f"system {name!r}: its kernel module {module.__name__} has no {attr!r}")
    return module


KERNELS = {
    m.CODE: checked(m)
    for m in (archybrid, arceager, arcstandard, swapstandard, twoplanar, archybrid_swap, covington, arceager_swap)
}


@njit(cache=True)
def initial_one(row, off, code, root_end, n):
    if code == archybrid.CODE:
        archybrid.initial(row, off, root_end, n)
    elif code == arceager.CODE:
        arceager.initial(row, off, root_end, n)
    elif code == arcstandard.CODE:
        arcstandard.initial(row, off, root_end, n)
    elif code == swapstandard.CODE:
        swapstandard.initial(row, off, root_end, n)
    elif code == twoplanar.CODE:
        twoplanar.initial(row, off, root_end, n)
    elif code == archybrid_swap.CODE:
        archybrid_swap.initial(row, off, root_end, n)
    elif code == covington.CODE:
        covington.initial(row, off, root_end, n)
    elif code == arceager_swap.CODE:
        arceager_swap.initial(row, off, root_end, n)
    else:
        raise ValueError(UNKNOWN)


@njit(cache=True)
def terminal_row(row, off, code, root_end):
    if code == archybrid.CODE:
        return archybrid.terminal(row, off, root_end)
    if code == arceager.CODE:
        return arceager.terminal(row, off, root_end)
    if code == arcstandard.CODE:
        return arcstandard.terminal(row, off, root_end)
    if code == swapstandard.CODE:
        return swapstandard.terminal(row, off, root_end)
    if code == twoplanar.CODE:
        return twoplanar.terminal(row, off, root_end)
    if code == archybrid_swap.CODE:
        return archybrid_swap.terminal(row, off, root_end)
    if code == arceager_swap.CODE:
        return arceager_swap.terminal(row, off, root_end)
    if code == covington.CODE:
        return covington.terminal(row, off, root_end)
    raise ValueError(UNKNOWN)


@njit(cache=True)
def legal_row(row, off, code, root_end, out):
    for a in range(out.shape[0]):
        out[a] = False
    if code == archybrid.CODE:
        archybrid.legal(row, off, root_end, out)
    elif code == arceager.CODE:
        arceager.legal(row, off, root_end, out)
    elif code == arcstandard.CODE:
        arcstandard.legal(row, off, root_end, out)
    elif code == swapstandard.CODE:
        swapstandard.legal(row, off, root_end, out)
    elif code == twoplanar.CODE:
        twoplanar.legal(row, off, root_end, out)
    elif code == archybrid_swap.CODE:
        archybrid_swap.legal(row, off, root_end, out)
    elif code == covington.CODE:
        covington.legal(row, off, root_end, out)
    elif code == arceager_swap.CODE:
        arceager_swap.legal(row, off, root_end, out)
    else:
        raise ValueError(UNKNOWN)


@njit(cache=True)
def positions_row(row, off, code, out):
    if code == archybrid.CODE:
        archybrid.positions(row, off, out)
    elif code == arceager.CODE:
        arceager.positions(row, off, out)
    elif code == arcstandard.CODE:
        arcstandard.positions(row, off, out)
    elif code == swapstandard.CODE:
        swapstandard.positions(row, off, out)
    elif code == twoplanar.CODE:
        twoplanar.positions(row, off, out)
    elif code == archybrid_swap.CODE:
        archybrid_swap.positions(row, off, out)
    elif code == covington.CODE:
        covington.positions(row, off, out)
    elif code == arceager_swap.CODE:
        arceager_swap.positions(row, off, out)
    else:
        raise ValueError(UNKNOWN)


@njit(cache=True)
def apply_one(row, off, code, a):
    if code == archybrid.CODE:
        archybrid.apply(row, off, a)
    elif code == arceager.CODE:
        arceager.apply(row, off, a)
    elif code == arcstandard.CODE:
        arcstandard.apply(row, off, a)
    elif code == swapstandard.CODE:
        swapstandard.apply(row, off, a)
    elif code == twoplanar.CODE:
        twoplanar.apply(row, off, a)
    elif code == archybrid_swap.CODE:
        archybrid_swap.apply(row, off, a)
    elif code == covington.CODE:
        covington.apply(row, off, a)
    elif code == arceager_swap.CODE:
        arceager_swap.apply(row, off, a)
    else:
        raise ValueError(UNKNOWN)
    row[off[L_STEPS]] += 1
