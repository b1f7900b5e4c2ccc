"""Adding a transition system from outside the package, by one declaration.

A ``SystemDeclaration`` names the system, its Python reference class, its kernel module (``CODE``,
``ACTIONS`` and the five row functions of ``kernels/__init__.py``) and its oracles, each with its
Python class and its compiled twin. ``declare`` checks it (a missing kernel function is named),
adds it to the registries (``SYSTEMS``, ``ORACLES``, ``KERNELS``), gives each oracle its code,
and extends the compiled dispatch: the dispatchers are generated again with a branch for the
new system and its oracles in front of the package's own (``kernels/dispatch.py``,
``kernels/oracles.py``), and every compiled function that calls them, directly or through
another, is compiled again in this process (numba binds a called function when it compiles the
caller). The package's own systems keep their cached, hand-written dispatch; a declared system
costs its process one compilation of the drivers (tens of seconds), nothing on disk.
"""

from __future__ import annotations

import sys
from typing import Any

from numba import njit
from numba.core.registry import CPUDispatcher

from . import ORACLES, SYSTEMS
from .declaration import OracleDeclaration, SystemDeclaration
from .kernels import dispatch, oracles
from .kernels.dispatch import KERNELS, checked

DISPATCHERS = ("initial_one", "terminal_row", "legal_row", "positions_row", "apply_one")
ORACLE_DISPATCHERS = ("oracle_row", "may_explore_row")


DECLARED: list[SystemDeclaration] = []  # the systems declared in this process, in order
# The package's own dispatchers (hand-written, cached): the generated ones fall back on them.
BUILTIN: dict[str, CPUDispatcher] = {
    **{n: getattr(dispatch, n) for n in DISPATCHERS},
    **{n: getattr(oracles, n) for n in ORACLE_DISPATCHERS},
}


def declare(decl: SystemDeclaration) -> None:
    """Register a system and its oracles and extend the compiled dispatch with them."""
    checked(decl.kernel, decl.name)  # names the system and a missing kernel function
    for o in decl.oracles:
        if not isinstance(o.kernel, CPUDispatcher):
            raise TypeError(f"system {decl.name!r}: oracle {o.name!r} has no compiled kernel (a numba njit function)")
    if decl.name in SYSTEMS:
        raise ValueError(f"system {decl.name!r} is registered already")
    if decl.kernel.CODE in KERNELS:
        raise ValueError(
            f"system {decl.name!r}: kernel CODE {decl.kernel.CODE} is {KERNELS[decl.kernel.CODE].__name__}'s"
        )
    if decl.cls.code != decl.kernel.CODE or tuple(decl.cls.actions) != tuple(decl.kernel.ACTIONS):
        raise ValueError(f"system {decl.name!r}: its class's code and actions are not its kernel's CODE and ACTIONS")
    taken = {cls.row_code for names in ORACLES.values() for cls in names.values()} | {oracles.REPLAY}
    for o in decl.oracles:
        o.cls.row_code = max(taken) + 1
        taken.add(o.cls.row_code)
    SYSTEMS[decl.name] = decl.cls
    ORACLES[decl.name] = {o.name: o.cls for o in decl.oracles}
    KERNELS[decl.kernel.CODE] = decl.kernel
    DECLARED.append(decl)
    rebind(generated_dispatch(DECLARED))


def generated_dispatch(declared: list[SystemDeclaration]) -> dict[str, Any]:
    """The seven dispatchers with a branch per declared system and oracle, the package's own
    dispatchers behind them."""
    names: dict[str, Any] = {"L_STEPS": dispatch.L_STEPS}
    names.update({f"builtin_{n}": f for n, f in BUILTIN.items()})  # the package's own, cached
    lines: dict[str, list[str]] = {n: [] for n in DISPATCHERS + ORACLE_DISPATCHERS}
    for i, d in enumerate(declared):
        for f in dispatch.FUNCTIONS:
            names[f"s{i}_{f}"] = getattr(d.kernel, f)
        c = d.kernel.CODE
        lines["initial_one"].append(f"    if code == {c}:\n        s{i}_initial(row, off, root_end, n)\n        return")
        lines["terminal_row"].append(f"    if code == {c}:\n        return s{i}_terminal(row, off, root_end)")
        lines["legal_row"].append(
            f"    if code == {c}:\n        for a in range(out.shape[0]):\n            out[a] = False\n"
            f"        s{i}_legal(row, off, root_end, out)\n        return"
        )
        lines["positions_row"].append(f"    if code == {c}:\n        s{i}_positions(row, off, out)\n        return")
        lines["apply_one"].append(
            f"    if code == {c}:\n        s{i}_apply(row, off, a)\n        row[off[L_STEPS]] += 1\n        return"
        )
        for j, o in enumerate(d.oracles):
            names[f"o{i}_{j}"] = o.kernel
            oc = o.cls.row_code
            lines["oracle_row"].append(
                f"    if code == {oc}:\n        o{i}_{j}(row, off, root_end, opt, gold, seq, legal, cost, out)\n        return"
            )
            if o.may_explore is not None:
                names[f"e{i}_{j}"] = o.may_explore
                lines["may_explore_row"].append(
                    f"    if code == {oc}:\n        return e{i}_{j}(row, off, gold, action)"
                )
    heads = {
        "initial_one": ("row, off, code, root_end, n", "builtin_initial_one(row, off, code, root_end, n)"),
        "terminal_row": ("row, off, code, root_end", "return builtin_terminal_row(row, off, code, root_end)"),
        "legal_row": ("row, off, code, root_end, out", "builtin_legal_row(row, off, code, root_end, out)"),
        "positions_row": ("row, off, code, out", "builtin_positions_row(row, off, code, out)"),
        "apply_one": ("row, off, code, a", "builtin_apply_one(row, off, code, a)"),
        "oracle_row": (
            "code, row, off, root_end, opt, gold, seq, legal, cost, out",
            "builtin_oracle_row(code, row, off, root_end, opt, gold, seq, legal, cost, out)",
        ),
        "may_explore_row": (
            "code, row, off, gold, action",
            "return builtin_may_explore_row(code, row, off, gold, action)",
        ),
    }
    source = "\n\n".join(
        f"def {n}({args}):\n" + "\n".join(lines[n]) + f"\n    {tail}\n" for n, (args, tail) in heads.items()
    )
    exec(compile(source, "<nparse declared dispatch>", "exec"), names)
    return {n: njit(names[n]) for n in heads}


def rebind(new: dict[str, Any]) -> None:
    """Put the new dispatchers where the package's compiled code and Python code find them, and
    compile again, in this process only, every compiled function of nparse that calls a
    replaced one (by name, to a fixpoint)."""
    modules = [m for name, m in list(sys.modules.items()) if name.startswith("nparse") and m is not None]
    jitted = [
        (m, k, v)
        for m in modules
        for k, v in list(vars(m).items())
        if isinstance(v, CPUDispatcher) and v.py_func.__module__ == m.__name__
    ]
    replaced: dict[int, Any] = {}
    for m in (dispatch, oracles):  # the dispatchers now in place: the package's, or generated before
        for k in new:
            if hasattr(m, k):
                replaced[id(getattr(m, k))] = new[k]
    names = set(new)
    changed = True
    while changed:
        changed = False
        for m, k, v in jitted:
            if id(v) in replaced or not set(v.py_func.__code__.co_names) & names:
                continue
            replaced[id(v)] = njit(v.py_func)  # compiled on first call, with the module's new globals
            names.add(k)
            changed = True
    for m in modules:
        for k, v in list(vars(m).items()):
            if id(v) in replaced:
                setattr(m, k, replaced[id(v)])


__all__ = ["OracleDeclaration", "SystemDeclaration", "declare"]
