"""How often the exact costs on non-projective gold trees change the training targets: along
walks over the non-projective sentences of a training set, the arc-hybrid and arc-eager dynamic
oracles' correct transitions with the Goldberg-Nivre formulas against those with the exact costs
(``oracle.exact_nonprojective``); with ``--systems twoplanar``, over every sentence, the 2-Planar
dynamic oracle's canonical planes against the plane-agnostic costs (``oracle.plane_agnostic``),
both with switch regularization as in training.

    python experiments/nonprojective_targets.py [--data hu_szeged el_gdt] [--explore 0.0 0.3]
                                                [--systems archybrid arceager twoplanar] [--seed 1]

Each walk follows a random correct transition of the exact oracle (``--follow approx``: of the
other one), or with probability
``--explore`` a random legal one (as training with exploration does). At every configuration it
counts whether the two correct sets differ, whether the formulas call a transition correct that
loses more than the least it can (a wrong target), and whether they miss a best one. Every root
placement. Prints one table row per system, treebank, root and exploration rate.
"""

from __future__ import annotations

import argparse
import random

from common import split_sentences, treebank

from nparse.systems import SYSTEMS, make_oracle, make_system
from nparse.trees import is_projective


def walk_counts(
    system, approx, exact, heads: list[int], rng: random.Random, explore: float, follow: str = "exact"
) -> list[int]:
    """[configurations, differing, approx calls a costly move correct, approx misses a best move]."""
    gold_a, gold_e = approx.prepare(heads), exact.prepare(heads)
    c = system.initial(len(heads) - 1)
    counts = [0, 0, 0, 0]
    while not system.terminal(c):
        legal = system.legal(c)
        costs = exact.costs(c, gold_e)
        best = [x == 0 for x in costs]
        said = approx.correct(c, gold_a)
        counts[0] += 1
        counts[1] += said != best
        counts[2] += any(s and not b for s, b in zip(said, best))
        counts[3] += any(b and not s for s, b in zip(said, best))
        moves = [a for a, ok in enumerate(legal) if ok]
        targets = best if follow == "exact" else said
        a = rng.choice(moves) if rng.random() < explore else rng.choice([a for a in moves if targets[a]])
        system.apply(c, a)
    return counts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", nargs="+", default=["hu_szeged", "el_gdt"])
    ap.add_argument("--explore", nargs="+", type=float, default=[0.0, 0.3])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--systems", nargs="+", default=["archybrid", "arceager"])
    ap.add_argument("--follow", choices=["exact", "approx"], default="exact", help="whose correct moves the walks take")
    exact_options = {"twoplanar": {"plane_agnostic": True, "prefer_canonical": False}}  # others: exact_nonprojective
    args = ap.parse_args()
    print("| system | treebank | root | explore | non-projective trees | configurations | targets differ | "
          "a costly move called correct | a best move missed |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|")
    for data in args.data:
        trees = [list(s.heads) for s in split_sentences(treebank(data), "train")]
        nonproj = [h for h in trees if not is_projective(h)]
        for name, root in [(name, root) for name in args.systems for root in SYSTEMS[name].roots]:
            system = make_system(name, root=root)
            approx = make_oracle(system, "dynamic")
            exact = make_oracle(system, "dynamic", **exact_options.get(name, {"exact_nonprojective": True}))
            walked = trees if name == "twoplanar" else nonproj  # plane choices matter on every tree
            for explore in args.explore:
                rng = random.Random(args.seed)
                total = [0, 0, 0, 0]
                for heads in walked:
                    total = [
                        t + x
                        for t, x in zip(total, walk_counts(system, approx, exact, heads, rng, explore, args.follow))
                    ]
                n, diff, costly, missed = total
                print(f"| {name} | {data} | {root} | {explore:g} | {len(nonproj)} of {len(trees)} | {n:,} | "
                      f"{100 * diff / n:.1f}% | {100 * costly / n:.1f}% | {100 * missed / n:.1f}% |", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
