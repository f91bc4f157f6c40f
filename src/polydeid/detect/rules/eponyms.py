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

from functools import cache

import regex

from polydeid.core.taxonomy import Fact
from polydeid.detect.rules._base import PhraseFactRule
from polydeid.locales.eponyms import eponyms
from polydeid.locales.facts import fact_words
from polydeid.text.patterns import Pattern, compile_pattern, phrase_alternation

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
        words = fact_words(lang)
        after.extend(words.eponym_after)
        before.extend(words.eponym_before)
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


class EponymRule(PhraseFactRule):
    """Marks eponymous diagnoses so that no identifier detector redacts the name in them."""

    id = SOURCE
    kind = Fact.DIAGNOSIS

    def pattern(self, langs: tuple[str, ...]) -> Pattern | None:
        return _pattern(langs)
