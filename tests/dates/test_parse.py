"""Parsed dates (polydeid.dates.parse): a reading never shows the date it holds."""

from __future__ import annotations

from polydeid.dates.parse import Reading
from polydeid.formats._code_lex import Token


def test_a_reading_shows_its_groups_not_its_values() -> None:
    reading = Reading("t1", year=1987, month=3, day=14, month_key="march", month_written="March")
    shown = repr(reading)
    assert "t1" in shown
    assert not any(v in shown for v in ("1987", "14", "March", "march"))


def test_a_code_token_does_not_show_its_text() -> None:
    assert "Okello" not in repr(Token(0, 6, "string", None, "Okello"))
