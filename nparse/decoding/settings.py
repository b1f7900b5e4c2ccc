"""How to decode: one value shared by the Python API, the parse CLI and the trainer's evaluation.

A decoder name is normalised in one place: ``greedy`` is the beam search with one item, ``beam``
keeps ``beam_size`` items, ``mst`` decodes the completion model's first-order factor.

``scores`` says what a beam adds up (see ``beam.beam_search``): ``local`` (log-softmax over the
legal transitions, divided by ``temperature``), ``raw`` (the scorer's scores, as global training
with ``trainer.global_scores=raw`` optimises them) or ``auto``: what the model was trained on
(raw for ``trainer=global`` with raw global scores, local otherwise). ``temperature`` None is
the model's own: fitted on dev for a greedily trained model (``training/calibration.py``), 1 for
a globally trained one (its training set the scale). ``for_model`` resolves both from a
model's config and checkpoint.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Mapping

from ..config import Config, DecoderConfig

DECODERS = ("greedy", "beam", "mst")
SCORES = ("auto", "local", "raw")


@dataclass(frozen=True)
class DecodeSettings:
    decoder: str = "beam"  # "beam" (greedy when beam_size is 1) or "mst" after ``normalised``
    beam_size: int = 1
    nbest: int = 1
    batch_size: int = 512  # beam items parsed together: batch_size // beam_size sentences (``sentences_per_batch``)
    batch_tokens: int = 0  # and at most this many padded tokens per batch (0: no limit)
    scores: str = "auto"  # what a beam sums: local, raw or auto (after ``for_model``: local or raw)
    temperature: float | None = None  # of local scores; None: the model's fitted one

    @property
    def sentences_per_batch(self) -> int:
        """Sentences parsed together: ``batch_size`` beam items, so a beam of K takes
        batch_size // K sentences (at least one). On one CPU thread 512-1,024 sentences parsed
        fastest greedily, and 1,024 items (128 sentences) with a beam of 8 (``docs/experiments/precision.md``)."""
        return max(1, self.batch_size // self.beam_size) if self.decoder == "beam" else self.batch_size

    @classmethod
    def from_config(cls, decoder: DecoderConfig | None) -> "DecodeSettings":
        """The settings of a ``decoder`` config group (a model's training config), normalised;
        without one (a model built in code), the defaults above."""
        if decoder is None:
            return cls().normalised()
        return cls(
            decoder=decoder.name,
            beam_size=decoder.beam_size,
            batch_size=decoder.batch_size,
            batch_tokens=decoder.batch_tokens,
            scores=decoder.scores,
            temperature=decoder.temperature,
        ).normalised()

    def for_model(self, config: Config | None, calibration: Mapping[str, Any] | None) -> "DecodeSettings":
        """``auto`` scores and an unset temperature made concrete for a model, from its training
        config (``trainer.name``) and the calibration saved in its checkpoint."""
        scores = self.scores
        if scores == "auto":  # as the model was trained
            globally_raw = config is not None and config.trainer.is_global and config.trainer.global_scores == "raw"
            scores = "raw" if globally_raw else "local"
        temperature = self.temperature
        if temperature is None:  # global training on local scores set the scale at T = 1
            fitted = (calibration or {}).get("temperature") if self.reads_calibration(config) else None
            temperature = float(fitted or 1.0)
        return replace(self, scores=scores, temperature=temperature)

    def reads_calibration(self, config: Config | None) -> bool:
        """Whether ``for_model`` takes the temperature fitted on dev: local scores of a greedily
        trained model with no temperature asked for."""
        if self.temperature is not None or self.scores == "raw":
            return False
        return config is None or not config.trainer.is_global

    @property
    def beam_temperature(self) -> float | None:
        """What ``beam_search`` takes: the temperature of local scores, None for raw ones."""
        if self.scores == "raw":
            return None
        return 1.0 if self.temperature is None else self.temperature

    def override(self, **changes: Any) -> "DecodeSettings":
        """These settings with the given keys changed (None keeps the current value), normalised."""
        return replace(self, **{k: v for k, v in changes.items() if v is not None}).normalised()

    def normalised(self) -> "DecodeSettings":
        """``greedy`` as the one-item beam; values that cannot work refused before any sentence is read."""
        if self.decoder not in DECODERS:
            raise ValueError(f"decoder={self.decoder}: choose greedy, beam or mst")
        settings = self
        if self.decoder == "greedy":
            settings = replace(self, decoder="beam", beam_size=1)
        if settings.decoder == "mst" and settings.nbest != 1:
            raise ValueError(f"nbest={settings.nbest}: decoder=mst gives one tree per sentence")
        check_beam(int(settings.beam_size), int(settings.nbest))
        if settings.scores not in SCORES:
            raise ValueError(f"decoder.scores={settings.scores}: choose auto, local or raw")
        if settings.temperature is not None and not settings.temperature > 0:
            raise ValueError(f"decoder.temperature={settings.temperature}: must be positive (or null: the model's)")
        if settings.batch_size < 1:
            raise ValueError(f"batch_size={settings.batch_size}: must be at least 1")
        if settings.batch_tokens < 0:
            raise ValueError(f"batch_tokens={settings.batch_tokens}: must be 0 (no limit) or more")
        return settings


def check_beam(beam_size: int, nbest: int) -> None:
    """Refuse a beam width or n-best count that cannot work, before any sentence is read."""
    if beam_size < 1:
        raise ValueError(f"beam_size must be at least 1, not {beam_size}")
    if not 1 <= nbest <= beam_size:
        raise ValueError(
            f"nbest={nbest}: must be between 1 and beam_size={beam_size} (the beam holds the trees; set beam_size={max(nbest, 1)} or more)"
        )
