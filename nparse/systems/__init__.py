"""Transition systems and their oracles, by configuration name."""

from __future__ import annotations

from typing import Any

from .archybrid import ArcHybrid, ArcHybridDynamic, ArcHybridStatic
from .base import NONE, Config, CostOracle, Gold, Oracle, StaticOracle, TransitionSystem

SYSTEMS: dict[str, type[TransitionSystem]] = {
    "archybrid": ArcHybrid,
}

ORACLES: dict[str, dict[str, type[Oracle]]] = {
    "archybrid": {"static": ArcHybridStatic, "dynamic": ArcHybridDynamic},
}


def make_system(name: str, **options: Any) -> TransitionSystem:
    if name not in SYSTEMS:
        raise ValueError(f"unknown transition system {name!r}; choose one of {sorted(SYSTEMS)}")
    return SYSTEMS[name](**options)


def make_oracle(system: TransitionSystem, name: str, **options: Any) -> Oracle:
    choices = ORACLES.get(system.name, {})
    if name not in choices:
        raise ValueError(f"system {system.name!r} has no oracle {name!r}; choose one of {sorted(choices)}")
    return choices[name](system, **options)


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
