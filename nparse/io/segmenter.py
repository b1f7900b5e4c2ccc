"""A segmenter trained on the treebank: tokens, sentences and multiword tokens as its training
file has them, by UDPipe 1's tokenizer (Straka & Straková 2017; the ``ufal.udpipe`` package, an
optional extra: ``pip install -e ".[segmenter]"``).

Why UDPipe 1 rather than our own character tagger: it is the tool users compare us with, it
trains on CoNLL-U in minutes on a CPU (a GRU over characters deciding token and sentence
boundaries, plus a multiword-token splitter learned from the training file's ranges), and it
keeps each token's character range, from which ``rawtext.iter_raw`` rebuilds every character
of the input. A character BiLSTM of our own was not built or measured.

    python -m nparse.segmenter train=TRAIN.conllu [dev=DEV.conllu] out=MODEL.udpipe [epochs=20]
                               [attach=runs/.../best.pt]
    python -m nparse.segmenter model=MODEL.udpipe attach=runs/.../best.pt [dev=DEV.conllu]

writes the model and prints its dev Tokens/Sentences/Words F1 (``nparse/eval/aligned.py``);
``python -m nparse.parse ... format=raw segmenter=MODEL.udpipe`` then splits raw text with it.
``attach=`` also stores it in a parser's checkpoint (key ``segmenter``), whose ``format=raw``
parsing (CLI and API) then uses it by itself; models without one keep spaCy's rules.
``model=`` attaches a segmenter trained before, without training one (the seeds of a run can
share one).
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Any

from .rawtext import Token

INSTALL = 'pip install -e ".[segmenter]"'
RANGE = re.compile(r"TokenRange=(\d+):(\d+)")


def _udpipe() -> Any:
    try:
        import ufal.udpipe as udpipe
    except ImportError:
        raise ValueError(f"a trained segmenter needs UDPipe 1: {INSTALL}") from None
    return udpipe


def udpipe_sentences(path: str | Path) -> Any:
    """A CoNLL-U file as UDPipe sentences."""
    udpipe = _udpipe()
    reader = udpipe.InputFormat.newConlluInputFormat()
    reader.setText(Path(path).read_text(encoding="utf-8"))
    sentences, error = udpipe.Sentences(), udpipe.ProcessingError()
    sentence = udpipe.Sentence()
    while reader.nextSentence(sentence, error):
        sentences.push_back(sentence)
        sentence = udpipe.Sentence()
    if error.occurred():
        raise ValueError(f"{path}: {error.message}")
    return sentences


def train(train_path: str | Path, dev_path: str | Path | None, options: str = "epochs=20") -> bytes:
    """A UDPipe tokenizer model trained on ``train_path`` (``dev_path`` picks the best epoch)."""
    udpipe = _udpipe()
    heldout = udpipe_sentences(dev_path) if dev_path else udpipe.Sentences()
    error = udpipe.ProcessingError()
    model = udpipe.Trainer.train(
        "morphodita_parsito", udpipe_sentences(train_path), heldout, options, "none", "none", error
    )
    if error.occurred():
        raise ValueError(f"training the segmenter on {train_path}: {error.message}")
    return model


class Segmenter:
    """Splits a paragraph into sentences of tokens with the trained model (``rawtext.Token``s:
    surface form, character range, syntactic words)."""

    def __init__(self, path: str | Path, option: str = "segmenter"):
        """``option``: the command-line option that named ``path``, for the errors."""
        udpipe = _udpipe()
        self.udpipe = udpipe
        if not Path(path).is_file():
            raise FileNotFoundError(f"{option}={path}: no such file")
        self.model = udpipe.Model.load(str(path))
        if self.model is None:
            raise ValueError(f"{option}={path}: not a UDPipe model")
        self.path = str(path)

    @classmethod
    def from_bytes(cls, data: bytes, name: str = "the checkpoint's segmenter") -> "Segmenter":
        """A segmenter from a model's bytes (as a checkpoint keeps them: UDPipe loads from files)."""
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "segmenter.udpipe"
            path.write_bytes(data)
            segmenter = cls(path)
        segmenter.path = name
        return segmenter

    def __call__(self, text: str) -> list[list[Token]]:
        tokenizer = self.model.newTokenizer("ranges")
        if tokenizer is None:
            raise ValueError(f"segmenter={self.path}: the model has no tokenizer")
        tokenizer.setText(text)
        out: list[list[Token]] = []
        sentence, error = self.udpipe.Sentence(), self.udpipe.ProcessingError()
        while tokenizer.nextSentence(sentence, error):
            out.append(tokens_of(sentence))
            sentence = self.udpipe.Sentence()
        if error.occurred():
            raise ValueError(f"segmenter: {error.message}")
        return out


def tokens_of(sentence: Any) -> list[Token]:
    """The tokens of a UDPipe sentence, multiword tokens with their words."""
    words = [sentence.words[i] for i in range(1, len(sentence.words))]
    multi = {m.idFirst: m for m in sentence.multiwordTokens}
    tokens: list[Token] = []
    i = 0
    while i < len(words):
        mwt = multi.get(i + 1)
        if mwt is not None:
            span = range(mwt.idFirst - 1, mwt.idLast)
            start, end = _range(mwt.misc)
            tokens.append((mwt.form, start, end, [words[k].form for k in span]))
            i = mwt.idLast
        else:
            start, end = _range(words[i].misc)
            tokens.append((words[i].form, start, end, [words[i].form]))
            i += 1
    return tokens


def _range(misc: str) -> tuple[int, int]:
    found = RANGE.search(misc)
    if found is None:
        raise ValueError(f"segmenter: a token without TokenRange ({misc!r})")
    return int(found[1]), int(found[2])


def from_checkpoint(state: dict) -> Segmenter | None:
    data = state.get("segmenter")
    return None if data is None else Segmenter.from_bytes(bytes(data.numpy().tobytes()))
