"""The error analysis: every grouping adds up to the scorer's figures, per-label precision and
recall, the worst sentences, and the report the evaluate CLI writes (self-contained)."""

from __future__ import annotations

import re

import pytest

from nparse import evaluate as evaluate_cli
from nparse.eval.analysis import GROUPINGS, group_scores, label_scores, words_of, worst_sentences
from nparse.eval.scores import score
from nparse.io.conllu import read_conllu

from .conftest import EWT_DEV

pytestmark = pytest.mark.slow  # it trains or runs a command (pytest -m 'not slow' leaves it out)


def dev(n: int = 300):
    return read_conllu(EWT_DEV)[:n]


def test_every_grouping_adds_up_to_the_scorer(tmp_path):
    gold = dev(400)
    pred = read_conllu(EWT_DEV)[:400]
    for k, s in enumerate(pred):  # a deterministic pattern of errors
        for i in range(1, len(s) + 1):
            if (k + i) % 7 == 0:
                s.heads[i] = 0 if s.heads[i] else 1
            elif (k + i) % 5 == 0:
                s.deprels[i] = "dep"
    scores = score(gold, [p.heads for p in pred], [p.deprels for p in pred])
    words = words_of(gold, pred)
    for by in GROUPINGS:
        groups = group_scores(words, by)
        assert sum(g.words for g in groups) == scores.words, by
        assert abs(sum(g.las * g.words for g in groups) / scores.words - scores.las) < 1e-9, by
        assert abs(sum(g.uas * g.words for g in groups) / scores.words - scores.uas) < 1e-9, by
    by_label = {s.label: s for s in label_scores(words)}
    assert by_label["dep"].predicted > by_label["dep"].gold  # the corruption's label
    worst = worst_sentences(words, 10)
    assert len(worst) == 10 and worst == sorted(worst, key=lambda w: -w[1])


def test_evaluate_writes_a_report_and_refuses_what_it_cannot_do(tmp_path, capsys):
    gold = EWT_DEV
    report = tmp_path / "r.html"
    assert evaluate_cli.main([f"gold={gold}", f"pred={gold}", f"report={report}"]) == 0
    page = report.read_text(encoding="utf-8")
    assert "UPOS 100.00  UAS 100.00  LAS 100.00" in page  # the scores as nparse-eval prints them
    assert re.search(r'<span id="shown">0</span>', page)
    assert "<link" not in page and "src=" not in page  # self-contained: nothing fetched
    assert evaluate_cli.main([f"gold={gold}", f"pred={gold}", f"pred2={gold}"]) == 1
    assert "pred2= compares two systems in a report" in capsys.readouterr().err


def test_a_comparison_shows_both_systems_labels_and_ranks_by_both(tmp_path, capsys):
    """With pred2=, the label table and confusion matrix come once per system, headed with its
    name, and the worst sentences are ranked by both systems' errors: a perfect first system does
    not empty the list. An empty comparison builds a page; nparse-eval refuses the empty files."""
    from nparse.eval.report import build_report
    from nparse.io.conllu import write_conllu

    gold = dev(60)
    wrong = dev(60)
    for s in wrong[:5]:
        s.deprels[1] = "dep" if s.deprels[1] != "dep" else "nsubj"
    page = build_report(gold, {"A": dev(60), "B": wrong}, {"gold": "g", "A": "a", "B": "b"}, samples=200)
    for section in ("label-scores", "label-scores-2", "confusion", "confusion-2"):
        assert f'id="{section}"' in page, section
    assert "<h2>Labels of A: recall" in page and "<h2>Label confusion of B (words" in page
    assert "The 5 sentences with the most errors (A and B together)" in page
    assert page.count('<figure class="worst"') == 5 and "0 and 1 of" in page
    empty = tmp_path / "empty.conllu"
    write_conllu([], empty)
    assert "0 sentences, 0 words" in build_report([], {"A": [], "B": []}, {"gold": "g", "A": "a", "B": "b"})
    report = tmp_path / "r.html"  # nparse-eval refuses files without a sentence, as it does without report=
    assert evaluate_cli.main([f"gold={empty}", f"pred={empty}", f"pred2={empty}", f"report={report}"]) == 1
    assert f"{empty}:1: no words to score" in capsys.readouterr().err and not report.exists()


def merged_pairs(sents, corrupt_every: int = 0) -> str:
    """CoNLL-U of ``sents`` joined two by two into one sentence (the same words, other sentence
    boundaries: a parse with its own segmentation); with ``corrupt_every``, every n-th word's head
    moved to the sentence's first word."""
    out = []
    for k in range(0, len(sents), 2):
        lines, shift, n = [f"# sent_id = merged-{k}"], 0, 0
        for sent in sents[k : k + 2]:
            for line in sent.lines:
                cols = line.split("\t")
                if line.startswith("#") or len(cols) != 10 or "." in cols[0]:
                    continue
                if "-" in cols[0]:
                    lo, hi = (int(x) + shift for x in cols[0].split("-"))
                    cols[0] = f"{lo}-{hi}"
                else:
                    n += 1
                    cols[0] = str(int(cols[0]) + shift)
                    head = int(cols[6])
                    cols[6] = str(head + shift if head else 0)
                    if corrupt_every and n % corrupt_every == 0 and cols[0] != "1":
                        cols[6] = "1"
                lines.append("\t".join(cols))
            shift += len(sent)
        out.append("\n".join(lines) + "\n\n")
    return "".join(out)


def test_a_parse_with_its_own_segmentation_gets_the_report_over_aligned_words(tmp_path, capsys):
    """A raw-text parse (its own sentences here): the report aligns its words to the gold words,
    every grouping adds up to the aligned UAS and LAS, and the tokenization and segmentation
    scores head it; by= and pred2= still need the gold tokenization."""
    from nparse.eval.aligned import aligned_scores, alignment
    from nparse.eval.analysis import aligned_words_of

    gold_sents = dev(60)
    gold, pred = tmp_path / "gold.conllu", tmp_path / "pred.conllu"
    gold.write_text("".join("\n".join(s.lines) + "\n\n" for s in gold_sents), encoding="utf-8")
    pred.write_text(merged_pairs(gold_sents, corrupt_every=6), encoding="utf-8")
    pred_sents = read_conllu(pred)
    scores = aligned_scores(gold_sents, pred_sents)
    assert scores["words"].f1 == 100.0 and scores["sentences"].f1 < 100 and 50 < scores["uas"].f1 < 100
    words = aligned_words_of(gold_sents, pred_sents, alignment(gold_sents, pred_sents))
    assert len(words) == scores["uas"].gold
    for by in GROUPINGS:
        groups = group_scores(words, by)
        assert sum(g.words for g in groups) == len(words), by
        assert abs(sum(g.uas * g.words for g in groups) / len(words) - scores["uas"].recall) < 1e-9, by
        assert abs(sum(g.las * g.words for g in groups) / len(words) - scores["las"].recall) < 1e-9, by
    report = tmp_path / "r.html"
    assert evaluate_cli.main([f"gold={gold}", f"pred={pred}", f"report={report}"]) == 0
    page = report.read_text(encoding="utf-8")
    assert "Words aligned by character offsets" in page and "<td>Sentences</td>" in page
    assert "Each gold tree, then the parsed sentences that hold its words" in page
    assert page.count('<figure class="worst"') == len(worst_sentences(words, 60)) > 0
    assert evaluate_cli.main([f"gold={gold}", f"pred={pred}", f"report={report}", f"pred2={pred}"]) == 2
    assert "pred2= needs the gold tokenization" in capsys.readouterr().err


def test_the_report_shows_tagging_and_lemma_errors_beside_the_attachment_errors(tmp_path):
    """A prediction with some UPOS and lemmas changed: the report's analysis section gives each
    column's accuracy and its commonest confusions, with an example form."""
    from nparse.io.conllu import write_conllu

    pred = dev(100)
    changed = 0
    for s in pred:
        s.tagged = s.analysed = True
        for i in range(1, len(s) + 1):
            if s.upos[i] == "ADJ":
                s.upos[i] = "NOUN"
                changed += 1
            if s.forms[i] == "was":
                s.lemmas[i] = "was"
    path = tmp_path / "pred.conllu"
    write_conllu(pred, path, [s.heads for s in pred], [s.deprels for s in pred])
    cut = tmp_path / "gold.conllu"
    write_conllu(dev(100), cut)
    report = tmp_path / "r.html"
    assert evaluate_cli.main([f"gold={cut}", f"pred={path}", f"report={report}"]) == 0
    page = report.read_text(encoding="utf-8")
    section = page[page.index('<section id="analysis">') :]
    words = sum(len(s) for s in pred)
    assert f"UPOS: {100 * (words - changed) / words:.2f}% of {words} gold words right" in section
    assert f"<tr><td>ADJ</td><td>NOUN</td><td>{changed}</td>" in section
    assert "<tr><td>be</td><td>was</td>" in section and "Lemmas" in section
    assert "CoNLL 2018 (F1): UPOS" in page
