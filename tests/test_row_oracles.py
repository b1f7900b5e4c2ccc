"""Every oracle's compiled twin (``systems/kernels/oracles.py``) gives the Python reference's
correct sets, costs and ``may_explore`` at every step of walks over real treebank sentences:
EWT dev, Greek-GDT dev and the non-projective sentences of Hungarian-Szeged dev (their trees are
in tests/data/ud_trees.tsv), along gold paths and along explored paths. The suite walks a slice
of each; ``python tools/check_oracles.py --rows`` walks them whole."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from nparse.io.conllu import read_conllu
from nparse.systems import ORACLES, SYSTEMS, make_oracle, make_system
from nparse.systems.verification import lockstep
from nparse.paths import PROJECT_ROOT

TREES = Path(__file__).parent / "data" / "ud_trees.tsv"


def treebank_trees(every: int = 1) -> dict[str, list[list[int]]]:
    """Heads of EWT dev, Greek-GDT dev and the non-projective Hungarian-Szeged dev sentences."""
    out: dict[str, list[list[int]]] = {"en_ewt": [], "el_gdt": [], "hu_szeged": []}
    ewt = PROJECT_ROOT / "data" / "ud" / "en_ewt" / "en_ewt-ud-dev.conllu"
    out["en_ewt"] = [list(s.heads) for s in read_conllu(ewt)]
    for line in TREES.read_text().splitlines():
        if line.startswith("#"):
            continue
        code, _, heads = line.split("\t")
        out[code].append([-1] + [int(h) for h in heads.split()])
    return {code: trees[::every] for code, trees in out.items()}


def variants() -> list[tuple[str, dict, str, dict]]:
    """Every system (each root placement) with every oracle (each option that changes it)."""
    options = {("twoplanar", "dynamic"): [{"switch_regularization": True}, {"switch_regularization": False}],
               ("archybrid_swap", "static"): [{"lazy": False}, {"lazy": True}]}  # fmt: skip
    out = []
    for name, cls in SYSTEMS.items():
        for root in cls.roots:
            for oracle in ORACLES[name]:
                for opts in options.get((name, oracle), [{}]):
                    out.append((name, {"root": root} if len(cls.roots) > 1 else {}, oracle, opts))
    return out


VARIANTS = variants()
TREEBANK = treebank_trees(every=12)


@pytest.mark.parametrize("name,root,oracle,options", VARIANTS, ids=[f"{v[0]}-{v[2]}-{v[1]}{v[3]}" for v in VARIANTS])
def test_compiled_oracles_agree_with_the_reference_on_treebank_sentences(name, root, oracle, options):
    system = make_system(name, **root)
    o = make_oracle(system, oracle, **options)
    trees = [t for code in ("en_ewt", "el_gdt", "hu_szeged") for t in TREEBANK[code] if len(t) <= 41]
    rng = random.Random(3)
    for explore_p in (0.0, 0.3):
        result = lockstep(system, o, trees, rng, explore_p)
        assert result.configurations > 1000
        assert not result.mismatches, result.mismatches
