"""Training data: the treebank files read and checked, and encoded with the oracle's precomputation."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from pathlib import Path

from tqdm import tqdm

from ..config import Config
from ..io.conllu import Sentence, iter_conllu, read_conllu, tree_problem
from ..io.data import Example, Vocabs, encode
from ..paths import resolve_path
from ..systems import Oracle
from ..trees import is_projective

log = logging.getLogger("nparse.train")


@dataclass
class Data:
    train: list[Sentence]
    dev: list[Sentence]
    test: list[Sentence]
    skipped: list[tuple[str, str]]  # (sent_id, reason)
    examples: list[Example] = field(default_factory=list)  # the training sentences encoded (``prepare``)
    prepare_seconds: float = 0.0  # the oracle's preparation of them

    def prepare(self, vocabs: Vocabs, oracle: Oracle, run_dir: Path, train_path: str, main: bool = True) -> None:
        """Encode the training sentences with the oracle's precomputation (timed), list the
        skipped ones in ``skipped.tsv`` (``main``: the process that writes), and refuse a run
        with nothing left to train on (naming ``train_path``, data.train)."""
        start = time.perf_counter()
        self.examples = prepare_examples(self.train, vocabs, oracle, self.skipped)
        self.prepare_seconds = time.perf_counter() - start
        log.info("oracle data for %d sentences prepared in %.1f s", len(self.train), self.prepare_seconds)
        if main:
            report_skipped(self.skipped, len(self.examples), run_dir)
        check_not_empty(self.examples, self.skipped, train_path)


def load_data(cfg: Config) -> Data:
    """Read train/dev/test; training sentences that are not single-rooted trees are skipped, and
    with ``data.projective_only`` the non-projective ones (so that arms with projective and
    non-projective oracles train on the same sentences)."""
    assert cfg.data.train is not None  # check_settings
    train_path = resolve_path(cfg.data.train, "data.train")
    limit, projective_only = cfg.data.max_train_sentences, cfg.data.projective_only
    train, skipped = [], []
    for sent in iter_conllu(train_path):
        problem = tree_problem(sent.heads)
        if problem:
            skipped.append((sent.name, f"not a single-rooted tree: {problem}"))
        elif projective_only and not is_projective(sent.heads):
            skipped.append((sent.name, "not projective (data.projective_only=true)"))
        else:
            train.append(sent)
            if len(train) == limit:
                break
    dev = read_conllu(resolve_path(cfg.data.dev, "data.dev")) if cfg.data.dev else []
    test = read_conllu(resolve_path(cfg.data.test, "data.test")) if cfg.data.test else []
    return Data(train, dev, test, skipped)


def prepare_examples(sents: list[Sentence], vocabs: Vocabs, oracle: Oracle, skipped: list) -> list[Example]:
    """Encode training sentences and let the oracle precompute; refused trees go to ``skipped``."""
    examples = []
    fallbacks: list[str] = []
    for sent in tqdm(sents, desc="oracle data", unit="sent", leave=False, disable=None):
        ex = encode(sent, vocabs)
        ex.gold = oracle.prepare(sent.heads)
        if ex.gold is None:
            skipped.append((sent.name, f"not covered by the {oracle.system.name} {oracle.name} oracle"))
        else:
            examples.append(ex)
            if getattr(ex.gold, "fallback", False):
                fallbacks.append(sent.name)
    if fallbacks:
        log.warning(
            "oracle %s: search over the time limit (oracle.time_limit) on %d sentence(s), trained with the "
            "LAZY sequence instead: %s",
            oracle.name,
            len(fallbacks),
            ", ".join(fallbacks[:20]) + (" ..." if len(fallbacks) > 20 else ""),
        )
    return examples


def report_skipped(skipped: list[tuple[str, str]], kept: int, run_dir: Path) -> None:
    """``skipped.tsv`` in the run directory, and a warning naming the first skipped sentences."""
    with open(run_dir / "skipped.tsv", "w", encoding="utf-8") as handle:
        handle.write("sent_id\treason\n")
        for name, reason in skipped:
            handle.write(f"{name}\t{reason}\n")
    if skipped:
        shown = ", ".join(name for name, _ in skipped[:5])
        log.warning(
            "skipped %d of %d training sentences (%s%s); list in %s",
            len(skipped), len(skipped) + kept, shown, ", ..." if len(skipped) > 5 else "", run_dir / "skipped.tsv",
        )  # fmt: skip
    log.info("training on %d sentences", kept)


def check_not_empty(examples: list[Example], skipped: list[tuple[str, str]], train: str) -> None:
    """Refuse a run with nothing to train on, saying why the sentences were skipped."""
    if examples:
        return
    reasons = sorted({reason for _, reason in skipped})
    why = f" ({len(skipped)} skipped: {'; '.join(reasons[:3])})" if reasons else " (the file is empty)"
    raise ValueError(f"data.train={train}: no sentence to train on{why}")
