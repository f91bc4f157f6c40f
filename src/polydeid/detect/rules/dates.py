"""Dates in numeric and textual forms, in every language with a ``dates.toml`` pack.

Forms found (``D`` day, ``M`` month number, ``MN`` month name, ``Y`` year)::

    numeric     Y-M-D  Y/M/D  Y.M.D            ISO 8601, with an optional time ("T14:30:00Z")
                D/M/Y  D.M.Y  D-M-Y  (Y: 4 or 2 digits; M/D/Y when the locale writes month first)
                D.M. Y  and  D. M. Y           (typographic spaces, 4-digit year only)
    partial     M/Y  M.Y  M-Y  Y-MM            and  D.M.  (German/Russian style, trailing dot)
    textual     D MN Y   D. MN Y   Dth of MN, Y   D de MN de Y   «D» MN Y г.   D-MN-Y
                MN D, Y   MN Y   MN de Y   Y MN D   Y年M月D日   ngày D tháng M năm Y
                with an optional leading weekday ("Monday, 12 March 2024")

Words a date is written with (month and weekday names, ordinal suffixes, connectors such as
"de", year words such as "г." or "年", calendar markers such as "ዓ.ም.") come from
``locales/languages/<code>/dates.toml``; the month names of the segment's language and of
English apply (:func:`segment_languages`).

Validation: month 1–12 (1–13 in the Ethiopian calendar), day within the month (Feb 29 only in
leap years; a date without a year is checked against a leap year), 4-digit years 1900–2100
(Ethiopian 1890–2095); 2-digit years only inside numeric dates with separators, ``D-MN-YY`` and
``MN 'YY``. Not dates: blood pressures and ratios (``120/80``, ``3/10``), fractions, doses and
lab values (a number with a unit is never a day), dosing schemes (``1-0-1``), version numbers,
times alone, record numbers (a date glued to ``/``, ``.``, or letters with ``-``), numbers
after words such as "version", "figure", "GCS" (``[context] not_date``), ``D.M.`` at the start
of a line (section numbers), month names that are also words ("may", "mar") unless written as
a full date or capitalised next to a number.

Ranges: the opening day of a day-first range ("12-14 March 2024", "12.-15.03.2024",
"du 12 au 15 mars", ``[grammar] range_words``) is a span of its own, so it does not stay in
clear; alone it cannot be re-rendered, so a date shift replaces it by a tag.

Span sources: ``rule.date.numeric.v1`` (full numeric dates), ``rule.date.partial.v1`` (M/Y,
Y-MM, D.M.), ``rule.date.textual.v1`` (dates with a month word), ``rule.date.range.v1``.

Numeric order: ``03/04/2024`` is read in the locale's order — day first everywhere except where
the language tag's region or the segment's first explicit country is listed in the language's
``month_first_regions`` (``en-US``: month first); when that reading is impossible
(``03/25/2024``) the other order is used. All dates of one segment are read the same way, so a
date shift keeps their intervals.

:func:`parse_date` decomposes one written date into a :class:`ParsedDate` that can re-render
itself with other values in exactly the same written form (the date-shift operator uses it).
"""

from __future__ import annotations

import heapq
import unicodedata
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from functools import cache, lru_cache
from types import MappingProxyType
from typing import Any, ClassVar, Literal

import regex

from polydeid.core.errors import ConfigError
from polydeid.core.segments import Segment
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category, Fact
from polydeid.detect.rules._base import (
    PATTERN_TIMEOUT_S,
    ContextLexicon,
    Match,
    Pattern,
    RuleDetector,
    compile_pattern,
    guarded_finditer,
    segment_languages,
)
from polydeid.locales import canonical_language, language_data

__all__ = [
    "LEAP_REFERENCE",
    "TWO_DIGIT_PIVOT",
    "YEAR_RANGE",
    "DateOrder",
    "DateRule",
    "LanguageDates",
    "NameForm",
    "Ordinals",
    "ParsedDate",
    "Slot",
    "date_order",
    "days_in_month",
    "find_dates",
    "from_ordinal",
    "language_dates",
    "months_in_year",
    "name_key",
    "numeric_order",
    "parse_date",
    "to_ordinal",
]

DateOrder = Literal["dmy", "mdy"]
Calendar = Literal["gregorian", "ethiopic"]

#: Years a 4-digit year may take, per calendar (the Ethiopian year runs 7–8 years behind).
YEAR_RANGE: Mapping[str, tuple[int, int]] = {"gregorian": (1900, 2100), "ethiopic": (1890, 2095)}
#: Two-digit years below the pivot are 20xx, the others 19xx.
TWO_DIGIT_PIVOT = 50
#: Year used to validate a date written without a year (a leap year, so 29 February passes).
LEAP_REFERENCE: Mapping[str, int] = {"gregorian": 2000, "ethiopic": 2015}

_GREGORIAN_DAYS = (0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
# Ethiopian (Amete Mihret) epoch as a proleptic Gregorian ordinal (Python's date.toordinal),
# after Dershowitz & Reingold, Calendrical Calculations: 29 August 8 CE (Julian).
_ETHIOPIC_EPOCH = 2796

# --- calendars ---------------------------------------------------------------------------------


def days_in_month(calendar: str, year: int, month: int) -> int:
    """Days in ``month`` of ``year`` in ``calendar`` (0 for a month that does not exist)."""
    if calendar == "ethiopic":
        if 1 <= month <= 12:
            return 30
        return (6 if year % 4 == 3 else 5) if month == 13 else 0
    if not 1 <= month <= 12:
        return 0
    if month == 2:
        return 29 if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else 28
    return _GREGORIAN_DAYS[month]


def to_ordinal(calendar: str, year: int, month: int, day: int) -> int:
    """Day number of a date (proleptic Gregorian ordinal, as ``date.toordinal``)."""
    if calendar == "ethiopic":
        return _ETHIOPIC_EPOCH - 1 + 365 * (year - 1) + year // 4 + 30 * (month - 1) + day
    return date(year, month, day).toordinal()


def from_ordinal(calendar: str, ordinal: int) -> tuple[int, int, int]:
    """``(year, month, day)`` of a day number in ``calendar``."""
    if calendar == "ethiopic":
        year = (4 * (ordinal - _ETHIOPIC_EPOCH) + 1463) // 1461
        month = (ordinal - to_ordinal("ethiopic", year, 1, 1)) // 30 + 1
        day = ordinal + 1 - to_ordinal("ethiopic", year, month, 1)
        return year, month, day
    d = date.fromordinal(ordinal)
    return d.year, d.month, d.day


def months_in_year(calendar: str) -> int:
    return 13 if calendar == "ethiopic" else 12


# --- language data -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class NameForm:
    """One written form of month or weekday names (full, abbreviated, genitive, …)."""

    names: tuple[str, ...]
    abbreviation: bool = False
    dot_required: bool = False
    calendar: str = "gregorian"


@dataclass(frozen=True, slots=True)
class Ordinals:
    """Ordinal suffixes after a day number, and how they follow the day when it changes."""

    suffixes: tuple[str, ...] = ()
    default: str | None = None
    by_day: Mapping[int, str] = field(default_factory=dict)
    only_first: bool = False

    def suffix_for(self, day: int, written: str) -> str:
        """The suffix for ``day``, in the letter case of the ``written`` one."""
        if self.by_day or self.default is not None:
            suffix = self.by_day.get(day, self.default or "")
        elif self.only_first:
            suffix = written if day == 1 else ""
        else:
            suffix = written
        return suffix.upper() if written.isupper() else suffix


@dataclass(frozen=True, slots=True)
class LanguageDates:
    """The date vocabulary of one language pack (``languages/<code>/dates.toml``)."""

    code: str
    numeric_order: DateOrder
    month_first_regions: frozenset[str]
    dm_dot: bool
    day_prefixes: tuple[str, ...]
    day_words: tuple[str, ...]
    connectors: tuple[str, ...]
    year_prefixes: tuple[str, ...]
    year_words: tuple[str, ...]
    month_prefixes: tuple[str, ...]
    attached_prefixes: tuple[str, ...]
    month_number_prefixes: tuple[str, ...]
    month_number_suffixes: tuple[str, ...]
    range_words: tuple[str, ...]
    calendar_year_words: Mapping[str, str]
    ordinals: Ordinals
    month_forms: Mapping[str, NameForm]
    month_variants: Mapping[str, tuple[int, str]]
    weekday_forms: Mapping[str, NameForm]
    weekday_variants: Mapping[str, int]
    ambiguous: frozenset[str]
    needs_year: frozenset[str]
    date_context: tuple[str, ...]
    birth_context: tuple[str, ...]
    not_date: tuple[str, ...]
    units: tuple[str, ...]

    def month_name(self, form: str, month: int) -> str:
        return self.month_forms[form].names[month - 1]

    def plain_month_name(self, month: int) -> str:
        """The month's name in the first non-abbreviated form (to tell if a name is shortened)."""
        for f in self.month_forms.values():
            if not f.abbreviation and month <= len(f.names):
                return f.names[month - 1]
        return ""


_APOSTROPHES = compile_pattern(r"['’ʼ‘`]")
_SPACES = compile_pattern(r"\s+")
_SLASH = compile_pattern(r"\s*/\s*")


@lru_cache(maxsize=8192)
def name_key(text: str) -> str:
    """Normal form of a written name for lookup: NFC, lower case, one space, one apostrophe."""
    key = unicodedata.normalize("NFC", text).lower()
    key = _APOSTROPHES.sub("'", key)
    key = _SLASH.sub("/", key)
    return _SPACES.sub(" ", key).strip()


def _strings(raw: Any, where: str) -> tuple[str, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(isinstance(x, str) for x in raw):
        raise ConfigError("expected a list of strings", location=where)
    return tuple(x for x in raw if x.strip())


def _forms(raw: Mapping[str, Any], where: str, count: int) -> Mapping[str, NameForm]:
    forms: dict[str, NameForm] = {}
    for name, table in raw.items():
        names = _strings(table.get("names"), f"{where}.{name}")
        calendar = table.get("calendar", "gregorian")
        expected = 13 if calendar == "ethiopic" else count
        if len(names) != expected or calendar not in YEAR_RANGE:
            raise ConfigError(
                f"form needs {expected} names and a known calendar", location=f"{where}.{name}"
            )
        forms[name] = NameForm(
            names=names,
            abbreviation=bool(table.get("abbreviation", False)),
            dot_required=bool(table.get("dot_required", False)),
            calendar=calendar,
        )
    return MappingProxyType(forms)


def _month_variants(
    raw: Mapping[str, Any], forms: Mapping[str, NameForm], where: str
) -> Mapping[str, tuple[int, str]]:
    default_form = next((k for k, f in forms.items() if not f.abbreviation), next(iter(forms), ""))
    variants: dict[str, tuple[int, str]] = {}
    for name, value in raw.items():
        month, form = (value, default_form) if isinstance(value, int) else [*value, 0, ""][:2]
        valid = isinstance(month, int) and form in forms and 1 <= month <= len(forms[form].names)
        if not valid:
            raise ConfigError("month variant needs a month number and a known form", location=where)
        variants[name_key(name)] = (month, form)
    return MappingProxyType(variants)


def _ordinals(raw: Mapping[str, Any], where: str) -> Ordinals:
    by_day = MappingProxyType({int(k): str(v) for k, v in raw.get("by_day", {}).items()})
    default = raw.get("default")
    return Ordinals(
        suffixes=_strings(raw.get("suffixes"), where),
        default=None if default is None else str(default),
        by_day=by_day,
        only_first=bool(raw.get("only_first", False)),
    )


@cache
def language_dates(code: str) -> LanguageDates:
    """The date vocabulary of language ``code`` (canonical or alias); validated, cached."""
    code = canonical_language(code)
    raw = language_data(code, "dates")
    where = f"languages/{code}/dates.toml"
    if not raw:
        raise ConfigError("language has no dates.toml", location=where)
    grammar = raw.get("grammar", {})
    order = grammar.get("numeric_order", "dmy")
    if order not in ("dmy", "mdy"):
        raise ConfigError("numeric_order must be 'dmy' or 'mdy'", location=where)
    month_forms = _forms(raw.get("month_forms", {}), f"{where} month_forms", 12)
    weekday_forms = _forms(raw.get("weekday_forms", {}), f"{where} weekday_forms", 7)
    calendars = {
        name_key(w): cal
        for cal, table in raw.get("calendars", {}).items()
        for w in _strings(table.get("year_words"), where)
    }
    context = raw.get("context", {})
    ambiguous = raw.get("ambiguous", {})

    def words(key: str) -> tuple[str, ...]:
        return _strings(grammar.get(key), f"{where} grammar.{key}")

    return LanguageDates(
        code=code,
        numeric_order=order,
        month_first_regions=frozenset(r.upper() for r in words("month_first_regions")),
        dm_dot=bool(grammar.get("dm_dot", False)),
        day_prefixes=words("day_prefixes"),
        day_words=words("day_words"),
        connectors=words("connectors"),
        year_prefixes=words("year_prefixes"),
        year_words=words("year_words"),
        month_prefixes=words("month_prefixes"),
        attached_prefixes=words("attached_prefixes"),
        month_number_prefixes=words("month_number_prefixes"),
        month_number_suffixes=words("month_number_suffixes"),
        range_words=words("range_words"),
        calendar_year_words=MappingProxyType(calendars),
        ordinals=_ordinals(raw.get("ordinals", {}), f"{where} ordinals"),
        month_forms=month_forms,
        month_variants=_month_variants(raw.get("month_variants", {}), month_forms, where),
        weekday_forms=weekday_forms,
        weekday_variants=MappingProxyType(
            {name_key(k): int(v) - 1 for k, v in raw.get("weekday_variants", {}).items()}
        ),
        ambiguous=frozenset(name_key(n) for n in _strings(ambiguous.get("months"), where)),
        needs_year=frozenset(name_key(n) for n in _strings(ambiguous.get("needs_year"), where)),
        date_context=_strings(context.get("date"), where),
        birth_context=_strings(context.get("birth"), where),
        not_date=_strings(context.get("not_date"), where),
        units=_strings(raw.get("units", {}).get("after_number"), where),
    )


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


# --- patterns ----------------------------------------------------------------------------------

_S = r"[^\S\r\n\f\v\x85\u2028\u2029]"  # whitespace that does not break a line
_LB = r"(?<![^\W\p{Han}])"  # not glued to a letter or digit on the left (Han text has no spaces)
_RB = r"(?![^\W\p{Han}])"
_WORD_END = r"(?![^\W\d_\p{Han}])"  # a word ends here (a digit may follow)
#: A word starts here: "wed" in "reviewed" is no weekday (matters in backward matching).
_WORD_START = r"(?<![^\W\d_\p{Han}])"
_NEVER = r"(?!)"
_MARKS = "\u200e\u200f \t\u00a0\u202f"
_HAN = compile_pattern(r"\p{Han}")


def _char_pattern(ch: str) -> str:
    if ch == " ":
        return _S + "+"
    if ch == "'":
        return r"['’ʼ‘`]"
    if ch == "/":
        return _S + "?/" + _S + "?"
    return regex.escape(ch)


def _trie_pattern(node: Mapping[str, Any]) -> str:
    branches = [
        _char_pattern(ch) + _trie_pattern(child) for ch, child in sorted(node.items()) if ch
    ]
    if not branches:
        return ""
    body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
    return f"(?:{body})?" if "" in node else body


def alternation(words: Iterable[str]) -> str:
    """A trie-shaped regex matching any of ``words`` (as :func:`name_key`, in NFC and NFD)."""
    trie: dict[str, Any] = {}
    for word in words:
        key = name_key(word)
        for variant in {key, unicodedata.normalize("NFD", key)}:
            if not variant:
                continue
            node = trie
            for ch in variant:
                node = node.setdefault(ch, {})
            node[""] = {}
    return _trie_pattern(trie) or _NEVER


@dataclass(frozen=True, slots=True)
class _Words:
    """Alternations of one language set, as regex source."""

    months: str
    weekdays: str
    day_prefixes: str
    ordinals: str
    day_words: str
    connectors: str
    year_prefixes: str
    year_words: str
    month_prefixes: str
    number_prefixes: str
    number_suffixes: str
    attached: str
    dm_dot: bool


def _time(b: str) -> str:
    return (
        rf"(?:(?P<{b}_ts>T|,?{_S}+|,)(?P<{b}_t>\d{{1,2}}:\d{{2}}(?::\d{{2}}(?:[.,]\d{{1,9}})?)?"
        rf"(?:{_S}?[ap]\.?m\.?)?(?:Z|[+-]\d{{2}}(?::?\d{{2}})?)?)(?!\d))?"
    )


def _day(b: str, w: _Words) -> str:
    return (
        rf"(?:(?P<{b}_dp>{w.day_prefixes}){_S}?)?(?P<{b}_d>\d{{1,2}})(?!\d)"
        rf"(?:(?P<{b}_o>{w.ordinals}){_WORD_END})?\.?(?:{_S}?(?P<{b}_dw>{w.day_words}))?"
    )


def _month(b: str, w: _Words) -> str:
    return (
        rf"(?:(?:{w.month_prefixes}){_S}+)?(?:(?P<{b}_mn>{w.months})(?P<{b}_mdot>\.)?{_WORD_END}"
        rf"|(?:{w.number_prefixes}){_S}?(?P<{b}_nm>\d{{1,2}})(?!\d)"
        rf"|(?P<{b}_nm2>\d{{1,2}})(?!\d){_S}?(?:{w.number_suffixes}))"
    )


def _year(b: str, w: _Words, *, short: bool = True) -> str:
    digits = rf"(?:(?P<{b}_y>\d{{4}})|['’](?P<{b}_y2>\d{{2}}))" if short else rf"(?P<{b}_y>\d{{4}})"
    return rf"(?:(?:{w.year_prefixes}){_S}?)?{digits}(?!\d){_year_word(b, w)}"


def _year_word(b: str, w: _Words) -> str:
    return rf"(?:{_S}?(?P<{b}_yw>{w.year_words}){_WORD_END})?"


def _connector(w: _Words) -> str:
    return rf"(?:(?:{w.connectors}){_S}+)?"


def _numeric_branches(w: _Words) -> list[str]:
    sep = r"[\u200e\u200f]?[-/.]"
    n1 = (
        rf"(?P<n1>(?P<n1_y>\d{{4}})(?!\d)(?P<n1_s>{sep})(?P<n1_m>\d{{1,2}})(?!\d)(?P=n1_s)"
        rf"(?P<n1_d>\d{{1,2}})(?!\d){_time('n1')})"
    )
    n2 = (
        rf"(?P<n2>(?P<n2_a>\d{{1,2}})(?!\d)(?P<n2_s>{sep}|\.{_S})(?P<n2_b>\d{{1,2}})(?!\d)"
        rf"(?P<n2_s2>{sep}|\.{_S})(?P<n2_y>\d{{4}}|\d{{2}})(?!\d)"
        rf"{_year_word('n2', w)}{_time('n2')})"
    )
    n3 = (
        rf"(?P<n3>(?P<n3_m>\d{{1,2}})(?!\d)(?P<n3_s>[-/.])(?P<n3_y>\d{{4}})(?!\d)"
        rf"{_year_word('n3', w)})"
    )
    n4 = r"(?P<n4>(?P<n4_y>\d{4})-(?P<n4_m>\d{2})(?!\d))"
    branches = [n1, n2, n3, n4]
    if w.dm_dot:
        branches.append(rf"(?P<n5>(?P<n5_d>\d{{1,2}})\.(?P<n5_m>\d{{1,2}})\.(?!{_S}?\d))")
    return branches


def _textual_branches(w: _Words) -> list[str]:
    conn = _connector(w)
    comma = rf"[,،፣]?{_S}*"
    th = (
        rf"(?P<th>(?P<th_d>\d{{1,2}})(?!\d)(?P<th_s>[-/])(?P<th_mn>{w.months})(?P=th_s)"
        rf"(?:(?P<th_y>\d{{4}})|(?P<th_y2>\d{{2}}))(?!\d){_time('th')})"
    )
    t1 = (
        rf"(?P<t1>{_day('t1', w)}{_S}*{conn}{_month('t1', w)}"
        rf"(?:{comma}{conn}{_year('t1', w)}{_time('t1')})?)"
    )
    t4 = (
        rf"(?P<t4>{_year('t4', w, short=False)}{_S}*(?:[-/]{_S}*)?{_month('t4', w)}"
        rf"(?:{_S}*{_day('t4', w)})?)"
    )
    t2 = (
        rf"(?P<t2>{_month('t2', w)}{_S}*{conn}{_day('t2', w)}"
        rf"(?:{comma}{conn}{_year('t2', w)}{_time('t2')}|(?![:.,]?\d)))"
    )
    t3 = rf"(?P<t3>{_month('t3', w)}(?:{comma}|{_S}?[-/]{_S}?){conn}{_year('t3', w)})"
    return [th, t1, t4, t2, t3]


def _weekday_prefix(w: _Words) -> str:
    return rf"(?:(?P<wd>{w.weekdays}){_WORD_END}(?P<wdp>\.?[,،፣]?){_S}*)?"


def _left_boundary(w: _Words) -> str:
    """A date starts a word, or follows a preposition written attached to it (Amharic በ-)."""
    if w.attached == _NEVER:
        return _LB
    return rf"(?:{_LB}|(?<={_LB}(?:{w.attached})))"


def _full_pattern(branches: Sequence[str], w: _Words) -> str:
    """A grammar, matched anchored at a candidate start (or over a whole string)."""
    return rf"{_left_boundary(w)}{_weekday_prefix(w)}(?:{'|'.join(branches)}){_RB}"


def _digit_scanner(w: _Words) -> str:
    """Numeric cores, found at their first separator: ``12/``03/2024, ``2024-``03, ``19.``3.

    Every date contains a core; the full grammar is costly per position, so it runs only where
    a core is found. Starting at the separator (rarer than digits in clinical prose, which is
    full of doses and vitals) and looking around it keeps the scan fast.
    """
    after = [
        rf"{_S}?\d{{1,2}}[\u200e\u200f]?[-/.]{_S}?\d\d",  # D/M/Y (not dosing schemes 1-0-1)
        r"(?<=\d{4}[\u200e\u200f]?[-/.])\d{1,2}[\u200e\u200f]?[-/.]\d",  # Y-M-D
        r"\d{4}(?!\d)",  # M/Y
        r"(?<=(?<!\d)\d{4}-)\d\d(?!\d)",  # Y-MM
    ]
    if w.dm_dot:
        after.append(rf"(?<=\d\.)\d{{1,2}}\.(?!{_S}?\d)")  # D.M.
    # A literal alternation and the cheap digit-ahead test first keep the engine's fast path.
    return rf"(?:/|-|\.)(?={_S}?\d)(?<=\d[\u200e\u200f]?.)(?:{'|'.join(f'(?={a})' for a in after)})"


def _suffix_scanner(w: _Words) -> str:
    """Month numbers written with a suffix ("3月"), found at the suffix."""
    return rf"(?:{w.number_suffixes})(?<=\d{_S}?(?:{w.number_suffixes}))"


def _word_scanner(w: _Words, han_months: str) -> str:
    """Cores that start with a letter: month names and "tháng 3"-style month numbers."""
    words = [rf"(?:{w.months})(?:\.|{_WORD_END})"]
    if w.number_prefixes != _NEVER:
        words.append(rf"(?:{w.number_prefixes}){_S}?\d")
    cores = [rf"\b(?:{'|'.join(words)})"]
    if w.attached != _NEVER:
        cores.append(rf"(?<=\b(?:{w.attached}))(?:{'|'.join(words)})")
    if han_months != _NEVER:
        cores.append(han_months)
    return "|".join(cores)


def _left_pattern(w: _Words) -> str:
    """What may precede a month core inside one date (weekday, day, year), matched backwards."""
    weekday = rf"{_WORD_START}(?:{w.weekdays}){_WORD_END}\.?[,،፣]?{_S}*"
    year = (
        rf"(?:(?:{w.year_prefixes}){_S}?)?(?<!\d)\d{{4}}(?:{_S}?(?:{w.year_words}))?"
        rf"{_S}*(?:[-/]{_S}*)?"
    )
    day = (
        rf"(?:(?:{w.day_prefixes}){_S}?)?(?<!\d)\d{{1,2}}(?:{w.ordinals})?\.?"
        rf"(?:{_S}?(?:{w.day_words}))?{_S}*(?:(?:{w.connectors}){_S}+)?"
    )
    parts = rf"(?:{year}|{day}|(?<!\d)\d{{1,2}}[-/])?(?:(?:{w.month_prefixes}){_S}+)?"
    return rf"(?r)(?:{weekday})?{parts}"


def _range_left_pattern(range_words: Sequence[str]) -> str:
    """The first day of a range right before a day-first date ("12-14 March", "12 au 15 mars"),
    matched backwards."""
    joint = rf"{_S}*[-–—]{_S}*|{_S}+(?:{alternation(range_words)}){_S}+"
    return rf"(?r)(?<![\d.,/:-])(?P<d>\d{{1,2}}\.?)(?:{joint})"


def _weekday_left_pattern(w: _Words) -> str:
    """A weekday right before a numeric date ("Mo., 12.03.2024"), matched backwards."""
    return rf"(?r){_WORD_START}(?:{w.weekdays}){_WORD_END}\.?[,،፣]?{_S}*"


# --- vocabulary of a language set ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Name:
    value: int
    lang: str
    form: str


@dataclass(frozen=True)
class _Vocabulary:
    """Everything the rule and the parser need for one tuple of languages."""

    langs: tuple[str, ...]
    pattern: Pattern  # every form, for parse_date
    numeric: Pattern  # numeric forms, anchored at digit cores
    textual: Pattern  # forms with a month word, anchored at a left extension or a word core
    digit_scanner: Pattern
    word_scanner: Pattern
    suffix_scanner: Pattern | None
    left: Pattern
    weekday_left: Pattern
    range_left: Pattern
    weekday_tails: frozenset[str]
    left_words: frozenset[str]
    months: Mapping[str, _Name]
    weekdays: Mapping[str, _Name]
    ambiguous: frozenset[str]
    needs_year: frozenset[str]
    calendar_year_words: Mapping[str, str]
    not_date: ContextLexicon
    date_context: ContextLexicon
    units: Pattern | None


def _month_names(packs: Sequence[LanguageDates]) -> dict[str, _Name]:
    names: dict[str, _Name] = {}
    for pack in packs:
        for form_name, form in pack.month_forms.items():
            for i, name in enumerate(form.names):
                names.setdefault(name_key(name), _Name(i + 1, pack.code, form_name))
        for key, (month, form_name) in pack.month_variants.items():
            names.setdefault(key, _Name(month, pack.code, form_name))
    return names


def _weekday_names(packs: Sequence[LanguageDates]) -> dict[str, _Name]:
    names: dict[str, _Name] = {}
    for pack in packs:
        for form_name, form in pack.weekday_forms.items():
            for i, name in enumerate(form.names):
                names.setdefault(name_key(name), _Name(i, pack.code, form_name))
        first = next(iter(pack.weekday_forms), "")
        for key, weekday in pack.weekday_variants.items():
            names.setdefault(key, _Name(weekday, pack.code, first))
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


def _words(
    packs: Sequence[LanguageDates], months: Iterable[str], weekdays: Iterable[str]
) -> _Words:
    return _Words(
        months=alternation(months),
        weekdays=alternation(weekdays),
        day_prefixes=alternation(_union(packs, "day_prefixes")),
        ordinals=alternation(s for p in packs for s in p.ordinals.suffixes),
        day_words=alternation(_union(packs, "day_words")),
        connectors=alternation(_union(packs, "connectors")),
        year_prefixes=alternation(_union(packs, "year_prefixes")),
        year_words=alternation(_union(packs, "year_words")),
        month_prefixes=alternation(_union(packs, "month_prefixes")),
        number_prefixes=alternation(_union(packs, "month_number_prefixes")),
        number_suffixes=alternation(_union(packs, "month_number_suffixes")),
        attached=alternation(_union(packs, "attached_prefixes")),
        dm_dot=any(p.dm_dot for p in packs),
    )


@cache
def _vocabulary(langs: tuple[str, ...]) -> _Vocabulary:
    packs = [language_dates(code) for code in langs]
    months = _month_names(packs)
    weekdays = _weekday_names(packs)
    w = _words(packs, months, weekdays)
    numeric, textual = _numeric_branches(w), _textual_branches(w)
    han = alternation(k for k in months if _HAN.match(k))
    weekday_tails = frozenset(k.rsplit(" ", 1)[-1] for k in weekdays)
    units = _union(packs, "units")
    flags = regex.IGNORECASE
    return _Vocabulary(
        langs=langs,
        pattern=compile_pattern(_full_pattern(numeric + textual, w), flags),
        numeric=compile_pattern(_full_pattern(numeric, w), flags),
        textual=compile_pattern(_full_pattern(textual, w), flags),
        digit_scanner=compile_pattern(_digit_scanner(w)),
        word_scanner=compile_pattern(_word_scanner(w, han), flags),
        suffix_scanner=compile_pattern(_suffix_scanner(w)) if w.number_suffixes != _NEVER else None,
        left=compile_pattern(_left_pattern(w), flags),
        weekday_left=compile_pattern(_weekday_left_pattern(w), flags),
        range_left=compile_pattern(_range_left_pattern(_union(packs, "range_words")), flags),
        weekday_tails=weekday_tails,
        left_words=weekday_tails | _left_words(packs),
        months=months,
        weekdays=weekdays,
        ambiguous=frozenset(k for p in packs for k in p.ambiguous),
        needs_year=frozenset(k for p in packs for k in p.needs_year),
        calendar_year_words={k: v for p in packs for k, v in p.calendar_year_words.items()},
        not_date=ContextLexicon(_union(packs, "not_date")),
        date_context=ContextLexicon(_union(packs, "date_context") + _union(packs, "birth_context")),
        units=compile_pattern(rf"{_S}*(?:{alternation(units)}){_RB}", flags) if units else None,
    )


def _codes(langs: Sequence[str]) -> tuple[str, ...]:
    codes = tuple(dict.fromkeys(canonical_language(lang) for lang in langs))
    return codes or ("en",)


# --- reading a match ---------------------------------------------------------------------------


@cache
def _group_index(pattern: Pattern) -> Mapping[str, int]:
    return MappingProxyType(dict(pattern.groupindex))


class _Groups:
    """Named groups of one match, read by index (``regex`` looks names up slowly).

    ``group``/``start``/``end`` take a group name; a name the pattern does not have reads as
    an unmatched group (None, -1).
    """

    __slots__ = ("index", "lastgroup", "match", "values")

    def __init__(self, match: Match) -> None:
        self.match = match
        self.values = match.groups()
        self.index = _group_index(match.re)
        self.lastgroup = match.lastgroup or ""

    def group(self, name: str) -> str | None:
        i = self.index.get(name)
        return None if i is None else self.values[i - 1]

    def start(self, name: str | None = None) -> int:
        if name is None:
            return self.match.start()
        i = self.index.get(name)
        return -1 if i is None else self.match.start(i)

    def end(self, name: str | None = None) -> int:
        if name is None:
            return self.match.end()
        i = self.index.get(name)
        return -1 if i is None else self.match.end(i)

    def text(self) -> str:
        return self.match.group(0)


@dataclass(slots=True)
class _Reading:
    """The values of one match, and which groups hold them (to record the written form)."""

    branch: str
    year: int | None = None
    month: int | None = None
    day: int | None = None
    calendar: str = "gregorian"
    order: str = ""
    day_group: str = ""
    month_group: str = ""
    year_group: str = ""
    month_name: _Name | None = None
    month_key: str = ""
    month_written: str = ""
    month_dot: bool = False
    year_digits: int = 0

    @property
    def two_digit_year(self) -> bool:
        return self.year_digits == 2

    @property
    def kind(self) -> str:
        if self.year is not None and self.day is not None:
            return "full"
        return "month_year" if self.year is not None else "day_month"


def _year_value(digits: str) -> int:
    value = int(digits)
    if len(digits) == 2:
        return value + (2000 if value < TWO_DIGIT_PIVOT else 1900)
    return value


def _valid_day(calendar: str, year: int, month: int, day: int) -> bool:
    return 1 <= day <= days_in_month(calendar, year, month)


def _set_year(r: _Reading, m: _Groups, group: str) -> None:
    digits = m.group(group)
    if digits is not None:
        r.year, r.year_group, r.year_digits = _year_value(digits), group, len(digits)


def _set_calendar(r: _Reading, v: _Vocabulary, marker: str | None) -> None:
    """A calendar marker after the year ("ዓ.ም.") switches a Gregorian reading to its calendar."""
    if marker is not None and r.calendar == "gregorian":
        r.calendar = v.calendar_year_words.get(name_key(marker), "gregorian")


def _read_month(r: _Reading, m: _Groups, b: str, v: _Vocabulary) -> None:
    written = m.group(f"{b}_mn")
    if written is not None:
        key = name_key(written)
        entry = v.months[key]
        r.month, r.month_name, r.month_key, r.month_written = entry.value, entry, key, written
        form = language_dates(entry.lang).month_forms[entry.form]
        r.calendar = form.calendar
        r.month_group = f"{b}_mn"
        r.month_dot = b != "th" and form.abbreviation and m.group(f"{b}_mdot") is not None
        return
    r.month_group = f"{b}_nm" if m.group(f"{b}_nm") is not None else f"{b}_nm2"
    r.month = int(m.group(r.month_group))


def _read_numeric(r: _Reading, m: _Groups, b: str, v: _Vocabulary, order: DateOrder) -> bool:
    if b == "n2":
        if not _same_separators(m):
            return False
        _set_year(r, m, "n2_y")
        _set_calendar(r, v, m.group("n2_yw"))
        return _read_day_month_order(r, m, order)
    r.order = {"n1": "ymd", "n3": "my", "n4": "ym", "n5": "dm"}[b]
    if b != "n5":
        _set_year(r, m, f"{b}_y")
    if b == "n3":
        _set_calendar(r, v, m.group("n3_yw"))
    r.month, r.month_group = int(m.group(f"{b}_m")), f"{b}_m"
    if b in ("n1", "n5"):
        r.day, r.day_group = int(m.group(f"{b}_d")), f"{b}_d"
    return True


def _read_day_month_order(r: _Reading, m: _Groups, order: DateOrder) -> bool:
    """Read D/M/Y or M/D/Y in the preferred order, else the other one; False if neither fits."""
    a, b = int(m.group("n2_a")), int(m.group("n2_b"))
    readings = (("dmy", a, b, "n2_a", "n2_b"), ("mdy", b, a, "n2_b", "n2_a"))
    year = r.year if r.year is not None else LEAP_REFERENCE["gregorian"]
    for written, day, month, day_group, month_group in (
        readings[::-1] if order == "mdy" else readings
    ):
        if _valid_day(r.calendar, year, month, day):
            r.order, r.day, r.month = written, day, month
            r.day_group, r.month_group = day_group, month_group
            return True
    return False


def _same_separators(m: _Groups) -> bool:
    """D/M/Y uses one separator twice; typographic spaces ("19. 3. 2024") need a 4-digit year."""
    first, second = m.group("n2_s"), m.group("n2_s2")
    if first == second and len(first) == 1:
        return True
    if first.strip(_MARKS) != second.strip(_MARKS):
        return False
    return not (first + second).strip(_MARKS[:2]).isspace() or len(m.group("n2_y")) == 4


def _read_textual(r: _Reading, m: _Groups, b: str, v: _Vocabulary) -> None:
    _read_month(r, m, b, v)
    _set_year(r, m, f"{b}_y")
    if b != "t4":
        _set_year(r, m, f"{b}_y2")
    if b != "th":
        _set_calendar(r, v, m.group(f"{b}_yw"))
    if b != "t3" and m.group(f"{b}_d") is not None:
        r.day, r.day_group = int(m.group(f"{b}_d")), f"{b}_d"
    fields = {"th": "dmy", "t1": "dmy", "t2": "mdy", "t3": "my", "t4": "ymd"}[b]
    r.order = "".join(
        c
        for c in fields
        if c == "m" or (c == "d" and r.day is not None) or (c == "y" and r.year is not None)
    )


def _valid(r: _Reading) -> bool:
    cal = r.calendar
    if r.month is None or not 1 <= r.month <= months_in_year(cal):
        return False
    if r.year is not None and not r.two_digit_year:
        low, high = YEAR_RANGE[cal]
        if not low <= r.year <= high:
            return False
    if r.day is not None:
        year = r.year if r.year is not None else LEAP_REFERENCE[cal]
        return _valid_day(cal, year, r.month, r.day)
    return True


def _read(m: _Groups, v: _Vocabulary, order: DateOrder) -> _Reading | None:
    """The values of a grammar match, validated; None when they are not a date."""
    b = m.lastgroup
    r = _Reading(branch=b)
    if b in _NUMERIC:
        if not _read_numeric(r, m, b, v, order):
            return None
    else:
        _read_textual(r, m, b, v)
    return r if _valid(r) else None


# --- parsed dates ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Slot:
    """Where one field of a date is written inside the date's text, and how.

    ``width`` is 2 for a zero-padded number (4 for a year) and 1 for an unpadded one; ``zero``
    is the digit zero of the script the number is written in. Name slots carry the language
    pack, form and letter case; ``dot`` marks an abbreviation dot; ``suffix`` is a written
    ordinal suffix ("st", "er", "º") and ``suffix_lang`` the pack whose rules re-render it.
    """

    field: Literal["day", "month", "year", "weekday"]
    start: int
    end: int
    width: int = 0
    zero: str = "0"
    lang: str = ""
    form: str = ""
    case: str = "as_data"
    dot: bool = False
    suffix: str = ""
    suffix_lang: str = ""


@dataclass(frozen=True, slots=True)
class ParsedDate:
    """One written date, decomposed; :meth:`render` writes other values in the same form.

    ``year`` is the full year (a 2-digit year is expanded around :data:`TWO_DIGIT_PIVOT`),
    ``month`` 1–12 (13 in the Ethiopian calendar), ``weekday`` 0 = Monday. ``order`` is the
    written field order (``"dmy"``, ``"mdy"``, ``"ymd"``, ``"my"``, ``"ym"``, ``"dm"``,
    ``"md"``). The written text is kept for re-rendering but never shown by ``repr``.
    """

    year: int | None
    month: int | None
    day: int | None
    calendar: Calendar = "gregorian"
    order: str = ""
    weekday: int | None = None
    text: str = field(default="", repr=False)
    slots: tuple[Slot, ...] = field(default=(), repr=False)

    def __repr__(self) -> str:
        shown = "".join(
            c for c, x in zip("ymd", (self.year, self.month, self.day), strict=True) if x
        )
        return f"ParsedDate(fields={shown} order={self.order} calendar={self.calendar})"

    __str__ = __repr__

    @property
    def kind(self) -> Literal["full", "month_year", "day_month"]:
        if self.year is not None and self.day is not None:
            return "full"
        return "month_year" if self.year is not None else "day_month"

    @property
    def two_digit_year(self) -> bool:
        return any(s.field == "year" and s.width == 2 for s in self.slots)

    def slot(self, name: str) -> Slot | None:
        return next((s for s in self.slots if s.field == name), None)

    def render(
        self, year: int | None, month: int | None, day: int | None, weekday: int | None = None
    ) -> str:
        """The same written date with other values (fields the date does not show are ignored)."""
        values = {"year": year, "month": month, "day": day, "weekday": weekday}
        out: list[str] = []
        pos = 0
        for slot in self.slots:
            value = values[slot.field]
            out.append(self.text[pos : slot.start])
            out.append(
                self.text[slot.start : slot.end] if value is None else _render_slot(slot, value)
            )
            pos = slot.end
        out.append(self.text[pos:])
        return "".join(out)


def _digits(value: int, width: int, zero: str) -> str:
    text = f"{value % 100:02d}" if width == 2 and value >= 100 else f"{value:0{width}d}"
    if zero == "0":
        return text
    return "".join(chr(ord(zero) + int(c)) for c in text)


def _cased(name: str, case: str) -> str:
    if case == "upper":
        return name.upper()
    if case == "lower":
        return name.lower()
    if case == "title":
        return name[:1].upper() + name[1:]
    return name


def _render_slot(slot: Slot, value: int) -> str:
    if slot.field == "weekday":
        return _cased(language_dates(slot.lang).weekday_forms[slot.form].names[value], slot.case)
    if slot.field == "month" and slot.form:
        pack = language_dates(slot.lang)
        name = pack.month_name(slot.form, value)
        shortened = name_key(name) != name_key(pack.plain_month_name(value))
        return _cased(name, slot.case) + ("." if slot.dot and shortened else "")
    text = _digits(value, slot.width, slot.zero)
    if slot.field == "day" and slot.suffix:
        text += language_dates(slot.suffix_lang).ordinals.suffix_for(value, slot.suffix)
    return text


def _case_of(written: str, canonical: str) -> str:
    if written == canonical or not any(c.lower() != c.upper() for c in written):
        return "as_data"
    if written.isupper():
        return "upper"
    if written.islower():
        return "lower"
    return "title" if written[:1].isupper() else "as_data"


def _zero(digits: str) -> str:
    return chr(ord(digits[0]) - unicodedata.digit(digits[0]))


def _padded(*digits: str) -> int:
    """Numeric dates pad both fields unless one is written with a single digit."""
    return 1 if any(len(d) == 1 for d in digits) else 2


def _leading_zero_width(digits: str) -> int:
    """A lone day or month number is padded only when written with a leading zero."""
    return 2 if len(digits) == 2 and unicodedata.digit(digits[0]) == 0 else 1


def _number_slot(m: _Groups, group: str, name: Literal["day", "month", "year"], width: int) -> Slot:
    digits = m.group(group)
    base = m.start()
    return Slot(name, m.start(group) - base, m.end(group) - base, width, _zero(digits))


def _day_slot(m: _Groups, r: _Reading, langs: Sequence[str], width: int) -> Slot:
    b = r.branch
    suffix = m.group(f"{b}_o") or ""
    if not suffix:
        return _number_slot(m, r.day_group, "day", width)
    key = name_key(suffix)
    lang = next(
        (c for c in langs if key in {name_key(x) for x in language_dates(c).ordinals.suffixes}), ""
    )
    digits = m.group(r.day_group)
    base = m.start()
    return Slot(
        "day",
        m.start(r.day_group) - base,
        m.end(f"{b}_o") - base,
        width,
        _zero(digits),
        suffix=suffix,
        suffix_lang=lang,
    )


def _month_slot(m: _Groups, r: _Reading, width: int) -> Slot:
    if r.month_name is None:
        return _number_slot(m, r.month_group, "month", width)
    entry = r.month_name
    canonical = language_dates(entry.lang).month_forms[entry.form].names[entry.value - 1]
    end = m.end(f"{r.branch}_mdot") if r.month_dot else m.end(r.month_group)
    return Slot(
        "month",
        m.start(r.month_group) - m.start(),
        end - m.start(),
        lang=entry.lang,
        form=entry.form,
        case=_case_of(r.month_written, canonical),
        dot=r.month_dot,
    )


def _weekday_slot(m: _Groups, v: _Vocabulary) -> tuple[Slot, int]:
    written = m.group("wd")
    entry = v.weekdays[name_key(written)]
    canonical = language_dates(entry.lang).weekday_forms[entry.form].names[entry.value]
    slot = Slot(
        "weekday",
        m.start("wd") - m.start(),
        m.end("wd") - m.start(),
        lang=entry.lang,
        form=entry.form,
        case=_case_of(written, canonical),
    )
    return slot, entry.value


def _parsed(m: _Groups, r: _Reading, v: _Vocabulary) -> ParsedDate:
    """Record where and how each field is written, so the date can be re-rendered."""
    slots: list[Slot] = []
    weekday = None
    if m.group("wd") is not None:
        slot, weekday = _weekday_slot(m, v)
        slots.append(slot)
    numeric = r.branch in ("n1", "n2", "n5")
    if r.day is not None:
        width = (
            _padded(m.group(r.day_group), m.group(r.month_group))
            if numeric
            else _leading_zero_width(m.group(r.day_group))
        )
        slots.append(_day_slot(m, r, v.langs, width))
    month_digits = m.group(r.month_group)
    if r.month_name is not None:
        width = 0
    elif numeric and r.day is not None:
        width = _padded(m.group(r.day_group), month_digits)
    else:
        width = (
            2
            if r.branch in ("n3", "n4") and len(month_digits) == 2
            else _leading_zero_width(month_digits)
        )
    slots.append(_month_slot(m, r, width))
    if r.year is not None:
        slots.append(_number_slot(m, r.year_group, "year", len(m.group(r.year_group))))
    slots.sort(key=lambda s: s.start)
    return ParsedDate(
        year=r.year,
        month=r.month,
        day=r.day,
        calendar="ethiopic" if r.calendar == "ethiopic" else "gregorian",
        order=r.order,
        weekday=weekday,
        text=m.text(),
        slots=tuple(slots),
    )


def parse_date(
    text: str, langs: Sequence[str], *, order: DateOrder | None = None
) -> ParsedDate | None:
    """Decompose ``text`` (exactly one written date) in the given languages; None if it is not one.

    ``order`` reads ambiguous numeric dates; by default it follows the first language tag
    (``"en-US"`` reads month first, see :func:`numeric_order`).
    """
    vocab = _vocabulary(_codes(langs))
    if order is None:
        order = numeric_order(langs[0]) if langs else "dmy"
    try:
        match = vocab.pattern.fullmatch(text, timeout=PATTERN_TIMEOUT_S)
    except TimeoutError:
        return None
    if match is None:
        return None
    m = _Groups(match)
    reading = _read(m, vocab, order)
    return None if reading is None else _parsed(m, reading, vocab)


# --- the rule ----------------------------------------------------------------------------------

_NUMERIC = frozenset({"n1", "n2", "n3", "n4", "n5"})
_SOURCES = {
    "n1": "rule.date.numeric.v1",
    "n2": "rule.date.numeric.v1",
    "n3": "rule.date.partial.v1",
    "n4": "rule.date.partial.v1",
    "n5": "rule.date.partial.v1",
}
_TEXTUAL_SOURCE = "rule.date.textual.v1"
#: Readings scoring at least this hide the cores they cover from further readings.
_STRONG_SCORE = 0.95
_RANGE_SOURCE = "rule.date.range.v1"
_BASE_SCORE = {"n1": 0.97, "n2": 0.97, "n3": 0.8, "n4": 0.75, "n5": 0.75}
#: Longest stretch of text one anchored match may look at (a date is far shorter).
_WINDOW = 200
#: How far left of a month word a date may start ("Wednesday, the 12th of" and the like).
_LEFT_REACH = 64
_TRAILING_PUNCTUATION = " \t\u00a0.,،፣"
_DIGIT = compile_pattern(r"\d")
_NUMBER_CHAIN = compile_pattern(r"[-/]\d+[-/]\d")


class DateRule(RuleDetector):
    """Calendar dates and date-times, numeric and written with month names (label DATE).

    Scanning passes under the rule layer's time limit find *cores* (a numeric date shape at its
    first separator, a month word, a month number with 月); the full grammar is then
    matched anchored at each core, or at its left extension (weekday, day, year before a month
    word). Those anchored matches run on at most :data:`_WINDOW` characters, so they cannot
    backtrack for long and need no time limit of their own.
    """

    id: ClassVar[str] = "rules.dates.v1"
    labels: ClassVar[frozenset[Category | Fact]] = frozenset({Category.DATE})

    def find(self, segment: Segment) -> Iterator[Span]:
        v, order = _segment_setup(segment.lang, segment.countries)
        text = segment.text
        last_end = 0
        for start, numeric in self._cores(v, segment):
            if start < last_end:
                continue
            found = _date_at(v, order, text, start, numeric, last_end)
            if found is not None:
                span, reading = found
                if reading.order.startswith("d"):
                    yield from _range_start(v, text, span.start, last_end)
                # A weak reading ("10.2. 2004" after a lab value) does not hide the cores
                # inside it: their own readings are offered too, and resolution decides.
                if span.score >= _STRONG_SCORE:
                    last_end = span.end
                yield span

    def _cores(self, v: _Vocabulary, segment: Segment) -> Iterator[tuple[int, bool]]:
        """``(start, numeric)`` of every core, in text order."""
        text = segment.text
        numeric = (
            (_digits_start(text, m.start()), True)
            for m in guarded_finditer(v.digit_scanner, segment, self.id)
        )
        words = ((m.start(), False) for m in guarded_finditer(v.word_scanner, segment, self.id))
        streams = [numeric, words]
        if v.suffix_scanner is not None:
            streams.append(
                (_digits_start(text, _skip_space_back(text, m.start())), False)
                for m in guarded_finditer(v.suffix_scanner, segment, self.id)
            )
        return heapq.merge(*streams)


@lru_cache(maxsize=512)
def _segment_setup(lang: str, countries: tuple[str, ...]) -> tuple[_Vocabulary, DateOrder]:
    """The vocabulary and numeric order for a segment's language tag and countries."""
    probe = Segment(text="", lang=lang, countries=countries)
    return _vocabulary(_codes(segment_languages(probe))), date_order(probe)


def _may_extend_left(v: _Vocabulary, text: str, pos: int, numeric: bool) -> bool:
    """Whether the token before a core can belong to the date (saves the left match mostly)."""
    before = text[max(0, pos - 24) : pos]
    stripped = before.rstrip(_TRAILING_PUNCTUATION)
    if not stripped:
        return False
    token = stripped.rsplit(None, 1)[-1]
    if not numeric and (before[-1] in "-/" or any(c.isdigit() for c in token)):
        return True  # a day or year: "12 March", "12-Mar", "2024年3月"
    if not numeric and _HAN.match(token[-1]):
        return True
    return name_key(token) in (v.weekday_tails if numeric else v.left_words)


def _range_start(v: _Vocabulary, text: str, date_start: int, floor: int) -> Iterator[Span]:
    """The opening day of a range ending in the date at ``date_start``, as its own span."""
    m = v.range_left.match(text, max(floor, date_start - 24), date_start)
    if m is not None and 1 <= int(m.group("d").rstrip(".")) <= 31:
        yield Span(m.start("d"), m.end("d"), Category.DATE, _RANGE_SOURCE, 0.9)


def _digit_near(text: str, pos: int) -> bool:
    """Whether a digit is within reach of a month word (every written form has one)."""
    lo, hi = max(0, pos - _LEFT_REACH), min(len(text), pos + _LEFT_REACH)
    return _DIGIT.search(text, lo, hi) is not None


def _digits_start(text: str, pos: int) -> int:
    """Start of the (at most 4) digits, and a bidi mark, right before ``pos``."""
    i = pos
    if i > 0 and text[i - 1] in "\u200e\u200f":
        i -= 1
    while i > 0 and pos - i < 5 and text[i - 1].isdigit():
        i -= 1
    return i


def _skip_space_back(text: str, pos: int) -> int:
    return pos - 1 if pos > 0 and text[pos - 1].isspace() else pos


def _date_at(
    v: _Vocabulary, order: DateOrder, text: str, pos: int, numeric: bool, floor: int
) -> tuple[Span, _Reading] | None:
    """The accepted date at a core, tried from its furthest left extension first."""
    if not numeric and not _digit_near(text, pos):
        return None  # every written form has a day or a year next to the month word
    grammar, left = (v.numeric, v.weekday_left) if numeric else (v.textual, v.left)
    extension = None
    if _may_extend_left(v, text, pos, numeric):
        extension = left.match(text, max(floor, pos - _LEFT_REACH), pos)
    for start in dict.fromkeys((extension.start() if extension else pos, pos)):
        match = grammar.match(text, start, min(len(text), start + _WINDOW))
        if match is not None and match.end() > pos:
            accepted = _accept(_Groups(match), v, order, text)
            if accepted is not None:
                return accepted
    return None


def _accept(
    m: _Groups, v: _Vocabulary, order: DateOrder, text: str
) -> tuple[Span, _Reading] | None:
    r = _read(m, v, order)
    if r is None:
        return None
    span = _accepted_span(m, r, v, text)
    return None if span is None else (span, r)


def _accepted_span(m: _Groups, r: _Reading, v: _Vocabulary, text: str) -> Span | None:
    b = r.branch
    start, end = _span_bounds(m, r, v)
    if not _boundaries_ok(text, start, end, m, b) or _looks_like_measurement(m, r, v, text):
        return None
    if b in _NUMERIC:
        return _numeric_span(m, r, v, text, start, end)
    if r.month_name is not None:
        form = language_dates(r.month_name.lang).month_forms[r.month_name.form]
        if form.dot_required and not r.month_dot:
            return None
    ambiguous = r.month_key in v.ambiguous
    if ambiguous and not (r.kind == "full" or r.month_written[:1].isupper()):
        return None  # "may", "mar": a full date, or a capital next to a number
    if r.year is None and r.month_key in v.needs_year:
        return None
    score = (0.99 if r.kind == "full" else 0.95) - (0.1 if ambiguous else 0.0)
    return Span(start, end, Category.DATE, _TEXTUAL_SOURCE, score)


def _span_bounds(m: _Groups, r: _Reading, v: _Vocabulary) -> tuple[int, int]:
    """The match, less a weekday abbreviation written without punctuation, an invalid time,
    and a full stop after an unabbreviated month name ending the date ("3rd of April.")."""
    b = r.branch
    start, end = m.start(), m.end()
    if r.month_name is not None and not r.month_dot and b != "th" and m.end(f"{b}_mdot") == end:
        end -= 1
    weekday = m.group("wd")
    if weekday is not None and m.group("wdp") == "":
        entry = v.weekdays[name_key(weekday)]
        glued = m.end("wd") == m.start(b)
        if glued or language_dates(entry.lang).weekday_forms[entry.form].abbreviation:
            start = m.start(b)
    time = m.group(f"{b}_t")
    if time is not None and not _valid_time(time):
        end = m.start(f"{b}_ts")
    return start, end


def _valid_time(written: str) -> bool:
    parts = written.split(":")
    hour, minute = int(parts[0]), int(parts[1][:2])
    second = int(parts[2][:2]) if len(parts) > 2 else 0
    return hour < 24 and minute < 60 and second < 60


def _separator(m: _Groups, b: str) -> str:
    return (m.group(f"{b}_s") or "").strip(_MARKS)


def _boundaries_ok(text: str, start: int, end: int, m: _Groups, b: str) -> bool:
    """Reject dates glued into identifiers, paths, version or phone numbers."""
    numeric = b in _NUMERIC
    sep = _separator(m, b)
    prev = text[start - 1] if start > 0 else ""
    before = text[start - 2] if start > 1 else ""
    if (prev and prev in "/\\_") or (prev == "." and before.isdigit()):
        return False
    if prev == "-" and before.isalnum() and (before.isalpha() or (numeric and sep == "-")):
        return False
    nxt = text[end] if end < len(text) else ""
    after = text[end + 1] if end + 1 < len(text) else ""
    if numeric and after.isdigit() and nxt and (nxt in "/\\." or (nxt == "-" and sep == "-")):
        return False
    if not numeric and _NUMBER_CHAIN.match(text, end, min(len(text), end + 12)):
        return False  # "Abril 18-2-1": a house number, not a day
    return not (numeric and nxt and nxt in "/\\_")


def _looks_like_measurement(m: _Groups, r: _Reading, v: _Vocabulary, text: str) -> bool:
    """A date ending in a bare day number followed by a unit ("March 12 mg") is a quantity."""
    if v.units is None or r.year is not None or r.branch not in ("t2", "t4"):
        return False
    return v.units.match(text, m.end(), min(len(text), m.end() + 40)) is not None


def _numeric_span(
    m: _Groups, r: _Reading, v: _Vocabulary, text: str, start: int, end: int
) -> Span | None:
    b = r.branch
    if _version_like(m, r) and v.not_date.near(text, start, end, before=24):
        return None
    if b == "n3" and _separator(m, b) == "/" and m.group("n3_m") == "1" and _round(r.year or 1):
        return None  # 1/2000, 1/2048: a dilution or titre more often than a January
    if b == "n5" and _opens_line(text, start):
        return None  # "1.2." opening a line is a section number
    score = _BASE_SCORE[b] - (0.07 if r.two_digit_year else 0.0)
    if _uneven_spacing(text[start:end]):
        score -= 0.1  # "10.2. 2004": a value ending a sentence, then a year, more often
    if score < 0.95 and v.date_context.near(text, start, end, before=30):
        score = min(0.95, score + 0.15)
    return Span(start, end, Category.DATE, _SOURCES[b], score)


def _uneven_spacing(written: str) -> bool:
    """Whether a numeric date has a space after one separator but not after another."""
    seps = [i for i, ch in enumerate(written) if ch in "./-"]
    spaced = [i + 1 < len(written) and written[i + 1] == " " for i in seps[:2]]
    return len(spaced) == 2 and spaced[0] != spaced[1]


def _round(year: int) -> bool:
    """Dilution-like numbers: multiples of 100 and powers of two."""
    return year % 100 == 0 or year & (year - 1) == 0


def _version_like(m: _Groups, r: _Reading) -> bool:
    """Shapes a version, section or score number can take: dotted, partial or 2-digit year."""
    if r.branch in ("n3", "n4", "n5") or r.two_digit_year:
        return True
    return r.branch == "n1" and _separator(m, r.branch) == "."


def _opens_line(text: str, start: int) -> bool:
    """Whether only spaces precede ``start`` on its line (looking back a bounded distance)."""
    before = text[max(0, start - 80) : start]
    line = before.rsplit("\n", 1)[-1]
    return line.strip() == "" and (len(line) < len(before) or start <= 80)


def find_dates(text: str, lang: str = "en", countries: Sequence[str] = ()) -> list[Span]:
    """Date spans of a plain string (a convenience for scripts and tests)."""
    return DateRule().detect(Segment(text=text, lang=lang, countries=tuple(countries)))
