"""Compact timestamps (HL7 v2 TS/DTM, CDA TS): ``YYYY[MM[DD[HH[MM[SS[.S…]]]]]][+/-ZZZZ]``.

:func:`read_compact` splits one into its date fields, the time of day and the zone, so that the
date shift can move it at its own precision and a policy can tell its granularity.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from polydeid.text.digits import digits_int
from polydeid.text.patterns import compile_pattern

__all__ = ["CompactDate", "read_compact"]

_COMPACT = compile_pattern(
    r"(?P<y>(?:1[89]|20|21)\d\d)(?P<m>0[1-9]|1[0-2])?(?P<d>0[1-9]|[12]\d|3[01])?"
    r"(?P<rest>(?:[01]\d|2[0-3])(?:[0-5]\d(?:[0-5]\d(?:\.\d{1,4})?)?)?)?"
    r"(?P<zone>[+-](?:[01]\d|2[0-3])[0-5]\d)?"
)


@dataclass(frozen=True, slots=True)
class CompactDate:
    """The fields of a compact timestamp; ``rest`` (time of day) and ``zone`` as written."""

    year: int = field(repr=False)
    month: int | None = field(default=None, repr=False)
    day: int | None = field(default=None, repr=False)
    rest: str = field(default="", repr=False)
    zone: str = field(default="", repr=False)


def read_compact(core: str) -> CompactDate | None:
    """The fields of ``core`` when it is a compact timestamp with at least a month or a zone
    (a bare four-digit year is a written year, read by :func:`~polydeid.dates.parse_date`);
    None otherwise, and when a time has no day."""
    m = _COMPACT.fullmatch(core)
    if m is None or (m["rest"] and not m["d"]) or (m["d"] and not m["m"]):
        return None
    if len(core) < 6 and not m["zone"]:
        return None
    return CompactDate(
        year=digits_int(m["y"]),
        month=digits_int(m["m"]) if m["m"] else None,
        day=digits_int(m["d"]) if m["d"] else None,
        rest=m["rest"] or "",
        zone=m["zone"] or "",
    )
