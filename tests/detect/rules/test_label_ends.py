"""The labelled-value rules share one reading of a text's label ends (labelled.label_ends)."""

from __future__ import annotations

import pytest

from polydeid.core.errors import RuleTimeoutError
from polydeid.core.segments import Segment
from polydeid.detect.rules import labelled
from polydeid.detect.rules.demographics import LabelledDemographicRule
from polydeid.detect.rules.labelled import label_ends
from polydeid.detect.rules.names import LabelledNameRule
from polydeid.text.memo import shared_reading


def test_label_ends_are_read_once_per_shared_reading() -> None:
    text = "Nombre: Ana\nOcupación: maestra\nstatus: ok"
    with shared_reading():
        first = label_ends(Segment(text, lang="es"), "rules.names.v1")
        assert [(text[a:b], word) for a, b, word in first] == [
            (": ", "nombre"),
            (": ", "ocupación"),
            (": ", "status"),
        ]
        assert label_ends(Segment(text, lang="es"), "rules.demographics.v1") is first
    assert label_ends(Segment(text, lang="es"), "rules.names.v1") is not first


def test_the_rules_read_the_shared_ends() -> None:
    text = "Nombre: Ana Pérez\nOcupación: maestra"
    segment = Segment(text, lang="es")
    names = LabelledNameRule().detect(segment)
    jobs = LabelledDemographicRule().detect(segment)
    assert [text[s.start : s.end] for s in names] == ["Ana Pérez"]
    assert [text[s.start : s.end] for s in jobs] == ["maestra"]


def test_a_scan_past_its_limit_fails_closed_for_the_rule_that_reads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def too_slow(pattern: object, segment: Segment, rule_id: str) -> None:
        raise RuleTimeoutError(f"rule {rule_id} exceeded", location=str(segment.origin))

    monkeypatch.setattr(labelled, "guarded_finditer", too_slow)
    with shared_reading(), pytest.raises(RuleTimeoutError, match="demographics"):
        LabelledDemographicRule().detect(Segment("Kabila: Luo, an unseen text", lang="sw"))
