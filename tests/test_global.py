"""Global training: beam items marked correct against exhaustive search, updates, restart, losses."""

from __future__ import annotations

import itertools
import random

import pytest
import torch

from nparse.systems import make_oracle, make_system
from nparse.systems.adapters.arrays import Layout
from nparse.systems.verify.search import random_tree
from nparse.systems.verify.verification import Verification
from nparse.training.beam_check import CASES, check_case, random_scorer
from nparse.training.global_loop import GlobalSearch, GlobalSettings


def size_of(case: Verification) -> tuple[int, dict[int, int]]:
    """Trees checked in the suite: every tree up to 4 words and random ones of 5 and 6 (the
    2-Planar dynamic oracle, whose exhaustive search is slow: up to 3, random ones of 4);
    ``tools/check_oracles.py --beam`` checks larger sizes."""
    if case.slow_search:
        return 3, {4: 10}
    return 4, {5: 15, 6: 10}


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=[f"{c.system}-{c.oracle}" for c in CASES])
def test_beam_items_marked_correct_match_exhaustive_search(case):
    """Beams of 3 with random scores, every update mode, restarts from the positive and
    (dynamic oracles) the negative: at every step every item of the beam and of the gold beam
    is marked correct iff exhaustive search says so (nparse/training/beam_check.py)."""
    all_up_to, random_sizes = size_of(case)
    trees, checked, bad = check_case(case, all_up_to, random_sizes)
    assert not bad, bad
    assert checked > 300


class DyadicScorer:
    """Scores that are sums of multiples of 1/8: exact in any order of summation, with ties."""

    def __init__(self, system, width: int, seed: int):
        gen = torch.Generator().manual_seed(seed)
        self.values = torch.randint(-16, 17, (width + 1, system.n_slots, len(system.actions)), generator=gen) / 8.0
        self.values = self.values.double()
        self.n_actions = len(system.actions)  # the TransitionScores protocol (decoding/scoring.py)
        self.slots = torch.arange(system.n_slots)

    def scores(self, table, rows):
        return self.values[rows, self.slots].sum(1)

    def of(self, system, c, width: int) -> list[float]:
        rows = torch.tensor([[w if w >= 0 else width for w in system.features(c)]])
        return self.scores(None, rows)[0].tolist()


def reference_first_update(system, oracle, gold, scorer, k: int, update: str, positive: str = "best"):
    """A plain Python beam over Config objects: (positive actions, negative actions, step) of
    the first update, with the same candidate order (score, then transition score, then item
    and action order) as the array implementation. ``positive="prefix"`` (max-violation): the
    positive is the prefix, as long as the negative, of the best complete correct derivation."""
    n, width = gold.n, gold.n + 1

    def score_of(actions):
        c, total = system.initial(n), 0.0
        for a in actions:
            total += scorer.of(system, c, width)[a]
            system.apply(c, a)
        return total

    def expand(beam, only_correct):
        cands = []
        for score, actions, c, ok in beam:
            if system.terminal(c):
                cands.append((score, 0.0, actions, c, ok))
                continue
            local = scorer.of(system, c, width)
            flags = oracle.correct(c, gold) if ok else [False] * len(local)
            for a, legal in enumerate(system.legal(c)):
                if legal and (flags[a] or not only_correct):
                    child = c.copy()
                    system.apply(child, a)
                    cands.append((score + local[a], local[a], actions + [a], child, ok and flags[a]))
        order = sorted(range(len(cands)), key=lambda i: (-cands[i][0], -cands[i][1], i))
        return [cands[i] for i in order]

    start = (0.0, [], system.initial(n), True)
    beam, gold_beam, worst, t, wrong = [start], [start], None, 0, []
    while True:
        t += 1
        cands = expand(beam, False)
        new = [(s, a, c, ok) for s, _, a, c, ok in cands[:k]]
        gold_new = [(s, a, c, ok) for s, _, a, c, ok in expand(gold_beam, True)[:k]]
        if update == "early" and not any(it[3] for it in new):
            pos = next(x for x in cands if x[4])
            return pos[2], new[0][1], t
        correct = [it for it in new if it[3]] + (gold_new if update != "early" else [])
        best = max(correct, key=lambda it: it[0]) if correct else None
        if update == "max_violation" and not new[0][3] and positive == "prefix":
            wrong.append((new[0][0], new[0][1], t))
        elif update == "max_violation" and not new[0][3]:
            gap = new[0][0] - best[0]
            if worst is None or gap > worst[0]:
                worst = (gap, best[1], new[0][1], t)
        done = all(system.terminal(it[2]) for it in new + (gold_new if update != "early" else []))
        if done:
            for neg_score, neg, at in wrong:  # prefixes of the best complete correct derivation
                pos = best[1][: len(neg)]
                gap = neg_score - score_of(pos)
                if worst is None or gap > worst[0]:
                    worst = (gap, pos, neg, at)
            if worst is not None:
                return worst[1], worst[2], worst[3]
            return best[1], new[0][1], t
        beam, gold_beam = new, gold_new


@pytest.mark.parametrize("update,positive", [("early", "best"), ("max_violation", "best"), ("max_violation", "prefix")])
@pytest.mark.parametrize(
    "name,oracle_name", [("arcstandard", "static"), ("arceager", "dynamic"), ("swapstandard", "ndall")]
)
def test_first_update_matches_a_plain_python_beam(update, positive, name, oracle_name):
    """Early update happens at the first step t where no beam item is correct, on the positive
    and negative prefixes of that step (length t where every derivation has the same length:
    arc-standard); max-violation at the step of the largest score gap. Checked against a plain
    Python beam on 40 random trees of 2-9 words with scores that tie often."""
    system = make_system(name)
    oracle = make_oracle(system, oracle_name)
    rng = random.Random(5)
    seen = checked = 0
    for i in itertools.count():
        if checked == 40:
            break
        heads = random_tree(rng.randint(2, 9), rng)
        gold = oracle.prepare(heads)
        if gold is None:
            continue
        checked += 1
        scorer = DyadicScorer(system, gold.n + 1, i)
        search = GlobalSearch(
            Layout(system, gold.n + 1), oracle, scorer, torch.zeros(gold.n + 2, 1), [gold], [gold.n],
            GlobalSettings(3, update, positive=positive),
        )  # fmt: skip
        rec = search.run()
        pos, neg, t = reference_first_update(system, oracle, gold, scorer, 3, update, positive)
        first = rec.updates[0]
        assert search.tree.derivation(first.pos)[1] == pos
        assert search.tree.derivation(first.neg)[1] == neg
        if name == "arcstandard" and first.violation:
            assert len(pos) == len(neg) == t
        seen += first.violation
    assert seen > 15


class TableScorer:
    """Hand-written transition scores by feature tuple (words at s0, s1, s2, b0; E = empty)."""

    def __init__(self, system, width: int, table: dict):
        self.width, self.table = width, table
        self.n_actions = len(system.actions)
        self.n = len(system.actions)

    def scores(self, _, rows):
        keys = [tuple("E" if w == self.width else w for w in row) for row in rows.tolist()]
        return torch.tensor([self.table.get(k, [0.0] * self.n) for k in keys], dtype=torch.float64)


def test_hand_computed_early_and_max_violation_updates():
    """Arc-standard, gold chain 0 -> 1 -> 2 -> 3 (static: SH SH SH RA RA RA), beam of one.
    The beam takes LEFT at step 3 (score 1 against SHIFT 0): early update there, on prefixes of
    length 3. Gaps between the beam's best and the gold prefix are then 1, 3, 0.5, 0.5 at steps
    3-6, so max-violation updates at step 4."""
    SH, LA, RA = 0, 1, 2
    system = make_system("arcstandard")
    oracle = make_oracle(system, "static")
    gold = oracle.prepare([-1, 0, 1, 2])
    scores = {
        (2, 1, 0, 3): [0.0, 1.0, 0.0],  # step 3: LEFT (wrong) beats SHIFT
        (2, 0, "E", 3): [2.0, 0.0, 0.0],  # beam, step 4: SHIFT +2 (gap 3)
        (3, 2, 1, "E"): [0.0, -5.0, 0.0],  # gold, step 4: RIGHT 0
        (3, 2, 0, "E"): [0.0, -3.0, -2.5],  # beam, step 5: RIGHT -2.5 (gap 0.5)
        (2, 1, 0, "E"): [0.0, -5.0, 0.0],  # gold, step 5
    }
    expected = {"early": ([SH, SH, SH], [SH, SH, LA]), "max_violation": ([SH, SH, SH, RA], [SH, SH, LA, SH])}
    for update, (pos, neg) in expected.items():
        search = GlobalSearch(
            Layout(system, 4), oracle, TableScorer(system, 4, scores), torch.zeros(5, 1), [gold], [3],
            GlobalSettings(1, update),
        )  # fmt: skip
        rec = search.run()
        assert [search.tree.derivation(u.pos)[1] for u in rec.updates] == [pos], update
        assert [search.tree.derivation(u.neg)[1] for u in rec.updates] == [neg], update
        assert rec.updates[0].violation


RESTARTABLE = [
    ("archybrid", "dynamic"), ("arceager", "dynamic"), ("swapstandard", "ndall"), ("swapstandard", "ndsw"),
    ("twoplanar", "dynamic"), ("archybrid_swap", "static_dynamic"),
]  # fmt: skip


@pytest.mark.parametrize("name,oracle_name", RESTARTABLE, ids=[f"{a}-{b}" for a, b in RESTARTABLE])
def test_restart_terminates_and_covers_every_sentence(name, oracle_name):
    """With restart the loop ends and every sentence's last positive example is a terminal
    configuration (real EWT sentences, an untrained model: many updates per sentence)."""
    from nparse.io.data import collate, encode

    from .test_beam import dev_sentences, random_model

    system = make_system(name)
    oracle = make_oracle(system, oracle_name)
    sents = dev_sentences()[:40]
    model = random_model(system, sents, seed=1)
    examples = [encode(s, model.vocabs) for s in sents]
    for e, s in zip(examples, sents):
        e.gold = oracle.prepare(s.heads)
    batch = collate(examples)
    with torch.no_grad():
        table = model.scorer.table(model.encoder(batch))
    froms = ["positive", "negative"] if oracle.complete else ["positive"]
    for update, restart_from in itertools.product(["early", "max_violation"], froms):
        settings = GlobalSettings(4, update, restart=True, restart_from=restart_from)
        search = GlobalSearch(Layout(system, batch.width), oracle, model.scorer, table, [e.gold for e in examples],
                              [len(e) for e in examples], settings)  # fmt: skip
        rec = search.run()
        assert rec.reached_end == len(sents) and rec.covered == len(sents), (update, restart_from)
        assert rec.violations >= len(sents)  # an untrained model errs in every sentence
        assert rec.stuck == 0


def derivation_score(system, scorer, table, width, start, actions, local: bool = False) -> float:
    """A derivation's score recomputed one configuration at a time (Python system); ``local``:
    log-softmax over the configuration's legal transitions."""
    total, c = 0.0, start.copy()
    for a in actions:
        rows = torch.tensor([[w if w >= 0 else width for w in system.features(c)]])
        scores = scorer.scores(table, rows)[0]
        if local:
            legal = torch.tensor(system.legal(c))
            scores = torch.log_softmax(scores.masked_fill(~legal, float("-inf")), 0)
        total += float(scores[a])
        system.apply(c, a)
    return total


@pytest.mark.parametrize("loss", ["margin", "softmax"])
@pytest.mark.parametrize("with_factors,scores", [(False, "raw"), (True, "raw"), (False, "local"), (True, "local")],
                         ids=["transitions", "completion", "local", "local-completion"])  # fmt: skip
def test_global_losses_equal_their_definitions(loss, with_factors, scores):
    """The batched loss equals max(0, 1 + s(neg) - s(pos)) over violations (margin) or
    -s(pos) + log(sum over the beam and pos of exp(s)) (softmax), with every derivation score
    recomputed from its restart point one configuration at a time (with a completion model: plus
    the factors complete at its end but not at its restart point, recomputed from scratch);
    gradients reach the tables."""
    from nparse.decoding.completion import Completion
    from nparse.models.completion import FactorScorer
    from nparse.systems.adapters.factors import factor_mask
    from nparse.training.losses import global_loss

    from .reference_factors import complete_factors
    from .test_completion import reference_score

    system = make_system("arceager")
    oracle = make_oracle(system, "dynamic")
    mask = factor_mask(["1", "2a", "2b", "3a", "3b", "3c"]) if with_factors else 0
    rng = random.Random(2)
    for i in range(8):
        heads = random_tree(rng.randint(3, 8), rng)
        gold = oracle.prepare(heads)
        width = gold.n + 1
        scorer, _ = random_scorer(system, width, i)
        vectors = torch.randn(1, width, 4)
        table = scorer.table(vectors).detach().requires_grad_(True)
        completion = search_completion = None
        if with_factors:
            factors = FactorScorer(4, mask, 5)
            built = Completion.build(factors, vectors, [gold.n])
            completion = Completion(factors, built.table.detach().requires_grad_(True), built.base)
            search_completion = completion.detached()
        settings = GlobalSettings(3, "max_violation" if i % 2 else "early", loss=loss, restart=True, scores=scores)
        search = GlobalSearch(Layout(system, width, mask), oracle, scorer, table.detach(), [gold], [gold.n], settings,
                              search_completion)  # fmt: skip
        rec = search.run()
        value = global_loss(scorer, table, rec, loss, completion)
        want = 0.0
        with torch.no_grad():
            for u in rec.updates:
                score = {}
                for node in {u.pos, u.neg, *u.beam}:
                    root, actions = search.tree.derivation(node)
                    start = search.layout.to_config(search.tree.restart_rows[root], 0)
                    score[node] = derivation_score(system, scorer, table, width, start, actions, scores == "local")
                    if completion is not None:
                        end = start.copy()
                        for a in actions:
                            system.apply(end, a)
                        score[node] += reference_score(completion, complete_factors(system, end, mask), 0)
                        score[node] -= reference_score(completion, complete_factors(system, start, mask), 0)
                if loss == "margin":
                    want += max(0.0, 1 + score[u.neg] - score[u.pos]) if u.violation else 0.0
                else:
                    others = [score[b] for b in u.beam if b != u.pos]
                    want += float(torch.logsumexp(torch.tensor([score[u.pos], *others]), 0)) - score[u.pos]
        assert float(value.detach()) == pytest.approx(want, rel=1e-4, abs=1e-4)
        value.backward()
        assert table.grad is not None and float(table.grad.abs().sum()) > 0
        if completion is not None and value.requires_grad:
            assert completion.table.grad is not None and float(completion.table.grad.abs().sum()) > 0
