"""Transition systems and their oracles, by configuration name."""

from __future__ import annotations

import inspect
from typing import Any

from .arceager import ArcEager, ArcEagerDynamic, ArcEagerStatic
from .arceager_swap import ArcEagerSwap, ArcEagerSwapEager, ArcEagerSwapLazy
from .archybrid import ArcHybrid, ArcHybridDynamic, ArcHybridStatic
from .archybrid_swap import ArcHybridSwap, ArcHybridSwapDynamic, ArcHybridSwapStatic
from .arcstandard import ArcStandard, ArcStandardDynamic, ArcStandardStatic
from .covington import Covington, CovingtonDynamic, CovingtonStatic
from .base import NONE, Config, CostOracle, Gold, Oracle, StaticOracle, TransitionSystem
from .declaration import OracleDeclaration, SystemDeclaration
from . import kernels
from .kernels import dispatch, oracles  # noqa: F401  (they import every kernel module)
from .swapstandard import SwapEager, SwapLazy, SwapMinimal, SwapNDAll, SwapNDSW, SwapStandard
from .twoplanar import TwoPlanar, TwoPlanarDynamic, TwoPlanarStatic

Od = OracleDeclaration
# The package's systems, one declaration each (name, Python class, kernel module, oracles with
# their compiled twins): the registries below follow from them, and tests/test_registry.py checks
# the hand-written dispatch tables (kernels/dispatch.py, kernels/oracles.py) against them.
DECLARATIONS: tuple[SystemDeclaration, ...] = (
    SystemDeclaration("archybrid", ArcHybrid, kernels.archybrid, (
        Od("static", ArcHybridStatic, kernels.archybrid_oracle.static),
        Od("dynamic", ArcHybridDynamic, kernels.archybrid_oracle.dynamic),
    )),
    SystemDeclaration("arceager", ArcEager, kernels.arceager, (
        Od("static", ArcEagerStatic, kernels.arceager_oracle.static),
        Od("dynamic", ArcEagerDynamic, kernels.arceager_oracle.dynamic),
    )),
    SystemDeclaration("arcstandard", ArcStandard, kernels.arcstandard, (
        Od("static", ArcStandardStatic, kernels.arcstandard_oracle.static),
        Od("dynamic", ArcStandardDynamic, kernels.arcstandard_oracle.dynamic),
    )),
    SystemDeclaration("swapstandard", SwapStandard, kernels.swapstandard, (
        Od("eager", SwapEager, kernels.swapstandard_oracle.eager),
        Od("lazy", SwapLazy, kernels.swapstandard_oracle.lazy),
        Od("minimal", SwapMinimal, kernels.gold.replay),
        Od("ndsw", SwapNDSW, kernels.swapstandard_oracle.ndsw),
        Od("ndall", SwapNDAll, kernels.swapstandard_oracle.ndall),
    )),
    SystemDeclaration("twoplanar", TwoPlanar, kernels.twoplanar, (
        Od("static", TwoPlanarStatic, kernels.gold.replay),
        Od("dynamic", TwoPlanarDynamic, kernels.twoplanar_oracle.dynamic),
    )),
    SystemDeclaration("archybrid_swap", ArcHybridSwap, kernels.archybrid_swap, (
        Od("static", ArcHybridSwapStatic, kernels.archybrid_swap_oracle.static),
        Od("static_dynamic", ArcHybridSwapDynamic, kernels.archybrid_swap_oracle.static_dynamic,
          kernels.archybrid_swap_oracle.may_explore),
    )),
    SystemDeclaration("covington", Covington, kernels.covington, (
        Od("static", CovingtonStatic, kernels.covington_oracle.static),
        Od("dynamic", CovingtonDynamic, kernels.covington_oracle.dynamic),
    )),
    SystemDeclaration("arceager_swap", ArcEagerSwap, kernels.arceager_swap, (
        Od("eager", ArcEagerSwapEager, kernels.arceager_swap_oracle.eager),
        Od("lazy", ArcEagerSwapLazy, kernels.arceager_swap_oracle.lazy),
    )),
)  # fmt: skip

SYSTEMS: dict[str, type[TransitionSystem]] = {d.name: d.cls for d in DECLARATIONS}
ORACLES: dict[str, dict[str, type[Oracle]]] = {d.name: {o.name: o.cls for o in d.oracles} for d in DECLARATIONS}


def make_system(name: str, **options: Any) -> TransitionSystem:
    if name not in SYSTEMS:
        raise ValueError(f"unknown transition system {name!r}; choose one of {sorted(SYSTEMS)}")
    return SYSTEMS[name](**options)


def make_oracle(system: TransitionSystem, name: str, **options: Any) -> Oracle:
    choices = ORACLES.get(system.name, {})
    if name not in choices:
        raise ValueError(f"system {system.name!r} has no oracle {name!r}; choose one of {sorted(choices)}")
    cls = choices[name]
    params = dict(list(inspect.signature(cls.__init__).parameters.items())[2:])  # after self, system
    for key, value in options.items():
        if key not in params:
            known = ", ".join(params) or "none"
            raise ValueError(f"oracle.{key}: not an option of {system.name}'s {name} oracle (its options: {known})")
        default = params[key].default
        if isinstance(default, (bool, int, float)) and not isinstance(value, type(default)):
            if not (isinstance(default, float) and isinstance(value, int) and not isinstance(value, bool)):
                raise ValueError(f"oracle.{key}={value}: expected a {type(default).__name__}")
    return cls(system, **options)


__all__ = [
    "DECLARATIONS",
    "NONE",
    "ORACLES",
    "SYSTEMS",
    "Config",
    "CostOracle",
    "Gold",
    "Oracle",
    "StaticOracle",
    "TransitionSystem",
    "make_oracle",
    "make_system",
]
