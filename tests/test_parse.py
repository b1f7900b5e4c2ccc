"""Inference: the parse command line, plain text, untagged input, pretrained vectors."""

from __future__ import annotations

import subprocess
import sys

import pytest

from nparse.io.conllu import read_conllu, tree_problem
from nparse.models.encoder import read_vectors
from nparse.paths import PROJECT_ROOT
from nparse.pipeline.workers import worker_count

from .conftest import EWT_DEV, run_train

pytestmark = pytest.mark.slow  # it trains or runs a command (pytest -m 'not slow' leaves it out)


def parse_cmd(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "nparse.parse", *args]
    return subprocess.run(cmd, cwd=PROJECT_ROOT, input=stdin, capture_output=True, text=True, timeout=300)


def test_parse_conllu_file_changes_only_head_and_deprel(tiny_run, tmp_path):
    gold = EWT_DEV.read_text(encoding="utf-8")
    source = tmp_path / "in.conllu"
    source.write_text("\n\n".join(gold.split("\n\n")[:40]) + "\n\n", encoding="utf-8")
    out = tmp_path / "out.conllu"
    proc = parse_cmd(f"model={tiny_run / 'best.pt'}", f"input={source}", f"output={out}")
    assert proc.returncode == 0, proc.stderr
    assert "words/s" in proc.stderr
    before, after = source.read_text().splitlines(), out.read_text().splitlines()
    assert len(before) == len(after)
    for a, b in zip(before, after):
        ca, cb = a.split("\t"), b.split("\t")
        if len(ca) == 10 and ca[0].isdigit():
            assert ca[:6] + ca[8:] == cb[:6] + cb[8:]
        else:
            assert a == b  # comments, multiword tokens, empty nodes, blank lines
    assert all(tree_problem(s.heads) is None for s in read_conllu(out))


def test_parse_reads_stdin_and_writes_stdout(tiny_run):
    sent = "1\tDogs\tdog\tNOUN\tNNS\t_\t_\t_\t_\t_\n2\tbark\tbark\tVERB\tVBP\t_\t_\t_\t_\t_\n\n"
    proc = parse_cmd(f"model={tiny_run / 'best.pt'}", stdin=sent)
    assert proc.returncode == 0, proc.stderr
    rows = [line.split("\t") for line in proc.stdout.strip().splitlines()]
    assert sorted(r[6] for r in rows) == ["0", "1"] or sorted(r[6] for r in rows) == ["0", "2"]


def test_streams_that_cannot_rewind_are_read_and_dev_stdout_is_written_through(tiny_run, tmp_path):
    """input=/dev/stdin from a pipe (or a process substitution) cannot be rewound after format=auto
    sniffs it: it is spooled, as input=- is. output=/dev/stdout goes through the descriptor the
    shell set up: into a pipe, or appended to a file redirected with >>."""
    sent = "1\tDogs\tdog\tNOUN\tNNS\t_\t_\t_\t_\t_\n2\tbark\tbark\tVERB\tVBP\t_\t_\t_\t_\t_\n\n"
    proc = parse_cmd(f"model={tiny_run / 'best.pt'}", "input=/dev/stdin", "output=/dev/stdout", stdin=sent)
    assert proc.returncode == 0, proc.stderr
    assert [line.split("\t")[1] for line in proc.stdout.strip().splitlines()] == ["Dogs", "bark"]
    log = tmp_path / "log.conllu"
    log.write_text("# earlier\n")
    with open(log, "a") as handle:
        cmd = [sys.executable, "-m", "nparse.parse", f"model={tiny_run / 'best.pt'}", "output=/dev/stdout"]
        proc = subprocess.run(cmd, cwd=PROJECT_ROOT, input=sent, stdout=handle, stderr=subprocess.PIPE, text=True,
                              timeout=300)  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert log.read_text().startswith("# earlier\n1\tDogs\t")


def test_model_with_pos_refuses_untagged_text(tiny_run):
    proc = parse_cmd(f"model={tiny_run / 'best.pt'}", stdin="The cat sleeps .\n")
    assert proc.returncode == 1
    assert "trained with UPOS features" in proc.stderr and "<stdin>:1:" in proc.stderr


def test_model_without_pos_parses_plain_text(tmp_path):
    run = tmp_path / "nopos"
    run_train(
        run,
        "+exp=archybrid_static",
        "data.max_train_sentences=60",
        "trainer.epochs=1",
        "model.upos_dim=0",
        "data.test=null",
        f"data.dev={EWT_DEV}",
    )
    proc = parse_cmd(f"model={run / 'best.pt'}", "format=text", stdin="The cat sleeps .\n\nDogs bark\n")
    assert proc.returncode == 0, proc.stderr
    sents = proc.stdout.strip().split("\n\n")
    assert len(sents) == 2
    assert "# text = The cat sleeps ." in sents[0]
    # lang= without format=raw: the text is still read as tokens, and a warning says lang= was not used
    proc = parse_cmd(f"model={run / 'best.pt'}", "format=text", "lang=en", stdin="The cat sleeps .\n")
    assert proc.returncode == 0 and "warning: lang= apply only to format=raw; <stdin> is read as text" in proc.stderr


def test_python_api_parses_token_lists(tiny_run):
    import nparse

    parser = nparse.load(tiny_run / "best.pt", device="cpu")
    with pytest.raises(ValueError, match="UPOS"):
        parser.parse([["The", "cat", "sleeps", "."]])


def test_bad_checkpoint_path_is_a_clear_error(tmp_path):
    proc = parse_cmd(f"model={tmp_path / 'missing.pt'}", stdin="1\ta\t_\tX\t_\t_\t_\t_\t_\t_\n\n")
    assert proc.returncode == 1 and "checkpoint not found" in proc.stderr


def test_pretrained_vectors_file(tmp_path):
    path = tmp_path / "vec.txt"
    path.write_text("2 3\nthe 0.1 0.2 0.3\ncat 1 2 3\n")
    words, vectors = read_vectors(path)
    assert words == ["the", "cat"] and vectors.shape == (2, 3)
    path.write_text("the 0.1 0.2 0.3\ncat 1 2\n")
    with pytest.raises(ValueError, match=r"vec.txt:2: expected 3 values"):
        read_vectors(path)


def test_parse_with_a_beam_and_nbest(tiny_run, tmp_path):
    """beam_size=K parses with a beam; nbest=k writes each sentence once per tree, best first,
    with '# nbest = i' and '# score = S' comments, the first copy being the 1-best parse."""
    gold = EWT_DEV.read_text(encoding="utf-8")
    source = tmp_path / "in.conllu"
    source.write_text("\n\n".join(gold.split("\n\n")[:20]) + "\n\n", encoding="utf-8")
    best, many = tmp_path / "best.conllu", tmp_path / "nbest.conllu"
    model = f"model={tiny_run / 'best.pt'}"
    proc = parse_cmd(model, f"input={source}", f"output={best}", "beam_size=4")
    assert proc.returncode == 0 and "beam 4" in proc.stderr, proc.stderr
    proc = parse_cmd(model, f"input={source}", f"output={many}", "beam_size=4", "nbest=3")
    assert proc.returncode == 0, proc.stderr
    ones, lists = read_conllu(best), read_conllu(many)
    assert len(ones) < len(lists) <= 3 * len(ones)
    k = 0
    for one in ones:
        copies = []
        while k < len(lists) and lists[k].sent_id == one.sent_id:
            copies.append(lists[k])
            k += 1
        ranks = [int(next(c for c in s.lines if c.startswith("# nbest = ")).split("=")[1]) for s in copies]
        scores = [float(next(c for c in s.lines if c.startswith("# score = ")).split("=")[1]) for s in copies]
        assert ranks == list(range(1, len(copies) + 1))
        assert scores == sorted(scores, reverse=True)
        assert copies[0].heads == one.heads and copies[0].deprels == one.deprels
        assert len({tuple(c.heads) for c in copies}) == len(copies)
        assert all(tree_problem(c.heads) is None for c in copies)
    assert k == len(lists)
    proc = parse_cmd(model, f"input={source}", "beam_size=2", "nbest=3")
    assert proc.returncode == 1 and "nbest=3" in proc.stderr


def test_python_api_beam_and_nbest(tiny_run):
    import nparse

    parser = nparse.load(tiny_run / "best.pt", device="cpu")
    assert parser.beam_size == 1  # trained with the greedy decoder
    sents = read_conllu(EWT_DEV)[:10]
    greedy = parser.parse(sents)
    lists = parser.parse(sents, beam_size=4, nbest=2)
    assert len(lists) == len(sents) and all(1 <= len(x) <= 2 for x in lists)
    assert all(x[0].score >= x[-1].score and x[0].score is not None for x in lists)
    assert [len(s) for s in greedy] == [len(x[0]) for x in lists]


def test_invalid_utf8_is_reported_with_file_line_and_byte(tmp_path, tiny_run):
    """A 0xff byte on line 5: parse (CLI and API), evaluate and train name file:5: and the byte;
    a leading byte-order mark is skipped."""
    import io

    import nparse

    data = (EWT_DEV.read_text(encoding="utf-8").split("\n\n")[0] + "\n\n").encode("utf-8")
    broken = data.split(b"\n")
    broken[4] = broken[4].replace(b"\t", b"\t\xff", 1)
    bad = tmp_path / "bad.conllu"
    bad.write_bytes(b"\n".join(broken))
    where = f"{bad}:5: invalid UTF-8: byte 0xff"
    with pytest.raises(ValueError, match=where.replace(".", r"\.")):
        nparse.load(tiny_run / "best.pt", device="cpu").parse(bad)
    for cmd in (
        ["nparse.parse", f"model={tiny_run / 'best.pt'}", f"input={bad}"],
        ["nparse.evaluate", f"gold={bad}", f"pred={bad}"],
        ["nparse.train", f"hydra.run.dir={tmp_path / 'run'}", f"data.train={bad}", "data.dev=null", "data.test=null"],
    ):
        proc = subprocess.run(
            [sys.executable, "-m", *cmd], cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=300
        )
        assert proc.returncode == 1 and where in proc.stderr and "Traceback" not in proc.stderr, (
            cmd[0],
            proc.stderr[-1500:],
        )
    bom = tmp_path / "bom.conllu"
    bom.write_bytes(b"\xef\xbb\xbf" + data)
    assert len(read_conllu(bom)) == 1 and read_conllu(bom)[0].forms == read_conllu(io.StringIO(data.decode()))[0].forms


@pytest.mark.parametrize("mutation", ["spaces", "9 columns", "11 columns"])
def test_malformed_conllu_is_not_misread_as_text(tmp_path, tiny_run, mutation):
    """format=auto: a CoNLL-U file whose first word line is malformed is still read as CoNLL-U,
    and the bad line is reported (not 47 'sentences' of plain text, exit 0)."""
    import nparse

    blocks = EWT_DEV.read_text(encoding="utf-8").split("\n\n")[:3]
    lines = blocks[0].split("\n")
    k = next(i for i, line in enumerate(lines) if not line.startswith("#"))
    lines[k] = {
        "spaces": lines[k].replace("\t", " "),
        "9 columns": "\t".join(lines[k].split("\t")[:9]),
        "11 columns": lines[k] + "\tX",
    }[mutation]
    bad = tmp_path / "bad.conllu"
    bad.write_text("\n".join(lines) + "\n\n" + "\n\n".join(blocks[1:]) + "\n\n", encoding="utf-8")
    where = f"{bad}:{k + 1}: expected 10 tab-separated columns"
    with pytest.raises(ValueError, match=where.replace(".", r"\.")):
        nparse.load(tiny_run / "best.pt", device="cpu").parse(bad)
    proc = subprocess.run([sys.executable, "-m", "nparse.parse", f"model={tiny_run / 'best.pt'}", f"input={bad}"],
                          cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert proc.returncode == 1 and where in proc.stderr


def test_a_huge_token_parses_in_bounded_memory(tiny_run):
    """A 1 MB token: the character model reads 50 characters of it, so parsing is quick and
    the sentence comes back whole (it used to allocate 8.8 GB)."""
    import time

    import nparse

    parser = nparse.load(tiny_run / "best.pt", device="cpu")
    sent = read_conllu(EWT_DEV)[0]
    forms = list(sent.forms)
    forms[1] = "x" * 1_000_000
    from dataclasses import replace

    start = time.perf_counter()
    parsed = parser.parse([replace(sent, forms=forms)])
    assert time.perf_counter() - start < 20
    assert len(parsed[0]) == len(sent) and tree_problem(parsed[0].heads) is None


def test_parse_streams_in_chunks_and_writes_atomically(tiny_run, tmp_path, monkeypatch, capsys):
    """Issue 10, streaming and disks: memory bounded by the chunk, never a half-written output."""
    import errno

    from nparse import parse as parse_cli
    from nparse.api import Parser

    source = tmp_path / "in.conllu"
    source.write_text(EWT_DEV.read_text(encoding="utf-8"), encoding="utf-8")
    model = f"model={tiny_run / 'best.pt'}"
    whole, chunked = tmp_path / "whole.conllu", tmp_path / "chunked.conllu"
    assert parse_cli.main([model, f"input={source}", f"output={whole}", "device=cpu", "threads=1"]) == 0
    assert "with 1 CPU threads (set explicitly)" in capsys.readouterr().err
    sizes: list[int] = []
    real = Parser.parse_nbest

    def counting(self, sentences, *args, **kwargs):
        sizes.append(len(sentences))
        return real(self, sentences, *args, **kwargs)

    monkeypatch.setattr(Parser, "parse_nbest", counting)
    assert parse_cli.main([model, f"input={source}", f"output={chunked}", "chunk=300", "device=cpu"]) == 0
    assert max(sizes) == 300 and sum(sizes) == len(read_conllu(EWT_DEV))
    assert chunked.read_bytes() == whole.read_bytes()

    # A full disk while writing the third chunk: exit 1, a message, no output and no temporary file.
    from nparse.pipeline import writing

    real_write = writing.write_chunk
    calls = []

    def disk_full(text, out):
        calls.append(1)
        if len(calls) == 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        real_write(text, out)

    monkeypatch.setattr(writing, "write_chunk", disk_full)
    target = tmp_path / "out" / "full.conllu"
    target.parent.mkdir()
    capsys.readouterr()
    assert parse_cli.main([model, f"input={source}", f"output={target}", "chunk=300", "device=cpu"]) == 1
    err = capsys.readouterr().err
    assert "No space left on device" in err and "nothing written" in err and "Traceback" not in err
    assert list(target.parent.iterdir()) == []
    monkeypatch.setattr(writing, "write_chunk", real_write)

    # A bad line near the end of the input: reported at its line, nothing written.
    bad = tmp_path / "bad.conllu"
    bad.write_text(EWT_DEV.read_text(encoding="utf-8") + "1\tonly two\n\n", encoding="utf-8")
    assert parse_cli.main([model, f"input={bad}", f"output={target}", "chunk=300", "device=cpu"]) == 1
    lines = len(EWT_DEV.read_text(encoding="utf-8").splitlines())
    assert f"{bad}:{lines + 1}:" in capsys.readouterr().err
    assert list(target.parent.iterdir()) == []
    # An output folder that cannot exist.
    assert parse_cli.main([model, f"input={source}", f"output={source}/x.conllu", "device=cpu"]) == 1
    assert "cannot write" in capsys.readouterr().err


def test_training_refuses_a_run_directory_it_cannot_create(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    cmd = [sys.executable, "-m", "nparse.train", f"hydra.run.dir={blocker}/run"]
    proc = subprocess.run(cmd, cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and "cannot create the run directory" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_workers_write_what_one_process_writes(tiny_run, tmp_path, capsys, monkeypatch):
    """workers=N: the same bytes as workers=1, in input order; a bad line still leaves no output;
    workers=auto takes SLURM_CPUS_PER_TASK."""
    from nparse import parse as parse_cli

    model = f"model={tiny_run / 'best.pt'}"
    one, two = tmp_path / "one.conllu", tmp_path / "two.conllu"
    assert parse_cli.main([model, f"input={EWT_DEV}", f"output={one}", "chunk=150", "device=cpu", "threads=1"]) == 0
    assert parse_cli.main([model, f"input={EWT_DEV}", f"output={two}", "chunk=150", "device=cpu", "workers=2"]) == 0
    assert "2 worker processes" in capsys.readouterr().err
    assert two.read_bytes() == one.read_bytes()
    # Spawned workers (a GPU, or no fork) load the model themselves: the same bytes.
    import multiprocessing

    monkeypatch.setattr(multiprocessing, "get_all_start_methods", lambda: ["spawn"])
    spawned = tmp_path / "spawned.conllu"
    assert parse_cli.main([model, f"input={EWT_DEV}", f"output={spawned}", "chunk=150", "device=cpu", "workers=2"]) == 0
    assert spawned.read_bytes() == one.read_bytes()
    monkeypatch.undo()
    ids = [line for line in EWT_DEV.read_text(encoding="utf-8").splitlines() if line.startswith("# sent_id")]
    assert [line for line in two.read_text(encoding="utf-8").splitlines() if line.startswith("# sent_id")] == ids
    # A bad line in the last chunk, read by a worker: its file and line come back, nothing is written.
    bad = tmp_path / "bad.conllu"
    text = EWT_DEV.read_text(encoding="utf-8")
    bad.write_text(text + "1\tonly two\n\n", encoding="utf-8")
    target = tmp_path / "out" / "x.conllu"
    target.parent.mkdir()
    assert parse_cli.main([model, f"input={bad}", f"output={target}", "chunk=150", "workers=2"]) == 1
    assert f"{bad}:{len(text.splitlines()) + 1}:" in capsys.readouterr().err and list(target.parent.iterdir()) == []
    # Errors in two chunks: as one process, the chunks before the first bad one are written to
    # standard output, and the first bad chunk's error is the one reported.
    blocks = text.split("\n\n")
    blocks[400] = blocks[400] + "\n1\tonly two"
    blocks[200] = blocks[200] + "\n1\tonly two"
    twice = tmp_path / "twice.conllu"
    twice.write_text("\n\n".join(blocks), encoding="utf-8")
    capsys.readouterr()
    printed = []
    for setting in ("threads=1", "workers=2"):
        assert parse_cli.main([model, f"input={twice}", "chunk=150", setting]) == 1
        out, err = capsys.readouterr()
        printed.append((out, [line for line in err.splitlines() if line.startswith("error")]))
    assert printed[0] == printed[1] and printed[0][0].count("# sent_id") == 150
    assert printed[0][1][-1] == "error: only the first 150 sentences were written to standard output"
    monkeypatch.setenv("SLURM_CPUS_PER_TASK", "3")
    assert worker_count("auto") == 3
    assert worker_count("auto", on_gpu=True) == 1  # spawned workers cost more than they gain on one GPU
    assert worker_count("2", on_gpu=True) == 2 and "workers=2 on a GPU" in capsys.readouterr().err
    assert parse_cli.main([model, f"input={EWT_DEV}", "workers=0"]) == 1
    assert "workers=0" in capsys.readouterr().err


class _Slow:
    """Parses a group of one-word sentences, slowly when it holds sentence 1 (``parallel``'s test)."""

    settings = None
    parser = type("P", (), {"model": type("M", (), {"device": __import__("torch").device("cpu")})()})()

    def texts(self, part):
        import time

        if any(sent.line == 1 for sent in part):
            time.sleep(1.0)
        return [f"{sent.line}\n" for sent in part]


class _OneWord:
    def __init__(self, line: int):
        self.line = line

    def __len__(self) -> int:
        return 1


def test_a_chunk_job_parses_with_every_setting_it_was_given():
    """What a worker parses with is what the command line or ``parse_file`` asked for, the cap
    on tokens per batch included (it bounds memory; the parse does not depend on it)."""
    from nparse.decoding.settings import DecodeSettings
    from nparse.pipeline.workers import ChunkJob

    asked = {}

    class Recording:
        def parse_nbest(self, sentences, **options):
            asked.update(options)
            return [[] for _ in sentences]

    settings = DecodeSettings(batch_size=8, batch_tokens=300, beam_size=2, decoder="beam", nbest=2).normalised()
    job = ChunkJob(lambda: None, settings, nbest=True, html=False)
    job.parser = Recording()
    job.texts([])
    expected = {
        k: getattr(settings, k)
        for k in ("beam_size", "nbest", "batch_size", "batch_tokens", "decoder", "scores", "temperature")
    }
    assert asked == expected


def test_workers_read_ahead_a_bounded_number_of_chunks():
    """While the first chunk's group is slow, the parent reads at most 2 + 2 x workers chunks
    ahead (not the whole input), and still yields every chunk in order."""
    from contextlib import ExitStack

    from nparse.decoding.settings import DecodeSettings
    from nparse.pipeline.workers import parallel

    job = _Slow()
    job.settings = DecodeSettings(batch_size=8).normalised()
    read = []

    def parts():
        for k in range(1, 201):
            read.append(k)
            yield [_OneWord(k)]

    with ExitStack() as stack:
        results = parallel(job, parts(), 2, stack, size=1)
        first = next(results)
        assert first == ("1\n", 1, 1) and len(read) <= 2 + 2 * 2 + 1
        rest = list(results)
    assert [text for text, _, _ in rest] == [f"{k}\n" for k in range(2, 201)]


def test_workers_report_the_error_one_process_reports(tiny_run, tmp_path, capsys):
    """With bad sentences in several groups of a chunk (a long one early, a short one later: a
    worker reads its group in length order), or a line refused while reading ahead, workers=2
    prints what workers=1 prints: the chunks before the error, and the first error in the file."""
    from nparse import parse as parse_cli

    model = f"model={tiny_run / 'best.pt'}"
    blocks = EWT_DEV.read_text(encoding="utf-8").rstrip("\n").split("\n\n")
    lengths = [sum(line.split("\t")[0].isdigit() for line in b.splitlines()) for b in blocks]
    long_one = next(i for i in range(300, 400) if lengths[i] >= 40)
    mid_one = next(i for i in range(long_one + 1, 1000) if 25 <= lengths[i] < lengths[long_one])  # same group
    short_one = next(i for i in range(long_one + 1, 1000) if lengths[i] <= 5)  # another group

    def spoiled(i: int) -> str:  # HEAD x on the last word: same length, refused when read
        lines = blocks[i].splitlines()
        cols = lines[-1].split("\t")
        cols[6] = "x"
        return "\n".join([*lines[:-1], "\t".join(cols)])

    bad_reads = list(blocks)
    for i in (long_one, mid_one, short_one):
        bad_reads[i] = spoiled(i)
    whitespace = list(blocks)
    whitespace[1450] = whitespace[1450].replace("\n", "\n  \n", 1)  # refused while reading, in the parent
    untagged_then_bad = list(blocks)  # a missing tag early, a bad HEAD later: one process reads first
    early = next(i for i in range(0, 100) if lengths[i] <= 5)
    untagged_then_bad[early] = "\n".join(
        "\t".join(c[:3] + ["_"] + c[4:]) if len(c := line.split("\t")) == 10 else line
        for line in blocks[early].splitlines()
    )
    untagged_then_bad[long_one] = spoiled(long_one)
    cases = (("two_bad.conllu", bad_reads), ("blank.conllu", whitespace), ("untagged.conllu", untagged_then_bad))
    for name, text in cases:
        path = tmp_path / name
        path.write_text("\n\n".join(text) + "\n\n", encoding="utf-8")
        printed = []
        for setting in ("threads=1", "workers=2"):
            assert parse_cli.main([model, f"input={path}", "chunk=1000", setting]) == 1
            out, err = capsys.readouterr()
            printed.append((out, [line for line in err.splitlines() if line.startswith("error")]))
        assert printed[0] == printed[1], name
        if name == "two_bad.conllu":
            first = sum(len(b.splitlines()) + 1 for b in blocks[:long_one]) + len(blocks[long_one].splitlines())
            assert printed[0][0] == "" and printed[0][1][0].startswith(f"error: {path}:{first}: HEAD 'x'")
        elif name == "blank.conllu":
            assert printed[0][0].count("# sent_id") == 1000 and "whitespace only" in printed[0][1][0]
        else:
            assert "HEAD 'x'" in printed[0][1][0]


def test_worker_groups_are_runs_of_the_batches_one_process_forms():
    """parse workers=N send whole batches: each group, batched again by a worker, gives the very
    batches that workers=1 forms for the whole chunk (with and without a token cap)."""
    import random

    from nparse.decoding.settings import DecodeSettings
    from nparse.io.data import length_batches
    from nparse.pipeline.reading import ConlluChunk
    from nparse.pipeline.workers import sorted_groups

    rng = random.Random(3)
    lengths = [rng.randint(1, 60) for _ in range(1000)]
    for settings in (DecodeSettings(batch_size=32), DecodeSettings(batch_size=32, batch_tokens=600)):
        whole = length_batches(lengths, settings.batch_size, max_tokens=settings.batch_tokens)
        groups = sorted_groups(lengths, settings, size=100)
        assert sorted(i for g in groups for i in g) == list(range(1000))
        again = []
        for group in groups:
            assert len(group) >= 100 or group is groups[-1]
            sub = length_batches([lengths[i] for i in group], settings.batch_size, max_tokens=settings.batch_tokens)
            again += [[group[k] for k in batch] for batch in sub]
        assert again == whole
    # The words of a CoNLL-U chunk, counted in the parent, are those a sentence has once read.
    blocks = [(1, ["# sent_id = a", "1-2\tdon't\t_\t_\t_\t_\t_\t_\t_\t_", "1\tdo\t_\tAUX\t_\t_\t0\troot\t_\t_",
                   "2\tn't\t_\tPART\t_\t_\t1\tadvmod\t_\t_", "2.1\tx\t_\tX\t_\t_\t_\t_\t_\t_"])]  # fmt: skip
    chunk = ConlluChunk("t.conllu", blocks)
    assert chunk.lengths() == [len(s) for s in chunk.sentences()] == [2]


def test_parsing_pauses_the_garbage_collector_and_restores_it(tiny_run, monkeypatch):
    """A parse runs with Python's cyclic collector off (its full collections walked every object
    of the process) and leaves it as it found it, on or off, also when the parse fails."""
    import gc

    import nparse
    import nparse.decoding.decode as decode

    parser = nparse.load(tiny_run / "best.pt", device="cpu")
    sents = read_conllu(EWT_DEV)[:3]
    seen = []
    batch = decode.decode_batch

    def recording(*args, **kwargs):
        seen.append(gc.isenabled())
        return batch(*args, **kwargs)

    monkeypatch.setattr(decode, "decode_batch", recording)
    assert gc.isenabled()
    parser.parse_nbest(sents)
    assert seen == [False] and gc.isenabled()
    gc.disable()
    try:
        parser.parse_nbest(sents)
        assert not gc.isenabled()
    finally:
        gc.enable()

    def failing(*args, **kwargs):
        raise RuntimeError("out of memory")

    monkeypatch.setattr(decode, "decode_batch", failing)
    with pytest.raises(RuntimeError):
        parser.parse_nbest(sents)
    assert gc.isenabled()


def test_parse_says_when_there_is_nothing_to_parse_or_auto_read_text_as_conllu(tiny_run, tmp_path, capsys):
    """An empty input parses to an empty output with a warning; a text file that format=auto took
    for CoNLL-U gets the error at its line and a hint to format=text."""
    from nparse import parse as parse_cli

    model = f"model={tiny_run / 'best.pt'}"
    empty, numbered = tmp_path / "empty.conllu", tmp_path / "recipe.txt"
    empty.write_text("")
    numbered.write_text("1 Preheat the oven\n2 Mix the flour\n3 Bake it well\n")
    assert parse_cli.main([model, f"input={empty}", f"output={tmp_path / 'out.conllu'}", "device=cpu"]) == 0
    assert f"warning: {empty}: no sentences to parse" in capsys.readouterr().err
    assert parse_cli.main([model, f"input={empty}", f"output={tmp_path}", "device=cpu"]) == 1
    assert f"output={tmp_path} is a directory" in capsys.readouterr().err
    assert parse_cli.main([model, f"input={numbered}", f"output={tmp_path / 'out2.conllu'}", "device=cpu"]) == 1
    err = capsys.readouterr().err
    assert f"{numbered}:1: expected 10 tab-separated columns, found 1 (read as CoNLL-U" in err and "format=text" in err
    tabbed = tmp_path / "dates.txt"  # tab-separated tokens that start with a number: sniffed as CoNLL-U too
    tabbed.write_text("12\tApril\t2019\n")
    assert parse_cli.main([model, f"input={tabbed}", f"output={tmp_path / 'out3.conllu'}", "device=cpu"]) == 1
    err = capsys.readouterr().err
    assert f"{tabbed}:1: expected 10 tab-separated columns, found 3 (read as CoNLL-U" in err and "format=text" in err


def test_the_api_parses_files_as_the_command_line_does(tiny_run, tmp_path):
    """``Parser.parse_file`` is the pipeline of ``nparse-parse``: with workers=2 (the parser loaded
    with two threads and used first, then forked), with HTML and with n-best, the same bytes as
    the command line; an open stream as the target; ``iter_parse`` streams chunk by chunk."""
    import io

    import nparse
    from nparse import parse as parse_cli

    model = tiny_run / "best.pt"
    source = tmp_path / "in.conllu"
    source.write_text("\n\n".join(EWT_DEV.read_text(encoding="utf-8").split("\n\n")[:300]) + "\n\n", encoding="utf-8")
    cli, cli_html, cli_nbest = (tmp_path / name for name in ("cli.conllu", "cli.html", "cli_nbest.conllu"))
    for target, extra in ((cli, []), (cli_html, []), (cli_nbest, ["nbest=2", "beam_size=2"])):
        # threads=2 as the API's parser: on a loaded machine the command line's own choice is 1, and
        # bfloat16 products on 1 and 2 threads may round differently (a beam-2 tie went the other way)
        assert parse_cli.main([f"model={model}", f"input={source}", f"output={target}", "chunk=100", "device=cpu",
                               "threads=2", *extra]) == 0  # fmt: skip
    parser = nparse.load(model, device="cpu", threads=2)
    parser.parse(read_conllu(source)[:20])  # the thread pool runs before the workers fork
    report = parser.parse_file(source, tmp_path / "api.conllu", workers=2, chunk=100)
    assert (report.sentences, report.workers) == (300, 2)
    assert (tmp_path / "api.conllu").read_bytes() == cli.read_bytes()
    parser.parse_file(source, tmp_path / "api.html", chunk=100)
    assert (tmp_path / "api.html").read_bytes() == cli_html.read_bytes()
    parser.parse_file(source, tmp_path / "api_nbest.conllu", nbest=2, beam_size=2, chunk=100)  # as the CLI's chunks
    assert (tmp_path / "api_nbest.conllu").read_bytes() == cli_nbest.read_bytes()
    small = tmp_path / "cli_small_batches.conllu"
    assert parse_cli.main([f"model={model}", f"input={source}", f"output={small}", "batch_tokens=200", "device=cpu",
                           "threads=2"]) == 0  # fmt: skip
    parser.parse_file(source, tmp_path / "api_small_batches.conllu", workers=2, batch_tokens=200)
    assert (tmp_path / "api_small_batches.conllu").read_bytes() == small.read_bytes()
    assert parse_cli.main([f"model={model}", f"input={source}", f"output={small}", "batch_tokens=-5"]) == 1
    stream = io.StringIO()
    parser.parse_file(source, stream, segmenter=str(tmp_path / "missing.udpipe"))  # only format=raw reads it
    assert stream.getvalue().encode("utf-8") == cli.read_bytes()
    with pytest.raises(FileNotFoundError):
        parser.parse_file(tmp_path / "missing.conllu", tmp_path / "never.conllu")
    with pytest.raises(ValueError, match="chunk=0"):
        next(parser.iter_parse([["A", "word"]], chunk=0))
    # Streaming: the first parsed sentence comes after one chunk is read, not the whole input.
    taken = []

    def sentences():
        for sent in read_conllu(source):
            taken.append(sent)
            yield sent

    parsed = parser.iter_parse(sentences(), chunk=50)
    first = next(parsed)
    assert len(taken) == 50
    rest = list(parsed)
    assert [(s.heads, s.deprels) for s in [first, *rest]] == [(s.heads, s.deprels) for s in read_conllu(cli)]
