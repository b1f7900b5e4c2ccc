"""Readable move sequences of every system and oracle on one sentence: the worked examples of
the docs (``docs/worked-sequences.md``), generated here so that a test can check they are current.

For every registered system/oracle pair: the configurations along the oracle's own sequence (a
static oracle's, or the first correct transition of the others), what the oracle says there (the
cost of every legal transition for a dynamic oracle, the accepted set for a non-deterministic
one, the one transition of a static one) and the transition taken. The sentence is
non-projective ("A hearing is scheduled on the issue today .": hearing -> on crosses
is -> scheduled); oracles that only cover projective trees get "She saw her ducks today".
"""

from __future__ import annotations

from .. import ORACLES, CostOracle, StaticOracle, make_oracle, make_system
from ..base import Config, TransitionSystem

NONPROJECTIVE = ("A hearing is scheduled on the issue today .".split(), [-1, 2, 3, 0, 3, 2, 7, 5, 4, 3])
PROJECTIVE = ("She saw her ducks today".split(), [-1, 2, 0, 4, 2, 2])
START = "<!-- walkthroughs: start (python tools/oracle_walkthrough.py --write docs/worked-sequences.md) -->"
END = "<!-- walkthroughs: end -->"


def words(ws: list[int], forms: list[str]) -> str:
    return "[" + " ".join(forms[w] for w in ws) + "]"


def describe(system: TransitionSystem, c: Config, forms: list[str]) -> str:
    return ", ".join(f"{name} {words(ws, forms)}" for name, ws in system.parts(c))


def walkthrough(system: TransitionSystem, oracle_name: str) -> list[str]:
    """The Markdown lines of one system's and oracle's worked sequence."""
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


def all_walkthroughs(system: str | None = None, oracle: str | None = None) -> list[str]:
    """The worked sequences of every registered pair (or those named), in registry order."""
    lines: list[str] = []
    for name, oracles in ORACLES.items():
        if system and name != system:
            continue
        for oracle_name in oracles:
            if oracle and oracle_name != oracle:
                continue
            lines += walkthrough(make_system(name), oracle_name)
    return lines


def with_walkthroughs(page: str) -> str:
    """``page`` with the part between its walkthrough markers regenerated."""
    if START not in page or END not in page:
        raise ValueError(f"no walkthrough markers in the page: add {START} and {END}")
    head, rest = page.split(START, 1)
    _, tail = rest.split(END, 1)
    return head + START + "\n\n" + "\n".join(all_walkthroughs()) + "\n" + END + tail
