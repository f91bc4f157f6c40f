"""Written dates in every language with a ``dates.toml`` pack: read, validate, re-render.

A layer below both the date rule (``detect.rules.dates``, which finds dates in text) and the
date shift (``transform.dateshift``, which moves them); it builds on
:mod:`polydeid.locales.dates` (the language data), :mod:`polydeid.text` and
:mod:`polydeid.core` only. Modules, lowest
first: :mod:`~polydeid.dates.calendar` (calendars and day numbers),
:mod:`~polydeid.dates.vocabulary` (the words of a set of languages, numeric order),
:mod:`~polydeid.dates.grammar` (the regex grammar), :mod:`~polydeid.dates.parse` (reading one
written date into a :class:`ParsedDate` that re-renders itself with other values),
:mod:`~polydeid.dates.compact` (HL7 timestamps), :mod:`~polydeid.dates.granularity` (which
fields a written date shows: :class:`Granularity`).
"""

from polydeid.dates.calendar import (
    LEAP_REFERENCE,
    TWO_DIGIT_PIVOT,
    YEAR_RANGE,
    Granularity,
    days_in_month,
    from_ordinal,
    granularity_of,
    months_in_year,
    to_ordinal,
)
from polydeid.dates.compact import CompactDate, read_compact
from polydeid.dates.granularity import date_granularity
from polydeid.dates.parse import ParsedDate, Slot, parse_date
from polydeid.dates.vocabulary import date_order, numeric_order
from polydeid.locales.dates import Calendar, DateOrder

__all__ = [
    "LEAP_REFERENCE",
    "TWO_DIGIT_PIVOT",
    "YEAR_RANGE",
    "Calendar",
    "CompactDate",
    "DateOrder",
    "Granularity",
    "ParsedDate",
    "Slot",
    "date_granularity",
    "date_order",
    "days_in_month",
    "from_ordinal",
    "granularity_of",
    "months_in_year",
    "numeric_order",
    "parse_date",
    "read_compact",
    "to_ordinal",
]
