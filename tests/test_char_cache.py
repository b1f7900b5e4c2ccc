"""Character vectors cached across batches while parsing (issue 19): the same vectors as without
the cache, emptied when the weights change, bounded in size, never used while training."""

from __future__ import annotations

import torch

from nparse.io.conllu import read_conllu
from nparse.io.data import Vocabs, collate, encode
from nparse.models.encoder import Encoder

from .conftest import EWT_DEV


def _encoder_and_batches(cache: int) -> tuple[Encoder, list]:
    sents = read_conllu(EWT_DEV)[:120]
    vocabs = Vocabs.build(sents)
    torch.manual_seed(0)
    enc = Encoder(
        vocabs, word_dim=8, upos_dim=4, char_dim=8, char_hidden=6, lstm_dim=8, lstm_layers=1, char_cache=cache
    )
    batches = [collate([encode(s, vocabs) for s in sents[i : i + 40]]) for i in range(0, 120, 40)]
    return enc.eval(), batches


def test_cached_character_vectors_equal_fresh_ones_and_follow_weight_changes():
    enc, batches = _encoder_and_batches(cache=100_000)
    with torch.no_grad():
        fresh = [enc._char_vectors(b, torch.device("cpu")) for b in batches]  # fills the cache
        assert enc.char_cache is not None and len(enc.char_cache.rows) > 100
        for b, want in zip(batches, fresh):
            torch.testing.assert_close(enc._char_vectors(b, torch.device("cpu")), want, rtol=0, atol=1e-6)
        for p in enc.chars.parameters():  # new weights: the cached vectors must go
            p.add_(0.1)
        changed = enc._char_vectors(batches[0], torch.device("cpu"))
        enc.char_cache = None
        torch.testing.assert_close(changed, enc._char_vectors(batches[0], torch.device("cpu")), rtol=0, atol=1e-6)
        assert not torch.allclose(changed, fresh[0])


def test_the_cache_is_bounded_and_unused_in_training():
    enc, batches = _encoder_and_batches(cache=300)
    with torch.no_grad():
        for b in batches:
            enc._char_vectors(b, torch.device("cpu"))
            assert len(enc.char_cache.rows) <= 300
    enc.train()
    enc.char_cache.rows.clear()
    out = enc._char_vectors(batches[0], torch.device("cpu"))
    assert out.requires_grad and not enc.char_cache.rows


def test_the_vocabulary_filled_part_gives_the_same_vectors_and_follows_weight_changes():
    enc, batches = _encoder_and_batches(cache=100_000)
    with torch.no_grad():
        enc.fill_char_cache()
        assert enc.char_cache is not None and len(enc.char_cache.fixed) > 100
        known = sum(f in enc.char_cache.fixed for forms in batches[0].forms for f in forms)
        assert known > len(batches[0].forms)  # the filled part serves this batch
        filled = enc._char_vectors(batches[0], torch.device("cpu"))
        cache, enc.char_cache = enc.char_cache, None
        fresh = enc._char_vectors(batches[0], torch.device("cpu"))
        torch.testing.assert_close(filled, fresh, rtol=0, atol=1e-5)
        enc.char_cache = cache
        for p in enc.chars.parameters():  # new weights: the filled vectors no longer apply
            p.add_(0.1)
        changed = enc._char_vectors(batches[0], torch.device("cpu"))
        enc.char_cache = None
        torch.testing.assert_close(changed, enc._char_vectors(batches[0], torch.device("cpu")), rtol=0, atol=1e-6)


def test_vectors_filled_in_training_mode_match_the_ones_added_in_evaluation_mode():
    """In bfloat16 the filled part may come from the packed call (the module in training mode,
    no gradients) and the rest from the bucketed one (evaluation mode): both give the same dtype,
    so parsing after such a fill works (it failed with a dtype mismatch once)."""
    enc, batches = _encoder_and_batches(cache=100_000)
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        enc.train()
        enc.fill_char_cache()
        enc.eval()
        out = enc._char_vectors(batches[0], torch.device("cpu"))
        enc.char_cache = None
        fresh = enc._char_vectors(batches[0], torch.device("cpu"))
    assert out.dtype == fresh.dtype


def test_the_convolutional_character_model_reads_each_word_alone_and_learns():
    """model.char_kind=cnn: a word's vector is the same alone as beside longer words (padding never
    wins the max-pool), the cache serves it as the BiLSTM's, gradients reach its filters, and an
    unknown kind is named."""
    import pytest

    sents = read_conllu(EWT_DEV)[:40]
    vocabs = Vocabs.build(sents)
    torch.manual_seed(0)
    enc = Encoder(vocabs, word_dim=8, upos_dim=4, char_dim=8, char_hidden=6, char_kind="cnn", lstm_dim=8, lstm_layers=1)
    assert enc.chars is not None and enc.chars.out_dim == 12
    with torch.no_grad():
        enc.eval()
        alone = enc._char_compute(["on"], torch.device("cpu"))
        beside = enc._char_compute(["internationalisation", "on", "a"], torch.device("cpu"))
        torch.testing.assert_close(alone[0], beside[1], rtol=0, atol=1e-6)
        batch = collate([encode(s, vocabs) for s in sents])
        cached = enc._char_vectors(batch, torch.device("cpu"))  # fills the cache
        again = enc._char_vectors(batch, torch.device("cpu"))
        torch.testing.assert_close(cached, again, rtol=0, atol=0)
    enc.train()
    enc(batch).sum().backward()
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in enc.chars.convs.parameters())
    with pytest.raises(ValueError, match="model.char_kind='gru': one of lstm, cnn"):
        Encoder(vocabs, char_dim=8, char_kind="gru")
