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
from .swapstandard import SwapEager, SwapLazy, SwapMinimal, SwapNDAll, SwapNDSW, SwapStandard
from .twoplanar import TwoPlanar, TwoPlanarDynamic, TwoPlanarStatic

SYSTEMS: dict[str, type[TransitionSystem]] = {
    "archybrid": ArcHybrid,
    "arceager": ArcEager,
    "arcstandard": ArcStandard,
    "swapstandard": SwapStandard,
    "twoplanar": TwoPlanar,
    "archybrid_swap": ArcHybridSwap,
    "covington": Covington,
    "arceager_swap": ArcEagerSwap,
}

ORACLES: dict[str, dict[str, type[Oracle]]] = {
    "archybrid": {"static": ArcHybridStatic, "dynamic": ArcHybridDynamic},
    "arceager": {"static": ArcEagerStatic, "dynamic": ArcEagerDynamic},
    "arcstandard": {"static": ArcStandardStatic, "dynamic": ArcStandardDynamic},
    "swapstandard": {
        "eager": SwapEager,
        "lazy": SwapLazy,
        "minimal": SwapMinimal,
        "ndsw": SwapNDSW,
        "ndall": SwapNDAll,
    },
    "twoplanar": {"static": TwoPlanarStatic, "dynamic": TwoPlanarDynamic},
    "archybrid_swap": {"static": ArcHybridSwapStatic, "static_dynamic": ArcHybridSwapDynamic},
    "covington": {"static": CovingtonStatic, "dynamic": CovingtonDynamic},
    "arceager_swap": {"eager": ArcEagerSwapEager, "lazy": ArcEagerSwapLazy},
}


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
