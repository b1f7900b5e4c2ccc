"""What the pipeline reads and calls of the parser it drives: ``api.Parser`` is one, and the
pipeline imports no front door (a spawned worker makes its own with the ``load`` it is given)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Protocol, Sequence

if TYPE_CHECKING:
    from ..decoding.decode import Parse
    from ..decoding.settings import DecodeSettings
    from ..io.conllu import Sentence


class DrivenParser(Protocol):
    """A loaded parser as ``parse_file`` and its workers use it."""

    model: Any  # the network (``model.device``: where it runs, which decides fork or spawn)
    config: Any  # its training config (None: built in code)
    calibration: dict | None  # the fitted temperature of local beam scores
    settings: DecodeSettings  # the decoding settings asked for when none are given
    lang: str  # the language of raw text
    precision: tuple[str, str]  # the precision it parses in, and why
    name: str  # its checkpoint's path, for messages

    @classmethod
    def load(
        cls,
        path: str | Path | Sequence[str | Path],
        device: str = "auto",
        threads: int | None = None,
        precision: str = "auto",
    ) -> DrivenParser:
        """The parser of a checkpoint (spawned workers make theirs with it)."""
        ...

    @property
    def segmenter(self) -> Callable[[str], list] | None:
        """The checkpoint's trained raw-text segmenter (None: spaCy's rules)."""
        ...

    def prepare(self) -> None:
        """Get ready to parse (character vectors, compiled decoder) before a fork."""
        ...

    def parse_nbest(
        self,
        sentences: Sequence[Sentence],
        *,
        beam_size: int | None = None,
        nbest: int = 1,
        batch_size: int | None = None,
        progress: bool = False,
        decoder: str | None = None,
        scores: str | None = None,
        temperature: float | None = None,
        batch_tokens: int | None = None,
    ) -> list[list[Parse]]:
        """The ``nbest`` best trees of every sentence, best first, in input order."""
        ...
