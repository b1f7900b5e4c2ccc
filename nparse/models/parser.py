"""The parser network: BiLSTM encoder, transition scorer and label scorer, batched end to end."""

from __future__ import annotations

import random
from typing import Any, Mapping

import torch
from torch import nn
from torch.nn import functional as F

from ..io.data import Batch, Vocabs
from .encoder import Encoder
from ..decoding.greedy import decode
from ..training.local import Steps, hinge_loss, train_loop
from .scorer import LabelScorer, TransitionScorer
from ..systems import Oracle, TransitionSystem

# Keys of the ``model`` config group that shape the network (the rest are read elsewhere).
ENCODER_KEYS = (
    "word_dim", "upos_dim", "xpos_dim", "char_dim", "char_hidden",
    "lstm_dim", "lstm_layers", "lstm_dropout", "dropout", "word_dropout",
)  # fmt: skip


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
        self.encoder = Encoder(vocabs, **{k: options[k] for k in ENCODER_KEYS}, pretrained=pretrained)
        dim = self.encoder.out_dim
        self.scorer = TransitionScorer(dim, system.n_slots, options["hidden"], len(system.actions))
        self.labeler = LabelScorer(dim, options["label_hidden"], len(vocabs.labels))

    @property
    def device(self) -> torch.device:
        return self.scorer.first.weight.device

    def _start(self, batch: Batch) -> tuple[torch.Tensor, torch.Tensor, list, list[int]]:
        vectors = self.encoder(batch.to(self.device))
        table = self.scorer.table(vectors)
        width = batch.width
        configs = [self.system.initial(len(e)) for e in batch.examples]
        offsets = [b * width for b in range(len(configs))]
        return vectors, table, configs, offsets

    def _label_scores(self, vectors: torch.Tensor, arcs: list[tuple[int, int]]) -> torch.Tensor:
        heads = torch.tensor([h for h, _ in arcs], device=self.device)
        deps = torch.tensor([d for _, d in arcs], device=self.device)
        return self.labeler(vectors, heads, deps)

    @torch.no_grad()
    def parse(self, batch: Batch) -> list[tuple[list[int], list[str]]]:
        """Heads and labels of every sentence (index 0 is the root)."""
        vectors, table, configs, offsets = self._start(batch)
        decode(self.system, self.scorer, table, configs, offsets)
        trees = [self.system.output(c) for c in configs]
        arcs = [(off + h[d], off + d) for h, off in zip(trees, offsets) for d in range(1, len(h))]
        best = self._label_scores(vectors, arcs).argmax(1).tolist()
        names = self.vocabs.labels.itos
        out, k = [], 0
        for heads in trees:
            n = len(heads) - 1
            out.append((heads, ["_"] + [names[x] for x in best[k : k + n]]))
            k += n
        return out

    def train_step(
        self, batch: Batch, oracle: Oracle, explore_p: float, rng: random.Random
    ) -> tuple[torch.Tensor, Steps, int]:
        """Loss of one batch (transition hinge loss + label cross-entropy, summed)."""
        vectors, table, configs, offsets = self._start(batch)
        golds = [e.gold for e in batch.examples]
        steps = train_loop(self.system, oracle, self.scorer, table.detach(), configs, golds, offsets, explore_p, rng)
        loss = hinge_loss(self.scorer, table, steps)
        arcs, labels = [], []
        for e, off in zip(batch.examples, offsets):
            for d in range(1, len(e) + 1):
                if e.labels[d] >= 0:
                    arcs.append((off + e.sent.heads[d], off + d))
                    labels.append(e.labels[d])
        if arcs:
            scores = self._label_scores(vectors, arcs)
            loss = loss + F.cross_entropy(scores, torch.tensor(labels, device=self.device), reduction="sum")
        return loss, steps, len(arcs)
