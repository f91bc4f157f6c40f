"""Telephone and fax numbers: one fast candidate pattern, candidates validated by phonenumbers.

How a number is found:

1. One character-class pattern finds *runs* of digits joined by spaces, dots, dashes, slashes
   or parentheses (ASCII, or also typographic spaces and dashes and non-ASCII digits where
   the segment may hold them). Dates such as ``12/03/2024`` are skipped at once.
2. A run is split at separators longer than three characters and cut into digit groups. A
   group glued to letters or signs (``MUL/2024/00871``, ``12345678Z``, ``DE89 3704 …``) is
   blocked, as are groups forming a date, a reading (``120/80``), a decimal (``36.5``), a
   year-led identifier (``2024-004512``) or a card/account number in blocks of four.
3. The remaining groups are tried leftmost-longest. Inside a run a second number must start
   the way numbers are written (``0``, ``+``, ``(``). Each candidate is read in every region
   of the segment (``+``/``00`` numbers need none) against phonenumbers' metadata, mirrored
   with one pattern per number length. Where the mirror reads exactly as phonenumbers
   does (tested over every region) its word is final; elsewhere (regions that rewrite
   digits or strip carrier codes, digits led by a dialling prefix) a candidate is
   confirmed with ``phonenumbers.parse`` and ``is_valid_number`` before it is accepted.

A valid number written in its country's national form (``0772 123456``, ``612 34 56 78``,
``(415) 555-0134``) or in international form is accepted on its own. A number that is valid
only when read another way (``772 123456`` lacking the trunk prefix) or only *possible*
(right length, unallocated range) is accepted only after a phone or fax context word
(``Tel.``, ``simu``, ``số điện thoại``…) with no other number in between. Fictional but
well-formed numbers such as the North American 555-01xx range are tagged like any other:
in a record they are indistinguishable from real ones. An extension written after a number
(``ext. 204``, ``Durchwahl -12``, ``转 8``) is part of its span.

The segment's countries (or its language's) are read first. A candidate none of them accepts is
then read in every other region phonenumbers knows (``rule.phone.foreign.v1``): a number does
not depend on the language of the sentence around it, and a Kiswahili note quotes a relative's
US number (``617-555-0134``), an English note a German one (``030 12345678``). A foreign
reading must be valid in that region's national form and, without a phone context word, grouped
the way that region writes numbers: led by its trunk prefix ``0``, bare or bracketed, with the
area or network code in the first group (``0772 123456``, ``(0)20 7946 0958``), or, with at
least ten digits, in exactly the digit groups of its national format (``617-555-0134`` as
``(617) 555-0134``, ``06 12 34 56 78``), with the trunk prefix as a group of its own before them
(``1-617-555-0134``), or, for a mobile number, without the trunk prefix (``98765 43210``).
Other trunk prefixes (``8`` in Russia) need that grouping or a phone word: ``800-1000 ml`` and
``84 37283957`` are no numbers. A foreign number is a whole run of digit groups or one item of
a list (``617-555-0134 / 617-555-0199``), never a slice of a longer identifier. A bare digit
string is a foreign number without context only when it is a mobile number of ten or eleven
digits, written in its national form led by the trunk prefix ``0`` and as long as the region's
example mobile number (``0612345678``), and a candidate the segment's own regions
accept is never read again. A foreign reading takes what ``phonenumbers`` would parse, its
number type and its national format from the region's metadata
(:mod:`polydeid.detect.rules.phone_reading`, tested equal in every region) and parses only
where the region may read the digits as dialled from abroad or rewrites them.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from functools import cache, lru_cache
from typing import ClassVar, Final

import phonenumbers
import regex
from phonenumbers import NumberParseException

from polydeid.core.errors import RuleTimeoutError, UnknownCountryError
from polydeid.core.segments import Segment
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category, Fact
from polydeid.detect.rules._base import RuleDetector
from polydeid.detect.rules.phone_reading import (
    TYPE_FIELDS,
    Reading,
    read_in,
    region_metadata,
)
from polydeid.locales import (
    canonical_language,
    language_info,
    segment_countries,
    segment_languages,
)
from polydeid.locales.contacts import contact_table
from polydeid.text.pattern_sets import FullMatchSet
from polydeid.text.patterns import (
    PATTERN_TIMEOUT_S,
    ContextLexicon,
    Pattern,
    compile_pattern,
    guarded_finditer,
    phrase_alternation,
)

SOURCE_INTERNATIONAL = "rule.phone.intl.v1"
SOURCE_NATIONAL = "rule.phone.national.v1"
SOURCE_CONTEXT = "rule.phone.context.v1"
SOURCE_FOREIGN = "rule.phone.foreign.v1"

#: Decimal digits of the scripts that write phone numbers with their own digits: ASCII,
#: Arabic-Indic, Extended Arabic-Indic, Devanagari, full-width.
_DIGITS = r"0-9\u0660-\u0669\u06f0-\u06f9\u0966-\u096f\uff10-\uff19"
_DIGIT = f"[{_DIGITS}]"
#: Characters allowed between digit groups (at most three in a row): ASCII ones, and the
#: typographic spaces, hyphens and dashes (no-break space, narrow no-break space, Unicode
#: hyphens, minus, full-width hyphen and parentheses).
_ASCII_SEPARATORS = " \t./()\\-"
_TYPOGRAPHIC_SEPARATORS = "\u00a0\u202f\u2010\u2011\u2012\u2013\u2212\uff0d\uff08\uff09"
_MAX_SEPARATOR: Final = 3

#: A run: a digit, then digits and separators, then a digit, at least seven characters. One
#: character class keeps the engine's scan fast; groups, separators and what comes before the
#: run are checked in Python. The ASCII form (several times faster) serves segments without
#: native digits or typographic separators.
_RUN_ASCII = compile_pattern(rf"[0-9][0-9{_ASCII_SEPARATORS}]{{5,}}[0-9]")
_RUN_UNICODE = compile_pattern(
    rf"{_DIGIT}[{_DIGITS}{_ASCII_SEPARATORS}{_TYPOGRAPHIC_SEPARATORS}]{{5,}}{_DIGIT}"
)
#: Scripts whose texts may write phone numbers with native (non-ASCII) digits.
_NATIVE_DIGIT_SCRIPTS: Final = frozenset({"Arabic", "Devanagari", "Han"})
_TYPOGRAPHIC: Final = tuple(_TYPOGRAPHIC_SEPARATORS)
#: A digit group, and a run that is exactly one date (fast path: most seven-digit runs in
#: clinical text). Asked of short strings many times per number, so compiled with ``re``
#: (the same classes, a third of the call's cost).
_GROUP: Final = re.compile(rf"{_DIGIT}++")
_DATE_RUN: Final = re.compile(
    rf"{_DIGIT}{{1,2}}([./\-]){_DIGIT}{{1,2}}\1(?:{_DIGIT}{{4}}|{_DIGIT}{{2}})"
    rf"|{_DIGIT}{{4}}([./\-]){_DIGIT}{{1,2}}\2{_DIGIT}{{1,2}}"
)
#: Zero in each digit set: a trunk prefix or ``00`` starts a number inside a run.
_ZEROS: Final = "0\u0660\u06f0\u0966\uff10"
#: Signs that glue a run to what precedes it (``#1234567``, ``+1 2 …`` after a digit).
_GLUE_SIGNS: Final = "_@#%&+\uff0b"

#: Digit counts a candidate may have (after ``+``/``00``: country code and number, E.164).
_INTL_DIGITS: Final = (8, 15)
_NATIONAL_DIGITS: Final = (7, 14)
#: Runs with more digits than this are lists or long identifiers: even their first candidate
#: must start with ``+``, ``(`` or ``0``.
_LONG_RUN_DIGITS: Final = 15
#: How far before a candidate a context word may be.
_CONTEXT_CHARS: Final = 40
#: Segment hints that count as phone context (a field known to hold a phone number).
_PHONE_HINTS: Final = frozenset({"field:phone", "field:telephone", "field:mobile", "field:fax"})


@dataclass(frozen=True, slots=True)
class _PhoneLocale:
    """Context words and the extension pattern for one set of languages."""

    context: ContextLexicon
    extension: Pattern
    #: The first letters of the extension words in every case: no other character after the
    #: number's spaces and comma can begin an extension, and the pattern is not tried.
    extension_starts: frozenset[str]


@dataclass(frozen=True, slots=True)
class _Verdict:
    """Why a candidate was accepted: its span source and score."""

    source: str
    score: float


@dataclass(frozen=True, slots=True)
class _Shape:
    """How a candidate is written: grouped by separators, or one digit per group."""

    grouped: bool
    spaced_out: bool


_SHAPES: Final = {
    (grouped, spaced): _Shape(grouped, spaced)
    for grouped in (False, True)
    for spaced in (False, True)
}


@dataclass(slots=True)
class _Scan:
    """Working state of one segment's scan, with a memo of what each digit string reads as."""

    # The memo is dropped with the scan: a string repeated in a table costs one reading, and
    # no number outlives its segment.

    segment: Segment
    regions: tuple[str, ...]
    national_lengths: frozenset[int]
    locale: _PhoneLocale
    hinted: bool
    rule_id: str
    memo: dict[tuple[bool, str], _Finding | None] = field(default_factory=dict)
    foreign_memo: dict[tuple[str, str], bool] = field(default_factory=dict)
    read: _Memo = field(default_factory=lambda: _Memo())  # foreign readings and parses
    #: Regions that read a foreign number of this segment, the latest first.
    favourites: list[str] = field(default_factory=list)

    def context_before(self, start: int, floor: int) -> bool:
        """Whether a phone/fax word precedes ``start`` (not before ``floor``, the last number)."""
        window = max(start - _CONTEXT_CHARS, floor)
        return self.hinted or self.locale.context.search(self.segment.text, window, start)

    def finding(self, international: bool, digits: str) -> _Finding | None:
        key = (international, digits)
        if key not in self.memo:
            self.memo[key] = (
                _find_international(digits)
                if international
                else _find_national(digits, self.regions)
            )
        return self.memo[key]

    def foreign(
        self,
        digits: str,
        kept: _Kept | None = None,
        accept: Callable[[str], bool] | None = None,
        key: str = "",
    ) -> bool:
        """Whether a region outside the segment's (of ``kept``, if given: by default any
        region) reads ``digits`` as a valid number in national form (:func:`_reads_foreign`,
        ``keep`` before a parse) and ``accept``, if given, holds there. ``key`` names the
        question for the memo. The regions that answered yes earlier in the segment are read
        first: the answer does not depend on the order."""
        memo_key = (digits, key)
        known = self.foreign_memo.get(memo_key)
        if known is None:
            known = self.foreign_memo[memo_key] = self._foreign(digits, kept, accept)
        return known

    def _foreign(
        self, digits: str, kept: _Kept | None, accept: Callable[[str], bool] | None
    ) -> bool:
        low, high = _NATIONAL_DIGITS
        if not low <= len(digits) <= high:
            return False
        keep = None if kept is None else kept.keep
        among = None if kept is None else kept.regions
        favourites = self.favourites
        tried = []
        by_region = _plan_by_region(len(digits))
        for region in favourites:
            plan = by_region.get(region)
            if plan is None or (among is not None and region not in among):
                continue
            tried.append(region)
            if _reads_foreign(digits, plan, self.regions, self.read, keep) and (
                accept is None or accept(region)
            ):
                favourites.remove(region)
                favourites.insert(0, region)
                return True
        own, memo = self.regions, self.read
        sieve = _sieve(len(digits))
        for k in sieve.positions(digits):
            plan = sieve.plans[k]
            region = plan.region
            if region in tried or region in own or (among is not None and region not in among):
                continue
            if not plan.may_be_valid(digits):
                continue
            if _canonical_in(digits, region, memo, keep) and (accept is None or accept(region)):
                favourites.insert(0, region)
                del favourites[_FAVOURITES:]
                return True
        return False


#: How many regions that read foreign numbers a scan reads first.
_FAVOURITES: Final = 8


@dataclass(frozen=True, slots=True)
class _Kept:
    """The regions a grouped foreign candidate may be written as (:func:`_may_keep`) and the
    finer filter asked before a parse (:func:`_format_may_write`)."""

    regions: frozenset[str]
    keep: Callable[[str], bool]


def _breaks_run(gap: str) -> bool:
    """Whether the separator between two digit groups ends the run (too long, or a sentence
    or clause boundary such as ``". "``: a phone number does not continue past one)."""
    if len(gap) > _MAX_SEPARATOR:
        return True
    return gap[:1] == "." and gap[1:2].isspace()


@dataclass(frozen=True, slots=True)
class _Finding:
    """What a digit string is, before context: valid where and how, or only possible."""

    valid: bool  # international: a valid number
    canonical_prefix: str | None = None  # national: valid and in national form (trunk prefix)
    other: str | None = None  # national: a region where it is valid read another way
    possible: str | None = None  # a region (or "+") where it is only a possible number


@dataclass(frozen=True, slots=True)
class _Run:
    """One candidate run: where it starts, its digit groups, digit counts and blocked groups."""

    lead: int
    groups: tuple[tuple[int, int], ...]
    counts: tuple[int, ...]
    singles: tuple[int, ...]  # prefix sums of one-digit groups
    blocked: frozenset[int]

    @classmethod
    def split(cls, text: str, start: int, end: int) -> Iterator[_Run]:
        """The runs of at least seven digits in ``text[start:end]``, split at long separators."""
        piece: list[tuple[int, int]] = []
        for match in _GROUP.finditer(text, start, end):
            if piece and _breaks_run(text[piece[-1][1] : match.start()]):
                yield from cls._of(text, piece)
                piece = []
            piece.append(match.span())
        yield from cls._of(text, piece)

    @classmethod
    def _of(cls, text: str, piece: list[tuple[int, int]]) -> Iterator[_Run]:
        counts, singles = [0], [0]
        for s, e in piece:
            counts.append(counts[-1] + e - s)
            singles.append(singles[-1] + (e - s == 1))
        if counts[-1] < _NATIONAL_DIGITS[0]:
            return
        groups = tuple(piece)
        start, end = groups[0][0], groups[-1][1]
        lead = _lead_start(text, start)
        blocked = set(_blocked_groups(text, groups))
        if _glued_left(text, lead):
            if _is_iban_head(text, start) and groups[0][1] - start == 2:
                blocked.update(range(len(groups)))  # DE89 3704 0044 …: an IBAN
            blocked.add(0)
        if end < len(text) and _is_word_char(text[end]):
            blocked.add(len(groups) - 1)
        if _has_account_blocks(groups):
            blocked.update(range(len(groups)))
        yield cls(lead, groups, tuple(counts), tuple(singles), frozenset(blocked))

    @property
    def is_long(self) -> bool:
        return self.counts[-1] > _LONG_RUN_DIGITS

    def digits_between(self, i: int, j: int) -> int:
        return self.counts[j + 1] - self.counts[i]

    def last_free(self, i: int) -> int:
        """The last group reachable from ``i`` without a blocked group or too many digits."""
        # The digit bound keeps a huge run of digits linear.
        last = i
        limit = min(len(self.groups) - 1, i + _INTL_DIGITS[1] + 2)
        while last < limit and last + 1 not in self.blocked:
            last += 1
        return last


class _Reading(Enum):
    """How a digit string reads in one region, judged from the region's metadata alone."""

    NONE = "none"  # not a number of the region
    POSSIBLE = "possible"  # right length after the trunk prefix, but no number type matches
    OTHER = "other"  # valid only when read another way (trunk prefix or country code missing)
    CANONICAL = "canonical"  # valid and written in the region's national form
    UNKNOWN = "unknown"  # the region rewrites digits while parsing: ask phonenumbers


#: Longest national significant number phonenumbers' metadata describes.
_MAX_NSN_DIGITS: Final = 17


@dataclass(frozen=True, slots=True)
class _Desc:
    """One phone-number description of a region: possible lengths and a pattern."""

    lengths: frozenset[int]  # empty: any length allowed by the general description
    pattern: str

    def allows(self, length: int) -> bool:
        return not self.lengths or length in self.lengths


class _CompiledOnUse(Mapping[int, re.Pattern[str]]):
    """Patterns by length, each compiled with ``re`` (as phonenumbers compiles its metadata)
    when first asked for: a text's numbers are of a few lengths, a foreign candidate reads a
    few lengths of many regions."""

    __slots__ = ("_compiled", "_sources")

    def __init__(self, sources: dict[int, str]) -> None:
        self._sources = sources
        self._compiled: dict[int, re.Pattern[str]] = {}

    def __getitem__(self, length: int) -> re.Pattern[str]:
        pattern = self._compiled.get(length)
        if pattern is None:
            pattern = self._compiled[length] = re.compile(self._sources[length])
        return pattern

    def __contains__(self, length: object) -> bool:
        return length in self._sources

    def __iter__(self) -> Iterator[int]:
        return iter(self._sources)

    def __len__(self) -> int:
        return len(self._sources)

    def fullmatch(self, text: str) -> bool:
        """Whether the pattern of ``text``'s length (if any) matches it whole."""
        pattern = self._compiled.get(len(text))
        if pattern is None:
            if len(text) not in self._sources:
                return False
            pattern = self[len(text)]
        return pattern.fullmatch(text) is not None

    def source(self, length: int) -> str:
        return self._sources[length]


class _ValidByLength(_CompiledOnUse):
    """For each length, one pattern that fully matches a national significant number of that
    length exactly when a general description and a number type both allow the length and
    fully match it."""

    __slots__ = ("_types",)

    def __init__(self, generals: Sequence[_Desc], types: Sequence[_Desc]) -> None:
        sources: dict[int, str] = {}
        self._types: dict[int, str] = {}  # the number types of each length's pattern
        for length in range(1, _MAX_NSN_DIGITS + 1):
            general = "|".join(f"(?:{d.pattern})" for d in generals if d.allows(length))
            kind = "|".join(f"(?:{d.pattern})" for d in types if d.allows(length))
            if general and kind:
                sources[length] = rf"(?=(?:{general})\Z)(?:{kind})"
                self._types[length] = kind
        super().__init__(sources)

    def types(self, length: int) -> str:
        """The number types of :meth:`source` alone, without its general descriptions."""
        return self._types[length]


@dataclass(frozen=True, slots=True)
class _Format:
    """One national format: which numbers it applies to and the digits it writes before them."""

    leading: re.Pattern[str] | None
    pattern: re.Pattern[str]
    prefix_digits: str
    written: tuple[tuple[int | str, ...], ...]  # digit groups it writes (:func:`_recipe`)
    widths: tuple[tuple[int, int], ...]  # fewest and most digits of each group it writes

    def may_write(self, groups: tuple[int, ...], prefix: str) -> bool:
        """Whether :func:`_format_may_write` may find ``groups`` written by this format for
        some number, in a region with national ``prefix``: as the format writes them, with
        the prefix as a group of its own, or with the prefix dropped from the first group."""
        widths = self.widths
        if _fit(groups, widths):
            return True
        return bool(prefix) and (
            (groups[0] == len(prefix) and _fit(groups[1:], widths))
            or _fit((groups[0] + len(prefix), *groups[1:]), widths)
        )


#: A region's national formats as one pattern, and by the index of the empty group that ends
#: each format's alternative, the format and the digit groups it writes, each as its pieces:
#: the number of a group of the whole pattern, or digits the format writes itself.
_FormatTable = tuple[
    re.Pattern[str], dict[int, tuple["_Format", tuple[tuple[int | str, ...], ...]]]
]


def _format_table(formats: Sequence[_Format]) -> _FormatTable:
    """``formats`` as one alternation, in their order, each alternative its leading digits as
    a condition and its pattern, closed by an empty group: the first alternative that matches
    a number whole is the format ``phonenumbers`` chooses for it."""
    parts, chosen, groups = [], {}, 0
    for fmt in formats:
        lead = "" if fmt.leading is None else f"(?=(?:{fmt.leading.pattern}))"
        base = groups + (0 if fmt.leading is None else fmt.leading.groups)
        groups = base + fmt.pattern.groups + 1
        chosen[groups] = (
            fmt,
            tuple(
                tuple(base + piece if isinstance(piece, int) else piece for piece in group)
                for group in fmt.written
            ),
        )
        parts.append(f"{lead}(?:{fmt.pattern.pattern})()")
    return re.compile("|".join(parts) or "(?!)"), chosen


def _fit(groups: tuple[int, ...], widths: tuple[tuple[int, int], ...]) -> bool:
    """Whether each of ``groups`` lies within its ``widths``, group for group."""
    return len(groups) == len(widths) and all(
        low <= n <= high for n, (low, high) in zip(groups, widths, strict=True)
    )


@dataclass(frozen=True, slots=True)
class _RegionShape:
    """A region's numbering plan from phonenumbers' metadata, for a cheap check before parsing."""

    # It mirrors phonenumbers' own number-type and national-format selection so that most
    # candidates are judged without a parse (see :meth:`settles`).

    prefix: str
    country_code: str
    strip: re.Pattern[str] | None  # the region's national-prefix-for-parsing pattern
    strip_digits: str | None  # that pattern where it is a plain digit string ("0")
    valid: _ValidByLength
    formats: tuple[_Format, ...]
    possible_lengths: frozenset[int]
    transform: str | None  # how the region rewrites digits as it strips its prefix, if it does
    carrier_codes: bool  # the region strips a carrier code with its trunk prefix
    dialling: re.Pattern[str] | None  # the region's international dialling prefix
    #: The formats as one pattern (:func:`_format_table`), built on first use.
    table: list[_FormatTable] = field(default_factory=list, compare=False, repr=False)

    def significant_forms(self, digits: str) -> list[str]:
        """``digits`` read as a national significant number: as is, without prefix or code."""
        forms = self.parse_forms(digits)
        if digits.startswith(self.country_code):
            forms.append(digits[len(self.country_code) :])
        return forms

    @property
    def rewrites(self) -> bool:
        """Whether the region transforms some digits while stripping its prefix."""
        return self.transform is not None

    def rewrites_digits(self, digits: str) -> bool:
        """Whether phonenumbers rewrites ``digits`` as it strips the region's prefix: the
        prefix pattern matches them with its last group captured (Antigua prepends ``268`` to
        a seven-digit local number; it reads a ten-digit one as any region does)."""
        if self.transform is None or self.strip is None:
            return False
        match = self.strip.match(digits)
        if match is None:
            return False
        captured = match.groups()
        return not captured or captured[-1] is not None

    def strips_nothing(self, digits: str) -> bool:
        """Whether the region's prefix pattern leaves ``digits`` as they are."""
        return self.strip is None or self.strip.match(digits) is None

    def has_valid_form(self, digits: str) -> bool:
        """Whether any string phonenumbers may take as the national significant number of
        ``digits`` (a significant form, or the digits rewritten as the region rewrites them)
        is valid by the mirror: where none is, no parse finds the number valid."""
        forms = self.significant_forms(digits)
        if self.transform and self.strip is not None and self.strip.match(digits):
            forms.append(self.strip.sub(self.transform, digits, count=1))
        patterns = self.valid
        return any(patterns.fullmatch(f) for f in forms)

    def reading(self, digits: str) -> _Reading:
        if self.rewrites_digits(digits):
            return _Reading.UNKNOWN
        patterns = self.valid
        valid = possible = False
        for nsn in self.significant_forms(digits):
            if not patterns.fullmatch(nsn):
                possible = possible or len(nsn) in self.possible_lengths
            elif digits == self.prefix + nsn or digits == self.national_digits(nsn):
                return _Reading.CANONICAL
            else:
                valid = True
        if valid:
            return _Reading.OTHER
        return _Reading.POSSIBLE if possible and digits.startswith(self.prefix) else _Reading.NONE

    def settles(self, digits: str) -> bool:
        """Whether a CANONICAL reading of ``digits`` is phonenumbers' own (valid, the same
        national significant number; tested over every region). Not where a region whose
        prefix pattern captures groups (a carrier code, or digits it rewrites) strips anything
        from the digits, or where its country code or international dialling prefix leads them
        (``01x`` in Israel): phonenumbers reads those itself."""
        return (not self.carrier_codes or self.strips_nothing(digits)) and not (
            self.led_from_abroad(digits)
        )

    def led_from_abroad(self, digits: str) -> bool:
        """Whether the region's country code or international dialling prefix leads ``digits``."""
        return digits.startswith(self.country_code) or (
            self.dialling is not None and self.dialling.match(digits) is not None
        )

    def national_digits(self, nsn: str) -> str:
        """The digits of ``nsn`` in the region's national format (with its trunk prefix or not)."""
        fmt = self.format_of(nsn)
        return nsn if fmt is None else fmt.prefix_digits + nsn

    def format_of(self, nsn: str) -> _Format | None:
        """The national format phonenumbers chooses for ``nsn``, if any."""
        chosen = self._chosen(nsn)
        return None if chosen is None else chosen[1]

    def national_form(self, nsn: str) -> tuple[tuple[int, ...], str]:
        """The digit groups and digits ``format_number`` writes ``nsn`` in, in the region's
        national format (one group, ``nsn`` itself, where no format applies)."""
        chosen = self._chosen(nsn)
        if chosen is None:
            return (len(nsn),), nsn
        match, _, written_groups = chosen
        group = match.group
        pieces = [
            "".join([group(piece) if isinstance(piece, int) else piece for piece in written])
            for written in written_groups
        ]
        return tuple(map(len, pieces)), "".join(pieces)

    def _chosen(
        self, nsn: str
    ) -> tuple[re.Match[str], _Format, tuple[tuple[int | str, ...], ...]] | None:
        """``nsn`` matched by the formats' table (:func:`_format_table`, built on first use),
        the format chosen and the groups it writes; ``None`` where no format applies."""
        table = self.table
        if not table:
            table.append(_format_table(self.formats))
        pattern, chosen = table[0]
        match = pattern.fullmatch(nsn)
        return None if match is None else (match, *chosen[match.lastindex or 0])

    def parse_forms(self, digits: str) -> list[str]:
        """What phonenumbers may take as the national significant number of ``digits`` where
        neither the country code nor the dialling prefix leads them and the region does not
        rewrite digits: the digits as written, or without the national prefix it strips."""
        forms = [digits]
        if self.strip_digits is not None:
            if digits.startswith(self.strip_digits):
                forms.append(digits[len(self.strip_digits) :])
        elif self.strip is not None:
            prefix = self.strip.match(digits)
            if prefix is not None and prefix.end() > 0:
                forms.append(digits[prefix.end() :])
        return forms


@cache
def _locale(langs: tuple[str, ...]) -> _PhoneLocale:
    """Phone/fax context and extension words of ``langs`` (read from ``contacts.toml``)."""
    context = ContextLexicon(
        contact_table(langs, lambda w: w.phone) + contact_table(langs, lambda w: w.fax)
    )
    words = contact_table(langs, lambda w: w.extension) or ("ext",)
    alts = phrase_alternation(words, fold_case=False, spaces=r"[ \t]+")
    extension = compile_pattern(
        rf"[ \t]*[,;]?[ \t]*(?i:{alts})(?!\p{{L}})[ \t]*[.:#]?[ \t]*[-\u2013]?[ \t]*"
        rf"{_DIGIT}{{1,6}}(?![\p{{N}}\p{{L}}])"
    )
    firsts = {w.strip()[:1] for w in words if w.strip()}
    starts = frozenset(f for c in firsts for f in (c, c.lower(), c.upper(), c.casefold()))
    return _PhoneLocale(context, extension, starts)


@cache
def _regions(countries: tuple[str, ...]) -> tuple[str, ...]:
    """Upper-cased region codes, checked against phonenumbers' metadata."""
    regions = tuple(dict.fromkeys(c.upper() for c in countries))
    unknown = [r for r in regions if r not in phonenumbers.SUPPORTED_REGIONS]
    if unknown:
        raise UnknownCountryError(unknown[0])
    return regions


def _desc(desc: phonenumbers.PhoneNumberDesc | None) -> _Desc | None:
    if desc is None or not desc.national_number_pattern:
        return None
    return _Desc(frozenset(desc.possible_length), desc.national_number_pattern)


@cache
def _national_lengths(regions: tuple[str, ...]) -> frozenset[int]:
    """Digit counts a number written without ``+`` can have in any of ``regions``."""
    low, high = _NATIONAL_DIGITS
    lengths: set[int] = set()
    for region in regions:
        shape = _region_shape(region)
        if shape.rewrites:
            return frozenset(range(low, high + 1))
        extras = (0, len(shape.prefix), len(shape.country_code))
        lengths.update(n + extra for n in shape.possible_lengths for extra in extras)
    return frozenset(n for n in lengths if low <= n <= high)


@cache
def _region_shape(region: str) -> _RegionShape:
    """The numbering plan of ``region``, with the number types of every region sharing its code."""
    # As in phonenumbers, a Canadian number is valid when read in the United States.
    metadata = region_metadata(region)
    general = metadata.general_desc
    if general is None:
        raise UnknownCountryError(region)
    country_code = int(metadata.country_code or 0)
    siblings = [
        phonenumbers.PhoneMetadata.metadata_for_region(r)
        for r in phonenumbers.COUNTRY_CODE_TO_REGION_CODE.get(country_code, (region,))
    ]
    types = tuple(
        d
        for m in siblings
        if m is not None
        for d in (_desc(getattr(m, f)) for f in TYPE_FIELDS)
        if d
    )
    generals = tuple(d for m in siblings if m is not None for d in [_desc(m.general_desc)] if d)
    valid = _valid_by_length(generals, types)
    formats = tuple(
        _Format(
            re.compile(f.leading_digits_pattern[-1]) if f.leading_digits_pattern else None,
            re.compile(f.pattern or ""),
            _digits((f.national_prefix_formatting_rule or "").replace("\\1", "")),
            recipe,
            _written_widths(f.pattern or "", recipe),
        )
        for f in metadata.number_format
        for recipe in [_recipe(_national_rule(f))]
    )
    rule = metadata.national_prefix_for_parsing
    strip = re.compile(rule) if rule else None
    dialling = metadata.international_prefix
    return _RegionShape(
        prefix=metadata.national_prefix or "",
        country_code=str(country_code),
        strip=strip,
        strip_digits=rule if rule and rule.isdigit() else None,
        valid=valid,
        formats=formats,
        possible_lengths=frozenset((*general.possible_length, *general.possible_length_local_only)),
        transform=metadata.national_prefix_transform_rule,
        carrier_codes=strip is not None and strip.groups > 0,
        dialling=re.compile(dialling) if dialling else None,
    )


@cache
def _valid_by_length(generals: tuple[_Desc, ...], types: tuple[_Desc, ...]) -> _ValidByLength:
    """One :class:`_ValidByLength` for the regions that share a country code (they share its
    descriptions): its patterns are compiled once."""
    return _ValidByLength(generals, types)


#: A group reference of a format rule (``\1``), as phonenumbers finds the first one.
_GROUP_REF = re.compile(r"(\\\d)")


def _recipe(rule: str) -> tuple[tuple[int | str, ...], ...]:
    """The digit groups a replacement template writes: for each, its pieces in order (a group
    number, or the digits the template writes itself)."""
    groups: list[tuple[int | str, ...]] = []
    current: list[int | str] = []
    for piece in re.split(r"(\\\d|\d+)", rule):
        if not piece:
            continue
        if piece.startswith("\\"):
            current.append(int(piece[1:]))
        elif piece.isdigit():
            current.append(piece)
        elif current:
            groups.append(tuple(current))
            current = []
    if current:
        groups.append(tuple(current))
    return tuple(groups)


#: A group of a format pattern: one digit, or a count or range of digits (``(\d{2,4})``).
_FORMAT_GROUP = re.compile(r"\(\\d(?:\{(\d+)(?:,(\d*))?\})?\)")


def _pattern_widths(pattern: str) -> tuple[tuple[int, int], ...] | None:
    """The fewest and most digits of each group of a format pattern made of digit groups
    alone (as every format phonenumbers has is), else ``None``."""
    widths: list[tuple[int, int]] = []
    end = 0
    for match in _FORMAT_GROUP.finditer(pattern):
        if match.start() != end:
            return None
        end = match.end()
        low = int(match.group(1) or 1)
        high = match.group(2)
        widths.append((low, low if high is None else int(high) if high else _MAX_NSN_DIGITS))
    return tuple(widths) if end == len(pattern) else None


def _written_widths(
    pattern: str, written: tuple[tuple[int | str, ...], ...]
) -> tuple[tuple[int, int], ...]:
    """For each digit group a format writes, the fewest and most digits it can hold (any
    number where the pattern is not one :func:`_pattern_widths` reads)."""
    widths = _pattern_widths(pattern)
    bounds = []
    for group in written:
        low = high = 0
        for piece in group:
            if isinstance(piece, str):
                low, high = low + len(piece), high + len(piece)
            elif widths is None or piece > len(widths):
                low, high = low, high + _MAX_NSN_DIGITS
            else:
                low, high = low + widths[piece - 1][0], high + widths[piece - 1][1]
        bounds.append((low, high))
    return tuple(bounds)


def _national_rule(fmt: phonenumbers.NumberFormat) -> str:
    """A format's replacement template for national writing: its first group reference
    written with the national prefix as the format's rule writes it, the rule's ``\\1``
    standing for that reference (as phonenumbers builds it: ``\\2 15-\\3`` with ``0\\1``
    is ``0\\2 15-\\3``)."""
    rule = fmt.national_prefix_formatting_rule
    if not rule:
        return str(fmt.format)
    return _GROUP_REF.sub(str(rule), str(fmt.format), count=1)


def _digits(text: str) -> str:
    """The ASCII digits of ``text`` (other scripts' decimal digits converted)."""
    digits = "".join(_GROUP.findall(text))
    return digits if digits.isascii() else "".join(str(int(c)) for c in digits)


class _Memo:
    """What digit strings read as in regions, by digits and region: parses and
    :func:`read_in` readings already made while reading one segment."""

    __slots__ = ("parsed", "readings", "types")

    def __init__(self) -> None:
        self.parsed: dict[tuple[str, str | None], phonenumbers.PhoneNumber | None] = {}
        self.readings: dict[tuple[str, str], Reading | None] = {}
        self.types: dict[tuple[int, str], Reading] = {}  # readings by code and number


def _parse(
    number: str, region: str | None, memo: _Memo | None = None
) -> phonenumbers.PhoneNumber | None:
    if memo is not None and (number, region) in memo.parsed:
        return memo.parsed[number, region]
    try:
        parsed: phonenumbers.PhoneNumber | None = phonenumbers.parse(number, region)
    except NumberParseException:
        parsed = None
    if memo is not None:
        memo.parsed[number, region] = parsed
    return parsed


def _read_in(digits: str, region: str, memo: _Memo | None = None) -> Reading | None:
    """:func:`read_in`, kept in ``memo``."""
    if memo is None:
        return read_in(digits, region)
    key = (digits, region)
    readings = memo.readings
    if key in readings:
        return readings[key]
    found = readings[key] = read_in(digits, region, memo.types)
    return found


def _judge_candidate(
    candidate: str, shape: _Shape, scan: _Scan, has_context: Callable[[], bool]
) -> _Verdict | None:
    """Accept or reject one candidate string (see the module docstring for the policy)."""
    if candidate.lstrip("( \u00a0")[:1] in {"+", "\uff0b"}:
        return _international_verdict(
            scan.finding(True, _digits(candidate.replace("(0)", ""))), has_context
        )
    digits = _digits(candidate)
    if digits.startswith("00") and not digits.startswith("000"):
        return _international_verdict(scan.finding(True, digits[2:]), has_context)
    finding = scan.finding(False, digits)
    if finding is None:
        return None
    if finding.canonical_prefix is not None:
        return _national_verdict(digits, finding.canonical_prefix, shape, has_context)
    if finding.other is not None and has_context() and _confirms(digits, finding.other, valid=True):
        return _Verdict(SOURCE_CONTEXT, 0.75)
    if finding.possible and has_context() and _confirms(digits, finding.possible, valid=False):
        return _Verdict(SOURCE_CONTEXT, 0.6)
    return None


def _find_international(digits: str) -> _Finding | None:
    """``digits`` follow a ``+`` (or ``00``): country code and subscriber number."""
    low, high = _INTL_DIGITS
    number = _parse("+" + digits, None) if low <= len(digits) <= high else None
    if number is None:
        return None
    if phonenumbers.is_valid_number(number):
        return _Finding(valid=True)
    return _Finding(valid=False, possible="+") if phonenumbers.is_possible_number(number) else None


def _international_verdict(
    finding: _Finding | None, has_context: Callable[[], bool]
) -> _Verdict | None:
    if finding is None:
        return None
    if finding.valid:
        return _Verdict(SOURCE_INTERNATIONAL, 0.99 if has_context() else 0.95)
    return _Verdict(SOURCE_CONTEXT, 0.6) if has_context() else None


@dataclass(frozen=True, slots=True)
class _NationalPlan:
    """The regions of a segment, read together: digits that no region reads as more than
    the digits as written (no trunk prefix, carrier code or country code leads them) and that
    no region's descriptions accept are at most a possible number, decided without reading
    each region."""

    #: By length: any region's valid pattern, each region's closed by an empty group named
    #: ``r`` and the region's position.
    valid_any: Mapping[int, re.Pattern[str]]
    leads: tuple[str, ...]  # trunk prefixes, literal prefixes for parsing, country codes
    strips: tuple[re.Pattern[str], ...]  # the prefixes for parsing that are patterns
    quick: bool  # no region rewrites digits (those are left to phonenumbers)
    #: Regions without a trunk prefix, with their position and the lengths a possible number
    #: has there.
    unprefixed: tuple[tuple[int, str, frozenset[int]], ...]

    def finding(self, digits: str) -> tuple[bool, _Finding | None, int]:
        """``(True, finding, 0)`` where the plan decides what ``digits`` are, else ``(False,
        None, k)``: then each region from position ``k`` on is read, the ones before it
        reading the digits as a possible number at most (:meth:`possible_before`)."""
        if not self.quick or digits.startswith(self.leads):
            return False, None, 0
        if any(strip.match(digits) for strip in self.strips):
            return False, None, 0
        valid = self.valid_any
        match = valid[len(digits)].fullmatch(digits) if len(digits) in valid else None
        if match is not None:
            # No lead: each region reads the digits as written, so the regions before the
            # first whose pattern matches read them as no number, or a possible one.
            return False, None, int((match.lastgroup or "r0")[1:])
        possible = self.possible_before(digits)
        return True, None if possible is None else _Finding(valid=False, possible=possible), 0

    def possible_before(self, digits: str, position: int | None = None) -> str | None:
        """The first region (before ``position``, if given) where ``digits``, led by nothing
        any region strips, are a possible number (a region without a trunk prefix whose
        possible lengths hold theirs)."""
        for k, region, lengths in self.unprefixed:
            if position is not None and k >= position:
                break
            if len(digits) in lengths:
                return region
        return None


@cache
def _national_plan(regions: tuple[str, ...]) -> _NationalPlan:
    shapes = [_region_shape(region) for region in regions]
    leads = {
        lead
        for shape in shapes
        for lead in (shape.prefix, shape.strip_digits or "", shape.country_code)
        if lead
    }
    lengths = {length for shape in shapes for length in shape.valid}
    return _NationalPlan(
        valid_any=_CompiledOnUse(
            {
                length: "|".join(
                    f"(?:{shape.valid.source(length)})(?P<r{k}>)"
                    for k, shape in enumerate(shapes)
                    if length in shape.valid
                )
                for length in sorted(lengths)
            }
        ),
        leads=tuple(sorted(leads)),
        strips=tuple(
            shape.strip
            for shape in shapes
            if shape.strip is not None and shape.strip_digits is None
        ),
        quick=not any(shape.rewrites for shape in shapes),
        unprefixed=tuple(
            (k, region, shape.possible_lengths)
            for k, (region, shape) in enumerate(zip(regions, shapes, strict=True))
            if not shape.prefix
        ),
    )


def _find_national(digits: str, regions: Sequence[str]) -> _Finding | None:
    """``digits`` written without a country code, read in each of ``regions``."""
    low, high = _NATIONAL_DIGITS
    if not low <= len(digits) <= high:
        return None
    plan = _national_plan(tuple(regions))
    decided, finding, first = plan.finding(digits)
    if decided:
        return finding
    other: str | None = None
    possible = plan.possible_before(digits, first) if first else None
    for region in regions[first:]:
        region_shape = _region_shape(region)
        reading = region_shape.reading(digits)
        if reading is _Reading.CANONICAL and region_shape.settles(digits):
            return _Finding(valid=True, canonical_prefix=region_shape.prefix)
        if reading is _Reading.CANONICAL or reading is _Reading.UNKNOWN:
            if _is_canonical(digits, region, region_shape.prefix):
                return _Finding(valid=True, canonical_prefix=region_shape.prefix)
            reading = _Reading.OTHER
        if reading is _Reading.OTHER:
            other = other or region
        elif reading is _Reading.POSSIBLE:
            possible = possible or region
    if other is None and possible is None:
        return None
    return _Finding(valid=other is not None, other=other, possible=possible)


#: Digit counts a foreign candidate may have (every region's national lengths lie in it).
_FOREIGN_LENGTHS: Final = frozenset(range(_NATIONAL_DIGITS[0], _NATIONAL_DIGITS[1] + 1))


#: Fewest digits of a foreign number known by its national grouping alone: shorter groupings
#: (``2019 - 2024``, ``1234 5678``) are as often years or identifiers.
_FOREIGN_UNPREFIXED_DIGITS: Final = 10
#: Digits of a bare foreign mobile number led by its trunk prefix ``0`` (``0612345678``,
#: ``07911123456``): a longer bare string is as often a national identifier (a Vietnamese
#: citizen-ID number has twelve digits led by ``0``).
_FOREIGN_BARE_DIGITS: Final = (10, 11)
#: Digits of the first group of a foreign number known by its trunk prefix ``0``: the prefix
#: and an area or network code (``020``, ``0772``, ``01512``); ``08 08 76541`` is a licence
#: number, ``03577050 06`` part of a social-security number.
_FOREIGN_LEAD_DIGITS: Final = (3, 5)


@dataclass(frozen=True, slots=True)
class _Plan:
    """What a region's general description allows, for a cheap first look at a foreign
    candidate (compiled with ``re``, as phonenumbers does: the full shapes of every region
    would take a second to build)."""

    region: str
    prefix: str
    general: re.Pattern[str]
    strip: re.Pattern[str] | None
    lengths: frozenset[int]

    def may_be_valid(self, digits: str) -> bool:
        """Whether the general description admits ``digits``, or them without the lead the
        region's prefix pattern strips, and a number type of the region's code admits that
        form as well (:attr:`_RegionShape.valid`): phonenumbers finds a number valid only
        where both do."""
        general = self.general
        valid = None
        if general.fullmatch(digits):
            valid = _region_shape(self.region).valid
            if valid.fullmatch(digits):
                return True
        lead = self.strip.match(digits) if self.strip is not None else None
        if lead is None or not lead.end():
            return False
        rest = digits[lead.end() :]
        if not general.fullmatch(rest):
            return False
        valid = valid or _region_shape(self.region).valid
        return valid.fullmatch(rest)


@cache
def _plans_of_length(n_digits: int) -> tuple[_Plan, ...]:
    """Every region (in code order) whose numbers written nationally can have ``n_digits``."""
    plans = []
    for region in sorted(phonenumbers.SUPPORTED_REGIONS):
        metadata = region_metadata(region)
        general = metadata.general_desc
        if general is None or not general.national_number_pattern:
            continue
        prefix = metadata.national_prefix or ""
        sizes = (*general.possible_length, *general.possible_length_local_only)
        if not any(n_digits in (n, n + len(prefix)) for n in sizes):
            continue
        rule = metadata.national_prefix_for_parsing
        plans.append(
            _Plan(
                region,
                prefix,
                re.compile(general.national_number_pattern),
                re.compile(rule) if rule else None,
                frozenset(sizes),
            )
        )
    return tuple(plans)


@cache
def _plan_by_region(n_digits: int) -> dict[str, _Plan]:
    """:func:`_plans_of_length`, by region."""
    return {plan.region: plan for plan in _plans_of_length(n_digits)}


@dataclass(frozen=True, slots=True)
class _Sieve:
    """The regions of :func:`_plans_of_length` that may read digits of that length as valid,
    found for all regions at once (:class:`~polydeid.text.pattern_sets.FullMatchSet`): those
    whose general description and whose code's number types both match the digits, or whose
    prefix pattern and general description match them in turn. Every region where
    :meth:`_Plan.may_be_valid` holds is among them (tested); a few more may be."""

    plans: tuple[_Plan, ...]
    generals: FullMatchSet  # each plan's general description, in plan order
    types: FullMatchSet  # the number types of each country code of the length
    type_of: tuple[int, ...]  # each plan's entry in ``types`` (-1: none of this length)
    stripped: FullMatchSet  # prefix pattern, then general description, of ``stripping``
    stripping: tuple[int, ...]  # the plans with a prefix pattern

    def positions(self, digits: str) -> list[int]:
        """The positions in :attr:`plans` of the regions that may read ``digits``, in order."""
        type_of = self.type_of
        typed = self.types.matching(digits)
        found = [k for k in self.generals.matching(digits) if type_of[k] in typed]
        stripped = self.stripped.matching(digits)
        if stripped:
            stripping = self.stripping
            found = sorted({*found, *(stripping[k] for k in stripped)})
        else:
            found.sort()
        return found


@cache
def _sieve(n_digits: int) -> _Sieve:
    """The sieve of :func:`_plans_of_length` (``n_digits``), built on first use (milliseconds)."""
    plans = _plans_of_length(n_digits)
    types: dict[int, tuple[int, str]] = {}  # by the shared _ValidByLength's identity
    type_of = []
    for plan in plans:
        valid = _region_shape(plan.region).valid
        if n_digits not in valid:
            type_of.append(-1)
            continue
        entry = types.setdefault(id(valid), (len(types), valid.types(n_digits)))
        type_of.append(entry[0])
    stripped = [(k, plan.strip) for k, plan in enumerate(plans) if plan.strip is not None]
    stripping = tuple(k for k, _ in stripped)
    return _Sieve(
        plans,
        FullMatchSet([plan.general.pattern for plan in plans]),
        FullMatchSet([source for _, source in types.values()]),
        tuple(type_of),
        FullMatchSet(
            [f"(?:{strip.pattern})(?:{plans[k].general.pattern})" for k, strip in stripped]
        ),
        stripping,
    )


def _reads_foreign(
    digits: str,
    plan: _Plan,
    own: Sequence[str],
    memo: _Memo,
    keep: Callable[[str], bool] | None = None,
) -> bool:
    """Whether ``plan``'s region, if not one of ``own``, reads ``digits`` as a valid number in
    national form: its descriptions admit them (:meth:`_Plan.may_be_valid`) and
    :func:`_canonical_in` holds. ``keep`` is asked only where a parse must decide, before it:
    where it does not keep the region the answer is no."""
    return (
        plan.region not in own
        and plan.may_be_valid(digits)
        and _canonical_in(digits, plan.region, memo, keep)
    )


def _canonical_in(
    digits: str,
    region: str,
    memo: _Memo | None = None,
    keep: Callable[[str], bool] | None = None,
) -> bool:
    """:func:`_is_canonical`, without a parse where the region's metadata decides
    (:func:`_mirror_verdict`; tested in every region). ``keep``, if given, is asked before a
    parse: where it does not keep the region the answer is no."""
    shape = _region_shape(region)
    settled = _mirror_verdict(digits, region, shape, memo)
    if settled is not None:
        return settled
    if keep is not None and not keep(region):
        return False
    return _is_canonical(digits, region, shape.prefix, memo)


def _mirror_verdict(
    digits: str, region: str, shape: _RegionShape, memo: _Memo | None = None
) -> bool | None:
    """:func:`_is_canonical`'s answer where the region's metadata decides, else ``None``:
    where the region reads the digits as written (:func:`read_in`), its reading; elsewhere
    digits with no valid form in it are not valid, nor are digits of a region that rewrites
    them with no valid form either way; undecided where the region's country code or
    international dialling prefix leads them (phonenumbers may read those as dialled from
    abroad)."""
    read = _read_in(digits, region, memo)
    if read is not None:
        return read.valid and len(digits) - len(read.nsn) <= len(shape.prefix) + 2
    if shape.led_from_abroad(digits):
        return None
    reading = shape.reading(digits)
    if reading is _Reading.NONE or reading is _Reading.POSSIBLE:
        return False
    if reading is _Reading.UNKNOWN and not shape.has_valid_form(digits):
        return False
    return None


def _foreign_verdict(
    candidate: str, shape: _Shape, scan: _Scan, has_context: Callable[[], bool]
) -> _Verdict | None:
    """Accept a number valid only in a region outside the segment's (module docstring)."""
    if shape.spaced_out:
        return None
    digits = _digits(candidate)
    low, high = _FOREIGN_BARE_DIGITS
    bare_with_trunk = digits.startswith("0") and low <= len(digits) <= high
    if not (shape.grouped or bare_with_trunk or has_context()):
        return None
    if not (digits.startswith("0") or len(digits) >= _FOREIGN_UNPREFIXED_DIGITS or has_context()):
        return None  # without context only these can be written as a region writes them
    if has_context():
        return _Verdict(SOURCE_FOREIGN, 0.85) if scan.foreign(digits) else None
    # Any region where the number is valid and written as there decides; only those whose
    # format for the digits may write it so are read.
    groups_by_prefix: dict[str, tuple[int, ...]] = {}

    def keep(region: str) -> bool:
        return _format_may_write(candidate, digits, region, groups_by_prefix)

    def written(region: str) -> bool:
        return _written_as_in(candidate, digits, region, scan.read, groups_by_prefix)

    key = _keep_key(candidate, digits)
    kept = None if key is None else _Kept(_keepers(*key), keep)
    found = scan.foreign(digits, kept, written, candidate)
    return _Verdict(SOURCE_FOREIGN, 0.8) if found else None


def _format_may_write(
    candidate: str, digits: str, region: str, groups_by_prefix: dict[str, tuple[int, ...]]
) -> bool:
    """Whether :func:`_written_as_in` may hold for ``candidate`` in ``region``, read from the
    metadata mirror: the national format of each national significant number phonenumbers
    may read in the digits (tested to keep every region where it holds).
    ``groups_by_prefix``: the candidate's digit groups as read with each national prefix."""
    shape = _region_shape(region)
    prefix = shape.prefix
    groups = groups_by_prefix.get(prefix)
    if groups is None:
        groups = groups_by_prefix[prefix] = _written_groups(candidate, prefix)
    trunk_led = bool(prefix) and digits.startswith(prefix)
    if _trunk_and_area(groups, prefix, trunk_led):
        return True
    if len(digits) < _FOREIGN_UNPREFIXED_DIGITS:
        return False
    if len(groups) == 1:
        return prefix == "0"
    if shape.rewrites_digits(digits) or shape.led_from_abroad(digits):
        return True  # phonenumbers may read other digits than the mirror's
    main = _region_shape(_main_region(region))
    for nsn in shape.parse_forms(digits):
        written = main.national_form(nsn)[0]
        if (
            groups == written
            or (trunk_led and groups == (len(prefix), *written))
            or (not trunk_led and groups == (written[0] - len(prefix), *written[1:]))
        ):
            return True
    return False


@dataclass(frozen=True, slots=True)
class _ForeignIndex:
    """The regions' plans by what leads a number, for :func:`_may_keep`."""

    trunk_zero: frozenset[str]  # regions with the national prefix 0
    by_code: Mapping[str, frozenset[str]]  # regions by country code
    #: By a number's first digit, the regions whose international dialling prefix may lead
    #: it or whose prefix pattern may rewrite it.
    led_by: Mapping[str, frozenset[str]]


@cache
def _foreign_index() -> _ForeignIndex:
    trunk_zero: set[str] = set()
    by_code: dict[str, set[str]] = {}
    led_by: dict[str, set[str]] = {digit: set() for digit in "0123456789"}
    for region in phonenumbers.SUPPORTED_REGIONS:
        shape = _region_shape(region)
        if shape.prefix == "0":
            trunk_zero.add(region)
        by_code.setdefault(shape.country_code, set()).add(region)
        leads = [shape.dialling] if shape.dialling is not None else []
        if shape.transform is not None and shape.strip is not None:
            leads.append(shape.strip)
        for lead in leads:
            for digit in led_by:
                if _may_lead(lead.pattern, digit):
                    led_by[digit].add(region)
    return _ForeignIndex(
        frozenset(trunk_zero),
        {code: frozenset(regions) for code, regions in by_code.items()},
        {digit: frozenset(regions) for digit, regions in led_by.items()},
    )


@lru_cache(maxsize=4096)
def _writers(groups: tuple[int, ...], first: str) -> frozenset[str]:
    """The regions whose national formats may write a number led by the digit ``first`` in
    ``groups`` as :func:`_format_may_write` compares them (a number matching no format is one
    group; a format applies to the numbers its leading digits allow, unless the region's
    prefix pattern may strip the first digits)."""
    found = set()
    for region in phonenumbers.SUPPORTED_REGIONS:
        shape = _region_shape(region)
        stripped = shape.strip is not None and _may_lead(shape.strip.pattern, first)
        if (shape.prefix and len(groups) == 2 and groups[0] == len(shape.prefix)) or any(
            fmt.may_write(groups, shape.prefix)
            and (stripped or fmt.leading is None or _may_lead(fmt.leading.pattern, first))
            for fmt in _region_shape(_main_region(region)).formats
        ):
            found.add(region)
    return frozenset(found)


@cache
def _may_lead(pattern: str, digit: str) -> bool:
    """Whether ``pattern`` may match at the start of digits led by ``digit``."""
    return regex.compile(pattern).match(digit, partial=True) is not None


def _keep_key(candidate: str, digits: str) -> tuple[int, tuple[int, ...], str] | None:
    """What decides the regions that may keep ``candidate``: its digit count, digit groups
    and first three digits; ``None`` where a bracket leads it (a bracketed trunk prefix
    groups it by region)."""
    if not digits or candidate.lstrip(" \u00a0").startswith("("):
        return None
    return len(digits), _group_lengths(candidate), digits[:3]


def _may_keep(candidate: str, digits: str) -> frozenset[str] | None:
    """Every region where :func:`_format_may_write` may keep ``candidate`` (tested), from
    :func:`_keep_key` and the regions' plans alone; ``None`` where the key does not decide."""
    key = _keep_key(candidate, digits)
    return None if key is None else _keepers(*key)


@lru_cache(maxsize=4096)
def _keepers(n_digits: int, groups: tuple[int, ...], lead: str) -> frozenset[str]:
    """:func:`_may_keep` for a number of ``n_digits`` digits in ``groups`` led by ``lead``."""
    index = _foreign_index()
    found = index.led_by.get(lead[0], frozenset())
    for size in (1, 2, 3):
        found = found | index.by_code.get(lead[:size], frozenset())
    if lead.startswith("0") or len(groups) == 1:
        found = found | index.trunk_zero
    if n_digits >= _FOREIGN_UNPREFIXED_DIGITS and len(groups) > 1:
        found = found | _writers(groups, lead[0])
    return found


@cache
def _main_region(region: str) -> str:
    """The region whose formats phonenumbers writes ``region``'s numbers in."""
    code = region_metadata(region).country_code
    return str(phonenumbers.region_code_for_country_code(int(code or 0)))


def _written_as_in(
    candidate: str,
    digits: str,
    region: str,
    memo: _Memo | None = None,
    groups_by_prefix: dict[str, tuple[int, ...]] | None = None,
) -> bool:
    """Whether ``candidate`` is written as ``region`` writes its numbers (module docstring).

    Led by a trunk prefix ``0`` (bare or bracketed, ``(0)20``) with the area or network code in
    its first group (``0772 123456``, ``020 7946 0958``); or, with ten digits or more, in the
    digit groups of its national format (``(617) 555-0134``), with the trunk prefix as a group
    of its own (``1-617-555-0134``), or, for a mobile number, without its trunk prefix
    (``98765 43210``); or a bare mobile number of ten or eleven digits in its national form,
    led by its trunk prefix ``0``, as long as the region's example mobile (``0612345678``).
    ``groups_by_prefix``: the candidate's digit groups as read with each national prefix.
    """
    prefix = _region_shape(region).prefix
    groups = None if groups_by_prefix is None else groups_by_prefix.get(prefix)
    if groups is None:
        groups = _written_groups(candidate, prefix)
        if groups_by_prefix is not None:
            groups_by_prefix[prefix] = groups
    trunk_led = bool(prefix) and digits.startswith(prefix)
    if _trunk_and_area(groups, prefix, trunk_led):
        return True
    if len(digits) < _FOREIGN_UNPREFIXED_DIGITS:
        return False
    read = _read_in(digits, region, memo)
    if read is not None:  # phonenumbers' reading and national format, without a parse
        nsn, mobile = read.nsn, read.mobile
        written, national = _region_shape(_main_region(region)).national_form(nsn)
    else:
        number = _parse(digits, region, memo)
        if number is None:
            return False
        nsn = phonenumbers.national_significant_number(number)
        mobile = phonenumbers.number_type(number) in _MOBILE_TYPES
        formatted = phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.NATIONAL)
        written, national = _group_lengths(formatted), _digits(formatted)
    if len(groups) == 1:
        return (
            mobile
            and prefix == "0"
            and national == digits
            and _FOREIGN_BARE_DIGITS[0] <= len(digits) <= _FOREIGN_BARE_DIGITS[1]
            and len(nsn) == _example_mobile_length(region)
        )
    if groups == written:
        return True
    if trunk_led and not national.startswith(prefix):
        return groups == (len(prefix), *written)
    lead = written[0] - len(prefix)
    return (
        mobile
        and not trunk_led
        and national.startswith(prefix)
        and lead > 0
        and (groups == (lead, *written[1:]))
    )


def _written_groups(candidate: str, prefix: str) -> tuple[int, ...]:
    """The digit groups of ``candidate`` as a region with national ``prefix`` reads them (a
    bracketed trunk prefix joined to the group after it)."""
    return _group_lengths(_merge_bracketed_trunk(candidate, prefix))


def _trunk_and_area(groups: tuple[int, ...], prefix: str, trunk_led: bool) -> bool:
    """Led by the trunk prefix ``0`` with the area or network code in the first of several
    groups (``0772 123456``): written as the region writes it, whatever the number's type."""
    lead_low, lead_high = _FOREIGN_LEAD_DIGITS
    return len(groups) > 1 and prefix == "0" and trunk_led and lead_low <= groups[0] <= lead_high


@cache
def _example_mobile_length(region: str) -> int | None:
    """Digits of ``region``'s example mobile number (a region with mobile numbers of several
    lengths writes most of them in one)."""
    example = phonenumbers.example_number_for_type(region, phonenumbers.PhoneNumberType.MOBILE)
    return None if example is None else len(phonenumbers.national_significant_number(example))


#: Number types read as mobile numbers (their groupings are written without a trunk prefix).
_MOBILE_TYPES: Final = frozenset(
    {phonenumbers.PhoneNumberType.MOBILE, phonenumbers.PhoneNumberType.FIXED_LINE_OR_MOBILE}
)


def _merge_bracketed_trunk(candidate: str, prefix: str) -> str:
    """``candidate`` with a bracketed trunk prefix joined to the group after it (``(0)20`` as
    ``020``), as the prefix is dialled with the area code."""
    if not prefix:
        return candidate
    head = candidate.lstrip(" \u00a0")
    bracketed = f"({prefix})"
    if head.startswith(bracketed) and head[len(bracketed) : len(bracketed) + 1].isdigit():
        return prefix + head[len(bracketed) :]
    return candidate


def _group_lengths(text: str) -> tuple[int, ...]:
    return tuple(map(len, _GROUP.findall(text)))


def _is_canonical(digits: str, region: str, prefix: str, memo: _Memo | None = None) -> bool:
    """phonenumbers' word: valid, and read with the same national significant number."""
    number = _parse(digits, region, memo)
    if number is None or not phonenumbers.is_valid_number(number):
        return False
    significant = phonenumbers.national_significant_number(number)
    return digits.endswith(significant) and len(digits) - len(significant) <= len(prefix) + 2


def _confirms(digits: str, region: str, *, valid: bool) -> bool:
    """phonenumbers' word: ``digits`` are a valid (or only a possible) number of ``region``."""
    number = _parse(digits, region)
    if number is None:
        return False
    return (
        phonenumbers.is_valid_number(number) if valid else phonenumbers.is_possible_number(number)
    )


def _national_verdict(
    digits: str, prefix: str, shape: _Shape, has_context: Callable[[], bool]
) -> _Verdict:
    """Score of a valid number written in its national form (context only lifts weak ones)."""
    if shape.spaced_out:
        score = 0.75  # 0 7 7 2 …: plausible, but so is a list of single digits
    elif not shape.grouped and not (prefix and digits.startswith(prefix)):
        score = 0.7  # a bare digit string with no trunk prefix could be any number
    else:
        return _Verdict(SOURCE_NATIONAL, 0.9)
    return _Verdict(SOURCE_NATIONAL, 0.9 if has_context() else score)


def _has_account_blocks(groups: Sequence[tuple[int, int]]) -> bool:
    """Four or more consecutive groups of exactly four digits: a card or account number."""
    streak = 0
    for s, e in groups:
        streak = streak + 1 if e - s == 4 else 0
        if streak >= 4:
            return True
    return False


#: The only separators that can make a pair of groups a reading, decimal, range or date.
_BLOCKING_SEPARATORS: Final = frozenset({"/", ".", "-", "\u2013"})


def _blocked_groups(text: str, groups: Sequence[tuple[int, int]]) -> frozenset[int]:
    """Indices of digit groups that are part of a date, a reading, a decimal or a year range.
    Three groups joined by one separator are a date only where no fourth group continues them
    with it: ``06-12-34-56-78`` and ``06.12.34.56.78`` are French numbers."""
    seps = [text[groups[k][1] : groups[k + 1][0]] for k in range(len(groups) - 1)]
    if _BLOCKING_SEPARATORS.isdisjoint(seps):
        return frozenset()
    blocked: set[int] = set()
    for k, sep in enumerate(seps):
        if _is_not_phone_pair(text, sep, groups[k], groups[k + 1]):
            blocked.update((k, k + 1))
    for k in range(len(seps) - 1):
        same = seps[k] == seps[k + 1] and seps[k] in {".", "/", "-"}
        continued = seps[k] in seps[k - 1 : k] or seps[k] in seps[k + 2 : k + 3]
        if same and not continued and _is_date(text, groups[k : k + 3]):
            blocked.update((k, k + 1, k + 2))
    return frozenset(blocked)


def _is_not_phone_pair(
    text: str, sep: str, first: tuple[int, int], second: tuple[int, int]
) -> bool:
    """A reading (``120/80``), a decimal (``36.5``) or a year-led range or id (``2024-004512``)."""
    a, b = first[1] - first[0], second[1] - second[0]
    if sep == "/" and a <= 3 and b <= 3:
        return True
    if sep == "." and b == 1 and a <= 3:
        return True
    return (
        sep in {"-", "/", ".", "\u2013"}
        and a == 4
        and text[first[0] : first[0] + 2] in {"19", "20"}
    )


def _is_date(text: str, triple: Sequence[tuple[int, int]]) -> bool:
    """Whether three groups read as d/m/y, m/d/y or y-m-d (their widths first)."""
    la, lb, lc = (e - s for s, e in triple)
    if la == 4:
        if lb > 2 or lc > 2:
            return False
    elif la > 2 or lb > 2 or lc not in {2, 4}:
        return False
    a, b, c = (int(_digits(text[s:e])) for s, e in triple)
    if la == 4:
        return 1 <= b <= 12 and 1 <= c <= 31
    return min(a, b) >= 1 and min(a, b) <= 12 and max(a, b) <= 31


class PhoneRule(RuleDetector):
    """Telephone and fax numbers, validated with the ``phonenumbers`` metadata."""

    id = "rules.phones.v1"
    labels: ClassVar[frozenset[Category | Fact]] = frozenset({Category.CONTACT_PHONE})

    def __init__(self) -> None:
        # Keep phonenumbers' compiled metadata patterns: checking numbers of many regions
        # otherwise overflows the ``re`` module's cache and recompiles them over and over.
        phonenumbers.enable_pattern_cache()

    def find(self, segment: Segment) -> Iterator[Span]:
        regions = _regions(tuple(segment_countries(segment)))
        scan = _Scan(
            segment=segment,
            regions=regions,
            national_lengths=_national_lengths(regions),
            locale=_locale(tuple(segment_languages(segment))),
            hinted=not _PHONE_HINTS.isdisjoint(segment.hints),
            rule_id=self.id,
        )
        text = segment.text
        previous_end = 0
        for match in guarded_finditer(_run_pattern(segment), segment, self.id):
            start, end = match.span()
            if _DATE_RUN.fullmatch(text, start, end):
                continue
            for run in _Run.split(text, start, end):
                for span in _spans_in_run(scan, run, previous_end):
                    previous_end = span.end
                    yield span
            previous_end = max(previous_end, end)


def _run_pattern(segment: Segment) -> Pattern:
    """The ASCII run pattern unless the segment may hold native digits or typographic spaces."""
    text = segment.text
    if text.isascii():
        return _RUN_ASCII
    script = language_info(canonical_language(segment.lang)).script
    if script in _NATIVE_DIGIT_SCRIPTS or any(c in text for c in _TYPOGRAPHIC):
        return _RUN_UNICODE
    return _RUN_ASCII


def _spans_in_run(scan: _Scan, run: _Run, previous_end: int) -> Iterator[Span]:
    """Leftmost-longest valid candidates among the run's groups."""
    i = 0
    while i < len(run.groups):
        found = None if i in run.blocked else _longest_at(scan, run, i, previous_end)
        if found is None:
            i += 1
            continue
        span, i = found
        previous_end = span.end
        yield span


def _longest_at(scan: _Scan, run: _Run, i: int, previous_end: int) -> tuple[Span, int] | None:
    """The longest valid candidate starting at group ``i``, and the next group index."""
    text = scan.segment.text
    start = run.lead if i == 0 else _paren_start(text, run.groups[i][0], run.groups[i - 1][1])
    if not _may_start(text, run, i, start):
        return None
    context: list[bool] = []

    def has_context() -> bool:
        if not context:
            context.append(scan.context_before(start, previous_end))
        return context[0]

    first = run.groups[i][0]
    international = "+" in text[start:first] or "\uff0b" in text[start:first]
    international = international or (
        text[first] in _ZEROS and first + 1 < len(text) and text[first + 1] in _ZEROS
    )
    last = run.last_free(i)
    whole = i == 0 and last == len(run.groups) - 1
    # First the segment's own regions; only where they accept nothing, every other region.
    for foreign in (False, True) if not international else (False,):
        lengths = _FOREIGN_LENGTHS if foreign else scan.national_lengths
        for j in range(last, i - 1, -1):
            n_digits = run.digits_between(i, j)
            if n_digits < _NATIONAL_DIGITS[0]:
                break
            if n_digits > _INTL_DIGITS[1] + 2 or not (international or n_digits in lengths):
                continue
            shape = _SHAPES[j > i, run.singles[j + 1] - run.singles[i] >= 5]
            if shape.spaced_out and not (whole and j == len(run.groups) - 1):
                continue  # 0 7 7 2 …: only a run that is exactly one number, not a slice
            end = _close_paren(text, start, run.groups[j][1])
            candidate = text[start:end]
            if foreign and not _stands_alone(text, run, i, j, previous_end):
                continue
            verdict = (
                _foreign_verdict(candidate, shape, scan, has_context)
                if foreign
                else _judge_candidate(candidate, shape, scan, has_context)
            )
            if verdict is not None:
                end = _extension_end(scan, end)
                span = Span(start, end, Category.CONTACT_PHONE, verdict.source, verdict.score)
                return span, j + 1
    return None


def _stands_alone(text: str, run: _Run, i: int, j: int, previous_end: int) -> bool:
    """Whether groups ``i..j`` are a whole run or one item of a list of numbers, as a foreign
    number must be: not a slice of a longer identifier (``08 76457156`` of ``08 76457156 14``)."""

    def list_gap(k: int) -> bool:  # between group k and k + 1
        gap = text[run.groups[k][1] : run.groups[k + 1][0]]
        return any(c in gap for c in "/,;") or "  " in gap

    starts = i == 0 or previous_end >= run.groups[i - 1][1] or list_gap(i - 1)
    return starts and (j == len(run.groups) - 1 or list_gap(j))


def _is_word_char(char: str) -> bool:
    """A character that glues a run into a word (not CJK: ``电话13812345678`` is a number)."""
    if char.isascii():
        return char.isalnum() or char == "_"
    if "\u2e80" <= char <= "\u9fff" or "\uf900" <= char <= "\ufaff":
        return False
    return char.isalnum() or unicodedata.category(char)[0] == "M"


def _glued_left(text: str, lead: int) -> bool:
    """Whether a run is glued to what precedes it (``x123…``, ``MUL/2024…``, ``1.2…``)."""
    if lead == 0:
        return False
    char = text[lead - 1]
    if _is_word_char(char) or char in _GLUE_SIGNS:
        return True
    if lead >= 2 and char in "/.-,:":
        before = text[lead - 2]
        return before.isdigit() or (char in "/-" and before.isalpha())
    return False


def _is_iban_head(text: str, start: int) -> bool:
    """Two capital letters right before ``start`` and nothing word-like before them (``DE89``)."""
    head = text[max(0, start - 2) : start]
    before = text[start - 3] if start >= 3 else " "
    return len(head) == 2 and head.isascii() and head.isupper() and not _is_word_char(before)


def _may_start(text: str, run: _Run, i: int, start: int) -> bool:
    """Whether a number may begin at group ``i`` (a run's first group, or one led like a number)."""
    if text[start] in "+\uff0b(\uff08" or text[run.groups[i][0]] in _ZEROS:
        return True
    if i == 0:
        return not run.is_long
    gap = text[run.groups[i - 1][1] : run.groups[i][0]]
    return (i - 1) in run.blocked or (gap.strip() == "/" and gap != "/") or "  " in gap


def _lead_start(text: str, start: int) -> int:
    """Start of a run including a leading ``+``, ``+ ``, ``(`` or ``(+``."""
    k = start
    if k >= 1 and text[k - 1] in "+\uff0b":
        k -= 1
    elif k >= 2 and text[k - 1] in " \u00a0" and text[k - 2] in "+\uff0b":
        k -= 2
    if k >= 1 and text[k - 1] in "(\uff08":
        k -= 1
    return k


def _paren_start(text: str, group_start: int, previous_group_end: int) -> int:
    """Start of a candidate that begins inside a run: include an opening parenthesis before it."""
    if group_start > previous_group_end and text[group_start - 1] == "(":
        return group_start - 1
    return group_start


def _close_paren(text: str, start: int, end: int) -> int:
    """Include a closing parenthesis that balances an opening one inside the candidate."""
    if text.count("(", start, end) > text.count(")", start, end) and text[end : end + 1] == ")":
        return end + 1
    return end


def _extension_end(scan: _Scan, end: int) -> int:
    """End of an extension written after a number (``ext. 204``, ``Durchwahl -12``), or ``end``."""
    text = scan.segment.text
    k = end
    n = len(text)
    while k < n and text[k] in " \t":
        k += 1
    if k < n and text[k] in ",;":
        k += 1
    while k < n and text[k] in " \t":
        k += 1
    starts = scan.locale.extension_starts
    if k == n or (text[k] not in starts and text[k].casefold() not in starts):
        return end
    try:
        match = scan.locale.extension.match(text, end, timeout=PATTERN_TIMEOUT_S)
    except TimeoutError:
        raise RuleTimeoutError(
            f"rule {scan.rule_id} exceeded {PATTERN_TIMEOUT_S}s on a segment of {len(text)} chars",
            location=str(scan.segment.origin),
        ) from None
    return match.end() if match else end
