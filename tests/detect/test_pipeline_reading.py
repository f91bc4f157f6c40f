"""The pipeline runs every detector on the segment's reading and maps spans back."""

from __future__ import annotations

import re
from collections.abc import Iterable

from polydeid.core.segments import Segment, Stretch
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category, Fact
from polydeid.detect.pipeline import Pipeline

ZWSP = "\u200b"


class DigitRuns:
    """Finds runs of five digits or more, and records the texts it was given."""

    id = "test.digits.v1"
    labels: frozenset[Category | Fact] = frozenset({Category.ID_RECORD})

    def __init__(self, languages: Iterable[str] = ()) -> None:
        self.languages = frozenset(languages)
        self.seen: list[tuple[str, str]] = []

    def detect(self, segment: Segment) -> list[Span]:
        self.seen.append((segment.lang, segment.text))
        return [
            Span(m.start(), m.end(), Category.ID_RECORD, self.id)
            for m in re.finditer(r"[0-9]{5,}", segment.text)
        ]


def test_detectors_see_the_reading_and_spans_cover_the_original() -> None:
    detector = DigitRuns()
    text = f"{ZWSP}MRN ４４８２{ZWSP}913{ZWSP}, ward 7."
    spans = Pipeline([detector], segment_steps=False).detect(Segment(text, lang="en"))
    assert detector.seen == [("en", "MRN 4482913, ward 7.")]
    assert [(s.start, s.end) for s in spans] == [(5, 13)]
    assert text[5:13] == f"４４８２{ZWSP}913"


def test_candidates_and_facts_are_over_the_original() -> None:
    text = f"MRN 4482{ZWSP}913"
    candidates = Pipeline([DigitRuns()]).candidates(Segment(text, lang="en"))
    assert [(s.start, s.end) for s in candidates] == [(4, len(text))]


def test_stretches_move_with_the_reading() -> None:
    en, sw = f"Call MRN 4482{ZWSP}913. ", f"Namba {ZWSP}{ZWSP}5512{ZWSP}309."
    text = en + sw
    segment = Segment(
        text,
        lang="en",
        stretches=(Stretch(0, len(en), "en"), Stretch(len(en), len(text), "sw")),
    )
    english, swahili = DigitRuns(["en"]), DigitRuns(["sw"])
    spans = Pipeline([english, swahili], segment_steps=False).detect(segment)
    assert english.seen == [("en", "Call MRN 4482913. ")]
    assert swahili.seen == [("sw", "Namba 5512309.")]
    assert [text[s.start : s.end] for s in spans] == [f"4482{ZWSP}913", f"5512{ZWSP}309"]


def test_a_plain_segment_is_read_as_it_is() -> None:
    detector = DigitRuns()
    segment = Segment("MRN 4482913, Müller, ٤٤٨٢٩١٣", lang="en")
    Pipeline([detector]).detect(segment)
    assert detector.seen == [("en", "MRN 4482913, Müller, 4482913")]
    detector.seen.clear()
    plain = Segment("MRN 4482913, Müller.", lang="en")
    Pipeline([detector]).detect(plain)
    assert detector.seen[0][1] is plain.text
