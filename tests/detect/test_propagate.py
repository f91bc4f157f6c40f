"""A name found once in a segment is found wherever else it is written (detect.propagate)."""

from __future__ import annotations

from polydeid.core.segments import Segment
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category, Fact
from polydeid.detect.base import FakeDetector
from polydeid.detect.pipeline import Pipeline
from polydeid.detect.propagate import SOURCE, propagate_names

PATIENT, OTHER = Category.PERSON, Category.PERSON_THIRD_PARTY


def spans_of(text: str, *found: tuple[str, Category]) -> list[Span]:
    out = []
    for words, label in found:
        start = text.index(words)
        out.append(Span(start, start + len(words), label, "tagger.x", 0.9))
    return out


def shown(text: str, spans) -> list[tuple[str, Category, str]]:
    return [(text[s.start : s.end], s.label, s.source) for s in spans]


def test_a_found_name_is_found_where_else_it_is_written() -> None:
    text = "Amina Wanjiru seen today. Wanjiru walked in with her mother Akinyi.\nAkinyi left."
    spans = spans_of(text, ("Amina Wanjiru", PATIENT), ("Akinyi", OTHER))
    out = propagate_names(text, spans, lang="sw")
    assert shown(text, out) == [
        ("Amina Wanjiru", PATIENT, "tagger.x"),
        ("Wanjiru", PATIENT, SOURCE),
        ("Akinyi", OTHER, "tagger.x"),
        ("Akinyi", OTHER, SOURCE),
    ]


def test_a_carried_word_joins_the_name_it_stands_next_to() -> None:
    text = "James Onyango Koyoo spoke.\nLater James Onyango Koyoo left."
    first = Span(0, 19, PATIENT, "tagger.x", 0.9)
    later = text.index("James", 5)
    spans = [first, Span(later, later + 13, PATIENT, "tagger.x", 0.9)]
    out = propagate_names(text, spans, lang="luo")
    assert [text[s.start : s.end] for s in out] == ["James Onyango Koyoo", "James Onyango Koyoo"]


def test_words_that_do_not_look_like_names_are_not_carried() -> None:
    cases = [
        # written in lower case elsewhere: a word at a sentence's start, not a name
        ("Césarienne Okello planned. Césarienne done; la césarienne a duré.", "Césarienne"),
        ("Dr Okello came. Dr Mensah too.", "Dr"),  # a title
        ("Al Okello came. Al left.", "Al"),  # under three letters
        ("ጊያን ባሬ came. ጊያን ባሬ ሲንድሮም", "ጊያን"),  # no case: a name cannot be told from a word
    ]
    for text, word in cases:
        span = Span(0, text.index(" ", len(word) + 1), PATIENT, "tagger.x", 0.9)
        out = propagate_names(text, [span], lang="fr")
        assert out == (span,), word


def test_whole_words_only_and_other_spans_and_facts_are_left_alone() -> None:
    text = "Okello seen. Okello2 ran. Okello Road. Okello."
    road = text.index("Okello Road")
    spans = [
        Span(0, 6, PATIENT, "tagger.x", 0.9),
        Span(road, road + 11, Category.LOCATION_ADDRESS, "tagger.x", 0.9),
    ]
    last = text.rindex("Okello")
    fact = Span(last, last + 6, Fact.DIAGNOSIS, "facts.x", 1.0)
    assert propagate_names(text, spans, [fact], lang="en") == tuple(spans)
    out = propagate_names(text, spans, lang="en")
    assert shown(text, out)[-1] == ("Okello", PATIENT, SOURCE)


def test_the_pipeline_carries_names_and_keeps_facts_protected() -> None:
    text = "Seen by Parkinson today. Enfermedad de Parkinson. Parkinson left."
    name = Span(8, 17, OTHER, "tagger.x", 0.9)
    disease = text.index("Enfermedad")
    fact = Span(disease, disease + 24, Fact.DIAGNOSIS, "facts.eponyms.v1", 1.0)
    out = Pipeline([FakeDetector([name, fact])]).detect(Segment(text, lang="es"))
    assert [(text[s.start : s.end], s.start) for s in out] == [
        ("Parkinson", 8),
        ("Parkinson", text.rindex("Parkinson")),
    ]


def test_a_baseline_pipeline_runs_without_polydeids_segment_steps() -> None:
    text = "Patient name: Amina. Amina left."
    found = FakeDetector([Span(14, 19, OTHER, "backend.x", 0.9)])
    assert [s.label for s in Pipeline([found]).detect(Segment(text, lang="en"))] == [PATIENT] * 2
    as_is = Pipeline([found], segment_steps=False).detect(Segment(text, lang="en"))
    assert [(s.start, s.label) for s in as_is] == [(14, OTHER)]
