"""An administrative unit written before a place belongs to the place span (detect.places)."""

from __future__ import annotations

import pytest

from polydeid.core.segments import Segment
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category
from polydeid.detect.pipeline import Pipeline
from polydeid.detect.places import grow_to_heads
from polydeid.testing import FakeDetector

VILLAGE, PERSON, DATE = Category.LOCATION_VILLAGE, Category.PERSON, Category.DATE


def span_at(text: str, words: str, label: Category, nth: int = 0) -> Span:
    start = -1
    for _ in range(nth + 1):
        start = text.index(words, start + 1)
    return Span(start, start + len(words), label, "tagger.x", 0.8)


def shown(text: str, spans) -> list[tuple[str, Category]]:
    return [(text[s.start : s.end], s.label) for s in spans]


@pytest.mark.parametrize(
    ("text", "place", "grown"),
    [
        ("Jotelo mag county ma Siaya nobiro.", "Siaya", "county ma Siaya"),
        ("Rowere e County ma Homabay okwayo kony.", "Homabay", "County ma Homabay"),
        ("Jotelo mawuok e Sub County ma Nyakach owacho.", "Nyakach", "Sub County ma Nyakach"),
        ("Odak e sub-county ma Muhoroni.", "Muhoroni", "sub-county ma Muhoroni"),
        ("Odak e COUNTY  MA KISUMU.", "KISUMU", "COUNTY  MA KISUMU"),  # any case, any spaces
        ("Odak e county mar Migori.", "Migori", "county mar Migori"),
    ],
    ids=["county-ma", "capitalised", "sub-county", "hyphenated", "case-and-spaces", "mar"],
)
def test_a_place_takes_the_head_written_before_it(text: str, place: str, grown: str) -> None:
    out = grow_to_heads(text, [span_at(text, place, VILLAGE)], "luo")
    assert shown(text, out) == [(grown, VILLAGE)]
    assert out[0].source == "tagger.x" and out[0].score == 0.8


def test_a_place_span_inside_the_head_is_absorbed() -> None:
    text = "Jotelo mawuok e Sub County ma Nyakach owacho."
    spans = [span_at(text, "Sub County", VILLAGE), span_at(text, "Nyakach", VILLAGE)]
    assert shown(text, grow_to_heads(text, spans, "luo")) == [("Sub County ma Nyakach", VILLAGE)]


def test_places_without_a_head_or_with_other_spans_there_stay_as_they_were() -> None:
    cases = [
        # a word between the head and the place
        ("Odak e county ma duong' Siaya.", [("Siaya", VILLAGE)]),
        # the head ends a line: a line is a field
        ("County ma\nSiaya", [("Siaya", VILLAGE)]),
        # a span of another kind on the head
        ("Ochieng County ma Siaya.", [("Ochieng County", PERSON), ("Siaya", VILLAGE)]),
        # not a place
        ("Jakom mar county ma Okoth.", [("Okoth", PERSON)]),
        # "county" inside a word
        ("Odak e Tcounty ma Siaya.", [("Siaya", VILLAGE)]),
    ]
    for text, found in cases:
        spans = [span_at(text, words, label) for words, label in found]
        assert grow_to_heads(text, spans, "luo") == tuple(spans), text


def test_only_languages_that_write_heads_first_are_changed() -> None:
    text = "Alihamia kaunti ya Siaya mwaka jana."
    spans = [span_at(text, "Siaya", VILLAGE)]
    assert grow_to_heads(text, spans, "sw") == tuple(spans)
    english = "He lives in county ma Siaya."  # Dholuo words in an English segment
    assert grow_to_heads(english, [span_at(english, "Siaya", VILLAGE)], "en")[0].start == (
        english.index("Siaya")
    )


def test_the_pipeline_grows_places_unless_it_measures_a_baseline() -> None:
    text = "Jotelo mag county ma Siaya nobiro tarik 12/03/2024."
    found = FakeDetector([span_at(text, "Siaya", VILLAGE)])
    out = Pipeline([found]).detect(Segment(text, lang="luo"))
    assert shown(text, out) == [("county ma Siaya", VILLAGE)]
    as_is = Pipeline([found], segment_steps=False).detect(Segment(text, lang="luo"))
    assert shown(text, as_is) == [("Siaya", VILLAGE)]
