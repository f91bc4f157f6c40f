"""Granularity: which of day, month and year a written date shows."""

from __future__ import annotations

import pytest

from polydeid.dates import Granularity, date_granularity, granularity_of, parse_date


@pytest.mark.parametrize(
    ("text", "langs", "expected"),
    [
        ("12/03/2024", ["en"], Granularity.FULL),
        ("2024-03-12T14:30:00Z", ["en"], Granularity.FULL),
        ("Tuesday, 12 March 2024", ["en"], Granularity.FULL),
        ("12 March", ["en"], Granularity.DAY_MONTH),
        ("19.3.", ["de"], Granularity.DAY_MONTH),
        ("9/7", ["en"], Granularity.DAY_MONTH),
        ("25-7", ["vi"], Granularity.DAY_MONTH),
        ("March 2024", ["en"], Granularity.MONTH_YEAR),
        ("03/2024", ["en"], Granularity.MONTH_YEAR),
        ("Jan '19", ["en"], Granularity.MONTH_YEAR),
        ("2004", ["en"], Granularity.YEAR),
        ("'95", ["en"], Granularity.YEAR),
        ("año 2009", ["es", "en"], Granularity.YEAR),
        ("198003021230+0300", ["en"], Granularity.FULL),
        ("198003", ["en"], Granularity.MONTH_YEAR),
        ("12", ["en"], Granularity.DAY),
        ("14.", ["de"], Granularity.DAY),
        ("", ["en"], None),
        ("120/80", ["en"], None),
        ("32", ["en"], None),
        ("1850", ["en"], None),
    ],
    ids=range(21),
)
def test_date_granularity(text: str, langs: list[str], expected: Granularity | None) -> None:
    assert date_granularity(text, langs) is expected


def test_granularity_is_a_string_enum_and_parsed_dates_report_it() -> None:
    assert Granularity.YEAR == "year"
    assert granularity_of(None, 3, 12) is Granularity.DAY_MONTH
    assert granularity_of(2024, None, None) is Granularity.YEAR
    parsed = parse_date("12 March 2024", ["en"])
    assert parsed is not None and parsed.kind is Granularity.FULL
