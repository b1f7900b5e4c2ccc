"""Exhaustive check of the *correct* flags of beam items (tests/test_global.py, tools/check_oracles.py).

A sentence runs through global training (``GlobalSearch``) with random scores; after every step
every item of the beam and of the gold beam is compared with exhaustive search from its restart
point c0, replayed on the Python systems (not the array code):
- static oracles: correct iff the item's transitions since c0 are the oracle's sequence;
- the others: correct iff the minimum reachable loss of the item equals that of c0 (the best
  tree reachable from the restart point is still reachable), under the restriction the oracle is
  exact for (the ``reference_search`` of its module); an item that left the restriction is wrong
  by definition and not compared.
"""

from __future__ import annotations

import random
from typing import Iterator

import torch

from ..models.scorer import TransitionScorer
from ..systems import Oracle, StaticOracle
from ..systems.adapters.arrays import Layout
from ..systems.verify.search import all_trees, random_tree
from ..systems.verify.verification import VERIFICATIONS, Verification
from .global_loop import GlobalSearch, GlobalSettings


# Every oracle's verification entry (systems/verify/verification.py) is a case.
CASES = VERIFICATIONS


def random_scorer(system, width: int, seed: int) -> tuple[TransitionScorer, torch.Tensor]:
    """A small random transition scorer and its first-layer table for one sentence."""
    torch.manual_seed(seed)
    scorer = TransitionScorer(4, system.n_slots, 6, len(system.actions))
    with torch.no_grad():
        scorer.out.weight.mul_(4.0)
        table = scorer.table(torch.randn(1, width, 4))
    return scorer, table


Mismatch = tuple[list[int], list[int], str | bool]  # (tree, transitions, what is wrong or the mark)


def settings_for(oracle: Oracle, i: int, beam: int = 3) -> GlobalSettings:
    """Cycle through the update modes, and restarts where the oracle allows them."""
    choices = [GlobalSettings(beam, "early"), GlobalSettings(beam, "max_violation")]
    if not isinstance(oracle, StaticOracle):
        choices += [GlobalSettings(beam, "early", restart=True), GlobalSettings(beam, "max_violation", restart=True)]
    if oracle.complete:
        choices.append(GlobalSettings(beam, "early", restart=True, restart_from="negative"))
    return choices[i % len(choices)]


def check_tree(
    case: Verification, system, oracle, heads: list[int], seed: int, settings: GlobalSettings
) -> tuple[int, list[Mismatch]]:
    """(items checked, mismatches) for one sentence run with random scores."""
    gold = oracle.prepare(heads)
    if gold is None or not case.keeps(heads):
        return 0, []
    n = gold.n
    layout = Layout(system, n + 1)
    scorer, table = random_scorer(system, n + 1, seed)
    search = GlobalSearch(layout, oracle, scorer, table, [gold], [n], settings)
    exact = case.reference(system, gold) if case.reference else None
    sequence = oracle.sequence(gold) if isinstance(oracle, StaticOracle) else None

    checked = 0
    bad: list[Mismatch] = []
    items = search.items
    while len(items.sent):
        search.step()
        for i in range(len(items.sent)):
            root, actions = search.tree.derivation(int(items.node[i]))
            start = layout.to_config(search.tree.restart_rows[root], 0)
            path = [start]
            for a in actions:
                c = path[-1].copy()
                system.apply(c, a)
                path.append(c)
            item = path[-1]
            marked = bool(items.correct[i])
            if layout.to_config(items.states, i).heads != item.heads:
                bad.append((heads, actions, "array row differs from the replayed configuration"))
            elif sequence is not None:
                if marked != (actions == sequence[start.steps : start.steps + len(actions)]):
                    bad.append((heads, actions, marked))
            else:
                assert exact is not None, "a dynamic oracle's check needs its exact reference search"
                if all(a in exact.moves(c) for c, a in zip(path, actions)):
                    optimal = exact.built(item) + exact.future(item) == exact.built(start) + exact.future(start)
                    if marked != optimal:
                        bad.append((heads, actions, marked))
            checked += 1
    return checked, bad


def trees(all_up_to: int, random_sizes: dict[int, int], rng: random.Random) -> Iterator[list[int]]:
    """Every tree up to ``all_up_to`` words, then ``random_sizes[n]`` random trees of n words."""
    for n in range(1, all_up_to + 1):
        yield from all_trees(n)
    for n, count in sorted(random_sizes.items()):
        for _ in range(count):
            yield random_tree(n, rng)


def check_case(
    case: Verification, all_up_to: int, random_sizes: dict[int, int], seed: int = 11
) -> tuple[int, int, list[Mismatch]]:
    """(trees, items checked, first mismatches) of one system/oracle pair."""
    system, oracle = case.make()
    rng = random.Random(seed)
    count, checked = 0, 0
    bad: list[Mismatch] = []
    for i, heads in enumerate(trees(all_up_to, random_sizes, rng)):
        done, wrong = check_tree(case, system, oracle, heads, i, settings_for(oracle, i))
        count += done > 0
        checked += done
        bad += wrong[: max(0, 5 - len(bad))]
    return count, checked, bad
