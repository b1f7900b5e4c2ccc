"""Kiperwasser & Goldberg (2016) BiLSTM encoder.

Each token (the root is token 0) is the concatenation of a word embedding, a UPOS embedding
and optionally an XPOS embedding, a character-BiLSTM vector, suffix embeddings, lexicon features
and a pretrained vector; a multi-layer BiLSTM turns the sentence into one vector per token.
During training a word is replaced by the unknown word with probability alpha / (alpha +
count(word)).
"""

from __future__ import annotations

import copy
import logging
import weakref
from functools import partial
from itertools import chain, repeat
from typing import Callable
from pathlib import Path

import numpy as np
import torch
from torch import _VF, nn
from torch.nn.utils.rnn import PackedSequence, pack_padded_sequence, pad_packed_sequence

from ..io.data import Batch, Vocabs, padded, padded_flat
from ..io.vocab import ROOT, UNK, normalize
from .lexicon import LexiconEmbedding
from .shapes import bf16_cpu_inference, bucket
from .suffixes import SuffixEmbedding

log = logging.getLogger(__name__)


def read_vectors(path: str | Path, limit: int = 0) -> tuple[list[str], torch.Tensor]:
    """Word vectors from a word2vec/GloVe text file (an optional 'count dim' header is skipped)."""
    words: list[str] = []
    rows: list[list[float]] = []
    dim = None
    with open(path, encoding="utf-8", errors="replace") as handle:
        for lineno, line in enumerate(handle, 1):
            parts = line.rstrip().split(" ")
            if lineno == 1 and len(parts) == 2 and all(p.isdigit() for p in parts):
                continue
            if len(parts) < 2:
                continue
            if dim is None:
                dim = len(parts) - 1
            if len(parts) - 1 != dim:
                raise ValueError(f"{path}:{lineno}: expected {dim} values, found {len(parts) - 1}")
            try:
                rows.append([float(x) for x in parts[1:]])
            except ValueError:
                raise ValueError(f"{path}:{lineno}: not a number in the vector of {parts[0]!r}") from None
            words.append(parts[0])
            if limit and len(words) >= limit:
                break
    if not rows:
        raise ValueError(f"{path}: no vectors found")
    return words, torch.tensor(rows)


def dropout(x: torch.Tensor, p: float, training: bool) -> torch.Tensor:
    """Dropout with its mask drawn by ``torch.rand``: ``F.dropout``'s Bernoulli draw took 1.3 ms
    on a [32, 20, 250] batch on one CPU thread against 0.5 ms, 7% of a training epoch."""
    if not training or p == 0:
        return x
    return x * (torch.rand_like(x) >= p) * (1.0 / (1.0 - p))


def reversal(lengths: torch.Tensor, width: int, device: torch.device) -> torch.Tensor:
    """[B, width] index that reverses each row within its own length (padding stays in place)."""
    steps = torch.arange(width, device=device)[None, :]
    n = lengths.to(device)[:, None]
    return torch.where(steps < n, n - 1 - steps, steps)


def padded_bilstm(lstm: nn.LSTM, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """A bidirectional, batch-first ``lstm`` on a padded batch [B, T, D], exactly as on packed
    sequences: each direction is one call on padded input (the backward one on every row
    reversed within its own length), so padding only ever follows a sequence and never reaches
    its outputs, and the fused oneDNN/cuDNN kernels run (packed input takes a per-step path on
    CPU in training). Under CPU autocast to bfloat16 the weights and inputs are cast for the call
    (differentiably: the gradients reach the float32 weights). Outputs at padded positions are 0.
    CPU training only: on a GPU cuDNN runs packed sequences fused already, and per-direction
    calls would copy weights that are not in cuDNN's flat buffer (not measured on a GPU)."""
    dtype = torch.bfloat16 if x.device.type == "cpu" and torch.is_autocast_enabled("cpu") and \
        torch.get_autocast_dtype("cpu") == torch.bfloat16 else None  # fmt: skip
    flip = reversal(lengths, x.shape[1], x.device)[:, :, None]
    real = (flip[:, :, 0] < lengths.to(x.device)[:, None]).unsqueeze(2)
    hidden = lstm.hidden_size
    out = x
    with torch.autocast("cpu", enabled=False):
        for layer in range(lstm.num_layers):
            if layer and lstm.dropout and lstm.training:
                out = dropout(out, lstm.dropout, True)
            inp = out if dtype is None else out.to(dtype)
            zeros = inp.new_zeros((1, inp.shape[0], hidden))
            parts = []
            for suffix in ("", "_reverse"):
                weights = [
                    getattr(lstm, f"{name}_l{layer}{suffix}")
                    for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")
                ]
                if dtype is not None:
                    weights = [w.to(dtype) for w in weights]
                seq = inp if not suffix else inp.gather(1, flip.expand(-1, -1, inp.shape[2]))
                y = _VF.lstm(seq, (zeros, zeros), weights, True, 1, 0.0, lstm.training, False, True)[0]
                parts.append(y if not suffix else y.gather(1, flip.expand(-1, -1, hidden)))
            out = torch.cat(parts, 2).float()
    return out * real


def run_lstm(lstm: nn.LSTM, packed):
    """An LSTM call on packed sequences without gradients (parsing, dev evaluation; training runs
    ``padded_bilstm``) in the autocast precision. On a GPU cuDNN takes it as it is. On CPU,
    autocast leaves LSTMs in float32: when parsing in bfloat16, the call runs on bfloat16 copies
    of the weights, which oneDNN computes natively on CPUs with AVX-512 BF16 (2.2x the float32
    speed for the default sizes on an AMD EPYC with avx512_bf16, ``docs/experiments/precision.md``)."""
    if packed.data.device.type != "cpu" or not torch.is_autocast_enabled("cpu"):
        return lstm(packed)
    with torch.autocast("cpu", enabled=False):
        if torch.is_grad_enabled() or torch.get_autocast_dtype("cpu") != torch.bfloat16:
            return lstm(packed._replace(data=packed.data.float()))
        out, state = bf16_copy(lstm)(packed._replace(data=packed.data.to(torch.bfloat16)))
        return out._replace(data=out.data.float()), state


def bucketed_bilstm(lstm: nn.LSTM, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
    """A bidirectional, batch-first ``lstm`` on a padded batch [B, T, D] when parsing in bfloat16
    on CPU (``shapes.bf16_cpu_inference``): one fused oneDNN call per layer and direction, as
    ``padded_bilstm`` runs them (so padding never reaches a real output), on the bfloat16 copy
    of the weights, with B and T rounded up by ``shapes.bucket``. The packed per-step path ran
    one product per step batch size, and oneDNN kept a kernel for each size it met. [B, T, 2H]
    float32; padded positions hold no meaning."""
    rows, width = x.shape[:2]
    B, T = bucket(rows), bucket(width)
    lengths = torch.cat([lengths.cpu(), lengths.new_ones(B - rows)]) if B > rows else lengths.cpu()
    inp = x.new_zeros((B, T, x.shape[2]), dtype=torch.bfloat16)
    inp[:rows, :width] = x
    flip = reversal(lengths, T, x.device)[:, :, None]
    copy = bf16_copy(lstm)
    hidden = lstm.hidden_size
    zeros = inp.new_zeros((1, B, hidden))
    with torch.autocast("cpu", enabled=False):
        for layer in range(lstm.num_layers):
            parts = []
            for suffix in ("", "_reverse"):
                weights = [
                    getattr(copy, f"{name}_l{layer}{suffix}")
                    for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh")
                ]
                seq = inp if not suffix else inp.gather(1, flip.expand(-1, -1, inp.shape[2]))
                y = _VF.lstm(seq, (zeros, zeros), weights, True, 1, 0.0, False, False, True)[0]
                parts.append(y if not suffix else y.gather(1, flip.expand(-1, -1, hidden)))
            inp = torch.cat(parts, 2)
    return inp[:rows, :width].float()


_BF16_COPIES: weakref.WeakKeyDictionary[nn.LSTM, tuple[tuple, nn.LSTM]] = weakref.WeakKeyDictionary()


def bf16_copy(lstm: nn.LSTM) -> nn.LSTM:
    """A bfloat16 copy of ``lstm``, kept until its weights change (their storage or version
    counter, as ``CharCache``): casting the weights at every call cost a fifth of parsing one
    short sentence."""
    weights = weights_key(list(lstm.parameters()))
    if weights is None:  # inference tensors: nothing to key a kept copy on
        return _bf16(lstm)
    key = (lstm.training, *weights)  # the copy runs dropout between layers as the LSTM would
    kept = _BF16_COPIES.get(lstm)
    if kept is None or kept[0] != key:
        kept = (key, _bf16(lstm))
        _BF16_COPIES[lstm] = kept
    return kept[1]


def _bf16(lstm: nn.LSTM) -> nn.LSTM:
    return copy.deepcopy(lstm).to(torch.bfloat16).requires_grad_(False)


def weights_key(params: list[torch.Tensor]) -> tuple | None:
    """What changes when weights do: their storage or version counter (an optimizer step,
    ``load_state_dict``, weight averaging). None for inference tensors (a model loaded under
    ``torch.inference_mode``), which have no version counter: nothing computed from them is kept."""
    if any(p.is_inference() for p in params):
        return None
    return tuple((p.data_ptr(), p._version) for p in params)


def clip(form: str, half: int) -> str:
    """The first and last ``half`` characters of a longer word, the word itself otherwise."""
    return form if len(form) <= 2 * half else form[:half] + form[-half:]


class CharEncoder(nn.Module):
    """A word vector from a BiLSTM over its characters (final states of both directions)."""

    def __init__(self, n_chars: int, char_dim: int, hidden: int):
        super().__init__()
        self.embed = nn.Embedding(n_chars, char_dim, padding_idx=0)
        self.lstm = nn.LSTM(char_dim, hidden, batch_first=True, bidirectional=True)
        self.out_dim = 2 * hidden

    def forward(self, char_ids: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        if torch.is_grad_enabled() and char_ids.device.type == "cpu":  # CPU training: ``padded_bilstm``
            return self.by_length(char_ids, lengths)
        x = self.embed(char_ids)
        if bf16_cpu_inference(x) and not self.training:
            # bfloat16, as the packed call's final states: vectors kept in a CharCache while the
            # module was in training mode must match the ones added later
            return self.ends(bucketed_bilstm(self.lstm, x, lengths), lengths).to(torch.bfloat16)
        packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
        _, (h, _) = run_lstm(self.lstm, packed)
        return torch.cat([h[0], h[1]], dim=-1)

    def by_length(self, char_ids: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """CPU training: the words sorted by length and run in up to ``CHAR_GROUPS`` groups of at
        least ``CHAR_GROUP_MIN``, each padded to its own longest word only. In one call a batch's
        longest form set the steps of every word (29 characters on average in batches of 32
        random EWT sentences, against 5.1 for the mean form). The same vectors and gradients; the
        64/100 character model's forward took 0.80 s of a bf16 epoch on 1,500 EWT sentences
        against 1.22 s, and an epoch of 2planar_dynamic_ud 9-21% less (docs/experiments/ud-analysis.md)."""
        n = char_ids.shape[0]
        groups = max(1, min(CHAR_GROUPS, n // CHAR_GROUP_MIN))
        if groups == 1:
            return self.final_states(char_ids, lengths)
        order = torch.argsort(lengths, stable=True)
        bounds = [n * g // groups for g in range(groups + 1)]
        parts = []
        for lo, hi in zip(bounds, bounds[1:]):
            rows, part = order[lo:hi], lengths[order[lo:hi]]
            parts.append(self.final_states(char_ids[rows, : int(part.max())], part))
        return torch.cat(parts)[torch.argsort(order)]

    def final_states(self, char_ids: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """[N, 2H] of one ``padded_bilstm`` call (padding never reaches the final states)."""
        return self.ends(padded_bilstm(self.lstm, self.embed(char_ids), lengths), lengths)

    def ends(self, out: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """[N, 2H] from a padded BiLSTM's outputs [N, T, 2H]: the forward direction's state at the
        last character, the backward one's at the first."""
        last = (lengths.to(out.device) - 1)[:, None, None].expand(-1, 1, out.shape[2])
        hidden = self.lstm.hidden_size
        return torch.cat([out.gather(1, last)[:, 0, :hidden], out[:, 0, hidden:]], dim=-1)


class CharCNN(nn.Module):
    """A word vector from a convolution over its characters, max-pooled over the word (Ma & Hovy
    2016; ``model.char_kind=cnn``): ``2 * hidden`` filters of each width in ``CHAR_CNN_WIDTHS``
    and a tanh, so the vector has ``len(CHAR_CNN_WIDTHS) * 2 * hidden`` columns. Padding never
    reaches the maximum, so a word's vector does not depend on the batch around it."""

    def __init__(self, n_chars: int, char_dim: int, hidden: int):
        super().__init__()
        self.embed = nn.Embedding(n_chars, char_dim, padding_idx=0)
        self.convs = nn.ModuleList(
            nn.Conv1d(char_dim, 2 * hidden, width, padding=width // 2) for width in CHAR_CNN_WIDTHS
        )
        self.out_dim = 2 * hidden * len(CHAR_CNN_WIDTHS)

    def forward(self, char_ids: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        x = self.embed(char_ids).transpose(1, 2)  # [N, C, T]
        steps = torch.arange(char_ids.shape[1], device=char_ids.device)
        pad = (steps[None, :] >= lengths.to(char_ids.device)[:, None])[:, None, :]  # [N, 1, T]
        # [:, :, :T]: an even width's padding gives one step more than the word has
        pooled = [conv(x)[:, :, : char_ids.shape[1]].masked_fill(pad, float("-inf")).amax(dim=2) for conv in self.convs]
        out = torch.tanh(torch.cat(pooled, dim=-1))
        if bf16_cpu_inference(x) and not self.training:
            return out.to(torch.bfloat16)  # as CharEncoder: one dtype in a CharCache
        return out


# model.char_kind=cnn: the filter widths (characters); Ma & Hovy (2016) use one width of 3.
CHAR_CNN_WIDTHS = (3,)
CHAR_KINDS: dict[str, type[CharEncoder] | type[CharCNN]] = {"lstm": CharEncoder, "cnn": CharCNN}


# CPU training runs the character BiLSTM on length groups (``CharEncoder.by_length``): 4 groups
# were as fast as 6 (forward and backward on batches of 32 random EWT sentences, about 320
# distinct forms), 3 slower.
CHAR_GROUPS = 4
CHAR_GROUP_MIN = 32


class CharCache:
    """Character vectors of word forms kept across batches while parsing.

    A form's vector depends only on its characters and the character encoder's weights, and
    running the character BiLSTM was about 10% of parsing time, mostly on forms seen in earlier
    batches. Used in evaluation mode without gradients only. Memory is bounded: at ``size``
    forms the table starts again empty. It is emptied whenever the weights change (their storage
    or version counter: an optimizer step, ``load_state_dict``, weight averaging) or the
    precision they are computed in.

    ``fill`` adds a fixed part, kept by ``clear``: a loaded parser fills it with the forms of its
    vocabulary (``Encoder.fill_char_cache``), so that a new file only runs the character BiLSTM
    on forms the model never saw (29% of the distinct forms of EWT test: the character model was
    a fifth of parsing it with the fast model)."""

    def __init__(self, size: int):
        self.size = size
        self.fixed: dict[str, int] = {}
        self.fixed_table: torch.Tensor | None = None
        self.fixed_key: tuple = ()
        self.clear()

    def clear(self) -> None:
        """Forget the forms seen while parsing (not the fixed ones)."""
        self.rows: dict[str, int] = {}
        self.table: torch.Tensor | None = None
        self.key: tuple = ()

    @staticmethod
    def key_of(params: list[torch.Tensor]) -> tuple | None:
        """The weights' key (``weights_key``) and the precision; None where nothing may be kept."""
        weights = weights_key(params)
        if weights is None:
            return None
        precision = torch.get_autocast_dtype("cpu") if torch.is_autocast_enabled("cpu") else None
        return (precision, *weights)

    def filled(self, params: list[torch.Tensor]) -> bool:
        """Whether the fixed part holds vectors for these weights in the current precision."""
        key = self.key_of(params)
        return key is not None and bool(self.fixed) and self.fixed_key == key

    def fill(self, forms: list[str], params: list[torch.Tensor], compute: Callable[[list[str]], torch.Tensor]) -> None:
        """Compute and keep the vectors of ``forms`` for good (until the weights change)."""
        key = self.key_of(params)
        if key is None:
            return
        self.fixed = {f: k for k, f in enumerate(forms)}
        self.fixed_table = compute(forms) if forms else None
        self.fixed_key = key

    def vectors(
        self, forms: list[str], params: list[torch.Tensor], compute: Callable[[list[str]], torch.Tensor]
    ) -> torch.Tensor:
        """[len(forms), dim] vectors of distinct ``forms``; ``compute`` runs on the missing ones."""
        key = self.key_of(params)
        if key is None:
            return compute(forms)
        if self.fixed and key == self.fixed_key:
            assert self.fixed_table is not None
            rows = np.fromiter(map(self.fixed.get, forms, repeat(-1)), dtype=np.int64, count=len(forms))
            rest = np.flatnonzero(rows < 0)
            if len(rest) < len(forms):
                out = self.fixed_table[torch.from_numpy(np.maximum(rows, 0))]
                if len(rest):
                    out[torch.from_numpy(rest)] = self.vectors([forms[k] for k in rest], params, compute)
                return out
        if len(forms) > self.size:
            return compute(forms)
        if key != self.key or len(self.rows) + len(forms) > self.size:
            self.rows, self.table, self.key = {}, None, key
        missing = [f for f in forms if f not in self.rows]
        if missing:
            new = compute(missing)
            start = len(self.rows)
            if self.table is None:
                self.table = new.new_empty((self.size, new.shape[1]))
            self.table[start : start + len(missing)] = new
            self.rows.update((f, start + k) for k, f in enumerate(missing))
        assert self.table is not None
        index = np.fromiter(map(self.rows.__getitem__, forms), dtype=np.int64, count=len(forms))
        return self.table[torch.from_numpy(index).to(self.table.device)]


class Encoder(nn.Module):
    drop_prob: torch.Tensor  # buffer

    def __init__(
        self,
        vocabs: Vocabs,
        word_dim: int = 100,
        upos_dim: int = 25,
        xpos_dim: int = 0,
        feats_dim: int = 0,
        char_dim: int = 0,
        char_hidden: int = 50,
        char_kind: str = "lstm",
        char_max: int = 50,
        char_cache: int = 100_000,
        suffix_dim: int = 0,
        suffix_len: int = 4,
        suffix_buckets: int = 16384,
        lexicon: str | None = None,
        lexicon_dim: int = 0,
        lexicon_buckets: int = 16384,
        lstm_dim: int = 125,
        lstm_layers: int = 2,
        lstm_dropout: float = 0.0,
        dropout: float = 0.0,
        word_dropout: float = 0.25,
        tag_layer: int = 0,
        feed_dim: int = 0,
        pretrained: torch.Tensor | None = None,
    ):
        super().__init__()
        self.vocabs = vocabs
        self.word_dropout = word_dropout
        self.dropout = nn.Dropout(dropout)
        if pretrained is not None:
            word_dim = pretrained.shape[1]
        self.words = nn.Embedding(len(vocabs.words), word_dim, padding_idx=0)
        if pretrained is not None:
            with torch.no_grad():
                self.words.weight[: pretrained.shape[0]].copy_(pretrained)
        self.upos = nn.Embedding(len(vocabs.upos), upos_dim, padding_idx=0) if upos_dim else None
        self.xpos = nn.Embedding(len(vocabs.xpos), xpos_dim, padding_idx=0) if xpos_dim else None
        if feats_dim and not vocabs.morphology:
            raise ValueError("model.feats_dim: the vocabularies have no FEATS table (built without morphology)")
        self.feats = nn.Embedding(len(vocabs.feats), feats_dim, padding_idx=0) if feats_dim else None
        if char_kind not in CHAR_KINDS:
            raise ValueError(f"model.char_kind={char_kind!r}: one of {', '.join(CHAR_KINDS)}")
        self.chars: CharEncoder | CharCNN | None = (
            CHAR_KINDS[char_kind](len(vocabs.chars), char_dim, char_hidden) if char_dim else None
        )
        self.char_max = char_max
        self.char_cache = CharCache(char_cache) if self.chars is not None and char_cache > 0 else None
        self.suffixes = SuffixEmbedding(suffix_dim, suffix_len, suffix_buckets) if suffix_dim else None
        in_dim = word_dim + upos_dim + xpos_dim + feats_dim + (self.chars.out_dim if self.chars else 0)
        in_dim += self.suffixes.out_dim if self.suffixes else 0
        if bool(lexicon) != bool(lexicon_dim):
            raise ValueError(f"model.lexicon={lexicon} and model.lexicon_dim={lexicon_dim}: set both, or neither")
        self.lexicon = LexiconEmbedding(lexicon, lexicon_dim, lexicon_buckets) if lexicon and lexicon_dim else None
        in_dim += lexicon_dim if self.lexicon else 0
        if not 0 <= tag_layer <= lstm_layers:
            raise ValueError(
                f"model.tag_layer={tag_layer}: a layer from 1 to model.lstm_layers={lstm_layers}, or 0 (the top)"
            )
        lower = tag_layer or lstm_layers
        self.lstm = nn.LSTM(
            in_dim,
            lstm_dim,
            num_layers=lower,
            batch_first=True,
            bidirectional=True,
            dropout=lstm_dropout if lower > 1 else 0.0,
        )
        # With model.tag_layer, the layers above the one the taggers read are a second LSTM; with
        # model.tag_feed it also reads ``feed_dim`` columns of predicted-tag vectors (``stacked``).
        upper = lstm_layers - lower
        if feed_dim and not upper:
            raise ValueError("model.tag_feed: needs model.tag_layer below model.lstm_layers (layers above the taggers)")
        self.upper = nn.LSTM(
            2 * lstm_dim + feed_dim, lstm_dim, num_layers=upper, batch_first=True, bidirectional=True,
            dropout=lstm_dropout if upper > 1 else 0.0,
        ) if upper else None  # fmt: skip
        self.lstm_dropout = lstm_dropout
        self.out_dim = 2 * lstm_dim  # what the parser reads
        self.tag_dim = 2 * lstm_dim  # what the taggers read: the last tag_dim columns of the output
        counts = torch.tensor(vocabs.words.counts, dtype=torch.float)
        drop = word_dropout / (word_dropout + counts) if word_dropout > 0 else torch.zeros_like(counts)
        drop[:3] = 0.0  # never drop padding, unknown or root
        self.register_buffer("drop_prob", drop, persistent=False)
        if self.suffixes is not None:
            kept = [(w, c) for w, c in zip(vocabs.words.itos, vocabs.words.counts) if not special(w)]
            self.suffixes.set_dropout([w for w, _ in kept], [c for _, c in kept], word_dropout)

    def _char_compute(self, forms: list[str], device: torch.device) -> torch.Tensor:
        """Character-BiLSTM vectors of distinct forms. The root token is one special character;
        an empty form is one unknown character. A word longer than char_max is read by its first
        and last char_max / 2 characters, so that time and memory stay bounded by the batch (a 1
        MB "word" is 50 characters here)."""
        assert self.chars is not None
        vocab, half = self.vocabs.chars, self.char_max // 2
        seqs = [[vocab.index(ROOT)] if f == ROOT else vocab.indices(list(clip(f, half))) or [1] for f in forms]
        lengths = torch.tensor([len(s) for s in seqs])
        return self.chars(padded(seqs, int(lengths.max())).to(device), lengths)

    @torch.no_grad()
    def fill_char_cache(self) -> None:
        """Compute the character vectors of the vocabulary's forms once, as stored (lower case),
        capitalised and in upper case (91.6% of the tokens of EWT test with the EWT model), in
        the current precision (call it under the model's autocast), for ``CharCache.fill``."""
        if self.char_cache is None or self.chars is None or self.char_cache.filled(list(self.chars.parameters())):
            return
        words = [w for w in self.vocabs.words.itos if not special(w)]
        forms = list(dict.fromkeys([ROOT, *(f for w in words for f in (w, w.capitalize(), w.upper()))]))
        forms.sort(key=len)  # even lengths per call: the packed BiLSTM runs fuller batches
        device = self.words.weight.device

        def compute(todo: list[str]) -> torch.Tensor:
            return torch.cat([self._char_compute(todo[i : i + 4096], device) for i in range(0, len(todo), 4096)])

        self.char_cache.fill(forms, list(self.chars.parameters()), compute)

    def _char_forms(self, uniq: list[str], device: torch.device) -> torch.Tensor:
        """Character vectors of distinct forms, from the cache while parsing."""
        assert self.chars is not None
        chars = self.chars

        def compute(forms: list[str]) -> torch.Tensor:
            return self._char_compute(forms, device)

        if self.char_cache is not None and not self.training and not torch.is_grad_enabled():
            return self.char_cache.vectors(uniq, list(chars.parameters()), compute)
        return compute(uniq)

    def _char_vectors(self, batch: Batch, device: torch.device, compact: bool = False) -> torch.Tensor:
        return per_form(batch, lambda uniq: self._char_forms(uniq, device), device, compact)

    def forward(self, batch: Batch, compact: bool = False, feed: Callable | None = None) -> torch.Tensor:
        """[B, T, out_dim] vectors; position 0 of each row is the root token. ``feed`` maps the
        lower layer's vectors to the predicted-tag vectors the upper layers also read. ``compact``
        (parsing): [N, out_dim], the rows of the real positions only, sentence after sentence
        (``Batch.row_starts``). The numbers are the same; no tensor is padded, and padding was
        most of the memory of a batch of long sentences (EWT train's longest 512: 81,920
        positions for 26,940 words), which each parse worker pays again in page faults."""
        words = batch.words
        if self.training and self.word_dropout > 0:
            dropped = torch.rand(words.shape, device=words.device) < self.drop_prob[words]
            words = words.masked_fill(dropped, self.vocabs.words.index(UNK))
        real = batch.real_mask().to(words.device) if compact else None

        def lookup(table: nn.Embedding, ids: torch.Tensor) -> torch.Tensor:
            return table(ids if real is None else ids[real])

        parts = [lookup(self.words, words)]
        if self.upos is not None:
            parts.append(lookup(self.upos, batch.upos))
        if self.xpos is not None:
            parts.append(lookup(self.xpos, batch.xpos))
        if self.feats is not None:
            assert batch.feats is not None  # encode() fills it for vocabularies with morphology
            parts.append(lookup(self.feats, batch.feats))
        # the character model, the suffixes and the lexicon read the batch's distinct forms: one pass
        by_form: list[Callable[[list[str]], torch.Tensor]] = []
        if self.chars is not None:
            by_form.append(lambda uniq: self._char_forms(uniq, words.device))
        by_form += [partial(m, device=words.device) for m in (self.suffixes, self.lexicon) if m is not None]
        if len(by_form) == 1:
            parts.append(per_form(batch, by_form[0], words.device, compact))
        elif by_form:  # as torch.cat(parts) below would: bfloat16 character vectors promoted to float32
            parts.append(per_form(batch, lambda uniq: torch.cat([f(uniq).float() for f in by_form], -1),
                                  words.device, compact))  # fmt: skip
        x = dropout(torch.cat(parts, dim=-1), self.dropout.p, self.training)
        lengths = batch.lengths
        if compact and bf16_cpu_inference(x) and not self.training:
            index, real = padded_index(lengths)
            out = self.stacked(feed, lambda lstm, y: bucketed_bilstm(lstm, y, lengths),
                               torch.cat([x, x.new_zeros((1, x.shape[1]))])[index.to(x.device)])  # fmt: skip
            return out[real.to(x.device)]
        if compact:
            packed, rows = packed_rows(x, lengths)
            out = self.stacked(feed, lambda lstm, y: run_lstm(lstm, y)[0], packed)
            order = torch.from_numpy(np.argsort(rows)).to(packed.data.device)
            return dropout(out.data[order], self.dropout.p, self.training)
        if torch.is_grad_enabled() and x.device.type == "cpu":  # CPU training: ``padded_bilstm``
            return dropout(
                self.stacked(feed, lambda lstm, y: padded_bilstm(lstm, y, lengths), x), self.dropout.p, self.training
            )
        if bf16_cpu_inference(x) and not self.training:  # as the compact rows, padding zero
            real = (torch.arange(x.shape[1])[None, :] < lengths[:, None]).to(x.device)
            return self.stacked(feed, lambda lstm, y: bucketed_bilstm(lstm, y, lengths), x) * real[:, :, None]
        packed = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
        # without gradients: as parsing computes it (bf16 copies)
        out = self.stacked(feed, lambda lstm, y: run_lstm(lstm, y)[0], packed)
        out, _ = pad_packed_sequence(out, batch_first=True, total_length=batch.width)
        return dropout(out, self.dropout.p, self.training)

    def stacked(self, feed: Callable | None, run: Callable, x):
        """``run(lstm, x)`` through the BiLSTM; with ``model.tag_layer``, through the lower and
        the upper LSTM (dropout between, as between layers; with ``feed``, the upper LSTM also
        reads ``feed`` of the lower layer's vectors), returning the top layer's vectors
        with the lower layer's (what the taggers read) after them: [..., out_dim + tag_dim].
        ``x`` and the result are in ``run``'s layout: a padded tensor or a PackedSequence."""
        lower = run(self.lstm, x)
        if self.upper is None:
            return lower
        packed = isinstance(lower, PackedSequence)
        data = lower.data if packed else lower
        between = dropout(data, self.lstm_dropout, self.training)
        if feed is not None:
            between = torch.cat([between, feed(data).to(between.dtype)], -1)
        top = run(self.upper, lower._replace(data=between) if packed else between)
        if packed:
            return top._replace(data=torch.cat([top.data, data], -1))
        return torch.cat([top, data], -1)


def special(word: str) -> bool:
    """Whether a vocabulary entry is a special token (``<unk>``, ``<num>``, ...), not a word."""
    return word.startswith("<") and word.endswith(">")


def per_form(
    batch: Batch, vectors: Callable[[list[str]], torch.Tensor], device: torch.device, compact: bool
) -> torch.Tensor:
    """[B, T, D] (``compact``: [N, D]) vectors of the batch's words from ``vectors`` of its
    distinct forms, computed once each (the character model's and the suffixes' input)."""
    uniq = {f: k for k, f in enumerate(dict.fromkeys(chain.from_iterable(batch.forms)))}
    lengths = np.fromiter(map(len, batch.forms), dtype=np.int64, count=len(batch.forms))
    positions = np.fromiter(
        map(uniq.__getitem__, chain.from_iterable(batch.forms)), dtype=np.int64, count=int(lengths.sum())
    )
    out = vectors(list(uniq))
    if compact:
        return out[torch.from_numpy(positions).to(device)]
    return out[padded_flat(positions, lengths, batch.width).to(device)]


def padded_index(lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """For compact rows (sequence after sequence, ``lengths`` long): the [B, T] index of each
    padded position's row (padding reads row N, one past the end) and the [B, T] mask of real
    positions, whose rows in order are the compact rows."""
    n = lengths.cpu()
    steps = torch.arange(int(n.max()))[None, :]
    real = steps < n[:, None]
    index = torch.where(real, (torch.cumsum(n, 0) - n)[:, None] + steps, int(n.sum()))
    return index, real


def packed_rows(x: torch.Tensor, lengths: torch.Tensor) -> tuple[PackedSequence, np.ndarray]:
    """``pack_padded_sequence`` of compact rows (sequence after sequence, ``lengths`` long), as
    it packs the padded batch (the same sort, so the same order and numbers), and the compact
    row of each packed row."""
    sorted_lengths, order = torch.sort(lengths, descending=True)  # as pack_padded_sequence sorts
    n, perm = lengths.numpy(), order.numpy()
    starts = np.cumsum(n) - n
    steps = np.arange(int(sorted_lengths[0]))[:, None]
    alive = sorted_lengths.numpy()[None, :] > steps  # [T, B]: step t of sorted sequence j exists
    rows = (starts[perm][None, :] + steps)[alive]
    batch_sizes = torch.from_numpy(alive.sum(1))
    index = torch.from_numpy(rows).to(x.device)
    return PackedSequence(x[index], batch_sizes, order.to(x.device), None), rows


def extend_with_pretrained(vocabs: Vocabs, path: str, limit: int) -> torch.Tensor:
    """Add the words of a vector file to the word vocabulary; returns the initial embedding rows.

    Rows of training words the file lacks are drawn at random (scaled like the file's vectors).
    """
    words, vectors = read_vectors(path, limit)
    for w in words:
        vocabs.words.add(normalize(w, vocabs.lowercase))
    table = torch.randn(len(vocabs.words), vectors.shape[1]) * vectors.std()
    found = 0
    for w, row in zip(words, vectors):
        idx = vocabs.words.index(normalize(w, vocabs.lowercase))
        table[idx] = row
        found += 1
    log.info("pretrained vectors: %d read from %s (dim %d)", found, path, vectors.shape[1])
    return table
