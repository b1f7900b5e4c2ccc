"""The parser network: BiLSTM encoder, transition scorer and label scorer, batched end to end."""

from __future__ import annotations

import random
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any, Mapping

import torch
from torch import nn
from torch.nn import functional as F

from ..timing import timed
from ..decoding.beam import beam_search
from ..decoding.completion import Completion
from ..decoding.mst import mst_heads
from ..io.data import Batch, Vocabs
from ..systems import Oracle, TransitionSystem
from ..systems.arrays import Layout
from ..systems.base import NONE, single_rooted
from ..systems.factors import factor_mask
from ..training.local import Steps, train_loop
from ..training.global_loop import GlobalRecord, GlobalSearch, GlobalSettings
from ..training.losses import global_loss, hinge_loss
from .completion import FactorScorer
from .encoder import Encoder
from .scorer import LabelScorer, Tagger, TransitionScorer

ROOT_LABEL = "root"  # the DEPREL of the root's dependent in UD

# Keys of the ``model`` config group that shape the network (the rest are read elsewhere).
ENCODER_KEYS = (
    "word_dim", "upos_dim", "xpos_dim", "char_dim", "char_hidden",
    "lstm_dim", "lstm_layers", "lstm_dropout", "dropout", "word_dropout",
)  # fmt: skip


@dataclass
class Parse:
    """One parse of a sentence: heads and labels (index 0 is the root) and its derivation score."""

    heads: list[int]
    labels: list[str]
    score: float
    tags: list[str] | None = None  # predicted UPOS (index 0 is the root) of a model with a tagger


def check_beam(beam_size: int, nbest: int) -> None:
    """Refuse a beam width or n-best count that cannot work, before any sentence is read."""
    if beam_size < 1:
        raise ValueError(f"beam_size must be at least 1, not {beam_size}")
    if not 1 <= nbest <= beam_size:
        raise ValueError(f"nbest={nbest}: must be between 1 and beam_size={beam_size}")


class ParserModel(nn.Module):
    def __init__(
        self,
        vocabs: Vocabs,
        system: TransitionSystem,
        options: Mapping[str, Any],
        pretrained: torch.Tensor | None = None,
    ):
        super().__init__()
        self.vocabs = vocabs
        self.system = system
        self.options = dict(options)
        sizes = {k: options[k] for k in ENCODER_KEYS}
        sizes["char_max"] = int(options.get("char_max", 50))  # absent from older checkpoints
        self.encoder = Encoder(vocabs, **sizes, pretrained=pretrained)
        dim = self.encoder.out_dim
        self.scorer = TransitionScorer(dim, system.n_slots, options["hidden"], len(system.actions))
        self.labeler = LabelScorer(dim, options["label_hidden"], len(vocabs.labels))
        if options.get("tagger") and options.get("upos_dim"):
            raise ValueError(
                f"model.tagger=true with model.upos_dim={options['upos_dim']}: a parser with a tagger must not "
                "read gold tags; set model.upos_dim=0 (the _tagger presets do)"
            )
        self.tagger = (
            Tagger(dim, int(options.get("tagger_hidden") or 100), len(vocabs.upos)) if options.get("tagger") else None
        )
        completion = dict(options.get("completion") or {})
        self.factor_mask = factor_mask(list(completion.get("factors") or []))
        self.precision = "fp32"  # set by the trainer (trainer.precision); not saved with the model
        self.completion = (
            FactorScorer(dim, self.factor_mask, int(completion.get("hidden") or 100)) if self.factor_mask else None
        )
        # The first-order factor also learns to select heads, so that decoder=mst can use it alone.
        self.arc_loss = self.has_arc_factor and bool(completion.get("arc_loss", True))

    @property
    def has_arc_factor(self) -> bool:
        """Whether the completion model has the first-order factor (what ``decoder=mst`` needs)."""
        return bool(self.factor_mask & 1)

    def layout(self, width: int) -> Layout:
        return Layout(self.system, width, self.factor_mask)

    def completion_for(self, vectors: torch.Tensor, lengths: list[int]) -> Completion | None:
        """The completion model's tables for one batch (None without factors)."""
        if self.completion is None:
            return None
        with self.autocast():
            built = Completion.build(self.completion, vectors, lengths)
        built.table = built.table.float()
        return built

    @property
    def device(self) -> torch.device:
        return self.scorer.first.weight.device

    def autocast(self):
        """Mixed precision for the encoder and the first-layer tables (``trainer.precision``);
        their results are cast back to float32 for the compiled search and the losses."""
        if self.precision == "fp32":
            return nullcontext()
        dtype = torch.bfloat16 if self.precision == "bf16" else torch.float16
        return torch.autocast(self.device.type, dtype=dtype)

    def _encode(self, batch: Batch, with_table: bool = True) -> tuple[torch.Tensor, torch.Tensor | None]:
        """BiLSTM vectors and (unless not wanted) the transition scorer's first-layer table."""
        with timed("encoder"), self.autocast():
            vectors = self.encoder(batch.to(self.device))
            table = self.scorer.table(vectors).float() if with_table else None
        return vectors.float(), table

    def _start(self, batch: Batch) -> tuple[torch.Tensor, torch.Tensor, list, list[int]]:
        vectors, table = self._encode(batch)
        width = batch.width
        configs = [self.system.initial(len(e)) for e in batch.examples]
        offsets = [b * width for b in range(len(configs))]
        return vectors, table, configs, offsets

    def _label_scores(self, vectors: torch.Tensor, arcs: list[tuple[int, int]]) -> torch.Tensor:
        heads = torch.tensor([h for h, _ in arcs], device=self.device)
        deps = torch.tensor([d for _, d in arcs], device=self.device)
        return self.labeler(vectors, heads, deps)

    @torch.no_grad()
    def parse(self, batch: Batch, beam_size: int = 1, nbest: int = 1, decoder: str = "beam") -> list[list[Parse]]:
        """The ``nbest`` best distinct trees of every sentence, best first (beam_size 1: greedy);
        ``decoder="mst"``: the maximum spanning tree of the first-order factor scores."""
        check_beam(beam_size, nbest)
        if decoder not in ("beam", "mst"):
            raise ValueError(f"decoder={decoder}: choose greedy, beam or mst")
        lengths = [len(e) for e in batch.examples]
        if decoder == "mst":
            vectors, _ = self._encode(batch, with_table=False)
            return self._label(vectors, batch.width, self._mst(vectors, lengths))
        vectors, table = self._encode(batch)
        layout = self.layout(batch.width)
        beams = beam_search(layout, self.scorer, table, lengths, beam_size, self.completion_for(vectors, lengths))
        trees: list[list[tuple[list[int], float]]] = []
        for beam in beams:
            seen: dict[tuple[int, ...], float] = {}
            for heads, score in zip(beam.heads, beam.scores):
                seen.setdefault(tuple(single_rooted(heads)), score)
                if len(seen) == nbest:
                    break
            trees.append([(list(h), s) for h, s in seen.items()])
        return self._label(vectors, batch.width, trees)

    def _mst(self, vectors: torch.Tensor, lengths: list[int]) -> list[list[tuple[list[int], float]]]:
        """The best single-rooted tree of every sentence under the first-order factor alone."""
        if self.completion is None or not self.has_arc_factor:
            raise ValueError(
                "decoder=mst needs a model with the first-order factor: train with "
                "model.completion.factors containing 1 (e.g. +exp=completion_2a)"
            )
        trees = []
        for n, sentence_scores in zip(lengths, self.completion.arc_scores(vectors, lengths)):
            scores = sentence_scores.double().cpu().numpy()
            heads = mst_heads(scores)
            heads[0] = NONE
            trees.append([(heads, float(scores[heads[1:], range(1, n + 1)].sum()))])
        return trees

    def _label(
        self, vectors: torch.Tensor, width: int, trees: list[list[tuple[list[int], float]]]
    ) -> list[list[Parse]]:
        """Labels of the arcs of every tree, in one labeler call; ``root`` iff the head is the root
        (UD: the root's dependent and only it is labelled root)."""
        arcs = [
            (b * width + h[d], b * width + d) for b, ts in enumerate(trees) for h, _ in ts for d in range(1, len(h))
        ]
        scores = self._label_scores(vectors, arcs)
        names = self.vocabs.labels.itos
        if ROOT_LABEL in names and len(arcs):
            root = names.index(ROOT_LABEL)
            to_root = torch.tensor([h[d] == 0 for ts in trees for h, _ in ts for d in range(1, len(h))])
            scores[~to_root.to(scores.device), root] = float("-inf")
            scores[to_root.to(scores.device)] = float("-inf")
            scores[to_root.to(scores.device), root] = 0.0
        best = scores.argmax(1).tolist()
        tags = self._tags(vectors, [len(ts[0][0]) - 1 if ts else 0 for ts in trees])
        out, k = [], 0
        for b, ts in enumerate(trees):
            parses = []
            for heads, score in ts:
                n = len(heads) - 1
                parses.append(Parse(heads, ["_"] + [names[x] for x in best[k : k + n]], score, tags[b]))
                k += n
            out.append(parses)
        return out

    def _tags(self, vectors: torch.Tensor, lengths: list[int]) -> list[list[str] | None]:
        """Predicted UPOS of every sentence (index 0: the root), or None without a tagger; never a
        special symbol or "_"."""
        if self.tagger is None:
            return [None] * len(lengths)
        scores = self.tagger(vectors)  # [B, T, tags]
        itos = self.vocabs.upos.itos
        banned = [i for i, t in enumerate(itos) if i < 3 or t == "_"]
        scores[..., banned] = float("-inf")
        best = scores.argmax(-1).tolist()
        return [["<root>"] + [itos[x] for x in best[b][1 : n + 1]] for b, n in enumerate(lengths)]

    def _tag_loss(self, vectors: torch.Tensor, batch: Batch) -> torch.Tensor:
        """Cross-entropy of the gold UPOS of every word that has one (0 without a tagger)."""
        if self.tagger is None:
            return vectors.sum() * 0.0
        gold = batch.upos.to(self.device)
        unknown = self.vocabs.upos.index("_") if "_" in self.vocabs.upos else -1
        mask = (gold >= 3) & (gold != unknown)
        mask[:, 0] = False
        if not bool(mask.any()):
            return vectors.sum() * 0.0
        return F.cross_entropy(self.tagger(vectors[mask]), gold[mask], reduction="sum")

    def train_step(
        self, batch: Batch, oracle: Oracle, explore_p: float, rng: random.Random
    ) -> tuple[torch.Tensor, Steps]:
        """Loss of one batch of greedy training (transition hinge loss + label loss, summed)."""
        vectors, table, configs, offsets = self._start(batch)
        golds = [e.gold for e in batch.examples]
        steps = train_loop(self.system, oracle, self.scorer, table.detach(), configs, golds, offsets, explore_p, rng)
        with timed("loss"):
            loss = hinge_loss(self.scorer, table, steps) + self._label_loss(vectors, batch)
            return loss + self._tag_loss(vectors, batch), steps

    def global_train_step(
        self, batch: Batch, oracle: Oracle, settings: GlobalSettings
    ) -> tuple[torch.Tensor, GlobalRecord]:
        """Loss of one batch of global training (beam search with updates, see global_loop)."""
        vectors, table = self._encode(batch)
        golds = [e.gold for e in batch.examples]
        lengths = [len(e) for e in batch.examples]
        layout = self.layout(batch.width)
        completion = self.completion_for(vectors, lengths)
        search_completion = None if completion is None else completion.detached()
        rec = GlobalSearch(
            layout, oracle, self.scorer, table.detach(), golds, lengths, settings, search_completion
        ).run()
        with timed("loss"):
            loss = global_loss(self.scorer, table, rec, settings.loss, completion)
            if self.completion is not None and self.arc_loss:
                loss = loss + self.completion.head_loss(vectors, lengths, [e.sent.heads for e in batch.examples])
            return loss + self._label_loss(vectors, batch) + self._tag_loss(vectors, batch), rec

    def _label_loss(self, vectors: torch.Tensor, batch: Batch) -> torch.Tensor:
        """Cross-entropy of the gold labels on the gold arcs (labels are predicted after parsing)."""
        arcs, labels = [], []
        for b, e in enumerate(batch.examples):
            off = b * batch.width
            for d in range(1, len(e) + 1):
                if e.labels[d] >= 0:
                    arcs.append((off + e.sent.heads[d], off + d))
                    labels.append(e.labels[d])
        if not arcs:
            return vectors.sum() * 0.0
        scores = self._label_scores(vectors, arcs)
        return F.cross_entropy(scores, torch.tensor(labels, device=self.device), reduction="sum")
