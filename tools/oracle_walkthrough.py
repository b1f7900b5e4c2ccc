"""Readable move sequences of every system and oracle on one sentence (docs/extending.md).

    python tools/oracle_walkthrough.py [--system NAME] [--oracle NAME]

For every registered system/oracle pair: the configurations along the oracle's own sequence
(a static oracle's, or the first correct transition of the others), the transition taken, and
the cost of every legal transition there (dynamic oracles) or the set the oracle accepts. The
sentence is non-projective ("A hearing is scheduled on the issue today .", on -> hearing
crosses is -> scheduled); oracles that only cover projective trees get a projective one.
"""

from __future__ import annotations

import argparse

from nparse.systems import ORACLES, CostOracle, StaticOracle, make_oracle, make_system
from nparse.systems.base import Config, TransitionSystem

NONPROJECTIVE = ("A hearing is scheduled on the issue today .".split(), [-1, 2, 3, 0, 3, 2, 7, 5, 4, 3])
PROJECTIVE = ("She saw her ducks today".split(), [-1, 2, 0, 4, 2, 2])


def words(ws: list[int], forms: list[str]) -> str:
    return "[" + " ".join(forms[w] for w in ws) + "]"


def describe(system: TransitionSystem, c: Config, forms: list[str]) -> str:
    return ", ".join(f"{name} {words(ws, forms)}" for name, ws in system.parts(c))


def walkthrough(system: TransitionSystem, oracle_name: str) -> list[str]:
    oracle = make_oracle(system, oracle_name)
    tokens, heads = NONPROJECTIVE
    gold = oracle.prepare(heads)
    if gold is None:
        tokens, heads = PROJECTIVE
        gold = oracle.prepare(heads)
    forms = ["ROOT", *tokens]
    arcs = ", ".join(f"{forms[heads[d]]} -> {forms[d]}" for d in range(1, len(heads)))
    lines = [f"### {system.name} / {oracle_name}", "", f"Gold arcs: {arcs}.", ""]
    lines += ["| configuration | oracle says | taken |", "|---|---|---|"]
    c = system.initial(len(tokens))
    names = system.actions
    while not system.terminal(c):
        legal = system.legal(c)
        if isinstance(oracle, CostOracle):
            costs = oracle.costs(c, gold)
            said = " ".join(f"{names[a]}={x}" for a, x in enumerate(costs) if x is not None)
            action = next(a for a, x in enumerate(costs) if x == min(y for y in costs if y is not None))
        elif isinstance(oracle, StaticOracle):
            action = oracle.next(c, gold)
            said = names[action]
        else:
            flags = oracle.correct(c, gold)
            said = " ".join(names[a] for a, ok in enumerate(flags) if ok and legal[a])
            action = next(a for a, ok in enumerate(flags) if ok and legal[a])
        arc = system.arc_of(c, action)
        taken = names[action] + (f" ({forms[arc[0]]} -> {forms[arc[1]]})" if arc else "")
        lines.append(f"| {describe(system, c, forms)} | {said} | {taken} |")
        system.apply(c, action)
    built = sum(c.heads[d] == heads[d] for d in range(1, len(heads)))
    lines += ["", f"{len(lines) - 6} transitions, {built} of {len(heads) - 1} gold arcs built.", ""]
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--system")
    ap.add_argument("--oracle")
    args = ap.parse_args()
    for name, oracles in ORACLES.items():
        if args.system and name != args.system:
            continue
        for oracle_name in oracles:
            if args.oracle and oracle_name != args.oracle:
                continue
            print("\n".join(walkthrough(make_system(name), oracle_name)))


if __name__ == "__main__":
    main()
