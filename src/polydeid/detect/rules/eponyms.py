"""Eponymous diagnoses as protected clinical facts: "Crohn's disease", "Morbus Crohn",
"enfermedad de Parkinson", "Guillain-Barré syndrome", "Lou Gehrig's disease".

A disease named after a person reads like a name, and a tagger that redacts "Parkinson" in
"Parkinson's disease" changes the diagnosis. This rule marks the whole diagnosis as a
:attr:`~polydeid.core.taxonomy.Fact.DIAGNOSIS` span, which the resolver protects from every
identifier candidate (a model's span is cut around it).

An eponym counts only next to a disease word of the segment's language or English: written
after it ("disease", "Syndrom", "lymfoom"; optionally with a possessive ``'s`` or a hyphen) or
before it ("Morbus", "enfermedad de", "maladie d'", "ugonjwa wa"). A patient called
Parkinson is therefore still a name, and "Mr Parkinson's wife" is not a diagnosis. Eponyms
match as written in ``locales/eponyms.toml`` (capitalised) or in capitals — "still disease"
and "pick" are not Still's disease and Pick's disease; disease words match in any case.
Several eponyms join with a hyphen, a dash or "and" ("Guillain-Barré", "Creutzfeldt-Jakob",
"Wolff-Parkinson-White"). The disease words are in ``[eponym]`` of each language's
``facts.toml``.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache
from typing import ClassVar

import regex

from polydeid.core.segments import Segment
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category, Fact
from polydeid.detect.roles import MAX_NAME_WORDS, name_label_before
from polydeid.detect.rules._base import PhraseFactRule, RuleDetector
from polydeid.locales import languages, segment_languages
from polydeid.locales.ages import age_words
from polydeid.locales.eponyms import eponyms
from polydeid.locales.facts import fact_words
from polydeid.locales.names import name_data, name_words
from polydeid.text.gate import gate_words, key_of, keys_of
from polydeid.text.normalise import normalise
from polydeid.text.patterns import (
    Pattern,
    compile_pattern,
    gated_finditer,
    phrase_alternation,
)

SOURCE = "facts.eponyms.v1"


@cache
def eponym_names() -> tuple[str, ...]:
    """The eponyms (``locales/eponyms.toml``), with their all-capitals forms."""
    names = eponyms().names
    return tuple(dict.fromkeys([*names, *(n.upper() for n in names)]))


@cache
def _pattern(langs: tuple[str, ...]) -> Pattern | None:
    after: list[str] = []
    before: list[str] = []
    for lang in langs:
        vocabulary = fact_words(lang)
        after.extend(vocabulary.eponym_after)
        before.extend(vocabulary.eponym_before)
    if not (after or before):
        return None
    name = f"(?:{phrase_alternation(eponym_names(), fold_case=False)})"
    joined = rf"{name}(?:(?:[ \t]*[-–‐][ \t]*|[ \t]+and[ \t]+){name})*"
    forms = []
    if after:
        words = phrase_alternation(after, fold_case=True)
        # every eponym starts with a capital: the look-ahead rejects other positions fast
        forms.append(rf"(?=\p{{Lu}}){joined}(?:['’]s?)?(?:[ \t\u00a0]+|[-–‐])(?:{words})")
    if before:
        words = phrase_alternation(before, fold_case=True)
        # "maladie d'Alzheimer": an elided article joins the eponym without a space
        initials = regex.escape("".join(sorted({w[0].casefold() for w in before})))
        forms.append(rf"(?i:(?=[{initials}]))(?:{words})(?:(?<=['’])|[ \t\u00a0]+){joined}")
    return compile_pattern(rf"(?<![\p{{L}}\p{{N}}])(?:{'|'.join(forms)})(?![\p{{L}}\p{{N}}])")


@cache
def _keys(langs: tuple[str, ...]) -> frozenset[str] | None:
    """The gate keys of :func:`_pattern`: a match starts with an eponym or a disease word
    written before one."""
    before = [w for lang in langs for w in fact_words(lang).eponym_before]
    return keys_of((*eponym_names(), *before))


class EponymRule(PhraseFactRule):
    """Marks eponymous diagnoses so that no identifier detector redacts the name in them."""

    id = SOURCE
    kind = Fact.DIAGNOSIS

    def pattern(self, langs: tuple[str, ...]) -> Pattern | None:
        return _pattern(langs)

    def keys(self, langs: tuple[str, ...]) -> frozenset[str] | None:
        return _keys(langs)


# --- eponymous devices, signs, tests, manoeuvres and scales ------------------------------------

TERM_SOURCE = "facts.eponym_terms.v1"

#: Where a hyphen joins the parts of an entry ("Swan-Ganz"): a hyphen, a dash or spaces.
_JOIN = r"(?:[ \t]*[-–‐][ \t]*|[ \t]+)"
#: Between a term and a word written after it: spaces, or a hyphen, dash or colon.
_AFTER = r"(?:[ \t\u00a0]*[-–‐:][ \t\u00a0]*|[ \t\u00a0]+)"
#: A scale's value written right after it: a number (one or two digits, or 100; with a decimal,
#: a denominator or a percent sign), a Roman grade I-V or a letter grade A-D.
_VALUE = (
    r"[ \t\u00a0]*(?:[:=][ \t\u00a0]*)?"
    r"(?:(?:100|\d{1,2}(?:[.,]\d)?)(?:[ \t]*/[ \t]*\d{1,3})?(?:[ \t]*%)?|IV|V|I{1,3}|[A-D])"
)
_PREVIOUS_WORD = regex.compile(r"([\p{L}]+)(\.?)[ \t\u00a0]+$")
#: A label's colon or equals sign, then up to four name words before a match (group 1: where
#: the value starts): the match is then within the label's value.
_NAME_VALUE = regex.compile(
    rf"[:=][ \t\u00a0]*()(?:[\p{{L}}\p{{M}}'’.-]+[ \t\u00a0]+){{0,{MAX_NAME_WORDS - 1}}}$"
)
_NEXT_WORD = regex.compile(r"[ \t\u00a0]*([\p{L}]+\.?)")


def _entry(name: str) -> str:
    """One entry as a regex: its hyphens and spaces match any of :data:`_JOIN`."""
    parts = regex.split(r"[-–‐ ]+", name)
    return _JOIN.join(regex.escape(p) for p in parts if p)


def _entries(names: tuple[str, ...], *, lower: bool = True) -> str:
    """``names`` as written, in capitals and (``lower``) in lower case, longest first."""
    forms = {n for name in names for n in (name, name.upper(), *([name.lower()] if lower else []))}
    return "|".join(_entry(n) for n in sorted(forms, key=lambda n: (-len(n), n)))


@cache
def _term_pattern(langs: tuple[str, ...]) -> Pattern | None:
    data = eponyms()
    if not data.terms:
        return None
    after: list[str] = []
    before: list[str] = []
    results: list[str] = []
    for lang in langs:
        vocabulary = fact_words(lang)
        after.extend(vocabulary.term_after)
        before.extend(vocabulary.term_before)
        results.extend(vocabulary.term_results)
    term = rf"(?:{_entries(data.terms)})(?:['’]s?)?"
    # a finding word alone makes a term only of an eponym that is no listed name
    distinctive = tuple(t for t in data.terms if t not in set(data.surnames))
    sign = rf"(?:{_entries(distinctive)})(?:['’]s?)?"
    forms = []
    if after:
        forms.append(rf"{term}{_AFTER}(?:{phrase_alternation(after, fold_case=True)})")
    if results:
        forms.append(rf"{sign}{_AFTER}(?:{phrase_alternation(results, fold_case=True)})")
    if data.scales:
        forms.append(rf"(?P<scale>(?:{_entries(data.scales)}){_VALUE})")
    if before:
        words = phrase_alternation(before, fold_case=True)
        forms.append(rf"(?:{words})(?:(?<=['’])|[ \t\u00a0]+){term}")
    if results:
        words = phrase_alternation(results, fold_case=True)
        forms.append(rf"(?:{words})(?:(?<=['’])|[ \t\u00a0]+){sign}")
    if data.alone:
        forms.append(rf"(?:{_entries(data.alone)})(?:['’]s?)?")
    if data.lower_alone:
        forms.append("|".join(_entry(n.lower()) for n in data.lower_alone))
    # a result word may end in a symbol ("+ve", "(-)"): the boundary after is a non-word then
    return compile_pattern(
        rf"(?<![\p{{L}}\p{{N}}])(?:{'|'.join(forms)})(?:(?<![\p{{L}}\p{{N}}])|(?![\p{{L}}\p{{N}}]))"
    )


@cache
def _first_words(langs: tuple[str, ...]) -> frozenset[str]:
    """The gate keys (:mod:`polydeid.text.gate`) of every term and of every word written
    before one: only where one of them starts can a term start."""
    data = eponyms()
    before = [
        w for lang in langs for w in (*fact_words(lang).term_before, *fact_words(lang).term_results)
    ]
    keys = (key_of(phrase) for phrase in (*data.terms, *before))
    return frozenset(key for key in keys if key is not None)


@cache
def _guards(langs: tuple[str, ...]) -> tuple[frozenset[str], frozenset[str]]:
    """The titles and honorifics of ``langs`` (casefolded, no dot), and their age unit words
    (casefolded)."""
    titles = {t for lang in langs for t in (*name_words(lang).titles, *name_words(lang).honorifics)}
    units = {
        w.casefold()
        for lang in langs
        for unit in age_words(lang).units.values()
        for w in (*unit.after, *unit.age_only)
    }
    return frozenset(t.rstrip(".") for t in titles), frozenset(units)


@cache
def _given_names(langs: tuple[str, ...]) -> frozenset[str]:
    """The given names (normalised) of ``langs`` and English, over all their country pools."""
    out: set[str] = set()
    for lang in dict.fromkeys((*langs, "en")):
        data = name_data(lang)
        if data is not None:
            out |= data.lookups["*"].given_names
    return frozenset(out)


class EponymTermRule(RuleDetector):
    """Marks eponymous devices, lines, signs, tests, manoeuvres, positions and scales as
    clinical terms, so that no identifier detector redacts the name in them.

    An eponym of ``locales/eponyms.toml [terms]`` counts next to a term, finding or value word
    of the segment's language or English (``[eponym_term]`` of ``facts.toml``): "Foley
    catheter", "Babinski-Zeichen", "Lasègue negativ", "positive Romberg", "signe de Lasègue",
    "sonda Foley", "Glasgow 15", "Child-Pugh B"; the distinctive ones (``alone``: "Ambu",
    "Mallampati") wherever written and the devices of ``lower_alone`` alone in lower case
    ("foley", "swan"). Eponyms match as written, in capitals and in lower case. A match right
    after a title or honorific ("Dr Thomas test") is a person and is left out, and so is a
    scale's value followed by an age unit ("Wells 45 years")."""

    id = TERM_SOURCE
    labels: ClassVar[frozenset[Category | Fact]] = frozenset({Fact.CLINICAL_TERM})

    def __init__(self) -> None:
        self.languages = frozenset(languages())

    def find(self, segment: Segment) -> Iterable[Span]:
        """The terms of the segment, tried only where a gate word of a term starts. The
        pattern and the guards of its languages are built at the first text that holds one
        (most texts hold none)."""
        langs = tuple(segment_languages(segment))
        firsts = _first_words(langs)
        text = segment.text
        if not gate_words(text).keys & firsts:
            return []
        pattern = _term_pattern(langs)
        if pattern is None:
            return []
        titles, units = _guards(langs)
        given = _given_names(langs)
        spans: list[Span] = []
        for m in gated_finditer(pattern, segment, self.id, firsts):
            if self._in_a_name(text, m.start(), titles, given):
                continue
            if m.group("scale") is not None:
                following = _NEXT_WORD.match(text, m.end(), min(len(text), m.end() + 40))
                unit = following.group(1).casefold() if following is not None else ""
                if unit in units or unit.rstrip(".") in units:
                    continue
            spans.append(Span(m.start(), m.end(), Fact.CLINICAL_TERM, self.id))
        return spans

    @staticmethod
    def _in_a_name(text: str, start: int, titles: frozenset[str], given: frozenset[str]) -> bool:
        """Whether a match starting at ``start`` is part of a person's name: right after a
        title, an honorific, a capitalised given name or an initial ("Dr Thomas", "Sarah
        Thomas", "J. Weber"), or within the value of a name label ("Patient name: Allen")."""
        previous = _PREVIOUS_WORD.search(text, max(0, start - 40), start)
        if previous is not None:
            word, dot = previous.groups()
            if word.casefold() in titles:
                return True
            if word[0].isupper() and len(word) == 1:
                return True
            # a given name's dot ends its sentence ("… Amina Wanjiru. Katheta ya Foley")
            if word[0].isupper() and not dot and normalise(word) in given:
                return True
        value = _NAME_VALUE.search(text, max(0, start - 80), start)
        return value is not None and name_label_before(text, value.start(1)) is not None
