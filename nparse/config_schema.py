"""Hydra structured configs for the groups of ``conf/``: the dataclasses of ``config.py``.

Each group's yaml files name their group's ``schema`` first in their defaults list, so Hydra
checks every value and every command-line override against these types when it composes the
config: ``trainer.epochs=abc`` or ``model.dropout=high`` stop before anything runs, with the key
named, and ``trainer.lr=1`` arrives as a float. The ``oracle`` group has no schema (its keys are
the chosen oracle's options). Rules that relate several keys live in ``training/settings.py``.
Import this module before composing (``nparse.train``, tools and tests do): importing it
registers the schemas and the ``${ud:...}`` interpolations of UD treebanks by name.
"""

from __future__ import annotations

from hydra.core.config_store import ConfigStore

from .config import SCHEMAS
from .io import treebanks


def register() -> None:
    """Store every group's schema as ``<group>/schema`` (idempotent)."""
    store = ConfigStore.instance()
    for group, node in SCHEMAS.items():
        store.store(group=group, name="schema", node=node)
    treebanks.register()  # the ${ud:...} interpolations of conf/data/ud.yaml


register()
