"""Parsing dev and test with the model being trained: the config's decoder (its beam temperature
fitted on dev first when the beam reads one), the predictions written, the scores; and the
raw-text segmenter trained at the end of a run (``segmenting.py``)."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from .. import checkpoint
from ..checkpoint import model_from_state
from ..config import Config
from ..decoding.decode import decode_sentences, parsed_sentence
from ..decoding.settings import DecodeSettings
from ..eval.scores import Scores, score
from ..io.conllu import Sentence, write_conllu
from ..io.data import encode
from ..models.parser import ParserModel
from ..systems import Oracle
from .calibration import calibrate
from .data import Data
from .patience import best_note, stop_line
from .progress import Progress
from .segmenting import segment_run

log = logging.getLogger("nparse.train")


class Evaluation:
    def __init__(self, cfg: Config, oracle: Oracle, data: Data, progress: Progress):
        """``progress`` keeps the fitted temperature (``calibration``), saved with the checkpoints."""
        self.cfg, self.oracle, self.data, self.progress = cfg, oracle, data, progress

    def settings(self, model: ParserModel, calibrate: bool = False) -> DecodeSettings:
        """The decoder of the config for ``model``; ``calibrate``: first fit the temperature on
        dev when a beam would read it."""
        asked = DecodeSettings.from_config(self.cfg.decoder)
        if calibrate and asked.beam_size > 1 and asked.reads_calibration(self.cfg):
            self.calibrate(model)
        return asked.for_model(self.cfg, self.progress.calibration)

    def calibrate(self, model: ParserModel) -> dict:
        """Fit the temperature of local beam scores on dev (``calibration.py``) and keep it."""
        cal = calibrate(model, self.oracle, [encode(s, model.vocabs) for s in self.data.dev])
        log.info(
            "temperature of local beam scores fitted on dev: %.3f (NLL per step %.4f, %.4f at 1)",
            cal.temperature, cal.nll, cal.nll_at_1,
        )  # fmt: skip
        self.progress.calibration = cal.as_dict()
        return self.progress.calibration

    def parse(self, model: ParserModel, sents: list[Sentence], settings: DecodeSettings) -> list[Sentence]:
        best = [p[0] for p in decode_sentences(model, sents, settings)]
        return [parsed_sentence(s, p) for s, p in zip(sents, best)]

    def scores(
        self, model: ParserModel, sents: list[Sentence], out_path: Path | None, calibrate: bool = False
    ) -> Scores:
        """Parse ``sents``, write the parse to ``out_path`` (unless None) and score it."""
        best = [p[0] for p in decode_sentences(model, sents, self.settings(model, calibrate))]
        if out_path is not None:
            parsed = [parsed_sentence(s, p) for s, p in zip(sents, best)]
            write_conllu(parsed, out_path, [p.heads for p in best], [p.labels for p in best])
        tags = [p.tags for p in best] if model.tagger is not None else None
        return score(sents, [p.heads for p in best], [p.labels for p in best], tags)

    def segmenter(self, model: ParserModel, checkpoints: list[Path], writer: Any) -> dict:
        """Train the raw-text segmenter into the run's checkpoints and score it (``segmenting.py``)."""
        settings = self.settings(model)
        return segment_run(self.cfg, checkpoints, self.data.dev, self.data.test,
                           lambda sents: self.parse(model, sents, settings), writer, self.progress.epoch)  # fmt: skip

    def final(self, run_dir: Path, current: ParserModel, writer: Any) -> tuple[dict[str, Any], ParserModel | None]:
        """After the last epoch (rank 0): why training stopped, best.pt calibrated (for beams on
        local scores later) and tested, and the segmenter trained (on best.pt's model, or
        ``current`` without dev and test). Returns metrics.json's keys for them and best.pt's
        model (None when neither dev nor test asked for it)."""
        device = current.device
        extra: dict[str, Any] = {}
        tc, best_path, history = self.cfg.trainer, run_dir / "best.pt", self.progress.history
        state: dict = {}
        model = None
        if history:
            start = self.progress.decay_start
            main = history if start is None else [h for h in history if h["epoch"] <= start]
            extra["stopped"] = stop_line(main, tc.patience, tc.epochs)
            if start is not None:
                extra["stopped"] += (
                    f"; then trainer.final_decay={tc.final_decay} epochs at a decaying rate{best_note(history)}"
                )
            log.info("%s", extra["stopped"])
        if best_path.exists() and (self.data.test or self.data.dev):
            state = checkpoint.load(best_path, device)
            model = model_from_state(state, device)
            if self.data.dev and not state.get("calibration"):
                state["calibration"] = self.calibrate(model)
                checkpoint.save_atomic(state, best_path)
            self.progress.calibration = state.get("calibration")
        if model is not None and self.data.test:
            test = self.scores(model, self.data.test, run_dir / "test.pred.conllu")
            extra["test"] = test.as_dict()
            log.info("test (best dev epoch %d): UAS %.2f LAS %.2f", state["epoch"], test.uas, test.las)
        if self.cfg.model.segmenter and best_path.exists():
            if (state or checkpoint.load(best_path)).get("segmenter") is not None:  # a resumed, finished run
                metrics = run_dir / "metrics.json"
                extra["segmenter"] = (json.loads(metrics.read_text()) if metrics.exists() else {}).get("segmenter", {})
            else:
                checkpoints = [p for p in (best_path, run_dir / "last.pt") if p.exists()]
                extra["segmenter"] = self.segmenter(model or current, checkpoints, writer)
        return extra, model
