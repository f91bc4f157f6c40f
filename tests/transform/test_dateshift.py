"""Tests for the date-shift transform: patient offsets, format keeping, interval keeping."""

from __future__ import annotations

import datetime as dt

import pytest
import regex
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from polydeid.core.errors import ConfigError, KeyMaterialError
from polydeid.dates import parse_date, to_ordinal
from polydeid.locales.dates import language_dates
from polydeid.transform.dateshift import (
    months_for_days,
    patient_offset_days,
    shift_date_text,
)

KEY = bytes(range(32))

# --- patient offsets ---------------------------------------------------------------------------


def test_offset_is_deterministic_and_key_dependent() -> None:
    assert patient_offset_days(KEY, "patient-1") == patient_offset_days(KEY, "patient-1")
    offsets = {patient_offset_days(KEY, f"patient-{i}") for i in range(200)}
    assert len(offsets) > 100  # spread over the range
    other = [patient_offset_days(b"another key", f"patient-{i}") for i in range(50)]
    assert other != [patient_offset_days(KEY, f"patient-{i}") for i in range(50)]


def test_offsets_take_both_signs() -> None:
    offsets = [patient_offset_days(KEY, f"p{i}") for i in range(200)]
    assert any(o < 0 for o in offsets) and any(o > 0 for o in offsets)


@given(
    patient=st.text(max_size=40),
    low=st.integers(0, 50),
    width=st.integers(0, 400),
    key=st.binary(min_size=1, max_size=64),
)
def test_offset_never_zero_and_within_range(patient: str, low: int, width: int, key: bytes) -> None:
    high = max(1, low) + width
    days = patient_offset_days(key, patient, max_days=high, min_days=low)
    assert days != 0
    assert max(1, low) <= abs(days) <= high


def test_offset_rejects_bad_key_and_empty_range() -> None:
    with pytest.raises(KeyMaterialError):
        patient_offset_days(b"", "p")
    with pytest.raises(ConfigError):
        patient_offset_days(KEY, "p", max_days=3, min_days=10)


def test_offset_errors_do_not_show_the_patient() -> None:
    with pytest.raises(ConfigError) as info:
        patient_offset_days(KEY, "Nakato-Sarah-4471", max_days=1, min_days=5)
    assert "Nakato" not in str(info.value)


# --- examples: the same written form, moved -----------------------------------------------------

EXAMPLES: list[tuple[str, int, list[str], str]] = [
    ("12/03/2024", 10, ["en"], "22/03/2024"),
    ("12 March 2024", 10, ["en"], "22 March 2024"),
    ("March 12, 2024", -12, ["en"], "February 29, 2024"),
    ("MARCH 12, 2024", 30, ["en"], "APRIL 11, 2024"),
    ("Mar. 5, 2023", 30, ["en"], "Apr. 4, 2023"),
    ("May 5, 2023", 30, ["en"], "June 4, 2023"),  # "May" reads as the full name
    ("Monday, 12th March 2024", 1, ["en"], "Tuesday, 13th March 2024"),
    ("3rd of April", 20, ["en"], "23rd of April"),
    ("1st of May", 1, ["en"], "2nd of May"),
    ("2024-03-12T14:30:00Z", -12, ["en"], "2024-02-29T14:30:00Z"),
    ("12/03/2024 14:30", 365, ["en"], "12/03/2025 14:30"),
    ("12-03-24", -80, ["en"], "23-12-23"),
    ("31/12/99", 1, ["en"], "01/01/00"),
    ("12-Mar-24", 30, ["en"], "11-Apr-24"),
    ("March 2024", 45, ["en"], "April 2024"),
    ("March 2024", 10, ["en"], "March 2024"),
    ("03/2024", -40, ["en"], "02/2024"),
    ("2024-03", 200, ["en"], "2024-10"),
    ("03/04/2024", 1, ["en-US"], "03/05/2024"),
    ("03/04/2024", 1, ["en"], "04/04/2024"),
    ("19.3.", 20, ["de", "en"], "8.4."),
    ("12.03.2024", 20, ["de", "en"], "01.04.2024"),
    ("12. Mai 2024", -12, ["de", "en"], "30. April 2024"),
    ("Mo., 12.03.2024", 1, ["de", "en"], "Di., 13.03.2024"),
    ("3. Jänner 1950", 31, ["de", "en"], "3. Februar 1950"),
    ("12 de marzo", 30, ["es", "en"], "11 de abril"),
    ("1º de mayo de 2024", 1, ["es", "en"], "2 de mayo de 2024"),
    ("1er mars 2024", 1, ["fr", "en"], "2 mars 2024"),
    ("2 mars 2024", -1, ["fr", "en"], "1 mars 2024"),
    ("15 fevrier 2024", 30, ["fr", "en"], "16 mars 2024"),
    ("12 de março de 2024", 20, ["pt", "en"], "1 de abril de 2024"),
    ("12 marzo 2024", 1, ["it", "en"], "13 marzo 2024"),
    ("3 mrt. 2024", 40, ["nl", "en"], "12 apr. 2024"),
    ("ngày 12 tháng 3 năm 2024", 30, ["vi", "en"], "ngày 11 tháng 4 năm 2024"),
    ("ngày 05 tháng 06 năm 1980", 1, ["vi", "en"], "ngày 06 tháng 06 năm 1980"),
    ("tháng Ba năm 2024", 31, ["vi", "en"], "tháng Tư năm 2024"),
    ("12 Machi 2024", 30, ["sw", "en"], "11 Aprili 2024"),
    ("mwezi wa tatu 2024", 31, ["sw", "en"], "mwezi wa nne 2024"),
    ("12 Ogwokusatu 2024", 30, ["lg", "en"], "11 Ogwokuna 2024"),
    ("12 Maaki 2024", 30, ["lg", "en"], "11 Apuli 2024"),
    ("12 Werurwe 2024", 30, ["rw", "en"], "11 Mata 2024"),
    ("12 Dwe mar Adek 2024", 30, ["luo", "en"], "11 Dwe mar Ang'wen 2024"),
    ("١٢ آذار ٢٠٢٤", 30, ["ar", "en"], "١١ نيسان ٢٠٢٤"),
    ("5 شباط/فبراير 2024", 30, ["ar", "en"], "6 آذار/مارس 2024"),
    ("2024年3月12日", 25, ["zh", "en"], "2024年4月6日"),
    ("２０２４年０３月１２日", 1, ["zh", "en"], "２０２４年０３月１３日"),
    ("12 марта 2024 г.", 30, ["ru", "en"], "11 апреля 2024 г."),
    ("март 2024", 31, ["ru", "en"], "апрель 2024"),
    ("«5» мая 2023 года", 1, ["ru", "en"], "«6» мая 2023 года"),
    ("२० मार्च २०२४", 12, ["hi", "en"], "१ अप्रैल २०२४"),
    ("መጋቢት 3 ቀን 2016 ዓ.ም.", 40, ["am", "en"], "ሚያዝያ 13 ቀን 2016 ዓ.ም."),
    ("ጳጉሜን 5 ቀን 2015 ዓ.ም.", 1, ["am", "en"], "ጳጉሜን 6 ቀን 2015 ዓ.ም."),
    ("ጳጉሜን 5 ቀን 2014 ዓ.ም.", 1, ["am", "en"], "መስከረም 1 ቀን 2015 ዓ.ም."),
    ("ማርች 12, 2024", 30, ["am", "en"], "ኤፕሪል 11, 2024"),
]


@pytest.mark.parametrize(
    ("text", "days", "langs", "expected"),
    EXAMPLES,
    ids=[f"{langs[0]}-{i}" for i, (_, _, langs, _) in enumerate(EXAMPLES)],
)
def test_shift_keeps_the_written_form(
    text: str, days: int, langs: list[str], expected: str
) -> None:
    assert shift_date_text(text, days, langs) == expected


def test_shift_keeps_surrounding_whitespace() -> None:
    assert shift_date_text("  12/03/2024\n", 1, ["en"]) == "  13/03/2024\n"


@pytest.mark.parametrize("text", ["", "   ", "not a date", "120/80", "31/02/2024"], ids=range(5))
def test_unparsable_gives_none(text: str) -> None:
    assert shift_date_text(text, 10, ["en"]) is None


def test_yearless_dates_use_a_leap_reference_year() -> None:
    assert shift_date_text("29 February", 1, ["en"]) == "1 March"
    assert shift_date_text("28 February", 1, ["en"]) == "29 February"
    assert shift_date_text("28 February", 1, ["en"], reference_year=2023) == "1 March"
    assert shift_date_text("28 December", 10, ["en"]) == "7 January"


def test_month_year_moves_by_rounded_months() -> None:
    assert months_for_days(15) == 0 and months_for_days(16) == 1
    assert months_for_days(-16) == -1 and months_for_days(365) == 12
    assert shift_date_text("December 2023", 31, ["en"]) == "January 2024"
    assert shift_date_text("January 2024", -31, ["en"]) == "December 2023"


def test_shifted_weekday_follows_the_date() -> None:
    shifted = shift_date_text("Tuesday, 12 March 2024", 100, ["en"])
    parsed = parse_date(shifted or "", ["en"])
    assert parsed is not None and parsed.year and parsed.month and parsed.day
    assert dt.date(parsed.year, parsed.month, parsed.day).weekday() == parsed.weekday


def test_order_keyword_overrides_language() -> None:
    assert shift_date_text("03/04/2024", 1, ["en"], order="mdy") == "03/05/2024"


# --- properties ----------------------------------------------------------------------------------

NUMERIC = ["%d/%m/%Y", "%d.%m.%Y", "%d-%m-%Y", "%Y-%m-%d", "%d/%m/%y", "%Y/%m/%d", "%d-%m-%y"]
TEXTUAL = {
    "en": ["{d} {M} {Y}", "{M} {d}, {Y}"],
    "de": ["{d}. {M} {Y}"],
    "es": ["{d} de {M} de {Y}"],
    "fr": ["{d} {M} {Y}"],
    "vi": ["ngày {d} tháng {m} năm {Y}"],
    "sw": ["{d} {M} {Y}"],
    "lg": ["{d} {M} {Y}"],
    "rw": ["{d} {M} {Y}"],
    "luo": ["{d} {M} {Y}"],
    "ar": ["{d} {M} {Y}"],
    "zh": ["{Y}年{m}月{d}日"],
    "ru": ["{d} {M} {Y} г."],
    "hi": ["{d} {M} {Y}"],
}
dates = st.dates(min_value=dt.date(1960, 1, 1), max_value=dt.date(2040, 12, 31))
offsets = st.integers(-730, 730).filter(lambda d: d != 0)


def _skeleton(text: str) -> str:
    return regex.sub(r"\d", "0", text)


@settings(max_examples=200, deadline=None)
@given(dates, offsets, st.sampled_from(NUMERIC))
def test_numeric_shift_keeps_format_and_offset(value: dt.date, days: int, fmt: str) -> None:
    text = value.strftime(fmt)
    shifted = shift_date_text(text, days, ["en"])
    assert shifted is not None
    assert _skeleton(shifted) == _skeleton(text)  # same separators, padding and length
    assert shifted == (value + dt.timedelta(days=days)).strftime(fmt)


def _written(lang: str, value: dt.date, template: str) -> str:
    name = next(iter(language_dates(lang).month_forms.values())).names[value.month - 1]
    return template.format(d=value.day, m=value.month, M=name, Y=value.year)


@st.composite
def textual_cases(draw: st.DrawFn) -> tuple[str, str]:
    lang = draw(st.sampled_from(sorted(TEXTUAL)))
    return lang, draw(st.sampled_from(TEXTUAL[lang]))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(textual_cases(), dates, dates, offsets)
def test_textual_shift_keeps_intervals(
    case: tuple[str, str], first: dt.date, second: dt.date, days: int
) -> None:
    lang, template = case
    langs = [lang, "en"]
    shifted = []
    for value in (first, second):
        text = _written(lang, value, template)
        moved = shift_date_text(text, days, langs)
        assert moved is not None
        assert regex.sub(r"[\w\s']", "", moved) == regex.sub(r"[\w\s']", "", text)  # punctuation
        parsed = parse_date(moved, langs)
        assert parsed is not None and parsed.year and parsed.month and parsed.day
        shifted.append(dt.date(parsed.year, parsed.month, parsed.day))
        assert shifted[-1] == value + dt.timedelta(days=days)
    assert (shifted[1] - shifted[0]) == (second - first)


@settings(max_examples=200, deadline=None)
@given(
    st.integers(1990, 2030),
    st.integers(1, 13),
    st.integers(1, 30),
    st.integers(1, 13),
    st.integers(1, 30),
    offsets,
)
def test_ethiopian_shift_keeps_intervals(
    year: int, m1: int, d1: int, m2: int, d2: int, days: int
) -> None:
    d1, d2 = (min(d1, 5) if m1 == 13 else d1), (min(d2, 5) if m2 == 13 else d2)
    names = language_dates("am").month_forms["ethiopic"].names
    texts = [f"{names[m - 1]} {d} ቀን {year} ዓ.ም." for m, d in ((m1, d1), (m2, d2))]
    moved = []
    for text in texts:
        out = shift_date_text(text, days, ["am"])
        parsed = parse_date(out or "", ["am"])
        assert parsed is not None and parsed.calendar == "ethiopic"
        assert parsed.year and parsed.month and parsed.day
        moved.append(to_ordinal("ethiopic", parsed.year, parsed.month, parsed.day))
    original = [to_ordinal("ethiopic", year, m, d) for m, d in ((m1, d1), (m2, d2))]
    assert moved[0] - original[0] == days
    assert moved[1] - moved[0] == original[1] - original[0]


@settings(max_examples=100, deadline=None)
@given(st.dates(min_value=dt.date(1960, 1, 1), max_value=dt.date(2040, 12, 1)), offsets)
def test_month_year_intervals_preserved(value: dt.date, days: int) -> None:
    later = dt.date(value.year + (value.month // 12), value.month % 12 + 1, 1)
    texts = [v.strftime("%B %Y") for v in (value, later)]
    moved = [parse_date(shift_date_text(t, days, ["en"]) or "", ["en"]) for t in texts]
    assert all(p is not None for p in moved)
    a, b = (p.year * 12 + p.month for p in moved if p is not None and p.year and p.month)
    assert b - a == 1


@pytest.mark.parametrize(
    ("text", "days", "expected"),
    [
        ("19800302", 10, "19800312"),
        ("198003021230+0300", -2, "198002291230+0300"),  # 1980 is a leap year
        ("20240229123000.5", 1, "20240301123000.5"),
        ("198003", 45, "198004"),
        ("19801332", 5, None),
        ("0772123456", 5, None),
    ],
    ids=range(6),
)
def test_hl7_compact_timestamps_shift_at_their_own_precision(text, days, expected):
    from polydeid.transform.dateshift import shift_compact

    assert shift_compact(text, days) == expected
