"""Settings checks: values and combinations of the training config that cannot work stop the run
at once, with the keys named (not after loading data, not as a traceback)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import torch

from ..config import GLOBAL_ONLY, Config, TrainerConfig
from ..io.data import Example
from ..runtime import choose_precision, pick_device
from .averaging import check_average
from .schedule import check_schedule
from ..systems import Oracle, StaticOracle
from ..systems.adapters.factors import factor_mask
from .updates import RESTART_FROM, FullUpdate, GlobalSettings


def system_options(cfg: Config) -> dict[str, Any]:
    """The ``make_system`` keywords of the config (what a checkpoint keeps as ``system``)."""
    return asdict(cfg.system)


def global_settings(cfg: Config, oracle: Oracle) -> GlobalSettings:
    """The beam-training settings of ``trainer=global`` (names checked by ``GlobalSettings``);
    combinations that make no sense stop here."""
    tc = cfg.trainer
    for key in GLOBAL_ONLY:
        if key not in ("completion_lr",) and getattr(tc, key) is None:
            raise ValueError(f"trainer.{key} is not set: trainer=global needs it (conf/trainer/global.yaml)")
    settings = GlobalSettings(
        beam_size=int(tc.beam_size),  # type: ignore[arg-type]
        update=str(tc.update),
        loss=str(tc.global_loss),
        restart=bool(tc.restart),
        restart_from=str(tc.restart_from),
        scores=str(tc.global_scores),
        positive=str(tc.positive),
    )
    if settings.beam_size < 1:
        raise ValueError(f"trainer.beam_size={settings.beam_size}: must be at least 1")
    where = f"oracle={oracle.name} (system={oracle.system.name})"
    if settings.restart and isinstance(oracle, StaticOracle):
        raise ValueError(
            f"trainer.restart=true with {where}: a static oracle is defined only along its own "
            "sequence, so there is nothing to restart from; use a dynamic or non-deterministic oracle"
        )
    if settings.restart and not settings.update_strategy.restartable:
        raise ValueError(
            f"trainer.restart=true with trainer.update={settings.update}: a full update decodes to the end, "
            "nothing is left to restart"
        )
    explores = RESTART_FROM[settings.restart_from].keeps_negative
    if explores and not settings.restart:
        raise ValueError(f"trainer.restart_from={settings.restart_from} needs trainer.restart=true")
    if explores and not oracle.complete:
        raise ValueError(
            f"trainer.restart_from={settings.restart_from} with {where}: restarting from the negative example "
            "needs an oracle defined in every configuration (a dynamic oracle)"
        )
    return settings


def check_reachable(settings: GlobalSettings | None, examples: list[Example], oracle: Oracle) -> None:
    """The softmax loss with full updates is the likelihood of the gold derivation: refuse it when
    some training tree cannot be built by the system (its correct derivations end elsewhere)."""
    if settings is None or settings.loss != "softmax" or not isinstance(settings.update_strategy, FullUpdate):
        return
    missing = [e.sent.name for e in examples if not oracle.reaches(e.gold)]
    if missing:
        raise ValueError(
            f"trainer.global_loss=softmax with trainer.update=full: {len(missing)} training trees "
            f"({', '.join(missing[:3])}{', ...' if len(missing) > 3 else ''}) cannot be built by "
            f"system={oracle.system.name}, so the gold derivation is unreachable; use trainer.update=early "
            "or max_violation, or a system that builds every tree"
        )


def check_completion(cfg: Config, settings: GlobalSettings | None) -> None:
    """The completion model is trained by the global loss; decoder=mst needs its arc factor."""
    factors = cfg.model.completion.factors
    mask = factor_mask(factors)
    if mask and settings is None:
        raise ValueError(
            f"model.completion.factors={factors} needs trainer=global: the factors are trained "
            "with the global loss of beam training (e.g. +exp=completion_2a)"
        )
    if cfg.decoder.name == "mst" and not mask & 1:
        raise ValueError(
            "decoder=mst decodes the completion model's first-order factor: set "
            "model.completion.factors to a list with 1 (e.g. [1,2a]) and trainer=global"
        )


# (key, smallest value) of the integer settings checked before anything is loaded.
INTEGER_SETTINGS = (
    ("trainer.epochs", 1), ("trainer.patience", 0), ("trainer.plateau", 0), ("trainer.final_decay", 0), ("trainer.batch_size", 1), ("trainer.batch_tokens", 0), ("trainer.seed", None),
    ("trainer.log_every", 1), ("trainer.checkpoint_every", 0), ("trainer.threads", 0), ("trainer.warmup", 0),
    ("decoder.batch_size", 1), ("decoder.batch_tokens", 0), ("decoder.beam_size", 1),
    ("data.max_train_sentences", 1),
)  # fmt: skip


def check_settings(cfg: Config) -> None:
    """Values that cannot work stop the run at once, with the key named (not after loading data,
    not as a traceback)."""
    if not cfg.data.train:
        raise ValueError("data.train is not set: give a CoNLL-U file (data.train=PATH) or a data preset (data=en_ewt)")
    for key, least in INTEGER_SETTINGS:
        group, name = key.split(".")
        value = getattr(getattr(cfg, group), name)
        if value is None and key in ("data.max_train_sentences",):
            continue
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"{key}={value}: expected an integer")
        if least is not None and value < least:
            raise ValueError(f"{key}={value}: must be at least {least}")
    tc = cfg.trainer
    if not tc.is_global:
        for key in GLOBAL_ONLY:
            if getattr(tc, key) is not None:
                raise ValueError(
                    f"trainer.{key}={getattr(tc, key)} is a beam-training setting: add trainer=global "
                    "(or use a beam preset such as +exp=beam_maxv)"
                )
    if tc.distill_from and tc.is_global:
        raise ValueError(
            "trainer.distill_from with trainer=global: distillation trains greedily (a beam model can start from the result)"
        )
    if tc.distill_heads and not tc.distill_from:
        raise ValueError("trainer.distill_heads=true needs a teacher: trainer.distill_from=PATH (or PATH1,PATH2,...)")
    if not tc.distill_weight >= 0:
        raise ValueError(f"trainer.distill_weight={tc.distill_weight}: must be at least 0")
    if tc.distill_cache_mb < 0:
        raise ValueError(f"trainer.distill_cache_mb={tc.distill_cache_mb}: must be at least 0 (0: no cache)")
    check_schedule(tc.lr_schedule, tc.warmup)
    check_average(tc.average, tc.average_decay)
    if not tc.lr > 0:
        raise ValueError(f"trainer.lr={tc.lr}: expected a positive number")
    if tc.final_decay_lr is not None and not tc.final_decay_lr > 0:
        raise ValueError(
            f"trainer.final_decay_lr={tc.final_decay_lr}: expected a positive number (or null: half of trainer.lr)"
        )
    if tc.plateau and not 0 < tc.plateau_factor < 1:
        raise ValueError(f"trainer.plateau_factor={tc.plateau_factor}: must be between 0 and 1 (a cut of the rate)")
    if tc.is_global and tc.completion_init not in ("zero", "random"):
        raise ValueError(f"trainer.completion_init={tc.completion_init}: expected zero or random")
    if cfg.model.segmenter:
        check_segmenter(cfg.model.segmenter_epochs)


def check_segmenter(epochs: int) -> None:
    """``model.segmenter=true`` needs UDPipe 1: say so before the parser trains for hours."""
    if epochs < 1:
        raise ValueError(f"model.segmenter_epochs={epochs}: must be at least 1")
    try:
        import ufal.udpipe  # noqa: F401
    except ImportError:
        raise ValueError('model.segmenter=true needs UDPipe 1: pip install -e ".[segmenter]"') from None


def device_and_precision(tc: TrainerConfig, local_rank: int | None) -> tuple[torch.device, tuple[str, str]]:
    """The device of ``trainer.device`` (rank ``local_rank``'s GPU under DDP) and the precision
    of ``trainer.precision`` for it, with why (``runtime.choose_precision``): fp16 needs a GPU's
    loss scaling, bf16 and fp32 run anywhere, auto picks."""
    device = pick_device(tc.device)
    if device.type == "cuda" and local_rank is not None:
        device = torch.device("cuda", local_rank)
    try:
        return device, choose_precision(tc.precision, device)
    except ValueError as err:
        raise ValueError(f"trainer.{err}") from None
