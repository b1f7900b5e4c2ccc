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
from nparse.systems.verify.verification import lockstep
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
    options = {("twoplanar", "dynamic"): [{"switch_regularization": True}, {"switch_regularization": False},
                                          {"plane_agnostic": True}, {"plane_agnostic": True, "prefer_canonical": False}],
               ("archybrid_swap", "static"): [{"lazy": False}, {"lazy": True}],
               ("archybrid", "dynamic"): [{}, {"exact_nonprojective": True}],
               ("arceager", "dynamic"): [{}, {"exact_nonprojective": True}]}  # fmt: skip
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


def random_trees(rng: random.Random, count: int, most: int) -> list[list[int]]:
    """Random trees of 2 to ``most`` words (projective or not, 2-planar or not)."""
    out = []
    for _ in range(count):
        n = rng.randint(2, most)
        order = rng.sample(range(1, n + 1), n)
        heads, placed = [-1] * (n + 1), [0]
        for w in order:
            heads[w] = rng.choice(placed)
            placed.append(w)
        out.append(heads)
    return out


@pytest.mark.parametrize("regularize", [True, False])
def test_the_fast_twoplanar_costs_equal_the_literal_loss_far_off_the_gold_path(regularize):
    """The compiled 2-Planar costs derive each transition's loss from the configuration's own
    (``fast_costs``); the Python oracle computes it literally (``costs``). Random trees walked
    with mostly random transitions reach the wrong arcs and cycles treebank walks rarely do."""
    system = make_system("twoplanar")
    o = make_oracle(system, "dynamic", switch_regularization=regularize)
    rng = random.Random(11)
    result = lockstep(system, o, random_trees(rng, 600, 9), rng, 0.9)
    assert result.configurations > 5000
    assert not result.mismatches, result.mismatches


def declared_cases() -> list[tuple[str, str, str]]:
    """(system, oracle, field) for every optional gold field an oracle declares."""
    out = []
    for name in SYSTEMS:
        for oracle in ORACLES[name]:
            cls = type(make_oracle(make_system(name), oracle))
            out += [(name, oracle, f) for f in cls.gold_fields]
    return out


@pytest.mark.parametrize("name,oracle,field", declared_cases(), ids=["-".join(c) for c in declared_cases()])
def test_every_declared_gold_field_is_read(name, oracle, field):
    """An oracle that forgot a field would read zeros: the treebank walks see each declared field
    matter (without it, some option of the oracle disagrees with the reference), so they would
    catch a forgotten one the same way (``tools/check_oracles.py --rows`` walks the whole files)."""
    trees = [t for code in ("en_ewt", "el_gdt", "hu_szeged") for t in TREEBANK[code] if len(t) <= 41]
    trees += [t for t in treebank_trees(every=1)["hu_szeged"] if len(t) <= 41]
    found = False
    for v_name, root, v_oracle, options in VARIANTS:
        if (v_name, v_oracle) != (name, oracle) or found:
            continue
        o = make_oracle(make_system(name, **root), oracle, **options)
        o.gold_fields = tuple(f for f in o.gold_fields if f != field)
        found = bool(lockstep(o.system, o, trees, random.Random(3), 0.3).mismatches)
    assert found, f"{name} {oracle}: no walk needs gold field {field!r}"
