"""The ``dates.toml`` locale data kind: the typed, validated view of one language's date words.

``locales/languages/<code>/dates.toml`` lists how the language writes dates: the numeric field
order (and the regions that write the month first), the words inside a date (day and year
prefixes, connectors such as "de", year words such as "г." or "年", calendar markers such as
"ዓ.ም."), ordinal suffixes, month and weekday names in each written form, ambiguous month
names, context words and measurement units (the schema is described at the top of
``languages/en/dates.toml``). :func:`language_dates` reads it into a :class:`LanguageDates`;
names that are looked up are stored as :func:`name_key` keys.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache, lru_cache
from types import MappingProxyType
from typing import Any, Literal, get_args

from polydeid.core.errors import ConfigError
from polydeid.locales import canonical_language, language_data
from polydeid.text.patterns import compile_pattern

__all__ = [
    "CALENDARS",
    "DAY_MONTH_SEPARATORS",
    "Calendar",
    "CalendarNameForm",
    "DateOrder",
    "LanguageDates",
    "Ordinals",
    "language_dates",
    "name_key",
]

#: How an ambiguous numeric date (``03/04/2024``) is read: day first or month first.
DateOrder = Literal["dmy", "mdy"]
#: Calendars a month-name form may belong to.
Calendar = Literal["gregorian", "ethiopic"]
CALENDARS: frozenset[str] = frozenset(get_args(Calendar))


@dataclass(frozen=True, slots=True)
class CalendarNameForm:
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
    alone_year_prefixes: tuple[str, ...]
    month_prefixes: tuple[str, ...]
    attached_prefixes: tuple[str, ...]
    month_number_prefixes: tuple[str, ...]
    month_number_suffixes: tuple[str, ...]
    range_words: tuple[str, ...]
    day_month_separators: tuple[str, ...]
    calendar_year_words: Mapping[str, str]
    ordinals: Ordinals
    month_forms: Mapping[str, CalendarNameForm]
    month_variants: Mapping[str, tuple[int, str]]
    weekday_forms: Mapping[str, CalendarNameForm]
    weekday_variants: Mapping[str, int]
    ambiguous: frozenset[str]
    needs_year: frozenset[str]
    date_context: tuple[str, ...]
    birth_context: tuple[str, ...]
    not_date: tuple[str, ...]
    not_date_after: tuple[str, ...]
    day_month_context: tuple[str, ...]
    year_context: tuple[str, ...]
    month_context: tuple[str, ...]
    time_context: tuple[str, ...]
    units: tuple[str, ...]
    #: Words right after a four-digit number that make it a clock time ("1930 h", "2000 Uhr").
    clock_units: tuple[str, ...]

    def month_name(self, form: str, month: int) -> str:
        return self.month_forms[form].names[month - 1]

    def twelve_month_names(self) -> tuple[str, ...]:
        """The first unabbreviated month form with twelve names (``full``, ``genitive``, …;
        not a thirteen-month calendar's), or ()."""
        return next(
            (
                f.names
                for f in self.month_forms.values()
                if len(f.names) == 12 and not f.abbreviation
            ),
            (),
        )

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


def _forms(raw: Mapping[str, Any], where: str, count: int) -> Mapping[str, CalendarNameForm]:
    forms: dict[str, CalendarNameForm] = {}
    for name, table in raw.items():
        names = _strings(table.get("names"), f"{where}.{name}")
        calendar = table.get("calendar", "gregorian")
        expected = 13 if calendar == "ethiopic" else count
        if len(names) != expected or calendar not in CALENDARS:
            raise ConfigError(
                f"form needs {expected} names and a known calendar", location=f"{where}.{name}"
            )
        forms[name] = CalendarNameForm(
            names=names,
            abbreviation=bool(table.get("abbreviation", False)),
            dot_required=bool(table.get("dot_required", False)),
            calendar=calendar,
        )
    return MappingProxyType(forms)


def _month_variants(
    raw: Mapping[str, Any], forms: Mapping[str, CalendarNameForm], where: str
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


#: Separators a day and month may be written with when no year follows ("9/7", "24-7").
DAY_MONTH_SEPARATORS = frozenset({"/", "-"})


def _separators(raw: Any, where: str) -> tuple[str, ...]:
    seps = _strings(raw, f"{where} grammar.day_month_separators")
    if not set(seps) <= DAY_MONTH_SEPARATORS:
        raise ConfigError(
            f"day_month_separators may hold only {sorted(DAY_MONTH_SEPARATORS)}", location=where
        )
    return seps


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
        alone_year_prefixes=words("alone_year_prefixes"),
        month_prefixes=words("month_prefixes"),
        attached_prefixes=words("attached_prefixes"),
        month_number_prefixes=words("month_number_prefixes"),
        month_number_suffixes=words("month_number_suffixes"),
        range_words=words("range_words"),
        day_month_separators=_separators(grammar.get("day_month_separators"), where),
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
        not_date_after=_strings(context.get("not_date_after"), where),
        day_month_context=_announcing(context, "day_month", where),
        year_context=_announcing(context, "year", where),
        month_context=_announcing(context, "year", where) + _strings(context.get("month"), where),
        time_context=_strings(context.get("time"), where),
        units=_strings(raw.get("units", {}).get("after_number"), where),
        clock_units=_strings(raw.get("units", {}).get("clock"), where),
    )


def _announcing(context: Mapping[str, Any], key: str, where: str) -> tuple[str, ...]:
    """The ``[context]`` words ``key`` and the ``date`` and ``birth`` words: whatever announces
    a date announces a yearless date or a year alone too."""
    keys = (key, "date", "birth")
    return tuple(dict.fromkeys(w for k in keys for w in _strings(context.get(k), where)))
