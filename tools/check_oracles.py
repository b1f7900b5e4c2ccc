"""Exhaustive oracle checks at sizes the test suite cannot afford, and the 2-Planar report.

    python tools/check_oracles.py [--system NAME] [--all-up-to N] [--random-up-to M] [--per-size K]
                                  [--every K] [--skip-trees K]
    python tools/check_oracles.py --planar-agnostic [--all-up-to N]
    python tools/check_oracles.py --beam [--system NAME] [--all-up-to N] [--random-up-to M] [--per-size K]
    python tools/check_oracles.py --rows [--system NAME]

The first form compares every dynamic and non-deterministic oracle (or one system's) with
exhaustive search, as tests/test_oracles.py does, on every tree up to N words and K random trees
of each size up to M. The second reports how often the 2-Planar dynamic oracle's zero-cost set
differs from the plane-agnostic one (minimum Hamming loss over every plane assignment) on
configurations reached by random transitions. The third checks the *correct* marks of beam items
in global training against exhaustive search (nparse/training/beam_check.py) for every oracle,
as tests/test_global.py does at smaller sizes. The fourth walks every system with every oracle
over the whole of EWT dev, Greek-GDT dev and the non-projective Hungarian-Szeged dev sentences,
along gold paths and explored paths, comparing the compiled oracles on rows with the Python
references at every step (tests/test_row_oracles.py walks a slice).
"""

from __future__ import annotations

import argparse
import itertools
import random
import time

from nparse.systems import make_oracle, make_system, twoplanar
from nparse.systems.verify.search import check_oracle, random_walk, small_trees
from nparse.systems.verify.verification import VERIFICATIONS
from nparse.training import beam_check


def check(args) -> None:
    """Every non-static oracle of the registry (nparse/systems/verify/verification.py) against its search."""
    rng = random.Random(args.seed)
    for case in VERIFICATIONS:
        if case.reference is None or (args.system and not case.label.startswith(args.system)):
            continue
        system, oracle = case.make()
        start = time.perf_counter()
        trees = small_trees(args.all_up_to, args.random_up_to, args.per_size, rng, case.keeps)
        for _ in itertools.islice(trees, args.skip_trees):
            pass
        result: dict = {}
        bad: list = []
        while True:  # the trees stay a lazy stream (the walks draw from the same rng as before)
            taken = list(itertools.islice(trees, args.every)) if args.every else None
            chunk = taken if taken is not None else trees
            part = check_oracle(
                system, oracle, chunk, rng,
                lambda heads, gold, case=case, system=system: case.reference(system, gold), walks=args.walks,
                along_correct=case.walk == "correct", restrict_walk=case.restrict_walk, exact_costs=case.exact_costs,
            )  # fmt: skip
            bad += part.pop("mismatches")
            result = {k: result.get(k, 0) + v for k, v in part.items()}
            status = "OK" if not bad else f"{len(bad)}+ MISMATCHES, first: {bad[0]}"
            print(f"{case.label}: {result} {status} ({time.perf_counter() - start:.0f} s)", flush=True)
            if taken is None or len(taken) < args.every:
                break


def planar_agnostic(args) -> None:
    """How often the canonical-assignment oracle disagrees with the plane-agnostic optimum.

    Counted separately on configurations reached by the oracle's own correct transitions (what
    training sees without exploration) and by random ones. A disagreement is either harmless
    (every transition the oracle calls correct is optimal, it only misses others) or not (it
    calls a transition correct that loses an arc under the best plane assignment).
    """
    rng = random.Random(args.seed)
    system = make_system("twoplanar")
    oracle = make_oracle(system, "dynamic", switch_regularization=False)
    counts = {walk: [0, 0, 0] for walk in ("correct", "random")}  # configurations, differ, harmful
    trees = 0
    for heads in small_trees(args.all_up_to, args.random_up_to, args.per_size, rng, twoplanar.is_two_planar):
        gold = oracle.prepare(heads)
        agnostic = twoplanar.reference_search(system, gold, plane_agnostic=True)
        trees += 1
        follow = lambda c, options: [a for a in options if oracle.correct(c, gold)[a]]  # noqa: E731, B023
        for walk, choose in (("correct", follow), ("random", None)):
            for _ in range(args.walks):
                for c in random_walk(system, gold.n, rng, choose):
                    moves = agnostic.moves(c)
                    costs = {a: agnostic.cost(c, a) for a in moves}
                    best = {a for a in moves if costs[a] == min(costs.values())}
                    flags = oracle.correct(c, gold)
                    said = {a for a in moves if flags[a]}
                    row = counts[walk]
                    row[0] += 1
                    row[1] += said != best
                    row[2] += not said <= best
    print(f"2-Planar dynamic oracle (canonical planes) vs plane-agnostic minimum, {trees} trees:")
    for walk, (total, differ, harmful) in counts.items():
        print(
            f"  {walk} walks: {total} configurations, zero-cost set differs in {differ} "
            f"({100 * differ / max(total, 1):.1f}%), a non-optimal transition called correct in {harmful} "
            f"({100 * harmful / max(total, 1):.1f}%)"
        )


def beam(args) -> None:
    """The correct marks of beam items, every oracle, every tree up to N words."""
    for case in beam_check.CASES:
        label = case.label
        if args.system and not label.startswith(args.system):
            continue
        start = time.perf_counter()
        sizes = {n: args.per_size for n in range(args.all_up_to + 1, args.random_up_to + 1)}
        trees, checked, bad = beam_check.check_case(case, args.all_up_to, sizes, args.seed)
        status = "OK" if not bad else f"{len(bad)}+ MISMATCHES, first: {bad[0]}"
        print(
            f"beam {label}: {trees} trees, {checked} items {status} ({time.perf_counter() - start:.0f} s)", flush=True
        )


def rows(args) -> None:
    """The compiled oracles against the Python ones on whole treebank dev sets (``lockstep``)."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from tests.test_row_oracles import treebank_trees, variants
    from nparse.systems.verify.verification import lockstep

    trees = [t for code, ts in treebank_trees().items() for t in ts]
    for name, root, oracle_name, options in variants():
        if args.system and not name.startswith(args.system):
            continue
        system = make_system(name, **root)
        oracle = make_oracle(system, oracle_name, **options)
        start = time.perf_counter()
        for explore_p in (0.0, 0.3):
            result = lockstep(system, oracle, trees, random.Random(args.seed), explore_p)
            path = "gold paths" if explore_p == 0 else "explored paths"
            status = "OK" if not result.mismatches else f"MISMATCHES, first: {result.mismatches[0]}"
            print(f"{name} {root} {oracle_name} {options} on {path}: {result.configurations} configurations, "
                  f"{result.skipped} skipped, {status} ({time.perf_counter() - start:.0f} s)", flush=True)  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--system", help="only cases whose label starts with this (e.g. twoplanar)")
    ap.add_argument("--all-up-to", type=int, default=6)
    ap.add_argument("--random-up-to", type=int, default=8)
    ap.add_argument("--per-size", type=int, default=200)
    ap.add_argument("--walks", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--every", type=int, default=0, help="print the running counts every K trees")
    ap.add_argument("--skip-trees", type=int, default=0, help="start after the first K trees (resume a long run)")
    ap.add_argument("--planar-agnostic", action="store_true")
    ap.add_argument("--beam", action="store_true", help="check the correct marks of beam items instead")
    ap.add_argument(
        "--rows", action="store_true", help="the compiled oracles against the Python ones on treebank sentences"
    )
    args = ap.parse_args()
    if args.rows:
        rows(args)
        return
    if args.beam:
        beam(args)
    else:
        planar_agnostic(args) if args.planar_agnostic else check(args)


if __name__ == "__main__":
    main()
