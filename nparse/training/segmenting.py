"""``model.segmenter=true``: a raw-text segmenter trained with the parser and kept in its checkpoint.

After the parser's last epoch, UDPipe 1's tokenizer (``nparse/io/segmenter.py``) is trained on
``data.train``; UDPipe evaluates it on ``data.dev`` after each of its epochs and keeps the best.
It is stored in ``best.pt`` and ``last.pt`` (``format=raw`` parsing then uses it), its dev
Tokens/Sentences/Words F1 are logged, and the test set's raw text (its ``# text`` lines) is
split, tagged and parsed by the best model and scored against gold with the CoNLL 2018
alignment, which shows in one number what raw text costs against gold tokens.
"""

from __future__ import annotations

import io
import logging
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from ..config import Config
from ..eval.aligned import aligned_scores
from ..io.conllu import Sentence, read_conllu, write_conllu
from ..io.rawtext import iter_raw, text_of
from ..io.segmenter import Segmenter, train
from ..paths import resolve_path

log = logging.getLogger("nparse.train")
SEGMENTATION = ("tokens", "sentences", "words")


def train_segmenter(
    train_path: str, dev_path: str | None, epochs: int, limit: int | None = None
) -> tuple[bytes, Segmenter, float]:
    """The trained model's bytes, the segmenter built on them and the training time in seconds;
    ``limit`` trains on the first ``limit`` sentences (None: all), as ``data.max_train_sentences``
    does for the parser."""
    start = time.perf_counter()
    log.info("training the segmenter on %s (%d epochs, UDPipe 1)", train_path, epochs)
    with tempfile.TemporaryDirectory() as folder:
        if limit is not None:
            part = Path(folder) / "train.conllu"
            write_conllu(read_conllu(train_path)[:limit], part)
            train_path = str(part)
        data = train(train_path, dev_path, f"epochs={epochs}")
    return data, Segmenter.from_bytes(data, "the run's segmenter"), time.perf_counter() - start


def raw_scores(
    gold: list[Sentence], lang: str, segmenter: Segmenter, parse: Callable[[list[Sentence]], list[Sentence]] | None
) -> dict[str, Any]:
    """F1 of every aligned metric for ``gold``'s raw text split by ``segmenter`` (and parsed by
    ``parse`` when given: without it, only the segmentation's), and the tokens/s of the whole."""
    start = time.perf_counter()
    text = text_of(gold)
    predicted = list(iter_raw(io.StringIO(text).readlines(), lang, "<raw text>", segmenter))  # \n only
    if parse is not None:
        predicted = parse(predicted)
    seconds = time.perf_counter() - start
    scores = aligned_scores(gold, predicted)
    keys = scores if parse is not None else SEGMENTATION
    out: dict[str, Any] = {k: round(scores[k].f1, 2) for k in keys}
    out["tokens_per_second"] = round(sum(len(s) for s in predicted) / max(seconds, 1e-9))
    return out


def segment_run(
    cfg: Config,
    checkpoints: list[Path],
    dev: list[Sentence],
    test: list[Sentence],
    parse: Callable[[list[Sentence]], list[Sentence]],
    writer: Any,
    step: int,
) -> dict[str, Any]:
    """Train the segmenter of ``model.segmenter=true`` on ``data.train``, store it in
    ``checkpoints``, and score the dev segmentation and the test set's raw text parsed by
    ``parse`` (logged, written to TensorBoard at ``step`` and returned for ``metrics.json``)."""
    from .. import checkpoint

    d = cfg.data
    data, segmenter, seconds = train_segmenter(
        str(resolve_path(str(d.train), "data.train")),
        str(resolve_path(d.dev, "data.dev")) if d.dev else None,
        cfg.model.segmenter_epochs,
        d.max_train_sentences,
    )
    for path in checkpoints:
        checkpoint.attach_segmenter(path, data)
    result: dict[str, Any] = {"trained_seconds": round(seconds)}
    for name, sents, parser in (("dev", dev, None), ("test_raw", test, parse)):
        if not sents:
            continue
        if not all(any(line.startswith("# text = ") for line in s.lines) for s in sents):
            log.warning("segmenter: %s has sentences without '# text': its raw text is not scored", name)
            continue
        result[name] = raw_scores(sents, d.lang, segmenter, parser)
        log.info("segmenter (trained in %.0f s), %s", seconds, score_line(name, result[name]))
        for key, value in result[name].items():
            writer.add_scalar(f"segmenter/{name}_{key}", value, step)
    return result


def score_line(name: str, scores: dict[str, Any]) -> str:
    return f"{name}: " + " ".join(f"{k} {v:.2f}" for k, v in scores.items() if k != "tokens_per_second")
