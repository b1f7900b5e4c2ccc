"""CoNLL-U input and output: lossless round trips and errors that name file and line."""

from __future__ import annotations

import io
import random

import pytest

from nparse.io.conllu import CoNLLUError, format_sentence, read_conllu, read_text, tree_problem
from nparse.training.data import load_data

from .conftest import compose_config, treebank_files


@pytest.mark.parametrize("path", treebank_files(), ids=lambda p: p.name)
def test_round_trip_changes_only_head_and_deprel(path):
    text = path.read_text(encoding="utf-8")
    sentences = read_conllu(path)
    rng = random.Random(0)
    out = []
    for s in sentences:
        heads = [-1] + [rng.randrange(0, len(s) + 1) for _ in range(len(s))]
        labels = ["_"] + [rng.choice(["nsubj", "obj", "x:y"]) for _ in range(len(s))]
        out.append(format_sentence(s, heads, labels))
        s.new = (heads, labels)
    written = "".join(out).splitlines()
    original = text.splitlines()
    # The file ends with one empty line after the last sentence, as written.
    assert len(written) == len(original)
    changed = 0
    for old, new in zip(original, written):
        if old == new:
            continue
        a, b = old.split("\t"), new.split("\t")
        assert len(a) == len(b) == 10 and a[0].isdigit(), (old, new)
        assert a[:6] == b[:6] and a[8:] == b[8:], (old, new)
        changed += 1
    assert changed > 0
    # Unchanged annotation writes back byte for byte.
    assert "".join(format_sentence(s) for s in sentences) == text
    # And the new values are read back.
    again = read_conllu(io.StringIO("".join(out)))
    assert [s.heads for s in again] == [s.new[0] for s in sentences]


SENT = """# sent_id = s1
# text = a b
1-2\tab\t_\t_\t_\t_\t_\t_\t_\t_
1\ta\ta\tDET\t_\t_\t2\tdet\t_\t_
2\tb\tb\tNOUN\t_\t_\t0\troot\t_\t_
2.1\tc\t_\t_\t_\t_\t_\t_\t2:x\t_

"""


def test_multiword_tokens_and_empty_nodes_are_kept():
    (s,) = read_conllu(io.StringIO(SENT))
    assert s.forms == ["<root>", "a", "b"] and s.heads == [-1, 2, 0] and s.sent_id == "s1"
    out = format_sentence(s, [-1, 0, 1], ["_", "root", "obj"])
    lines = out.splitlines()
    assert lines[2] == "1-2\tab\t_\t_\t_\t_\t_\t_\t_\t_"
    assert lines[3].split("\t")[6:8] == ["0", "root"]
    assert lines[4].split("\t")[6:8] == ["1", "obj"]
    assert lines[5] == "2.1\tc\t_\t_\t_\t_\t_\t_\t2:x\t_"


def bad(text: str, tmp_path):
    path = tmp_path / "bad.conllu"
    path.write_text(text)
    with pytest.raises(CoNLLUError) as err:
        read_conllu(path)
    return str(err.value), path


@pytest.mark.parametrize(
    "line, lineno, message",
    [
        ("2\tb\tb\tNOUN\t_\t_\t0\troot\t_", 4, "expected 10 tab-separated columns, found 9"),
        ("2\tb\tb\tNOUN\t_\t_\tx\troot\t_\t_", 4, "head"),
        ("2\tb\tb\tNOUN\t_\t_\t7\troot\t_\t_", 4, "HEAD 7 out of range"),
        ("1\tb\tb\tNOUN\t_\t_\t0\troot\t_\t_", 4, "duplicate word ID 1"),
        ("3\tb\tb\tNOUN\t_\t_\t0\troot\t_\t_", 4, "non-consecutive word ID 3"),
        ("x\tb\tb\tNOUN\t_\t_\t0\troot\t_\t_", 4, "id"),
        ("2\tb\tb\tNOUN\t_\t_\t-1\troot\t_\t_", 4, "negative"),
        ("2\tb\tb\tNOUN\t_\t_\t_\troot\t_\t_", 4, "HEAD is '_'"),
    ],
)
def test_malformed_input_names_file_and_line(tmp_path, line, lineno, message):
    text = f"# sent_id = a\n# text = a b\n1\ta\ta\tDET\t_\t_\t2\tdet\t_\t_\n{line}\n\n"
    msg, path = bad(text, tmp_path)
    assert msg.startswith(f"{path}:{lineno}:"), msg
    assert message.lower() in msg.lower(), msg


def test_error_line_numbers_count_earlier_sentences(tmp_path):
    good = "1\ta\ta\tX\t_\t_\t0\troot\t_\t_\n\n"
    msg, path = bad(good * 3 + "1\ta\ta\tX\t_\t_\t0\troot\t_\n\n", tmp_path)
    assert msg.startswith(f"{path}:7:"), msg


def test_missing_heads_are_allowed_for_parsing_only():
    text = "1\ta\t_\t_\t_\t_\t_\t_\t_\t_\n\n"
    (s,) = read_conllu(io.StringIO(text), allow_missing_heads=True)
    assert s.heads == [-1, -1]
    with pytest.raises(CoNLLUError):
        read_conllu(io.StringIO(text))


def test_plain_text_reader():
    sents = read_text(io.StringIO("The cat sat .\n\n  Dogs   bark\n"))
    assert [s.forms[1:] for s in sents] == [["The", "cat", "sat", "."], ["Dogs", "bark"]]
    assert sents[1].word_line(1) == 3
    assert [s.forms[1:] for s in read_text(io.StringIO("Windows line .\r\nends .\r\n"))] == [
        ["Windows", "line", "."], ["ends", "."]
    ]  # fmt: skip
    with pytest.raises(CoNLLUError, match=r"<stream>:1: carriage return"):  # old Mac line ends: not one sentence
        read_text(io.StringIO("The cat sat .\rA dog barked .\r"))


@pytest.mark.parametrize(
    "heads, problem",
    [([-1, 0, 1, 2], None), ([-1, 0, 0], "2 words attached"), ([-1, 2, 1, 0], "cycle"), ([-1, 2, 3, 1], "0 words")],
)
def test_tree_problem(heads, problem):
    found = tree_problem(heads)
    assert (found is None) if problem is None else (problem in found)


def test_training_data_reports_and_skips_non_trees(tmp_path):
    good = "# sent_id = ok\n1\ta\ta\tX\t_\t_\t0\troot\t_\t_\n\n"
    two_roots = "# sent_id = tworoots\n1\ta\ta\tX\t_\t_\t0\troot\t_\t_\n2\tb\tb\tX\t_\t_\t0\troot\t_\t_\n\n"
    cycle = "# sent_id = cyc\n1\ta\ta\tX\t_\t_\t2\tdep\t_\t_\n2\tb\tb\tX\t_\t_\t1\tdep\t_\t_\n3\tc\tc\tX\t_\t_\t0\troot\t_\t_\n\n"
    path = tmp_path / "train.conllu"
    path.write_text(good + two_roots + cycle + good)
    data = load_data(compose_config(f"data.train={path}", "data.dev=null", "data.test=null"))
    assert len(data.train) == 2
    assert [name for name, _ in data.skipped] == ["tworoots", "cyc"]
    assert "cycle" in data.skipped[1][1]


@pytest.mark.parametrize(
    "lines,where,message",
    [
        (["0\ta\t_\tX\t_\t_\t0\troot\t_\t_"], 1, "word ID 0: IDs start at 1"),
        (["1\ta\t_\tX\t_\t_\t0\troot\t_\t_", "2-3\tbc\t_\t_\t_\t_\t_\t_\t_\t_", "2\tb\t_\tX\t_\t_\t1\tdep\t_\t_"],
         2, "multiword token reaches word 3 but the sentence has 2 words"),
        (["1\ta\t_\tX\t_\t_\t0\troot\t_\t_", "", "# a stray comment"], 3,
         "comment lines followed by no words"),
        (["1\ta\t_\tX\t_\t_\t0\troot\t_\t_", "", "\ufeff# sent_id = 2"], 3,
         "found 1 \\(the line starts with a byte-order mark, U\\+FEFF: files joined with cat\\?\\)"),
        (["1-1\ta\t_\t_\t_\t_\t_\t_\t_\t_", "1\ta\t_\tX\t_\t_\t0\troot\t_\t_"], 1,
         "multiword token 1-1: a range spans two words or more"),
        (["1-2\tab\t_\t_\t_\t_\t_\t_\t_\t_", "1\ta\t_\tX\t_\t_\t0\troot\t_\t_", "2-3\tbc\t_\t_\t_\t_\t_\t_\t_\t_",
          "2\tb\t_\tX\t_\t_\t1\tdep\t_\t_", "3\tc\t_\tX\t_\t_\t1\tdep\t_\t_"], 3, "overlaps the one on line 1"),
        (["1\ta\t_\tX\t_\t_\t0\troot\t_\t_", "", "\ufeff1\ta\t_\tX\t_\t_\t0\troot\t_\t_"], 3,
         "bad ID '\\\\ufeff1' \\(the line starts with a byte-order mark, U\\+FEFF: files joined with cat\\?\\)"),
    ],
    ids=["id-0", "range-past-the-end", "stray-comment", "bom-inside", "one-word-range", "overlapping-ranges",
         "bom-on-a-word-line"],
)  # fmt: skip
def test_bad_ids_and_ranges_are_reported_at_their_line(lines, where, message):
    import io

    handle = io.StringIO("\n".join(lines) + "\n\n")
    handle.name = "f.conllu"
    with pytest.raises(CoNLLUError, match=f"f.conllu:{where}: .*{message}"):
        read_conllu(handle)


@pytest.mark.parametrize(
    "data,where",
    [
        (b"1\tA\rb\t_\t_\t_\t_\t0\troot\t_\t_\n\n", ":1: carriage return (\\r) at column 4 (FORM)"),
        (b"# text = a\rb\n1\tAb\t_\t_\t_\t_\t0\troot\t_\t_\n", ":1: carriage return (\\r) at column 11:"),
        (
            b"1\tA\t_\t_\t_\t_\t0\troot\t_\t_\n\n1\tA\t_\t_\t_\t_\t0\troot\t_\tX\rY\n",
            ":3: carriage return (\\r) at column 23 (MISC)",
        ),
        (
            b"1\tA\t_\t_\t_\t_\t0\troot\t_\t_\r\r1\tB\t_\t_\t_\t_\t0\troot\t_\t_\r",
            ":1: carriage return (\\r) at column 23 (MISC)",
        ),  # Mac line ends
        (
            b"1\tA\t_\t_\t_\t_\t0\troot\t_\t_\r\r\n\n",
            ":1: carriage return (\\r) at column 23 (MISC)",
        ),  # a CR before CRLF
    ],
)
def test_a_lone_carriage_return_is_refused_at_its_line_and_column(tmp_path, data, where):
    """Universal-newline readers would split such a line: refused, never written through."""
    path = tmp_path / "cr.conllu"
    path.write_bytes(data)
    with pytest.raises(CoNLLUError) as err:
        read_conllu(path)
    assert str(err.value).startswith(str(path) + where)


def test_crlf_line_ends_are_still_read():
    sents = read_conllu(io.StringIO("1\tA\t_\t_\t_\t_\t0\troot\t_\t_\r\n\r\n1\tB\t_\t_\t_\t_\t0\troot\t_\t_\r\n"))
    assert [s.forms[1] for s in sents] == ["A", "B"]


def test_columns_are_split_on_tabs_only():
    """A FORM or MISC holding spaces stays one column (a reader that also splits on two spaces
    would shift HEAD into another column)."""
    text = "1\tNew  York\tNew York\tPROPN\t_\t_\t0\troot\t_\tSpaceAfter=No  x\n\n"
    [sent] = read_conllu(io.StringIO(text))
    assert sent.forms[1] == "New  York" and sent.heads[1] == 0 and sent.deprels[1] == "root"
    assert format_sentence(sent, [-1, 0], ["_", "root"]) == text


def test_written_files_get_the_usual_permissions(tmp_path):
    import os

    from nparse.io.conllu import write_conllu

    out = tmp_path / "out.conllu"
    write_conllu(read_conllu(io.StringIO("1\ta\ta\tX\t_\t_\t0\troot\t_\t_\n\n")), out)
    mask = os.umask(0)
    os.umask(mask)
    assert out.stat().st_mode & 0o777 == 0o666 & ~mask  # not mkstemp's 0600: others may read the parse
    out.chmod(0o600)  # a replaced file keeps its own permissions: a private file stays private
    write_conllu(read_conllu(io.StringIO("1\ta\ta\tX\t_\t_\t0\troot\t_\t_\n\n")), out)
    assert out.stat().st_mode & 0o777 == 0o600


def test_atomic_output_follows_links_and_writes_devices_directly(tmp_path):
    """output= naming a symbolic link replaces the file it names and keeps the link; naming a
    device (/dev/null, through a link here) writes into it rather than renaming a file over it."""
    import os

    from nparse.io.conllu import atomic_text

    target, link = tmp_path / "target.conllu", tmp_path / "link.conllu"
    target.write_text("old\n")
    link.symlink_to(target)
    with atomic_text(link) as handle:
        handle.write("new\n")
    assert link.is_symlink() and target.read_text() == "new\n"
    sink = tmp_path / "sink"
    sink.symlink_to(os.devnull)
    with atomic_text(sink) as handle:
        handle.write("discarded\n")
    assert sink.is_symlink() and not os.path.isfile(os.devnull)
