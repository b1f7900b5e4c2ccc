"""Decoding a trained network: batches of sentences to labelled trees.

The network (``decoding.scoring.Network``: a ``models.parser.ParserModel``, or several as ``models.ensemble.EnsembleModel``)
only computes: BiLSTM vectors, the transition scorer's table, label, tag and factor scores. This
module runs the decoders on them: the batched beam search (greedy is one item), or the maximum
spanning tree of the first-order factor, then labels every arc of every tree in one labeler call.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, replace
from itertools import chain
from typing import Any, Sequence

import numpy as np
import torch
from tqdm import tqdm

from ..io.conllu import Sentence, with_comments
from ..io.data import ANALYSIS, Batch, Example, bucket_batches, collate, encode
from ..io.feats import FeatureTables
from ..io.lemma_rules import apply_rule
from ..runtime import collector_paused
from ..systems.base import NONE, single_rooted
from .beam import beam_search
from .completion import Completion
from .mst import mst_heads
from .scoring import Network
from .settings import DecodeSettings

ROOT_LABEL = "root"  # the DEPREL of the root's dependent in UD


@dataclass
class Parse:
    """One parse of a sentence: heads and labels (index 0 is the root) and its derivation score."""

    heads: list[int]
    labels: list[str]
    score: float
    tags: list[str] | None = None  # predicted UPOS (index 0 is the root) of a model with a tagger
    # predicted XPOS, FEATS and lemma rules (index 0 is the root's) of a model with ``model.analysis``
    analysis: tuple[list[str], list[str], list[str]] | None = None
    steps: int | None = None  # transitions of its derivation (None for decoder=mst)


def completion_for(model: Network, vectors: Any, lengths: list[int]) -> Completion | None:
    """The completion model's tables for one batch (None without factors)."""
    if model.completion is None:
        return None
    (single,) = model.members  # only a single parser has a completion model
    with single.autocast():
        built = Completion.build(model.completion, vectors, lengths)
    built.table = built.table.float()
    return built


def compact_rows(model: Network) -> bool:
    """Whether greedy and beam decoding read the model's vectors and table without padding
    (``Encoder.forward``): an ensemble, or a single model without a completion model, whose
    factor tables are laid out padded."""
    return model.completion is None


@torch.no_grad()
def decode_batch(model: Network, batch: Batch, settings: DecodeSettings) -> list[list[Parse]]:
    """The ``settings.nbest`` best distinct trees of every sentence of the batch, best first."""
    lengths = [len(e) for e in batch.examples]
    padded_starts = np.arange(len(lengths)) * batch.width
    if settings.decoder == "mst":
        vectors, _ = model.encode(batch, with_table=False)
        return label_trees(model, vectors, padded_starts, mst_trees(model, vectors, lengths))
    if compact_rows(model):
        vectors, table = model.encode(batch, compact=True)
        starts = batch.row_starts
    else:
        vectors, table = model.encode(batch)
        starts = padded_starts
    assert table is not None  # asked for with_table
    layout = model.layout(batch.width)
    beams = beam_search(
        layout, model.scorer, table, lengths, settings.beam_size, completion_for(model, vectors, lengths),
        settings.beam_temperature, row_starts=starts,
    )  # fmt: skip
    trees: list[list[tuple[list[int], float]]] = []
    steps: list[list[int]] = []
    for beam in beams:
        seen: dict[tuple[int, ...], tuple[float, int]] = {}
        for heads, score, n_steps in zip(beam.heads, beam.scores, beam.steps):
            seen.setdefault(tuple(single_rooted(heads)), (score, n_steps))
            if len(seen) == settings.nbest:
                break
        trees.append([(list(h), s) for h, (s, _) in seen.items()])
        steps.append([t for _, t in seen.values()])
    parses = label_trees(model, vectors, starts, trees)
    for ps, ts in zip(parses, steps):
        for p, t in zip(ps, ts):
            p.steps = t
    return parses


def decode_sentences(
    model: Network, sentences: Sequence[Sentence], settings: DecodeSettings, progress: bool = False
) -> list[list[Parse]]:
    """Every sentence's parses, in input order, parsed in length-bucketed batches (with the
    garbage collector paused: ``runtime.collector_paused``)."""
    with collector_paused():
        examples = [encode(s, model.vocabs, labels=False) for s in sentences]
        index = {id(e): k for k, e in enumerate(examples)}
        results: list = [None] * len(examples)
        batches = bucket_batches(examples, settings.sentences_per_batch, max_tokens=settings.batch_tokens)
        bar = tqdm(total=len(examples), unit="sent", disable=not progress, leave=False)
        model.eval()
        for batch in batches:
            parses = decode_batch(model, collate(batch), settings)
            lexicon_lemmas(model.vocabs.lexicon, batch, parses)
            for e, res in zip(batch, parses):
                results[index[id(e)]] = res
            bar.update(len(batch))
        bar.close()
    return results


def mst_trees(model: Network, vectors: Any, lengths: list[int]) -> list[list[tuple[list[int], float]]]:
    """The best single-rooted tree of every sentence under the first-order factor alone."""
    if len(model.members) == 1:
        model = model.members[0]  # its own message below, if it cannot
    if len(model.members) > 1:
        raise ValueError("decoder=mst: an ensemble averages transition scores; decode it with decoder=greedy or beam")
    if model.completion is None or not model.has_arc_factor:
        raise ValueError(
            "decoder=mst needs a model with the first-order factor: train with "
            "model.completion.factors containing 1 (e.g. +exp=completion_2a)"
        )
    trees = []
    for n, sentence_scores in zip(lengths, model.completion.arc_scores(vectors, lengths)):
        scores = sentence_scores.double().cpu().numpy()
        heads = mst_heads(scores)
        heads[0] = NONE
        trees.append([(heads, float(scores[heads[1:], range(1, n + 1)].sum()))])
    return trees


def label_trees(
    model: Network, vectors: Any, starts: np.ndarray, trees: list[list[tuple[list[int], float]]]
) -> list[list[Parse]]:
    """Labels of the arcs of every tree, in one labeler call (sentence b's words are the rows
    ``starts[b] + w`` of the flattened vectors); ``root`` iff the head is the root (UD: the
    root's dependent and only it is labelled root)."""
    heads_of, rows, lengths = arcs_of(trees)
    first = starts[rows]
    scores = model.label_scores(vectors, heads_of + first, dependents(lengths) + first)
    names = model.vocabs.labels.itos
    if ROOT_LABEL in names and len(heads_of):
        root = names.index(ROOT_LABEL)
        to_root = torch.from_numpy(heads_of == 0).to(scores.device)
        scores[~to_root, root] = float("-inf")
        scores[to_root] = float("-inf")
        scores[to_root, root] = 0.0
    best = list(map(names.__getitem__, scores.argmax(1).tolist()))
    sizes = [len(ts[0][0]) - 1 if ts else 0 for ts in trees]
    tags = predicted_tags(model, vectors, sizes, starts)
    analyses = predicted_analysis(model, vectors, sizes, starts)
    out, k = [], 0
    for b, ts in enumerate(trees):
        parses = []
        for heads, score in ts:
            n = len(heads) - 1
            parses.append(Parse(heads, ["_", *best[k : k + n]], score, tags[b], analyses[b]))
            k += n
        out.append(parses)
    return out


def arcs_of(trees: list[list[tuple[list[int], float]]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every tree's arcs, tree after tree: the head of each word (index 0, the root's, left out),
    the batch row of its sentence, and the number of words of each tree; built from flat
    sequences, not array by array per tree (which was a third of labelling)."""
    flat = [(b, h) for b, ts in enumerate(trees) for h, _ in ts]
    lengths = np.fromiter((len(h) - 1 for _, h in flat), dtype=np.int64, count=len(flat))
    every = np.fromiter(chain.from_iterable(h for _, h in flat), dtype=np.int64, count=int(lengths.sum()) + len(flat))
    firsts = np.cumsum(lengths + 1) - (lengths + 1)  # where each tree's root entry is
    words = np.ones(len(every), dtype=np.bool_)
    words[firsts] = False
    rows = np.repeat(np.fromiter((b for b, _ in flat), dtype=np.int64, count=len(flat)), lengths)
    return every[words], rows, lengths


def dependents(lengths: np.ndarray) -> np.ndarray:
    """1..n for every tree of n words, one after the other."""
    starts = np.cumsum(lengths) - lengths
    return np.arange(int(lengths.sum()), dtype=np.int64) - np.repeat(starts, lengths) + 1


def predicted_tags(model: Network, vectors: Any, lengths: list[int], starts: np.ndarray) -> list[list[str] | None]:
    """Predicted UPOS of every sentence (index 0: the root; sentence b's words at the rows
    ``starts[b] + w`` of the flattened vectors), or None without a tagger; never a special
    symbol or "_"."""
    if model.tagger is None:
        return [None] * len(lengths)
    scores = model.tagger(vectors)
    scores = scores.reshape(-1, scores.shape[-1])
    itos = model.vocabs.upos.itos
    banned = [i for i, t in enumerate(itos) if i < 3 or t == "_"]
    scores[:, banned] = float("-inf")
    best = scores.argmax(-1).tolist()
    return [["<root>"] + [itos[x] for x in best[s + 1 : s + n + 1]] for s, n in zip(starts.tolist(), lengths)]


def predicted_analysis(
    model: Network, vectors: Any, lengths: list[int], starts: np.ndarray
) -> list[tuple[list[str], list[str], list[str]] | None]:
    """Predicted XPOS, FEATS and lemma rules of every sentence (as ``predicted_tags``), or None
    without ``model.analysis``; never a special symbol (XPOS and FEATS may be "_")."""
    analyser = model.analyser
    if analyser is None:
        return [None] * len(lengths)
    rows = torch.from_numpy(np.concatenate([np.arange(s + 1, s + n + 1) for s, n in zip(starts.tolist(), lengths)]))
    columns = []
    features = model.vocabs.features if model.members[0].options.feats_factored else None
    for name in ANALYSIS:
        scores = analyser[name](vectors)  # every row, as ``predicted_tags`` (an ensemble's vectors are a list)
        scores = scores.reshape(-1, scores.shape[-1])[rows.to(scores.device)].float()
        if name == "feats" and features is not None:
            columns.append(factored_feats(scores, features))
            continue
        scores[:, :3] = float("-inf")
        itos = getattr(model.vocabs, name).itos
        columns.append(list(map(itos.__getitem__, scores.argmax(-1).tolist())))
    out: list[tuple[list[str], list[str], list[str]] | None] = []
    k = 0
    for n in lengths:
        out.append(tuple(["<root>", *column[k : k + n]] for column in columns))  # type: ignore[arg-type]
        k += n
    return out


def factored_feats(scores: torch.Tensor, features: FeatureTables) -> list[str]:
    """Each word's FEATS from its scores of every feature's values (``model.feats_factored``):
    the best value of each feature, "not set" included."""
    offsets = features.offsets
    chosen = torch.stack([scores[:, offsets[k] : offsets[k + 1]].argmax(-1) for k in range(len(offsets) - 1)], -1)
    return [features.compose(row) for row in chosen.tolist()] if len(offsets) > 1 else ["_"] * len(scores)


def parsed_sentence(sent: Sentence, parse: Parse) -> Sentence:
    """The sentence with the parse's HEAD and DEPREL (and its UPOS from a model with a tagger,
    and XPOS, FEATS and lemmas from a model with ``model.analysis``)."""
    out = copy.copy(sent)  # a shallow copy: dataclasses.replace took 6% of parsing short sentences
    out.heads, out.deprels = parse.heads, parse.labels
    if parse.tags is not None:
        out.upos, out.tagged = parse.tags, True
    if parse.analysis is not None:
        out.xpos, out.feats, rules = parse.analysis
        out.lemmas = [sent.forms[0], *map(lemma_of, sent.forms[1:], rules[1:])]
        out.analysed = True
    return out


def lexicon_lemmas(lexicon: dict[str, str], examples: Sequence[Example], parses: list[list[Parse]]) -> None:
    """Every word whose form and UPOS (predicted, or the input's) the training file has gets the
    rule of its most frequent lemma there (``Vocabs.lexicon``) instead of the classifier's; a
    model without a lexicon (trained before it) keeps its rules."""
    if not lexicon:
        return
    for example, sentence_parses in zip(examples, parses):
        analysis = sentence_parses[0].analysis if sentence_parses else None
        if analysis is None:
            continue
        rules, forms = analysis[2], example.sent.forms
        upos = sentence_parses[0].tags or example.sent.upos
        for i in range(1, len(forms)):
            rule = lexicon.get(f"{forms[i]}\t{upos[i]}")
            if rule is not None:
                rules[i] = rule  # the n-best parses of a sentence share its analysis


def lemma_of(form: str, rule: str) -> str:
    """The lemma the rule makes of the form; the form itself where it is too short for the rule."""
    lemma = apply_rule(form, rule)
    return form if lemma is None or lemma == "" else lemma


def nbest_sentences(sent: Sentence, parses: Sequence[Parse]) -> list[Sentence]:
    """One copy of the sentence per parse, with ``# nbest = i`` and ``# score = ...`` comments."""
    return [
        replace(parsed_sentence(with_comments(sent, [f"# nbest = {i}", f"# score = {p.score:.4f}"]), p), score=p.score)
        for i, p in enumerate(parses, 1)
    ]
