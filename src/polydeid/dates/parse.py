"""Reading a written date: its values, validity and written form, and re-rendering it.

:func:`parse_date` matches one written date against the full grammar, reads the values of the
match (a :class:`Reading`: day, month, year, calendar, field order) and records where and how
each field is written (:class:`Slot`: zero padding, digit script, name form, letter case,
abbreviation dot, ordinal suffix), so that the :class:`ParsedDate` can re-render itself with
other values in exactly the same written form (the date-shift operator uses it). The date rule
reads its matches with :func:`read_match`.

Validity: month 1–12 (1–13 in the Ethiopian calendar), day within the month (29 February only
in leap years; a date without a year is checked against a leap year,
:data:`~polydeid.dates.calendar.LEAP_REFERENCE`), 4-digit years within
:data:`~polydeid.dates.calendar.YEAR_RANGE` (1900–2100, Ethiopian 1890–2095). A 2-digit year
is expanded around :data:`~polydeid.dates.calendar.TWO_DIGIT_PIVOT`. An ambiguous numeric date
(``03/04/2024``) is read in the order given, or in the other one when that order is impossible.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from types import MappingProxyType
from typing import Literal

from polydeid.dates.calendar import (
    LEAP_REFERENCE,
    TWO_DIGIT_PIVOT,
    YEAR_RANGE,
    Granularity,
    days_in_month,
    granularity_of,
    months_in_year,
)
from polydeid.dates.grammar import MARKS, NUMERIC_BRANCHES, grammar
from polydeid.dates.vocabulary import NameEntry, Vocabulary, language_codes, numeric_order
from polydeid.locales.dates import Calendar, DateOrder, language_dates, name_key
from polydeid.text.digits import digit_value, digits_int, zero_of
from polydeid.text.patterns import PATTERN_TIMEOUT_S, Match, Pattern

__all__ = ["MatchGroups", "ParsedDate", "Reading", "Slot", "parse_date", "read_match"]

# --- reading a match ---------------------------------------------------------------------------


@cache
def _group_index(pattern: Pattern) -> Mapping[str, int]:
    return MappingProxyType(dict(pattern.groupindex))


class MatchGroups:
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
class Reading:
    """The values of one match, and which groups hold them (to record the written form). Its
    repr shows the groups, never the date's values or words."""

    branch: str
    year: int | None = field(default=None, repr=False)
    month: int | None = field(default=None, repr=False)
    day: int | None = field(default=None, repr=False)
    calendar: str = "gregorian"
    order: str = ""
    day_group: str = ""
    month_group: str = ""
    year_group: str = ""
    month_name: NameEntry | None = field(default=None, repr=False)
    month_key: str = field(default="", repr=False)
    month_written: str = field(default="", repr=False)
    month_dot: bool = False
    year_digits: int = 0

    @property
    def two_digit_year(self) -> bool:
        return self.year_digits == 2

    @property
    def kind(self) -> Granularity:
        return granularity_of(self.year, self.month, self.day)


def _year_value(digits: str) -> int:
    value = digits_int(digits)
    if len(digits) == 2:
        return value + (2000 if value < TWO_DIGIT_PIVOT else 1900)
    return value


def _valid_day(calendar: str, year: int, month: int, day: int) -> bool:
    return 1 <= day <= days_in_month(calendar, year, month)


def _set_year(r: Reading, m: MatchGroups, group: str) -> None:
    digits = m.group(group)
    if digits is not None:
        r.year, r.year_group, r.year_digits = _year_value(digits), group, len(digits)


def _set_calendar(r: Reading, v: Vocabulary, marker: str | None) -> None:
    """A calendar marker after the year ("ዓ.ም.") switches a Gregorian reading to its calendar."""
    if marker is not None and r.calendar == "gregorian":
        r.calendar = v.calendar_year_words.get(name_key(marker), "gregorian")


def _read_month(r: Reading, m: MatchGroups, b: str, v: Vocabulary) -> None:
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
    r.month = digits_int(m.group(r.month_group))


def _read_numeric(r: Reading, m: MatchGroups, b: str, v: Vocabulary, order: DateOrder) -> bool:
    if b == "n2":
        if not _same_separators(m):
            return False
        _set_year(r, m, "n2_y")
        _set_calendar(r, v, m.group("n2_yw"))
        return _read_day_month_order(r, m, order)
    if b == "n6":
        return _read_day_month_order(r, m, order, "n6")
    r.order = {"n1": "ymd", "n3": "my", "n4": "ym", "n5": "dm"}[b]
    if b != "n5":
        _set_year(r, m, f"{b}_y")
    if b == "n3":
        _set_calendar(r, v, m.group("n3_yw"))
    r.month, r.month_group = digits_int(m.group(f"{b}_m")), f"{b}_m"
    if b in ("n1", "n5"):
        r.day, r.day_group = digits_int(m.group(f"{b}_d")), f"{b}_d"
    return True


def _read_day_month_order(r: Reading, m: MatchGroups, order: DateOrder, b: str = "n2") -> bool:
    """Read D/M(/Y) or M/D(/Y) in the preferred order, else the other one; False if neither
    fits. A date without a year (branch ``n6``) is written ``dm`` or ``md``."""
    a, c = digits_int(m.group(f"{b}_a")), digits_int(m.group(f"{b}_b"))
    dm, md = ("dmy", "mdy") if b == "n2" else ("dm", "md")
    readings = ((dm, a, c, f"{b}_a", f"{b}_b"), (md, c, a, f"{b}_b", f"{b}_a"))
    year = r.year if r.year is not None else LEAP_REFERENCE["gregorian"]
    for written, day, month, day_group, month_group in (
        readings[::-1] if order == "mdy" else readings
    ):
        if _valid_day(r.calendar, year, month, day):
            r.order, r.day, r.month = written, day, month
            r.day_group, r.month_group = day_group, month_group
            return True
    return False


def _same_separators(m: MatchGroups) -> bool:
    """D/M/Y uses one separator twice; typographic spaces ("19. 3. 2024") need a 4-digit year."""
    first, second = m.group("n2_s"), m.group("n2_s2")
    if first == second and len(first) == 1:
        return True
    if first.strip(MARKS) != second.strip(MARKS):
        return False
    return not (first + second).strip(MARKS[:2]).isspace() or len(m.group("n2_y")) == 4


def _read_textual(r: Reading, m: MatchGroups, b: str, v: Vocabulary) -> None:
    _read_month(r, m, b, v)
    _set_year(r, m, f"{b}_y")
    if b != "t4":
        _set_year(r, m, f"{b}_y2")
    if b != "th":
        _set_calendar(r, v, m.group(f"{b}_yw"))
    if b != "t3" and m.group(f"{b}_d") is not None:
        r.day, r.day_group = digits_int(m.group(f"{b}_d")), f"{b}_d"
    fields = {"th": "dmy", "t1": "dmy", "t2": "mdy", "t3": "my", "t4": "ymd"}[b]
    r.order = "".join(
        c
        for c in fields
        if c == "m" or (c == "d" and r.day is not None) or (c == "y" and r.year is not None)
    )


def _valid(r: Reading) -> bool:
    cal = r.calendar
    if r.branch == "y":
        return r.year is not None and (
            r.two_digit_year or YEAR_RANGE[cal][0] <= r.year <= YEAR_RANGE[cal][1]
        )
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


def read_match(m: MatchGroups, v: Vocabulary, order: DateOrder) -> Reading | None:
    """The values of a grammar match, validated; None when they are not a date."""
    b = m.lastgroup
    r = Reading(branch=b)
    if b in NUMERIC_BRANCHES:
        if not _read_numeric(r, m, b, v, order):
            return None
    elif b == "y":
        _set_year(r, m, "y_y")
        _set_year(r, m, "y_y2")
        r.order = "y"
    else:
        _read_textual(r, m, b, v)
    return r if _valid(r) else None


# --- parsed dates, re-rendered -----------------------------------------------------------------


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
    def kind(self) -> Granularity:
        """Which fields the date shows (a :class:`Granularity`, a string enum)."""
        return granularity_of(self.year, self.month, self.day)

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
    return zero_of(digits[0])


def _padded(*digits: str) -> int:
    """Numeric dates pad both fields unless one is written with a single digit."""
    return 1 if any(len(d) == 1 for d in digits) else 2


def _leading_zero_width(digits: str) -> int:
    """A lone day or month number is padded only when written with a leading zero."""
    return 2 if len(digits) == 2 and digit_value(digits[0]) == 0 else 1


def _number_slot(
    m: MatchGroups, group: str, name: Literal["day", "month", "year"], width: int
) -> Slot:
    digits = m.group(group)
    base = m.start()
    return Slot(name, m.start(group) - base, m.end(group) - base, width, _zero(digits))


def _day_slot(m: MatchGroups, r: Reading, langs: Sequence[str], width: int) -> Slot:
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


def _month_slot(m: MatchGroups, r: Reading, width: int) -> Slot:
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


def _weekday_slot(m: MatchGroups, v: Vocabulary) -> tuple[Slot, int]:
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


def _parsed(m: MatchGroups, r: Reading, v: Vocabulary) -> ParsedDate:
    """Record where and how each field is written, so the date can be re-rendered."""
    slots: list[Slot] = []
    weekday = None
    if m.group("wd") is not None:
        slot, weekday = _weekday_slot(m, v)
        slots.append(slot)
    numeric = r.branch in ("n1", "n2", "n5", "n6")
    if r.day is not None:
        width = (
            _padded(m.group(r.day_group), m.group(r.month_group))
            if numeric
            else _leading_zero_width(m.group(r.day_group))
        )
        slots.append(_day_slot(m, r, v.langs, width))
    month_digits = m.group(r.month_group) if r.month_group else ""
    if r.month is None or r.month_name is not None:
        width = 0
    elif numeric and r.day is not None:
        width = _padded(m.group(r.day_group), month_digits)
    else:
        width = (
            2
            if r.branch in ("n3", "n4") and len(month_digits) == 2
            else _leading_zero_width(month_digits)
        )
    if r.month is not None:
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
    g = grammar(language_codes(langs))
    if order is None:
        order = numeric_order(langs[0]) if langs else "dmy"
    try:
        match = g.pattern.fullmatch(text, timeout=PATTERN_TIMEOUT_S)
    except TimeoutError:
        return None
    if match is None:
        return None
    m = MatchGroups(match)
    reading = read_match(m, g.vocabulary, order)
    return None if reading is None else _parsed(m, reading, g.vocabulary)
