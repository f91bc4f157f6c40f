"""Date shift of partial dates: yearless day-months, years alone and apostrophe years move
consistently with the same patient's full dates."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st

from polydeid import Deidentifier
from polydeid.transform.dateshift import shift_date_text, years_for_days

KEY = bytes(range(32))


@pytest.mark.parametrize(
    ("text", "days", "langs", "expected"),
    [
        ("9/7", 10, ["en"], "19/7"),  # 9 July
        ("7/28", 10, ["en"], "8/7"),  # no 28th month: month first, 7 August
        ("3/4", 1, ["en-US"], "3/5"),  # 4 March read month first in the US
        ("25/7", 7, ["vi", "en"], "1/8"),
        ("24-7", -30, ["vi", "en"], "24-6"),
        ("1992", 365, ["en"], "1993"),
        ("1992", -200, ["en"], "1991"),
        ("'95", 400, ["en"], "'96"),
        ("'99", 365, ["en"], "'00"),
        ("año 2009", 365, ["es", "en"], "año 2010"),
    ],
    ids=range(10),
)
def test_partial_dates_shift_in_their_written_form(
    text: str, days: int, langs: list[str], expected: str
) -> None:
    assert shift_date_text(text, days, langs) == expected


def test_years_move_by_rounded_years() -> None:
    assert years_for_days(182) == 0 and years_for_days(183) == 1
    assert years_for_days(-183) == -1 and years_for_days(730) == 2


@given(st.integers(1950, 2050), st.integers(-3000, 3000))
def test_a_year_moves_like_the_full_dates_of_its_year_on_average(year: int, days: int) -> None:
    shifted = shift_date_text(str(year), days, ["en"])
    assert shifted is not None
    middle = dt.date(year, 7, 2) + dt.timedelta(days=days)
    assert abs(int(shifted) - middle.year) <= 1
    assert int(shifted) - year == years_for_days(days)


def test_one_patients_partial_and_full_dates_move_by_one_offset() -> None:
    deid = Deidentifier(profile="rules", policy="surrogate", key=KEY)
    text = "Admitted 12/03/2024; seen 9/7; MI 1992."
    out = deid.redact(text, lang="en", patient_id="patient-a")
    full = out.split("Admitted ", 1)[1].split(";", 1)[0]
    day, month, year = (int(x) for x in full.split("/"))
    days = (dt.date(year, month, day) - dt.date(2024, 3, 12)).days
    assert days != 0
    assert shift_date_text("9/7", days, ["en"], reference_year=2024) in out
    moved_year = shift_date_text("1992", days, ["en"])
    assert (moved_year if moved_year != "1992" else "[DATE]") in out
    assert "9/7" not in out
