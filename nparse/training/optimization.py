"""One optimizer update per batch, and everything that shapes it: fused Adam over the parameter
groups, the rate schedule with its cuts on a dev plateau (``trainer.plateau``), fp16 loss
scaling, gradient clipping, the gradient all-reduce of data-parallel ranks, and weight averaging
(``trainer.average``). The trainer calls ``zero_grad``, ``backward`` and ``step``; a checkpoint
keeps ``state_dict``."""

from __future__ import annotations

import logging
from typing import Any, Sequence

import torch
from torch.autograd.graph import increment_version

from ..config import TrainerConfig
from ..io.data import length_batches
from ..models.parser import ParserModel
from .averaging import WeightAverage
from .distributed import Ranks, broadcast, sum_gradients
from .models import parameter_groups
from .patience import plateau_cuts
from .schedule import lr_schedule, refresh_rates

log = logging.getLogger("nparse.train")


class Updates:
    def __init__(self, model: ParserModel, tc: TrainerConfig, examples: Sequence[Any], world: int, precision: str):
        """``examples``: the training examples, batched ``world`` batches per update."""
        self.model, self.tc, self.precision = model, tc, precision
        # Updates per epoch, exactly (batch_tokens closes batches early; a rank takes one batch of
        # each group of world), so that a linear schedule reaches 0 at trainer.epochs, not before.
        lengths = [len(e) for e in examples]
        per_epoch = -(-len(length_batches(lengths, tc.batch_size, None, tc.batch_tokens)) // world)
        groups = parameter_groups(model, tc.completion_lr)
        beta1, beta2 = tc.betas
        # fused: one kernel per parameter group instead of a dozen calls per tensor (7% of a CPU epoch)
        self.optimizer = torch.optim.Adam(groups, lr=tc.lr, betas=(beta1, beta2), fused=True)
        self.weights = [p for group in groups for p in group["params"]]
        self.lr_scale = 1.0  # trainer.plateau_factor to the power of the cuts so far (set before each epoch)
        self.rates_set = False  # whether cut_on_plateau has set the rates of this process's first epoch
        self.epoch_start_lr: float = tc.lr  # saved with a mid-epoch last.pt
        self.scheduler = lr_schedule(
            self.optimizer, tc.lr_schedule, tc.warmup, per_epoch * tc.epochs, lambda: self.lr_scale
        )
        self.average = WeightAverage(model, tc.average, tc.average_decay)
        # fp16 gradients underflow without loss scaling; bf16 has float32's range and needs none.
        self.scaler = torch.amp.GradScaler(model.device.type, enabled=precision == "fp16")

    @property
    def lr(self) -> float:
        return self.optimizer.param_groups[0]["lr"]

    def zero_grad(self) -> None:
        self.optimizer.zero_grad(set_to_none=True)

    def backward(self, loss: torch.Tensor) -> None:
        self.scaler.scale(loss).backward()

    def step(self, ranks: Ranks) -> None:
        """Sum the ranks' gradients, clip, step, and advance the schedule and the average."""
        sum_gradients(self.model, ranks)
        if self.tc.clip:
            self.scaler.unscale_(self.optimizer)
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.tc.clip)
        self.scaler.step(self.optimizer)
        # The fused step leaves the weights' version counters as they were: the bf16 LSTM copies and
        # the character cache of evaluation are keyed on them (they kept epoch 1's weights).
        increment_version(self.weights)
        self.scaler.update()
        self.scheduler.step()
        self.average.update()

    def cut_on_plateau(self, history: list[dict], epoch: int, ranks: Ranks) -> None:
        """The rate for ``epoch``: cut by ``trainer.plateau_factor`` for every ``trainer.plateau``
        epochs without a dev LAS gain (``patience.plateau_cuts``; from the history, so a resumed
        run goes on at its rate); rank 0 decides."""
        tc = self.tc
        cuts = int(broadcast(plateau_cuts(history, tc.plateau) if ranks.main else 0, ranks))  # type: ignore[call-overload]
        scale = tc.plateau_factor**cuts
        changed = scale != self.lr_scale
        if changed or not self.rates_set:  # also at a resume: the saved rate may be from other settings
            self.lr_scale, self.rates_set = scale, True
            refresh_rates(self.scheduler)
        if changed:
            log.info(
                "epoch %d: learning rate %.3g (x%g: cut %d time%s, each after %d epochs without a dev LAS gain; trainer.plateau)",
                epoch, self.lr, scale, cuts, "s" * (cuts != 1), tc.plateau,
            )  # fmt: skip

    def state_dict(self) -> dict[str, Any]:
        state = {"optimizer": self.optimizer.state_dict(), "scheduler": self.scheduler.state_dict(),
                 "average": self.average.state_dict()}  # fmt: skip
        if self.scaler.is_enabled():  # fp16: the loss scale reached, so a resume skips no more updates
            state["scaler"] = self.scaler.state_dict()
        return state

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.optimizer.load_state_dict(state["optimizer"])
        if "scheduler" in state:
            self.scheduler.load_state_dict(state["scheduler"])
        self.average.load_state_dict(state.get("average"))
        if "scaler" in state and self.scaler.is_enabled():
            self.scaler.load_state_dict(state["scaler"])
