"""Python API: ``nparse.load(path).parse(...)``."""

from __future__ import annotations

import io
import logging
import warnings
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Callable, Iterable, Iterator, Sequence


from . import checkpoint
from .checkpoint import checkpoint_paths, config_from_state, model_from_state
from .config import Config
from .decoding.decode import Parse, decode_sentences, nbest_sentences, parsed_sentence
from .decoding.settings import DecodeSettings
from .io.conllu import MissingPOSError, Sentence, build_sentence, read_text, write_conllu
from .io.rawtext import iter_raw
from .models.ensemble import EnsembleModel, check_members, system_of
from .models.parser import ParserModel
from .runtime import choose_precision, keep_freed_memory, pick_device, set_threads

if TYPE_CHECKING:
    from .pipeline import Report

log = logging.getLogger("nparse")

__all__ = ["MissingPOSError", "Parser", "load", "model_from_state", "nbest_sentences", "parsed_sentence", "pick_device"]


def is_file_path(name: str) -> bool:
    """Whether a string names an existing path (a long text is no path: the OS refuses its name)."""
    try:
        return Path(name).exists()
    except OSError:  # ENAMETOOLONG
        return False


def member_temperature(member: "Parser") -> float:
    """The temperature an ensemble takes a member's probabilities at: the one it parses with
    alone, except for raw scores, whose scale is the training's accident: there the temperature
    fitted on dev (as a distillation teacher takes it), else 1."""
    if member.settings.scores == "raw":
        return float((member.calibration or {}).get("temperature", 1.0))
    return member.settings.temperature or 1.0


class Parser:
    """A trained parser loaded from a checkpoint.

    ``beam_size`` defaults to the decoder the model was trained with (``decoder.beam_size`` of its
    config; 1, greedy, for models trained before beam search existed).
    """

    def __init__(
        self, model: ParserModel | EnsembleModel, config: Config | None = None, calibration: dict | None = None
    ):
        self.model = model
        self.config = config  # the training config (None: a model built in code)
        self.calibration = calibration  # the temperature of local beam scores fitted on dev
        self.settings = DecodeSettings.from_config(config.decoder if config else None).for_model(config, calibration)
        self.lang = config.data.lang if config else "en"  # the language of raw text
        self.threads: tuple[int, str] | None = None  # torch CPU threads set by ``load``, and why
        self.precision: tuple[str, str] = (model.precision, "as the model was given")  # and why
        self.segmenter_state: Any = None  # a trained raw-text segmenter kept in the checkpoint
        self.name = "<model>"  # the checkpoint's path, for messages (paths joined by commas: an ensemble)
        self._segmenter: Callable[[str], list] | None = None

    @property
    def beam_size(self) -> int:
        """The beam width used when none is asked for (the training config's decoder)."""
        return self.settings.beam_size

    @property
    def decoder(self) -> str:
        """The decoder used when none is asked for: beam (greedy with beam_size 1) or mst."""
        return self.settings.decoder

    @classmethod
    def load(
        cls,
        path: str | Path | Sequence[str | Path],
        device: str = "auto",
        threads: int | None = None,
        precision: str = "auto",
    ) -> "Parser":
        """A checkpoint's parser on ``device``; several checkpoints (a list, or paths joined by
        commas) parse as one ensemble (``Parser.ensemble``). Torch's CPU threads (process-wide)
        are set by ``runtime.choose_threads``: ``threads`` when given, else SLURM/OMP_NUM_THREADS,
        else the allowed CPUs that other processes leave free (measured now, in a quarter of a
        second). ``precision`` (``auto``, ``fp32``, ``bf16``, or ``fp16`` on a GPU) is that of the encoder and tables:
        ``auto`` is bfloat16 where the hardware computes it natively (``runtime.choose_precision``)."""
        paths = checkpoint_paths(path)
        dev = pick_device(device)
        chosen = set_threads(threads, log)
        keep_freed_memory()
        precision_chosen = choose_precision(precision, dev)
        parsers = []
        for one in paths:
            state = checkpoint.load(one, dev)
            config = config_from_state(state, one)
            model = model_from_state(state, dev, one)
            model.set_precision(precision_chosen[0])
            parser = cls(model, config, state.get("calibration"))
            parser.segmenter_state = state.get("segmenter")
            parser.name = str(one)
            parsers.append(parser)
        parser = parsers[0] if len(parsers) == 1 and isinstance(path, (str, Path)) else cls.ensemble(parsers)
        parser.threads, parser.precision = chosen, precision_chosen
        return parser

    @classmethod
    def ensemble(cls, members: Sequence["Parser"]) -> "Parser":
        """One parser averaging the members' normalized transition, label and tag scores at every
        step (``models/ensemble.py``), decoding as the first member's training config says.
        Members must share the transition system and the label set; the error names the member
        and the difference. An ensemble of one parses exactly as its member (a model with a
        completion model is that member itself).

        Each member's probabilities are taken at its own temperature (``Parser.settings``), so the
        ensemble's own is 1: a ``temperature`` given when parsing sharpens (below 1) or flattens
        the averaged distribution, and ``scores`` changes nothing (the beam sums the logarithm of
        the averaged probabilities either way)."""
        members = list(members)
        models = [m.model for m in members if isinstance(m.model, ParserModel)]
        if not members or len(models) != len(members):
            raise ValueError("an ensemble is made of one or more single models (not of ensembles)")
        first = members[0]
        if len(members) == 1 and models[0].completion is not None:
            return first
        check_members(models, [m.name for m in members], [system_of(m.config) for m in members])
        temperatures = [member_temperature(m) for m in members]
        parser = cls(
            EnsembleModel(models, temperatures), first.config, first.calibration if len(members) == 1 else None
        )
        if len(members) > 1:  # the members' temperatures are applied; not the first's again
            parser.settings = parser.settings.override(scores="local", temperature=1.0)
        parser.name = ",".join(m.name for m in members)
        log.info("ensemble of %d models: %s", len(members), ", ".join(m.name for m in members))
        parser.threads, parser.precision = first.threads, first.precision
        parser.segmenter_state = first.segmenter_state
        return parser

    @property
    def segmenter(self) -> Callable[[str], list] | None:
        """The checkpoint's trained segmenter (``python -m nparse.segmenter attach=``), built on
        first use so that parsing CoNLL-U never needs its package; None: spaCy's rules."""
        if self._segmenter is None and self.segmenter_state is not None:
            from .io.segmenter import from_checkpoint

            self._segmenter = from_checkpoint({"segmenter": self.segmenter_state})
        return self._segmenter

    def fill_char_cache(self) -> None:
        """Compute the character vectors of the vocabulary's forms once (``Encoder.fill_char_cache``,
        about 0.4 s for an EWT model; nothing when they are there): on the first parse, not at
        load, since a process that never parses (the main process of spawned workers) need not."""
        self.model.fill_char_cache()

    def prepare(self) -> None:
        """Get ready to parse: the vocabulary's character vectors, and the decoder's compiled
        kernels run once on a two-word sentence (numba loading them and its own registries took
        0.3 s of the first parse in a new process). Before forking parse workers, so that none
        repeats it."""
        self.fill_char_cache()
        tokens = [f"{i}\tword\tword\tX\tX\t_\t_\t_\t_\t_" for i in (1, 2)]
        decode_sentences(self.model, [build_sentence("<prepare>", 1, tokens, True)], self.settings)

    def check_pos(self, sentences: Sequence[Sentence]) -> None:
        """Refuse input without the POS tags the model reads, at the first such word in file
        order (a parse worker's sentences come in length order)."""
        needs = [name for name in self.model.pos_inputs if name != "FEATS"]  # FEATS "_" is a value: no features
        if not needs:
            return
        one_file = len({sent.path for sent in sentences}) <= 1
        for sent in sorted(sentences, key=lambda s: s.line) if one_file else sentences:
            for name in needs:
                tags = sent.upos if name == "UPOS" else sent.xpos
                if "_" in tags:  # (tags[0] is the root's)
                    i = tags.index("_")
                    raise MissingPOSError(
                        f"{sent.path}:{sent.word_line(i)}: this model was trained with {name} features, "
                        f"but the input has no {name} tag here; tag the input first or train with "
                        f"model.upos_dim=0 model.xpos_dim=0 to parse untagged text",
                        sent.word_line(i),
                    )

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
        """The ``nbest`` best distinct trees of every sentence (best first), in input order.

        ``decoder``: ``beam`` (greedy with beam_size 1), ``greedy`` or ``mst`` (the completion
        model's first-order factor decoded as a graph-based parser); defaults to the training
        config's. ``scores`` (``auto``, ``local``, ``raw``) and ``temperature``: what a beam
        sums (``decoding/settings.py``); by default the model's own. ``batch_size`` and
        ``batch_tokens`` (at most that many padded tokens per batch, 0: no limit) bound a batch.
        """
        settings = self.settings.override(
            decoder=decoder, beam_size=None if beam_size is None else int(beam_size), nbest=nbest,
            batch_size=batch_size, batch_tokens=batch_tokens, scores=scores, temperature=temperature,
        ).for_model(self.config, self.calibration)  # fmt: skip
        self.check_pos(sentences)
        self.fill_char_cache()
        return decode_sentences(self.model, sentences, settings, progress)

    def parse_sentences(
        self,
        sentences: Sequence[Sentence],
        *,
        batch_size: int | None = None,
        progress: bool = False,
        beam_size: int | None = None,
        decoder: str | None = None,
    ) -> list[tuple[list[int], list[str]]]:
        """Heads and labels (index 0 = root) of the best tree of every sentence, in input order.

        Deprecated: ``parse`` (filled Sentence objects) or ``parse_nbest`` (the trees with their
        scores) say the same; this one goes in a later release."""
        warnings.warn(
            "Parser.parse_sentences is deprecated: use parse(sentences) or parse_nbest(sentences)[i][0].heads/.labels",
            DeprecationWarning, stacklevel=2,
        )  # fmt: skip
        best = self.parse_nbest(
            sentences, beam_size=beam_size, batch_size=batch_size, progress=progress, decoder=decoder
        )
        return [(p[0].heads, p[0].labels) for p in best]

    def parse(
        self,
        source: str | Path | Iterable[Sequence[str]] | Sequence[Sentence],
        *,
        fmt: str = "auto",
        beam_size: int | None = None,
        nbest: int | None = None,
        decoder: str | None = None,
        lang: str | None = None,
    ) -> list[Sentence] | list[list[Sentence]]:
        """Parse a CoNLL-U/plain-text file path, Sentence objects, lists of tokens, or (``fmt="raw"``)
        a string of raw text, split and tokenized for ``lang`` (default: the training data's).

        Returns the sentences with HEAD and DEPREL filled in. With ``nbest=k``, returns for every
        sentence a list of its k best distinct trees (fewer if the beam holds fewer), best first,
        each carrying ``score`` (its derivation score) and the comments ``# nbest = i`` and
        ``# score = ...``. ``decoder="mst"`` parses with the completion model's first-order factor.
        """
        from .pipeline import read_sentences

        if fmt not in ("auto", "conllu", "text", "raw"):
            raise ValueError(f"fmt={fmt!r}: expected auto, conllu, text or raw")
        if fmt == "raw" and isinstance(source, str):  # raw text: a string is the text itself
            sentences = list(iter_raw(io.StringIO(source).readlines(), lang or self.lang, "<text>", self.segmenter))
        elif fmt == "raw" and not isinstance(source, Path):
            raise TypeError("fmt='raw' takes the text as a string (or a pathlib.Path to a text file)")
        elif isinstance(source, (str, Path)):  # a file, read as parse_file reads it
            if isinstance(source, str) and not is_file_path(source) and any(ch.isspace() for ch in source):
                raise FileNotFoundError(
                    f"no such file: {source[:60]!r}; to parse a string of raw text, call parse(text, fmt='raw'); "
                    "CoNLL-U text, parse(read_conllu(io.StringIO(text)))"
                )
            sentences = read_sentences(source, fmt, lang or self.lang, self.segmenter)
        else:
            items = list(source)
            if items and not isinstance(items[0], Sentence):
                check_token_lists(items)
                lines = [" ".join(tokens) for tokens in items]  # type: ignore[arg-type]  # checked: lists of str
                sentences = read_text(io.StringIO("\n".join(lines)))
                assert len(sentences) == len(items)
            else:
                sentences = items  # type: ignore[assignment]
        results = self.parse_nbest(sentences, beam_size=beam_size, nbest=1 if nbest is None else nbest, decoder=decoder)
        if nbest is None:
            return [parsed_sentence(s, p[0]) for s, p in zip(sentences, results)]
        return [nbest_sentences(s, parses) for s, parses in zip(sentences, results)]

    def iter_parse(
        self, source: Iterable[Sentence] | Iterable[Sequence[str]], *, chunk: int = 4096, **options: Any
    ) -> Iterator[Sentence] | Iterator[list[Sentence]]:
        """Parse a stream of sentences (Sentence objects or lists of tokens) ``chunk`` at a time,
        yielding each parsed sentence (or, with ``nbest``, its trees) in input order: memory is
        bounded by the chunk, not the stream. ``options``: those of ``parse``."""
        from .pipeline.reading import chunks

        if chunk < 1:
            raise ValueError(f"chunk={chunk}: give a positive number of sentences")
        for part in chunks(source, chunk):
            yield from self.parse(part, **options)  # type: ignore[misc, arg-type]

    def parse_file(
        self,
        source: str | Path | None,
        target: str | Path | IO[str] | None,
        *,
        fmt: str = "auto",
        output_format: str = "auto",
        workers: int | str = 1,
        chunk: int | None = None,
        beam_size: int | None = None,
        nbest: int | None = None,
        decoder: str | None = None,
        batch_size: int | None = None,
        lang: str | None = None,
        segmenter: str | None = None,
        progress: bool | None = None,
        batch_tokens: int | None = None,
    ) -> "Report":
        """Parse a file into a file as ``python -m nparse.parse`` does (``nparse/pipeline``): any
        input format (``fmt``: auto, conllu, text, raw) read in chunks of ``chunk`` sentences,
        ``workers`` processes (``auto``: the CPUs the thread policy would use) with the output of
        one, CoNLL-U or (``output_format="html"`` or a target named *.html) a page of trees, and
        with ``nbest=k`` every sentence's k best trees. ``source`` None reads standard input;
        ``target`` None writes standard output, and may be an open text stream. An output file
        appears whole or not at all; errors name the input's file:line. Returns a ``Report``
        (sentences, words, seconds)."""
        from .pipeline import parse_file

        settings = self.settings.override(decoder=decoder, beam_size=beam_size, nbest=nbest or 1, batch_size=batch_size,
                                          batch_tokens=batch_tokens)  # fmt: skip
        return parse_file(self, source, target, fmt=fmt, output_format=output_format, workers=workers, chunk=chunk,
                          settings=settings, nbest=bool(nbest), lang=lang, segmenter=segmenter, progress=progress)  # fmt: skip

    @staticmethod
    def write(sentences: Sequence[Sentence], target) -> None:
        write_conllu(sentences, target, [s.heads for s in sentences], [s.deprels for s in sentences])


def check_token_lists(items: list) -> None:
    """Token lists must map one to one onto sentences and words: refuse what would not."""
    for k, tokens in enumerate(items):
        if isinstance(tokens, str) or not isinstance(tokens, (list, tuple)):
            raise ValueError(
                f"sentence {k}: expected a list of tokens, got {type(tokens).__name__} {str(tokens)[:40]!r} "
                "(to parse a file, pass its path as a str or Path; pre-tokenize text into lists of tokens)"
            )
        if not tokens:
            raise ValueError(f"sentence {k}: empty (no tokens); every sentence needs at least one")
        for i, token in enumerate(tokens):
            if not isinstance(token, str) or not token or any(ch.isspace() for ch in token):
                raise ValueError(
                    f"sentence {k}, token {i}: {token!r} is not a non-empty string without spaces; "
                    "a token with a space would become two words"
                )


def load(
    path: str | Path | Sequence[str | Path], device: str = "auto", threads: int | None = None, precision: str = "auto"
) -> Parser:
    """Load a checkpoint written by ``python -m nparse.train``, or several as one ensemble
    (``nparse.load([ck1, ck2, ck3])``; ``threads``, ``precision``: see ``Parser.load``)."""
    return Parser.load(path, device, threads, precision)
