"""Scores across tokenizations, counted as the CoNLL 2018 shared-task scorer counts them.

When the prediction was tokenized by us (``format=raw``), its words are not the gold words.
Both files are laid over the same characters (every token's form without space characters, one
after another: the two must spell the same text) and

- tokens and sentences are correct when their character spans are identical;
- words are aligned by spans: a word outside any multiword token matches a word with the same
  span; around multiword tokens (on either side) the smallest region whose ends both sides agree
  on is aligned by the longest common subsequence of lowercased forms;
- UPOS, XPOS, UFeats (the universal features only), AllTags (all three) and Lemmas (a gold
  lemma '_' matches anything) count aligned words with the same values; UAS aligned words whose
  heads are aligned to each other (or both the root); LAS, in addition, the same universal
  DEPREL (before ':');
- CLAS, MLAS and BLEX count content words only (by their universal DEPREL, on each side): CLAS
  as LAS, MLAS also with the same UPOS and UFeats and the same functional children (aux, cop,
  mark, det, clf, case, cc: head, DEPREL, UPOS and UFeats, in order), BLEX also with the same
  lemma.

Each is reported as precision (over predicted items), recall (over gold items) and F1.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import Sequence

from .scores import universal
from ..io.conllu import CoNLLUError, Sentence
from ..io.feats import universal_feats

METRICS = (
    "tokens", "sentences", "words", "upos", "xpos", "ufeats", "alltags", "lemmas", "uas", "las", "clas", "mlas", "blex",
)  # fmt: skip
LABELS = {
    "tokens": "Tokens", "sentences": "Sentences", "words": "Words", "upos": "UPOS", "xpos": "XPOS", "ufeats": "UFeats",
    "alltags": "AllTags", "lemmas": "Lemmas", "uas": "UAS", "las": "LAS", "clas": "CLAS", "mlas": "MLAS", "blex": "BLEX",
}  # fmt: skip
# The CoNLL 2018 scorer's content and functional relations (CLAS, MLAS, BLEX).
CONTENT_DEPRELS = frozenset(
    "nsubj obj iobj csubj ccomp xcomp obl vocative expl dislocated advcl advmod discourse nmod appos nummod acl "
    "amod conj fixed flat compound list parataxis orphan goeswith reparandum root dep".split()
)
FUNCTIONAL_DEPRELS = frozenset("aux cop mark det clf case cc".split())


@dataclass
class Word:
    start: int  # character span of its token (all words of a multiword token share it)
    end: int
    multi: bool  # part of a multiword token
    form: str
    upos: str
    deprel: str
    head: int  # index of the head word in the document, -1 for the root, MISSING_HEAD for HEAD "_"
    xpos: str = "_"
    feats: str = ""  # the universal features only (``universal_feats``)
    lemma: str = "_"


@dataclass
class Document:
    text: str  # the forms' characters without spaces
    words: list[Word]
    tokens: list[tuple[int, int]]
    sentences: list[tuple[int, int]]
    where: list[tuple[str, int]]  # file and line of each character's token, for messages


@dataclass
class F1:
    correct: int
    gold: int
    predicted: int

    @property
    def precision(self) -> float:
        return 100.0 * self.correct / self.predicted if self.predicted else 0.0

    @property
    def recall(self) -> float:
        return 100.0 * self.correct / self.gold if self.gold else 0.0

    @property
    def f1(self) -> float:
        total = self.gold + self.predicted
        return 200.0 * self.correct / total if total else 0.0


def squeeze(form: str) -> str:
    """A form without its space characters (Unicode category Zs), as the scorer reads it."""
    return "".join(ch for ch in form if unicodedata.category(ch) != "Zs")


def document(sentences: Sequence[Sentence]) -> Document:
    chars: list[str] = []
    words: list[Word] = []
    tokens: list[tuple[int, int]] = []
    spans: list[tuple[int, int]] = []
    where: list[tuple[str, int]] = []
    for sent in sentences:
        offset = len(words) - 1  # word i of the sentence is words[offset + i]
        first = len(chars)
        covered_until = 0  # last word inside the current multiword token
        for k, line in enumerate(sent.lines):
            cols = line.split("\t")
            if line.startswith("#") or len(cols) < 10 or "." in cols[0]:
                continue
            if "-" in cols[0]:
                lo, hi = (int(x) for x in cols[0].split("-"))
                start = len(chars)
                form = squeeze(cols[1])
                chars.extend(form)
                where.extend([(sent.path, sent.line + k)] * len(form))
                tokens.append((start, len(chars)))
                covered_until = hi
                for i in range(lo, hi + 1):
                    words.append(word(sent, i, offset, start, len(chars), True))
                continue
            i = int(cols[0])
            if i <= covered_until:
                continue
            start = len(chars)
            form = squeeze(cols[1])
            chars.extend(form)
            where.extend([(sent.path, sent.line + k)] * len(form))
            tokens.append((start, len(chars)))
            words.append(word(sent, i, offset, start, len(chars), False))
        if len(chars) > first:
            spans.append((first, len(chars)))
    return Document("".join(chars), words, tokens, spans, where)


MISSING_HEAD = -2  # a word with HEAD '_' (not parsed): it matches no head, the root included


def word(sent: Sentence, i: int, offset: int, start: int, end: int, multi: bool) -> Word:
    head = sent.heads[i]
    at = offset + head if head > 0 else -1 if head == 0 else MISSING_HEAD
    lemma = sent.lemmas[i] if sent.lemmas else "_"
    feats = universal_feats(sent.feats[i]) if sent.feats else ""
    return Word(start, end, multi, sent.forms[i], sent.upos[i], sent.deprels[i], at, sent.xpos[i], feats, lemma)


def same_spans(gold: list[tuple[int, int]], pred: list[tuple[int, int]]) -> F1:
    """Spans present on both sides (both lists are in text order)."""
    correct = g = p = 0
    while g < len(gold) and p < len(pred):
        if pred[p][0] < gold[g][0]:
            p += 1
        elif gold[g][0] < pred[p][0]:
            g += 1
        else:
            correct += gold[g][1] == pred[p][1]
            g += 1
            p += 1
    return F1(correct, len(gold), len(pred))


def region(gold: list[Word], pred: list[Word], g: int, p: int) -> tuple[int, int, int, int]:
    """The smallest stretch of words around a multiword token at gold[g] or pred[p] that both
    sides end together: (gold start, pred start, gold end, pred end)."""
    if gold[g].multi:
        end = gold[g].end
        if not pred[p].multi and pred[p].start < gold[g].start:
            p += 1
    else:
        end = pred[p].end
        if not gold[g].multi and gold[g].start < pred[p].start:
            g += 1
    g0, p0 = g, p

    def done(words: list[Word], i: int) -> bool:
        if i >= len(words):
            return True
        return words[i].start >= end if words[i].multi else words[i].end > end

    while not (done(gold, g) and done(pred, p)):
        from_gold = g < len(gold) and (p >= len(pred) or gold[g].start <= pred[p].start)
        w = gold[g] if from_gold else pred[p]
        if w.multi:
            end = max(end, w.end)
        if from_gold:
            g += 1
        else:
            p += 1
    return g0, p0, g, p


def match_forms(gold: list[Word], pred: list[Word], pairs: dict[int, int], g0: int, g1: int, p0: int, p1: int) -> None:
    """Pair the words of gold[g0:g1] and pred[p0:p1] along a longest common subsequence of their
    lowercased forms (on a tie, a gold word is passed over first)."""
    a = [w.form.lower() for w in gold[g0:g1]]
    b = [w.form.lower() for w in pred[p0:p1]]
    # best[i][j]: LCS length of a[i:] and b[j:]
    best = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) - 1, -1, -1):
        for j in range(len(b) - 1, -1, -1):
            best[i][j] = max(best[i + 1][j + 1] + 1 if a[i] == b[j] else 0, best[i + 1][j], best[i][j + 1])
    i = j = 0
    while i < len(a) and j < len(b):
        if a[i] == b[j]:
            pairs[g0 + i] = p0 + j
            i += 1
            j += 1
        elif best[i][j] == best[i + 1][j]:
            i += 1
        else:
            j += 1


def align(gold: list[Word], pred: list[Word]) -> dict[int, int]:
    """Gold word index -> predicted word index of every aligned pair."""
    pairs: dict[int, int] = {}
    g = p = 0
    while g < len(gold) and p < len(pred):
        if gold[g].multi or pred[p].multi:
            g0, p0, g, p = region(gold, pred, g, p)
            if g > g0 and p > p0:
                match_forms(gold, pred, pairs, g0, g, p0, p)
        elif (gold[g].start, gold[g].end) == (pred[p].start, pred[p].end):
            pairs[g] = p
            g += 1
            p += 1
        elif gold[g].start <= pred[p].start:
            g += 1
        else:
            p += 1
    return pairs


def check_same_text(gold: Document, pred: Document) -> None:
    if gold.text == pred.text:
        return
    k = next((i for i, (a, b) in enumerate(zip(gold.text, pred.text)) if a != b), min(len(gold.text), len(pred.text)))
    if k < len(pred.where):
        path, line = pred.where[k]
        if k == len(gold.text):
            raise CoNLLUError(
                path, line, "the gold file ends before this predicted text; both files must hold the same text"
            )
        raise CoNLLUError(path, line, f"the text differs from the gold file here (character {k}: {pred.text[k:k + 20]!r} "
                          f"against {gold.text[k:k + 20]!r}); both files must hold the same text")  # fmt: skip
    path, line = gold.where[k] if k < len(gold.where) else ("<gold>", 1)
    raise CoNLLUError(path, line, "the predicted file ends before this gold text; both files must hold the same text")


@dataclass
class Alignment:
    """A prediction with its own tokenization set against the gold words: the two documents,
    the aligned pairs (gold word -> predicted word, document indices), the pairs the other way,
    and where each document word is (sentence, word position from 1)."""

    gold: Document
    pred: Document
    pairs: dict[int, int]
    back: dict[int, int]
    gold_at: list[tuple[int, int]]
    pred_at: list[tuple[int, int]]

    def head_ok(self, g: int, p: int) -> bool:
        """Whether predicted word p's head is gold word g's head (aligned, or both the root)."""
        gw, pw = self.gold.words[g], self.pred.words[p]
        return self.back.get(pw.head, MISSING_HEAD) == gw.head if pw.head >= 0 else pw.head == gw.head == -1


def positions(sentences: Sequence[Sentence]) -> list[tuple[int, int]]:
    """(sentence, word from 1) of every document word, in ``document``'s order."""
    return [(k, i) for k, sent in enumerate(sentences) for i in range(1, len(sent) + 1)]


def alignment(gold_sents: Sequence[Sentence], pred_sents: Sequence[Sentence]) -> Alignment:
    gold, pred = document(gold_sents), document(pred_sents)
    check_same_text(gold, pred)
    pairs = align(gold.words, pred.words)
    return Alignment(gold, pred, pairs, {p: g for g, p in pairs.items()}, positions(gold_sents), positions(pred_sents))


def functional_children(words: list[Word]) -> list[list[int]]:
    """Each word's children with a functional DEPREL, in document order (MLAS)."""
    out: list[list[int]] = [[] for _ in words]
    for k, w in enumerate(words):
        if w.head >= 0 and universal(w.deprel) in FUNCTIONAL_DEPRELS:
            out[w.head].append(k)
    return out


def aligned_scores(gold_sents: Sequence[Sentence], pred_sents: Sequence[Sentence]) -> dict[str, F1]:
    """The CoNLL 2018 metrics (``METRICS``) of a prediction with its own tokenization, or the
    gold one (every word then aligns with itself)."""
    found = alignment(gold_sents, pred_sents)
    gold, pred, pairs = found.gold, found.pred, found.pairs
    gold_children, pred_children = functional_children(gold.words), functional_children(pred.words)
    count = dict.fromkeys(("upos", "xpos", "ufeats", "alltags", "lemmas", "uas", "las", "clas", "mlas", "blex"), 0)

    for g, p in pairs.items():
        gw, pw = gold.words[g], pred.words[p]
        tags = (gw.upos == pw.upos, gw.xpos == pw.xpos, gw.feats == pw.feats)
        lemma_ok = gw.lemma == "_" or gw.lemma == pw.lemma
        count["upos"] += tags[0]
        count["xpos"] += tags[1]
        count["ufeats"] += tags[2]
        count["alltags"] += all(tags)
        count["lemmas"] += lemma_ok
        head_ok = found.head_ok(g, p)
        las = head_ok and universal(gw.deprel) == universal(pw.deprel)
        count["uas"] += head_ok
        count["las"] += las
        if universal(gw.deprel) in CONTENT_DEPRELS and las:
            count["clas"] += 1
            count["blex"] += lemma_ok
            gold_fun = [
                (c, universal(gold.words[c].deprel), gold.words[c].upos, gold.words[c].feats) for c in gold_children[g]
            ]
            pred_fun = [(found.back.get(c, MISSING_HEAD), universal(pred.words[c].deprel), pred.words[c].upos, pred.words[c].feats)
                        for c in pred_children[p]]  # fmt: skip
            count["mlas"] += tags[0] and tags[2] and gold_fun == pred_fun
    n_gold, n_pred = len(gold.words), len(pred.words)
    content_gold = sum(universal(w.deprel) in CONTENT_DEPRELS for w in gold.words)
    content_pred = sum(universal(w.deprel) in CONTENT_DEPRELS for w in pred.words)
    out = {
        "tokens": same_spans(gold.tokens, pred.tokens),
        "sentences": same_spans(gold.sentences, pred.sentences),
        "words": F1(len(pairs), n_gold, n_pred),
    }
    for name, correct in count.items():
        content = name in ("clas", "mlas", "blex")
        out[name] = F1(correct, content_gold if content else n_gold, content_pred if content else n_pred)
    return {name: out[name] for name in METRICS}
