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
3. every Unicode decimal digit becomes its ASCII digit (Arabic-Indic, Devanagari, Thai …),
   every other space separator a space, and a Unicode hyphen, dash or minus sign (U+2010 to
   U+2014, U+2212, U+FE63; NFKC already reads the fullwidth ``－``) right between two digits a
   hyphen (``123–45–6789``, ``0772‒123‒456``); the rule layer reads ranges written with a
   hyphen as it reads them with an en dash (``120-130 mmHg``, ``2-3 days``, ``1-0-1``);
4. letters written for digits in a *number*: groups of digits and the letters ``O``, ``l``,
   ``I`` joined by single spaces, dots, hyphens or slashes, no group glued to another letter,
   and the number not right after a token of letters and digits, where they belong to an
   alphanumeric identifier (``IT77 O912 …`` of an IBAN):

   - the capital ``O`` leading a group before its digits is a zero (``O772`` → ``0772``)
     where the group holds two digits or more or the group next to it is two digits or more
     (``O6 12 34``); never in a word (``SpO2``, ``CO2``), alone (``O2``, ``O2 2L``) nor after
     a digit (``39O8``);
   - a lower-case ``l`` or capital ``I`` between digits is a one (``07l2 l23 456``,
     ``0772 I23 456``, ``44829I3``): right after a digit of its group, or leading a group
     after a group of digits, and right before a digit of its group, in a number with three
     digits or more for each ``l`` and ``I`` in it. Never leading a number (``I10``,
     ``I131``, ``I25.700``), before a unit or a sign (``100l``, ``10l/min``), in a word
     (``Il``, ``IL-6``, ``IgG``, ``I2C``, ``T1l``, ``ml``), alone (roman numerals, ``l``) or
     in a list of codes (``I10 I25 I48``). The bar ``|`` is never read: it separates table
     cells and HL7 fields between numbers.

A span ``[start, end)`` of the reading maps back (:meth:`Reading.to_original`) to the
original characters it was read from: every character of it, and every invisible character
between two of them, so an identifier with a zero-width space inside is one span over it; an
invisible character just outside a span stays outside. A text that needs none of this is its
own reading (:attr:`Reading.identity`) and costs a few scans.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

import regex

from polydeid.text.digits import digit_value

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
#: Unicode hyphens, dashes and minus signs read as a hyphen between two digits.
_DASHES = "\u2010\u2011\u2012\u2013\u2014\u2212\ufe63"
#: Non-ASCII decimal digits and space separators, and a dash between two digits.
_FOLDED = regex.compile(
    rf"(?V1)[[\p{{Nd}}\p{{Zs}}]--[\x00-\x7f]]|(?<=\p{{Nd}})[{_DASHES}](?=\p{{Nd}})"
)
_DIGIT_OR_SPACE = regex.compile(r"[\p{Nd}\p{Zs}]")
#: A letter that may be written for a digit, before a digit: every letter read as a digit
#: is one (a leading ``O`` before its group's digits, an ``l`` or ``I`` before a digit).
_LOOKALIKE_HINT = re.compile(r"[OlI][0-9]")
#: The characters a number with look-alike letters is written with, read forwards and back.
_NUMBER_CHARS = regex.compile(r"[0-9OlI .\-/]*+")
_NUMBER_CHARS_BACK = regex.compile(r"(?r)[0-9OlI .\-/]*+")
#: A number: groups of digits and look-alike letters, none glued to a letter or digit,
#: joined by single separators (see the module docstring, step 4).
_NUMBER = regex.compile(r"(?<![^\W_])[0-9OlI]++(?![^\W\d_])(?:[ .\-/][0-9OlI]++(?![^\W\d_]))*+")
_NUMBER_SEPARATOR = re.compile(r"([ .\-/])")
#: Digits for each ``l`` or ``I`` a number needs before they are read as ones.
_DIGITS_PER_ONE = 3


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


def _read_lookalikes(text: str) -> str:
    """``text`` with the letters of step 4 read as digits (same length)."""
    chars: list[str] | None = None
    done = 0
    for hint in _LOOKALIKE_HINT.finditer(text):
        at = hint.start()
        if at < done:
            continue
        back = _NUMBER_CHARS_BACK.match(text, done, at)
        forward = _NUMBER_CHARS.match(text, at)
        start = back.start() if back is not None else at
        done = forward.end() if forward is not None else at + 1
        for number in _NUMBER.finditer(text, start, done + 1):
            if not _LOOKALIKE_HINT.search(number.group()):
                continue
            read = _read_number(text, number.start(), number.group())
            if read is not None:
                if chars is None:
                    chars = list(text)
                chars[number.start() : number.end()] = read
    return text if chars is None else "".join(chars)


def _read_number(text: str, start: int, number: str) -> str | None:
    """``number`` (at ``start`` of ``text``) with its look-alike letters read as digits, or
    None where it is read as written."""
    before = _TOKEN_BEFORE.match(text, max(0, start - 40), start)
    if before is not None:
        word = before.group(1)
        if any(c.isdigit() for c in word) and any(c.isalpha() for c in word):
            return None
    parts = _NUMBER_SEPARATOR.split(number)
    groups = parts[::2]
    digits = sum(c.isdigit() for c in number)
    ones = number.count("l") + number.count("I")
    read_ones = ones > 0 and digits >= _DIGITS_PER_ONE * ones
    after_digits = False
    for k, group in enumerate(groups):
        chars = list(group)
        zeros = len(group) - len(group.lstrip("O"))
        if 0 < zeros < len(group) and group[zeros].isdigit():
            neighbours = groups[k - 1 : k] + groups[k + 1 : k + 2]
            if sum(c.isdigit() for c in group) >= 2 or any(
                len(g) >= 2 and g.isdigit() for g in neighbours
            ):
                chars[:zeros] = "0" * zeros
        for i, char in enumerate(group):
            if (
                read_ones
                and char in "lI"
                and (chars[i - 1].isdigit() if i else after_digits)
                and group[i + 1 : i + 2].isdigit()
            ):
                chars[i] = "1"
        after_digits = all(c.isdigit() for c in chars)
        parts[2 * k] = "".join(chars)
    read = "".join(parts)
    return None if read == number else read


def reading_of(text: str) -> Reading:
    """The reading of ``text`` (see the module docstring)."""
    current = text
    maps: list[OffsetMap] = []
    if not text.isascii():
        for step in (_without_invisible, _nfkc):
            current, offset_map = step(current)
            if offset_map is not None:
                maps.append(offset_map)
        if any(_may_fold(char) for char in set(current) if not char.isascii()):
            current = _FOLDED.sub(_fold_char, current)
    if _LOOKALIKE_HINT.search(current):
        current = _read_lookalikes(current)
    if not maps and current == text:
        return Reading(text, text)
    return Reading(text, current, tuple(maps))


def without_invisible(text: str) -> str:
    """``text`` without the invisible characters its reading removes (step 1)."""
    return _INVISIBLE.sub("", text)


def _may_fold(char: str) -> bool:
    """Whether :data:`_FOLDED` may change ``char`` (a non-ASCII character): a decimal digit,
    a space separator or a dash."""
    return char in _DASHES or _DIGIT_OR_SPACE.match(char) is not None


def _fold_char(match: regex.Match[str]) -> str:
    char = match.group()
    if char in _DASHES:
        return "-"
    digit = digit_value(char)
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
