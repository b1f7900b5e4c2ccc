"""UAS and LAS as the CoNLL 2018 shared-task scorer counts them, for gold tokenization.

Every syntactic word counts, punctuation included; multiword-token lines and empty nodes do
not. LAS compares DEPREL on its universal part (before ':'). The punctuation-excluded variant
leaves out words whose gold UPOS is PUNCT.

    python -m nparse.evaluate gold=GOLD.conllu pred=PRED.conllu [by=quarter|length] [json=true]
                              [aligned=auto|true|false] [report=REPORT.html [pred2=PRED2.conllu]]

When the prediction has its own tokenization (a raw-text parse), words are aligned by character
offsets as the CoNLL 2018 scorer does, and tokens, sentences, words, UPOS, UAS and LAS are
reported as precision, recall and F1 (``aligned=auto``, the default, decides by comparing the
words; see nparse/eval/aligned.py).

When every predicted sentence has a UPOS column (not '_'), UPOS accuracy is reported too: it
scores that column, whatever wrote it (a tagger model's tags; a parser without a tagger keeps its
input's tags, so a parse of a gold-tagged file scores 100.00).

Both ways, the CoNLL 2018 metrics follow: UPOS, XPOS, UFeats, AllTags, Lemmas, UAS, LAS, CLAS,
MLAS and BLEX (F1; on the gold tokenization precision, recall and F1 are one number), as the
official scorer counts them. A column the model does not predict keeps the input's values: a
parse of a gold-annotated file scores them 100.00, of an unannotated one ('_') near 0.

``by=quarter`` adds UAS/LAS by position quarter of the dependent (word i of n is in quarter
ceil(4i/n): Table 2 of Aufrant et al. 2017); ``by=length`` by sentence length (1-10, 11-20,
21-30, 31-40, 41+ words).

``report=REPORT.html`` also writes an error-analysis report: one self-contained HTML file with
accuracy by sentence length, dependency distance, gold label, UPOS and projectivity (tables and
charts), the label confusion matrix and the sentences with the most errors drawn gold over
predicted (nparse/eval/report.py). ``pred2=`` adds a second system to compare with, with the
paired bootstrap. A report of a parse with its own tokenization (raw text) aligns its words
to the gold words and adds the tokenization and segmentation scores; ``by=`` and ``pred2=`` need
the gold tokenization.
"""

from __future__ import annotations

import json
import sys

from .cli import parse_args, reader_may_stop
from .eval.aligned import LABELS, METRICS, aligned_scores
from .eval.scores import (
    Scores, breakdown, group_of, predicted_tags, read_pair, same_tokenization, score, score_files
)  # fmt: skip
from .io.conllu import CoNLLUError, read_conllu

__all__ = ["Scores", "breakdown", "group_of", "main", "score", "score_files"]

# The metrics that say something when the words are the gold ones (tokens, sentences and words are 100).
CONLL18_GOLD_TOKENS = tuple(m for m in METRICS if m not in ("tokens", "sentences", "words"))


def aligned_main(gold_path: str, pred_path: str, as_json: bool, forced: bool = False) -> int:
    """Scores of a prediction with its own tokenization (see nparse/eval/aligned.py); ``forced``:
    asked for with aligned=true, so the tokenizations may well be the same."""
    try:
        pred = read_conllu(pred_path, allow_missing_heads=True)
        scores = aligned_scores(read_conllu(gold_path), pred)
    except (CoNLLUError, OSError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    note_unparsed([s.heads for s in pred])
    if as_json:
        print(json.dumps({k: {"precision": v.precision, "recall": v.recall, "f1": v.f1} for k, v in scores.items()}))
        return 0
    why = "aligned=true" if forced else "tokenizations differ"
    print(f"{why}: words aligned by character offsets (CoNLL 2018 scorer)")
    print("| metric | precision | recall | F1 |\n|---|---|---|---|")
    for name in METRICS:
        v = scores[name]
        print(f"| {LABELS[name]} "
              f"| {v.precision:.2f} | {v.recall:.2f} | {v.f1:.2f} |")  # fmt: skip
    return 0


def note_unparsed(heads: list[list[int]]) -> None:
    """Say on stderr how many predicted words have HEAD '_' (-1): they are scored as wrong."""
    unparsed = sum(h == -1 for hs in heads for h in hs[1:])
    if unparsed:
        words = "word has" if unparsed == 1 else "words have"
        print(f"note: {unparsed} predicted {words} HEAD '_' (no parse): counted as wrong", file=sys.stderr)


@reader_may_stop
def main(argv: list[str] | None = None) -> int:
    args = parse_args(
        argv, required=("gold", "pred"),
        optional={"json": "false", "by": None, "aligned": "auto", "report": None, "pred2": None}, usage=__doc__,
    )  # fmt: skip
    as_json = str(args["json"]).lower() in ("1", "true", "yes")
    gold_path, pred_path = str(args["gold"]), str(args["pred"])  # required: parse_args checked them
    if args["aligned"] not in ("auto", "true", "false"):
        print(f"error: aligned={args['aligned']}: choose auto, true or false", file=sys.stderr)
        return 2
    if args["aligned"] != "false":
        try:
            differ = args["aligned"] == "true" or not same_tokenization(
                read_conllu(gold_path), read_conllu(pred_path, allow_missing_heads=True)
            )
        except (CoNLLUError, OSError, ValueError) as err:
            print(f"error: {err}", file=sys.stderr)
            return 1
        if differ:
            for key in ("by", "pred2"):
                if args[key]:
                    print(f"error: {key}= needs the gold tokenization (a parse of the gold words)", file=sys.stderr)
                    return 2
            if args["report"]:
                try:
                    write_report_of(gold_path, pred_path, None, str(args["report"]), aligned=True)
                except (CoNLLUError, OSError, ValueError) as err:
                    print(f"error: {err}", file=sys.stderr)
                    return 1
            return aligned_main(gold_path, pred_path, as_json, forced=args["aligned"] == "true")
    try:
        gold, pred = read_pair(gold_path, pred_path)
        heads, labels = [p.heads for p in pred], [p.deprels for p in pred]
        result = score(gold, heads, labels, predicted_tags(pred))  # UPOS accuracy where every sentence has tags
        conll18 = aligned_scores(gold, pred)
        groups = breakdown(gold, heads, labels, args["by"]) if args["by"] else []
        if args["report"]:
            write_report_of(gold_path, pred_path, args["pred2"], str(args["report"]))
        elif args["pred2"]:
            raise ValueError("pred2= compares two systems in a report: add report=REPORT.html")
    except (CoNLLUError, OSError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    note_unparsed(heads)
    if as_json:
        out = result.as_dict()
        if groups:
            out[f"by_{args['by']}"] = [{"group": g, "words": w, "uas": u, "las": la} for g, w, u, la in groups]
        out["conll18"] = {name: conll18[name].f1 for name in CONLL18_GOLD_TOKENS}
        print(json.dumps(out))
        return 0
    print(result.summary())
    print("\nCoNLL 2018 metrics (F1): " + "  ".join(f"{LABELS[n]} {conll18[n].f1:.2f}" for n in CONLL18_GOLD_TOKENS))
    if groups:
        print(f"\n| {args['by']} | words | UAS | LAS |\n|---|---|---|---|")
        for g, w, u, la in groups:
            print(f"| {g} | {w} | {u:.2f} | {la:.2f} |")
    return 0


def write_report_of(gold_path: str, pred_path: str, pred2_path: str | None, out: str, aligned: bool = False) -> None:
    """The error-analysis report of one prediction, or of two compared (same gold words); with
    ``aligned``, of one prediction with its own tokenization."""
    from .eval.report import write_report

    if aligned:
        write_report(out, read_conllu(gold_path), {"A": read_conllu(pred_path, allow_missing_heads=True)},
                     {"gold": gold_path, "A": pred_path}, aligned=True)  # fmt: skip
        print(f"report written to {out}", file=sys.stderr)
        return
    gold, pred = read_pair(gold_path, pred_path)
    systems, sources = {"A": pred}, {"gold": gold_path, "A": pred_path}
    if pred2_path:
        systems["B"] = read_pair(gold_path, pred2_path)[1]
        sources["B"] = pred2_path
    write_report(out, gold, systems, sources)
    print(f"report written to {out}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
