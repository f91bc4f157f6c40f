r"""Decimal digits of every script, read as the patterns read them.

polydeid's patterns (the ``regex`` module) match ``\d`` by their own Unicode tables, which
may be newer than Python's (``int``, ``unicodedata``, ``re``): Nag Mundari's digits
U+1E4F0–U+1E4F9 (Unicode 15) are digits to ``regex`` and unknown to Python 3.11. Every digit a
pattern matched must be readable, so values come from Python's tables and, for a character
they do not know, from ``regex``'s.
"""

from __future__ import annotations

import unicodedata

import regex

#: A decimal digit (``\p{Nd}``) by ``regex``'s tables.
_DECIMAL = regex.compile(r"\p{Nd}")
#: The digits of each value, one group per value (``\p{Nv=…}`` by ``regex``'s tables).
_VALUES = regex.compile("|".join(rf"(\p{{Nv={value}}})" for value in range(10)))


def digit_value(char: str) -> int | None:
    """The value of the decimal digit ``char``, else ``None``."""
    value = unicodedata.decimal(char, None)
    if value is None and unicodedata.category(char) == "Cn" and _DECIMAL.match(char):
        found = _VALUES.fullmatch(char)
        value = None if found is None or found.lastindex is None else found.lastindex - 1
    return value


def digits_int(digits: str) -> int:
    """The number written with the decimal digits ``digits`` (any scripts); ``ValueError``
    where a character is no decimal digit."""
    if digits.isascii() and digits.isdigit():
        return int(digits)
    values = [digit_value(char) for char in digits]
    if not values or None in values:
        raise ValueError("not a run of decimal digits")
    return int("".join(map(str, values)))


def ascii_digits(text: str) -> str:
    """``text`` with every decimal digit written as its ASCII digit, the rest as it is."""
    if text.isascii():
        return text
    return "".join(char if (value := digit_value(char)) is None else str(value) for char in text)


def zero_of(char: str) -> str:
    """The zero of the decimal digit ``char``'s script (``"٠"`` for ``"٣"``)."""
    value = digit_value(char)
    if value is None:
        raise ValueError("not a decimal digit")
    return chr(ord(char) - value)
