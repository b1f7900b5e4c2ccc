"""Parse text with a trained model.

    python -m nparse.parse model=CKPT [input=IN] [output=OUT] [format=auto|conllu|text|raw] [lang=xx]
                           [beam_size=K] [nbest=k] [decoder=greedy|beam|mst] [device=auto|cpu|cuda|cuda:N]
                           [batch_size=N] [batch_tokens=N] [chunk=N] [scores=auto|local|raw] [temperature=T]
                           [threads=N] [segmenter=MODEL.udpipe] [output_format=auto|conllu|html]
                           [precision=auto|fp32|bf16|fp16] [workers=N|auto]

Input is CoNLL-U (HEAD/DEPREL filled in, the rest written back untouched), pre-tokenized plain
text (one sentence per line) or, with format=raw, raw text split by spaCy's rules for the model's
language (lang= overrides; pip install -e ".[raw]") or by segmenter=MODEL.udpipe; standard
input/output when omitted. model=CKPT1,CKPT2,... parses with an ensemble. beam_size, decoder,
scores and temperature default to the model's; nbest=k writes every sentence once per tree of its
k best, with "# nbest" and "# score" comments. output_format=html (the default for *.html) writes
one page of tree pictures. The input is read, parsed and written chunk=N sentences at a time
(default 4096) and an output file appears whole or not at all. workers=N parses with N processes
of one thread each, with the output of one process (auto: SLURM_CPUS_PER_TASK, else the CPUs the
thread policy would use; 1 on a GPU). threads=N sets torch's CPU threads (default: the free
CPUs); precision=auto is bfloat16 where the hardware computes it natively. The last line gives
the time from the model loaded to the output written and the words parsed per second. The
pipeline is nparse/pipeline (also Parser.parse_file); every option: docs/getting-started.md.
"""

from __future__ import annotations

import sys

from .cli import parse_args
from .io.conllu import CoNLLUError, written_directly
from .pipeline import Report, check_request, parse_file
from .pipeline.workers import worker_count


def main(argv: list[str] | None = None) -> int:
    optional: dict[str, str | None] = {"input": "-", "output": "-", "format": "auto", "device": "auto", "output_format": "auto",
                "precision": "auto", "workers": "1"}  # fmt: skip
    for key in ("batch_size", "batch_tokens", "beam_size", "nbest", "decoder", "chunk", "lang", "scores", "temperature", "threads",
                "segmenter"):  # fmt: skip
        optional[key] = None
    args = parse_args(argv, required=("model",), optional=optional, usage=__doc__)
    from .api import MissingPOSError, Parser
    from .runtime import pick_device

    report = Report()
    try:
        beam_size, nbest, batch_size, chunk, threads = (
            _positive(args, key) for key in ("beam_size", "nbest", "batch_size", "chunk", "threads")
        )
        batch_tokens = 0 if args["batch_tokens"] == "0" else _positive(args, "batch_tokens")  # 0: no limit
        check_request(str(args["format"]), str(args["output_format"]), args["output"], args["input"])  # before loading
        device = args["device"] or "auto"
        workers = worker_count(args["workers"], pick_device(device).type == "cuda")
        # With workers, this process runs one torch thread: its model is forked into the workers,
        # and no OpenMP thread pool may exist when a process forks.
        parser = Parser.load(str(args["model"]), device, threads=1 if workers > 1 else threads,
                             precision=str(args["precision"]))  # fmt: skip
        temperature = None if args["temperature"] is None else _number(args, "temperature")
        settings = parser.settings.override(
            decoder=args["decoder"], beam_size=beam_size, nbest=nbest or 1, batch_size=batch_size,
            batch_tokens=batch_tokens, scores=args["scores"], temperature=temperature,
        )  # fmt: skip
        parse_file(parser, args["input"], args["output"], fmt=str(args["format"]), output_format=str(args["output_format"]),
                   workers=workers, chunk=chunk, settings=settings, nbest=bool(nbest), lang=args["lang"],
                   segmenter=args["segmenter"], report=report)  # fmt: skip
    except (CoNLLUError, MissingPOSError, OSError, ValueError, RuntimeError) as err:
        hint = ""
        if (
            isinstance(err, CoNLLUError)
            and report.detected == "conllu"
            and err.message.startswith("expected 10 tab-separated")
        ):
            # (a numbered recipe, or tab-separated tokens starting with a number: "12\tApril\t2019")
            hint = (" (read as CoNLL-U, as format=auto judged it; if the file is plain text, format=text reads "
                    "one sentence of tokens per line)")  # fmt: skip
        print(f"error: {err}{hint}", file=sys.stderr)
        target, n_sents = args["output"], report.sentences
        if target not in (None, "-") and n_sents and written_directly(target):
            print(f"error: only the first {n_sents} sentences were written to {target} (a stream or device: "
                  "written as parsed)", file=sys.stderr)  # fmt: skip
        elif target not in (None, "-"):
            print(f"error: nothing written to {target}", file=sys.stderr)
        elif n_sents:
            print(f"error: only the first {n_sents} sentences were written to standard output", file=sys.stderr)
        return 1
    if not report.sentences:
        print(f"warning: {args['input']}: no sentences to parse", file=sys.stderr)
    final = settings.for_model(parser.config, parser.calibration)
    print(
        f"parsed {report.sentences} sentences ({report.words} words) in {report.seconds:.1f} s (read, parsed and "
        f"written, the {model_note(parser)} loaded{'; with the workers starting' if workers > 1 else ''}) "
        f"on {parser.model.device}{threads_note(parser.threads, workers)}, precision {parser.precision[0]} "
        f"({parser.precision[1]}), {'mst' if final.decoder == 'mst' else f'beam {final.beam_size}'}: "
        f"{report.words / max(report.seconds, 1e-9):.0f} words/s",
        file=sys.stderr,
    )
    return 0


def model_note(parser) -> str:
    """What the last line says was loaded: the model, or an ensemble of N models (model=CKPT1,CKPT2,...)."""
    members = parser.model.members
    return "model" if members[0] is parser.model else f"ensemble of {len(members)} models"


def threads_note(threads: tuple[int, str] | None, workers: int = 1) -> str:
    if workers > 1:
        return f" with {workers} worker processes of 1 CPU thread"
    return f" with {threads[0]} CPU threads ({threads[1]})" if threads else ""


def _positive(args: dict, key: str) -> int | None:
    """An optional positive integer argument."""
    value = args.get(key)
    if value in (None, ""):
        return None
    if not value.isdigit() or int(value) < 1:
        raise ValueError(f"{key}={value}: expected a positive integer")
    return int(value)


def _number(args: dict, key: str) -> float:
    """A positive number argument."""
    try:
        value = float(args[key])
    except ValueError:
        raise ValueError(f"{key}={args[key]}: expected a positive number") from None
    if not value > 0:
        raise ValueError(f"{key}={args[key]}: expected a positive number")
    return value


if __name__ == "__main__":
    sys.exit(main())
