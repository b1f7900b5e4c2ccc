"""What declares a transition system: its name, its Python reference class, its compiled kernel
module, and its oracles with their Python classes and compiled twins. The package's own systems
are declared in ``systems/__init__.py`` (the registries follow from the declarations, and tests
check the hand-written dispatch tables against them); a system of your own is given to
``declare.declare``."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from .base import Oracle, TransitionSystem


@dataclass(frozen=True)
class OracleDeclaration:
    """An oracle: its name, its Python class (the reference) and its compiled twin
    ``kernel(row, off, root_end, opt, gold, seq, legal, cost, out)``; ``may_explore(row, off,
    gold, action)`` where the class overrides ``Oracle.may_explore``."""

    name: str
    cls: type[Oracle]
    kernel: Any
    may_explore: Any = None


@dataclass(frozen=True)
class SystemDeclaration:
    """A transition system: its name, its Python class, its kernel module and its oracles."""

    name: str
    cls: type[TransitionSystem]
    kernel: ModuleType
    oracles: tuple[OracleDeclaration, ...] = field(default_factory=tuple)
