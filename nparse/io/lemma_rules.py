"""Lemmas as edit-script classes: what a lemmatizer predicts is the way from a form to its lemma.

A rule is learned from every (form, lemma) pair of the training file, as UDPipe 2 and spaCy's
``edit_tree_lemmatizer`` learn theirs, so that "walked" -> "walk" and "talked" -> "talk" are
one class ("cut 2 characters at the end") and the classifier generalises to forms it never
saw. A rule has three parts:

- the casing: ``L`` works on the lowercased form, ``C`` also capitalises the result's first
  character, ``K`` works on the form as written (tried in that order, the first that rebuilds
  the lemma wins: "The" -> "the" and "the" -> "the" are one class);
- the edit: cut ``a`` characters at the start and ``b`` at the end, then add ``P`` before and
  ``S`` after; ``a``, ``P``, ``b`` and ``S`` come from the longest common substring of the
  (cased) form and the lemma;
- or, when the two share no character ("went" -> "go"), the whole lemma: ``=go``.

Rules are strings (``L|0||2|`` cuts two characters at the end), so that they can stand in a
``Vocab``. ``apply_rule`` rebuilds the lemma; ``rule_for`` checks that it does.
"""

from __future__ import annotations

from difflib import SequenceMatcher

ABSOLUTE = "="  # the prefix of a rule that is the whole lemma


class LemmaError(ValueError):
    """A lemma no rule can be learned from (the message names the form and the lemma)."""


def _cased(form: str, casing: str) -> str:
    return form if casing == "K" else form.lower()


def _finish(text: str, casing: str) -> str:
    return text[:1].upper() + text[1:] if casing == "C" else text


def _edit(source: str, lemma: str) -> tuple[int, str, int, str] | None:
    """(a, P, b, S) turning ``source`` into ``lemma`` around their longest common substring, or
    None when they share no character."""
    match = SequenceMatcher(None, source, lemma, autojunk=False).find_longest_match(0, len(source), 0, len(lemma))
    if match.size == 0:
        return None
    a, b = match.a, len(source) - match.a - match.size
    return a, lemma[: match.b], b, lemma[match.b + match.size :]


def rule_for(form: str, lemma: str, max_added: int = 64) -> str:
    """The rule that turns ``form`` into ``lemma`` (checked: ``apply_rule`` gives the lemma back).
    ``LemmaError`` when the rule would add more than ``max_added`` characters: such a lemma is
    not the form's (a shifted column, a note in the LEMMA field)."""
    if lemma == form.lower():  # the commonest case (three words in four of EWT), without a search
        return "L|0||0|"
    best: str | None = None
    for casing in ("L", "C", "K"):
        source = _cased(form, casing)
        edit = _edit(source, lemma.lower() if casing == "C" else lemma)
        if edit is None:
            continue
        a, prefix, b, suffix = edit
        rule = f"{casing}|{a}|{prefix}|{b}|{suffix}"
        if apply_rule(form, rule) == lemma and (best is None or _added(rule) < _added(best)):
            best = rule
        if best is not None and _added(best) == 0:
            break
    if best is None:
        best = ABSOLUTE + lemma
    if _added(best) > max_added:
        raise LemmaError(
            f"LEMMA {lemma[:40]!r}{'...' if len(lemma) > 40 else ''} adds {_added(best)} characters to FORM "
            f"{form[:40]!r} (at most {max_added}, model.lemma_max_added): is the column shifted?"
        )
    return best


def _added(rule: str) -> int:
    """How many characters a rule writes that are not the form's."""
    if rule.startswith(ABSOLUTE):
        return len(rule) - 1
    _, _, prefix, _, suffix = rule.split("|", 4)
    return len(prefix) + len(suffix)


def min_length(rule: str) -> int:
    """The shortest form the rule applies to (the characters it cuts)."""
    if rule.startswith(ABSOLUTE):
        return 0
    _, a, _, b, _ = rule.split("|", 4)
    return int(a) + int(b)


def apply_rule(form: str, rule: str) -> str | None:
    """The lemma that ``rule`` makes of ``form``; None where the form is too short for it."""
    if rule.startswith(ABSOLUTE):
        return rule[1:]
    casing, a, prefix, b, suffix = rule.split("|", 4)
    source = _cased(form, casing)
    cut_a, cut_b = int(a), int(b)
    if cut_a + cut_b > len(source):
        return None
    return _finish(prefix + source[cut_a : len(source) - cut_b] + suffix, casing)
