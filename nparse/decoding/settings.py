"""How to decode: one value shared by the Python API, the parse CLI and the trainer's evaluation.

A decoder name is normalised in one place: ``greedy`` is the beam search with one item, ``beam``
keeps ``beam_size`` items, ``mst`` decodes the completion model's first-order factor.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Mapping

DECODERS = ("greedy", "beam", "mst")


@dataclass(frozen=True)
class DecodeSettings:
    decoder: str = "beam"  # "beam" (greedy when beam_size is 1) or "mst" after ``normalised``
    beam_size: int = 1
    nbest: int = 1
    batch_size: int = 1024  # sentences parsed together (times beam_size items)
    batch_tokens: int = 0  # and at most this many padded tokens per batch (0: no limit)

    @classmethod
    def from_config(cls, decoder: Mapping[str, Any] | None) -> "DecodeSettings":
        """The settings of a ``decoder`` config group (a model's training config), normalised."""
        decoder = decoder or {}
        return cls(
            decoder=str(decoder.get("name") or "beam"),
            beam_size=int(decoder.get("beam_size") or 1),
            batch_size=int(decoder.get("batch_size") or 1024),
            batch_tokens=int(decoder.get("batch_tokens") or 0),
        ).normalised()

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
        if settings.batch_size < 1:
            raise ValueError(f"batch_size={settings.batch_size}: must be at least 1")
        return settings


def check_beam(beam_size: int, nbest: int) -> None:
    """Refuse a beam width or n-best count that cannot work, before any sentence is read."""
    if beam_size < 1:
        raise ValueError(f"beam_size must be at least 1, not {beam_size}")
    if not 1 <= nbest <= beam_size:
        raise ValueError(f"nbest={nbest}: must be between 1 and beam_size={beam_size}")
