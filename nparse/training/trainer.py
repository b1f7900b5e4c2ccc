"""The trainer behind ``python -m nparse.train``: the epoch loop, calling the parts of a run built
from the typed config: where it starts and what stops it (``resume.py``), the data (``data.py``),
the network (``models.py``), the objective and its oracle (``objectives.py``), the updates with
their rate control, precision and averaging (``optimization.py``), the distillation teacher
(``distill.py``), evaluation (``evaluation.py``) and what it has done so far (``progress.py``).

Each run writes ``runs/<exp>/<date>_<time>/``: the resolved config (``config.yaml`` and Hydra's
``.hydra/``), TensorBoard events, ``last.pt`` (every epoch), ``best.pt`` (best dev LAS), dev and
test predictions, ``metrics.json`` and ``skipped.tsv`` (training sentences left out, and why).
"""

from __future__ import annotations

import json
import logging
import random
import time
from collections import Counter
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import torch
from omegaconf import OmegaConf
from tqdm import tqdm

from .. import checkpoint
from ..config import Config, TrainerConfig
from ..io.data import bucket_batches, collate
from ..runtime import set_threads
from ..systems import make_oracle, make_system
from .curves import epoch_line, epoch_stats, new_window, tensorboard, write_epoch, write_window
from .data import load_data
from .distill import teacher_of
from .distributed import NoWriter, Ranks, barrier, broadcast, gather_counters, total
from .evaluation import Evaluation
from .models import starting_model
from .objectives import build_objective, check_objective
from .optimization import Updates
from .patience import best_epoch, patience_exhausted, patience_note, warn_without_dev
from .progress import Progress
from .resume import (
    Preempted, StopControl, preempted, preempted_between, restore_rng, resumed_log, rng_state, start_point, stop_signals,
)  # fmt: skip
from .settings import check_settings, device_and_precision, system_options

log = logging.getLogger("nparse.train")


class Trainer:
    def __init__(self, cfg: Config, run_dir: Path, ranks: Ranks | None = None, overrides: list[str] | None = None):
        if not isinstance(cfg, Config):  # train.py converts Hydra's composed config once
            raise TypeError(
                f"Trainer takes the typed nparse.config.Config, not {type(cfg).__name__}: Config.composed(cfg)"
            )
        check_settings(cfg)
        start = start_point(cfg, run_dir, overrides)
        self.cfg = cfg = start.cfg
        tc = cfg.trainer
        self.ranks = ranks or Ranks()
        self.run_dir = start.resume.parent if start.resume else run_dir  # a resumed run goes on in its folder
        if self.ranks.main:
            run_dir.mkdir(parents=True, exist_ok=True)
        set_threads(tc.threads, log, "trainer.threads")
        self.control = StopControl(lambda: (self.progress.epoch, self.run_dir))
        device, (precision, why) = device_and_precision(tc, self.ranks.local if self.ranks.active else None)
        log.info("precision: %s (%s; trainer.precision=auto|fp32|bf16|fp16)", precision, why)
        self.rng = random.Random(tc.seed)
        torch.manual_seed(tc.seed)
        self.data = load_data(cfg)
        self.oracle = make_oracle(make_system(**system_options(cfg)), cfg.oracle.name, **cfg.oracle.options)
        check_objective(cfg, self.oracle)
        saved = checkpoint.load(start.resume, device, resume=True) if start.resume else None
        self.progress = Progress.saved(saved) if saved else Progress(start.preset)
        self.model = starting_model(cfg, self.system, self.data.train, device, saved, start.resume)
        self.log_handler = resumed_log(start, saved, self.run_dir, self.ranks.main) if saved else None
        self.objective = build_objective(cfg, self.oracle, self.rng, teacher_of(cfg, device))
        self.data.prepare(self.model.vocabs, self.oracle, self.run_dir, str(cfg.data.train), self.ranks.main)
        self.objective.check_examples(self.data.examples)
        self.updates = Updates(self.model, self.phase_settings(), self.data.examples, self.ranks.world, precision)
        self.model.set_precision(precision)
        if saved is not None:
            self.updates.load_state_dict(saved)
            restore_rng(self.rng, saved["rng"])
        self.evaluation = Evaluation(cfg, self.oracle, self.data, self.progress)
        self.writer = (
            tensorboard(self.run_dir, self.progress.step if saved else None) if self.ranks.main else NoWriter()
        )
        self.sync_weights()  # every rank starts from rank 0's weights

    system = property(lambda self: self.oracle.system)
    device = property(lambda self: self.model.device)
    precision = property(lambda self: self.updates.precision)
    train_examples = property(lambda self: self.data.examples)

    def epoch_order(self) -> list[list[int]]:
        """The epoch's batches (indices of training examples), shuffled by rank 0 and sent to every
        rank: exploration draws from each rank's generator on its own errors, so generators of
        their own would soon shuffle differently (sentences trained twice in an epoch, or never)."""
        order = None
        if self.ranks.main:
            tc = self.cfg.trainer
            index = {id(e): i for i, e in enumerate(self.data.examples)}
            batched = bucket_batches(self.data.examples, tc.batch_size, self.rng, tc.batch_tokens)
            order = [[index[id(e)] for e in b] for b in batched]
        return broadcast(order, self.ranks)  # type: ignore[return-value]

    def train_epoch(self, epoch: int) -> dict[str, float]:
        tc, progress, updates = self.cfg.trainer, self.progress, self.updates
        self.model.train()
        partial, progress.partial = progress.partial or {}, None
        within = partial.get("epoch") == epoch  # resume within the epoch
        order, done = (partial["order"], partial["done"]) if within else (self.epoch_order(), 0)
        totals, actions = (
            (Counter(partial["totals"]), Counter(partial["actions"])) if within else (Counter(), Counter())
        )
        start = time.perf_counter() - (partial["seconds"] if within else 0.0)
        batches = [[self.data.examples[i] for i in b] for b in order]
        self.objective.start_epoch(epoch)
        # An update takes ``world`` consecutive batches, one per rank (see distributed.py).
        world, rank = self.ranks.world, self.ranks.rank
        n_updates = (len(batches) + world - 1) // world
        bar = tqdm(total=n_updates, initial=done, desc=f"epoch {epoch}", unit="batch",
                   disable=None if self.ranks.main else True, leave=False)  # fmt: skip
        window = new_window()
        for k in range(done, n_updates):
            mine = k * world + rank
            examples = batches[mine] if mine < len(batches) else []
            tokens = sum(len(e) for e in examples)
            group_tokens = total(tokens, self.ranks)
            updates.zero_grad()
            value = 0.0
            if examples:
                loss, counts, taken = self.objective.batch_loss(self.model, collate(examples))
                updates.backward(loss / group_tokens)
                value = float(loss.detach())
                totals.update({"loss": value, "sents": len(examples), "tokens": tokens, **counts})
                actions.update(taken)
            updates.step(self.ranks)
            progress.step += 1
            window.update({"loss": value, "tokens": tokens, "sents": len(examples)})
            if progress.step % tc.log_every == 0:
                write_window(self.writer, window, progress.step, updates.lr, bar)
                window = new_window()
            bar.update(1)
            stop = self.control.stopping(self.ranks)  # every rank stops after the same update
            if stop or (tc.checkpoint_every and (k + 1) % tc.checkpoint_every == 0 and k + 1 < n_updates):
                if self.ranks.main:
                    mid = {"epoch": epoch, "order": order, "done": k + 1, "totals": dict(totals),
                           "actions": dict(actions), "seconds": time.perf_counter() - start,
                           "lr": updates.epoch_start_lr}  # fmt: skip
                    checkpoint.save_atomic({**self.checkpoint_state(with_optimizer=True), "partial": mid},
                                           self.run_dir / "last.pt")  # fmt: skip
                if stop:
                    bar.close()
                    # Every rank is here (the stop is agreed above): none exits before rank 0 has
                    # written last.pt (a launcher tears the job down when one rank exits).
                    barrier(self.ranks)
                    raise preempted(self.control.signal, k + 1, n_updates, epoch, self.run_dir)
        if window["tokens"]:
            write_window(self.writer, window, progress.step, updates.lr, bar)
        bar.close()
        if self.ranks.active:  # the epoch's counts over all ranks
            totals, actions = gather_counters(totals, self.ranks), gather_counters(actions, self.ranks)
        if totals["stuck"]:
            log.warning("%d sentences had no correct transition left (oracle dead end)", totals["stuck"])
        return epoch_stats(totals, actions, time.perf_counter() - start, self.objective)

    def evaluate(self, sents: list, out_path: Path | None, calibrate: bool = False) -> Any:
        """Scores of the current model on ``sents`` (``Evaluation.scores``)."""
        return self.evaluation.scores(self.model, sents, out_path, calibrate)

    def checkpoint_state(self, with_optimizer: bool) -> dict:
        state = {"config": self.cfg.to_dict(), "system": system_options(self.cfg),
                 "model_options": asdict(self.model.options), "vocabs": self.model.vocabs.state_dict(),
                 "model": self.model.state_dict(), **self.progress.state()}  # fmt: skip
        if with_optimizer:
            state.update(self.updates.state_dict(), rng=rng_state(self.rng))
        return state

    def write_metrics(self, extra: dict | None = None) -> dict:
        if not self.ranks.main:
            return {}
        header = {"exp": self.cfg.exp_name, "treebank": self.cfg.data.name, "system": self.system.describe(),
                  "oracle": self.oracle.name, "prepare_seconds": self.data.prepare_seconds}  # fmt: skip
        metrics = self.progress.metrics(header, extra)
        (self.run_dir / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
        return metrics

    def run(self) -> dict:
        """Train to the last epoch, then test; on SIGTERM/SIGUSR1 write last.pt and raise Preempted."""
        try:
            with stop_signals(self.control):
                return self._run()
        except Preempted:
            self.writer.close()
            raise
        finally:
            if self.log_handler is not None:
                logging.getLogger().removeHandler(self.log_handler)
                self.log_handler.close()

    def run_epoch(self, epoch: int) -> None:
        """Train one epoch, score it on dev, keep best.pt and last.pt, and log it."""
        tc, progress, main, dev = self.cfg.trainer, self.progress, self.ranks.main, self.data.dev
        self.updates.cut_on_plateau(progress.history, epoch, self.ranks)
        # The rate at the epoch's start, for metrics.json (a run resumed within the epoch saved it)
        within = progress.partial if (progress.partial or {}).get("epoch") == epoch else {}
        rate = self.updates.epoch_start_lr = (within or {}).get("lr", self.updates.lr)
        stats = self.train_epoch(epoch)
        phase = progress.decay_start is not None
        record: dict[str, Any] = {"epoch": epoch, **stats, **({"lr": rate} if tc.plateau or phase else {})}
        if phase:
            record["final_decay"] = True
        if dev and main:
            with self.updates.average.applied():  # averaged weights are what is evaluated and kept
                scores = self.evaluate(dev, self.run_dir / "dev.pred.conllu", calibrate=True)
            record.update({f"dev_{k}": v for k, v in scores.as_dict().items() if k != "words_nopunct"})
        write_epoch(self.writer, epoch, stats, record, self.objective.curves)
        progress.history.append(record)
        progress.epoch = epoch
        improved = record.get("dev_las", 0.0) > progress.best_las or not dev
        if improved:
            progress.best_las = record.get("dev_las", 0.0)
        if main:
            if improved:
                with self.updates.average.applied():
                    checkpoint.save_atomic(self.checkpoint_state(with_optimizer=False), self.run_dir / "best.pt")
            checkpoint.save_atomic(self.checkpoint_state(with_optimizer=True), self.run_dir / "last.pt")
            self.write_metrics()
        barrier(self.ranks)  # the other ranks wait for rank 0's evaluation and checkpoints
        note = "" if phase else patience_note(progress.history, tc.patience)
        log.info("%s%s", epoch_line(epoch, stats, record, improved), note)
        if self.control.stopping(self.ranks):  # a signal during the evaluation: last.pt holds the epoch
            raise preempted_between(self.control.signal, epoch, self.run_dir)

    def sync_weights(self) -> None:
        """Give every data-parallel rank rank 0's weights (nothing without ranks)."""
        if self.ranks.active:
            for tensor in self.model.state_dict().values():
                torch.distributed.broadcast(tensor, src=0)

    def phase_settings(self) -> TrainerConfig:
        """The trainer settings of the updates now: the run's, or in ``trainer.final_decay``'s
        phase a rate from ``trainer.final_decay_lr`` (half of ``trainer.lr``) decaying linearly
        to 0 over its epochs, without warm-up or plateau cuts."""
        tc = self.cfg.trainer
        if self.progress.decay_start is None:
            return tc
        lr = tc.final_decay_lr if tc.final_decay_lr is not None else tc.lr / 2
        return replace(tc, lr=lr, lr_schedule="linear", warmup=0, epochs=tc.final_decay, plateau=0)

    def start_final_decay(self) -> None:
        """``trainer.final_decay``: go on from best.pt's weights (the last ones without it) with a
        fresh optimizer at a decaying rate. A final phase at a decaying rate gained test LAS where
        the same epochs at the constant rate did not (docs/experiments/final-decay.md)."""
        progress = self.progress
        progress.decay_start = progress.epoch
        best = self.run_dir / "best.pt"
        if self.ranks.main and self.data.dev and best.exists():
            self.model.load_state_dict(checkpoint.load(best, self.device)["model"])
        self.sync_weights()  # every rank goes on from rank 0's weights
        phase = self.phase_settings()
        self.updates = Updates(self.model, phase, self.data.examples, self.ranks.world, self.updates.precision)
        start = best_epoch(progress.history) if self.data.dev else None
        log.info("trainer.final_decay: %d epochs from the weights of epoch %d at a rate from %.3g decaying to 0",
                 phase.epochs, start["epoch"] if start else progress.epoch, phase.lr)  # fmt: skip

    def _run(self) -> dict:
        tc, progress, main, dev = self.cfg.trainer, self.progress, self.ranks.main, self.data.dev
        if main:
            OmegaConf.save(OmegaConf.create(self.cfg.to_dict()), self.run_dir / "config.yaml")
        log.info("run directory: %s", self.run_dir)
        if self.ranks.active:
            log.info("rank %d of %d", self.ranks.rank, self.ranks.world)
        log.info("system %s, oracle %s, device %s", self.system.describe(), self.oracle.name, self.device)
        warn_without_dev(tc, bool(dev))
        if progress.decay_start is None:
            for epoch in range(progress.epoch + 1, tc.epochs + 1):
                # Before each epoch, so that a resumed run that had already stopped stays stopped.
                if broadcast(main and patience_exhausted(progress.history, tc.patience), self.ranks):
                    break
                self.run_epoch(epoch)
            if tc.final_decay:
                self.start_final_decay()
        if progress.decay_start is not None:
            for epoch in range(progress.epoch + 1, progress.decay_start + tc.final_decay + 1):
                self.run_epoch(epoch)
        self.control.finishing = True  # a signal now stops the run at once
        extra: dict[str, Any] = {}
        if main:
            extra, best = self.evaluation.final(self.run_dir, self.model, self.writer)
            self.model = best or self.model
        self.writer.close()
        return self.write_metrics(extra)
