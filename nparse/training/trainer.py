"""The trainer behind ``python -m nparse.train``: data, model, epochs, evaluation, checkpoints.

Each run writes ``runs/<exp>/<date>_<time>/``: the resolved config (``config.yaml`` and Hydra's
``.hydra/``), TensorBoard events, ``last.pt`` (every epoch), ``best.pt`` (best dev LAS), dev and
test predictions, ``metrics.json`` and ``skipped.tsv`` (training sentences left out, and why).
"""

from __future__ import annotations

import json
import logging
import random
import re
import signal
import time
from collections import Counter
from pathlib import Path
from typing import Any

from dataclasses import asdict

import torch
from torch.autograd.graph import increment_version
from omegaconf import DictConfig, OmegaConf
from tqdm import tqdm

from .. import checkpoint
from ..checkpoint import checkpoint_paths, model_from_state
from ..config import Config
from ..decoding.decode import decode_sentences, parsed_sentence
from ..decoding.settings import DecodeSettings
from ..eval.scores import Scores, score
from ..io.conllu import Sentence, write_conllu
from ..io.data import bucket_batches, collate, encode, length_batches
from ..paths import resolve_path
from ..runtime import set_threads
from ..systems import make_oracle, make_system
from .averaging import WeightAverage
from .calibration import calibrate
from .curves import epoch_line, epoch_stats, new_window, write_epoch, write_window
from .data import check_not_empty, load_data, prepare_examples, report_skipped
from .distributed import NoWriter, Ranks, barrier, broadcast, gather_counters, sum_gradients, total
from .models import fine_tuned_model, new_model, parameter_groups
from .distill import Teacher
from .objectives import Greedy, build_objective
from .patience import best_epoch, epochs_without_gain, patience_exhausted, plateau_cuts, stop_line
from .resume import Preempted, log_to, preempted, preempted_between, preset_of, resumed_config, stop_signals
from .schedule import lr_schedule, refresh_rates
from .segmenting import segment_run
from .settings import check_settings, device_and_precision, system_options

log = logging.getLogger("nparse.train")


TIMESTAMPED = re.compile(r"\d{4}-\d{2}-\d{2}_\d{2}-\d{2}-\d{2}")  # Hydra's default run folder names


def latest_sibling_run(run_dir: Path) -> Path | None:
    """The most recently written other timestamped run folder beside ``run_dir`` that holds a
    last.pt, when ``run_dir`` is one too (Hydra's default: a folder chosen with hydra.run.dir, a
    sweep's numbered ones or a seed's in experiments/seed_runs.py, is meant to be new)."""
    if not TIMESTAMPED.fullmatch(run_dir.name):
        return None
    try:
        found = [d for d in run_dir.parent.iterdir()
                 if d != run_dir and TIMESTAMPED.fullmatch(d.name) and (d / "last.pt").is_file()]  # fmt: skip
    except OSError:
        return None
    return max(found, key=lambda d: (d / "last.pt").stat().st_mtime, default=None)


class Trainer:
    def __init__(
        self, cfg: Config | DictConfig, run_dir: Path, ranks: Ranks | None = None, overrides: list[str] | None = None
    ):
        if not isinstance(cfg, Config):  # Hydra's composed config: typed once, here
            cfg = Config.composed(cfg)
        check_settings(cfg)
        resume: Any = cfg.trainer.resume
        if resume == "auto":
            last = run_dir / "last.pt"
            resume = last if last.exists() else None
            if resume is None:
                log.info("trainer.resume=auto: no last.pt in %s, starting fresh", run_dir)
                earlier = latest_sibling_run(run_dir)
                if earlier is not None:  # a new timestamped folder: the run meant is likely this one
                    log.warning(
                        "trainer.resume=auto looks in this run's own folder, %s, which is new; to go on with "
                        "%s add hydra.run.dir=%s", run_dir, earlier / "last.pt", earlier,
                    )  # fmt: skip
        if resume:  # the run's own config, with harmless overrides only
            resume = resolve_path(resume, "trainer.resume")
            saved = checkpoint.load(resume)
            self.preset = saved.get("preset")
            cfg, self.resume_notes = resumed_config(saved["config"], cfg, overrides, self.preset)
        else:
            self.preset = preset_of(overrides)  # +exp=NAME, kept in every checkpoint
        self.cfg = cfg
        self.run_dir = run_dir
        self.ranks = ranks or Ranks()
        if self.ranks.main:
            run_dir.mkdir(parents=True, exist_ok=True)
        tc = cfg.trainer
        set_threads(tc.threads, log, "trainer.threads")
        self.stop_signal: int | None = None
        self.finishing = False  # past the last epoch
        self.log_handler: logging.Handler | None = None  # train.log of a resumed run
        self.partial: dict | None = None  # the epoch in progress of a mid-epoch last.pt
        self.device, (self.precision, why) = device_and_precision(tc, self.ranks.local if self.ranks.active else None)
        log.info("precision: %s (%s; trainer.precision=auto|fp32|bf16|fp16)", self.precision, why)
        self.rng = random.Random(tc.seed)
        torch.manual_seed(tc.seed)
        self.data = load_data(cfg)
        self.system = make_system(**system_options(cfg))
        self.oracle = make_oracle(self.system, cfg.oracle.name, **cfg.oracle.options)
        self.objective = build_objective(cfg, self.oracle, self.rng)
        self.objective.check_config(cfg)
        self.epoch = 0
        self.best_las = -1.0
        self.calibration: dict | None = None  # temperature of local beam scores (calibration.py)
        self.history: list[dict] = []
        self.step = 0
        if resume:
            self._resume(resume)
        elif tc.init_from:
            self._init_from(resolve_path(tc.init_from, "trainer.init_from"))
        else:
            self._build()
        if tc.distill_from:
            assert isinstance(self.objective, Greedy)  # check_settings: greedy training only
            paths = [resolve_path(str(p), "trainer.distill_from") for p in checkpoint_paths(tc.distill_from)]
            self.objective.teacher = Teacher(paths, system_options(cfg), self.device, tc.distill_cache_mb)
            self.objective.distill_weight = tc.distill_weight
        start = time.perf_counter()
        self.train_examples = prepare_examples(self.data.train, self.vocabs, self.oracle, self.data.skipped)
        self.prepare_seconds = time.perf_counter() - start
        log.info("oracle data for %d sentences prepared in %.1f s", len(self.data.train), self.prepare_seconds)
        if self.ranks.main:
            report_skipped(self.data.skipped, len(self.train_examples), self.run_dir)
        check_not_empty(self.train_examples, self.data.skipped, str(cfg.data.train))
        self.objective.check_examples(self.train_examples)
        groups = parameter_groups(self.model, tc.completion_lr)
        beta1, beta2 = tc.betas
        # fused: one kernel per parameter group instead of a dozen calls per tensor (7% of a CPU epoch)
        self.optimizer = torch.optim.Adam(groups, lr=tc.lr, betas=(beta1, beta2), fused=True)
        self.weights = [p for group in groups for p in group["params"]]
        # Updates per epoch, exactly (batch_tokens closes batches early; a rank takes one batch of
        # each group of world): a linear schedule reaches 0 at trainer.epochs, not before.
        lengths = [len(e) for e in self.train_examples]
        per_epoch = -(-len(length_batches(lengths, tc.batch_size, None, tc.batch_tokens)) // self.ranks.world)
        self.lr_scale = 1.0  # trainer.plateau_factor to the power of the cuts so far (set before each epoch)
        self.rates_set = False  # whether cut_on_plateau has set the rates of this process's first epoch
        self.epoch_start_lr: float = tc.lr  # saved with a mid-epoch last.pt
        self.scheduler = lr_schedule(
            self.optimizer, tc.lr_schedule, tc.warmup, per_epoch * tc.epochs, lambda: self.lr_scale
        )  # fmt: skip
        self.average = WeightAverage(self.model, tc.average, tc.average_decay)
        self.model.set_precision(self.precision)
        # fp16 gradients underflow without loss scaling; bf16 has float32's range and needs none.
        self.scaler = torch.amp.GradScaler(self.device.type, enabled=self.precision == "fp16")
        if resume:
            self.optimizer.load_state_dict(self.resume_state["optimizer"])
            if "scheduler" in self.resume_state:
                self.scheduler.load_state_dict(self.resume_state["scheduler"])
            self.average.load_state_dict(self.resume_state.get("average"))
            self._restore_rng(self.resume_state["rng"])
            if "scaler" in self.resume_state and self.scaler.is_enabled():
                self.scaler.load_state_dict(self.resume_state["scaler"])
            del self.resume_state
        if self.ranks.main:
            from torch.utils.tensorboard import SummaryWriter

            self.writer: Any = SummaryWriter(str(self.run_dir), purge_step=self.step if resume else None)
        else:
            self.writer = NoWriter()
        if self.ranks.active:  # every rank starts from rank 0's weights
            for tensor in self.model.state_dict().values():
                torch.distributed.broadcast(tensor, src=0)

    # -- set-up -----------------------------------------------------------------------------
    def _build(self) -> None:
        self.model = new_model(self.cfg, self.system, self.data.train, self.device)
        self.vocabs = self.model.vocabs

    def _init_from(self, path: Path) -> None:
        """Start from a trained model's weights (and its vocabularies and sizes), fresh optimizer."""
        self.model = fine_tuned_model(path, self.cfg, self.system, self.device)
        self.vocabs = self.model.vocabs

    def _resume(self, path: Path) -> None:
        state = checkpoint.load(path, self.device, resume=True)
        self.model = model_from_state(state, self.device, path)
        self.vocabs = self.model.vocabs
        self.epoch = state["epoch"]
        self.best_las = state["best_las"]
        self.history = state["history"]
        self.step = state["step"]
        self.partial = state.get("partial")
        self.calibration = state.get("calibration")
        self.resume_state = state
        # Carry on in the directory of the checkpoint so curves, logs and checkpoints stay together.
        self.run_dir = path.parent
        if self.ranks.main:  # the other ranks' lines stay on their stderr, as in a fresh run
            self.log_handler = log_to(self.run_dir)
        where = f", batch {self.partial['done']} of epoch {self.partial['epoch']}" if self.partial else ""
        log.info("resuming %s after epoch %d%s", path, self.epoch, where)
        for note in getattr(self, "resume_notes", []):
            log.info("resume with %s", note)

    def _rng_state(self) -> dict:
        return {"python": self.rng.getstate(), "torch": torch.get_rng_state()}

    def _restore_rng(self, state: dict) -> None:
        self.rng.setstate(state["python"])
        torch.set_rng_state(state["torch"].cpu())

    # -- training ---------------------------------------------------------------------------
    def epoch_order(self) -> list[list[int]]:
        """The epoch's batches (indices of training examples), shuffled by rank 0 and sent to every
        rank. Each rank shuffling with its own generator would not do: exploration draws from it
        only on wrong predictions, and each rank sees other sentences, so after one epoch the
        generators differ, and with them the ranks' orders (some sentences trained twice in an
        epoch, others never)."""
        order = None
        if self.ranks.main:
            tc = self.cfg.trainer
            index = {id(e): i for i, e in enumerate(self.train_examples)}
            batched = bucket_batches(self.train_examples, tc.batch_size, self.rng, tc.batch_tokens)
            order = [[index[id(e)] for e in b] for b in batched]
        return broadcast(order, self.ranks)  # type: ignore[return-value]

    def train_epoch(self, epoch: int) -> dict[str, float]:
        tc = self.cfg.trainer
        self.model.train()
        totals: Counter = Counter()
        actions: Counter = Counter()
        start = time.perf_counter()
        partial, self.partial = self.partial, None
        if partial is not None and partial["epoch"] == epoch:  # resume within the epoch
            order, done = partial["order"], partial["done"]
            totals.update(partial["totals"])
            actions.update(partial["actions"])
            start -= partial["seconds"]
        else:
            order, done = self.epoch_order(), 0
        batches = [[self.train_examples[i] for i in b] for b in order]
        self.objective.start_epoch(epoch)
        every = tc.checkpoint_every
        # An update takes ``world`` consecutive batches, one per rank (see distributed.py).
        world, rank = self.ranks.world, self.ranks.rank
        updates = (len(batches) + world - 1) // world
        bar = tqdm(total=updates, initial=done, desc=f"epoch {epoch}", unit="batch",
                   disable=None if self.ranks.main else True, leave=False)  # fmt: skip
        window = new_window()
        for k in range(done, updates):
            mine = k * world + rank
            batch_examples = batches[mine] if mine < len(batches) else []
            tokens = sum(len(e) for e in batch_examples)
            group_tokens = total(tokens, self.ranks)
            self.optimizer.zero_grad(set_to_none=True)
            value = 0.0
            if batch_examples:
                loss, counts, taken = self.objective.batch_loss(self.model, collate(batch_examples))
                self.scaler.scale(loss / group_tokens).backward()
                value = float(loss.detach())
                totals.update({"loss": value, "sents": len(batch_examples), "tokens": tokens, **counts})
                actions.update(taken)
            sum_gradients(self.model, self.ranks)
            if tc.clip:
                self.scaler.unscale_(self.optimizer)
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), tc.clip)
            self.scaler.step(self.optimizer)
            # The fused step leaves the weights' version counters as they were: the bf16 LSTM copies and
            # the character cache of evaluation are keyed on them (they kept epoch 1's weights).
            increment_version(self.weights)
            self.scaler.update()
            self.scheduler.step()
            self.average.update()
            self.step += 1
            window["loss"] += value
            window["tokens"] += tokens
            window["sents"] += len(batch_examples)
            if self.step % tc.log_every == 0:
                write_window(self.writer, window, self.step, self.optimizer.param_groups[0]["lr"], bar)
                window = new_window()
            bar.update(1)
            last = k + 1 == updates
            stop = self.stop_signal is not None
            if self.ranks.active:  # every rank stops after the same update
                stop = total(float(stop), self.ranks) > 0
            if stop or (every and (k + 1) % every == 0 and not last):
                if self.ranks.main:
                    mid = {"epoch": epoch, "order": order, "done": k + 1, "totals": dict(totals),
                           "actions": dict(actions), "seconds": time.perf_counter() - start,
                           "lr": self.epoch_start_lr}  # fmt: skip
                    checkpoint.save_atomic({**self.checkpoint_state(with_optimizer=True), "partial": mid},
                                           self.run_dir / "last.pt")  # fmt: skip
                if stop:
                    bar.close()
                    # Every rank is here (the stop is agreed above): none exits before rank 0 has
                    # written last.pt (a launcher tears the job down when one rank exits).
                    barrier(self.ranks)
                    raise preempted(self.stop_signal, k + 1, updates, epoch, self.run_dir)
        if window["tokens"]:
            write_window(self.writer, window, self.step, self.optimizer.param_groups[0]["lr"], bar)
        bar.close()
        if self.ranks.active:  # the epoch's counts over all ranks
            totals, actions = gather_counters(totals, self.ranks), gather_counters(actions, self.ranks)
        if totals["stuck"]:
            log.warning("%d sentences had no correct transition left (oracle dead end)", totals["stuck"])
        return epoch_stats(totals, actions, time.perf_counter() - start, self.objective)

    def decode_settings(self, calibrate: bool = False) -> DecodeSettings:
        """The decoder of the config for the current model; ``calibrate``: first fit the
        temperature on dev when a beam would read it."""
        asked = DecodeSettings.from_config(self.cfg.decoder)
        if calibrate and asked.beam_size > 1 and asked.reads_calibration(self.cfg):
            self.calibrate()
        return asked.for_model(self.cfg, self.calibration)

    def calibrate(self) -> dict:
        """Fit the temperature of local beam scores on dev (``calibration.py``) and keep it."""
        cal = calibrate(self.model, self.oracle, [encode(s, self.vocabs) for s in self.data.dev])
        log.info(
            "temperature of local beam scores fitted on dev: %.3f (NLL per step %.4f, %.4f at 1)",
            cal.temperature, cal.nll, cal.nll_at_1,
        )  # fmt: skip
        self.calibration = cal.as_dict()
        return self.calibration

    def evaluate(self, sents: list[Sentence], out_path: Path | None, calibrate: bool = False) -> Scores:
        settings = self.decode_settings(calibrate)
        best = [p[0] for p in decode_sentences(self.model, sents, settings)]
        if out_path is not None:
            parsed = [parsed_sentence(s, p) for s, p in zip(sents, best)]
            write_conllu(parsed, out_path, [p.heads for p in best], [p.labels for p in best])
        tags = [p.tags for p in best] if self.model.tagger is not None else None
        return score(sents, [p.heads for p in best], [p.labels for p in best], tags)

    def attach_segmenter(self, best_path: Path) -> dict:
        """Train the raw-text segmenter into the run's checkpoints and score it (``segmenting.py``)."""
        settings = self.decode_settings()

        def parse(sents: list[Sentence]) -> list[Sentence]:
            best = [p[0] for p in decode_sentences(self.model, sents, settings)]
            return [parsed_sentence(s, p) for s, p in zip(sents, best)]

        checkpoints = [p for p in (best_path, self.run_dir / "last.pt") if p.exists()]
        return segment_run(self.cfg, checkpoints, self.data.dev, self.data.test, parse, self.writer, self.epoch)

    def checkpoint_state(self, with_optimizer: bool) -> dict:
        state = {
            "config": self.cfg.to_dict(),
            "system": system_options(self.cfg),
            "model_options": asdict(self.model.options),
            "vocabs": self.vocabs.state_dict(),
            "model": self.model.state_dict(),
            "epoch": self.epoch,
            "step": self.step,
            "best_las": self.best_las,
            "history": self.history,
            "calibration": self.calibration,
            "preset": self.preset,
        }
        if with_optimizer:
            if self.scaler.is_enabled():  # fp16: the loss scale reached, so a resume skips no more updates
                state["scaler"] = self.scaler.state_dict()
            state["optimizer"] = self.optimizer.state_dict()
            state["scheduler"] = self.scheduler.state_dict()
            state["average"] = self.average.state_dict()
            state["rng"] = self._rng_state()
        return state

    def previous_metrics(self) -> dict:
        path = self.run_dir / "metrics.json"
        return json.loads(path.read_text()) if path.exists() else {}

    def write_metrics(self, extra: dict | None = None) -> dict:
        if not self.ranks.main:
            return {}
        # Without dev scores best.pt holds the last epoch (each one "improves").
        best = best_epoch(self.history) or (self.history[-1] if self.history else None)
        metrics = {
            "exp": self.cfg.exp_name,
            "treebank": self.cfg.data.name,
            "system": self.system.describe(),
            "oracle": self.oracle.name,
            "prepare_seconds": self.prepare_seconds,
            "epochs": self.history,
            "best": best,
            **(extra or {}),
        }
        (self.run_dir / "metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
        return metrics

    def _on_signal(self, signum: int, frame) -> None:
        if self.finishing:  # calibration, test parse, segmenter: nothing to finish first
            raise preempted_between(signum, self.epoch, self.run_dir, finishing=True)
        if self.stop_signal is None:
            log.warning(
                "%s received: finishing the current batch (or the epoch's evaluation), then stopping with last.pt written",
                signal.Signals(signum).name,
            )
        self.stop_signal = signum

    def run(self) -> dict:
        """Train to the last epoch, then test; on SIGTERM/SIGUSR1 write last.pt and raise Preempted."""
        try:
            with stop_signals(self._on_signal):
                return self._run()
        except Preempted:
            self.writer.close()
            raise
        finally:
            if self.log_handler is not None:
                logging.getLogger().removeHandler(self.log_handler)
                self.log_handler.close()

    def cut_on_plateau(self, epoch: int) -> None:
        """The rate for ``epoch``: cut by ``trainer.plateau_factor`` for every ``trainer.plateau``
        epochs without a dev LAS gain (``patience.plateau_cuts``; from the history, so a resumed
        run goes on at its rate); rank 0 decides."""
        tc = self.cfg.trainer
        cuts = int(broadcast(plateau_cuts(self.history, tc.plateau) if self.ranks.main else 0, self.ranks))  # type: ignore[call-overload]
        scale = tc.plateau_factor**cuts
        changed = scale != self.lr_scale
        if changed or not self.rates_set:  # also at a resume: the saved rate may be from other settings
            self.lr_scale, self.rates_set = scale, True
            refresh_rates(self.scheduler)
        if changed:
            log.info(
                "epoch %d: learning rate %.3g (x%g: cut %d time%s, each after %d epochs without a dev LAS gain; trainer.plateau)",
                epoch, self.optimizer.param_groups[0]["lr"], scale, cuts, "s" * (cuts != 1), tc.plateau,
            )  # fmt: skip

    def _run(self) -> dict:
        tc = self.cfg.trainer
        main = self.ranks.main
        if main:
            OmegaConf.save(OmegaConf.create(self.cfg.to_dict()), self.run_dir / "config.yaml")
        log.info("run directory: %s", self.run_dir)
        if self.ranks.active:
            log.info("rank %d of %d", self.ranks.rank, self.ranks.world)
        log.info("system %s, oracle %s, device %s", self.system.describe(), self.oracle.name, self.device)
        if tc.patience and not self.data.dev:
            log.warning(
                "trainer.patience=%d needs a dev set (data.dev): training runs trainer.epochs=%d",
                tc.patience,
                tc.epochs,
            )
        if tc.plateau and not self.data.dev:
            log.warning("trainer.plateau=%d needs a dev set (data.dev): the rate is never cut", tc.plateau)
        for epoch in range(self.epoch + 1, tc.epochs + 1):
            # Before each epoch, so that a resumed run that had already stopped stays stopped.
            if broadcast(main and patience_exhausted(self.history, tc.patience), self.ranks):
                break
            self.cut_on_plateau(epoch)
            # The rate at the epoch's start, for metrics.json (a run resumed within the epoch saved it)
            within = self.partial if self.partial is not None and self.partial["epoch"] == epoch else {}
            rate = self.epoch_start_lr = within.get("lr", self.optimizer.param_groups[0]["lr"])
            stats = self.train_epoch(epoch)
            record: dict[str, Any] = {"epoch": epoch, **stats}
            if tc.plateau:
                record["lr"] = rate
            if self.data.dev and main:
                with self.average.applied():  # averaged weights are what is evaluated and kept
                    dev = self.evaluate(self.data.dev, self.run_dir / "dev.pred.conllu", calibrate=True)
                record.update({f"dev_{k}": v for k, v in dev.as_dict().items() if k != "words_nopunct"})
            write_epoch(self.writer, epoch, stats, record, self.objective.curves)
            self.history.append(record)
            self.epoch = epoch
            improved = record.get("dev_las", 0.0) > self.best_las or not self.data.dev
            if improved:
                self.best_las = record.get("dev_las", 0.0)
            if main:
                if improved:
                    with self.average.applied():
                        checkpoint.save_atomic(self.checkpoint_state(with_optimizer=False), self.run_dir / "best.pt")
                checkpoint.save_atomic(self.checkpoint_state(with_optimizer=True), self.run_dir / "last.pt")
                self.write_metrics()
            barrier(self.ranks)  # the other ranks wait for rank 0's evaluation and checkpoints
            waited = epochs_without_gain(self.history) if tc.patience and "dev_las" in record else 0
            patience = f", {waited}/{tc.patience} epochs without a gain (trainer.patience)" if waited else ""
            log.info("%s%s", epoch_line(epoch, stats, record, improved), patience)
            # A signal during the evaluation or the checkpoints: last.pt holds the whole epoch.
            stop = self.stop_signal is not None
            if self.ranks.active:
                stop = total(float(stop), self.ranks) > 0
            if stop:
                raise preempted_between(self.stop_signal, epoch, self.run_dir)
        self.finishing = True  # a signal now stops the run at once (_on_signal)
        extra: dict[str, Any] = {}
        if main and self.history:
            extra["stopped"] = stop_line(self.history, tc.patience, tc.epochs)
            log.info("%s", extra["stopped"])
        best_path = self.run_dir / "best.pt"
        state: dict = {}
        if main and best_path.exists() and (self.data.test or self.data.dev):
            state = checkpoint.load(best_path, self.device)
            self.model = model_from_state(state, self.device)
            if self.data.dev and not state.get("calibration"):  # for beams on local scores later
                state["calibration"] = self.calibrate()
                checkpoint.save_atomic(state, best_path)
            self.calibration = state.get("calibration")
        if main and self.data.test and best_path.exists():
            test = self.evaluate(self.data.test, self.run_dir / "test.pred.conllu")
            extra["test"] = test.as_dict()
            log.info("test (best dev epoch %d): UAS %.2f LAS %.2f", state["epoch"], test.uas, test.las)
        if main and self.cfg.model.segmenter and best_path.exists():
            if (state or checkpoint.load(best_path)).get("segmenter") is not None:  # a resumed, finished run
                extra["segmenter"] = self.previous_metrics().get("segmenter", {})
            else:
                extra["segmenter"] = self.attach_segmenter(best_path)
        self.writer.close()
        return self.write_metrics(extra)
