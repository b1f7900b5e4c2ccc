"""Fuzz the input side: mutated real sentences through the reader, the parser, evaluate and training.

The generator and the checks; the command line is ``tools/fuzz_conllu.py``:

    python tools/fuzz_conllu.py [--count N] [--seed S] [--classes a,b,...] [--json]

Every case takes 1-3 consecutive sentences of the shared treebanks' dev files (the bundled EWT
dev when those are absent), applies one mutation of one class (below) and writes the bytes to a
file. That file then goes through five consumers: the CoNLL-U/text reader (as ``format=auto``
sniffs it), ``nparse.load(...).parse(path)``, ``python -m nparse.parse`` (in-process), ``python
-m nparse.evaluate`` with the file as gold and prediction, and the training loader (reading,
skipping non-trees, the oracle's preparation). Each outcome must be

- ``ok``: a result checked against the input: every non-empty input line is kept, in order, in
  exactly one sentence (comments, multiword and empty-node lines included), the parser returns
  one sentence per input sentence with the same lines apart from HEAD/DEPREL, a single-rooted
  tree and ``root`` iff HEAD=0; or
- ``error``: a message that starts with ``file:line:`` (after the CLI's ``error: ``).

Anything else (another exception, a message without file:line, a wrong result, more than
``--timeout`` seconds) is a failure: printed with its case, and the exit status is 1. The model
is an untrained one (valid output must not depend on training), built once per run; every
other case is parsed by a model with the whole analysis (``+exp=archybrid_dynamic_ud``), whose
output must also hold a lemma and a well-formed FEATS value for every word, and whose training
loader checks LEMMA and FEATS.
"""

from __future__ import annotations

import contextlib
from dataclasses import asdict
import io
import json
import random
import re
import signal
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Callable

import torch
from hydra import compose, initialize_config_dir


from .. import checkpoint
from .. import config_schema  # noqa: F401  (registers the config schemas)
from ..config import Config
from .. import evaluate as evaluate_cli
from .. import parse as parse_cli
from ..api import Parser
from ..io.conllu import CoNLLUError, Sentence, read_conllu, read_text, read_utf8, sniff_format, tree_problem
from ..io.data import Vocabs
from ..io.feats import feats_problem
from ..models.parser import ParserModel
from ..paths import CONF_DIR, PROJECT_ROOT
from ..systems import make_oracle, make_system
from ..training.data import prepare_examples

SHARED = PROJECT_ROOT.parent / "shared" / "data" / "ud"
BUNDLED_DEV = PROJECT_ROOT / "data" / "ud" / "en_ewt" / "en_ewt-ud-dev.conllu"
LOCATED = re.compile(r"^(error: )?[^:\n]+:\d+: ")
Lines = list[str]


# -- mutations: each takes the sentences' lines (blank lines between sentences) and returns bytes --


def word_lines(lines: Lines) -> list[int]:
    return [k for k, line in enumerate(lines) if line and line[0].isdigit()]


def pick_word(lines: Lines, rng: random.Random) -> int:
    ks = [k for k in word_lines(lines) if re.match(r"^\d+\t", lines[k])]
    return rng.choice(ks)


def set_col(line: str, col: int, value: str) -> str:
    cols = line.split("\t")
    cols[col] = value
    return "\t".join(cols)


def text(lines: Lines) -> bytes:
    return ("\n".join(lines) + "\n\n").encode("utf-8")


def columns(lines: Lines, rng: random.Random) -> bytes:
    k = pick_word(lines, rng)
    cols = lines[k].split("\t")
    how = rng.randrange(4)
    if how == 0:
        del cols[rng.randrange(len(cols))]
    elif how == 1:
        cols.insert(rng.randrange(len(cols)), "extra")
    elif how == 2:
        lines[k] = " ".join(cols)
        return text(lines)
    else:
        cols = cols[: rng.randrange(1, 4)]
    lines[k] = "\t".join(cols)
    return text(lines)


def morphology(lines: Lines, rng: random.Random) -> bytes:
    """LEMMA or FEATS broken or odd: what a model with the whole analysis learns from and rewrites."""
    k = pick_word(lines, rng)
    if rng.random() < 0.5:
        lines[k] = set_col(lines[k], 2, rng.choice(["", "_", "x" * 300, "two words", "\u00a0", "<root>"]))
    else:
        bad = ["", "Case", "Case=", "=Nom", "case=Nom", "Number=Sing|Case=Nom", "Case=Nom|Case=Acc", "Case=Nom|",
               "Case=Nom,Acc", "Number[psor]=Sing", "X" * 300 + "=Y", "_|Case=Nom"]  # fmt: skip
        lines[k] = set_col(lines[k], 5, rng.choice(bad))
    return text(lines)


def heads(lines: Lines, rng: random.Random) -> bytes:
    k = pick_word(lines, rng)
    own = lines[k].split("\t")[0]
    lines[k] = set_col(
        lines[k], 6, rng.choice(["x", "-1", "99", "100000000000000000000", own, "_", "01", "", " 1", "1.0"])
    )
    return text(lines)


def deprels(lines: Lines, rng: random.Random) -> bytes:
    k = pick_word(lines, rng)
    lines[k] = set_col(lines[k], 7, rng.choice(["", "_", "root", "nsubj pass", "x" * 300, "ROOT"]))
    return text(lines)


def ids(lines: Lines, rng: random.Random) -> bytes:
    k = pick_word(lines, rng)
    how = rng.randrange(5)
    if how == 0:
        lines.insert(k, lines[k])  # duplicate
    elif how == 1:
        lines[k] = set_col(lines[k], 0, "0")
    elif how == 2:
        lines[k] = set_col(lines[k], 0, rng.choice(["x", "1x", "-3", "2.5.1", "1e3", "٣"]))
    elif how == 3:
        del lines[k]  # a gap
    else:
        j = pick_word(lines, rng)
        lines[k], lines[j] = lines[j], lines[k]
    return text(lines)


def multiword(lines: Lines, rng: random.Random) -> bytes:
    k = pick_word(lines, rng)
    i = int(lines[k].split("\t")[0])
    span = rng.choice([f"{i}-{i + 1}", f"{i}-{i + 500}", f"{i + 1}-{i}", f"{i}-{i}", f"{max(i - 1, 1)}-{i + 2}", "1-"])
    lines.insert(k, f"{span}\tdon't\t_\t_\t_\t_\t_\t_\t_\t_")
    if rng.random() < 0.5:  # and an overlapping one
        lines.insert(k, f"{i}-{i + 2}\tx\t_\t_\t_\t_\t_\t_\t_\t_")
    return text(lines)


def empty_nodes(lines: Lines, rng: random.Random) -> bytes:
    k = pick_word(lines, rng)
    i = int(lines[k].split("\t")[0])
    node = rng.choice([f"{i}.1", f"{i - 1}.1", f"{i}.0", f"{i}.x", f"{i + 50}.1", "0.1"])
    head = rng.choice(["_", "1", "0"])
    lines.insert(k + rng.randrange(2), f"{node}\tgone\t_\t_\t_\t_\t{head}\t_\t{i}:dep\t_")
    return text(lines)


def comments(lines: Lines, rng: random.Random) -> bytes:
    k = rng.randrange(len(lines) + 1)
    lines.insert(k, rng.choice(["#", "# sent_id = dup", "# text = \t\t", "#\x00", "# newdoc", "  # indented"]))
    return text(lines)


def crlf(lines: Lines, rng: random.Random) -> bytes:
    data = text(lines).decode("utf-8")
    if rng.random() < 0.5:
        return data.replace("\n", "\r\n").encode("utf-8")
    return "".join(line + ("\r\n" if rng.random() < 0.5 else "\n") for line in data.split("\n")).encode("utf-8")


def bom(lines: Lines, rng: random.Random) -> bytes:
    data = text(lines)
    if rng.random() < 0.7:
        return b"\xef\xbb\xbf" + data
    cut = data.find(b"\n", len(data) // 2) + 1
    return data[:cut] + b"\xef\xbb\xbf" + data[cut:]


def encodings(lines: Lines, rng: random.Random) -> bytes:
    data = "\n".join(lines) + "\n\n"
    how = rng.randrange(4)
    if how == 0:
        return data.encode("utf-16")
    if how == 1:
        return data.encode("latin-1", errors="replace")
    raw = data.encode("utf-8")
    at = rng.randrange(len(raw))
    return raw[:at] + (b"\xff" if how == 2 else b"\xc3") + raw[at:]


def final_blank(lines: Lines, rng: random.Random) -> bytes:
    data = "\n".join(lines)
    return rng.choice([data, data + "\n", data + "\n\n\n\n", data + "\n \n", "\n\n" + data + "\n\n"]).encode("utf-8")


def long(lines: Lines, rng: random.Random) -> bytes:
    k = pick_word(lines, rng)
    size = rng.choice([10_000, 100_000, 1_000_000])
    lines[k] = set_col(lines[k], rng.choice([1, 2, 9]), "x" * size)
    return text(lines)


def empty(lines: Lines, rng: random.Random) -> bytes:
    return rng.choice([b"", b"\n", b"\n\n\n", b"# only a comment\n", b"# a\n# b\n\n", b"   \n", b"\xef\xbb\xbf"])


def trees(lines: Lines, rng: random.Random) -> bytes:
    ks = [k for k in word_lines(lines) if re.match(r"^\d+\t", lines[k])]
    k, j = rng.choice(ks), rng.choice(ks)
    how = rng.randrange(3)
    if how == 0:  # a second root
        lines[k] = set_col(set_col(lines[k], 6, "0"), 7, "root")
    elif how == 1:  # a cycle (or a self-loop)
        lines[k] = set_col(lines[k], 6, lines[j].split("\t")[0])
        lines[j] = set_col(lines[j], 6, lines[k].split("\t")[0])
    else:  # no root
        for r in ks:
            if lines[r].split("\t")[6] == "0":
                lines[r] = set_col(lines[r], 6, lines[k].split("\t")[0] if r != k else lines[j].split("\t")[0])
    return text(lines)


def plain(lines: Lines, rng: random.Random) -> bytes:
    sents, cur = [], []
    for line in lines + [""]:
        if re.match(r"^\d+\t", line):
            cur.append(line.split("\t")[1])
        elif not line and cur:
            sents.append(" ".join(cur))
            cur = []
    body = "\n".join(sents) + "\n"
    if rng.random() < 0.3:  # plain text with one CoNLL-U-looking line in it
        body += "1\tThe\tthe\n"
    return body.encode("utf-8")


def controls(lines: Lines, rng: random.Random) -> bytes:
    k = pick_word(lines, rng)
    ch = rng.choice(["\x00", "\x0b", "\x0c", "\x1c", "\x1d", "\x85", "\u2028", "\u2029"])
    cols = lines[k].split("\t")
    cols[1] = cols[1][:1] + ch + cols[1][1:]
    lines[k] = "\t".join(cols)
    return text(lines)


def lone_cr(lines: Lines, rng: random.Random) -> bytes:
    """A carriage return inside a line (not before its newline): in any field of a word line, or
    in a comment; sometimes old Mac line ends (CR only) for the whole file."""
    if rng.random() < 0.1:
        return text(lines).replace(b"\n", b"\r")
    k = rng.choice([k for k, line in enumerate(lines) if line])
    at = rng.randrange(len(lines[k]) + 1)
    lines[k] = lines[k][:at] + "\r" + lines[k][at:]
    return text(lines)


CLASSES: dict[str, Callable[[Lines, random.Random], bytes]] = {
    "columns": columns,
    "morphology": morphology,
    "heads": heads,
    "deprels": deprels,
    "ids": ids,
    "multiword": multiword,
    "empty_nodes": empty_nodes,
    "comments": comments,
    "crlf": crlf,
    "bom": bom,
    "encodings": encodings,
    "final_blank": final_blank,
    "long": long,
    "empty": empty,
    "trees": trees,
    "plain_text": plain,
    "controls": controls,
    "lone_cr": lone_cr,
}


# -- the material and the model ------------------------------------------------------------


def source_blocks() -> list[Lines]:
    files = sorted(SHARED.glob("*/*-dev.conllu")) or [BUNDLED_DEV]
    blocks: list[Lines] = []
    for path in files:
        for block in read_utf8(path).split("\n\n"):
            lines = [line for line in block.split("\n") if line]
            if lines:
                blocks.append(lines)
    return blocks


def untrained_checkpoint(sents: list[Sentence], folder: Path, overrides: tuple[str, ...] = ()) -> Path:
    """A checkpoint of an untrained model of the default config (and ``overrides``)."""
    with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
        cfg = compose(config_name="config", overrides=list(overrides))
    config = Config.composed(cfg)
    torch.manual_seed(0)
    vocabs = Vocabs.build(sents, morphology=config.model.analysis or config.model.feats_dim > 0)
    model = ParserModel(vocabs, make_system(**asdict(config.system)), config.model)
    path = folder / "untrained.pt"
    checkpoint.save_atomic(
        {
            "config": config.to_dict(),
            "model": model.state_dict(),
            "model_options": asdict(config.model),
            "system": asdict(config.system),
            "vocabs": vocabs.state_dict(),
        },
        path,
    )
    return path


# -- checking the outcomes -----------------------------------------------------------------


class Failure(Exception):
    """A result that is neither valid nor a located error."""


class Hang(Exception):
    pass


def expected(path: Path) -> tuple[str, list[Lines]] | None:
    """How the file should be read: its format and the non-empty lines of each sentence (None if
    the bytes are not UTF-8, which must then be a located error)."""
    try:
        data = path.read_bytes().decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError:
        return None
    fmt = sniff_format(data)
    sents: list[Lines] = []
    cur: Lines = []
    for line in data.split("\n"):
        line = line.removesuffix("\r")
        if fmt == "text":
            if line.split():
                sents.append(line.split())
            continue
        if line == "":
            if cur:
                sents.append(cur)
            cur = []
        else:
            cur.append(line)
    if cur:
        sents.append(cur)
    return fmt, sents


def check_read(sents: list[Sentence], want: tuple[str, list[Lines]]) -> None:
    fmt, blocks = want
    if len(sents) != len(blocks):
        raise Failure(f"{len(sents)} sentences read, {len(blocks)} in the file")
    for s, block in zip(sents, blocks):
        got = s.forms[1:] if fmt == "text" else s.lines
        if got != block:
            raise Failure(f"sentence at line {s.line}: lines or words differ from the file")


def masked(lines: Lines, analysis: bool = False) -> Lines:
    """The lines with HEAD and DEPREL of syntactic words blanked (what parsing may change; with
    ``analysis``, also LEMMA, UPOS, XPOS and FEATS, which such a model writes)."""
    cols = (2, 3, 4, 5, 6, 7) if analysis else (6, 7)
    out = []
    for line in lines:
        if re.match(r"^\d+\t", line):
            for c in cols:
                line = set_col(line, c, "")
        out.append(line)
    return out


def check_parsed(parsed: list[Sentence], sents: list[Sentence], analysis: bool = False) -> None:
    if len(parsed) != len(sents):
        raise Failure(f"{len(parsed)} parses for {len(sents)} sentences")
    for p, s in zip(parsed, sents):
        if masked(p.lines, analysis) != masked(s.lines, analysis) or p.forms != s.forms:
            raise Failure(f"sentence at line {s.line} changed")
        if analysis:
            for i in range(1, len(p) + 1):
                lemma, feats = p.lemmas[i], p.feats[i]
                if lemma in ("", "_") or "\t" in lemma or "\n" in lemma or feats_problem(feats):
                    raise Failure(
                        f"sentence at line {s.line}: word {i} analysed as {lemma!r} {p.upos[i]} {p.xpos[i]} {feats}"
                    )
        problem = tree_problem(p.heads)
        if problem:
            raise Failure(f"sentence at line {s.line}: output is not a tree: {problem}")
        if any((h == 0) != (label == "root") for h, label in zip(p.heads[1:], p.deprels[1:])):
            raise Failure(f"sentence at line {s.line}: root label not tied to HEAD=0")


def located(message: str) -> bool:
    return bool(LOCATED.match(message.strip().splitlines()[0] if message.strip() else ""))


def outcome(run: Callable[[], str | None], timeout: float) -> tuple[str, str]:
    """('ok' | 'error' | 'FAIL' | 'HANG', detail)."""

    def alarm(signum, frame):
        raise Hang()

    old = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        err = run()
        if err is None:
            return "ok", ""
        return ("error", err) if located(err) else ("FAIL", f"message without file:line: {err[:300]}")
    except Hang:
        return "HANG", f"over {timeout} s"
    except Failure as bad:
        return "FAIL", str(bad)
    except (CoNLLUError, ValueError, OSError) as err:
        return ("error", str(err)) if located(str(err)) else ("FAIL", f"{type(err).__name__}: {str(err)[:300]}")
    except Exception as err:  # noqa: BLE001 - anything else is what we look for
        return "FAIL", f"{type(err).__name__}: {str(err)[:300]}"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def read_sniffed(path: Path) -> list[Sentence]:
    """The file read as ``format=auto`` reads it."""
    if sniff_format(read_utf8(path)) == "conllu":
        return read_conllu(path, allow_missing_heads=True)
    return read_text(path)


def consumers(path: Path, parser: Parser, model_path: Path, folder: Path) -> dict[str, Callable[[], str | None]]:
    want = expected(path)
    analysis = parser.model.analyser is not None

    def read() -> str | None:
        sents = read_sniffed(path)
        if want is None:
            raise Failure("invalid UTF-8 was read without an error")
        check_read(sents, want)
        return None

    def api() -> str | None:
        parsed = parser.parse(path)
        check_parsed(parsed, read_sniffed(path), analysis)  # type: ignore[arg-type]
        return None

    def cli() -> str | None:
        out = folder / "out.conllu"
        out.unlink(missing_ok=True)
        stderr = io.StringIO()
        with contextlib.redirect_stderr(stderr):
            rc = parse_cli.main([f"model={model_path}", f"input={path}", f"output={out}", "device=cpu"])
        if rc != 0:
            if out.exists():
                raise Failure("output written although parsing failed")
            return stderr.getvalue()
        check_parsed(read_conllu(out), read_sniffed(path), analysis)
        with open(out, encoding="utf-8", newline=None) as universal:  # as most readers see it
            if universal.read() != out.read_text(encoding="utf-8"):
                raise Failure("the output reads differently with universal newlines")
        return None

    def evaluate() -> str | None:
        stdout, stderr = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            rc = evaluate_cli.main([f"gold={path}", f"pred={path}", "json=true"])
        if rc != 0:
            return stderr.getvalue()
        scores = json.loads(stdout.getvalue())
        if scores["words"] and scores["uas"] != 100.0:
            raise Failure(f"a file scored against itself gets UAS {scores['uas']}")
        return None

    def train() -> str | None:
        sents, skipped = [], []
        for s in read_conllu(path):
            (skipped.append(s) if tree_problem(s.heads) else sents.append(s))
        if want is None:
            raise Failure("invalid UTF-8 was read without an error")
        if want[0] == "conllu" and len(sents) + len(skipped) != len(want[1]):
            raise Failure("training sentences lost without being reported as skipped")
        oracle = make_oracle(make_system("archybrid"), "dynamic")
        prepare_examples(sents, Vocabs.build(sents, morphology=analysis), oracle, [])
        return None

    return {"reader": read, "api": api, "cli": cli, "evaluate": evaluate, "train": train}


def fuzz(count: int, seed: int, classes: list[str], timeout: float = 30.0, progress: bool = True) -> dict:
    unknown = set(classes) - set(CLASSES)
    if unknown:
        raise SystemExit(f"unknown classes {sorted(unknown)}; choose from {sorted(CLASSES)}")
    rng = random.Random(seed)
    blocks = source_blocks()
    table: dict[str, Counter] = defaultdict(Counter)
    failures: list[dict] = []
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        # The models' vocabularies: 100 sentences spread over the files (every language's
        # characters). Each CLI case loads a model and fills its character cache with every
        # vocabulary form: 400 sentences made that half of the run's time.
        spread = blocks[:: max(1, len(blocks) // 100)]
        base = [s for b in spread for s in read_conllu(io.StringIO("\n".join(b) + "\n\n"))]
        # every other case: a model with the whole analysis (reads no tags, writes every column)
        models = [untrained_checkpoint(base, folder)]
        (folder / "ud").mkdir()
        models.append(untrained_checkpoint(base, folder / "ud", ("+exp=archybrid_dynamic_ud",)))
        parsers = [Parser.load(m, "cpu") for m in models]
        torch.set_num_threads(1)
        for case in range(count):
            name = classes[case % len(classes)]
            at = rng.randrange(len(blocks))
            lines = [line for b in blocks[at : at + rng.randint(1, 3)] for line in b + [""]][:-1]
            data = CLASSES[name](list(lines), rng)
            path = folder / f"case{case}.conllu"
            path.write_bytes(data)
            table[name]["cases"] += 1
            for consumer, run in consumers(path, parsers[case % 2], models[case % 2], folder).items():
                kind, detail = outcome(run, timeout)
                table[name][f"{consumer} {kind}"] += 1
                if kind in ("FAIL", "HANG"):
                    failures.append({"case": case, "class": name, "consumer": consumer, "kind": kind,
                                     "detail": detail, "input": data[:2000].decode("utf-8", "replace")})  # fmt: skip
            path.unlink()
            if progress and sys.stderr.isatty():
                print(f"\r{case + 1}/{count} cases, {len(failures)} failures", end="", file=sys.stderr)
    if progress and sys.stderr.isatty():
        print(file=sys.stderr)
    return {"count": count, "seed": seed, "seconds": round(time.perf_counter() - start, 1),
            "table": {k: dict(v) for k, v in table.items()}, "failures": failures}  # fmt: skip


def print_table(result: dict) -> None:
    consumers_ = ("reader", "api", "cli", "evaluate", "train")
    print(f"{result['count']} cases, seed {result['seed']}, {result['seconds']} s")
    print("| class | cases | " + " | ".join(f"{c} ok/error" for c in consumers_) + " | failures |")
    print("|---|---|" + "---|" * len(consumers_) + "---|")
    totals: Counter = Counter()
    for name, row in result["table"].items():
        totals.update(row)
        bad = sum(v for k, v in row.items() if k.endswith(("FAIL", "HANG")))
        cells = " | ".join(f"{row.get(c + ' ok', 0)}/{row.get(c + ' error', 0)}" for c in consumers_)
        print(f"| {name} | {row['cases']} | {cells} | {bad} |")
    bad = sum(v for k, v in totals.items() if k.endswith(("FAIL", "HANG")))
    cells = " | ".join(f"{totals.get(c + ' ok', 0)}/{totals.get(c + ' error', 0)}" for c in consumers_)
    print(f"| all | {totals['cases']} | {cells} | {bad} |")
    for f in result["failures"][:20]:
        print(f"\ncase {f['case']} ({f['class']}) {f['consumer']}: {f['kind']}: {f['detail']}")
        print("  " + f["input"][:600].replace("\n", "\n  "))
