"""The slot table of the generator: every slot a template may use has exactly one filler."""

from __future__ import annotations

from polydeid.synth import generate as gen


def test_every_slot_has_a_filler_and_no_filler_lacks_a_slot() -> None:
    assert set(gen._SLOT_FILLERS) == set(gen.SLOTS)


def _day_months(lang: str, country: str, draws: int = 80) -> list[str]:
    import random

    state = gen._new_state(
        lang,
        country,
        random.Random(5),
        gen.document_types()["nursing_note"],
        "train",
        fill_seed=5,
    )
    out = []
    for _ in range(draws):
        (piece,) = gen._day_month(state)
        assert piece.label is gen.Category.DATE
        out.append(piece.text)
    return out


def test_a_day_and_month_without_a_year_is_written_as_the_country_writes_it() -> None:
    import re

    us, ug = _day_months("en", "US"), _day_months("en", "UG")
    numeric_us = [t for t in us if "/" in t]
    assert numeric_us and any(int(t.split("/")[1]) > 12 for t in numeric_us)  # month first
    numeric_ug = [t for t in ug if "/" in t]
    assert numeric_ug and all(int(t.split("/")[1]) <= 12 for t in numeric_ug)  # day first
    assert any(re.fullmatch(r"[A-Z][a-z]+ \d{1,2}", t) for t in us)  # "March 14"
    assert any(re.fullmatch(r"\d{1,2} [A-Z][a-z]+", t) for t in ug)  # "14 March"
    assert not any(re.search(r"\d{4}", t) for t in us + ug)  # never a year
    de = _day_months("de", "DE")
    assert any(re.fullmatch(r"\d{1,2}\.\d{1,2}\.", t) for t in de)  # 14.3. / 14.03.
    assert any(re.fullmatch(r"\d{1,2}\. \w+", t) for t in de)  # 14. März
    assert all(re.fullmatch(r"\d{1,2}月\d{1,2}日", t) for t in _day_months("zh", "CN"))
    assert all(t.startswith("ngày ") and " tháng " in t for t in _day_months("vi", "VN"))
