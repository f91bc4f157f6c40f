"""Occupations, tribes, religions and clans written after their field label in running text:
"Occupation: boda boda rider", "Kabila: Luo", "Eddiini: Seventh-day Adventist", "Ekika:
Ngonge", "Национальность: грузин", "职业：公务员", ``"tribe": "Pare"``, ``religion=Catholic``.

These values are short and come from nearly closed vocabularies, yet the fine-tuned tagger
reads them poorly out of a sentence: on the synthetic notes read as plain text it found 9 % of
tribes and 24 % of occupations, and called a tribe a religion or a village (the tagger's
figures in ``benchmarks/results/quality.md``). Records carry them on form lines, so the label
says what the value is. The labels are the field names and form labels whose values are of
these categories (``[value.PROFESSION]``, ``[value.TRIBE]``, ``[value.RELIGION]`` and
``[value.PERSON_CLAN]`` of ``formats/data/fields.toml``, plus every language pack's
``occupation``, ``tribe``, ``religion`` and ``clan`` form labels), read as a field name is
read: the longest known phrase ending the label decides, so "Religion code:" is a code.

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

from polydeid.core.taxonomy import Category, Fact
from polydeid.detect.rules.labelled import LabelledValueRule
from polydeid.formats.fields import (
    DEMOGRAPHIC_CATEGORIES,
    demographic_label_for_words,
    demographic_label_phrases,
)

RULE_ID = "rules.demographics.v1"
SOURCE = "rule.demographic.label.v1"


@cache
def _last_words() -> frozenset[str]:
    return frozenset(words[-1] for words in demographic_label_phrases())


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
        return demographic_label_for_words(words)
