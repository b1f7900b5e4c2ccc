"""A Hunspell dictionary as a morphological lexicon (``model.lexicon``): the features of a form's
analyses, their embedding beside the word, and clear errors for a dictionary that is not there."""

from __future__ import annotations

import zlib

import pytest
import torch

from nparse.io.conllu import read_conllu
from nparse.io.data import Vocabs, collate, encode
from nparse.io.vocab import ROOT
from nparse.models.encoder import Encoder

from .conftest import EWT_DEV, padded_equals_compact

pytest.importorskip("spylls")

from nparse.io.hunspell import NONE, HunspellLexicon  # noqa: E402
from nparse.models.lexicon import LexiconEmbedding  # noqa: E402

AFF = """SET UTF-8
SFX S Y 1
SFX S 0 s . is:PLUR

SFX D Y 1
SFX D 0 ed . is:PAST
"""
DIC = """4
house/S po:noun
walk/SD po:vrb
the po:det
walk/S po:noun
"""


@pytest.fixture()
def dictionary(tmp_path) -> str:
    (tmp_path / "toy.aff").write_text(AFF, encoding="utf-8")
    (tmp_path / "toy.dic").write_text(DIC, encoding="utf-8")
    return str(tmp_path / "toy")


def test_features_name_the_analyses_part_of_speech_flags_and_affixes(dictionary):
    lex = HunspellLexicon.from_path(dictionary)
    assert lex.features("houses") == ["po:noun", "suffix:S:s", "flag:S"]
    # both analyses of an ambiguous form: the verb's and the noun's
    assert lex.features("walks") == ["po:noun", "po:vrb", "suffix:S:s", "flag:D", "flag:S"]
    lex.limit = 3  # a cap cuts the stems' flags before the analyses
    assert lex.features("walks") == ["po:noun", "po:vrb", "suffix:S:s"]
    assert "suffix:D:ed" in lex.features("walked") and "po:noun" not in lex.features("walked")
    assert lex.features("House") == lex.features("house")  # a capitalised word falls back to lowercase
    assert lex.features("the") == ["po:det"]
    assert lex.features("zzyzx") == lex.features("") == [NONE]  # unknown, and nothing to read
    assert HunspellLexicon.from_path(dictionary + ".dic").features("houses") == lex.features("houses")


def test_a_missing_dictionary_is_a_clear_error(tmp_path, dictionary):
    with pytest.raises(FileNotFoundError, match=r"model.lexicon=.*nowhere.*missing .*nowhere.aff"):
        HunspellLexicon.from_path(str(tmp_path / "nowhere"))
    with pytest.raises(ValueError, match="model.lexicon=None and model.lexicon_dim=8: set both"):
        Encoder(Vocabs.build(read_conllu(EWT_DEV)[:5]), word_dim=4, upos_dim=0, lexicon_dim=8, lstm_dim=4)


def test_forms_with_the_same_features_get_the_same_vector_and_the_root_none(dictionary):
    emb = LexiconEmbedding(dictionary, dim=6, buckets=1000)
    assert emb.ids("houses") == [zlib.crc32(f.encode()) % 1000 for f in ["po:noun", "suffix:S:s", "flag:S"]]
    assert emb.ids(ROOT) == []
    vectors = emb(["houses", "Houses", ROOT, "walked"], torch.device("cpu"))
    assert vectors.shape == (4, 6)
    torch.testing.assert_close(vectors[0], vectors[1])
    assert vectors[2].abs().sum() == 0 and not torch.allclose(vectors[0], vectors[3])
    # the mean of the features' rows
    torch.testing.assert_close(vectors[0], emb.table.weight[emb.ids("houses")].mean(0))


def test_the_encoder_reads_the_lexicon_padded_and_compact_alike_and_trains_it(dictionary):
    sents = read_conllu(EWT_DEV)[:30]
    vocabs = Vocabs.build(sents)
    torch.manual_seed(0)
    enc = Encoder(vocabs, word_dim=8, upos_dim=4, lexicon=dictionary, lexicon_dim=5, lstm_dim=8, lstm_layers=1)
    assert enc.lexicon is not None and enc.lstm.input_size == 8 + 4 + 5
    batch = collate([encode(s, vocabs) for s in sents])
    padded_equals_compact(enc, batch)
    enc.train()
    enc(batch).sum().backward()
    assert enc.lexicon.table.weight.grad is not None and enc.lexicon.table.weight.grad.abs().sum() > 0
    # a model built again from the same settings loads the trained table and gives the same vectors
    again = Encoder(vocabs, word_dim=8, upos_dim=4, lexicon=dictionary, lexicon_dim=5, lstm_dim=8, lstm_layers=1)
    again.load_state_dict(enc.state_dict())
    enc.eval(), again.eval()
    with torch.no_grad():
        torch.testing.assert_close(again(batch, compact=True), enc(batch, compact=True))


def test_a_checkpoint_carries_its_dictionary_and_parses_where_it_is_not_installed(dictionary, tmp_path):
    sents = read_conllu(EWT_DEV)[:10]
    vocabs = Vocabs.build(sents)
    sizes = dict(word_dim=8, upos_dim=4, lexicon=dictionary, lexicon_dim=5, lstm_dim=8, lstm_layers=1)
    enc = Encoder(vocabs, **sizes).eval()
    batch = collate([encode(s, vocabs) for s in sents])
    with torch.no_grad():
        before = enc(batch, compact=True)
    torch.save(enc.state_dict(), tmp_path / "enc.pt")
    without = {k: v for k, v in enc.state_dict().items() if not k.endswith("_extra_state")}
    older = Encoder(vocabs, **sizes).eval()  # a state without the dictionary reads model.lexicon's
    older.load_state_dict(without)
    with torch.no_grad():
        torch.testing.assert_close(older(batch, compact=True), before)
    for suffix in (".aff", ".dic"):
        (tmp_path / f"toy{suffix}").unlink()
    with pytest.raises(FileNotFoundError, match="model.lexicon=.*toy: no Hunspell dictionary"):
        Encoder(vocabs, **sizes)(batch)  # no checkpoint, no files: the error names the key
    again = Encoder(vocabs, **sizes).eval()
    again.load_state_dict(torch.load(tmp_path / "enc.pt", weights_only=True))
    assert again.lexicon is not None and again.lexicon.lexicon.features("houses") == ["po:noun", "suffix:S:s", "flag:S"]
    with torch.no_grad():
        torch.testing.assert_close(again(batch, compact=True), before)
