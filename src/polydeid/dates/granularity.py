"""The granularity of a written date: which of day, month and year it shows.

Spans carry no text, so a policy that acts on granularity (keep the year, drop the rest)
reads it here from the span's text and the segment's languages; ``polydeid detect`` reports
it with each date span. The reading is the one the date rule and the date shift use
(:func:`~polydeid.dates.parse_date`, and :func:`~polydeid.dates.compact.read_compact` for HL7
timestamps); a day number alone (the opening day of a range, "12" in "12-14 March") is
:attr:`Granularity.DAY`, a month alone ("in July", "từ tháng 7") :attr:`Granularity.MONTH`.
"""

from __future__ import annotations

from collections.abc import Sequence

from polydeid.dates.calendar import Granularity, granularity_of
from polydeid.dates.compact import read_compact
from polydeid.dates.grammar import grammar
from polydeid.dates.parse import parse_date
from polydeid.dates.vocabulary import language_codes, vocabulary
from polydeid.locales.dates import DateOrder, name_key
from polydeid.text.digits import digits_int

__all__ = ["Granularity", "date_granularity", "granularity_of"]


def date_granularity(
    text: str, langs: Sequence[str], *, order: DateOrder | None = None
) -> Granularity | None:
    """The granularity of ``text`` (one written date, surrounding spaces ignored) in
    ``langs``; None when it is not a date those languages write."""
    core = text.strip()
    if not core:
        return None
    compact = read_compact(core)
    if compact is not None:
        return granularity_of(compact.year, compact.month, compact.day)
    parsed = parse_date(core, langs, order=order)
    if parsed is not None:
        return parsed.kind
    day = core.rstrip(".")
    if day.isdecimal() and len(day) <= 2 and 1 <= int(day) <= 31:
        return Granularity.DAY
    codes = language_codes(langs)
    if name_key(day) in vocabulary(codes).months:
        return Granularity.MONTH
    number = grammar(codes).month_number
    m = None if number is None else number.fullmatch(core)
    if m is not None and 1 <= digits_int(m.group(1)) <= 12:
        return Granularity.MONTH
    return None
