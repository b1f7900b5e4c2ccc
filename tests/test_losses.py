"""Greedy training's local losses equal their definitions on recorded steps."""

from __future__ import annotations

import math

import pytest
import torch

from nparse.training.local import Steps
from nparse.training.losses import LOCAL_LOSSES

from .conftest import compose_config, model_config


class TableScorer:
    """A scorer whose row r scores are the table's row r (rows name the steps)."""

    def scores(self, table: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
        return table[rows[:, 0]]


def steps_of(legal, correct) -> Steps:
    return Steps(rows=[[i] for i in range(len(legal))], legal=legal, correct=correct)


def test_xent_is_the_marginal_likelihood_of_the_correct_set():
    table = torch.tensor([[2.0, 0.5, -1.0, 3.0], [0.0, 1.0, 1.0, 0.0], [1.0, 2.0, 0.0, 0.0]], requires_grad=True)
    legal = [[True, True, True, False], [True, True, True, True], [True, False, False, False]]
    correct = [[False, True, True, False], [True, False, False, False], [True, False, False, False]]
    loss = LOCAL_LOSSES["xent"](TableScorer(), table, steps_of(legal, correct))
    # Step 0: P(correct) = (e^0.5 + e^-1) / (e^2 + e^0.5 + e^-1); the illegal 3.0 is out.
    want0 = -math.log((math.exp(0.5) + math.exp(-1)) / (math.exp(2) + math.exp(0.5) + math.exp(-1)))
    want1 = -math.log(1 / (1 + 2 * math.e + 1))
    # Step 2 has no choice (one legal transition): it teaches nothing and adds nothing.
    assert math.isclose(loss.item(), want0 + want1, rel_tol=1e-6)
    loss.backward()
    assert table.grad[0, 1] < 0 and table.grad[0, 0] > 0 and table.grad[0, 3] == 0  # raise the correct, lower the wrong
    assert torch.all(table.grad[2] == 0)


def test_hinge_is_best_correct_against_best_wrong():
    table = torch.tensor([[2.0, 0.5, -1.0], [0.0, 3.0, 1.0]], requires_grad=True)
    legal = [[True, True, True], [True, True, True]]
    correct = [[False, True, True], [False, True, False]]
    loss = LOCAL_LOSSES["hinge"](TableScorer(), table, steps_of(legal, correct))
    assert math.isclose(loss.item(), (1 - 0.5 + 2.0) + max(0.0, 1 - 3.0 + 1.0))


def _model_and_batch(oracle_name: str):
    """A small untrained arc-hybrid model and a batch of 12 EWT dev sentences with their golds."""
    from nparse.io.conllu import read_conllu
    from nparse.io.data import Vocabs, collate, encode
    from nparse.models.parser import ParserModel
    from nparse.systems import make_oracle, make_system

    from .conftest import EWT_DEV
    from .test_beam import SMALL

    sents = read_conllu(EWT_DEV)[:12]
    system = make_system("archybrid")
    oracle = make_oracle(system, oracle_name)
    torch.manual_seed(0)
    model = ParserModel(Vocabs.build(sents), system, model_config(**SMALL)).eval()
    examples = [encode(s, model.vocabs) for s in sents]
    for e in examples:
        e.gold = oracle.prepare(e.sent.heads)
    return oracle, model, collate([e for e in examples if e.gold is not None])


def test_loss_weights_scale_the_transition_and_label_losses():
    """trainer.transition_loss_weight and trainer.label_loss_weight: the batch loss is their
    weighted sum (checked against the two losses computed apart, same oracle walk)."""
    import random

    from nparse.training.objectives import build_objective

    oracle, model, batch = _model_and_batch("static")
    values = {}
    for tw, lw in ((1.0, 0.0), (0.0, 1.0), (2.0, 0.5)):
        cfg = compose_config("oracle=static", f"trainer.transition_loss_weight={tw}", f"trainer.label_loss_weight={lw}")
        loss, _, _ = build_objective(cfg, oracle, random.Random(0)).batch_loss(model, batch)
        values[(tw, lw)] = loss.item()
    transition, label = values[(1.0, 0.0)], values[(0.0, 1.0)]
    assert transition > 0 and label > 0
    assert math.isclose(values[(2.0, 0.5)], 2 * transition + 0.5 * label, rel_tol=1e-5)
    bad = compose_config("oracle=static", "trainer.label_loss_weight=-1")
    with pytest.raises(ValueError, match="trainer.label_loss_weight=-1.0: must be at least 0"):
        build_objective(bad, oracle, random.Random(0))


def test_local_loss_weight_adds_the_greedy_loss_to_the_global_one():
    """trainer.local_loss_weight under trainer=global: the batch loss is the global loss plus the
    weighted greedy loss of the same batch (checked against the two computed apart)."""
    import random

    from nparse.config import Config
    from nparse.training.objectives import build_objective

    oracle, model, batch = _model_and_batch("dynamic")

    def loss_of(name: str, weight: float | None) -> float:
        keys = ["oracle.explore_p=0.0", "trainer.label_loss_weight=0.0"]
        if name == "global":
            keys += ["trainer=global", "trainer.beam_size=4", "trainer.update=early", "trainer.global_loss=softmax",
                     "trainer.global_scores=raw", f"trainer.local_loss_weight={weight or 0.0}"]  # fmt: skip
        saved = compose_config(*keys).to_dict()
        if weight is None:  # as configs of runs older than the key
            del saved["trainer"]["local_loss_weight"]
        loss, _, _ = build_objective(Config.from_dict(saved), oracle, random.Random(0)).batch_loss(model, batch)
        return loss.item()

    global_only, greedy = loss_of("global", 0.0), loss_of("greedy", 0.0)
    assert global_only > 0 and greedy > 0
    assert math.isclose(loss_of("global", None), global_only)  # configs of older runs lack the key
    assert math.isclose(loss_of("global", 0.5), global_only + 0.5 * greedy, rel_tol=1e-5)
    with pytest.raises(ValueError, match="trainer.local_loss_weight=-1.0: must be at least 0"):
        loss_of("global", -1)
