"""How well parses recover non-projective structure.

    python tools/crossing_arcs.py GOLD.conllu PRED.conllu [PRED.conllu ...]

For each prediction: the % of sentences whose tree is non-projective (gold's first), and the
recall of crossing gold arcs (arcs that cross another gold arc), i.e. the arcs a projective
parser cannot build. Useful to see whether a non-projective system actually uses its power.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


from nparse.io.conllu import read_conllu
from nparse.trees import arcs_cross, is_projective


def crossing_arcs(heads: list[int]) -> list[tuple[int, int]]:
    arcs = [(heads[d], d) for d in range(1, len(heads))]
    return [(h, d) for h, d in arcs if any(arcs_cross(h, d, h2, d2) for h2, d2 in arcs)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("gold", type=Path)
    ap.add_argument("preds", nargs="+", type=Path)
    args = ap.parse_args()
    gold = read_conllu(args.gold)
    crossing = [crossing_arcs(s.heads) for s in gold]
    total = sum(len(c) for c in crossing)
    share = 100 * sum(not is_projective(s.heads) for s in gold) / len(gold)
    print(f"{args.gold}: {len(gold)} sentences, {share:.2f}% non-projective, {total} crossing arcs")
    print("| prediction | % non-projective | crossing-arc recall |")
    print("|---|---|---|")
    for path in args.preds:
        pred = read_conllu(path)
        if len(pred) != len(gold):
            sys.exit(f"{path}: {len(pred)} sentences, gold has {len(gold)}")
        found = sum(p.heads[d] == h for p, arcs in zip(pred, crossing) for h, d in arcs)
        nonproj = 100 * sum(not is_projective(s.heads) for s in pred) / len(pred)
        print(f"| {path} | {nonproj:.2f} | {100 * found / max(total, 1):.2f} |")


if __name__ == "__main__":
    main()
