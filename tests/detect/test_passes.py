"""Named passes: listed once, documented, switched off by id (polydeid.detect.passes)."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

import pytest

from polydeid import Deidentifier
from polydeid.core.errors import ConfigError
from polydeid.core.segments import Segment
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category
from polydeid.detect.passes import SEGMENT_PASSES, SpanPass, Stage, passes_version
from polydeid.detect.pipeline import Pipeline
from polydeid.detect.tagger.decode import DECODER_VERSION, decode, decoder_passes
from polydeid.detect.tagger.decoder_passes import DECODER_PASSES
from polydeid.testing import FakeDetector

ARCHITECTURE = Path(__file__).resolve().parents[2] / "ARCHITECTURE.md"
ALL = (*SEGMENT_PASSES, *DECODER_PASSES)


def test_pass_ids_are_unique_and_each_is_documented() -> None:
    ids = [p.id for p in ALL]
    assert len(ids) == len(set(ids))
    page = ARCHITECTURE.read_text("utf-8")
    assert [p for p in ids if f"`{p}`" not in page] == []
    assert all(p.summary and not p.summary.endswith(".") for p in ALL)
    assert {p.stage for p in SEGMENT_PASSES} == {Stage.SEGMENT}
    assert Stage.SEGMENT not in {p.stage for p in DECODER_PASSES}


def test_an_unknown_pass_is_refused_with_the_known_ones() -> None:
    with pytest.raises(ConfigError) as info:
        Pipeline([FakeDetector([])], disabled_passes={"names.cary"})
    assert "names.cary" in str(info.value) and "names.carry" in str(info.value)
    with pytest.raises(ConfigError):
        decoder_passes({"decode.nothing"})
    # a decoder pass is known to a pipeline without the tagger: one ablation serves every system
    assert Pipeline([FakeDetector([])], disabled_passes={"decode.edges"}).passes == SEGMENT_PASSES


def test_a_segment_pass_switched_off_leaves_its_work_undone() -> None:
    text = "Amina Wanjiru seen today. Wanjiru walked in."
    found = FakeDetector([Span(0, 13, Category.PERSON, "fake", 0.9)])
    segment = Segment(text, lang="sw")
    carried = Pipeline([found]).detect(segment)
    assert [text[s.start : s.end] for s in carried] == ["Amina Wanjiru", "Wanjiru"]
    plain = Pipeline([found], disabled_passes={"names.carry"}).detect(segment)
    assert [text[s.start : s.end] for s in plain] == ["Amina Wanjiru"]
    deid = Deidentifier(detectors=[found], disabled_passes={"names.carry"})
    assert [text[s.start : s.end] for s in deid.detect(text, lang="sw")] == ["Amina Wanjiru"]


class _WithPasses(FakeDetector):
    """A detector that has passes of its own, as the tagger has its decoder's."""

    passes = (SpanPass("fake.step", Stage.SPANS, lambda ctx, spans: spans, "does nothing"),)

    def __init__(self, *args: object, off: Collection[str] = (), **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.off = frozenset(off)

    def without_passes(self, disabled: Collection[str]) -> _WithPasses:
        return _WithPasses([], off=set(disabled) & {"fake.step"})


def test_a_detectors_own_pass_is_switched_off_through_the_pipeline() -> None:
    pipeline = Pipeline([_WithPasses([])], disabled_passes={"fake.step", "roles.labels"})
    (detector,) = pipeline.detectors
    assert isinstance(detector, _WithPasses) and detector.off == {"fake.step"}
    assert [p.id for p in pipeline.passes] == [
        p.id for p in SEGMENT_PASSES if p.id != "roles.labels"
    ]


def _probs(tag: str) -> list[float]:
    from polydeid.detect.tagger.windows import TAG_INDEX, TAGS

    row = [0.0] * len(TAGS)
    row[TAG_INDEX[tag]] = 0.9
    row[TAG_INDEX["O"]] += 0.1
    return row


def test_a_decoder_pass_switched_off_leaves_its_work_undone() -> None:
    text = "Stephen Sang came"
    grid = [(0, 7), (8, 12), (13, 17)]
    probs = [_probs("B-PERSON"), _probs("B-PERSON_THIRD_PARTY"), _probs("O")]
    joined = decode(text, grid, probs, {})
    assert [(text[s.start : s.end], s.label) for s in joined] == [("Stephen Sang", Category.PERSON)]
    apart = decode(text, grid, probs, {}, passes=decoder_passes({"decode.adjacent_names"}))
    assert [text[s.start : s.end] for s in apart] == ["Stephen", "Sang"]


def test_the_decoder_version_is_derived_from_its_passes() -> None:
    assert passes_version(DECODER_PASSES) == DECODER_VERSION
    bumped = [
        SpanPass(p.id, p.stage, p.run, p.summary, p.version + (p.id == "decode.edges"))
        for p in DECODER_PASSES
    ]
    assert passes_version(bumped) != DECODER_VERSION
    assert passes_version(DECODER_PASSES[1:]) != DECODER_VERSION
