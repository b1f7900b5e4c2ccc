"""UD treebanks by name: ``<code>-ud-{train,dev,test}.conllu`` under a UD root folder.

``conf/data/ud.yaml`` names a treebank by its code (``data.treebank=el_gdt``) and a root folder
(``data.ud_root``, or the ``UD_ROOT`` environment variable), as UDPipe and Stanza users point
their tools at a UD release. The files are found in the official release layout
(``UD_Greek-GDT/el_gdt-ud-train.conllu``), in a folder named for the code
(``el_gdt/el_gdt-ud-train.conllu``, as ``data/ud`` in this repository) or flat
(``el_gdt-ud-train.conllu``). The config's ``${ud:...}`` interpolations call ``treebank_file``
when Hydra resolves the config, so a run's saved config names the files it read.
"""

from __future__ import annotations

from pathlib import Path

from omegaconf import OmegaConf

from ..paths import resolve_path

SPLITS = ("train", "dev", "test")


def layouts(code: str) -> list[str]:
    """Where a treebank's training file may lie under the root, in the order searched."""
    return [f"UD_*/{code}-ud-train.conllu", f"{code}/{code}-ud-train.conllu", f"{code}-ud-train.conllu"]


def find_treebank(root: str | Path | None, code: str) -> dict[str, Path | None]:
    """The train, dev and test files of treebank ``code`` under ``root`` (None for a split the
    treebank does not have); an error names the root and every place searched."""
    if not code:
        raise ValueError("data.treebank is not set: name a UD treebank by its code, for example data.treebank=el_gdt")
    if root is None or str(root) == "":
        raise ValueError(
            f"data.treebank={code}: no UD root folder: set data.ud_root=PATH or the UD_ROOT environment variable "
            "(the folder of a UD release, holding UD_*/<code>-ud-*.conllu)"
        )
    base = resolve_path(root, "data.ud_root")
    if not base.is_dir():
        raise FileNotFoundError(f"data.ud_root={root}: {base} is not a folder")
    for pattern in layouts(code):
        found = sorted(base.glob(pattern))
        if len(found) > 1:
            raise ValueError(f"data.treebank={code}: several copies under {base}: {', '.join(map(str, found))}")
        if found:
            folder = found[0].parent
            files = {s: folder / f"{code}-ud-{s}.conllu" for s in SPLITS}
            return {s: (p if p.is_file() else None) for s, p in files.items()}
    searched = ", ".join(str(base / p) for p in layouts(code))
    raise FileNotFoundError(
        f"data.treebank={code}: no {code}-ud-train.conllu under data.ud_root={base} (searched {searched})"
    )


def treebank_file(code: str, root: str | None, split: str) -> str | None:
    """The ``${ud:code,root,split}`` interpolation: the split's file, as a string (None if absent)."""
    path = find_treebank(root, code)[split]
    return str(path) if path is not None else None


def language(code: str) -> str:
    """The ``${ud_lang:code}`` interpolation: a UD code's language part (``el_gdt`` -> ``el``)."""
    return code.split("_", 1)[0]


def register() -> None:
    """Make the interpolations known to OmegaConf (idempotent)."""
    if not OmegaConf.has_resolver("ud"):
        OmegaConf.register_new_resolver("ud", treebank_file)
    if not OmegaConf.has_resolver("ud_lang"):
        OmegaConf.register_new_resolver("ud_lang", language)
