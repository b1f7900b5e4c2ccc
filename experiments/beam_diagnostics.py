"""Why a beam helps or hurts a model: search errors against model errors on a treebank.

    python experiments/beam_diagnostics.py RUN_OR_CHECKPOINT... [--split dev] [--beam 8] [--scores auto|local|raw]

For every model, the sentences of the split (of the model's own treebank) are parsed greedily
and with a beam; for those the system's static oracle can build (projective trees for the
projective systems), the gold derivation (the static oracle's sequence) is scored too. Prints
UAS of both decoders, how many sentences the beam changes, the mean derivation scores, and for
the beam's wrong parses whether the gold derivation scores higher (a search error: a wider
beam could find it) or lower (a model error: the model prefers the wrong tree). The gold
derivation is the static oracle's one; where other derivations build the gold tree too, one of
them may score higher, so "model error" is an upper bound. Scores are what the model's beam
sums (``--scores auto``: local scores at its fitted temperature for a greedily trained model, see
``decoding/settings.py``); with raw scores of a greedy model the counts mostly measure the
length bias, not the model.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import torch
from common import split_sentences

from nparse.api import Parser
from nparse.decoding.decode import completion_for
from nparse.decoding.beam import beam_search, local_scores, score_rows
from nparse.io.data import bucket_batches, collate, encode
from nparse.systems import make_oracle
from nparse.systems.adapters.arrays import Layout
from nparse.systems.base import single_rooted


STATIC = {"archybrid": "static", "arceager": "static", "arcstandard": "static", "swapstandard": "eager",
          "twoplanar": "static", "archybrid_swap": "static"}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("models", nargs="+", type=Path)
    ap.add_argument("--split", default="dev")
    ap.add_argument("--beam", type=int, default=8)
    ap.add_argument("--scores", choices=("auto", "local", "raw"), default="auto")
    args = ap.parse_args()
    print(
        "| model | sentences | greedy UAS | beam UAS | trees changed | mean score greedy | mean score beam "
        "| wrong beam parses | gold scores higher (search error) | gold scores lower (model error) |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for path in args.models:
        path = path / "best.pt" if path.is_dir() else path
        parser = Parser.load(path, "cpu")
        model, system = parser.model, parser.model.system
        temperature = (
            parser.settings.override(scores=args.scores).for_model(parser.config, parser.calibration).beam_temperature
        )
        oracle = make_oracle(system, STATIC[system.name])
        sents = split_sentences(parser.config.data, args.split)
        examples = [encode(s, model.vocabs) for s in sents]
        counts = np.zeros(8)
        scores_greedy, scores_beam = [], []
        for batch_examples in bucket_batches(examples, 512):
            batch = collate(batch_examples)
            lengths = [len(e) for e in batch_examples]
            with torch.no_grad():
                vectors = model.encoder(batch)
                table = model.scorer.table(vectors)
                completion = completion_for(model, vectors, lengths)
            layout = model.layout(batch.width)
            greedy = beam_search(layout, model.scorer, table, lengths, 1, completion, temperature)
            beam = beam_search(layout, model.scorer, table, lengths, args.beam, completion, temperature)
            golds = [oracle.prepare(e.sent.heads) for e in batch_examples]
            seqs = [oracle.sequence(g) if g is not None else None for g in golds]
            forced = forced_scores(model, layout, table, lengths, seqs, completion, temperature)
            for e, g, b, f in zip(batch_examples, greedy, beam, forced):
                gold = e.sent.heads
                hg, hb = single_rooted(g.heads[0]), single_rooted(b.heads[0])
                n = len(e)
                counts[0] += n
                counts[1] += sum(hg[d] == gold[d] for d in range(1, n + 1))
                counts[2] += sum(hb[d] == gold[d] for d in range(1, n + 1))
                counts[3] += hg != hb
                scores_greedy.append(g.scores[0])
                scores_beam.append(b.scores[0])
                if hb != list(gold) and f is not None:
                    counts[4] += 1
                    counts[5] += f > b.scores[0] + 1e-6
                    counts[6] += f < b.scores[0] - 1e-6
        total = len(sents)
        print(
            f"| {parser.config.exp_name} ({parser.config.data.name}) | {total} | {100 * counts[1] / counts[0]:.2f} | {100 * counts[2] / counts[0]:.2f} "
            f"| {100 * counts[3] / total:.1f}% | {np.mean(scores_greedy):.2f} | {np.mean(scores_beam):.2f} "
            f"| {int(counts[4])} | {int(counts[5])} | {int(counts[6])} |"
        )


def forced_scores(
    model,
    layout: Layout,
    table: torch.Tensor,
    lengths: list[int],
    seqs: list,
    completion=None,
    temperature: float | None = None,
) -> list[float | None]:
    """Derivation score of every given transition sequence (None where there is none), in one
    batched pass per step: every sentence follows its own sequence (with a completion model,
    plus the factors each transition completes)."""
    live = [i for i, s in enumerate(seqs) if s is not None]
    states = layout.initial(np.array([lengths[i] for i in live]))
    sent = np.array(live, dtype=np.int64)
    totals = np.zeros(len(live))
    longest = max((len(seqs[i]) for i in live), default=0)
    for t in range(longest):
        rows, legal, _ = layout.inspect(states, sent * layout.width, table.shape[0] - 1)
        going = np.array([t < len(seqs[i]) for i in live])
        scores = score_rows(model.scorer, table, rows, ~going)
        if temperature is not None:  # as the beam sums them
            scores = local_scores(scores, legal, temperature)
        actions = np.array([seqs[i][t] if t < len(seqs[i]) else -1 for i in live])
        totals[going] += scores[going, actions[going]]
        if completion is not None:
            forced = np.zeros(scores.shape, dtype=bool)
            forced[np.flatnonzero(going), actions[going]] = True
            delta, _ = completion.candidates(layout, states, sent, forced, ~going)
            totals[going] += delta[going, actions[going]]
        layout.apply(states, actions)
    out: list[float | None] = [None] * len(seqs)
    for k, i in enumerate(live):
        out[i] = float(totals[k])
    return out


if __name__ == "__main__":
    main()
