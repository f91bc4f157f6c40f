"""Clinicians named by a specialty whose name holds a kinship word, as protected facts: "su
médico de familia", "her family doctor", "son médecin de famille" (the general practitioner).

A tagger trained on records that mark relatives ("su madre", "la familia") reads the kinship
word in such a title as a relative and redacts it, and "su médico de familia solicitó una
analítica" loses who asked for the test. This rule marks the title as a
:attr:`~polydeid.core.taxonomy.Fact.CARE_ROLE` span, which the resolver protects from every
identifier candidate. It counts only right after a determiner of the segment's language or
English (an article, a possessive, a preposition joined to an article: "su", "del", "her",
"dal"), which makes it someone who treats the patient; the bare title after a verb ("trabaja
como médico de familia", "is a family doctor") may be the patient's occupation and stays free
for the profession detectors. The words are in ``[care_role]`` of each language's
``facts.toml``.
"""

from __future__ import annotations

from functools import cache

import regex

from polydeid.core.taxonomy import Fact
from polydeid.detect.rules._base import PhraseFactRule
from polydeid.locales.facts import fact_words
from polydeid.text.gate import keys_of
from polydeid.text.patterns import Pattern, compile_pattern, phrase_alternation

SOURCE = "facts.care_roles.v1"


@cache
def _pattern(langs: tuple[str, ...]) -> Pattern | None:
    determiners: list[str] = []
    roles: list[str] = []
    for lang in langs:
        words = fact_words(lang)
        determiners.extend(words.care_determiners)
        roles.extend(words.care_roles)
    if not (determiners and roles):
        return None
    before = phrase_alternation(determiners, fold_case=True)
    role = phrase_alternation(roles, fold_case=True)
    # the look-ahead on a title's first letter rejects most positions before the look-behind runs
    initials = regex.escape("".join(sorted({r[0].casefold() for r in roles})))
    return compile_pattern(
        rf"(?i:(?=[{initials}]))(?<=(?<![\p{{L}}\p{{N}}]){before}[ \t\u00a0]+)(?:{role})"
        r"(?![\p{L}\p{N}])"
    )


@cache
def _keys(langs: tuple[str, ...]) -> frozenset[str] | None:
    """The gate keys of :func:`_pattern`: a match starts with a title."""
    return keys_of(role for lang in langs for role in fact_words(lang).care_roles)


class CareRoleRule(PhraseFactRule):
    """Marks a clinician's specialty title so that no detector takes its kinship word for a
    relative."""

    id = SOURCE
    kind = Fact.CARE_ROLE

    def pattern(self, langs: tuple[str, ...]) -> Pattern | None:
        return _pattern(langs)

    def keys(self, langs: tuple[str, ...]) -> frozenset[str] | None:
        return _keys(langs)
