"""A lexicon table as a morphological lexicon (``model.lexicon=FILE.tsv[.gz]``): the features it
gives a form, errors at file and line, a checkpoint that carries it, and the tool that writes one
from spaCy's lookup tables."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
import torch

from nparse.io.conllu import read_conllu
from nparse.io.data import Vocabs, collate, encode
from nparse.io.lexicon_table import NONE, TableLexicon, is_table
from nparse.models.encoder import Encoder
from nparse.models.lexicon import LexiconEmbedding

from .conftest import EWT_DEV, PROJECT_ROOT, padded_equals_compact

TABLE = """# lemma, form, features (UniMorph's columns)
house\thouses\tN;PL
house\thouse\tN;SG
walk\twalks\tV;PRS;3;SG
walk\twalks\tN;PL
_\tParis\tfreq=9
_\tthe\tfreq=3
"""


@pytest.fixture()
def table(tmp_path) -> str:
    path = tmp_path / "toy.tsv"
    path.write_text(TABLE, encoding="utf-8")
    return str(path)


def test_features_are_the_parts_and_the_sets_of_a_forms_lines(table):
    lex = TableLexicon.from_path(table)
    assert lex.features("houses") == ["N", "N;PL", "PL"]
    # both lines of an ambiguous form
    assert lex.features("walks") == ["3", "N", "N;PL", "PL", "PRS", "SG", "V", "V;PRS;3;SG"]
    assert lex.features("the") == ["freq=3"] and lex.features("zzyzx") == lex.features("") == [NONE]
    # a capitalised form: its own lines and its lowercase form's, and which of the two the table has
    assert lex.features("Houses") == ["case:lower", "N", "N;PL", "PL"]
    assert lex.features("Paris") == ["case:exact", "freq=9"]
    assert lex.features("PARIS") == [NONE]
    lex.limit = 3
    assert lex.features("walks") == ["3", "N", "N;PL"] and lex.features("Houses") == ["case:lower", "N", "N;PL"]
    gz = Path(table).with_suffix(".tsv.gz")
    gz.write_bytes(gzip.compress(TABLE.encode()))
    assert TableLexicon.from_path(str(gz)).table == TableLexicon.from_path(table).table
    assert is_table(str(gz)) and is_table(table) and not is_table("/usr/share/hunspell/hu_HU")


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("house\thouses\tN;PL\nhouse houses N;PL\n", r"toy.tsv:2: expected lemma<TAB>form<TAB>features, got 1 column"),
        ("# a comment\n\nhouse\t\tN\n", r"toy.tsv:3: expected lemma<TAB>form<TAB>features, got 3 column"),
        ("a\tb\tc\td\n", r"toy.tsv:1: .*got 4 column"),
    ],
)
def test_a_bad_line_is_an_error_at_its_file_and_line(tmp_path, text, error):
    path = tmp_path / "toy.tsv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=error):
        TableLexicon.from_path(str(path))


def test_a_missing_or_unreadable_table_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"model.lexicon=.*nowhere.tsv: no lexicon table there.*spacy_lexicon"):
        TableLexicon.from_path(str(tmp_path / "nowhere.tsv"))
    (tmp_path / "bad.tsv.gz").write_bytes(b"not gzip")
    with pytest.raises(ValueError, match=r"bad.tsv.gz: not a UTF-8 lexicon table"):
        TableLexicon.from_path(str(tmp_path / "bad.tsv.gz"))
    (tmp_path / "latin1.tsv").write_bytes("a\tb\tN\nc\tcaf\xe9\tN\n".encode("latin-1"))
    with pytest.raises(ValueError, match=r"latin1.tsv: not a UTF-8 lexicon table"):
        TableLexicon.from_path(str(tmp_path / "latin1.tsv"))


def test_a_checkpoint_carries_its_table_and_parses_where_it_is_not_there(table, tmp_path):
    emb = LexiconEmbedding(table, dim=6, buckets=1000)
    assert emb.ids("houses") == [zlib.crc32(f.encode()) % 1000 for f in ["N", "N;PL", "PL"]]
    sents = read_conllu(EWT_DEV)[:10]
    vocabs = Vocabs.build(sents)
    sizes = dict(word_dim=8, upos_dim=4, lexicon=table, lexicon_dim=5, lstm_dim=8, lstm_layers=1)
    torch.manual_seed(0)
    enc = Encoder(vocabs, **sizes).eval()
    batch = collate([encode(s, vocabs) for s in sents])
    before = padded_equals_compact(enc, batch)
    torch.save(enc.state_dict(), tmp_path / "enc.pt")
    Path(table).unlink()
    with pytest.raises(FileNotFoundError, match="model.lexicon=.*toy.tsv: no lexicon table"):
        Encoder(vocabs, **sizes)(batch)  # no checkpoint, no file: the error names the key
    again = Encoder(vocabs, **sizes).eval()
    again.load_state_dict(torch.load(tmp_path / "enc.pt", weights_only=True))
    assert again.lexicon is not None and again.lexicon.lexicon.features("Houses") == ["case:lower", "N", "N;PL", "PL"]
    with torch.no_grad():
        torch.testing.assert_close(again(batch, compact=True), before)


def test_the_tool_writes_spacys_rule_analyses_and_frequency_classes(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    tables = {
        "lemma_index": {"noun": ["σπίτι", "δρόμος"], "adj": ["καλός"], "verb": ["τρέχω"]},
        "lemma_rules": {
            "noun": [["ια", "ι"], ["οι", "ος"]],
            "adj": [["οί", "ός"], ["ή", "ός"]],
            "verb": [["εις", "ω"]],
        },
        "lemma_exc": {"verb": {"είπε": ["λέω"]}},
        "lexeme_prob": {"σπίτια": -9.5, "Καλοί": -12.2, "τρέχεις": -20.0, "είπε": -8.1, "xyz": -20.0},
        "lexeme_cluster": {"xyz": 37, "abc": 37, "a\rb": 5, " ": 6},  # forms no table line can hold are left out
    }
    for name, content in tables.items():
        with gzip.open(data / f"xx_{name}.json.gz", "wt", encoding="utf-8") as f:
            json.dump(content, f)
    out = tmp_path / "xx.tsv.gz"
    run = subprocess.run(
        [sys.executable, str(PROJECT_ROOT / "tools" / "spacy_lexicon.py"), "--lang", "xx", "--data", str(data), "--out", str(out)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert "wrote" in run.stdout
    lex = TableLexicon.from_path(str(out))
    assert lex.features("σπίτια") == ["NOUN", "NOUN;rule=ια>ι", "freq=9", "rule=ια>ι"]
    # the listed capitalised form has its frequency; its lowercase form the analyses of both parts of speech
    assert lex.features("Καλοί") == [
        "case:exact", "case:lower", "ADJ", "ADJ;rule=οί>ός", "freq=12", "rule=οί>ός",
    ]  # fmt: skip
    assert "NOUN" not in lex.features("καλοί")  # κάλος is not a noun lemma: no analysis without its lemma
    assert lex.features("τρέχεις") == ["VERB", "VERB;rule=εις>ω", "freq=20", "rule=εις>ω"]
    assert lex.features("είπε") == ["VERB", "VERB;rule=exc", "freq=8", "rule=exc"]
    assert lex.features("δρόμος") == ["NOUN", "NOUN;rule=lemma", "rule=lemma"]  # a lemma, not in the word list
    assert lex.features("xyz") == ["cluster=37", "freq=20", "freq=20;cluster=37"]
    assert lex.features("abc") == ["cluster=37"]  # clustered, not in the word list
    bad = subprocess.run(
        [sys.executable, str(PROJECT_ROOT / "tools" / "spacy_lexicon.py"), "--lang", "xx", "--data", str(data), "--out", str(tmp_path / "x.txt")],
        capture_output=True, text=True,
    )  # fmt: skip
    assert bad.returncode != 0 and "name it .tsv or .tsv.gz" in bad.stderr
