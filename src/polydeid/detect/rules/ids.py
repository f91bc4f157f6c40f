"""National and other identity numbers: fast shape scans, python-stdnum validators, labels.

Two ways an identifier is found:

1. **By its format** (``[[format]]`` in ``locales/countries/<CC>/ids.toml``): a pattern per
   format, validated by a named validator (python-stdnum's ``is_valid`` where a module exists,
   see :data:`VALIDATORS`). All formats run on every segment: identifiers do not depend on the
   text's language. Formats whose shape is common in clinical text (7-8, 9, 10 or 12 bare
   digits) have ``context = "required"`` and count only as the value of a national-ID label.
2. **By its label**: a national-ID, passport, insurance or licence label (``identifiers.toml``
   of the segment's language, plus English; for national IDs also the gated formats' own
   ``labels``) followed by a value token: letters, digits and ``- / .``, or digit groups joined
   by single spaces. After a national-ID label the gated formats are tried first (longest valid
   match); otherwise the token is taken if it has the kind's shape (``[[labelled]]`` in
   ``countries/XX/ids.toml``): ``Passport No: B1234567`` is ``ID_OTHER``, ``DNI: 12345678A``
   (a wrong check letter, but labelled) is ``ID_NATIONAL`` by label. A postal code is found
   the same way, after a postal-code label (``CP:41001``, ``PLZ 10115``), as
   ``LOCATION_ADDRESS``: a bare five-digit number is not an address, a labelled one is.

A label counts when it ends right before the value: only separators (``: # - . ( )``, spaces)
and at most three filler words (``[fillers]``: "No.", "namba", "ni", "is") may stand between.
Record numbers (:mod:`polydeid.detect.rules.records`) use the same labels and tokens.

What each format accepts is written beside it in its data file; in short: UG NIN ``CM``/``CF``
+ 6 digits + 6 digits-or-capitals with at least one letter; KE ID 7-8 digits after a label;
RW NID 16 digits, status 1-3, birth year, sex digit 7/8, compact or spaced
``1 1990 8 0012345 0 12``; TZ NIDA 20 digits beginning with a real date ``YYYYMMDD``; DE IdNr,
ES DNI/NIE, FR NIR, IT codice fiscale, CN RIC, PT CC, BR CPF by their stdnum checks; NL BSN,
GB NHS, IN Aadhaar by their checks and after a label; US SSN 3-2-4 issuable, or any 3-2-4/9
digits after an SSN label; VN CCCD 12 digits with a province code, after a label; RU SNILS by
its check number; IBAN and payment cards (known issuer prefix and length, Luhn) as
``ID_OTHER``.

Sources: ``rule.checksum.<name>.v1`` for formats validated by a check digit (they outrank other
rules and may override clinical-fact protection), ``rule.address.postal_code.v1`` for labelled
postal codes (which never override a clinical fact: "2 cp 1000 mg" is a dose), ``rule.id.<name>.v1``
for the rest.

Speed: every scan begins with a plain character class (``[0-9]`` or ``[A-Z]``), which the regex
engine skips to quickly, and the format patterns are probed inside the scan itself, so Python
sees only the stops where a format matched. Labelled values are found from the digits: a reverse
scan gives each run of three or more digits with the word before it, and only a word that can
end a label leads to a label match. Digits of other scripts (Arabic-Indic, Devanagari, Bengali,
full-width) are read as ASCII through a same-length copy of the text, so offsets are unchanged.

Schema of a ``[[format]]`` table: ``name``, ``label`` (a category), ``starts`` (``"digit"`` or
``"letter"``: the first character of every match), ``pattern`` (no capturing groups),
``validator`` (a key of :data:`VALIDATORS` or ``"stdnum:<module>"``), ``checksum`` (bool),
``context`` (``"none"`` or ``"required"``), optional ``labels`` and ``score``, and whatever
parameters its validator reads. Schema of a ``[[labelled]]`` table: ``name``, ``kind`` (a table
of ``identifiers.toml``), ``label``, ``value`` (matched in full, case-insensitively),
``min_digits``, ``score``.
"""

from __future__ import annotations

import datetime
import importlib
import re
import threading
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import cache
from typing import Any, ClassVar, Protocol

import regex
from stdnum import luhn

from polydeid.core.errors import ConfigError, RuleTimeoutError
from polydeid.core.intervals import merged, union_overlaps
from polydeid.core.segments import Segment
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category, Fact
from polydeid.detect.rules._base import RuleDetector
from polydeid.locales import countries, segment_languages
from polydeid.locales.identifiers import LABEL_TABLES, identifier_words
from polydeid.locales.ids import INTERNATIONAL, IdFormatSpec, country_ids, read_format
from polydeid.text.patterns import (
    PATTERN_TIMEOUT_S,
    ContextLexicon,
    Match,
    Pattern,
    compile_pattern,
    guarded_finditer,
)
from polydeid.text.scripts import UNSPACED

RULE_ID = "rules.ids.v1"

# --------------------------------------------------------------------------- text helpers

_NATIVE_DIGITS = "\u0660-\u0669\u06f0-\u06f9\u0966-\u096f\u09e6-\u09ef\uff10-\uff19"
_HAS_NATIVE_DIGIT = compile_pattern(f"[{_NATIVE_DIGITS}]")
#: Any character at or above the first native digit block (a one-range class scans fast).
_BEYOND_LATIN = compile_pattern("[^\\x00-\u065f]")
_TO_ASCII_DIGIT = {
    cp: ord("0") + unicodedata.digit(chr(cp))
    for lo, hi in (
        (0x0660, 0x0669),
        (0x06F0, 0x06F9),
        (0x0966, 0x096F),
        (0x09E6, 0x09EF),
        (0xFF10, 0xFF19),
    )
    for cp in range(lo, hi + 1)
}


def ascii_digits(text: str) -> str:
    """``text`` with Arabic-Indic, Devanagari, Bengali, full-width digits as ASCII (same length)."""
    if text.isascii() or _BEYOND_LATIN.search(text, timeout=PATTERN_TIMEOUT_S) is None:
        return text
    if _HAS_NATIVE_DIGIT.search(text, timeout=PATTERN_TIMEOUT_S) is None:
        return text
    return text.translate(_TO_ASCII_DIGIT)


def ascii_view(segment: Segment) -> Segment:
    """The segment with :func:`ascii_digits` applied (offsets unchanged)."""
    view = ascii_digits(segment.text)
    return segment if view is segment.text else replace(segment, text=view)


@contextmanager
def fail_closed(segment: Segment, rule_id: str) -> Iterator[None]:
    """Turn a regex timeout inside the block into :class:`RuleTimeoutError` (no text in it)."""
    try:
        yield
    except TimeoutError:
        raise RuleTimeoutError(
            f"rule {rule_id} exceeded {PATTERN_TIMEOUT_S}s "
            f"on a segment of {len(segment.text)} chars",
            location=str(segment.origin),
        ) from None


def digits_of(value: str) -> str:
    """The ASCII digits of ``value``, in order."""
    return "".join(c for c in value if "0" <= c <= "9")


# --------------------------------------------------------------------------- labels

#: Separators allowed between a label, its fillers and the value. Quotes, angle brackets and
#: underscores too: a JSON key (``"mrn": "32791-UJ"``), an XML start tag
#: (``<national_id>076254274</national_id>``) or a snake_case key of a log or a program
#: (``national_id=07642484``) pasted as text labels its value as a form line does.
_GAP_CHARS = r"\s:：#№=.\-–—()\[\]/|,\"'“”‘’«»<>_"
_GAP = f"[{_GAP_CHARS}]{{0,6}}"
_GAP_SPLIT = compile_pattern(f"[{_GAP_CHARS}]+")
#: The last word before a position, after at most six separators.
_LAST_WORD = compile_pattern(f"(?r)([^{_GAP_CHARS}]{{1,40}})[{_GAP_CHARS}]{{0,6}}")
#: How far left of a value a label may begin.
_LABEL_REACH = 80
#: At most this many filler words (or pieces of one, such as "n" "º") between label and value.
_MAX_FILLERS = 3
#: How many words :meth:`LabelLexicon.may_end` remembers (a word's answer never changes).
_WORD_MEMO = 50_000


def _key(word: str) -> str:
    """Dispatch key of a phrase or of the text's last word: its last character in unspaced
    scripts, else its last run between separators ("hosp. no." -> "no")."""
    word = word.lower()
    if UNSPACED.search(word):
        return word[-1]
    pieces = [p for p in _GAP_SPLIT.split(word) if p]
    return pieces[-1] if pieces else ""


def _phrase_keys(phrase: str) -> set[str]:
    """Keys a phrase may end on in text: its last word, or its last words written joined
    ("nº col" also as "NºCol"), as :meth:`ContextLexicon._phrase_pattern` allows."""
    words = phrase.split()
    return {_key("".join(words[-k:])) for k in range(1, len(words) + 1)} - {""}


class LabelLexicon(ContextLexicon):
    """Label phrases of several kinds, found where they end right before a value.

    Phrases follow :class:`ContextLexicon` rules (whole words — none next to scripts written
    without spaces —, case-insensitive, flexible inner spaces, optional trailing "."). Up to
    three ``fillers`` may stand between label and value.

    Matching is dispatched on the word right before the value: only phrases ending in that word
    are tried (their pattern compiled the first time the word is met), so a value after an
    ordinary word costs one short match and a dictionary lookup.
    These matches run without a regex timeout: their windows are at most 80 characters and the
    patterns are escaped phrases and bounded separator runs, which cannot backtrack
    catastrophically, while a timeout costs more than the match itself.
    """

    def __init__(self, kinds: Mapping[str, Iterable[str]], *, fillers: Iterable[str] = ()) -> None:
        by_kind = {
            k: sorted({p.strip().lower() for p in v if p.strip()}, key=lambda p: (-len(p), p))
            for k, v in kinds.items()
        }
        by_kind = {k: v for k, v in by_kind.items() if v}
        super().__init__(p for phrases in by_kind.values() for p in phrases)
        self.kinds = tuple(by_kind)
        groups: dict[str, dict[int, list[str]]] = {}
        for index, phrases in enumerate(by_kind.values()):
            for phrase in phrases:
                for key in _phrase_keys(phrase):
                    groups.setdefault(key, {}).setdefault(index, []).append(phrase)
        # Each key's pattern is compiled when a text first has its word before a value: most
        # of a language's keys never occur in a record, and compiling them all took seconds.
        self._by_key = {key: group for key, group in groups.items() if key}
        self._compiled: dict[str, Pattern] = {}
        # Keys whose phrases are all that one word (a trailing dot aside): the word before a
        # value is then the label, of the kind the group's pattern would give, without a match.
        self._single_word: dict[str, int] = {}
        for key, group in groups.items():
            ranked = self._ranked(group)
            if (
                key
                and not UNSPACED.search(key)
                and all(
                    len(phrase.split()) == 1 and phrase.rstrip(".") == key for phrase, _ in ranked
                )
            ):
                self._single_word[key] = ranked[0][1]
        # A filler with inner separators ("n.º") is matched piece by piece ("n", "º").
        words = {piece for f in fillers for piece in _GAP_SPLIT.split(f.strip().lower()) if piece}
        self._fillers = frozenset(w for w in words if not UNSPACED.search(w))
        self._may_end: dict[str, bool] = {}
        self._unspaced_fillers = tuple(
            sorted((w for w in words if UNSPACED.search(w)), key=lambda w: (-len(w), w))
        )
        # Every ASCII key and filler: an ASCII text holding none of them has no label.
        ascii_words = sorted(w for w in (*self._by_key, *self._fillers) if w.isascii())
        self._ascii_words = (
            re.compile("|".join(map(re.escape, ascii_words))) if ascii_words else None
        )

    def may_occur(self, text: str) -> bool:
        """Whether a label may end somewhere in ``text``: ``False`` only for an ASCII text
        that holds none of the lexicon's last words or fillers, in any case."""
        if not text.isascii():
            return True
        return self._ascii_words is not None and self._ascii_words.search(text.lower()) is not None

    @staticmethod
    def _ranked(group: Mapping[int, list[str]]) -> list[tuple[str, int]]:
        """``(phrase, kind index)`` of a key's group, longest phrase first across kinds (so
        "insurance id" wins over "id"), then in kind order."""
        return sorted(
            ((p, i) for i, phrases in group.items() for p in phrases), key=lambda x: -len(x[0])
        )

    def _key_pattern(self, key: str) -> Pattern | None:
        """The pattern of the phrases ending in ``key``, compiled on first use."""
        pattern = self._compiled.get(key)
        if pattern is None:
            group = self._by_key.get(key)
            if group is None:
                return None
            pattern = self._compiled[key] = self._compile_group(group)
        return pattern

    def _compile_group(self, group: Mapping[int, list[str]]) -> Pattern:
        ranked = self._ranked(group)
        alternatives = "|".join(f"(?P<k{i}>{self._phrase_pattern(p)})" for p, i in ranked)
        return compile_pattern(f"(?r)(?:{alternatives}){_GAP}", regex.IGNORECASE)

    def _filler_end(self, word: str, unspaced: bool) -> int | None:
        """Length of the filler that ``word`` (lower case) is or ends with, else ``None``."""
        if word in self._fillers:
            return len(word)
        if unspaced:
            for filler in self._unspaced_fillers:
                if word.endswith(filler) and len(filler) < len(word):
                    return len(filler)
        return None

    def _word_before(self, text: str, pos: int) -> tuple[str, str, bool, int, int] | None:
        """``(word, key, unspaced, word_start, word_end)`` of the text's last word before
        ``pos`` (the word in lower case)."""
        last = _LAST_WORD.match(text, max(0, pos - 48), pos)
        if last is None:
            return None
        word = last.group(1).lower()
        unspaced = not word.isascii() and UNSPACED.search(word) is not None
        start, end = last.span(1)
        return word, (word[-1] if unspaced else word), unspaced, start, end

    def may_end(self, word: str) -> bool:
        """Whether ``word`` (a word of the text) could end a label or be a filler."""
        known = self._may_end.get(word)
        if known is None:
            lowered = word.lower()
            unspaced = not lowered.isascii() and UNSPACED.search(lowered) is not None
            key = lowered[-1] if unspaced else lowered
            known = key in self._by_key or self._filler_end(lowered, unspaced) is not None
            if len(self._may_end) >= _WORD_MEMO:
                self._may_end.clear()
            self._may_end[word] = known
        return known

    def may_label(self, text: str, pos: int) -> bool:
        """Cheap test: whether the word before ``pos`` could end a label or be a filler."""
        found = self._word_before(text, pos)
        if found is None:
            return False
        word, key, unspaced, _, _ = found
        return key in self._by_key or self._filler_end(word, unspaced) is not None

    def label_before(self, text: str, pos: int) -> tuple[str, int] | None:
        """``(kind, start)`` of a label ending right before ``pos``, or ``None``."""
        for _ in range(_MAX_FILLERS + 1):
            found = self._word_before(text, pos)
            if found is None:
                return None
            word, key, unspaced, word_start, word_end = found
            single = self._single_word.get(key)
            if single is not None and word_end - word_start < 40:
                # the whole word is the label: letters or digits border it on neither side
                return self.kinds[single], word_start
            pattern = self._key_pattern(key)
            if pattern is not None:
                m = pattern.match(text, max(0, pos - _LABEL_REACH), pos)
                if m is not None and m.lastgroup is not None:
                    return self.kinds[int(m.lastgroup[1:])], m.start()
            filler = self._filler_end(word, unspaced)
            if filler is None:
                return None
            pos = word_end - filler
        return None


def label_words(languages: Sequence[str], kind: str) -> tuple[str, ...]:
    """The ``[kind]`` words of ``identifiers.toml`` for each of ``languages``."""
    return tuple(w for lang in languages for w in identifier_words(lang).words(kind))


@cache
def label_lexicon(
    languages: tuple[str, ...], kinds: tuple[str, ...], extra: tuple[str, ...] = ()
) -> LabelLexicon:
    """A lexicon of ``kinds`` for ``languages``; ``extra`` phrases join the first kind (cached)."""
    table = {k: label_words(languages, k) for k in kinds}
    if extra and kinds:
        table[kinds[0]] = (*table[kinds[0]], *extra)
    return LabelLexicon(table, fillers=label_words(languages, "fillers"))


# --------------------------------------------------------------------------- value tokens

_TOKEN_LEFT = compile_pattern(r"(?r)[A-Za-z0-9#\-/._]*")
_TOKEN_RIGHT = compile_pattern(r"[A-Za-z0-9\-/._]*")
_GROUPS_LEFT = compile_pattern(r"(?r)(?<![A-Za-z0-9#\-/._])(?:[0-9]{1,10} ){1,4}")
#: Where a digit group may end inside a spaced value: a group followed by a word ("67 years",
#: "2024年") is a separate number and stops the value.
_GROUP_CLOSE = r"(?![A-Za-z0-9])(?![\-/.,][0-9])(?! ?\p{L})"
_CAN_CLOSE_GROUP = compile_pattern(_GROUP_CLOSE)
_GROUPS_RIGHT = compile_pattern(rf"(?: [0-9]{{2,10}}{_GROUP_CLOSE})+")
#: Values that read as a date (D/M/YY[YY], YYYY-MM-DD, M/YYYY) are never identifiers.
_DATE_LIKE = compile_pattern(
    r"[0-9]{1,2}([./\-])[0-9]{1,2}\1(?:[0-9]{2}|[0-9]{4})|[0-9]{4}([./\-])[0-9]{1,2}\2[0-9]{1,2}"
    r"|(?:0?[1-9]|1[0-2])[./\-](?:19|20)[0-9]{2}"
)
_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789#-/._")
_MAX_TOKEN = 32


@dataclass(frozen=True, slots=True)
class ValueToken:
    """A candidate value: ``[start, end)``; ``run_start`` is where its first 3-digit run begins."""

    start: int
    end: int
    run_start: int


# Token helpers match over bounded windows of character runs: no timeout needed (see
# LabelLexicon).


def _token_start(text: str, a: int) -> int:
    """Start of the token around the digit run at ``a``: letters, digits and ``# - / . _``
    glued to it, or digit groups before it joined by single spaces."""
    if a == 0:
        return a
    before = text[a - 1]
    if before in _TOKEN_CHARS:
        left = _TOKEN_LEFT.match(text, max(0, a - _MAX_TOKEN), a)
        assert left is not None  # the pattern matches the empty string
        start = left.start()
        while start < a and text[start] in "#-/._":
            start += 1
        return start
    if before == " " and a > 1 and "0" <= text[a - 2] <= "9":
        groups = _GROUPS_LEFT.match(text, max(0, a - 40), a)
        return groups.start() if groups else a
    return a


#: A token's left part ending at a digit run, and the word before the token.
_TOKEN_LEFT_AND_WORD = compile_pattern(
    f"(?r)(?:(?P<word>[^{_GAP_CHARS}0-9]{{1,40}})[{_GAP_CHARS}]{{0,6}})?"
    r"(?P<token>[A-Za-z0-9#\-/._]{0,32})"
)


def _word_at(text: str, pos: int) -> str | None:
    last = _LAST_WORD.match(text, max(0, pos - 48), pos)
    return last.group(1) if last else None


def _token_start_and_word(text: str, a: int) -> tuple[int, str | None]:
    """:func:`_token_start` for the digit run at ``a``, and the word before that start."""
    if text[a - 1] == " ":
        start = _token_start(text, a)
        return start, _word_at(text, start)
    m = _TOKEN_LEFT_AND_WORD.match(text, max(0, a - 80), a)
    assert m is not None  # the pattern matches the empty string
    start = trimmed = m.start("token")
    while trimmed < a and text[trimmed] in "#-/._":
        trimmed += 1
    return (trimmed, _word_at(text, trimmed)) if trimmed != start else (start, m.group("word"))


def _token_end(text: str, start: int, a: int, b: int) -> int:
    right = _TOKEN_RIGHT.match(text, b, b + _MAX_TOKEN)
    assert right is not None  # the pattern matches the empty string
    end = right.end()
    while end > b and text[end - 1] in "-/._":
        end -= 1
    if end == b and (start == a or text[a - 1] == " "):
        groups = _GROUPS_RIGHT.match(text, b, b + 40)
        end = groups.end() if groups else b
    return end


#: A digit run of three or more, and the word before it (letters, not digits) after separators.
#: Scanned in reverse, so that the run is the engine's fast first item.
_RUN_AFTER_WORD = compile_pattern(
    f"(?r)(?:(?P<word>[^{_GAP_CHARS}0-9]{{1,40}})[{_GAP_CHARS}]{{0,6}})?(?P<run>[0-9]{{3,}})"
)
_FIRST_DIGIT = compile_pattern(r"[0-9]")
_CAPITAL = re.compile(r"[A-Z]")


#: Day and month before a year run (``12/03/`` of ``12/03/2024``): the token is a date.
_DATE_HEAD = compile_pattern(r"(?r)(?<![A-Za-z0-9#\-/._])[0-9]{1,2}[./\-][0-9]{1,2}[./\-]")


class LabelWords(Protocol):
    """What :func:`value_tokens` asks of a lexicon (:class:`LabelLexicon` answers it)."""

    def may_occur(self, text: str) -> bool: ...

    def may_end(self, word: str) -> bool: ...

    def may_label(self, text: str, pos: int) -> bool: ...


def _glued_token(
    text: str, a: int, b: int, lexicon: LabelWords, capitals: bool
) -> tuple[int, int] | None:
    """``(start, first digit)`` of the token glued to the run ``[a, b)``, if it may be a value."""
    ends_token = b == len(text) or text[b] not in _TOKEN_CHARS
    if (
        b - a == 4
        and ends_token
        and text[a - 1] in "./-"
        and _DATE_HEAD.match(text, max(0, a - 8), a)
    ):
        return None
    start, word = _token_start_and_word(text, a)
    digit = None if start == a else _FIRST_DIGIT.search(text, start, a + 1)
    first = a if digit is None else digit.start()  # the run at ``a`` is digits
    if word is not None and lexicon.may_end(word):
        return start, first
    if first > start and text[first - 1] in "-/.#" and lexicon.may_label(text, first):
        return start, first
    if capitals and first > start and "A" <= text[start] <= "Z":
        return start, first
    return None


def value_tokens(
    view: Segment, rule_id: str, lexicon: LabelWords, *, capitals: bool = False
) -> list[ValueToken]:
    """Tokens holding a run of three or more digits that may follow a label of ``lexicon``.

    A token is given once, in text order. With ``capitals``, tokens that begin with a capital
    letter glued to their digits (``MUL/2024/00871``) are given whatever precedes them.
    Callers wrap this in :func:`fail_closed`.
    """
    text = view.text
    if not lexicon.may_occur(text) and not (capitals and _CAPITAL.search(text)):
        return []  # no label may end before a token, and no token begins with a capital
    tokens: list[ValueToken] = []
    token_start = len(text) + 1
    may_end = lexicon.may_end
    for m in guarded_finditer(_RUN_AFTER_WORD, view, rule_id):
        a, b = m.span(2)
        if a >= token_start:
            continue
        before = text[a - 1] if a else " "
        spaced = before == " " and a > 1 and "0" <= text[a - 2] <= "9"
        if spaced and (b - a > 10 or _CAN_CLOSE_GROUP.match(text, b) is None):
            spaced = False  # a number of its own after another one, not one more group
        if before in _TOKEN_CHARS or spaced:
            found = _glued_token(text, a, b, lexicon, capitals)
            if found is None:
                continue
            start, first = found
        else:
            word = m.group(1)
            if word is None or not may_end(word):
                continue
            start = first = a
        token_start = start
        tokens.append(ValueToken(start, _token_end(text, start, a, b), first))
    tokens.reverse()
    return tokens


def labelled_value(lexicon: LabelLexicon, text: str, token: ValueToken) -> tuple[str, int] | None:
    """``(kind, value start)`` when a label ends right before the token's first digit run
    inside it (``nhc-150679``) or right before the token. The label written into the token is
    the nearer one and wins: in ``CIPA: nhc-739146`` the value is the record number 739146."""
    if token.run_start > token.start and text[token.run_start - 1] in "-/.#":
        found = lexicon.label_before(text, token.run_start)
        if found is not None and found[1] >= token.start:
            return found[0], token.run_start
    found = lexicon.label_before(text, token.start)
    if found is not None:
        return found[0], token.start
    return None


@dataclass(frozen=True, slots=True)
class LabelledToken:
    """A value token and the kind of label right before it (``None``: no label).

    ``value_start`` is where the value begins: the token's start, or its first digit run when
    the label is written into the token (``nhc-150679``).
    """

    kind: str | None
    token_start: int
    value_start: int
    end: int


#: Per thread: (text, languages, tokens) of the last segment given to :func:`labelled_tokens`.
_MEMO = threading.local()


@cache
def _gated_labels() -> tuple[str, ...]:
    return tuple(sorted({w for f in id_formats() if f.needs_context for w in f.labels}))


def all_labels(languages: tuple[str, ...]) -> LabelLexicon:
    """One lexicon of every label kind for ``languages`` (gated formats' labels as national)."""
    return label_lexicon(languages, LABEL_TABLES, _gated_labels())


def labelled_tokens(view: Segment, rule_id: str, languages: tuple[str, ...]) -> list[LabelledToken]:
    """The segment's value tokens that follow a label of any kind, or begin with a capital.

    Identifiers and record numbers read the same tokens, so the result for the thread's last
    segment is kept and reused when the other rule asks for the same text object and languages.
    Callers wrap this in :func:`fail_closed`.
    """
    last = getattr(_MEMO, "last", None)
    if last is not None and last[0] is view.text and last[1] == languages:
        return list(last[2])
    lexicon = all_labels(languages)
    tokens: list[LabelledToken] = []
    for token in value_tokens(view, rule_id, lexicon, capitals=True):
        found = labelled_value(lexicon, view.text, token)
        kind, start = found if found is not None else (None, token.start)
        tokens.append(LabelledToken(kind, token.start, start, token.end))
    _MEMO.last = (view.text, languages, tuple(tokens))
    return tokens


@dataclass(frozen=True, slots=True)
class ValueShape:
    """What a labelled value must look like: ``value`` in full, at least ``min_digits`` digits."""

    value: Pattern
    min_digits: int

    def accepts(self, text: str) -> bool:
        if len(text) > _MAX_TOKEN or _DATE_LIKE.fullmatch(text):
            return False
        if self.value.fullmatch(text, timeout=PATTERN_TIMEOUT_S) is None:
            return False
        return sum("0" <= c <= "9" for c in text) >= self.min_digits


def value_shape(value: str, min_digits: int, where: str) -> ValueShape:
    """The shape of a value: its pattern (``value`` of a data table) and ``min_digits``."""
    try:
        return ValueShape(compile_pattern(value, regex.IGNORECASE), min_digits)
    except regex.error as exc:
        raise ConfigError(f"bad value shape: {type(exc).__name__}", location=where) from None


# --------------------------------------------------------------------------- validators

Predicate = Callable[[str], bool]
ValidatorFactory = Callable[[Mapping[str, Any]], Predicate]


def _accept_all(table: Mapping[str, Any]) -> Predicate:
    return lambda value: True


def _ug_nin(table: Mapping[str, Any]) -> Predicate:
    need = int(table.get("min_tail_letters", 1))
    return lambda value: sum(c.isalpha() for c in value[-6:]) >= need


def _rw_nid(table: Mapping[str, Any]) -> Predicate:
    statuses, sexes = frozenset(table["statuses"]), frozenset(table["sexes"])
    lo, hi = int(table["min_year"]), int(table["max_year"])

    def check(value: str) -> bool:
        d = digits_of(value)
        return len(d) == 16 and d[0] in statuses and lo <= int(d[1:5]) <= hi and d[5] in sexes

    return check


def _tz_nida(table: Mapping[str, Any]) -> Predicate:
    lo, hi = int(table["min_year"]), int(table["max_year"])

    def check(value: str) -> bool:
        d = digits_of(value)
        if len(d) != 20 or not lo <= int(d[:4]) <= hi:
            return False
        try:
            datetime.date(int(d[:4]), int(d[4:6]), int(d[6:8]))
        except ValueError:
            return False
        return True

    return check


def _vn_cccd(table: Mapping[str, Any]) -> Predicate:
    provinces = frozenset(table["provinces"])
    centuries = {str(k): int(v) for k, v in table["century_digits"].items()}
    hi = int(table["max_year"])

    def check(value: str) -> bool:
        d = digits_of(value)
        century = centuries.get(d[3:4])
        return (
            len(d) == 12
            and d[:3] in provinces
            and century is not None
            and century + int(d[4:6]) <= hi
        )

    return check


def _ru_snils(table: Mapping[str, Any]) -> Predicate:
    # python-stdnum 2.2 has no SNILS module; the rule is in the sources of countries/RU/ids.toml.
    def check(value: str) -> bool:
        d = digits_of(value)
        if len(d) != 11 or int(d[:9]) <= 1001998:
            return False
        total = sum(int(c) * w for c, w in zip(d[:9], range(9, 0, -1), strict=True))
        expected = total if total < 100 else (0 if total <= 101 else total % 101 % 100)
        return int(d[9:]) == expected

    return check


def _payment_card(table: Mapping[str, Any]) -> Predicate:
    schemes = [
        (
            frozenset(int(n) for n in s["lengths"]),
            tuple((len(lo), int(lo), int(hi)) for lo, hi in s["ranges"]),
        )
        for s in table["iin"]
    ]

    def known_issuer(d: str) -> bool:
        return any(
            len(d) in lengths and any(lo <= int(d[:w]) <= hi for w, lo, hi in ranges)
            for lengths, ranges in schemes
        )

    def check(value: str) -> bool:
        d = digits_of(value)
        return known_issuer(d) and luhn.is_valid(d)

    return check


def _stdnum(module: str) -> ValidatorFactory:
    def factory(table: Mapping[str, Any]) -> Predicate:
        try:
            mod = importlib.import_module(f"stdnum.{module}")
        except ImportError:
            raise ConfigError(f"python-stdnum has no module {module!r}") from None
        is_valid: Predicate = mod.is_valid

        def checked(value: str) -> bool:
            # Some stdnum validators raise on inputs they cannot place (cn.ric on an unknown
            # region code). A value already shaped like the identifier then counts as one:
            # redacting a look-alike costs precision, passing it through could leak.
            try:
                return bool(is_valid(value))
            except Exception:
                return True

        return checked

    return factory


#: Named validators; ``"stdnum:<module>"`` names use ``stdnum.<module>.is_valid``.
VALIDATORS: Mapping[str, ValidatorFactory] = {
    "none": _accept_all,
    "ug_nin": _ug_nin,
    "rw_nid": _rw_nid,
    "tz_nida": _tz_nida,
    "vn_cccd": _vn_cccd,
    "ru_snils": _ru_snils,
    "payment_card": _payment_card,
}


def make_validator(name: str, table: Mapping[str, Any]) -> Predicate:
    """The predicate called ``name``, configured by the format's ``table``."""
    if name.startswith("stdnum:"):
        return _stdnum(name.removeprefix("stdnum:"))(table)
    if name not in VALIDATORS:
        raise ConfigError(
            f"unknown validator {name!r}; known: {', '.join(sorted(VALIDATORS))}, stdnum:<module>"
        )
    return VALIDATORS[name](table)


# --------------------------------------------------------------------------- formats

#: A letter of a script written with spaces: identifiers may touch Han text, not Latin words.
_SPACED_LETTER = r"[^\P{L}\p{Han}\p{Hiragana}\p{Katakana}\p{Thai}]"
#: Right boundary of an identifier: no letter of a spaced script or digit, no ``-./,`` + digit.
_END = rf"(?!{_SPACED_LETTER}|\p{{N}})(?![\-./,][0-9])"


@dataclass(frozen=True, slots=True, eq=False)
class IdFormat:
    """One identifier format from a country's ``ids.toml`` (compared by identity)."""

    name: str
    country: str
    label: Category
    starts: str
    pattern: str
    anchored: Pattern
    valid: Predicate
    checksum: bool
    needs_context: bool
    labels: tuple[str, ...]
    score: float

    @property
    def source(self) -> str:
        return f"rule.{'checksum' if self.checksum else 'id'}.{self.name}.v1"

    def __repr__(self) -> str:
        return f"IdFormat({self.country}:{self.name} -> {self.label.name})"


def _read_format(country: str, table: Mapping[str, Any]) -> IdFormat:
    """The format of a ``[[format]]`` table as written (checked by
    :func:`polydeid.locales.ids.read_format`)."""
    where = f"countries/{country}/ids.toml format {table.get('name', '?')}"
    return _compile_format(read_format(country, table, where))


def _compile_format(spec: IdFormatSpec) -> IdFormat:
    where = f"countries/{spec.country}/ids.toml format {spec.name}"
    try:
        anchored = compile_pattern(f"(?:{spec.pattern}){_END}")
        if anchored.groups:
            raise ConfigError("a format pattern must not have capturing groups", location=where)
        return IdFormat(
            name=spec.name,
            country=spec.country,
            label=spec.label,
            starts=spec.starts,
            pattern=spec.pattern,
            anchored=anchored,
            valid=make_validator(spec.validator, spec.params),
            checksum=spec.checksum,
            needs_context=spec.needs_context,
            labels=spec.labels,
            score=spec.score,
        )
    except ConfigError as exc:
        raise exc.at(where) from None
    except (KeyError, TypeError, ValueError, regex.error) as exc:
        raise ConfigError(
            f"malformed format: {type(exc).__name__}: {exc}", location=where
        ) from None


@cache
def id_formats() -> tuple[IdFormat, ...]:
    """Every ``[[format]]`` of every country's ``ids.toml`` (countries in name order)."""
    return tuple(_compile_format(spec) for cc in countries() for spec in country_ids(cc).formats)


@dataclass(frozen=True, slots=True)
class LabelledKind:
    """An identifier known by its label (``[[labelled]]`` in ``countries/XX/ids.toml``)."""

    name: str
    kind: str
    label: Category
    shape: ValueShape
    score: float

    @property
    def source(self) -> str:
        # A labelled identifier outranks a clinical fact ("rule.id." in the resolver's
        # overrides); a postal code does not: "2 cp 1000 mg" is a dose, not "CP 1000".
        family = "address" if self.label is Category.LOCATION_ADDRESS else "id"
        return f"rule.{family}.{self.name}.v1"


@cache
def labelled_kinds() -> tuple[LabelledKind, ...]:
    """The labelled identifier kinds, in data order."""
    return tuple(
        LabelledKind(
            name=spec.name,
            kind=spec.kind,
            label=spec.label,
            shape=value_shape(
                spec.value,
                spec.min_digits,
                f"countries/{INTERNATIONAL}/ids.toml labelled {spec.name}",
            ),
            score=spec.score,
        )
        for spec in country_ids(INTERNATIONAL).labelled
    )


# --------------------------------------------------------------------------- scanning


#: Longest identifier a format may match (characters): bounds each anchored match.
_MAX_ID = 64


class _FormatGroup:
    """Formats sharing a first-character class, matched in one scan of the segment.

    The scan stops at each plausible identifier start, consuming two characters (a plain
    character class first is what makes the engine's scan fast). A lookbehind over those two
    characters then probes every format at the start, each in its own capturing lookahead, and
    a conditional rejects the stop when no format matched. So one pass over the text, under one
    timeout, tells for every stop which formats match and where each ends; Python only checks
    the validators and labels of the matches.
    """

    def __init__(self, scan: str, formats: Sequence[IdFormat]) -> None:
        self.formats = tuple(formats)
        any_matched = (
            "".join(f"(?(f{i})|" for i in range(len(formats))) + "(?!)" + ")" * len(formats)
        )
        self.scan = compile_pattern(f"{scan}(?<=(?:{_probes(formats)})..){any_matched}")

    def matches(self, hit: Match) -> Iterator[tuple[IdFormat, int]]:
        """``(format, end)`` of each format matching where the scan ``hit`` starts."""
        return _probed(self.formats, hit)


def _probes(formats: Sequence[IdFormat]) -> str:
    """Each of ``formats`` in its own optional capturing look-ahead, group ``f{i}``: one match
    tries them all at one position (:func:`_probed` reads which matched there)."""
    return "".join(f"(?:(?=(?P<f{i}>{f.pattern}){_END}))?" for i, f in enumerate(formats))


def _probed(formats: Sequence[IdFormat], hit: Match) -> Iterator[tuple[IdFormat, int]]:
    """``(format, end)`` of each of ``formats`` whose probe (:func:`_probes`) matched in ``hit``."""
    for fmt, (start, end) in zip(formats, hit.regs[1:], strict=True):
        if start >= 0:
            yield fmt, end


class _Probe:
    """Formats tried at one given position in one match (a value after a label)."""

    def __init__(self, formats: Sequence[IdFormat]) -> None:
        self.formats = tuple(formats)
        self.pattern = compile_pattern(_probes(formats))

    def at(self, text: str, pos: int) -> Iterator[tuple[IdFormat, int]]:
        """``(format, end)`` of each format matching ``text`` at ``pos`` (within
        :data:`_MAX_ID` characters)."""
        endpos = min(len(text), pos + _MAX_ID)
        hit = self.pattern.match(text, pos, endpos, timeout=PATTERN_TIMEOUT_S)
        return _probed(self.formats, hit) if hit is not None else iter(())


#: Start of a digit-initial identifier: not glued to a letter, digit or "+", not inside a number
#: such as a date or decimal, and seven digits joined by at most single spaces, hyphens or dots
#: (no format uses "/", so slashed dates stop here; "2A"/"2B" is the Corsican NIR). Two
#: characters are consumed so that the engine's fast scan applies; no identifier can start on
#: the second of them.
_DIGIT_SCAN = (
    r"[0-9][0-9 \-.](?=(?:[ \-.]?[0-9]){5}|[0-9]{4}[AB])"
    # ASCII look-behinds first: they are cheap and settle most stops
    r"(?<![0-9A-Za-z+][0-9].)(?<![0-9][\-./,][0-9].)"
    rf"(?<!{_SPACED_LETTER}[0-9].)(?<!\p{{N}}[0-9].)"
    # not a dotted or hyphenated date (12.03.2024, 1-3-24, 2024-03-12)
    r"(?![.\-][0-9]{1,2}[.\-](?:[0-9]{4}|[0-9]{2})(?![0-9])"
    r"|(?<=[0-9][.\-])[0-9]{1,2}[.\-](?:[0-9]{4}|[0-9]{2})(?![0-9])"
    r"|[0-9]{2}-[0-9]{2}-[0-9]{2}(?![0-9]))"
)
#: Start of a capital-initial identifier with a digit within its first eight characters.
_LETTER_SCAN = (
    r"[A-Z](?:[A-Z0-9\-](?=[A-Z\-]{0,5}[0-9])| (?=[0-9]{7}))"
    rf"(?<![0-9A-Za-z][A-Z].)(?<!{_SPACED_LETTER}[A-Z].)(?<!\p{{N}}[A-Z].)"
)


@cache
def _format_groups() -> tuple[_FormatGroup, _FormatGroup]:
    """Scans of the formats that need no label (digit-initial, capital-initial)."""
    free = [f for f in id_formats() if not f.needs_context]
    return (
        _FormatGroup(_DIGIT_SCAN, [f for f in free if f.starts == "digit"]),
        _FormatGroup(_LETTER_SCAN, [f for f in free if f.starts == "letter"]),
    )


@cache
def _gated_formats() -> _Probe:
    """Formats that count only right after a national-ID label."""
    return _Probe([f for f in id_formats() if f.needs_context])


class IdentifierRule(RuleDetector):
    """National identity numbers and other identifying numbers (IBAN, cards, labelled IDs).

    Formats that need no label are found by the scans of :class:`_FormatGroup`. Everything
    else starts from a label: a value after a national-ID label (the language's words and the
    gated formats' own labels) is tried against each gated format, longest valid match first,
    and otherwise taken as a labelled national ID if it has the shape of one; values after
    passport, insurance and licence labels are labelled ``ID_OTHER``; a value after a
    postal-code label ("CP:41001", "PLZ 10115") is an address, ``LOCATION_ADDRESS``.
    """

    id = RULE_ID
    labels: ClassVar[frozenset[Category | Fact]] = frozenset(
        {Category.ID_NATIONAL, Category.ID_OTHER, Category.LOCATION_ADDRESS}
    )
    #: Of addresses, only labelled postal codes (see registry.profile_categories).
    partial_labels: ClassVar[frozenset[Category]] = frozenset({Category.LOCATION_ADDRESS})

    def __init__(self) -> None:
        self._groups = _format_groups()
        self._gated = _gated_formats()
        self._kinds = {k.kind: k for k in labelled_kinds()}

    def find(self, segment: Segment) -> list[Span]:
        view = ascii_view(segment)
        languages = tuple(segment_languages(segment))
        with fail_closed(segment, self.id):
            spans = self._formats(view)
            spans += self._labelled(view, languages, spans)
        spans.sort(key=lambda s: (s.start, s.end))
        return spans

    def _formats(self, view: Segment) -> list[Span]:
        spans: list[Span] = []
        for group in self._groups:
            covered = -1
            for hit in guarded_finditer(group.scan, view, self.id):
                if hit.start() < covered:
                    continue
                span = self._best(group.matches(hit), view.text, hit.start())
                if span is not None:
                    spans.append(span)
                    covered = span.end
        return spans

    @staticmethod
    def _best(matches: Iterable[tuple[IdFormat, int]], text: str, pos: int) -> Span | None:
        """The longest valid match at ``pos`` (a spaced NIDA beats its first eight digits)."""
        best: Span | None = None
        for fmt, end in matches:
            if (best is None or end > best.end) and fmt.valid(text[pos:end]):
                best = Span(pos, end, fmt.label, fmt.source, fmt.score)
        return best

    def _gated_at(self, text: str, pos: int) -> Span | None:
        return self._best(self._gated.at(text, pos), text, pos)

    def _labelled(
        self, view: Segment, languages: tuple[str, ...], taken: Sequence[Span]
    ) -> list[Span]:
        text = view.text
        spans: list[Span] = []
        found = merged((s.start, s.end) for s in taken)
        for token in labelled_tokens(view, self.id, languages):
            kind = self._kinds.get(token.kind) if token.kind else None
            if kind is None or union_overlaps(found, token.token_start, token.end):
                continue
            start = token.value_start
            span = self._gated_at(text, start) if kind.kind == "national_id" else None
            if span is None and kind.shape.accepts(text[start : token.end]):
                span = Span(start, token.end, kind.label, kind.source, kind.score)
            if span is not None:
                spans.append(span)
        return spans
