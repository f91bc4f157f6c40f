"""Dates in numeric and textual forms, in every language with a ``dates.toml`` pack.

Forms found (``D`` day, ``M`` month number, ``MN`` month name, ``Y`` year)::

    numeric     Y-M-D  Y/M/D  Y.M.D            ISO 8601, with an optional time ("T14:30:00Z")
                D/M/Y  D.M.Y  D-M-Y  (Y: 4 or 2 digits; M/D/Y when the locale writes month first)
                D.M. Y  and  D. M. Y           (typographic spaces, 4-digit year only)
    partial     M/Y  M.Y  M-Y  Y-MM            and  D.M.  (German/Russian style, trailing dot)
                D/M  M/D  D-M   (no year; separators per language, ``day_month_separators``)
    year        Y  'YY          (a year alone; Spanish "año Y" keeps its prefix)
    textual     D MN Y   D. MN Y   Dth of MN, Y   D de MN de Y   «D» MN Y г.   D-MN-Y
                MN D, Y   MN Y   MN de Y   Y MN D   Y年M月D日   ngày D tháng M năm Y
                with an optional leading weekday ("Monday, 12 March 2024")

The words of a date come from the ``dates.toml`` packs of the segment's language and of
English (:func:`~polydeid.locales.segment_languages`); the grammar, the reading of a match and
its validation are :mod:`polydeid.dates`. This rule decides which matches in running text are
dates.

Only valid dates: month 1–12 (1–13 in the Ethiopian calendar), day within the month, 4-digit
years 1900–2100 (Ethiopian 1890–2095); 2-digit years only inside numeric dates with
separators, ``D-MN-YY`` and ``MN 'YY``. Not dates: blood pressures and ratios (``120/80``,
``3/10``), fractions, doses and lab values (a number with a unit is never a day), dosing
schemes (``1-0-1``), version numbers, times alone, record numbers (a date glued to ``/``,
``.``, or letters with ``-``), numbers after words such as "version", "figure", "GCS"
(``[context] not_date``), ``D.M.`` at the start of a line (section numbers), month names that
are also words ("may", "mar") unless written as a full date or capitalised next to a number.

Yearless dates and years alone look like ratios, scores, fractions, doses and clock times, so
each needs evidence: a ``[context] day_month`` word right before a D/M ("seen 9/7", "F/U 7/28",
"ngày 25/7", "hôm 4/3", "tarehe 25/7"), a ``[context] year`` word right before a year ("in
2004", "MI 1992", "Jahrgang 1967", "desde 2010", "mwaka 2019", "mu 2004") — the ``date`` and
``birth`` words count for both ("born 3/4", "DOB 1931") — or a range joint or a list to a date
that has such evidence ("từ 24-7 đến 31-7", "seen 9/7-9/12", "2004-2006", "24/7, 25/7 và
26/7"). A two-digit year after an apostrophe ("s/p CABG '95", "MI'02") needs none; an academic
year ("in 2004/05") is one span. Never a year: a
number glued to signs, letters or other numbers ("+4701", "1990s"), one followed by a unit
("2000 ml"), the first of a clock range ("1900-0700"), and a number that reads as a time of
day after a word that also announces times (``[context] time``: "since 2000") when it is
itself joined to a clock time or followed by a clock word (``[units] clock``: "since
2000-0700", "from 0700, 2000", "seit 2030 Uhr"), or is on the hour ("since 2000", not "since
2010") in a segment that writes clock times with four digits ("0700", "1500-2300"). Never a yearless
date: one followed by a unit ("on 1/2 tab") or after a score word ("GCS 3/15"). Decades
("in his 70s") are not dates.

Ranges: the opening day of a day-first range ("12-14 March 2024", "12.-15.03.2024",
"du 12 au 15 mars", ``[grammar] range_words``) is a span of its own, so it does not stay in
clear; alone it cannot be re-rendered, so a date shift replaces it by a tag.

Span sources: ``rule.date.numeric.v1`` (full numeric dates), ``rule.date.partial.v1`` (M/Y,
Y-MM, D.M., D/M), ``rule.date.textual.v1`` (dates with a month word), ``rule.date.year.v1``
(years alone), ``rule.date.range.v1``. Which fields a span shows is
:func:`polydeid.dates.date_granularity` of its text.

Numeric dates are read in the segment's order (:func:`polydeid.dates.date_order`: day first
unless the locale writes the month first, as ``en-US``), all dates of a segment alike.
"""

from __future__ import annotations

import bisect
import heapq
from collections.abc import Iterable, Iterator, Sequence
from functools import lru_cache
from typing import ClassVar

from polydeid.core.segments import Segment
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category, Fact
from polydeid.dates import DateOrder, date_order
from polydeid.dates.calendar import YEAR_RANGE
from polydeid.dates.grammar import (
    APOSTROPHES,
    HAN,
    MARKS,
    NUMERIC_BRANCHES,
    Grammar,
    context_pattern,
    grammar,
)
from polydeid.dates.parse import MatchGroups, Reading, read_match
from polydeid.dates.vocabulary import Vocabulary, language_codes
from polydeid.detect.rules._base import RuleDetector
from polydeid.locales import segment_languages
from polydeid.locales.common_words import zipf
from polydeid.locales.dates import language_dates, name_key
from polydeid.locales.names import is_pool_name
from polydeid.text.patterns import Pattern, compile_pattern, guarded_finditer

__all__ = ["DateRule", "find_dates"]

_SOURCES = {
    "n1": "rule.date.numeric.v1",
    "n2": "rule.date.numeric.v1",
    "n3": "rule.date.partial.v1",
    "n4": "rule.date.partial.v1",
    "n5": "rule.date.partial.v1",
    "n6": "rule.date.partial.v1",
}
_YEAR_SOURCE = "rule.date.year.v1"
#: A year alone after a context word; a two-digit year after an apostrophe with none.
_YEAR_SCORE, _APOSTROPHE_YEAR_SCORE = 0.9, 0.85
#: How far left of a yearless date or a year its context word may start.
_CONTEXT_REACH = 40
_TEXTUAL_SOURCE = "rule.date.textual.v1"
#: Readings scoring at least this hide the cores they cover from further readings.
_STRONG_SCORE = 0.95
_RANGE_SOURCE = "rule.date.range.v1"
_BASE_SCORE = {"n1": 0.97, "n2": 0.97, "n3": 0.8, "n4": 0.75, "n5": 0.75, "n6": 0.9}
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
        g, order = _segment_setup(segment.lang, segment.countries)
        text = segment.text
        last_end = 0
        found: list[tuple[Span, bool]] = []  # (span, is a year alone)
        pending: list[tuple[Span, bool]] = []  # yearless dates and years without context
        for start, numeric in self._cores(g, segment):
            if start < last_end:
                continue
            at = _date_at(g, order, text, start, numeric, last_end)
            if at is None:
                month = None if numeric else _month_alone(g, text, start)
                if month is not None:
                    found.append((month, False))
                    last_end = month.end
                continue
            span, reading = at
            if reading.branch == "n6":
                if _scores_number(g, text, span.start, span.end):
                    continue
                if not _day_month_evidence(g, text, span.start, span.end, last_end):
                    pending.append((span, False))
                    continue
            if reading.order.startswith("d"):
                found.extend((day, False) for day in _range_start(g, text, span.start, last_end))
            # A weak reading ("10.2. 2004" after a lab value) does not hide the cores
            # inside it: their own readings are offered too, and resolution decides.
            if span.score >= _STRONG_SCORE:
                last_end = span.end
            found.append((span, False))
        taken = _Taken(span for span, _ in found)
        for core in list(guarded_finditer(g.year_scanner, segment, self.id)):
            if taken.overlaps(core.start(), core.end()):
                continue
            year = _year_at(g, text, core.start())
            if year is not None:
                (found if year[1] else pending).append((year[0], True))
        partners = _range_partners(g, text, found, pending)
        found.extend(p for p in partners if not _after_not_date(g, text, p[0].start, p[0].end))
        yield from sorted((span for span, _ in found), key=lambda s: (s.start, s.end))

    def _cores(self, g: Grammar, segment: Segment) -> Iterator[tuple[int, bool]]:
        """``(start, numeric)`` of every core, in text order."""
        text = segment.text
        numeric = (
            (_digits_start(text, m.start()), True)
            for m in guarded_finditer(g.digit_scanner, segment, self.id)
        )
        words = ((m.start(), False) for m in guarded_finditer(g.word_scanner, segment, self.id))
        streams = [numeric, words]
        if g.suffix_scanner is not None:
            streams.append(
                (_digits_start(text, _skip_space_back(text, m.start())), False)
                for m in guarded_finditer(g.suffix_scanner, segment, self.id)
            )
        return heapq.merge(*streams)


@lru_cache(maxsize=512)
def _segment_setup(lang: str, countries: tuple[str, ...]) -> tuple[Grammar, DateOrder]:
    """The grammar and numeric order for a segment's language tag and countries."""
    probe = Segment(text="", lang=lang, countries=countries)
    return grammar(language_codes(segment_languages(probe))), date_order(probe)


def _has_context(context: Pattern | None, text: str, start: int) -> bool:
    """Whether a context word of ``context`` stands right before ``start``."""
    return _context_at(context, text, start) is not None


def _context_at(context: Pattern | None, text: str, start: int) -> int | None:
    """Where the context word of ``context`` right before ``start`` begins, if one does."""
    if context is None:
        return None
    m = context.match(text, max(0, start - _CONTEXT_REACH), start)
    return None if m is None else m.start()


def _day_month_evidence(g: Grammar, text: str, start: int, end: int, floor: int) -> bool:
    """Whether a yearless date has evidence of its own: a context word right before it or
    before the opening day of its range ("từ ngày 24-31/7", "ngày 20 và 21/7"), a context
    word earlier in its clause ("s/p coiling of ACOM aneurysm 11/17", at most
    :data:`_CLAUSE_WORDS` words back), a time of day right after it ("3/12 1900", "1/6 at
    1400"), or parentheses of its own ("fusion (3/18)", not "5/5 (4/5)")."""
    if _has_context(g.day_month_context, text, start):
        return True
    opening = g.range_left.match(text, max(floor, start - 24), start)
    if opening is not None and _has_context(g.day_month_context, text, opening.start()):
        return True
    if g.time_after.match(text, end, min(len(text), end + 16)) is not None:
        return True
    return _own_brackets(text, start, end) or _clause_context(_clause_words(g)[0], text, start)


#: How many words back in its clause a context word may announce a yearless date.
_CLAUSE_WORDS = 5
#: The commonest words (wordfreq Zipf in their pack's language: prepositions, articles, "last")
#: announce a date only right before it, not from further back in its clause.
_CLAUSE_MAX_ZIPF = 5.5


def _clause_words(g: Grammar) -> tuple[Pattern | None, Pattern | None]:
    """The ``day_month`` and ``year`` context words of ``g`` that may stand a few words back."""
    return _clause_patterns(tuple(pack.code for pack in g.vocabulary.packs))


@lru_cache(maxsize=64)
def _clause_patterns(codes: tuple[str, ...]) -> tuple[Pattern | None, Pattern | None]:
    packs = [language_dates(code) for code in codes]

    def rare(attr: str) -> Pattern | None:
        return context_pattern(
            [
                w
                for pack in packs
                for w in getattr(pack, attr)
                if zipf(w, pack.code) < _CLAUSE_MAX_ZIPF
            ]
        )

    return rare("day_month_context"), rare("year_context")


#: What ends a clause: a sentence or clause mark followed by a space, a line break, brackets.
_CLAUSE_BREAK = compile_pattern(r"[.;:!?,](?=\s)|[\r\n()\[\]]")
_NEXT_WORD = compile_pattern(r"[^\S\r\n]*([\p{L}\p{N}][\p{L}\p{N}'./-]*)")
_WORD_ENDS = compile_pattern(r"(?<=[\p{L}\p{N}'.])(?=\s)")


_MONTH_SOURCE = "rule.date.month.v1"
_MONTH_SCORE = 0.85
_WORD = compile_pattern(r"\p{L}+")
_NAME_AFTER = compile_pattern(r"[^\S\r\n]+(\p{Lu}\p{L}+)")


def _month_alone(g: Grammar, text: str, start: int) -> Span | None:
    """A month written alone ("in July", "since August", "seit März", "desde julio", "từ tháng
    7"), right after a ``[context] year`` or ``month`` word; a name that is also a word
    ("may") only capitalised, and none before a listed name ("August Meyer")."""
    m = _WORD.match(text, start, min(len(text), start + 16))
    if m is None:
        return None
    written, key = m.group(), name_key(m.group())
    if key in g.vocabulary.months:
        if key in g.vocabulary.ambiguous and not (written.istitle() or written.isupper()):
            return None
        end = m.end()
        following = _NAME_AFTER.match(text, end, min(len(text), end + 24))
        if following is not None and written.istitle() and is_pool_name(following.group(1)):
            return None  # a given name ("August Meyer")
    else:
        number = None if g.month_number is None else g.month_number.match(text, start)
        if number is None or not 1 <= int(number.group(1)) <= 12:
            return None
        end = number.end()
    if end < len(text) and (text[end].isdigit() or text[end] in "-/'’"):
        return None
    word = _context_at(g.month_context, text, start)
    if word is None or _after_not_date(g, text, word, end):
        return None
    return Span(start, end, Category.DATE, _MONTH_SOURCE, _MONTH_SCORE)


def _own_brackets(text: str, start: int, end: int) -> bool:
    """Whether a number stands alone in parentheses that do not follow a number ("fusion
    (3/18)", "in 5 years (2029)", not "5/5 (4/5)", "WBC 12 (2000)")."""
    if start == 0 or text[start - 1] != "(" or text[end : end + 1] != ")":
        return False
    before = text[max(0, start - 9) : start - 1].rstrip()
    return not before or not (before[-1].isdigit() or before[-1] in "/.,+-")


def _clause_context(context: Pattern | None, text: str, start: int) -> bool:
    """Whether a word of ``context`` ends one of the few words before ``start`` in its
    clause."""
    if context is None:
        return False
    lo = max(0, start - _CONTEXT_REACH)
    breaks = [m.end() for m in _CLAUSE_BREAK.finditer(text, lo, start)]
    lo = breaks[-1] if breaks else lo
    ends = [m.start() for m in _WORD_ENDS.finditer(text, lo, start)]
    return any(_has_context(context, text, p) for p in ends[-_CLAUSE_WORDS:])


def _scores_number(g: Grammar, text: str, start: int, end: int) -> bool:
    """Whether a context word makes the number at ``start`` a score: a ``[context] not_date``
    word shortly before it in its clause with no other number between ("GCS 3/15", not "level
    0.8 on 10/27"), or a ``not_date_after`` word right after it ("4/5 strength")."""
    lo = max(0, start - 24)
    bounds = [m.end() for m in _DIGIT.finditer(text, lo, start)]
    bounds += [m.end() for m in _CLAUSE_BREAK.finditer(text, lo, start)]
    if g.vocabulary.not_date.search(text, max([lo, *bounds]), start):
        return True
    following = _NEXT_WORD.match(text, end, min(len(text), end + 24))
    return following is not None and g.vocabulary.not_date_after.search(
        text, following.start(1), following.end(1)
    )


def _year_at(g: Grammar, text: str, pos: int) -> tuple[Span, bool] | None:
    """A year alone at ``pos`` ("2004", "'95", "2004/05"), and whether its context makes it a
    date.

    Not a year: a number glued to letters, signs or other numbers ("+2004", "2004.5",
    "1990s"), a quantity (a unit follows), the first of a clock range ("1900-0700"), a
    number after a version or score word, and a number that reads as a time of day after a
    ``[context] time`` word ("since 2000") when it is itself next to a clock time or a clock
    word ("since 2000-0700", "from 0700, 2000", "seit 2030 Uhr"), or is on the hour in a
    segment that writes clock times with four digits ("since 2000" near "0700"). A four-digit
    year needs a ``year`` context word right before it (or a range joint to a year that has
    one); a two-digit year after an apostrophe needs none, and may be glued to a ``year``
    context word ("MI'02"). An academic year ("in 2004/05") is one year span.
    """
    m = g.year.match(text, pos, min(len(text), pos + 8))
    if m is None:
        return None
    start, end = m.start(), m.end()
    prev = text[start - 1] if start > 0 else ""
    apostrophe = m.group("y_y2") is not None
    glued = apostrophe and prev.isalpha() and _has_context(g.year_context, text, start)
    glued_prev = prev.isalnum() or prev in "_#\\@$€£" or (prev in APOSTROPHES and m["y_y"])
    if prev and glued_prev and not glued:
        return None
    if not apostrophe:
        end = _academic_year_end(text, end, int(m.group("y_y")))
    nxt = text[end] if end < len(text) else ""
    if nxt and (nxt.isalnum() or nxt in "%/_\\" or nxt in APOSTROPHES):
        return None
    if nxt and nxt in "-–" and not _year_range_follows(text, end, int(m.group("y_y") or 0)):
        return None
    if g.units is not None and g.units.match(text, end, min(len(text), end + 40)):
        return None
    if not apostrophe:
        year = int(m.group("y_y"))
        low, high = YEAR_RANGE["gregorian"]
        if not low <= year <= high:
            return None
        time_word = year % 100 < 60 and _has_context(g.time_context, text, start)
        if time_word and _reads_as_clock(g, text, start, end, on_the_hour=year % 100 == 0):
            return None  # "since 2000-0700": a time of day
    if apostrophe:
        if prev not in ("", " ", "\t", "\n", "(", "[", ",", "\u00a0") and not glued:
            return None
        if _after_not_date(g, text, start, end):
            return None
        return Span(start, end, Category.DATE, _YEAR_SOURCE, _APOSTROPHE_YEAR_SCORE), True
    word = _context_at(g.year_context, text, start)
    context = word is not None
    if word is not None and _after_not_date(g, text, word, end):
        return None
    if not context and (
        _clause_context(_clause_words(g)[1], text, start) or _own_brackets(text, start, end)
    ):
        if _scores_number(g, text, start, end):
            return None
        context = True
    if g.year_prefix is not None:  # "año 2009": a prefix the pack keeps with a year alone
        prefix = g.year_prefix.match(text, max(0, start - 24), start)
        if prefix is not None:
            start = prefix.start()
    return Span(start, end, Category.DATE, _YEAR_SOURCE, _YEAR_SCORE), context


#: The second year of an academic or fiscal year, written with its last two digits.
_ACADEMIC_YEAR = compile_pattern(r"/(\d\d)(?![\d/]|[.,:]\d)")


def _academic_year_end(text: str, end: int, year: int) -> int:
    """The end of "2004/05" (the next year's last two digits after a slash) from the end of
    "2004"; ``end`` when no such year follows."""
    m = _ACADEMIC_YEAR.match(text, end, min(len(text), end + 4))
    if m is not None and int(m.group(1)) == (year + 1) % 100:
        return m.end()
    return end


def _reads_as_clock(g: Grammar, text: str, start: int, end: int, *, on_the_hour: bool) -> bool:
    """Whether a four-digit number is joined to a clock time or followed by a clock word; or,
    on the hour ("2000"), stands in a text that writes clock times with four digits."""
    if g.clock_after.match(text, end, min(len(text), end + 40)):
        return True
    if g.clock_before.match(text, max(0, start - 40), start) is not None:
        return True
    return on_the_hour and g.clock_in_text.search(text) is not None


_YEAR_AFTER_DASH = compile_pattern(r"[-–]\s*((?:19|20)\d\d)(?![\d:])")


def _after_not_date(g: Grammar, text: str, start: int, end: int) -> bool:
    """Whether a version, score or section word stands shortly before a number."""
    return g.vocabulary.not_date.near(text, start, end, before=24)


def _year_range_follows(text: str, end: int, year: int) -> bool:
    """Whether a dash after a year opens a range to a later year ("2004-2006")."""
    m = _YEAR_AFTER_DASH.match(text, end, min(len(text), end + 8))
    return m is not None and year <= int(m.group(1))


class _Taken:
    """The spans found so far, for overlap tests in logarithmic time."""

    def __init__(self, spans: Iterable[Span]) -> None:
        ordered = sorted((s.start, s.end) for s in spans)
        self.starts = [a for a, _ in ordered]
        self.ends = [b for _, b in ordered]

    def overlaps(self, start: int, end: int) -> bool:
        i = bisect.bisect_left(self.starts, end)
        while i > 0 and self.starts[i - 1] > start - _WINDOW:
            i -= 1
            if self.ends[i] > start:
                return True
        return False


_LIST_JOINT = compile_pattern(r"[^\S\r\n]*[,;][^\S\r\n]*")


def _range_partners(
    g: Grammar, text: str, found: list[tuple[Span, bool]], pending: list[tuple[Span, bool]]
) -> list[tuple[Span, bool]]:
    """Pending dates joined to a neighbouring found date of the same kind (a year to a year, a
    yearless date to a date): by a range joint ("-", "to", "đến"), the other end of a range;
    by a comma, a date inside a list that goes on ("24/7, 25/7 và 26/7") or ends a list of
    three or more. Chains are followed both ways."""
    items = sorted(
        [(span, is_year, True) for span, is_year in found]
        + [(span, is_year, False) for span, is_year in pending],
        key=lambda item: (item[0].start, item[0].end),
    )

    def joint(a: int, b: int) -> str:
        """How items ``a`` < ``b`` are joined: "range", "list" or ""."""
        if items[a][1] != items[b][1]:
            return ""
        lo, hi = items[a][0].end, items[b][0].start
        if not 0 <= hi - lo <= 24:
            return ""
        if g.range_joint.fullmatch(text, lo, hi):
            return "range"
        return "list" if _LIST_JOINT.fullmatch(text, lo, hi) else ""

    accepted = [item[2] for item in items]
    n = len(items)
    for step in (1, -1):
        for i in range(1, n) if step == 1 else range(n - 2, -1, -1):
            j, k = i - step, i + step
            if accepted[i] or not accepted[j]:
                continue
            how = joint(min(i, j), max(i, j))
            goes_on = 0 <= k < n and joint(min(i, k), max(i, k)) != ""
            h = j - step  # a list of three or more may end without a range word
            long_list = 0 <= h < n and accepted[h] and joint(min(j, h), max(j, h)) != ""
            if how == "range" or (how == "list" and (goes_on or long_list)):
                accepted[i] = True
    return [
        (span, is_year)
        for (span, is_year, was_found), now in zip(items, accepted, strict=True)
        if now and not was_found
    ]


def _may_extend_left(v: Vocabulary, text: str, pos: int, numeric: bool) -> bool:
    """Whether the token before a core can belong to the date (saves the left match mostly)."""
    before = text[max(0, pos - 24) : pos]
    stripped = before.rstrip(_TRAILING_PUNCTUATION)
    if not stripped:
        return False
    token = stripped.rsplit(None, 1)[-1]
    if not numeric and (before[-1] in "-/" or any(c.isdigit() for c in token)):
        return True  # a day or year: "12 March", "12-Mar", "2024年3月"
    if not numeric and HAN.match(token[-1]):
        return True
    return name_key(token) in (v.weekday_tails if numeric else v.left_words)


def _range_start(g: Grammar, text: str, date_start: int, floor: int) -> Iterator[Span]:
    """The opening day of a range ending in the date at ``date_start``, as its own span."""
    m = g.range_left.match(text, max(floor, date_start - 24), date_start)
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
    g: Grammar, order: DateOrder, text: str, pos: int, numeric: bool, floor: int
) -> tuple[Span, Reading] | None:
    """The accepted date at a core, tried from its furthest left extension first."""
    if not numeric and not _digit_near(text, pos):
        return None  # every written form has a day or a year next to the month word
    pattern, left = (g.numeric, g.weekday_left) if numeric else (g.textual, g.left)
    extension = None
    if _may_extend_left(g.vocabulary, text, pos, numeric):
        extension = left.match(text, max(floor, pos - _LEFT_REACH), pos)
    for start in dict.fromkeys((extension.start() if extension else pos, pos)):
        match = pattern.match(text, start, min(len(text), start + _WINDOW))
        if match is not None and match.end() > pos:
            accepted = _accept(MatchGroups(match), g, order, text)
            if accepted is not None:
                return accepted
    return None


def _accept(m: MatchGroups, g: Grammar, order: DateOrder, text: str) -> tuple[Span, Reading] | None:
    r = read_match(m, g.vocabulary, order)
    if r is None:
        return None
    span = _accepted_span(m, r, g, text)
    return None if span is None else (span, r)


def _accepted_span(m: MatchGroups, r: Reading, g: Grammar, text: str) -> Span | None:
    b, v = r.branch, g.vocabulary
    start, end = _span_bounds(m, r, v)
    if not _boundaries_ok(text, start, end, m, b) or _looks_like_measurement(m, r, g, text):
        return None
    if b in NUMERIC_BRANCHES:
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


def _span_bounds(m: MatchGroups, r: Reading, v: Vocabulary) -> tuple[int, int]:
    """The match, less a weekday abbreviation written without punctuation, an invalid time,
    and a full stop after an unabbreviated month name or a day ending the date ("3rd of April.",
    "on July 23.")."""
    b = r.branch
    start, end = m.start(), m.end()
    if r.month_name is not None and not r.month_dot and b != "th" and m.end(f"{b}_mdot") == end:
        end -= 1
    day_end = max(m.end(f"{b}_d"), m.end(f"{b}_o"))
    if r.month_name is not None and day_end == end - 1 and m.match.string[day_end] == ".":
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


def _separator(m: MatchGroups, b: str) -> str:
    return (m.group(f"{b}_s") or "").strip(MARKS)


def _boundaries_ok(text: str, start: int, end: int, m: MatchGroups, b: str) -> bool:
    """Reject dates glued into identifiers, paths, version or phone numbers."""
    numeric = b in NUMERIC_BRANCHES
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


def _looks_like_measurement(m: MatchGroups, r: Reading, g: Grammar, text: str) -> bool:
    """A date ending in a bare day number followed by a unit ("March 12 mg") is a quantity, and
    so is a day and month without a year ("on 1/2 tab": a fraction of a dose), or the first
    of a range of them ("1/2-3/4 tab")."""
    if g.units is None or r.year is not None or r.branch not in ("t2", "t4", "n6"):
        return False
    end = m.end()
    if r.branch == "n6":
        second = _FRACTION_AFTER_DASH.match(text, end, min(len(text), end + 12))
        end = end if second is None else second.end()
    return g.units.match(text, end, min(len(text), end + 40)) is not None


#: The second end of a range of two fractions or day-months ("-3/4" in "1/2-3/4").
_FRACTION_AFTER_DASH = compile_pattern(r"\s*[-–]\s*\d{1,2}/\d{1,2}(?!\d)")


def _numeric_span(
    m: MatchGroups, r: Reading, v: Vocabulary, text: str, start: int, end: int
) -> Span | None:
    b = r.branch
    if b != "n6" and _version_like(m, r) and v.not_date.near(text, start, end, before=24):
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


def _version_like(m: MatchGroups, r: Reading) -> bool:
    """Shapes a version, section or score number can take: dotted, partial or 2-digit year."""
    if r.branch in ("n3", "n4", "n5", "n6") or r.two_digit_year:
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
