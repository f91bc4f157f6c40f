"""Decimal digits read as the patterns read them (``polydeid.text.digits``)."""

from __future__ import annotations

import sys

import pytest
import regex

from polydeid.text.digits import digit_value, digits_int, zero_of

NAG_MUNDARI_ZERO = 0x1E4F0  # Unicode 15: digits to regex, unknown to Python 3.11


@pytest.mark.parametrize(
    ("char", "value"),
    [("7", 7), ("٣", 3), ("७", 7), ("７", 7), (chr(NAG_MUNDARI_ZERO + 4), 4)],
    ids=["ascii", "arabic-indic", "devanagari", "fullwidth", "nag-mundari"],
)
def test_a_decimal_digit_has_its_value(char: str, value: int) -> None:
    assert digit_value(char) == value
    assert digits_int(char * 2) == value * 11
    assert digit_value(zero_of(char)) == 0


@pytest.mark.parametrize("char", ["²", "½", "Ⅳ", "a", " ", "\U000e0001"])
def test_other_characters_have_no_decimal_value(char: str) -> None:
    assert digit_value(char) is None
    with pytest.raises(ValueError):
        digits_int("1" + char)


def test_every_character_a_pattern_reads_as_a_digit_has_a_value() -> None:
    r"""Every code point ``regex`` matches with ``\d`` has a value, and the ten digits of its
    run read 0 to 9 in order: what a pattern matched can always be read as a number."""
    digit = regex.compile(r"\d")
    found = 0
    for code in range(sys.maxunicode + 1):
        char = chr(code)
        if digit.match(char):
            value = digit_value(char)
            assert value is not None, hex(code)
            zero = ord(zero_of(char))
            assert [digit_value(chr(zero + k)) for k in range(10)] == list(range(10)), hex(code)
            found += 1
    assert found > 600
