"""The regex grammar of written dates, built from the vocabulary of a set of languages.

Each form is one named branch, and a branch's fields are the groups named after it
(``t1_d``, ``t1_mn``, ``t1_y``, …); an optional leading weekday is ``wd``. ``MN`` is a month
name, or a month number with a prefix or suffix ("tháng 3", "3月")::

    n1  Y-M-D  Y/M/D  Y.M.D  (+ time)       th  D-MN-Y  D/MN/YY  (+ time)
    n2  D/M/Y or M/D/Y  (+ time)            t1  D MN [Y]  Dth of MN, Y  D de MN de Y
    n3  M/Y  M.Y  M-Y                       t4  Y MN [D]  Y年M月D日
    n4  Y-MM                                t2  MN D[, Y]
    n5  D.M.  (languages with ``dm_dot``)   t3  MN Y  MN de Y  MN 'YY
    n6  D/M or M/D  (the packs' ``day_month_separators``; no year follows)
    y   Y  'YY  (a year alone: :attr:`Grammar.year`, and the full pattern of ``parse_date``)

Words are matched as tries over their :func:`~polydeid.locales.dates.name_key` forms (in NFC
and NFD; see :func:`alternation`). The date rule does not run the
full grammar at every position: scanners find *cores* (a numeric shape at its first
separator, a month word, a month number with a suffix such as 月), and patterns matched
backwards from a core find where the date may start (weekday, day, year before a month word;
the opening day of a range). :func:`grammar` compiles all of them once per language tuple.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import regex

from polydeid.dates.vocabulary import Vocabulary, vocabulary
from polydeid.locales.dates import name_key
from polydeid.text.patterns import Pattern, compile_pattern

__all__ = [
    "APOSTROPHES",
    "HAN",
    "MARKS",
    "NUMERIC_BRANCHES",
    "Grammar",
    "alternation",
    "grammar",
]

_S = r"[^\S\r\n\f\v\x85\u2028\u2029]"  # whitespace that does not break a line
_LB = r"(?<![^\W\p{Han}])"  # not glued to a letter or digit on the left (Han text has no spaces)
_RB = r"(?![^\W\p{Han}])"
_WORD_END = r"(?![^\W\d_\p{Han}])"  # a word ends here (a digit may follow)
#: A word starts here: "wed" in "reviewed" is no weekday (matters in backward matching).
_WORD_START = r"(?<![^\W\d_\p{Han}])"
_NEVER = r"(?!)"
#: Bidi marks, then spaces, that may pad a numeric date's separators.
MARKS = "\u200e\u200f \t\u00a0\u202f"
HAN = compile_pattern(r"\p{Han}")
#: Branches of numeric dates (the others have a month word, or are a year alone: ``y``).
NUMERIC_BRANCHES = frozenset({"n1", "n2", "n3", "n4", "n5", "n6"})
#: Apostrophes that may open a two-digit year ("'95", "’95").
APOSTROPHES = "'’ʼ‘`"
#: What may stand between a context word and the date it announces ("seen: 9/7", "MI (1992)").
_CONTEXT_GAP = r"[^\S\r\n\f\v\x85\u2028\u2029]*[:(]?[^\S\r\n\f\v\x85\u2028\u2029]*"


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
    day_month_separators: str


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
        rf"(?P<n2_s2>{sep}|\.{_S})(?P<n2_y>\d{{4}}|\d{{2}})(?!\d|[/\\.]\d)"
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
    if w.day_month_separators:
        branches.append(
            rf"(?P<n6>(?P<n6_a>\d{{1,2}})(?P<n6_s>[{w.day_month_separators}])"
            rf"(?P<n6_b>\d{{1,2}})(?![\d/]){_D_M_RANGE_OR_END})"
        )
    return branches


#: After a D/M: nothing chained ("1/2-3", "3/4.5"), unless a dash opens a range to another
#: D/M with a slash ("9/7-9/12").
_D_M_RANGE_OR_END = (
    rf"(?:(?<=/\d{{1,2}})(?=[-–]{_S}?\d{{1,2}}/\d{{1,2}}(?![\d/]|[-.,]\d))|(?![-.,]\d))"
)


def _year_branch(w: _Words) -> str:
    """A year alone: four digits, or two after an apostrophe ("'95"), with an optional year
    prefix ("año 2009", "mwaka 2019"); not part of a number."""
    apostrophe = regex.escape(APOSTROPHES)
    return (
        rf"(?P<y>(?:(?P<y_p>{w.year_prefixes}){_S}?)?(?<![\d.,:+−±/]|[{apostrophe}])(?<!(?<!(?:19|20)\d\d)[-–])(?:(?P<y_y>\d{{4}})"
        rf"|[{apostrophe}](?P<y_y2>\d{{2}}))(?![\d{apostrophe}]|[.,:]\d))"
    )


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
    if w.day_month_separators:
        # D/M without a year: one or two digits on either side, nothing chained after
        after.append(rf"(?<=(?<!\d)\d{{1,2}}[{w.day_month_separators}])\d{{1,2}}(?![\d/])")
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


# --- the grammar of a language set -------------------------------------------------------------


def _words(v: Vocabulary) -> _Words:
    return _Words(
        months=alternation(v.months),
        weekdays=alternation(v.weekdays),
        day_prefixes=alternation(v.words("day_prefixes")),
        ordinals=alternation(s for p in v.packs for s in p.ordinals.suffixes),
        day_words=alternation(v.words("day_words")),
        connectors=alternation(v.words("connectors")),
        year_prefixes=alternation(v.words("year_prefixes")),
        year_words=alternation(v.words("year_words")),
        month_prefixes=alternation(v.words("month_prefixes")),
        number_prefixes=alternation(v.words("month_number_prefixes")),
        number_suffixes=alternation(v.words("month_number_suffixes")),
        attached=alternation(v.words("attached_prefixes")),
        dm_dot=any(p.dm_dot for p in v.packs),
        day_month_separators=regex.escape(
            "".join(sorted({sep for p in v.packs for sep in p.day_month_separators}))
        ),
    )


@dataclass(frozen=True)
class Grammar:
    """The compiled patterns of one tuple of languages, and the vocabulary they come from."""

    vocabulary: Vocabulary
    pattern: Pattern  # every form, for parse_date
    numeric: Pattern  # numeric forms, anchored at digit cores
    textual: Pattern  # forms with a month word, anchored at a left extension or a word core
    digit_scanner: Pattern
    word_scanner: Pattern
    suffix_scanner: Pattern | None
    left: Pattern
    weekday_left: Pattern
    range_left: Pattern
    units: Pattern | None
    #: A year alone, matched anchored at a year core; a year prefix before one, backwards.
    year: Pattern
    year_prefix: Pattern | None
    year_scanner: Pattern
    #: Context words right before a yearless day and month, or a year alone (matched backwards).
    day_month_context: Pattern | None
    year_context: Pattern | None
    #: Context words right before a month alone (the year words and the month words).
    month_context: Pattern | None
    #: A month number after its prefix, alone ("tháng 7"), matched anchored.
    month_number: Pattern | None
    time_context: Pattern | None
    #: A four-digit clock time joined to a number right before or after it ("2000-0700",
    #: "0700, 2000", "2030 Uhr"); see :func:`_clock_after` and :func:`_clock_before`.
    clock_after: Pattern
    clock_before: Pattern
    #: A four-digit clock time anywhere in a text (:func:`_clock_in_text`).
    clock_in_text: Pattern
    #: A time of day right after a date ("3/12 1900", "1/6 at 1400", "4/12 @ 21:05").
    time_after: Pattern
    #: What joins the two ends of a range ("-", "to", "đến"), matched forwards.
    range_joint: Pattern


@cache
def grammar(langs: tuple[str, ...]) -> Grammar:
    """The grammar of canonical language codes ``langs`` (see
    :func:`~polydeid.dates.vocabulary.language_codes`)."""
    v = vocabulary(langs)
    w = _words(v)
    numeric, textual = _numeric_branches(w), _textual_branches(w)
    han = alternation(k for k in v.months if HAN.match(k))
    units = v.words("units")
    flags = regex.IGNORECASE
    return Grammar(
        vocabulary=v,
        pattern=compile_pattern(_full_pattern([*numeric, *textual, _year_branch(w)], w), flags),
        numeric=compile_pattern(_full_pattern(numeric, w), flags),
        textual=compile_pattern(_full_pattern(textual, w), flags),
        digit_scanner=compile_pattern(_digit_scanner(w)),
        word_scanner=compile_pattern(_word_scanner(w, han), flags),
        suffix_scanner=compile_pattern(_suffix_scanner(w)) if w.number_suffixes != _NEVER else None,
        left=compile_pattern(_left_pattern(w), flags),
        weekday_left=compile_pattern(_weekday_left_pattern(w), flags),
        range_left=compile_pattern(_range_left_pattern(v.words("range_words")), flags),
        units=compile_pattern(rf"{_S}*(?:{alternation(units)}){_RB}", flags) if units else None,
        year=compile_pattern(_year_branch(w), flags),
        year_prefix=_alone_year_prefix(v.words("alone_year_prefixes")),
        year_scanner=compile_pattern(
            rf"(?<!\d)(?:(?:19|20)\d\d|[{regex.escape(APOSTROPHES)}]\d\d)(?!\d)"
        ),
        day_month_context=context_pattern(v.words("day_month_context")),
        year_context=context_pattern(v.words("year_context")),
        month_context=context_pattern(v.words("month_context")),
        month_number=(
            compile_pattern(rf"(?:{w.number_prefixes}){_S}?(\d{{1,2}})(?![\d/.\-])", flags)
            if w.number_prefixes != _NEVER
            else None
        ),
        time_context=context_pattern(v.words("time_context")),
        range_joint=compile_pattern(_range_joint(v.words("range_words")), flags),
        clock_after=compile_pattern(_clock_after(v), flags),
        clock_before=compile_pattern(_clock_before(v), flags),
        clock_in_text=compile_pattern(_clock_in_text(v), flags),
        time_after=compile_pattern(_time_after(v), flags),
    )


def _alone_year_prefix(words: Sequence[str]) -> Pattern | None:
    """A year prefix that stays with a year alone ("año 2009"), matched backwards."""
    if not words:
        return None
    return compile_pattern(rf"(?r){_WORD_START}(?:{alternation(words)}){_S}?", regex.IGNORECASE)


def context_pattern(words: Sequence[str]) -> Pattern | None:
    """Any of ``words`` as a whole word right before a position, matched backwards."""
    if not words:
        return None
    return compile_pattern(
        rf"(?r)(?<![\p{{L}}\p{{N}}])(?:{alternation(words)}){_CONTEXT_GAP}", regex.IGNORECASE
    )


def _range_joint(range_words: Sequence[str]) -> str:
    return rf"{_S}*[-–—]{_S}*|{_S}+(?:{alternation(range_words)}){_S}+"


#: A time of day in four digits: hours 00-23, minutes 00-59.
_HHMM = r"(?:[01]\d|2[0-3])[0-5]\d"


def _clock_joint(v: Vocabulary) -> str:
    """What joins two clock times of a range or a list ("-", "to", ",", ", and")."""
    words = alternation(v.words("range_words"))
    return rf"(?:{_S}*[-–—,;]{_S}*(?:(?:{words}){_S}+)?|{_S}+(?:{words}){_S}+)"


def _clock_units(v: Vocabulary) -> str:
    return rf"{_S}*(?:{alternation(v.words('clock_units'))}){_WORD_END}"


def _clock(v: Vocabulary) -> str:
    """A four-digit number that can only be a time of day: a leading zero ("0700"), a clock
    word after it ("1930 h"), or no year's first digits ("2300", not "1500 mg")."""
    units = alternation(v.words("units"))
    return (
        rf"(?<!\d)(?:0\d[0-5]\d(?!\d)|{_HHMM}(?=(?:{_clock_units(v)}))"
        rf"|(?!19|20){_HHMM}(?!\d)(?!{_S}*(?:{units}){_RB}))"
    )


def _clock_in_text(v: Vocabulary) -> str:
    """A clock time written with four digits anywhere: a leading zero ("0700"), a clock word
    after it ("1930 h"), or a range with an end that is no year ("1500-2300")."""
    joint = rf"{_S}*[-–]{_S}*"
    return (
        rf"(?<![\d.,:/+\-])(?:0\d[0-5]\d(?!\d|[.,:/]\d)|{_HHMM}(?={_clock_units(v)})"
        rf"|(?!19|20){_HHMM}{joint}{_HHMM}(?!\d|[.,:/]\d)"
        rf"|{_HHMM}{joint}(?!19|20){_HHMM}(?!\d|[.,:/]\d))"
    )


def _time_after(v: Vocabulary) -> str:
    """Right after a date: a space, an optional ``@`` or ``[context] time`` word, and a time
    of day in four digits or with a colon (matched forwards)."""
    words = alternation(["@", *v.words("time_context")])
    return (
        rf"{_S}+(?:(?:{words}){_S}*)?(?:{_HHMM}|(?:[01]?\d|2[0-3]):[0-5]\d)"
        rf"(?!\d|[.,/]\d)"
    )


def _clock_after(v: Vocabulary) -> str:
    """Right after a number: a clock word, or a joint to a clock time (matched forwards)."""
    return rf"{_clock_units(v)}|{_clock_joint(v)}{_clock(v)}(?![.,:/]\d)"


def _clock_before(v: Vocabulary) -> str:
    """Right before a number: a clock time and a joint (matched backwards)."""
    return rf"(?r)(?<![\d.,:/+\-]){_clock(v)}{_clock_joint(v)}"
