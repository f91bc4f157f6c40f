"""The date vocabulary of a set of languages, and the order numeric dates are read in.

A :class:`Vocabulary` merges the ``dates.toml`` packs of a tuple of languages (the segment's
language and English, say): every month and weekday name as a :func:`name_key` key with the
month or weekday it stands for (the first language to list a name wins), plus the word sets the
grammar, the reader and the date rule need. :func:`vocabulary` builds it once per tuple.

Numeric order: ``03/04/2024`` is read in the locale's order — day first everywhere except
where the language tag's region or the segment's first explicit country is listed in the
language's ``month_first_regions`` (``en-US``: month first); when that reading is impossible
(``03/25/2024``) the other order is used. All dates of one segment are read the same way, so a
date shift keeps their intervals.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache

from polydeid.core.segments import Segment
from polydeid.locales import canonical_language
from polydeid.locales.dates import DateOrder, LanguageDates, language_dates, name_key
from polydeid.text.patterns import ContextLexicon

__all__ = [
    "NameEntry",
    "Vocabulary",
    "date_order",
    "language_codes",
    "numeric_order",
    "vocabulary",
]


@dataclass(frozen=True, slots=True)
class NameEntry:
    """What a month or weekday name stands for: its value (month 1–13, weekday 0 = Monday),
    and the language pack and name form it comes from (to re-render it in that form)."""

    value: int
    lang: str
    form: str


@dataclass(frozen=True)
class Vocabulary:
    """The merged date words of one tuple of languages."""

    langs: tuple[str, ...]
    packs: tuple[LanguageDates, ...]
    months: Mapping[str, NameEntry]
    weekdays: Mapping[str, NameEntry]
    #: Last words of the weekday names (a weekday may precede a numeric date).
    weekday_tails: frozenset[str]
    #: Last words of what may stand right before a month word inside a date.
    left_words: frozenset[str]
    ambiguous: frozenset[str]
    needs_year: frozenset[str]
    calendar_year_words: Mapping[str, str]
    not_date: ContextLexicon
    not_date_after: ContextLexicon
    date_context: ContextLexicon

    def words(self, attr: str) -> tuple[str, ...]:
        """The packs' ``attr`` word lists (a :class:`LanguageDates` field), merged in order."""
        return _union(self.packs, attr)


def _month_names(packs: Sequence[LanguageDates]) -> dict[str, NameEntry]:
    names: dict[str, NameEntry] = {}
    for pack in packs:
        for form_name, form in pack.month_forms.items():
            for i, name in enumerate(form.names):
                names.setdefault(name_key(name), NameEntry(i + 1, pack.code, form_name))
        for key, (month, form_name) in pack.month_variants.items():
            names.setdefault(key, NameEntry(month, pack.code, form_name))
    return names


def _weekday_names(packs: Sequence[LanguageDates]) -> dict[str, NameEntry]:
    names: dict[str, NameEntry] = {}
    for pack in packs:
        for form_name, form in pack.weekday_forms.items():
            for i, name in enumerate(form.names):
                names.setdefault(name_key(name), NameEntry(i, pack.code, form_name))
        first = next(iter(pack.weekday_forms), "")
        for key, weekday in pack.weekday_variants.items():
            names.setdefault(key, NameEntry(weekday, pack.code, first))
    return names


def _left_words(packs: Sequence[LanguageDates]) -> frozenset[str]:
    """Last words of what may stand between a day or year and a month word (connectors, …)."""
    words = (
        w
        for attr in ("connectors", "day_prefixes", "day_words", "year_words", "month_prefixes")
        for w in _union(packs, attr)
    )
    return frozenset(name_key(w).rsplit(" ", 1)[-1].rstrip(".") for w in words)


def _union(packs: Sequence[LanguageDates], attr: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(w for p in packs for w in getattr(p, attr)))


@cache
def vocabulary(langs: tuple[str, ...]) -> Vocabulary:
    """The vocabulary of canonical language codes ``langs`` (see :func:`language_codes`)."""
    packs = tuple(language_dates(code) for code in langs)
    weekdays = _weekday_names(packs)
    weekday_tails = frozenset(k.rsplit(" ", 1)[-1] for k in weekdays)
    return Vocabulary(
        langs=langs,
        packs=packs,
        months=_month_names(packs),
        weekdays=weekdays,
        weekday_tails=weekday_tails,
        left_words=weekday_tails | _left_words(packs),
        ambiguous=frozenset(k for p in packs for k in p.ambiguous),
        needs_year=frozenset(k for p in packs for k in p.needs_year),
        calendar_year_words={k: v for p in packs for k, v in p.calendar_year_words.items()},
        not_date=ContextLexicon(_union(packs, "not_date")),
        not_date_after=ContextLexicon(_union(packs, "not_date_after")),
        date_context=ContextLexicon(_union(packs, "date_context") + _union(packs, "birth_context")),
    )


def language_codes(langs: Sequence[str]) -> tuple[str, ...]:
    """Canonical codes of language tags or aliases, without repeats; English when none."""
    codes = tuple(dict.fromkeys(canonical_language(lang) for lang in langs))
    return codes or ("en",)


def numeric_order(lang: str, countries: Sequence[str] = ()) -> DateOrder:
    """How ``03/04/2024`` is read for a language tag (``"en-US"``) and explicit countries.

    The tag's region decides first, then the first explicit country; a region listed in the
    language's ``month_first_regions`` reads month first, anything else the language's default.
    """
    info = language_dates(lang)
    parts = lang.strip().replace("_", "-").split("-")
    region = next((p.upper() for p in parts[1:] if len(p) == 2 and p.isalpha()), None)
    if region is None and countries:
        region = countries[0].strip().upper()
    if region is not None and region in info.month_first_regions:
        return "mdy"
    return info.numeric_order


def date_order(segment: Segment) -> DateOrder:
    """The numeric date order of a segment (see :func:`numeric_order`)."""
    return numeric_order(segment.lang, segment.countries)
