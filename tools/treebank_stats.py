"""Treebank statistics behind the non-projective systems (Table 1 of Björkelund & Nivre 2015).

    python tools/treebank_stats.py FILE.conllu [FILE.conllu ...]

Prints one markdown row per treebank: sentences, % projective, % 2-planar, the swaps of the
SwapStandard EAGER oracle, the % reduction of swaps by LAZY and by MINIMAL, the % of sentences
with a unique transition sequence under ND-ALL, the mean SWITCHes per sentence of the 2-Planar
static oracle and its coverage, how long the MINIMAL sequences took, and the swaps of
arc-eager + SWAP's EAGER oracle with the % its LAZY oracle removes.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from tqdm import tqdm


from nparse.io.conllu import read_conllu, tree_problem
from nparse.systems.arceager_swap import SWAP as EAGER_SWAP_SWAP
from nparse.systems.arceager_swap import ArcEagerSwap, ArcEagerSwapEager, ArcEagerSwapLazy
from nparse.systems.swapstandard import (
    SWAP,
    SwapEager,
    SwapGold,
    SwapLazy,
    SwapNDAll,
    SwapStandard,
    minimal_sequence,
)
from nparse.systems.twoplanar import SWITCH, TwoPlanar, TwoPlanarGold, is_two_planar
from nparse.trees import is_projective

HEADER = (
    "| treebank | sentences | % projective | % 2-planar | EAGER swaps | % swap red. (LAZY) "
    "| % swap red. (MINIMAL) | % unique tr. seq. (ND-ALL) | SWITCHes / sent. (2-Planar static) "
    "| 2-Planar static coverage | MINIMAL time (s) | arc-eager+SWAP EAGER swaps | % swap red. (its LAZY) |"
)


def unique_sequence(gold: SwapGold, system: SwapStandard, oracle: SwapNDAll) -> bool:
    """Whether ND-ALL allows exactly one transition at every configuration on the gold path."""
    c = system.initial(gold.n)
    while not system.terminal(c):
        options = [a for a, ok in enumerate(oracle.correct(c, gold)) if ok]
        if len(options) != 1:
            return False
        system.apply(c, options[0])
    return True


def stats(path: Path) -> dict:
    sents = [s for s in read_conllu(path) if tree_problem(s.heads) is None]
    swap_system, planar = SwapStandard(), TwoPlanar()
    eager, lazy, ndall = SwapEager(swap_system), SwapLazy(swap_system), SwapNDAll(swap_system)
    eager_swap = ArcEagerSwap()
    ae_eager, ae_lazy = ArcEagerSwapEager(eager_swap), ArcEagerSwapLazy(eager_swap)
    row = dict.fromkeys("projective two_planar eager lazy minimal unique switches covered ae_eager ae_lazy".split(), 0)
    minimal_seconds = 0.0
    for sent in tqdm(sents, desc=path.name, unit="sent", leave=False, disable=None):
        heads = sent.heads
        row["projective"] += is_projective(heads)
        row["two_planar"] += is_two_planar(heads)
        gold = SwapGold(heads)
        row["eager"] += eager.sequence(gold).count(SWAP)
        row["lazy"] += lazy.sequence(gold).count(SWAP)
        start = time.perf_counter()
        row["minimal"] += minimal_sequence(gold, swap_system)[0].count(SWAP)
        minimal_seconds += time.perf_counter() - start
        row["unique"] += unique_sequence(gold, swap_system, ndall)
        tp = TwoPlanarGold(heads, planar)
        row["switches"] += tp.sequence.count(SWITCH)
        row["covered"] += tp.covered
        row["ae_eager"] += ae_eager.sequence(ae_eager.prepare(heads)).count(EAGER_SWAP_SWAP)
        row["ae_lazy"] += ae_lazy.sequence(ae_lazy.prepare(heads)).count(EAGER_SWAP_SWAP)
    n = len(sents)
    eager_swaps = row["eager"]

    def reduction(x: int) -> str:
        return f"{100 * (eager_swaps - x) / eager_swaps:.2f}" if eager_swaps else "-"

    return {
        "treebank": path.name.replace(".conllu", ""),
        "sentences": n,
        "projective": f"{100 * row['projective'] / n:.2f}",
        "two_planar": f"{100 * row['two_planar'] / n:.2f}",
        "eager": eager_swaps,
        "lazy": reduction(row["lazy"]),
        "minimal": reduction(row["minimal"]),
        "unique": f"{100 * row['unique'] / n:.2f}",
        "switches": f"{row['switches'] / n:.3f}",
        "covered": f"{100 * row['covered'] / n:.2f}",
        "minimal_seconds": f"{minimal_seconds:.1f}",
        "ae_eager": row["ae_eager"],
        "ae_lazy": f"{100 * (row['ae_eager'] - row['ae_lazy']) / row['ae_eager']:.2f}" if row["ae_eager"] else "-",
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+", type=Path)
    args = ap.parse_args()
    print(HEADER)
    print("|" + "---|" * (HEADER.count("|") - 1))
    for path in args.files:
        r = stats(path)
        print(
            f"| {r['treebank']} | {r['sentences']} | {r['projective']} | {r['two_planar']} | {r['eager']} "
            f"| {r['lazy']} | {r['minimal']} | {r['unique']} | {r['switches']} | {r['covered']} "
            f"| {r['minimal_seconds']} | {r['ae_eager']} | {r['ae_lazy']} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
