"""The network a run trains: a new one from the config, or a trained one to fine-tune."""

from __future__ import annotations

import logging
from dataclasses import asdict, replace
from pathlib import Path

import torch

from .. import checkpoint
from ..checkpoint import model_from_state
from ..config import Config, model_config
from ..io.conllu import Sentence
from ..io.data import Vocabs
from ..models.encoder import extend_with_pretrained
from ..models.parser import ParserModel
from ..paths import resolve_path
from ..systems import TransitionSystem
from .settings import system_options

log = logging.getLogger("nparse.train")


def new_model(cfg: Config, system: TransitionSystem, train: list[Sentence], device: torch.device) -> ParserModel:
    """A network of the config's sizes with vocabularies of the training sentences (and the
    pretrained vectors of ``model.pretrained``)."""
    mc = cfg.model
    morphology = mc.analysis or mc.feats_dim > 0
    vocabs = Vocabs.build(train, lowercase=mc.lowercase, morphology=morphology, lemma_max_added=mc.lemma_max_added)
    pretrained = None
    if mc.pretrained:
        pretrained = extend_with_pretrained(
            vocabs, str(resolve_path(mc.pretrained, "model.pretrained")), mc.pretrained_max
        )
        mc = replace(mc, word_dim=pretrained.shape[1])
    return ParserModel(vocabs, system, mc, pretrained).to(device)


def fine_tuned_model(path: Path, cfg: Config, system: TransitionSystem, device: torch.device) -> ParserModel:
    """A trained model's weights, vocabularies and sizes (``trainer.init_from``); a completion
    model the config asks for and the checkpoint lacks starts new, as ``trainer.completion_init``
    says: ``zero`` (default) zeroes its output weights, so every factor scores 0 and the
    fine-tuned model starts as exactly the beam model it came from, the factors growing from
    there (randomly initialised factors first cost 2-5 dev LAS, and 5 epochs did not win it back:
    README); ``random`` keeps the random output weights of a model trained from scratch."""
    state = checkpoint.load(path, device)
    if state["system"] != system_options(cfg):
        raise ValueError(
            f"trainer.init_from={path}: the checkpoint's system {state['system']} differs from "
            f"system={system_options(cfg)}; fine-tune with the same system and options"
        )
    wanted = cfg.model
    completion = wanted.completion
    saved = model_config(state["model_options"])
    if completion.factors and completion != saved.completion:
        # The completion model is the part being fine-tuned: the config's, initialised fresh.
        model = ParserModel(Vocabs.from_state(state["vocabs"]), system, replace(saved, completion=completion))
        weights = {k: v for k, v in state["model"].items() if not k.startswith("completion.")}
        missing, unexpected = model.load_state_dict(weights, strict=False)
        if unexpected or any(not k.startswith("completion.") for k in missing):
            raise ValueError(f"trainer.init_from={path}: weights do not fit the model ({missing}, {unexpected})")
        start = cfg.trainer.completion_init  # zero or random: check_settings
        if start == "zero":
            assert model.completion is not None
            with torch.no_grad():
                model.completion.out.zero_()
                model.completion.out_bias.zero_()
        model.to(device)
        log.info(
            "completion model %s: new, %s",
            completion.factors,
            "zero output weights" if start == "zero" else "at random",
        )
    else:
        model = model_from_state(state, device, path)
    have = asdict(model.options)
    ignored = {k for k, v in asdict(wanted).items() if have[k] != v}
    log.info("initialised from %s (epoch %d)", path, state.get("epoch", 0))
    if ignored:
        log.warning("model.%s: taken from the checkpoint, not the config", ", model.".join(sorted(ignored)))
    return model


def parameter_groups(model: ParserModel, completion_lr: float | None) -> list[dict]:
    """The optimizer's parameter groups: the factor scorers of a completion model at their own
    learning rate (``trainer.completion_lr``) when one is set, everything else at ``trainer.lr``.
    Fine-tuning a greedy model starts the factor scorers at random, where a fine-tuning rate
    for the rest would leave them barely trained."""
    if completion_lr is not None and completion_lr <= 0:
        raise ValueError(f"trainer.completion_lr={completion_lr}: give a learning rate > 0, or null for trainer.lr")
    if not completion_lr or model.completion is None:
        return [{"params": list(model.parameters())}]
    factors = list(model.completion.parameters())
    ids = {id(p) for p in factors}
    return [
        {"params": [p for p in model.parameters() if id(p) not in ids]},
        {"params": factors, "lr": float(completion_lr)},
    ]


def starting_model(
    cfg: Config, system: TransitionSystem, train: list[Sentence], device: torch.device,
    state: dict | None = None, path: Path | None = None,
) -> ParserModel:  # fmt: skip
    """The network a run starts from: a resumed run's (``state``, loaded from its last.pt at
    ``path``), a trained one to fine-tune (``trainer.init_from``), or a new one."""
    if state is not None:
        return model_from_state(state, device, path)
    if cfg.trainer.init_from:
        return fine_tuned_model(resolve_path(cfg.trainer.init_from, "trainer.init_from"), cfg, system, device)
    return new_model(cfg, system, train, device)
