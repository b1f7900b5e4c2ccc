"""Types of the training configuration: Hydra structured configs for the groups of ``conf/``.

Each group's yaml files name their group's ``schema`` first in their defaults list, so Hydra
checks every value and every command-line override against these types when it composes the
config: ``trainer.epochs=abc`` or ``model.dropout=high`` stop before anything runs, with the key
named, and ``trainer.lr=1`` arrives as a float. The values themselves (and the comments that
explain them) stay in the yaml files, one place for each; the fields here have no defaults
(``MISSING``) except the beam-training keys, which only ``trainer=global`` sets.

The ``oracle`` group has no schema: its keys are the options of the chosen oracle's
constructor, checked against its signature when the oracle is built. Rules that relate several
keys live in ``training/settings.py`` as functions with messages that name the keys.
Import this module before composing (``nparse.train``, tools and tests do): importing it
registers the schemas.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional

from hydra.core.config_store import ConfigStore
from omegaconf import MISSING


@dataclass
class DataConfig:
    name: str = MISSING
    lang: str = MISSING
    train: Optional[str] = MISSING
    dev: Optional[str] = MISSING
    test: Optional[str] = MISSING
    max_train_sentences: Optional[int] = MISSING
    projective_only: bool = MISSING


@dataclass
class CompletionConfig:
    factors: List[str] = field(default_factory=list)  # kinds are names ("1", "2a", ...): 1 arrives as "1"
    hidden: int = MISSING
    arc_loss: bool = MISSING


@dataclass
class ModelConfig:
    word_dim: int = MISSING
    upos_dim: int = MISSING
    xpos_dim: int = MISSING
    char_dim: int = MISSING
    char_hidden: int = MISSING
    char_max: int = MISSING
    char_cache: int = MISSING
    lstm_dim: int = MISSING
    lstm_layers: int = MISSING
    lstm_dropout: float = MISSING
    dropout: float = MISSING
    word_dropout: float = MISSING
    hidden: int = MISSING
    label_hidden: int = MISSING
    tagger: bool = MISSING
    tagger_hidden: int = MISSING
    segmenter: bool = False
    segmenter_epochs: int = 20
    lowercase: bool = MISSING
    pretrained: Optional[str] = MISSING
    pretrained_max: int = MISSING
    completion: CompletionConfig = field(default_factory=CompletionConfig)


@dataclass
class SystemConfig:
    name: str = MISSING
    root: str = MISSING
    modifiers: bool = MISSING


@dataclass
class TrainerConfig:
    name: str = MISSING
    epochs: int = MISSING
    batch_size: int = MISSING
    batch_tokens: int = MISSING
    lr: float = MISSING
    betas: List[float] = MISSING
    clip: float = MISSING
    lr_schedule: str = MISSING
    warmup: int = MISSING
    average: str = MISSING
    average_decay: float = MISSING
    local_loss: str = MISSING
    transition_loss_weight: float = MISSING
    label_loss_weight: float = MISSING
    seed: int = MISSING
    device: str = MISSING
    precision: str = MISSING
    resume: Optional[str] = MISSING
    checkpoint_every: int = MISSING
    init_from: Optional[str] = MISSING
    log_every: int = MISSING
    threads: int = MISSING
    # Beam training (trainer=global); null with greedy training, where setting one is an error.
    beam_size: Optional[int] = None
    update: Optional[str] = None
    global_loss: Optional[str] = None
    restart: Optional[bool] = None
    restart_from: Optional[str] = None
    global_scores: Optional[str] = None
    positive: Optional[str] = None
    completion_lr: Optional[float] = None
    completion_init: Optional[str] = None
    local_loss_weight: Optional[float] = None


@dataclass
class DecoderConfig:
    name: str = MISSING
    beam_size: int = MISSING
    batch_size: int = MISSING
    batch_tokens: int = MISSING
    scores: str = MISSING
    temperature: Optional[float] = MISSING


SCHEMAS = {"data": DataConfig, "model": ModelConfig, "system": SystemConfig, "trainer": TrainerConfig,
           "decoder": DecoderConfig}  # fmt: skip
GLOBAL_ONLY = (
    "beam_size", "update", "global_loss", "restart", "restart_from", "global_scores", "positive", "completion_lr",
    "completion_init", "local_loss_weight",
)  # fmt: skip


def register() -> None:
    """Store every group's schema as ``<group>/schema`` (idempotent)."""
    store = ConfigStore.instance()
    for group, node in SCHEMAS.items():
        store.store(group=group, name="schema", node=node)


register()
