"""Every registered transition system and oracle is complete: a compiled kernel, a config, a
verification entry; a system added in its own module fails here until it is wired in."""

from __future__ import annotations

import numpy as np
import pytest

from nparse.paths import CONF_DIR
from nparse.systems import ORACLES, SYSTEMS, StaticOracle, make_system
from nparse.systems.adapters.arrays import KERNELS, Layout
from nparse.systems.verify.verification import VERIFICATIONS


@pytest.mark.parametrize("name", sorted(SYSTEMS))
def test_every_system_has_a_kernel_and_a_config(name):
    system = make_system(name)
    assert system.code in KERNELS, f"{name}: no module in systems/kernels/ with CODE = {system.code}"
    assert KERNELS[system.code].__name__.endswith("." + name), "the kernel module is named after its system"
    states = Layout(system, 4).initial(np.array([3]))
    assert states.shape == (1, Layout(system, 4).row_width)
    assert (CONF_DIR / "system" / f"{name}.yaml").exists(), f"conf/system/{name}.yaml is missing"


@pytest.mark.parametrize("name", sorted(SYSTEMS))
def test_legal_flags_are_named_one_per_action(name):
    system = make_system(name)
    c = system.initial(3)
    flags = system.legal(c)
    assert len(flags) == len(system.actions) and list(system.named(flags)) == list(system.actions)
    assert flags[system.action_index("SHIFT")], "SHIFT starts every system's parse"
    with pytest.raises(TypeError, match="expected the actions"):
        system.flags(**{a: True for a in system.actions[:-1]}, UNKNOWN=True)


def test_kernel_codes_are_distinct():
    codes = [cls.code for cls in SYSTEMS.values()]
    assert len(codes) == len(set(codes)) == len(KERNELS)


@pytest.mark.parametrize("system,oracle", [(s, o) for s, names in sorted(ORACLES.items()) for o in sorted(names)])
def test_every_oracle_has_a_config_and_a_verification(system, oracle):
    assert (CONF_DIR / "oracle" / f"{oracle}.yaml").exists(), f"conf/oracle/{oracle}.yaml is missing"
    entries = [v for v in VERIFICATIONS if (v.system, v.oracle) == (system, oracle)]
    assert len([v for v in entries if not v.variant]) == 1, (
        f"{system} {oracle}: declare how it is verified in systems/verify/verification.py"
    )
    assert len({v.label for v in entries}) == len(entries), "a second check of one oracle names its variant"


def test_every_verification_names_a_registered_oracle():
    for v in VERIFICATIONS:
        assert v.oracle in ORACLES[v.system], v.label
        system, oracle = v.make()
        assert (v.reference is None) == isinstance(oracle, StaticOracle), v.label


def test_every_system_has_a_preset():
    presets = {p.stem: p.read_text() for p in (CONF_DIR / "exp").glob("*.yaml")}
    for name in SYSTEMS:
        assert any(f"override /system: {name}\n" in text for text in presets.values()), f"no conf/exp preset for {name}"


def test_oracle_options_are_checked_against_the_constructor():
    """The oracle group has no schema: its keys are checked against the oracle's signature."""
    from nparse.systems import make_oracle, make_system

    system = make_system("twoplanar")
    assert make_oracle(system, "dynamic", switch_regularization=False).switch_regularization is False
    with pytest.raises(
        ValueError,
        match=r"oracle.switch_reg: not an option of twoplanar's dynamic oracle \(its options: switch_regularization, plane_agnostic, prefer_canonical\)",
    ):
        make_oracle(system, "dynamic", switch_reg=True)
    with pytest.raises(ValueError, match="oracle.switch_regularization=yes: expected a bool"):
        make_oracle(system, "dynamic", switch_regularization="yes")


def test_dispatchers_refuse_an_unknown_code():
    """A code no kernel has (a system or oracle added without its line in the dispatchers) is an
    error in every dispatcher, not a fall-through to another system's kernel or to a replay."""
    from nparse.systems.kernels import dispatch, oracles

    layout = Layout(make_system("archybrid"), 4)
    row = layout.initial(np.array([3]))[0]
    off, root_end, unknown = layout.offsets, layout.root_end, max(KERNELS) + 1
    flags = np.zeros(layout.n_actions, dtype=np.bool_)
    positions = np.zeros(16, dtype=np.int64)
    calls = {
        "initial_one": lambda: dispatch.initial_one(row, off, unknown, root_end, 3),
        "terminal_row": lambda: dispatch.terminal_row(row, off, unknown, root_end),
        "legal_row": lambda: dispatch.legal_row(row, off, unknown, root_end, flags),
        "positions_row": lambda: dispatch.positions_row(row, off, unknown, positions),
        "apply_one": lambda: dispatch.apply_one(row, off, unknown, 0),
    }
    falls_through = []
    for name, call in calls.items():
        try:
            call()
        except ValueError as err:
            assert "unknown transition system code" in str(err)
            continue
        falls_through.append(name)
    assert not falls_through, f"these dispatchers accept an unknown code: {falls_through}"
    gold = np.zeros((8, 4), dtype=np.int64)
    cost = np.zeros(layout.n_actions, dtype=np.int64)
    with pytest.raises(ValueError, match="unknown oracle code"):
        oracles.oracle_row(99, row, off, root_end, 0, gold, np.zeros(0, dtype=np.int64), flags, cost, flags.copy())


def test_the_kernels_import_nothing_from_the_python_systems():
    """kernels/ is the foundation the reference systems and the adapters build on: an import of
    the package above (``from ..base import NONE`` was one) would make them one import circle."""
    import ast
    from pathlib import Path

    import nparse.systems.kernels as kernels

    for path in sorted(Path(kernels.__file__).parent.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                assert node.level <= 1, f"{path.name}:{node.lineno} imports from the package above"
                assert not (node.module or "").startswith("nparse"), f"{path.name}:{node.lineno} imports {node.module}"


def dispatch_branches(module, function: str) -> dict[str, set[str]]:
    """``{code constant: {called "module.function"}}`` of one hand-written dispatcher: each
    ``if/elif code == X.CODE`` (or ``== NAME``) branch and the calls in its body."""
    import ast
    import inspect

    tree = ast.parse(inspect.getsource(module))
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == function)
    out: dict[str, set[str]] = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Compare):
            key = ast.unparse(node.test.comparators[0])
            calls = {ast.unparse(c.func) for stmt in node.body for c in ast.walk(stmt) if isinstance(c, ast.Call)}
            out[key] = calls
    return out


def called(fn) -> str:
    """How a dispatcher calls a compiled function: ``module.function`` (its module's last part)."""
    return f"{fn.py_func.__module__.rsplit('.', 1)[1]}.{fn.py_func.__name__}"


def calls_object(module, calls: set[str], fn) -> bool:
    """Whether one of a branch's calls (names in ``module``'s namespace, ``a.b``) is ``fn``."""
    for call in calls:
        obj = module
        for part in call.split("."):
            obj = getattr(obj, part, None)
        if obj is fn:
            return True
    return False


def test_the_registries_follow_from_the_declarations():
    from nparse.systems import DECLARATIONS

    assert {d.name: d.cls for d in DECLARATIONS} == SYSTEMS
    assert {d.name: {o.name: o.cls for o in d.oracles} for d in DECLARATIONS} == ORACLES
    assert {d.kernel.CODE: d.kernel for d in DECLARATIONS} == KERNELS
    for d in DECLARATIONS:
        assert (d.cls.code, tuple(d.cls.actions)) == (d.kernel.CODE, tuple(d.kernel.ACTIONS)), d.name


@pytest.mark.parametrize("function", ["initial_one", "terminal_row", "legal_row", "positions_row", "apply_one"])
def test_every_system_dispatcher_calls_each_systems_own_kernel(function):
    """kernels/dispatch.py is a table kept by hand: every declared system's branch in each of the
    five dispatchers calls that system's own kernel function, and no branch is missing or extra."""
    from nparse.systems import DECLARATIONS
    from nparse.systems.kernels import dispatch

    branches = dispatch_branches(dispatch, function)
    kind = function.split("_")[0] if function != "apply_one" else "apply"
    wanted = {f"{d.kernel.__name__.rsplit('.', 1)[1]}.CODE": called(getattr(d.kernel, kind)) for d in DECLARATIONS}
    assert set(branches) == set(wanted), f"{function}: branches {sorted(branches)} against systems {sorted(wanted)}"
    for code, call in wanted.items():
        assert call in branches[code], f"{function}: the branch of {code} does not call {call}"


def test_every_oracle_branch_calls_its_declared_twin():
    """kernels/oracles.py: every declared oracle's ``row_code`` has a branch in ``oracle_row``
    that calls its declared compiled twin; codes are distinct but for the replayed sequence; an
    oracle overriding ``may_explore`` declares its kernel, and ``may_explore_row`` calls it."""
    from nparse.systems import DECLARATIONS, Oracle
    from nparse.systems.kernels import oracles

    branches = {getattr(oracles, name): calls for name, calls in dispatch_branches(oracles, "oracle_row").items()}
    explore = {getattr(oracles, name): calls for name, calls in dispatch_branches(oracles, "may_explore_row").items()}
    seen: dict[int, str] = {}
    for d in DECLARATIONS:
        for o in d.oracles:
            code = o.cls.row_code
            assert code in branches, f"{d.name} {o.name}: code {code} has no branch in oracle_row"
            assert calls_object(oracles, branches[code], o.kernel), (
                f"{d.name} {o.name}: oracle_row does not call {called(o.kernel)}"
            )
            if code != oracles.REPLAY:
                assert code not in seen, f"{d.name} {o.name} shares code {code} with {seen.get(code)}"
                seen[code] = f"{d.name} {o.name}"
            overrides = o.cls.may_explore is not Oracle.may_explore
            assert overrides == (o.may_explore is not None), f"{d.name} {o.name}: declare its may_explore kernel"
            if overrides:
                assert called(o.may_explore) in explore.get(code, set()), (
                    f"{d.name} {o.name}: no may_explore_row branch"
                )
    assert set(branches) == set(seen) | {oracles.REPLAY}, "a branch of oracle_row serves no declared oracle"


def test_a_kernel_module_without_a_function_is_named():
    """A system kernel that lacks one of the five functions fails when the table is built,
    naming the system and the function."""
    import types

    from nparse.systems.kernels import archybrid
    from nparse.systems.kernels.dispatch import checked

    partial = types.ModuleType("nparse.systems.kernels.toy")
    for attr in ("CODE", "ACTIONS", "initial", "terminal", "positions", "apply"):
        setattr(partial, attr, getattr(archybrid, attr))
    with pytest.raises(TypeError, match="system 'toy': its kernel module nparse.systems.kernels.toy has no 'legal'"):
        checked(partial)
    assert checked(archybrid) is archybrid
