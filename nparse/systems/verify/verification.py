"""How every oracle is verified, declared once: the oracle tests, ``tools/check_oracles.py`` and
the beam-correctness check (``training/beam_check.py``) all loop over ``VERIFICATIONS``.

- A static oracle (``reference`` None) must rebuild every tree it ``covers`` through its own
  sequence, and refuse (``prepare`` returns None) the others.
- Any other oracle's zero-cost set must equal that of exhaustive search (``reference``: the
  search it is exact against, with the restriction it is exact under) on configurations reached
  by random walks: over all legal transitions (``walk="all"``, complete oracles, so off the gold
  path too) or over the oracle's own correct ones (``walk="correct"``, non-deterministic oracles,
  defined only where the gold tree is reachable), narrowed by ``restrict_walk``; with
  ``exact_costs`` every cost must equal the search's, not only the zero-cost set.

A test fails when a registered system/oracle pair has no entry here (``tests/test_registry.py``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from ...trees import is_projective
from .. import archybrid_swap, covington, swapstandard, twoplanar
from ..base import Gold, Oracle, TransitionSystem
from ..adapters.row_oracle import RowOracle
from .search import ExactLoss, Search


def plain_search(system: TransitionSystem, gold: Gold) -> ExactLoss:
    """Unrestricted exhaustive search with the Hamming loss."""
    return ExactLoss(system, gold.heads)


@dataclass(frozen=True)
class Verification:
    system: str
    oracle: str
    reference: Callable[[Any, Any], Search] | None = None  # (system, gold) -> search; None: static
    covers: Callable[[list[int]], bool] | None = None  # trees it is exact for / rebuilds (None: every tree)
    walk: str = "all"  # "all" legal transitions or the oracle's own "correct" ones
    restrict_walk: Callable[[Any, int, Any], bool] | None = None  # (config, action, gold) -> allowed
    options: dict[str, Any] = field(default_factory=dict)  # oracle options it is exact under
    slow_search: bool = False  # exhaustive search grows too fast for the suite's usual sizes
    exact_costs: bool = False  # a cost oracle whose every cost (not only the zero set) is exact
    system_options: dict[str, Any] = field(default_factory=dict)  # e.g. the root placement
    variant: str = ""  # what tells this check from another of the same oracle

    @property
    def label(self) -> str:
        return f"{self.system} {self.oracle}" + (f" {self.variant}" if self.variant else "")

    def make(self) -> tuple[TransitionSystem, Oracle]:
        from .. import make_oracle, make_system  # the registries import this module's systems

        system = make_system(self.system, **self.system_options)
        return system, make_oracle(system, self.oracle, **self.options)

    def keeps(self, heads: list[int]) -> bool:
        return self.covers is None or self.covers(heads)


def exact_on_nonprojective(system: str, system_options: dict | None = None, suffix: str = "") -> Verification:
    """A dynamic oracle's ``exact_nonprojective`` variant: exact costs on non-projective gold trees."""
    return Verification(
        system, "dynamic", plain_search, covers=lambda heads: not is_projective(heads),
        options={"exact_nonprojective": True}, exact_costs=True, system_options=system_options or {},
        variant="exact_nonprojective" + suffix,
    )  # fmt: skip


VERIFICATIONS: list[Verification] = [
    Verification("archybrid", "static", covers=is_projective),
    Verification("archybrid", "dynamic", plain_search, covers=is_projective),
    # The exact costs on non-projective gold trees, both root placements.
    *(exact_on_nonprojective("archybrid", {"root": root}, f" root={root}") for root in ("end", "start")),
    Verification("arceager", "static", covers=is_projective),
    Verification("arceager", "dynamic", plain_search, covers=is_projective, exact_costs=True),
    exact_on_nonprojective("arceager"),
    Verification("arcstandard", "static", covers=is_projective),
    Verification("arcstandard", "dynamic", plain_search, exact_costs=True),
    Verification("swapstandard", "eager"),
    Verification("swapstandard", "lazy"),
    Verification("swapstandard", "minimal"),
    Verification(
        "swapstandard", "ndsw", lambda s, g: swapstandard.reference_search(s, g, eager_arcs=True), walk="correct"
    ),
    Verification("swapstandard", "ndall", swapstandard.reference_search, walk="correct"),
    Verification("twoplanar", "static", covers=twoplanar.is_two_planar),
    # Switch regularization deliberately calls some zero-cost SWITCHes wrong: check the exact oracle.
    # Both 2-planar checks run the compiled search, which test_oracles checks against the Python
    # ``reference_search`` (canonical planes and plane-agnostic, on and off the gold path).
    Verification(
        "twoplanar",
        "dynamic",
        twoplanar.compiled_search,
        covers=twoplanar.is_two_planar,
        options={"switch_regularization": False},
        slow_search=True,
    ),  # fmt: skip
    Verification(
        "twoplanar",
        "dynamic",
        lambda s, g: twoplanar.compiled_search(s, g, plane_agnostic=True),
        covers=twoplanar.is_two_planar,
        options={"switch_regularization": False, "plane_agnostic": True, "prefer_canonical": False},
        slow_search=True,
        exact_costs=True,
        variant="plane_agnostic",
    ),  # fmt: skip
    Verification("archybrid_swap", "static"),
    Verification(
        "archybrid_swap",
        "static_dynamic",
        archybrid_swap.reference_search,
        restrict_walk=archybrid_swap.within_restriction,
    ),  # fmt: skip
    Verification("arceager_swap", "eager"),
    Verification("arceager_swap", "lazy"),
    Verification("covington", "static"),
    # Every tree up to 6 words: python tools/check_oracles.py --system covington (about 4 minutes).
    Verification("covington", "dynamic", covington.reference_search, slow_search=True, exact_costs=True),
]


@dataclass
class Lockstep:
    """What ``lockstep`` compared: configurations, and the first mismatches (at most 10)."""

    configurations: int = 0
    skipped: int = 0  # off-path configurations where the Python static oracle is undefined (raises)
    mismatches: list[str] = field(default_factory=list)


def lockstep(
    system: TransitionSystem, oracle: Oracle, trees: list[list[int]], rng: Any, explore_p: float = 0.0
) -> Lockstep:
    """Walk the trees' sentences as rows (``arrays.Layout``, all at once as training does) beside
    the Python ``Config`` objects, and compare at every step the compiled oracle's correct set,
    costs and ``may_explore`` with the Python reference's (costs for ``CostOracle`` subclasses).

    The walk takes a random correct transition, or with probability ``explore_p`` a random legal
    one (explored paths: off the gold path)."""
    import numpy as np

    from ..adapters.arrays import Layout
    from ..base import CostOracle, StaticOracle

    golds = [g for g in (oracle.prepare(h) for h in trees) if g is not None]
    out = Lockstep()
    if not golds:
        return out
    lengths = np.array([g.n for g in golds])
    layout = Layout(system, int(lengths.max()) + 1)
    states = layout.initial(lengths)
    configs = [system.initial(g.n) for g in golds]
    rows = RowOracle(oracle, golds)
    sent = np.arange(len(golds))
    live = np.flatnonzero(~layout.inspect(states, sent * layout.width, 0)[2])
    names = system.actions

    def mismatch(text: str) -> None:
        if len(out.mismatches) < 10:
            out.mismatches.append(text)

    while len(live):
        legal, cost, correct = rows.ask(layout, states, live, sent)
        actions = np.full(len(states), -1, dtype=np.int64)
        for k, i in enumerate(live.tolist()):
            c, gold = configs[i], golds[i]
            out.configurations += 1
            where = f"{system.name} {oracle.name}, sentence {i}, {c}"
            try:
                want = oracle.correct(c, gold)
            except (IndexError, ValueError):
                if isinstance(oracle, StaticOracle):
                    out.skipped += 1  # a replayed sequence read past its end, off the gold path
                    want = None
                else:
                    raise
            ok = system.legal(c)
            if legal[k].tolist() != ok:
                mismatch(f"{where}: legal {legal[k].tolist()} against {ok}")
            if want is not None and correct[k].tolist() != list(want):
                mismatch(f"{where}: correct {correct[k].tolist()} against {list(want)}")
            if isinstance(oracle, CostOracle):
                py = [-1 if x is None else x for x in oracle.costs(c, gold)]
                if cost[k].tolist() != py:
                    mismatch(f"{where}: costs {cost[k].tolist()} against {py}")
            options = [a for a in range(len(ok)) if ok[a]]
            good = [a for a in options if want is not None and want[a]]
            for a in options:
                if not (want is not None and want[a]):
                    compiled = bool(rows.may_explore(layout, states, np.array([i]), sent, np.array([a]))[0])
                    if compiled != oracle.may_explore(c, gold, a):
                        mismatch(f"{where}: may_explore({names[a]}) {compiled}")
            a = rng.choice(options) if (not good or rng.random() < explore_p) else rng.choice(good)
            actions[i] = a
            system.apply(c, a)
        layout.apply(states, actions)
        done = layout.inspect(states, sent * layout.width, 0)[2]
        live = np.flatnonzero(~done)
        for i in np.flatnonzero(done & (actions >= 0)).tolist():
            if not system.terminal(configs[i]):
                mismatch(f"{system.name}: row {i} terminal, its Config not")
    return out
