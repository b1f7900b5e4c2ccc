"""The configuration as typed dataclasses: what every module of nparse reads.

A run's config is composed by Hydra from ``conf/`` (each group's yaml names its schema first,
``config_schema.py`` registers them, so values and overrides are type-checked at composition)
and converted once into a ``Config`` (``Config.from_dict``); a checkpoint's saved config is
converted the same way after ``upgrade_config`` has filled the keys that older releases did not
write. The values and their comments live in the yaml files, one place for each: the fields here
have no defaults (``MISSING``), except the keys only ``trainer=global`` sets (null otherwise),
the segmenter's and the oracle's training keys (absent from static oracles).

The ``oracle`` group is open: besides its name and the exploration keys, its keys are the
options of the chosen oracle's constructor (``OracleConfig.options``), checked against its
signature when the oracle is built.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass, field
from typing import Any, List, Mapping, Optional

MISSING: Any = "???"  # OmegaConf's mark of a value the yaml files must give


@dataclass
class DataConfig:
    name: str = MISSING
    lang: str = MISSING
    train: Optional[str] = MISSING
    dev: Optional[str] = MISSING
    test: Optional[str] = MISSING
    max_train_sentences: Optional[int] = MISSING
    projective_only: bool = MISSING
    treebank: Optional[str] = MISSING  # a UD code found under ud_root (conf/data/ud.yaml), or null
    ud_root: Optional[str] = MISSING


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
    char_kind: str = "lstm"
    char_max: int = MISSING
    char_cache: int = MISSING
    suffix_dim: int = 0
    suffix_len: int = 4
    suffix_buckets: int = 16384
    lexicon: Optional[str] = None
    lexicon_dim: int = 0
    lexicon_buckets: int = 16384
    lstm_dim: int = MISSING
    lstm_layers: int = MISSING
    lstm_dropout: float = MISSING
    dropout: float = MISSING
    word_dropout: float = MISSING
    hidden: int = MISSING
    label_hidden: int = MISSING
    tagger: bool = MISSING
    tagger_hidden: int = MISSING
    analysis: bool = False
    tag_layer: int = 0
    tag_feed: int = 0
    parser_reads_tag_layer: bool = False
    feats_factored: bool = False
    feats_dim: int = 0
    lemma_max_added: int = 64
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
class OracleConfig:
    name: str = MISSING
    explore_p: float = 0.0  # static oracles have no exploration
    explore_from_epoch: int = 1
    options: dict[str, Any] = field(default_factory=dict)  # the oracle constructor's own options


@dataclass
class TrainerConfig:
    name: str = MISSING
    epochs: int = MISSING
    patience: int = MISSING
    plateau: int = MISSING
    plateau_factor: float = MISSING
    final_decay: int = 0
    final_decay_lr: Optional[float] = MISSING
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
    tag_loss_weight: float = 1.0
    seed: int = MISSING
    device: str = MISSING
    precision: str = MISSING
    resume: Optional[str] = MISSING
    checkpoint_every: int = MISSING
    init_from: Optional[str] = MISSING
    log_every: int = MISSING
    threads: int = MISSING
    distill_from: Optional[str] = MISSING
    distill_weight: float = MISSING
    distill_cache_mb: int = MISSING
    distill_heads: bool = False
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

    @property
    def is_global(self) -> bool:
        """Beam training (``trainer=global``)."""
        return self.name == "global"


@dataclass
class DecoderConfig:
    name: str = MISSING
    beam_size: int = MISSING
    batch_size: int = MISSING
    batch_tokens: int = MISSING
    scores: str = MISSING
    temperature: Optional[float] = MISSING


# The groups with a schema, by their key in the composed config.
SCHEMAS: dict[str, type] = {
    "data": DataConfig, "model": ModelConfig, "system": SystemConfig, "trainer": TrainerConfig,
    "decoder": DecoderConfig,
}  # fmt: skip
GLOBAL_ONLY = tuple(f.name for f in dataclasses.fields(TrainerConfig) if f.default is None)


@dataclass
class Config:
    """A run's whole configuration (``conf/config.yaml`` and its groups)."""

    data: DataConfig
    model: ModelConfig
    system: SystemConfig
    oracle: OracleConfig
    trainer: TrainerConfig
    decoder: DecoderConfig
    exp_name: str = "default"

    @classmethod
    def from_dict(cls, values: Mapping[str, Any]) -> "Config":
        """The typed config of a composed or saved one (a plain dict), upgraded first; a missing
        key, an unknown one or a value of the wrong type is refused with the key named."""
        values = upgrade_config(values)
        unknown = sorted(set(values) - {f.name for f in dataclasses.fields(cls)})
        if unknown:
            raise ValueError(f"config: unknown key {unknown[0]}")
        groups = {name: typed(kind, values.get(name), name) for name, kind in SCHEMAS.items()}
        return cls(
            **groups, oracle=oracle_config(values.get("oracle")), exp_name=str(values.get("exp_name", "default"))
        )

    @classmethod
    def composed(cls, cfg: Any) -> "Config":
        """The typed config of Hydra's composed one (a DictConfig; interpolations resolved)."""
        from omegaconf import OmegaConf

        return cls.from_dict(OmegaConf.to_container(cfg, resolve=True))  # type: ignore[arg-type]

    def to_dict(self) -> dict[str, Any]:
        """The plain dict a checkpoint and ``config.yaml`` keep (the oracle's options flat in
        its group, as in ``conf/oracle/``)."""
        out = dataclasses.asdict(self)
        oracle = out.pop("oracle")
        out["oracle"] = {k: oracle[k] for k in ("name", "explore_p", "explore_from_epoch")} | oracle["options"]
        return {k: out[k] for k in ("data", "model", "system", "oracle", "trainer", "decoder", "exp_name")}


def model_config(values: Mapping[str, Any]) -> ModelConfig:
    """The typed ``model`` group of a checkpoint's ``model_options`` (upgraded first)."""
    return typed(ModelConfig, upgrade_group("model", values), "model")


def oracle_config(values: Mapping[str, Any] | None) -> OracleConfig:
    if not isinstance(values, Mapping) or "name" not in values:
        raise ValueError("config: oracle.name is not set")
    own = {f.name for f in dataclasses.fields(OracleConfig)} - {"options"}
    options = {str(k): v for k, v in values.items() if k not in own}
    return typed(OracleConfig, {**{k: v for k, v in values.items() if k in own}, "options": options}, "oracle")


# -- older checkpoints -------------------------------------------------------------------------

# Keys that releases before 0.2 could leave out of a saved config, with the value that parses
# and trains as those releases did when the key was absent.
ADDED_KEYS: dict[str, dict[str, Any]] = {
    "data": {"lang": None, "max_train_sentences": None, "projective_only": False, "treebank": None, "ud_root": None},
    "model": {
        "char_kind": "lstm", "char_max": 50, "char_cache": 100_000, "suffix_dim": 0, "suffix_len": 4, "suffix_buckets": 16384, "lexicon": None, "lexicon_dim": 0, "lexicon_buckets": 16384, "tagger": False, "tagger_hidden": 100, "segmenter": False,
        "analysis": False, "tag_layer": 0, "tag_feed": 0, "parser_reads_tag_layer": False, "feats_factored": False, "feats_dim": 0, "lemma_max_added": 64,
        "segmenter_epochs": 20, "lowercase": True, "pretrained": None, "pretrained_max": 100_000,
        "completion": {"factors": [], "hidden": 100, "arc_loss": True},
    },
    "trainer": {
        "batch_tokens": 0, "lr_schedule": "constant", "warmup": 0, "average": "none", "average_decay": 0.999,
        "local_loss": "hinge", "transition_loss_weight": 1.0, "label_loss_weight": 1.0, "tag_loss_weight": 1.0, "precision": "fp32",
        "checkpoint_every": 0, "init_from": None, "threads": 0, "distill_from": None, "distill_weight": 1.0,
        "distill_cache_mb": 0, "distill_heads": False,
        "patience": 0, "plateau": 0, "plateau_factor": 0.5, "final_decay": 0, "final_decay_lr": None,
    },
    "decoder": {"name": "beam", "beam_size": 1, "batch_size": 1024, "batch_tokens": 0, "scores": "auto", "temperature": None},
}  # fmt: skip
# Beam-training keys added after trainer=global existed, as global runs without them trained.
ADDED_GLOBAL_KEYS: dict[str, Any] = {"global_scores": "raw", "positive": "prefix", "local_loss_weight": 0.0}


def upgrade_group(group: str, values: Mapping[str, Any] | None) -> dict[str, Any]:
    """One group of a saved config with the keys older releases did not write filled in."""
    out = dict(values or {})
    for key, value in ADDED_KEYS.get(group, {}).items():
        if key not in out:
            out[key] = dict(value) if isinstance(value, dict) else value
        elif isinstance(value, dict) and isinstance(out[key], Mapping):
            out[key] = {**value, **out[key]}
    return out


def upgrade_config(values: Mapping[str, Any]) -> dict[str, Any]:
    """A saved (or composed) config as the current release writes it: keys added since the
    checkpoint was written get the value that reproduces what its release did without them
    (``ADDED_KEYS``); a ``data.lang`` left out is the treebank name's prefix (``en_ewt`` ->
    ``en``). The one place that knows about older checkpoints."""
    out = {str(k): v for k, v in values.items()}
    for group in ADDED_KEYS:
        out[group] = upgrade_group(group, out.get(group))
    data = out["data"]
    if data.get("lang") is None:
        data["lang"] = str(data.get("name") or "en").split("_")[0]
    data.setdefault("name", "?")
    trainer = out["trainer"]
    if trainer.get("name") == "global":
        for key, value in ADDED_GLOBAL_KEYS.items():
            trainer.setdefault(key, value)
    return out


# -- typed values --------------------------------------------------------------------------------


def typed(kind: type, values: Any, where: str) -> Any:
    """An instance of dataclass ``kind`` from a mapping, every value checked against its field's
    type (ints are accepted for floats, as YAML writes 1 for 1.0)."""
    if not isinstance(values, Mapping):
        raise ValueError(f"config: {where} is not a group of keys ({type(values).__name__})")
    hints = typing.get_type_hints(kind)
    names = {f.name for f in dataclasses.fields(kind)}
    unknown = sorted(set(values) - names)
    if unknown:
        raise ValueError(f"config: {where}.{unknown[0]} is not a key of {where}")
    given = {}
    for f in dataclasses.fields(kind):
        key = f"{where}.{f.name}"
        if f.name not in values:
            if f.default is MISSING or (f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING):
                raise ValueError(f"config: {key} is missing")
            continue
        given[f.name] = value_of(hints[f.name], values[f.name], key)
    return kind(**given)


def value_of(hint: Any, value: Any, key: str) -> Any:
    """``value`` checked (and, for nested groups and lists, converted) to the type ``hint``."""
    if value == MISSING:
        raise ValueError(f"config: {key} is missing (???)")
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        options = typing.get_args(hint)
        if value is None and type(None) in options:
            return None
        hint = next(o for o in options if o is not type(None))
        origin = typing.get_origin(hint)
    if dataclasses.is_dataclass(hint):
        return typed(hint, value, key)  # type: ignore[arg-type]
    if origin in (list, List):
        if not isinstance(value, (list, tuple)):
            raise ValueError(f"config: {key}={value!r} is not a list")
        (item,) = typing.get_args(hint)
        if item is str:  # list items named in yaml may arrive as numbers (factor 1)
            return [str(v) for v in value]
        return [value_of(item, v, f"{key}[{i}]") for i, v in enumerate(value)]
    if origin in (dict, typing.Dict):
        return dict(value)
    if hint is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if hint in (str, int, float, bool) and (type(value) is not hint):
        raise ValueError(f"config: {key}={value!r} is not a {hint.__name__}")
    return value
