"""Our UAS/LAS against the official CoNLL 2018 scorer (udtools, GPL: used in tests only)."""

from __future__ import annotations

import random

import pytest

from nparse.io.conllu import read_conllu, write_conllu
from nparse.evaluate import main, score_files

from .conftest import treebank_files

pytestmark = pytest.mark.slow  # it trains or runs a command (pytest -m 'not slow' leaves it out)

udeval = pytest.importorskip("udtools.udeval")


def non_descendants(heads: list[int], word: int) -> list[int]:
    """Words that can become the head of ``word`` with the result still a single-rooted tree."""
    out = []
    for cand in range(1, len(heads)):
        k = cand
        while k not in (0, word):
            k = heads[k]
        if k == 0:
            out.append(cand)
    return out


def noisy_copy(gold_path, out_path, seed: int) -> None:
    """Gold file with a third of heads and labels changed, still valid trees (as the scorer requires)."""
    rng = random.Random(seed)
    sents = read_conllu(gold_path)
    heads, labels = [], []
    for s in sents:
        h, d = list(s.heads), list(s.deprels)
        for i in range(1, len(s) + 1):
            r = rng.random()
            if r < 0.15 and h[i] != 0:
                h[i] = rng.choice(non_descendants(h, i))
            elif r < 0.25:
                d[i] = rng.choice(["nsubj", "obj", "punct", "nmod"])
            elif r < 0.35 and ":" not in d[i]:
                d[i] = d[i] + ":sub"  # same universal relation: still correct for LAS
        heads.append(h)
        labels.append(d)
    write_conllu(sents, out_path, heads, labels)


@pytest.mark.parametrize("path", treebank_files("dev"), ids=lambda p: p.parent.name)
def test_scores_match_official_scorer(path, tmp_path):
    pred = tmp_path / "pred.conllu"
    noisy_copy(path, pred, seed=3)
    ours = score_files(str(path), str(pred))
    official = udeval.evaluate(udeval.load_conllu_file(str(path)), udeval.load_conllu_file(str(pred)))
    assert ours.uas == pytest.approx(100 * official["UAS"].f1, abs=1e-9)
    assert ours.las == pytest.approx(100 * official["LAS"].f1, abs=1e-9)
    assert ours.words == official["Words"].gold_total
    assert 0 < ours.las < ours.uas < 100
    assert ours.words_nopunct < ours.words


def test_cli_prints_both_variants(tmp_path, capsys):
    path = treebank_files("dev")[0]
    assert main([f"gold={path}", f"pred={path}"]) == 0
    out = capsys.readouterr().out
    assert "UAS 100.00  LAS 100.00" in out and "without punctuation: UAS 100.00" in out


def test_cli_notes_predicted_words_without_a_head(tmp_path, capsys):
    """A prediction with HEAD '_' (a sentence the parser could not parse) is scored with those
    words wrong, and the count says so, also beside JSON (on standard error)."""
    gold = tmp_path / "g.conllu"
    pred = tmp_path / "p.conllu"
    gold.write_text("1\ta\ta\tX\t_\t_\t0\troot\t_\t_\n2\tb\tb\tX\t_\t_\t1\tdep\t_\t_\n\n")
    pred.write_text("1\ta\ta\tX\t_\t_\t0\troot\t_\t_\n2\tb\tb\tX\t_\t_\t_\t_\t_\t_\n\n")
    for extra in ([], ["json=true"], ["aligned=true"]):
        assert main([f"gold={gold}", f"pred={pred}", *extra]) == 0
        out, err = capsys.readouterr()
        assert "UAS 50.00" in out or '"uas": 50.0' in out or "| UAS | 50.00 | 50.00 | 50.00 |" in out
        assert "note: 1 predicted word has HEAD '_' (no parse): counted as wrong" in err
    assert main([f"gold={gold}", f"pred={gold}"]) == 0
    assert "note:" not in capsys.readouterr().err
    # A word without a head is wrong where the gold head is the root too (aligned scoring took
    # HEAD '_' for the root).
    pred.write_text("1\ta\ta\tX\t_\t_\t_\t_\t_\t_\n2\tb\tb\tX\t_\t_\t_\t_\t_\t_\n\n")
    for extra in ([], ["aligned=true"]):
        assert main([f"gold={gold}", f"pred={pred}", *extra]) == 0
        out = capsys.readouterr().out
        assert "UAS 0.00" in out or "| UAS | 0.00 | 0.00 | 0.00 |" in out, out


def test_cli_reports_mismatched_words(tmp_path, capsys):
    gold = tmp_path / "g.conllu"
    pred = tmp_path / "p.conllu"
    gold.write_text("1\ta\ta\tX\t_\t_\t0\troot\t_\t_\n\n")
    pred.write_text("1\tb\tb\tX\t_\t_\t0\troot\t_\t_\n\n")
    assert main([f"gold={gold}", f"pred={pred}"]) == 1
    assert f"{pred}:1:" in capsys.readouterr().err


def test_cli_points_at_the_sentence_without_a_partner(tmp_path, capsys):
    """An extra predicted sentence is reported at its own line, aligned or not; a missing one
    names the gold sentence left without a partner."""
    one = "1\ta\ta\tX\t_\t_\t0\troot\t_\t_\n\n"
    two = one + "1\tb\tb\tX\t_\t_\t0\troot\t_\t_\n\n"
    gold, pred = tmp_path / "g.conllu", tmp_path / "p.conllu"
    gold.write_text(one)
    pred.write_text(two)
    assert main([f"gold={gold}", f"pred={pred}", "aligned=false"]) == 1
    assert f"{pred}:3: 2 sentences, but the gold file has 1: this one is past its end" in capsys.readouterr().err
    assert main([f"gold={gold}", f"pred={pred}", "aligned=true"]) == 1
    assert f"{pred}:3: the gold file ends before this predicted text" in capsys.readouterr().err
    assert main([f"gold={pred}", f"pred={gold}", "aligned=false"]) == 1
    assert f"{gold}:1: 1 sentences, but the gold file has 2: none for {pred}:3" in capsys.readouterr().err


def test_breakdown_by_quarter_and_length(tmp_path, capsys):
    from nparse.eval.scores import breakdown, group_of

    assert [group_of("quarter", i, 8) for i in range(1, 9)] == [f"quarter {q}" for q in (1, 1, 2, 2, 3, 3, 4, 4)]
    assert [group_of("length", 1, n) for n in (1, 10, 11, 40, 41)] == ["1-10", "1-10", "11-20", "31-40", "41+"]
    gold = read_conllu(treebank_files("dev")[0])[:200]
    noisy = tmp_path / "noisy.conllu"
    noisy_copy(treebank_files("dev")[0], noisy, 3)
    pred = read_conllu(noisy)[:200]
    rows = breakdown(gold, [p.heads for p in pred], [p.deprels for p in pred], "quarter")
    assert [r[0] for r in rows] == [f"quarter {q}" for q in range(1, 5)]
    assert sum(r[1] for r in rows) == sum(len(s) for s in gold)
    # the groups' words and correct heads add up to the overall scores
    from nparse.eval.scores import score

    overall = score(gold, [p.heads for p in pred], [p.deprels for p in pred])
    assert sum(r[1] * r[2] for r in rows) / overall.words == pytest.approx(overall.uas)
    full = tmp_path / "gold.conllu"
    write_conllu(read_conllu(treebank_files("dev")[0]), full)
    assert main([f"gold={full}", f"pred={noisy}", "by=length"]) == 0
    out = capsys.readouterr().out
    assert "| length | words | UAS | LAS |" in out and "| 1-10 |" in out


def raw_retokenized(gold_path, out_path, lang: str, sentences: int, seed: int) -> None:
    """The gold text re-tokenized by our raw-text reader (5 sentences per paragraph, so sentence
    splits and tokens differ from gold), with random trees, labels and tags."""
    import io
    from dataclasses import replace

    from nparse.io.rawtext import iter_raw

    gold = read_conllu(gold_path)[:sentences]
    texts = [next(line[9:] for line in s.lines if line.startswith("# text = ")) for s in gold]
    raw = "\n\n".join(" ".join(texts[i : i + 5]) for i in range(0, len(texts), 5)) + "\n"
    rng = random.Random(seed)
    tags = sorted({t for s in gold for t in s.upos[1:]})
    labels = sorted({d for s in gold for d in s.deprels[1:]} - {"root"})
    xtags = sorted({t for s in gold for t in s.xpos[1:]})
    morph = sorted({f for s in gold for f in s.feats[1:]})
    out = []
    for s in iter_raw(io.StringIO(raw).readlines(), lang, "pred"):
        n = len(s)
        heads = [-1, 0] + [rng.randrange(1, i) for i in range(2, n + 1)]
        order = list(range(1, n + 1))
        rng.shuffle(order)  # the root and the heads among shuffled positions
        perm = [0] + order
        tree = [-1] * (n + 1)
        for i in range(1, n + 1):
            tree[perm[i]] = perm[heads[i]] if heads[i] > 0 else 0
        deps = ["_"] + ["root" if tree[i] == 0 else rng.choice(labels) for i in range(1, n + 1)]
        upos = ["<root>"] + [rng.choice(tags) for _ in range(n)]
        # the analysis columns right for most words (a random one otherwise), so that every metric counts
        xpos = ["<root>"] + [rng.choice(xtags) for _ in range(n)]
        feats = ["_"] + [rng.choice(morph) if rng.random() < 0.5 else "_" for _ in range(n)]
        lemmas = ["<root>"] + [f.lower() if rng.random() < 0.8 else f for f in s.forms[1:]]
        out.append(replace(s, heads=tree, deprels=deps, upos=upos, tagged=True, xpos=xpos, feats=feats, lemmas=lemmas,
                           analysed=True))  # fmt: skip
    write_conllu(out, out_path, [s.heads for s in out], [s.deprels for s in out])


def test_aligned_scores_equal_the_official_scorer_on_differing_tokenizations(tmp_path):
    pytest.importorskip("spacy")
    from nparse.eval.aligned import LABELS, aligned_scores

    cases = [(f, f.name[:2]) for f in treebank_files("test")]
    assert cases
    for k, (gold_path, lang) in enumerate(cases):
        gold = tmp_path / f"gold{k}.conllu"
        gold.write_text("".join(chunk + "\n\n" for chunk in gold_path.read_text(encoding="utf-8").split("\n\n")[:400]
                                if chunk.strip()), encoding="utf-8")  # fmt: skip
        pred = tmp_path / f"pred{k}.conllu"
        raw_retokenized(gold, pred, lang, 400, seed=k)
        ours = aligned_scores(read_conllu(gold), read_conllu(pred))
        official = udeval.evaluate(udeval.load_conllu_file(str(gold)), udeval.load_conllu_file(str(pred)))
        for name, key in LABELS.items():  # every CoNLL 2018 metric but the enhanced ones
            assert round(ours[name].f1, 2) == round(100 * official[key].f1, 2), (gold_path.name, name)
            assert round(ours[name].precision, 2) == round(100 * official[key].precision, 2), (gold_path.name, name)
        assert ours["tokens"].f1 < 100.0 or ours["sentences"].f1 < 100.0  # the tokenizations do differ
        assert ours["uas"].f1 > 0.0
        assert all(0.0 < ours[name].f1 < 100.0 for name in ("xpos", "ufeats", "lemmas", "clas", "blex")), {
            n: ours[n].f1 for n in ours
        }
    # The CLI switches to aligned scores by itself.
    assert main([f"gold={gold}", f"pred={pred}", "json=true"]) == 0


def test_cli_upos_empty_files_and_forced_alignment(tmp_path, capsys):
    """UPOS accuracy is printed when the prediction has tags; files without a sentence are refused
    (a 0.00 over no words read as a score); aligned=true on one tokenization does not claim the
    tokenizations differ."""
    gold = tmp_path / "g.conllu"
    pred = tmp_path / "p.conllu"
    gold.write_text("1\ta\ta\tNOUN\t_\t_\t0\troot\t_\t_\n2\tb\tb\tVERB\t_\t_\t1\tdep\t_\t_\n\n")
    pred.write_text("1\ta\ta\tNOUN\t_\t_\t0\troot\t_\t_\n2\tb\tb\tNOUN\t_\t_\t1\tdep\t_\t_\n\n")
    assert main([f"gold={gold}", f"pred={pred}"]) == 0
    assert "UPOS 50.00  UAS 100.00  LAS 100.00" in capsys.readouterr().out
    pred.write_text("1\ta\ta\t_\t_\t_\t0\troot\t_\t_\n2\tb\tb\t_\t_\t_\t1\tdep\t_\t_\n\n")
    assert main([f"gold={gold}", f"pred={pred}"]) == 0
    summary, conll18 = capsys.readouterr().out.split("CoNLL 2018")
    assert "UPOS" not in summary and "UPOS 0.00" in conll18  # the '_' column scored as the official scorer does
    assert main([f"gold={gold}", f"pred={gold}", "aligned=true"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("aligned=true: words aligned") and "tokenizations differ" not in out
    empty = tmp_path / "empty.conllu"
    empty.write_text("")
    assert main([f"gold={empty}", f"pred={empty}"]) == 1
    assert f"{empty}:1: no words to score" in capsys.readouterr().err


def test_cli_stopped_reader_is_not_a_traceback(tmp_path):
    """``nparse-eval ... | head -0``: the reader closes the pipe before the scores are printed."""
    import subprocess
    import sys

    path = treebank_files("dev")[0]
    proc = subprocess.run(f"'{sys.executable}' -m nparse.evaluate gold='{path}' pred='{path}' | head -0; "
                          "exit ${PIPESTATUS[0]}", shell=True, executable="/bin/bash", capture_output=True,
                          text=True, timeout=120)  # fmt: skip
    assert proc.returncode == 141 and "Traceback" not in proc.stderr, proc.stderr


def test_every_conll18_metric_equals_the_official_scorer_on_gold_tokens(tmp_path, capsys):
    """UPOS, XPOS, UFeats, AllTags, Lemmas, UAS, LAS, CLAS, MLAS and BLEX of a prediction with a
    tenth of every column changed (the labels among functional ones too, so that MLAS's
    functional children differ) equal the official scorer's, and the CLI prints them."""
    from nparse.eval.aligned import LABELS, aligned_scores

    gold = treebank_files("dev")[0]
    rng = random.Random(5)
    sents = read_conllu(gold)[:300]
    for s in sents:
        s.tagged = s.analysed = True
        for i in range(1, len(s) + 1):
            if rng.random() < 0.1:
                s.lemmas[i] += "x"
            if rng.random() < 0.1:
                s.feats[i] = "Case=Nom" if s.feats[i] != "Case=Nom" else "_"
            if rng.random() < 0.1:
                s.upos[i] = "NOUN"
            if rng.random() < 0.1:
                s.xpos[i] = "X"
            if rng.random() < 0.1 and s.deprels[i] != "root":
                s.deprels[i] = "case" if s.deprels[i] != "case" else "det"
            if rng.random() < 0.1 and s.heads[i] != 0:
                s.heads[i] = rng.choice(non_descendants(s.heads, i))
    cut = tmp_path / "gold.conllu"
    write_conllu(read_conllu(gold)[:300], cut)
    pred = tmp_path / "pred.conllu"
    write_conllu(sents, pred, [s.heads for s in sents], [s.deprels for s in sents])
    ours = aligned_scores(read_conllu(cut), read_conllu(pred))
    official = udeval.evaluate(udeval.load_conllu_file(str(cut)), udeval.load_conllu_file(str(pred)))
    for name, key in LABELS.items():
        assert ours[name].f1 == pytest.approx(100 * official[key].f1, abs=1e-9), name
    assert all(
        50.0 < ours[name].f1 < 100.0 for name in ("upos", "xpos", "ufeats", "alltags", "lemmas", "las", "mlas", "blex")
    )
    assert main([f"gold={cut}", f"pred={pred}"]) == 0
    out = capsys.readouterr().out
    assert f"MLAS {ours['mlas'].f1:.2f}" in out and f"Lemmas {ours['lemmas'].f1:.2f}" in out
