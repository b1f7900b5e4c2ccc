"""nparse.eval.significance: the paired bootstrap finds a real difference and not a null one; label
accuracy on shared heads counts only the words both files attach right."""

from __future__ import annotations

import io

import numpy as np
import pytest

from nparse.eval import significance
from nparse.io.conllu import read_conllu, write_conllu

from .conftest import EWT_DEV

SENTENCE = """\
1\tWe\twe\tPRON\t_\t_\t2\tnsubj\t_\t_
2\tparse\tparse\tVERB\t_\t_\t0\troot\t_\t_
3\tlong\tlong\tADJ\t_\t_\t4\tamod\t_\t_
4\tsentences\tsentence\tNOUN\t_\t_\t2\tobj\t_\t_
5\t.\t.\tPUNCT\t_\t_\t2\tpunct\t_\t_

"""


def test_paired_bootstrap_separates_a_real_gain_from_noise():
    rng = np.random.default_rng(0)
    words = rng.integers(5, 30, size=2000)
    a = rng.binomial(words, 0.80)
    better = np.minimum(words, a + rng.binomial(words, 0.05))  # B fixes about 5% more words
    _, _, delta, p = significance.paired_bootstrap(a, better, words, 2000, seed=1)
    assert delta > 3 and p < 0.01
    noise = np.minimum(words, np.where(rng.random(len(a)) < 0.5, a + 1, np.maximum(a - 1, 0)))
    _, _, delta, p = significance.paired_bootstrap(a, noise, words, 2000, seed=1)
    assert abs(delta) < 0.5 and p > 0.05
    _, _, delta, p = significance.paired_bootstrap(a, a.copy(), words, 2000, seed=1)
    assert delta == 0 and p == 1.0  # the same system: no gain (not p = 0, which no sample exceeds)


def test_label_accuracy_counts_only_words_both_attach_right(tmp_path):
    """Word 1, mislabelled by A and misattached by B, does not count; word 3, mislabelled by A
    only, is what separates their label accuracies."""
    gold = read_conllu(io.StringIO(SENTENCE))
    n = len(gold[0])
    heads, labels = list(gold[0].heads), list(gold[0].deprels)
    a_labels = list(labels)
    a_labels[1] = a_labels[3] = "dep"  # word 1 is also misattached in B, word 3 is A's own error
    b_heads = list(heads)
    b_heads[1] = 3 if heads[1] != 3 else 2
    write_conllu(gold, tmp_path / "a.conllu", [heads], [a_labels])
    write_conllu(gold, tmp_path / "b.conllu", [b_heads], [labels])
    words, acc_a, acc_b = significance.label_accuracy_on_shared_heads(
        gold, [tmp_path / "a.conllu"], [tmp_path / "b.conllu"]
    )
    assert words == n - 1
    assert acc_b == 100.0 and abs(acc_a - 100.0 * (n - 2) / (n - 1)) < 1e-9
    with pytest.raises(ValueError, match="pair them"):
        significance.label_accuracy_on_shared_heads(gold, [tmp_path / "a.conllu"], [])


def test_compare_files_refuses_predictions_of_other_words(tmp_path):
    """A prediction with a word changed or missing is refused at its line, naming its file,
    instead of being scored silently (or failing with an IndexError)."""
    from nparse.io.conllu import CoNLLUError

    gold = read_conllu(io.StringIO(SENTENCE))
    write_conllu(gold, tmp_path / "a.conllu")
    other = tmp_path / "other.conllu"
    other.write_text((tmp_path / "a.conllu").read_text().replace(f"\t{gold[0].forms[2]}\t", "\tXYZ\t", 1))
    with pytest.raises(CoNLLUError, match=f"{other}:.*words differ from the gold sentence"):
        significance.compare_files(gold, [tmp_path / "a.conllu"], [other], samples=100)
    short = tmp_path / "short.conllu"
    lines = (tmp_path / "a.conllu").read_text().rstrip("\n").split("\n")
    short.write_text("\n".join(lines[:-1]) + "\n\n")
    with pytest.raises(CoNLLUError, match=f"{short}:.*words differ"):
        significance.compare_files(gold, [short], [tmp_path / "a.conllu"], samples=100)


def test_conll18_metrics_are_counted_per_sentence_as_the_scorer_counts_them():
    """Per-sentence counts of a CoNLL 2018 metric add up to what ``aligned_scores`` counts on the
    whole file (MLAS over the gold content words, Lemmas over every word)."""
    from nparse.eval.aligned import aligned_scores
    from nparse.eval.significance import correct_per_sentence, totals_per_sentence

    gold = read_conllu(EWT_DEV)[:80]
    pred = read_conllu(EWT_DEV)[:80]
    for k, s in enumerate(pred):
        for i in range(1, len(s) + 1):
            if (k + i) % 4 == 0:
                s.lemmas[i] = s.forms[i]
                s.upos[i] = "X"
    whole = aligned_scores(gold, pred)
    for metric in ("lemmas", "mlas", "upos"):
        assert correct_per_sentence(gold, pred, metric).sum() == whole[metric].correct
        assert totals_per_sentence(gold, metric).sum() == whole[metric].gold
    assert whole["mlas"].correct < whole["mlas"].gold


def test_content_word_metrics_are_the_scorers_f1(tmp_path):
    """CLAS, MLAS and BLEX are F1 over content words (by their relation); where a parse labels
    other words as content words, precision and recall differ, and the test's scores must be the
    F1 the scorer reports, not the recall."""
    from nparse.eval.aligned import aligned_scores

    gold = read_conllu(EWT_DEV)[:60]
    pred = read_conllu(EWT_DEV)[:60]
    for k, s in enumerate(pred):
        for i in range(1, len(s) + 1):
            if (k + i) % 5 == 0:
                s.deprels[i] = "obl" if s.deprels[i] in ("det", "case", "punct", "aux") else "punct"
    write_conllu(pred, tmp_path / "b.conllu", (s.heads for s in pred), (s.deprels for s in pred))
    write_conllu(gold, tmp_path / "a.conllu")
    whole = aligned_scores(gold, pred)
    for metric in ("clas", "mlas", "blex"):
        assert whole[metric].precision != whole[metric].recall
        a, b, delta, _ = significance.compare_files(gold, [tmp_path / "a.conllu"], [tmp_path / "b.conllu"], metric, 200)
        assert a == pytest.approx(100.0) and b == pytest.approx(whole[metric].f1) and delta < 0
