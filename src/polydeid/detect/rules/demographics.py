"""Occupations, tribes, religions and clans written after their field label in running text:
"Occupation: boda boda rider", "Kabila: Luo", "Eddiini: Seventh-day Adventist", "Ekika:
Ngonge", "Национальность: грузин", "职业：公务员", ``"tribe": "Pare"``, ``religion=Catholic``.

These values are short and come from nearly closed vocabularies, yet the fine-tuned tagger
reads them poorly out of a sentence: on the synthetic notes read as plain text it found 9 % of
tribes and 24 % of occupations, and called a tribe a religion or a village (the tagger's
figures in ``benchmarks/results/quality.md``). Records carry them on form lines, so the label
says what the value is. The labels are the field names and form labels whose values are of
these categories (``[value.PROFESSION]``, ``[value.TRIBE]``, ``[value.RELIGION]`` and
``[value.PERSON_CLAN]`` of ``lexicon/data/fields.toml``, plus every language pack's
``occupation``, ``tribe``, ``religion`` and ``clan`` form labels), read as a field name is
read: the longest known phrase ending the label decides, so "Religion code:" is a code. A
one-word label that is also a given name ("Faith:", "Job:") is taken for a chat's speaker,
not a label.
Without a colon, a noun that names a clan or a tribe right before it does the same
(``[value_nouns]``: Luganda "ow'ekika kya Mmamba", "ekika ky'Ennyonyi"; Kiswahili "wa kabila
la Wasukuma"); the value is then one to three capitalised words.

The value is read as :mod:`polydeid.detect.rules.labelled` reads every labelled value: one to
five words of letters on the label's line, ending at a break, a full stop or the next label; a
longer value (a sentence), a value with a digit, one on the next line or one saying nothing is
known ("unknown", "N/A") gives nothing, and the model's reading stands. A label's value is its
category even where a model read the same words as another ("Tribe: Kikuyu" read as a
religion): rule spans outrank the tagger's (:mod:`polydeid.core.resolve`).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

import regex

from polydeid.core.intervals import merged, union_overlaps
from polydeid.core.segments import Segment
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category, Fact
from polydeid.detect.rules.labelled import LabelledValueRule
from polydeid.lexicon.fields import (
    DEMOGRAPHIC_CATEGORIES,
    demographic_label_for_words,
    demographic_label_phrases,
    demographic_nouns,
    noun_key,
)
from polydeid.locales import languages
from polydeid.locales.names import name_data
from polydeid.text.gate import keys_of
from polydeid.text.patterns import Pattern, compile_pattern, gated_finditer

RULE_ID = "rules.demographics.v1"
SOURCE = "rule.demographic.label.v1"


#: A word of a clan's or tribe's name after its noun: capitalised ("Mmamba", "Wasukuma").
_VALUE_WORD = r"\p{Lu}[\p{L}\p{M}'’\-]*"


@cache
def _last_words() -> frozenset[str]:
    return frozenset(words[-1] for words in demographic_label_phrases())


@cache
def _given_names() -> frozenset[str]:
    """The given names of every language's name pools (every country), normalised: a one-word
    label that is also a given name ("Faith", "Job") is read as a chat's speaker."""
    return frozenset(
        name
        for lang in languages()
        if (data := name_data(lang)) is not None
        for name in data.lookups["*"].given_names
    )


@cache
def _noun_pattern() -> Pattern | None:
    """``[value_nouns]`` phrases (group 1, any case, an apostrophe straight or curly) and the
    one to three capitalised words after them (group 2)."""
    alternatives = []
    for phrase in sorted(demographic_nouns(), key=len, reverse=True):
        words = [regex.escape(w).replace("'", "['’]") for w in phrase.split()]
        glued = phrase.endswith(("'", "’"))
        alternatives.append(r"[ \t]+".join(words) + ("" if glued else r"[ \t]+"))
    if not alternatives:
        return None
    return compile_pattern(
        rf"(?<![\p{{L}}\p{{N}}])(?i:({'|'.join(alternatives)}))"
        rf"({_VALUE_WORD}(?:[ \t]+{_VALUE_WORD}){{0,2}})(?![\p{{L}}\p{{N}}])"
    )


@cache
def _noun_keys() -> frozenset[str] | None:
    """The gate keys (:mod:`polydeid.text.gate`) of :func:`_noun_pattern`'s phrases."""
    return keys_of(demographic_nouns())


class LabelledDemographicRule(LabelledValueRule):
    """Occupations, tribes, religions and clans that are the value of their field label."""

    id = RULE_ID
    source = SOURCE
    labels: frozenset[Category | Fact] = frozenset(DEMOGRAPHIC_CATEGORIES)
    #: Found only after labels; a model finds the rest.
    partial_labels: frozenset[Category] = frozenset(DEMOGRAPHIC_CATEGORIES)

    def last_words(self) -> frozenset[str]:
        return _last_words()

    def category_for(self, words: Sequence[str]) -> Category | None:
        if len(words) == 1 and words[0] in _given_names():
            return None  # a chat's speaker ("Faith: Hello doctor, …", "Job: …"), no label
        return demographic_label_for_words(words)

    def find(self, segment: Segment) -> list[Span]:
        spans = super().find(segment)
        pattern = _noun_pattern()
        if pattern is None:
            return spans
        nouns = demographic_nouns()
        # The matches do not overlap one another: only the labelled values can be in the way.
        labelled = merged((s.start, s.end) for s in spans)
        for match in gated_finditer(pattern, segment, self.id, _noun_keys()):
            start, end = match.span(2)
            if union_overlaps(labelled, start, end):
                continue
            category = nouns.get(noun_key(match.group(1)))
            if category is not None:
                spans.append(Span(start, end, category, self.source, self.score))
        return sorted(spans, key=lambda s: s.start)
