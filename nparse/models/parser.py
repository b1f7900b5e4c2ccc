"""The parser network: BiLSTM encoder, transition scorer, label scorer, tagger and factor scorers.

It only computes (vectors, tables, scores); decoding (``decoding/decode.py``) and the training
objectives (``training/objectives.py``) run their loops on what it computes."""

from __future__ import annotations

from contextlib import nullcontext
from typing import Sequence

import numpy as np
import torch
from torch import nn

from ..config import ModelConfig
from ..io.data import ANALYSIS, Batch, Vocabs
from ..systems.adapters.arrays import Layout
from ..systems.base import TransitionSystem
from ..systems.adapters.factors import factor_mask
from ..timing import timed
from .completion import FactorScorer
from .encoder import Encoder
from .scorer import LabelScorer, Tagger, TransitionScorer
from .shapes import bf16_cpu_inference, bucket, pad_rows

PRECISIONS = ("fp32", "bf16", "fp16")


def fed_heads(options: ModelConfig) -> tuple[str, ...]:
    """The taggers whose predictions ``model.tag_feed`` gives the upper BiLSTM layers: UPOS, and
    with ``model.analysis`` XPOS and FEATS (whole sets; not feature by feature)."""
    if not options.tag_feed:
        return ()
    if not options.tagger:
        raise ValueError("model.tag_feed: needs model.tagger=true (the tags it feeds are predicted)")
    if not options.analysis:
        return ("upos",)
    return ("upos", "xpos") if options.feats_factored else ("upos", "xpos", "feats")


# Keys of the ``model`` config group that shape the network (the rest are read elsewhere).
ENCODER_KEYS = (
    "word_dim", "upos_dim", "xpos_dim", "feats_dim", "char_dim", "char_hidden", "char_kind", "char_max", "char_cache",
    "suffix_dim", "suffix_len", "suffix_buckets", "lexicon", "lexicon_dim", "lexicon_buckets", "lstm_dim", "lstm_layers", "lstm_dropout", "dropout", "word_dropout", "tag_layer",
)  # fmt: skip


class ParserModel(nn.Module):
    def __init__(
        self,
        vocabs: Vocabs,
        system: TransitionSystem,
        options: ModelConfig,
        pretrained: torch.Tensor | None = None,
    ):
        super().__init__()
        self.vocabs = vocabs
        self.system = system
        self.options = options
        sizes = {k: getattr(options, k) for k in ENCODER_KEYS}
        fed = fed_heads(options)
        self.encoder = Encoder(vocabs, **sizes, feed_dim=options.tag_feed * len(fed), pretrained=pretrained)
        if options.parser_reads_tag_layer and self.encoder.upper is None:
            raise ValueError(
                "model.parser_reads_tag_layer: needs model.tag_layer below model.lstm_layers (a layer below the parser's)"
            )
        dim = self.encoder.out_dim + (self.encoder.tag_dim if options.parser_reads_tag_layer else 0)
        self.scorer = TransitionScorer(dim, system.n_slots, options.hidden, len(system.actions))
        self.labeler = LabelScorer(dim, options.label_hidden, len(vocabs.labels))
        if options.tagger and options.upos_dim:
            raise ValueError(
                f"model.tagger=true with model.upos_dim={options.upos_dim}: a parser with a tagger must not "
                "read gold tags; set model.upos_dim=0 (the _tagger presets do)"
            )
        tag_dim = self.encoder.tag_dim
        self.tagger = Tagger(tag_dim, options.tagger_hidden, len(vocabs.upos)) if options.tagger else None
        if options.analysis and (options.xpos_dim or options.feats_dim):
            raise ValueError(
                "model.analysis=true predicts XPOS and FEATS: the parser must not read them as well; "
                "set model.xpos_dim=0 model.feats_dim=0 (the _ud presets do)"
            )
        if options.analysis and not vocabs.morphology:
            raise ValueError(
                "model.analysis=true: the vocabularies have no FEATS and lemma tables (built without morphology)"
            )
        # XPOS, FEATS and lemma rules, each from the BiLSTM vectors as the tagger predicts UPOS
        self.analyser = nn.ModuleDict(
            {name: Tagger(tag_dim, options.tagger_hidden, len(getattr(vocabs, name)
                          if name != "feats" or not options.feats_factored else vocabs.features)) for name in ANALYSIS}
        ) if options.analysis else None  # fmt: skip
        # model.tag_feed: an embedding of each fed head's predicted distribution (its expected tag
        # vector), read by the BiLSTM layers above the taggers' (``feed``)
        self.feed_tables = nn.ModuleDict(
            {name: nn.Linear(self.head(name).out.out_features, options.tag_feed, bias=False) for name in fed}
        ) if fed else None  # fmt: skip
        completion = options.completion
        self.factor_mask = factor_mask(completion.factors)
        self.precision = "fp32"  # of the encoder and tables (``set_precision``); not saved with the model
        if self.factor_mask and options.tag_layer:
            raise ValueError(
                "model.tag_layer: not with the completion model (its factors read every column of the vectors)"
            )
        self.completion = FactorScorer(dim, self.factor_mask, completion.hidden) if self.factor_mask else None
        # The first-order factor also learns to select heads, so that decoder=mst can use it alone.
        self.arc_loss = self.has_arc_factor and completion.arc_loss

    def head(self, name: str) -> Tagger:
        """The tagger of a column: "upos", or one of the analysis heads."""
        head = self.tagger if name == "upos" else self.analyser[name] if self.analyser is not None else None
        if not isinstance(head, Tagger):
            raise ValueError(f"the model predicts no {name}")
        return head

    def feed(self, lower: torch.Tensor) -> torch.Tensor:
        """The predicted-tag vectors of ``model.tag_feed`` from the lower layer's vectors: for
        each fed head, its softmax times an embedding table, so that the parser's gradient also
        reaches the taggers (as stack-propagation's) and the upper layers read the tags the model
        predicts, at training as at parsing."""
        assert self.feed_tables is not None
        return torch.cat(
            [table(torch.softmax(self.head(name)(lower), -1)) for name, table in self.feed_tables.items()], -1
        )

    @property
    def members(self) -> tuple["ParserModel"]:
        """This parser alone (``decoding.scoring.Network``: an ensemble lists several)."""
        return (self,)

    @property
    def has_arc_factor(self) -> bool:
        """Whether the completion model has the first-order factor (what ``decoder=mst`` needs)."""
        return bool(self.factor_mask & 1)

    def layout(self, width: int) -> Layout:
        return Layout(self.system, width, self.factor_mask)

    def set_precision(self, precision: str) -> None:
        """Compute the encoder and the first-layer tables in ``precision`` (``trainer.precision``)."""
        if precision not in PRECISIONS:
            raise ValueError(f"trainer.precision={precision}: choose one of {', '.join(PRECISIONS)}")
        self.precision = precision

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

    @property
    def pos_inputs(self) -> tuple[str, ...]:
        """The POS columns the model reads from its input (UPOS, XPOS)."""
        return tuple(
            name
            for name, table in (("UPOS", self.encoder.upos), ("XPOS", self.encoder.xpos), ("FEATS", self.encoder.feats))
            if table is not None
        )

    def fill_char_cache(self) -> None:
        """The vocabulary's character vectors, once, in the model's precision (``Encoder.fill_char_cache``)."""
        with self.autocast():
            self.encoder.fill_char_cache()

    def encode(
        self, batch: Batch, with_table: bool = True, compact: bool = False
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """BiLSTM vectors and (unless not wanted) the transition scorer's first-layer table;
        ``compact``: both without padding, sentence b's words at rows ``batch.row_starts[b] + w``
        (``Encoder.forward``)."""
        with timed("encoder"), self.autocast():
            feed = self.feed if self.feed_tables is not None else None
            vectors = self.encoder(batch.to(self.device), compact=compact, feed=feed)
            lengths = None if compact else batch.lengths  # compact rows are all real
            table = self.scorer.table(self.parser_part(vectors), lengths).float() if with_table else None
        return vectors.float(), table

    def parser_part(self, vectors: torch.Tensor) -> torch.Tensor:
        """The columns of the encoder's vectors that the parser reads: the top layer's (with
        ``model.tag_layer`` the taggers' lower layer follows them, ``Encoder.stacked``; with
        ``model.parser_reads_tag_layer`` the parser reads both)."""
        if self.encoder.upper is None or self.options.parser_reads_tag_layer:
            return vectors
        return vectors[..., : self.encoder.out_dim]

    def label_scores(
        self, vectors: torch.Tensor, heads: Sequence[int] | np.ndarray, deps: Sequence[int] | np.ndarray
    ) -> torch.Tensor:
        """Label scores of the arcs heads[i] -> deps[i] (rows of ``vectors`` flattened). Without
        gradients (parsing, dev evaluation) in the model's precision, as the encoder: in bf16,
        labelling EWT test took 51 ms less of the default model's 476 ms, at the same test LAS
        (within 0.02 on three treebanks); the loss keeps float32."""
        arc_heads, arc_deps = torch.as_tensor(heads, device=self.device), torch.as_tensor(deps, device=self.device)
        vectors = self.parser_part(vectors)
        if torch.is_grad_enabled():
            return self.labeler(vectors, arc_heads, arc_deps)
        with self.autocast():
            n = len(arc_heads)
            if bf16_cpu_inference(vectors):  # few distinct shapes (``shapes``)
                arc_heads, arc_deps = pad_rows(arc_heads, bucket(n)), pad_rows(arc_deps, bucket(n))
            return self.labeler(vectors, arc_heads, arc_deps)[:n].float()
