"""nparse against UDPipe 1 (Parsito, feed-forward, greedy): tokens/s per core and LAS on test sets.

    python experiments/udpipe_compare.py train [--data en_ewt el_gdt hu_szeged] [--out runs/udpipe]
    python experiments/udpipe_compare.py compare --models en_ewt=CKPT [en_ewt=CKPT2 el_gdt=CKPT ...] [--out runs/udpipe]
                                                 [--repeats 3] [--precision fp32 auto] [--udpipe-beam 1 5]
                                                 [--lengths MIN MAX]

``train`` trains UDPipe 1's parser alone on each treebank's train file with dev as heldout, with
the options below (projective system, dynamic oracle, gold UPOS read, form and deprel embeddings;
no tokenizer, no tagger), into ``OUT/<data>.udpipe``. It needs ``pip install -e ".[segmenter]"``.

``compare`` parses each test file with gold UPOS, one thread each, the model loaded, interleaved
(``--repeats`` rounds, best time kept): UDPipe through ``Pipeline(model, "conllu", NONE,
"beam_search=K", "conllu")``, timing ``process`` alone; nparse through the same work its CLI
does: CoNLL-U read, parsed (each ``--precision``) and written. Prints words/s, the ratio to
UDPipe's greedy speed and LAS (the CoNLL 2018 counting of ``nparse.eval.scores``) for both, and
the CPU's model and flags. ``--lengths 6 14`` keeps the test sentences of 6 to 14 words (about
10 on average, as in Turkish-like treebanks), where the cost per sentence weighs more.
"""

from __future__ import annotations

import argparse
import gc
import io
import platform
import subprocess
import time
from pathlib import Path

import torch
from common import RUNS, split_path, treebank

from nparse.api import Parser, parsed_sentence
from nparse.eval.scores import score
from nparse.io.conllu import format_sentence, read_conllu
from nparse.io.segmenter import udpipe_sentences

OPTIONS = (
    "transition_system=projective;transition_oracle=dynamic;embedding_upostag=20;embedding_feats=0;"
    "embedding_xpostag=0;embedding_form=50;embedding_lemma=0;embedding_deprel=20"
)
TREEBANKS = ("en_ewt", "el_gdt", "hu_szeged")


def udpipe():
    import ufal.udpipe as module

    return module


def train(data: str, out: Path) -> Path:
    target = out / f"{data}.udpipe"
    if target.is_file():
        print(f"{target}: trained already", flush=True)
        return target
    u = udpipe()
    group = treebank(data)
    start = time.perf_counter()
    error = u.ProcessingError()
    model = u.Trainer.train(
        "morphodita_parsito", udpipe_sentences(split_path(group, "train")), udpipe_sentences(split_path(group, "dev")),
        "none", "none", OPTIONS, error,
    )  # fmt: skip
    if error.occurred():
        raise SystemExit(f"{data}: {error.message}")
    out.mkdir(parents=True, exist_ok=True)
    target.write_bytes(model)
    print(f"{target}: trained in {time.perf_counter() - start:.0f} s", flush=True)
    return target


def cpu() -> str:
    """The CPU's model name and the flags that matter for bf16."""
    try:
        info = subprocess.run(["lscpu"], capture_output=True, text=True, timeout=10).stdout
    except OSError:
        info = ""
    name = next(
        (line.split(":", 1)[1].strip() for line in info.splitlines() if line.startswith("Model name")),
        platform.processor(),
    )
    flags = next((line.split(":", 1)[1].split() for line in info.splitlines() if line.startswith("Flags")), [])
    wanted = [f for f in flags if f in ("avx2", "avx512f", "avx512_bf16", "amx_bf16", "amx_tile", "avx512_vnni")]
    return f"{name}; flags: {' '.join(wanted) or 'none of avx2/avx512/amx'}"


def udpipe_parse(model_path: Path, text: str, beam: int) -> tuple[str, float]:
    u = udpipe()
    model = u.Model.load(str(model_path))
    pipeline = u.Pipeline(model, "conllu", u.Pipeline.NONE, f"beam_search={beam}", "conllu")
    error = u.ProcessingError()
    start = time.perf_counter()
    out = pipeline.process(text, error)
    seconds = time.perf_counter() - start
    if error.occurred():
        raise SystemExit(f"UDPipe: {error.message}")
    return out, seconds


def nparse_parse(parser: Parser, text: str, batch_size: int | None, beam: int | None = None) -> tuple[str, float]:
    """Read, parse and write CoNLL-U as nparse-parse does (the model loaded, no character
    vector cached from an earlier run: a new process parsing a new file); ``beam``: the beam
    size (default: the model's own decoder), ``batch_size`` None: the model's own."""
    cache = parser.model.encoder.char_cache
    if cache is not None:
        cache.clear()
    start = time.perf_counter()
    sents = read_conllu(io.StringIO(text), allow_missing_heads=True)
    best = parser.parse_nbest(sents, beam_size=beam, batch_size=batch_size)
    out = "".join(format_sentence(parsed_sentence(s, p[0]), p[0].heads, p[0].labels) for s, p in zip(sents, best))
    return out, time.perf_counter() - start


def las(gold, text: str) -> float:
    pred = read_conllu(io.StringIO(text))
    return score(gold, [p.heads for p in pred], [p.deprels for p in pred]).las


def sentences_of_length(text: str, low: int, high: int) -> str:
    """The sentences of a CoNLL-U text with ``low`` to ``high`` words, in order."""
    blocks = [b for b in text.split("\n\n") if b.strip()]
    keep = [b for b in blocks if low <= sum(line.split("\t", 1)[0].isdigit() for line in b.split("\n")) <= high]
    return "".join(b + "\n\n" for b in keep)


def compare(models: list[tuple[str, str]], out: Path, repeats: int, precisions: list[str], beams: list[int],
            batch_size: int, lengths: list[int] | None = None) -> None:  # fmt: skip
    torch.set_num_threads(1)
    print(f"CPU: {cpu()}; torch {torch.__version__}, 1 thread per parser")
    if lengths:
        print(f"test sentences of {lengths[0]} to {lengths[1]} words only")
    print("| treebank | parser | words/s | vs UDPipe greedy | test LAS |")
    print("|---|---|---|---|---|")
    for data in dict.fromkeys(d for d, _ in models):
        text = split_path(treebank(data), "test").read_text(encoding="utf-8")
        if lengths:
            text = sentences_of_length(text, *lengths)
        gold = read_conllu(io.StringIO(text))
        words = sum(len(s) for s in gold)
        parsers = {
            f"nparse {Path(ckpt).parent.parent.name}, precision={p}": Parser.load(ckpt, "cpu", threads=1, precision=p)
            for d, ckpt in models if d == data for p in precisions
        }  # fmt: skip
        for parser in parsers.values():
            parser.parse_nbest(gold[:50])  # compiled kernels ready
        gc.freeze()  # as nparse-parse does once the model is loaded
        runs: dict[str, tuple[str, float]] = {}
        for _ in range(repeats):
            for beam in beams:
                done = udpipe_parse(out / f"{data}.udpipe", text, beam)
                name = f"UDPipe 1, beam {beam}"
                runs[name] = min(runs.get(name, done), done, key=lambda r: r[1])
            for label, parser in parsers.items():
                done = nparse_parse(parser, text, batch_size)
                name = f"{label} ({parser.precision[0]})"
                runs[name] = min(runs.get(name, done), done, key=lambda r: r[1])
        base = words / runs[f"UDPipe 1, beam {min(beams)}"][1]
        for name, (result, seconds) in runs.items():
            speed = words / seconds
            print(f"| {data} | {name} | {speed:,.0f} | {speed / base:.2f}x | {las(gold, result):.2f} |", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=("train", "compare"))
    ap.add_argument("--data", nargs="+", default=list(TREEBANKS))
    ap.add_argument("--models", nargs="*", default=[], help="DATA=CHECKPOINT for compare")
    ap.add_argument("--out", type=Path, default=RUNS / "udpipe")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--precision", nargs="+", default=["fp32", "auto"])
    ap.add_argument("--udpipe-beam", nargs="+", type=int, default=[1, 5])
    ap.add_argument(
        "--batch-size",
        type=int,
        default=512,
        help="nparse's decoder.batch_size, beam items per batch (the greedy presets' default)",
    )
    ap.add_argument(
        "--lengths", nargs=2, type=int, metavar=("MIN", "MAX"), default=None,
        help="compare on the test sentences of MIN to MAX words only (e.g. 6 14: short sentences, ~10 words)",
    )  # fmt: skip
    args = ap.parse_args()
    if args.command == "train":
        for data in args.data:
            train(data, args.out)
    else:
        models = [(m.split("=", 1)[0], m.split("=", 1)[1]) for m in args.models]
        compare(models, args.out, args.repeats, args.precision, args.udpipe_beam, args.batch_size, args.lengths)


if __name__ == "__main__":
    main()
