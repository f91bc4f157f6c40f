"""The text every detector reads: identifiers written to dodge patterns, read plainly.

:func:`reading_of` turns a segment's text into the text the detectors see, with an exact
offset map back:

1. invisible characters go: format characters (``\\p{Cf}``: zero-width space, word joiner,
   soft hyphen, bidirectional marks) and the other default-ignorable code points; the
   zero-width (non-)joiner stays between letters of other scripts (Persian, Indic), where it
   spells a word, and goes next to a Latin letter or a digit;
2. NFKC: fullwidth digits and letters, the fullwidth ``＠``, ligatures, NBSP and thin spaces,
   decomposed accents composed; punctuation, symbols and other numbers stay as the language
   data writes them (the fullwidth colon of ``姓名：``, ``Nº``, ``²``, ``½``);
3. every Unicode decimal digit becomes its ASCII digit (Arabic-Indic, Devanagari, Thai …) and
   every other space separator a space;
4. the capital letter ``O`` leading a run of digits is read as a zero (``O772`` → ``0772``):
   only in a token of digits and ``O`` with two digits or more, or next to a group of two
   digits or more (``O6 12 34``); never in a word (``SpO2``) nor alone (``O2``, ``O2 2L``),
   and never after a digit or after a token of letters and digits, where it belongs to an
   alphanumeric identifier (``39O8``, ``IT77 O912`` in IBANs).

A span ``[start, end)`` of the reading maps back (:meth:`Reading.to_original`) to the
original characters it was read from: every character of it, and every invisible character
between two of them, so an identifier with a zero-width space inside is one span over it; an
invisible character just outside a span stays outside. A text that needs none of this is its
own reading (:attr:`Reading.identity`) and costs a few scans.
"""

from __future__ import annotations

import itertools
import unicodedata
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

import regex

#: Invisible characters removed: format and default-ignorable characters except the joiners.
_INVISIBLE = regex.compile(
    r"(?V1)[[\p{Cf}\p{Default_Ignorable_Code_Point}]--[\u200c\u200d]]+"
    r"|(?<=[\p{Latin}\p{N}])[\u200c\u200d]+|[\u200c\u200d]+(?=[\p{Latin}\p{N}])"
)
#: Whether a text holds any invisible character (two single properties scan fastest).
_MAYBE_INVISIBLE = (
    regex.compile(r"\p{Default_Ignorable_Code_Point}"),
    regex.compile(r"\p{Cf}"),
)
#: Runs of characters NFKC may change: not NFKC, possibly composing, or combining marks.
_NFKC_CHANGING = regex.compile(r"(?V1)[\p{NFKC_QC=N}\p{NFKC_QC=M}\P{ccc=0}]+")
#: Characters NFKC leaves alone here, as the language data and rules write them: punctuation
#: and symbols (the fullwidth colon of Chinese labels, ``№``, ``℃``) except the fullwidth
#: ``＠``, ``．`` and ``－`` of addresses and numbers; numbers that are no digits (``²``,
#: ``½``, ``Ⅱ``); the ordinal indicators of ``Nº``, ``1ª``; the micro sign of ``µg``.
_KEPT = regex.compile(r"(?V1)[[\p{P}\p{S}\p{No}\p{Nl}\u00aa\u00ba\u00b5]--[\uff20\uff0e\uff0d]]")
#: Characters that NFKC may join to the character before them.
_JOINS_BACK = regex.compile(r"(?V1)[\p{NFKC_QC=M}\P{ccc=0}]")
#: Non-ASCII decimal digits and space separators.
_FOLDED = regex.compile(r"(?V1)[[\p{Nd}\p{Zs}]--[\x00-\x7f]]")
#: A token of digits and capital ``O`` (no letter next to it) with an ``O``, and two digits
#: or more or a group of two digits or more next to it: ``O772``, ``O6 12 34``; not ``O2 2L``.
_LETTER_O_HINT = regex.compile(r"O(?:(?<=[0-9]O)|(?=[0-9]))")
_LETTER_O_RUN = regex.compile(
    r"(?<![^\W\d_])(?=[0-9]*O)"
    r"(?:(?=(?:O*[0-9]){2})[0-9O]++"
    r"|[0-9O]++(?=[ .\-/][0-9]{2,}+(?![^\W\d_]))"
    r"|(?<=(?<![^\W\d_])[0-9]{2,}[ .\-/])[0-9O]++)"
    r"(?![^\W\d_])"
)


class OffsetMap:
    """Where each character of a rewritten text came from.

    ``edits`` are ``(old_start, old_end, new_start, new_end)``, sorted and disjoint: the new
    text's ``[new_start, new_end)`` was read from the old text's ``[old_start, old_end)``
    (empty for a removal); between edits the texts run in step.
    """

    __slots__ = ("_edits", "_new_starts", "_old_starts")

    def __init__(self, edits: Sequence[tuple[int, int, int, int]]) -> None:
        self._edits = tuple(edits)
        self._old_starts = [edit[0] for edit in self._edits]
        self._new_starts = [edit[2] for edit in self._edits]

    @property
    def edits(self) -> tuple[tuple[int, int, int, int], ...]:
        return self._edits

    def old_range(self, char: int) -> tuple[int, int]:
        """The old characters the new character at ``char`` was read from."""
        k = bisect_right(self._new_starts, char) - 1
        if k < 0:
            return char, char + 1
        old_start, old_end, _, new_end = self._edits[k]
        if char < new_end:
            return old_start, old_end
        return old_end + char - new_end, old_end + char - new_end + 1

    def to_old(self, start: int, end: int) -> tuple[int, int]:
        """The old range that non-empty new range ``[start, end)`` was read from."""
        return self.old_range(start)[0], self.old_range(end - 1)[1]

    def to_new(self, position: int) -> int:
        """The new offset of old boundary ``position`` (inside an edit: the edit's start)."""
        k = bisect_right(self._old_starts, position) - 1
        if k < 0:
            return position
        _, old_end, new_start, new_end = self._edits[k]
        if position < old_end:
            return new_start
        return new_end + position - old_end


@dataclass(frozen=True, slots=True)
class Reading:
    """A text as the detectors read it, and the way back to the original."""

    original: str
    text: str
    maps: tuple[OffsetMap, ...] = ()

    @property
    def identity(self) -> bool:
        """Whether the reading is the original text, character for character."""
        return self.text is self.original

    def to_original(self, start: int, end: int) -> tuple[int, int]:
        """The original characters non-empty reading span ``[start, end)`` was read from."""
        for offset_map in reversed(self.maps):
            start, end = offset_map.to_old(start, end)
        return start, end

    def to_reading(self, position: int) -> int:
        """The reading's offset of original boundary ``position``."""
        for offset_map in self.maps:
            position = offset_map.to_new(position)
        return position


#: The token right before a position, joined to it by a space or hyphen (matched backwards).
_TOKEN_BEFORE = regex.compile(r"(?r)([\p{L}\p{N}]+)[ \-]")


def _leading_zeros(m: regex.Match[str]) -> str:
    """A token of digits and ``O`` with its leading ``O`` read as zeros, unless the token
    before it mixes letters and digits (``IT77 O912 …``: a letter of an IBAN's account
    number)."""
    token = m.group()
    before = _TOKEN_BEFORE.match(m.string, max(0, m.start() - 40), m.start())
    if before is not None:
        word = before.group(1)
        if any(c.isdigit() for c in word) and any(c.isalpha() for c in word):
            return token
    rest = token.lstrip("O")
    return "0" * (len(token) - len(rest)) + rest


def reading_of(text: str) -> Reading:
    """The reading of ``text`` (see the module docstring)."""
    current = text
    maps: list[OffsetMap] = []
    if not text.isascii():
        for step in (_without_invisible, _nfkc):
            current, offset_map = step(current)
            if offset_map is not None:
                maps.append(offset_map)
        current = _FOLDED.sub(_fold_char, current)
    if "O" in current and _LETTER_O_HINT.search(current):
        current = _LETTER_O_RUN.sub(_leading_zeros, current)
    if not maps and current == text:
        return Reading(text, text)
    return Reading(text, current, tuple(maps))


def without_invisible(text: str) -> str:
    """``text`` without the invisible characters its reading removes (step 1)."""
    return _INVISIBLE.sub("", text)


def _fold_char(match: regex.Match[str]) -> str:
    char = match.group()
    digit = unicodedata.decimal(char, None)
    if digit is not None:
        return str(digit)
    return " " if unicodedata.category(char) == "Zs" else char


def _rewrite(text: str, edits: Sequence[tuple[int, int, str]]) -> tuple[str, OffsetMap]:
    """``text`` with each ``(start, end, replacement)`` of ``edits`` (sorted, disjoint) made."""
    parts: list[str] = []
    spans: list[tuple[int, int, int, int]] = []
    done = 0
    length = 0
    for start, end, new in edits:
        parts.append(text[done:start])
        length += start - done
        parts.append(new)
        spans.append((start, end, length, length + len(new)))
        length += len(new)
        done = end
    parts.append(text[done:])
    return "".join(parts), OffsetMap(tuple(spans))


def _without_invisible(text: str) -> tuple[str, OffsetMap | None]:
    if not any(pattern.search(text) for pattern in _MAYBE_INVISIBLE):
        return text, None
    edits = [(m.start(), m.end(), "") for m in _INVISIBLE.finditer(text)]
    if not edits:
        return text, None
    return _rewrite(text, edits)


def _joins_back(char: str) -> bool:
    """Whether NFKC may join ``char`` to the character before it."""
    if _JOINS_BACK.match(char):
        return True
    decomposed = unicodedata.normalize("NFKD", char)
    return decomposed != char and bool(_JOINS_BACK.match(decomposed[0]))


def _nfkc(text: str) -> tuple[str, OffsetMap | None]:
    """NFKC of ``text`` unit by unit, each unit a character with those NFKC joins to it."""
    if unicodedata.is_normalized("NFKC", text):
        return text, None
    edits: list[tuple[int, int, str]] = []
    done = 0
    for match in _NFKC_CHANGING.finditer(text):
        start, end = match.span()
        while start > done and _joins_back(text[start]):
            start -= 1
        units = [start]
        units.extend(k for k in range(start + 1, end) if not _joins_back(text[k]))
        units.append(end)
        for unit_start, unit_end in itertools.pairwise(units):
            unit = text[unit_start:unit_end]
            if len(unit) == 1 and _KEPT.match(unit):
                continue
            normal = unicodedata.normalize("NFKC", unit)
            if normal != unit:
                edits.append((unit_start, unit_end, normal))
        done = end
    if not edits:
        return text, None
    return _rewrite(text, edits)
