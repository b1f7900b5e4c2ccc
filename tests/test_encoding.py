"""The vectorised helpers of the parse path give what their one-item-at-a-time definitions give."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from nparse.decoding.decode import arcs_of, dependents
from nparse.io.data import padded, padded_flat
from nparse.io.vocab import Vocab, normalize, normalize_all

FORMS = ["The", "3.14", "1,000", "12-13", "٣", "ΟΔΟΣ", "İstanbul", "", "x2", "2x", "<root>", "ÆON"]


def test_normalize_all_is_normalize_of_each_form():
    for lowercase in (True, False):
        for forms in (FORMS, [f for f in FORMS if not any("0" <= c <= "9" for c in f)], []):
            assert normalize_all(forms, lowercase) == [normalize(f, lowercase) for f in forms]


def test_indices_are_index_of_each_item():
    for specials in (True, False):
        vocab = Vocab.build(["a", "b", "b", "c"], specials=specials)
        for items in (["a", "b", "c"], ["a", "zz", "c", "zz"], []):
            assert vocab.indices(items) == [vocab.index(x) for x in items]


def test_padded_rows():
    rows = [[5, 6, 7], [], [8]]
    want = torch.tensor([[5, 6, 7, 0], [0, 0, 0, 0], [8, 0, 0, 0]])
    assert torch.equal(padded(rows, 4), want)
    assert torch.equal(padded_flat(np.array([5, 6, 7, 8]), np.array([3, 0, 1]), 4), want)


def test_arcs_of_trees_as_the_per_tree_arrays():
    trees = [[([-1, 2, 0], 1.0), ([-1, 0, 1], 0.5)], [], [([-1, 0], 2.0)], [([-1, 3, 3, 0, 3], 0.0)]]
    heads, rows, lengths = arcs_of(trees)
    flat = [(b, h) for b, ts in enumerate(trees) for h, _ in ts]
    assert heads.tolist() == [x for _, h in flat for x in h[1:]]
    assert rows.tolist() == [b for b, h in flat for _ in h[1:]]
    assert lengths.tolist() == [len(h) - 1 for _, h in flat]
    assert dependents(lengths).tolist() == [d for _, h in flat for d in range(1, len(h))]
    empty = arcs_of([[], []])
    assert [len(a) for a in empty] == [0, 0, 0] and len(dependents(empty[2])) == 0


def test_bf16_lstm_runs_on_kept_copy_that_follows_the_weights():
    """Parsing in bfloat16 on CPU runs the LSTM on a bfloat16 copy of its weights, kept across
    calls; the copy gives the LSTM's bfloat16 result and is made again when the weights change."""
    from torch.func import functional_call
    from torch.nn.utils.rnn import pack_padded_sequence

    from nparse.models.encoder import bf16_copy, run_lstm

    torch.manual_seed(0)
    lstm = torch.nn.LSTM(6, 5, num_layers=2, batch_first=True, bidirectional=True)
    packed = pack_padded_sequence(torch.randn(3, 4, 6), torch.tensor([4, 2, 3]), batch_first=True, enforce_sorted=False)

    def want():
        weights = {n: p.to(torch.bfloat16) for n, p in lstm.named_parameters()}
        out, _ = functional_call(lstm, weights, (packed._replace(data=packed.data.to(torch.bfloat16)),))
        return out.data.float()

    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        first, _ = run_lstm(lstm, packed)
        assert torch.equal(first.data, want())
        kept = bf16_copy(lstm)
        assert bf16_copy(lstm) is kept
        lstm.weight_hh_l0.mul_(-1.0)  # an in-place update, as an optimizer step
        second, _ = run_lstm(lstm, packed)
        assert bf16_copy(lstm) is not kept
        assert torch.equal(second.data, want())
        assert not torch.equal(second.data, first.data)


def test_bf16_lstm_copy_follows_train_and_eval_mode():
    """The kept copy runs dropout between layers exactly when its LSTM would: a copy made in
    training mode is not reused after ``eval()`` (parsing would otherwise drop units)."""
    from torch.nn.utils.rnn import pack_padded_sequence

    from nparse.models.encoder import bf16_copy, run_lstm

    torch.manual_seed(0)
    lstm = torch.nn.LSTM(6, 5, num_layers=2, dropout=0.5, batch_first=True, bidirectional=True)
    packed = pack_padded_sequence(torch.randn(3, 4, 6), torch.tensor([4, 2, 3]), batch_first=True, enforce_sorted=False)
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        assert bf16_copy(lstm).training
        lstm.eval()
        assert not bf16_copy(lstm).training
        first, _ = run_lstm(lstm, packed)
        second, _ = run_lstm(lstm, packed)
        assert torch.equal(first.data, second.data)  # no dropout while evaluating


def test_weights_made_under_inference_mode_parse_in_bf16_without_a_kept_copy():
    """Inference tensors have no version counter to key a kept copy on: the LSTM is cast per call
    and the character cache computes afresh, rather than failing."""
    from torch.nn.utils.rnn import pack_padded_sequence

    from nparse.models.encoder import CharCache, bf16_copy, run_lstm, weights_key

    with torch.inference_mode():
        lstm = torch.nn.LSTM(6, 5, batch_first=True)
    params = list(lstm.parameters())
    assert weights_key(params) is None
    packed = pack_padded_sequence(torch.randn(2, 3, 6), torch.tensor([3, 2]), batch_first=True)
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
        out, _ = run_lstm(lstm, packed)
        assert out.data.dtype == torch.float32 and bf16_copy(lstm) is not bf16_copy(lstm)
        cache = CharCache(10)
        calls = []
        compute = lambda forms: calls.append(list(forms)) or torch.ones(len(forms), 2)  # noqa: E731
        cache.fill(["a"], params, compute)
        assert not cache.filled(params)
        cache.vectors(["a", "b"], params, compute)
        cache.vectors(["a", "b"], params, compute)
        assert calls == [["a", "b"], ["a", "b"]]  # nothing kept


@pytest.mark.slow
def test_compact_encoding_is_the_padded_one_without_padding(tiny_run):
    """Parsing encodes without padding (``compact``): every real row of the vectors and of the
    transition table, the empty-position row included, is bit for bit the padded one, in fp32
    and bf16, for sentences of tied and distinct lengths (the packing order follows the sort)."""
    import nparse
    from nparse.io.conllu import read_conllu
    from nparse.io.data import collate, encode

    from .conftest import EWT_DEV

    parser = nparse.load(tiny_run / "best.pt", device="cpu")
    model = parser.model.eval()
    sents = [s for s in read_conllu(EWT_DEV)[:40]]
    batch = collate([encode(s, model.vocabs, labels=False) for s in sents])
    assert len(set(batch.lengths.tolist())) < len(sents)  # some lengths tie
    real = batch.real_mask()
    for precision in ("fp32", "bf16"):
        model.set_precision(precision)
        with torch.no_grad():
            vectors, table = model.encode(batch)
            flat, compact = model.encode(batch, compact=True)
        assert flat.shape == (int(batch.lengths.sum()), vectors.shape[-1])
        assert torch.equal(flat, vectors[real])
        rows = torch.from_numpy(np.flatnonzero(real.reshape(-1).numpy()))
        assert compact.shape[0] == len(flat) + 1
        assert torch.equal(compact[:-1], table[rows]) and torch.equal(compact[-1], table[-1])
        starts = batch.row_starts
        assert starts.tolist() == np.searchsorted(rows.numpy(), np.arange(len(sents)) * batch.width).tolist()  # roots


@pytest.mark.parametrize("system,analysis", [("archybrid", False), ("twoplanar", False), ("archybrid", True)])
def test_parses_from_compact_rows_equal_the_padded_ones(system, analysis, monkeypatch):
    """Greedy, beam 4 with 3-best, labels, tags and scores: decoding from compact rows gives
    what the padded layout gives (a model with a tagger, random weights; ``analysis``: with the
    whole analysis read from the first of the two BiLSTM layers, ``model.tag_layer=1``)."""
    from nparse.decoding import decode
    from nparse.decoding.settings import DecodeSettings
    from nparse.io.conllu import read_conllu
    from nparse.io.data import Vocabs
    from nparse.models.parser import ParserModel
    from nparse.systems import make_system

    from .conftest import EWT_DEV, model_config

    sents = read_conllu(EWT_DEV)[:60]
    torch.manual_seed(1)
    options = dict(word_dim=20, upos_dim=0, xpos_dim=0, char_dim=8, char_hidden=10, lstm_dim=16, lstm_layers=2,
                   hidden=10, label_hidden=10, tagger=True, tagger_hidden=12, analysis=analysis,
                   tag_layer=int(analysis), feats_factored=analysis)  # fmt: skip
    vocabs = Vocabs.build(sents, morphology=analysis)
    model = ParserModel(vocabs, make_system(system), model_config(**options)).eval()
    assert decode.compact_rows(model)
    for settings in (
        DecodeSettings(batch_size=16),
        DecodeSettings(decoder="beam", beam_size=4, nbest=3, batch_size=64),
    ):
        settings = settings.normalised()
        compact = decode.decode_sentences(model, sents, settings)
        with monkeypatch.context() as m:
            m.setattr(decode, "compact_rows", lambda model: False)
            padded_parses = decode.decode_sentences(model, sents, settings)
        assert compact == padded_parses
        assert all(p.tags is not None for ps in compact for p in ps)
        assert all((p.analysis is not None) == analysis for ps in compact for p in ps)
        assert settings.nbest == 1 or max(len(ps) for ps in compact) > 1  # several distinct trees


def test_bucket_rounds_up_to_few_sizes():
    """``shapes.bucket``: never below n, at most 1/8 above it, exact up to 16, and about 8 sizes
    per doubling, so that oneDNN builds a bounded number of bfloat16 kernels however long the file."""
    from nparse.models.shapes import bucket

    sizes = {bucket(n) for n in range(1, 1 << 13)}
    for n in range(1, 1 << 13):
        assert n <= bucket(n) <= n + n // 8
        assert bucket(bucket(n)) == bucket(n)
    assert all(bucket(n) == n for n in range(1, 17))
    assert len(sizes) <= 16 + 8 * 9


def test_bucketed_bilstm_keeps_padding_out_and_shapes_few():
    """Parsing in bfloat16 on CPU runs the BiLSTMs on batches rounded up to bucketed sizes: real
    outputs do not depend on how much padding a batch gets (a sentence alone or among longer
    ones), they follow the float32 packed LSTM to bfloat16 precision, and 60 batches of 60
    distinct sizes make at most a third as many LSTM shapes."""
    from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

    from nparse.models import encoder

    torch.manual_seed(0)
    lstm = torch.nn.LSTM(12, 10, num_layers=2, batch_first=True, bidirectional=True).eval()
    lengths = torch.tensor([7, 3, 5, 1])
    x = torch.randn(4, 7, 12) * (torch.arange(7)[None, :, None] < lengths[:, None, None])
    with torch.no_grad():
        exact, _ = pad_packed_sequence(
            lstm(pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False))[0], batch_first=True
        )
        with torch.autocast("cpu", dtype=torch.bfloat16):
            assert encoder.bf16_cpu_inference(x)
            together = encoder.bucketed_bilstm(lstm, x, lengths)
            alone = encoder.bucketed_bilstm(lstm, x[1:2, :3], lengths[1:2])
            wide = torch.cat([x, torch.zeros(4, 30, 12)], 1)
            padded_more = encoder.bucketed_bilstm(lstm, wide, lengths)
    for b, n in enumerate(lengths.tolist()):
        assert torch.allclose(together[b, :n], exact[b, :n], atol=0.03)
        assert torch.allclose(padded_more[b, :n], together[b, :n], atol=0.01)
    assert torch.allclose(alone[0], together[1, :3], atol=0.01)

    shapes = set()
    real_lstm = encoder._VF.lstm

    class Recording:
        def lstm(self, seq, *args):
            shapes.add(tuple(seq.shape[:2]))
            return real_lstm(seq, *args)

    encoder._VF, saved = Recording(), encoder._VF
    try:
        with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16):
            for n in range(40, 100):
                encoder.bucketed_bilstm(lstm, torch.randn(n, 9, 12), torch.full((n,), 9))
    finally:
        encoder._VF = saved
    assert len(shapes) <= 20


def test_character_vectors_in_length_groups_are_those_of_one_call():
    """CPU training runs the character BiLSTM on groups of words of similar length: the vectors
    and the gradients they send back are those of one call over the whole padded batch, in every
    word's own place (ties in length included), and the groups' calls are padded to less."""
    from nparse.models import encoder

    torch.manual_seed(0)
    chars = encoder.CharEncoder(30, 8, 10)
    lengths = torch.randint(1, 25, (150,))
    lengths[:10] = 3  # ties: their order must survive the sort
    ids = torch.randint(2, 30, (150, int(lengths.max()))) * (
        torch.arange(int(lengths.max()))[None, :] < lengths[:, None]
    )
    widths = []
    real = encoder.padded_bilstm

    def recording(lstm, x, n):
        widths.append(x.shape[1])
        return real(lstm, x, n)

    encoder.padded_bilstm = recording
    try:
        grouped = chars(ids, lengths)  # training, CPU: in groups
        assert len(widths) == 4 and max(widths) == int(lengths.max()) and sum(widths) < 4 * int(lengths.max())
        whole = chars.final_states(ids, lengths)
        widths.clear()
        chars(ids[:40], lengths[:40])
        assert len(widths) == 1  # fewer than 2 x CHAR_GROUP_MIN words: one call
    finally:
        encoder.padded_bilstm = real
    torch.testing.assert_close(grouped, whole, rtol=0, atol=1e-6)
    weight = torch.randn_like(whole)
    (g1,) = torch.autograd.grad((grouped * weight).sum(), chars.lstm.weight_hh_l0)
    (g2,) = torch.autograd.grad((whole * weight).sum(), chars.lstm.weight_hh_l0)
    torch.testing.assert_close(g1, g2, rtol=1e-5, atol=1e-6)
