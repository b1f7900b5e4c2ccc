"""Weight averaging (``trainer.average``): the model evaluated and saved is an average of the
weights along training, not the last ones.

All three seed papers average (the averaged perceptron); for a network the usual forms are an
exponential moving average (``ema``, decay ``trainer.average_decay`` per update) and Polyak's
uniform average of every update of the run (``polyak``: the averaged perceptron's choice; in a
fine-tuning run, the average of its own updates). The average is kept in float32 beside the
weights; ``applied`` swaps it in for evaluation and for ``best.pt`` (so a loaded checkpoint *is*
the averaged model), and ``last.pt`` keeps both, so a resumed run goes on with the same average.
Buffers (none today besides parameters) are not averaged.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

import torch

AVERAGES = ("none", "ema", "polyak")


def check_average(kind: str, decay: float) -> None:
    """Refuse settings that cannot work, naming the keys (also before any data is read)."""
    if kind not in AVERAGES:
        raise ValueError(f"trainer.average={kind}: choose one of {', '.join(AVERAGES)}")
    if kind == "ema" and not 0.0 < decay < 1.0:
        raise ValueError(f"trainer.average_decay={decay}: must be between 0 and 1")


class WeightAverage:
    def __init__(self, model: torch.nn.Module, kind: str = "none", decay: float = 0.999):
        check_average(kind, decay)
        self.model, self.kind, self.decay = model, kind, decay
        self.updates = 0
        self.average: dict[str, torch.Tensor] = {}
        if kind != "none":
            self.average = {k: p.detach().float().clone() for k, p in model.named_parameters()}

    @property
    def active(self) -> bool:
        return self.kind != "none"

    @torch.no_grad()
    def update(self) -> None:
        """Fold the current weights in (after every optimizer step)."""
        if not self.active:
            return
        self.updates += 1
        # Polyak: the running mean of the weights after each update (the starting weights do
        # not count); EMA: decay towards the current weights.
        rate = 1.0 / self.updates if self.kind == "polyak" else 1.0 - self.decay
        for k, p in self.model.named_parameters():
            self.average[k].lerp_(p.detach().float(), rate)

    @contextmanager
    def applied(self) -> Iterator[None]:
        """The averaged weights in the model for the duration (evaluation, best.pt)."""
        if not self.active or self.updates == 0:
            yield
            return
        params = dict(self.model.named_parameters())
        saved = {k: p.detach().clone() for k, p in params.items()}
        with torch.no_grad():
            for k, p in params.items():
                p.copy_(self.average[k].to(p.dtype))
        try:
            yield
        finally:
            with torch.no_grad():
                for k, p in params.items():
                    p.copy_(saved[k])

    def state_dict(self) -> dict:
        return {"kind": self.kind, "decay": self.decay, "updates": self.updates, "average": self.average}

    def load_state_dict(self, state: dict | None) -> None:
        """Go on with a resumed run's average (a run resumed with another setting starts afresh)."""
        if not self.active or not state or state.get("kind") != self.kind:
            return
        self.updates = int(state["updates"])
        self.average = {k: v.float().clone() for k, v in state["average"].items()}
