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
    enc = Encoder(vocabs, word_dim=8, upos_dim=4, char_dim=8, char_hidden=6, lstm_dim=8, lstm_layers=1, char_cache=cache)
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


def test_preloaded_training_forms_stay_pinned_and_equal_fresh_vectors():
    enc, batches = _encoder_and_batches(cache=400)
    forms = sorted({f for b in batches[:1] for row in b.forms for f in row})[:150]
    fresh = enc.char_vectors_of(forms)
    assert enc.char_cache is not None and not enc.char_cache.rows  # computed without the cache
    enc.char_cache.preload(forms, fresh, list(enc.chars.parameters()))
    assert enc.char_cache.pinned == 150
    with torch.no_grad():
        for b in batches:  # more forms than fit: the cache overflows and keeps its pinned rows
            enc._char_vectors(b, torch.device("cpu"))
        assert all(f in enc.char_cache.rows for f in forms) and len(enc.char_cache.rows) <= 400
        enc.char_cache.rows = {f: k for f, k in enc.char_cache.rows.items() if f in forms}
        torch.testing.assert_close(enc.char_cache.table[[enc.char_cache.rows[f] for f in forms]], fresh)
        for p in enc.chars.parameters():  # new weights: pinned vectors go too
            p.mul_(1.5)
        enc._char_vectors(batches[0], torch.device("cpu"))
        assert enc.char_cache.pinned == 0


def test_best_checkpoint_brings_the_training_forms_vectors(tiny_run):
    from nparse import checkpoint
    from nparse.checkpoint import model_from_state

    state = checkpoint.load(tiny_run / "best.pt")
    assert len(state["char_forms"]) == state["char_vectors"].shape[0] > 500
    model = model_from_state(state, torch.device("cpu"))
    cache = model.encoder.char_cache
    assert cache is not None and cache.pinned == len(state["char_forms"])
    forms = state["char_forms"][:50]
    cache.clear()
    torch.testing.assert_close(model.encoder.char_vectors_of(forms), state["char_vectors"][:50], rtol=0, atol=1e-5)
