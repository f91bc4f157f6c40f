"""Date shifting: move every date of one patient by the same key-derived number of days.

The offset comes from HMAC-SHA256 of the patient's identifier under the date-shift key, so it
is deterministic per (key, patient), never 0, and reveals nothing about the patient without
the key. A shifted date is written in exactly the form of the original (numeric order and
separators, zero padding, 2- or 4-digit year, month name in the same language, form, case and
grammatical case, ordinal suffix, digit script, weekday, time part kept verbatim).

What "shift by ``days``" means for each kind of written date:

* **full dates** (day, month, year) move by exactly ``days`` (Gregorian or Ethiopian calendar,
  through the day number), so intervals between the full dates of a document are preserved;
  2-digit years are read around :data:`~polydeid.dates.TWO_DIGIT_PIVOT` and
  written back as 2 digits.
* **day and month without a year** ("12 de marzo", "19.3.") move by ``days`` inside a
  reference year: ``reference_year`` when given (the document's year, say), else the leap year
  2000 (Ethiopian 2015), so 29 February is always valid and every yearless date of a document
  moves alike. If the real year is not a leap year a shift across the end of February can be
  one day off for that date; intervals among yearless dates are otherwise preserved.
* **month and year** ("March 2024", "03/2024") move by whole months: ``days`` divided by the
  mean Gregorian month (30.436875 days), rounded half away from zero. A shift under about 15
  days therefore leaves a month-year unchanged; month-year intervals are preserved exactly.
* a **year alone** ("2004", "'95") moves by whole years: ``days`` divided by the mean
  Gregorian year (365.2425 days), rounded half away from zero, so a shift under half a year
  leaves it unchanged (the operator then writes a tag instead, as for an unchanged month-year);
  a two-digit year stays two digits. Year intervals are preserved exactly, and a year moves
  the way the years of the patient's full dates move on average.
* a **weekday** written with the date moves by ``days`` modulo 7 (right for any year).

Numeric dates such as ``03/04/2024`` are read in the order given (``order``), by default the
one the first language tag implies (``en-US`` reads month first; see
:func:`polydeid.dates.numeric_order`). Read every date of a document in the same
order so their intervals survive; the operator should pass the segment's
:func:`~polydeid.dates.date_order`.
"""

from __future__ import annotations

import hashlib
import hmac
import math
from collections.abc import Sequence
from datetime import date, timedelta

from polydeid.core.errors import ConfigError, KeyMaterialError
from polydeid.dates import (
    LEAP_REFERENCE,
    DateOrder,
    ParsedDate,
    days_in_month,
    from_ordinal,
    months_in_year,
    parse_date,
    read_compact,
    to_ordinal,
)

__all__ = [
    "MEAN_MONTH_DAYS",
    "MEAN_YEAR_DAYS",
    "months_for_days",
    "patient_offset_days",
    "shift_compact",
    "shift_date_text",
    "shift_parsed",
    "years_for_days",
]

#: Mean length of a Gregorian year, and of its month, in days.
MEAN_YEAR_DAYS = 365.2425
MEAN_MONTH_DAYS = MEAN_YEAR_DAYS / 12


def patient_offset_days(key: bytes, patient: str, *, max_days: int = 365, min_days: int = 1) -> int:
    """The patient's date offset: HMAC-SHA256(key, "dateshift:" + patient) mapped onto
    ``[-max_days, -min_days] ∪ [min_days, max_days]``; never 0 (a ``min_days`` below 1 counts
    as 1)."""
    if not isinstance(key, bytes | bytearray) or not key:
        raise KeyMaterialError("the date-shift key must be non-empty bytes")
    low = max(1, min_days)
    if max_days < low:
        raise ConfigError(f"date-shift range is empty: min_days={min_days}, max_days={max_days}")
    digest = hmac.new(bytes(key), ("dateshift:" + patient).encode("utf-8"), hashlib.sha256).digest()
    draw = int.from_bytes(digest[:8], "big")
    magnitude = low + (draw >> 1) % (max_days - low + 1)
    return -magnitude if draw & 1 else magnitude


def shift_date_text(
    text: str,
    days: int,
    langs: Sequence[str],
    *,
    order: DateOrder | None = None,
    reference_year: int | None = None,
) -> str | None:
    """``text`` (one written date, surrounding spaces kept) moved by ``days`` in the same
    written form; None when it cannot be parsed as a date in ``langs``."""
    core = text.strip()
    if not core:
        return None
    lead = text[: len(text) - len(text.lstrip())]
    trail = text[len(text.rstrip()) :]
    compact = shift_compact(core, days)
    if compact is not None:
        return lead + compact + trail
    parsed = parse_date(core, langs, order=order)
    if parsed is None:
        return None
    return lead + shift_parsed(parsed, days, reference_year=reference_year) + trail


def shift_compact(core: str, days: int) -> str | None:
    """An HL7 compact timestamp (``19800302``, ``198003021230+0300``) moved by ``days`` at
    its own precision: day precision by days, month or year precision by whole months; the
    time of day and the zone are kept. None when ``core`` is not one (a time needs a day)."""
    c = read_compact(core)
    if c is None:
        return None
    if c.day is not None and c.month is not None:
        try:
            moved = date(c.year, c.month, c.day) + timedelta(days=days)
        except (ValueError, OverflowError):
            return None
        return f"{moved:%Y%m%d}{c.rest}{c.zone}"
    year, month = _add_months("gregorian", c.year, c.month or 1, months_for_days(days))
    return f"{year:04d}{month:02d}{c.zone}" if c.month else f"{year:04d}{c.zone}"


def shift_parsed(parsed: ParsedDate, days: int, *, reference_year: int | None = None) -> str:
    """The parsed date moved by ``days`` and rendered in its own written form."""
    weekday = None if parsed.weekday is None else (parsed.weekday + days) % 7
    cal = parsed.calendar
    month = parsed.month
    if month is None:  # a year alone
        assert parsed.year is not None
        return parsed.render(parsed.year + years_for_days(days), None, None, weekday)
    if parsed.kind == "full":
        assert parsed.year is not None and parsed.day is not None
        year, month, day = from_ordinal(cal, to_ordinal(cal, parsed.year, month, parsed.day) + days)
        return parsed.render(year, month, day, weekday)
    if parsed.kind == "day_month":
        assert parsed.day is not None
        year = _reference_year(cal, month, parsed.day, reference_year)
        _, month, day = from_ordinal(cal, to_ordinal(cal, year, month, parsed.day) + days)
        return parsed.render(None, month, day, weekday)
    assert parsed.year is not None
    year, month = _add_months(cal, parsed.year, month, months_for_days(days))
    return parsed.render(year, month, None, weekday)


def years_for_days(days: int) -> int:
    """Whole years a day offset amounts to (rounded half away from zero)."""
    return int(math.copysign(math.floor(abs(days) / MEAN_YEAR_DAYS + 0.5), days))


def months_for_days(days: int) -> int:
    """Whole months a day offset amounts to (rounded half away from zero)."""
    return int(math.copysign(math.floor(abs(days) / MEAN_MONTH_DAYS + 0.5), days))


def _add_months(calendar: str, year: int, month: int, months: int) -> tuple[int, int]:
    per_year = months_in_year(calendar)
    index = year * per_year + (month - 1) + months
    return index // per_year, index % per_year + 1


def _reference_year(calendar: str, month: int, day: int, wanted: int | None) -> int:
    """The year a yearless date is placed in: ``wanted`` when the date exists there."""
    if (
        wanted is not None
        and calendar == "gregorian"
        and day <= days_in_month(calendar, wanted, month)
    ):
        return wanted
    return LEAP_REFERENCE[calendar]
