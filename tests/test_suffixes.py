"""Suffix embeddings (``model.suffix_dim``): stable hashed rows of a word's endings, read by the
encoder beside the word and its characters, the same in a padded and a compact batch."""

from __future__ import annotations

import pytest
import torch

from nparse.io.conllu import read_conllu
from nparse.io.data import Vocabs, collate, encode
from nparse.io.vocab import ROOT
from nparse.models.encoder import Encoder
from nparse.models.suffixes import SuffixEmbedding

from .conftest import EWT_DEV, padded_equals_compact


def test_suffix_rows_are_stable_case_blind_and_empty_past_the_word():
    emb = SuffixEmbedding(dim=3, length=4, buckets=1000)
    walked = emb.ids("walked")
    assert emb.ids("WALKED") == walked  # lowercased
    assert emb.ids("baked")[:3] == walked[:3] and emb.ids("baked")[3] != walked[3]  # "ked" shared, "aked" not
    assert emb.ids("ed") == [walked[0], walked[1], 0, 0]  # no 3- or 4-character suffix: the zero row
    assert emb.ids(ROOT) == [0, 0, 0, 0]
    assert all(0 < r < 1000 for r in walked)
    # CRC-32, not Python's salted hash: the same rows in every process (a checkpoint keeps no table of them)
    assert (
        SuffixEmbedding(dim=3, length=4, buckets=1000).ids("walked")
        == walked
        == [1 + __import__("zlib").crc32(f"{k}\x00{'walked'[-k:]}".encode()) % 999 for k in (1, 2, 3, 4)]
    )
    assert emb.table.weight.abs().sum() == 0  # rows no training word reaches stay "no suffix"
    with torch.no_grad():
        emb.table.weight.normal_()
        emb.table.weight[0] = 0.0
    vectors = emb(["walked", "ed"], torch.device("cpu"))
    assert vectors.shape == (2, 12) and vectors[1, 6:].abs().sum() == 0 and vectors[0].abs().min() > 0
    with pytest.raises(ValueError, match="model.suffix_len=0"):
        SuffixEmbedding(dim=3, length=0, buckets=1000)


def test_the_encoder_reads_suffixes_padded_and_compact_alike_and_trains_them():
    sents = read_conllu(EWT_DEV)[:30]
    vocabs = Vocabs.build(sents)
    torch.manual_seed(0)
    enc = Encoder(vocabs, word_dim=8, upos_dim=4, suffix_dim=5, suffix_len=3, lstm_dim=8, lstm_layers=1)
    assert enc.suffixes is not None and enc.lstm.input_size == 8 + 4 + 15
    batch = collate([encode(s, vocabs) for s in sents])
    compact = padded_equals_compact(enc, batch)
    with torch.no_grad():  # the output depends on the suffix table (which starts at zero)
        enc.suffixes.table.weight.normal_()
        assert not torch.allclose(enc(batch, compact=True), compact)
    enc.train()
    enc(batch).sum().backward()
    assert enc.suffixes.table.weight.grad is not None and enc.suffixes.table.weight.grad.abs().sum() > 0


def test_rare_suffixes_are_dropped_in_training_as_rare_words_are_and_never_in_evaluation():
    """A suffix row is dropped with probability alpha / (alpha + its training count): a rare
    word's whole-word row hid from word dropout no more."""
    emb = SuffixEmbedding(dim=2, length=3, buckets=4096)
    emb.set_dropout(["walked", "talked", "zq"], [30, 10, 1], alpha=0.25)
    ed, zq = emb.ids("walked")[1], emb.ids("zq")[1]
    assert emb.drop_prob[ed] == pytest.approx(0.25 / 40.25)  # "ed" counted in both words
    assert emb.drop_prob[zq] == pytest.approx(0.25 / 1.25)
    assert emb.drop_prob[0] == 0
    with torch.no_grad():
        emb.table.weight[1:] = 1.0  # the table starts at zero (rows no training word reaches stay so)
    torch.manual_seed(0)
    emb.train()
    hidden = torch.stack([emb(["zq"], torch.device("cpu"))[0, 2:4].abs().sum() == 0 for _ in range(2000)])
    assert 0.15 < hidden.float().mean() < 0.25
    emb.eval()
    assert all(emb(["zq"], torch.device("cpu"))[0, 2:4].abs().sum() > 0 for _ in range(50))
