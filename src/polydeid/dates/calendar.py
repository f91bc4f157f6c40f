"""Calendars: year ranges, month lengths, and day numbers to move dates by a number of days.

Two calendars are known (:data:`~polydeid.locales.dates.Calendar`): the proleptic Gregorian
one and the Ethiopian (Amete Mihret) one: twelve months of 30 days and a thirteenth of 5 (6
in its leap years). Day numbers are proleptic Gregorian ordinals (as ``date.toordinal``) in
both, so a date moves by a number of days through its day number.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from enum import StrEnum

__all__ = [
    "LEAP_REFERENCE",
    "TWO_DIGIT_PIVOT",
    "YEAR_RANGE",
    "Granularity",
    "days_in_month",
    "from_ordinal",
    "granularity_of",
    "months_in_year",
    "to_ordinal",
]

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


class Granularity(StrEnum):
    """Which fields a written date shows; what a policy may keep or drop (e.g. the year).

    ``FULL`` day, month and year (with or without a time); ``DAY_MONTH`` no year ("9/7",
    "19.3.", "12 March"); ``MONTH_YEAR`` no day ("March 2024", "03/2024"); ``YEAR`` a year
    alone ("2004", "'95"); ``DAY`` a day number alone (the opening day of a range,
    "12-14 March").
    """

    FULL = "full"
    DAY_MONTH = "day_month"
    MONTH_YEAR = "month_year"
    YEAR = "year"
    MONTH = "month"
    DAY = "day"


def granularity_of(year: int | None, month: int | None, day: int | None) -> Granularity:
    """The granularity of a date with these fields (None: the date does not show it)."""
    if year is not None:
        if month is None:
            return Granularity.YEAR
        return Granularity.FULL if day is not None else Granularity.MONTH_YEAR
    if month is not None:
        return Granularity.DAY_MONTH if day is not None else Granularity.MONTH
    return Granularity.DAY
