"""What the HIPAA Safe Harbor operators read from an identifier: a date's year, an age in years.

45 CFR 164.514(b)(2)(i)(C) removes "all elements of dates (except year)" and "all ages over
89" and "all elements of dates (including year) indicative of such age": the ``keep_year``
operator writes a date's year alone (:func:`year_text`), and replaces a year that lies more
than ``oldest_age`` years before the reference year or whose century is a guess
(:func:`year_of`); the ``keep_age`` operator keeps an age that :func:`age_in_years` reads as at
most 89 years. Both fail closed: a date with no readable year and an age with no readable
number (ages written in words, say) are replaced.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache

import regex

from polydeid.dates import Granularity, parse_date, read_compact
from polydeid.locales import canonical_language
from polydeid.locales.ages import AGE_UNITS, age_languages, age_words
from polydeid.locales.dates import DateOrder
from polydeid.text.digits import ascii_digits
from polydeid.text.patterns import Pattern, compile_pattern

__all__ = ["UNITS_PER_YEAR", "age_in_years", "year_of", "year_text"]

#: How many of each age unit make a year.
UNITS_PER_YEAR: Mapping[str, float] = dict(zip(AGE_UNITS, (1.0, 12.0, 52.0, 365.0), strict=True))
#: A number as ages are written: digits in groups of three after thousands separators
#: ("1,100", "1.100", "1 100"), or digits with an optional decimal part ("2.5", "2,5").
_NUMBER = compile_pattern(
    r"(?<!\d)(?:\d{1,3}(?:[,.\u00a0\u202f ]\d{3})+(?![.,]?\d)|\d+(?:[.,]\d+)?)"
)
_GROUPED = compile_pattern(r"\d{1,3}(?:[,.\u00a0\u202f ]\d{3})+")


def year_text(text: str, langs: Sequence[str], *, order: DateOrder | None = None) -> str | None:
    """The year of the written date ``text`` as the date writes its digits, four of them (a
    year alone is returned as written, "'95" included); None when the date shows no year or
    is not a date in ``langs``. Surrounding spaces are kept."""
    core = text.strip()
    if not core:
        return None
    lead, trail = text[: len(text) - len(text.lstrip())], text[len(text.rstrip()) :]
    compact = read_compact(core)
    if compact is not None:
        return f"{lead}{compact.year:04d}{trail}"
    parsed = parse_date(core, langs, order=order)
    if parsed is None or parsed.year is None:
        return None
    if parsed.kind is Granularity.YEAR:
        return text
    slot = parsed.slot("year")
    zero = "0" if slot is None else slot.zero
    digits = "".join(chr(ord(zero) + int(c)) for c in f"{parsed.year:04d}")
    return f"{lead}{digits}{trail}"


def year_of(
    text: str, langs: Sequence[str], *, order: DateOrder | None = None
) -> tuple[int, bool] | None:
    """The year the written date ``text`` shows and whether it is written with two digits
    (its century then a guess: "'29", "4/5/29"); None when it shows no year."""
    core = text.strip()
    compact = read_compact(core) if core else None
    if compact is not None:
        return compact.year, False
    parsed = parse_date(core, langs, order=order) if core else None
    if parsed is None or parsed.year is None:
        return None
    slot = parsed.slot("year")
    written = core if slot is None else parsed.text[slot.start : slot.end]
    return parsed.year, sum(c.isdecimal() for c in written) <= 2


@cache
def _unit_patterns(langs: tuple[str, ...]) -> Mapping[str, Pattern]:
    words: dict[str, set[str]] = {unit: set() for unit in AGE_UNITS}
    for code in langs:
        if code not in age_languages():
            continue
        for unit, table in age_words(code).units.items():
            words[unit].update(w for w in (*table.after, *table.before, *table.age_only) if w)
    patterns: dict[str, Pattern] = {}
    for unit, found in words.items():
        if found:
            alts = "|".join(regex.escape(w) for w in sorted(found, key=lambda w: (-len(w), w)))
            patterns[unit] = compile_pattern(
                rf"(?<![\p{{L}}])(?:{alts})(?![\p{{L}}])", regex.IGNORECASE
            )
    return patterns


def age_in_years(text: str, langs: Sequence[str]) -> float | None:
    """The age ``text`` states, in years: its one number (thousands separators and a decimal
    part read whole: "1,100 months" = 91.7), in the unit whose word comes first ("46 years",
    "emyaka 46", "6-month-old" = 0.5); years when no unit word is written. None when no
    number, or more than one, is written in digits (any script): the caller replaces it."""
    numbers = _NUMBER.findall(text)
    if len(numbers) != 1:
        return None
    written = ascii_digits(numbers[0])  # digits of any script, read as the pattern read them
    if _GROUPED.fullmatch(written):
        value = float("".join(c for c in written if c.isdecimal()))
    else:
        value = float(written.replace(",", "."))
    codes = tuple(dict.fromkeys(canonical_language(c) for c in langs))
    first: tuple[int, str] | None = None
    for unit, pattern in _unit_patterns(codes).items():
        m = pattern.search(text)
        if m is not None and (first is None or m.start() < first[0]):
            first = (m.start(), unit)
    unit = "year" if first is None else first[1]
    return value / UNITS_PER_YEAR[unit]
