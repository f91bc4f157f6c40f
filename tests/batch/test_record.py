"""The record-level job shared by the batch runner, Spark and the service."""

from __future__ import annotations

import pickle

import pytest

from polydeid.batch.record import (
    JobConfig,
    build_deidentifier,
    redact_record,
    redact_record_labelled,
)
from polydeid.core.errors import RecordError


@pytest.fixture(scope="module")
def job():
    config = JobConfig(profile="rules", keep=("ward",))
    return config, build_deidentifier(config)


def test_output_keeps_id_language_text_and_only_named_fields(job):
    config, deid = job
    out, labels = redact_record_labelled(
        deid,
        {"id": 7, "lang": "sw", "text": "Simu 0772 123456", "ward": "B", "nok": "x"},
        config,
        location="in.jsonl:1",
    )
    assert out == {"id": 7, "lang": "sw", "ward": "B", "text": "Simu [CONTACT_PHONE]"}
    assert labels == ["CONTACT_PHONE"]


def test_default_language_and_custom_fields():
    config = JobConfig(profile="rules", lang="de", text_field="note", id_field="nr")
    deid = build_deidentifier(config)
    out = redact_record(deid, {"nr": "a1", "note": "Tel. 030 1234567"}, config, location="x")
    assert out == {"nr": "a1", "lang": "de", "note": "Tel. [CONTACT_PHONE]"}


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ({"id": 1}, "needs a string field 'text'"),
        ({"id": 1, "text": 5}, "needs a string field 'text'"),
        ({"id": [1], "text": "a"}, "must be a string or an integer"),
        ({"id": True, "text": "a"}, "must be a string or an integer"),
        ({"text": "a", "lang": 3}, "must be a string"),
        ({"text": "a", "lang": "xx-unknown"}, "unknown or unsupported language"),
    ],
    ids=range(6),
)
def test_bad_records_raise_located_errors_without_text(job, record, message):
    config, deid = job
    with pytest.raises(Exception) as info:
        redact_record(deid, record, config, location="in.jsonl:9")
    assert message in str(info.value)
    if isinstance(info.value, RecordError):
        assert info.value.location == "in.jsonl:9"


def test_config_is_picklable_for_workers():
    config = JobConfig(profile="rules", countries=("UG",), keep=("a",))
    assert pickle.loads(pickle.dumps(config)) == config


def test_lang_auto_reads_a_mixed_record_part_by_part() -> None:
    # An English record with a Kiswahili sentence: its date in Kiswahili words is found with
    # the Kiswahili rules.
    text = (
        "The patient was seen in the outpatient clinic today with fever and cough.\n"
        "Mgonjwa atarudi kliniki tarehe 5 Machi 2025 kwa uchunguzi zaidi."
    )
    config = JobConfig(profile="rules", lang="auto")
    deid = build_deidentifier(config)
    out = redact_record(deid, {"id": 1, "text": text}, config, location="x")
    assert "tarehe [DATE] kwa" in out["text"]
    named = JobConfig(profile="rules", lang="en")
    assert "5 Machi" in redact_record(deid, {"id": 1, "text": text}, named, location="x")["text"]


def test_records_redacted_together_come_out_as_one_by_one(job):
    """``redact_records`` detects the records together: the outputs and the errors of one by
    one, in order."""
    from polydeid.batch.record import redact_records
    from polydeid.core.errors import PolydeidError

    config, deid = job
    records = [
        ({"id": 1, "lang": "sw", "text": "Simu 0772 123456", "ward": "B"}, "in:1"),
        ({"id": 2, "text": 5}, "in:2"),  # no text: a record error in its place
        ({"id": 3, "lang": "en", "text": "Patient name: Zebedee Quartermain, MRN 4482913"}, "in:3"),
        ({"id": 4, "lang": "xx", "text": "x"}, "in:4"),
        ({"id": 5, "lang": "de", "text": "Tel. 030 1234567, geb. 03.04.1950"}, "in:5"),
    ]
    together = redact_records(deid, records, config)
    for (record, location), got in zip(records, together, strict=True):
        try:
            expected = redact_record_labelled(deid, record, config, location=location)
        except PolydeidError as exc:
            assert isinstance(got, type(exc)) and str(got) == str(exc)
        else:
            assert got == expected
    assert sum(isinstance(g, Exception) for g in together) == 2


def test_spark_rows_detected_together_get_the_spans_each_gets_alone(job, monkeypatch):
    """Spark's detection reads rows together (``_detect_records``): each row's spans as
    detected alone, a bad row's error in its place, and one by one where the group fails."""
    from polydeid.api import Deidentifier
    from polydeid.core.errors import PolydeidError
    from polydeid.core.segments import Segment
    from polydeid.spark import _detect_records

    config, deid = job
    rows = [
        ({"text": "Simu 0772 123456", "lang": "sw"}, "r1"),
        ({"text": None}, "r2"),
        ({"text": "Patient name: Zebedee Quartermain, MRN 4482913", "lang": "en"}, "r3"),
        ({"text": "x", "lang": "xx"}, "r4"),
        ({"text": "Tel. 030 1234567, geb. 03.04.1950", "lang": "de"}, "r5"),
    ]

    def alone(record: dict, location: str) -> list[dict] | type:
        try:
            segment = Segment(record["text"], lang=record["lang"], countries=config.countries)
            spans = deid.detect_segment(segment)
        except (PolydeidError, KeyError, TypeError):
            return Exception
        return [
            {"start": s.start, "end": s.end, "label": s.label.value, "score": s.score}
            for s in spans
        ]

    def comparable(got: object) -> object:
        if isinstance(got, Exception):
            return Exception
        return [{k: v for k, v in span.items() if k != "source"} for span in got]

    expected = [alone(record, location) for record, location in rows]
    calls: list[int] = []
    together = Deidentifier.detect_many

    def counted(self: Deidentifier, segments: list) -> list:
        calls.append(len(segments))
        return together(self, segments)

    monkeypatch.setattr(Deidentifier, "detect_many", counted)
    assert [comparable(g) for g in _detect_records(deid, rows, config)] == expected
    assert calls == [3]  # the three readable rows, together

    def refuse(self: Deidentifier, segments: list) -> list:
        raise PolydeidError("the group fails")

    monkeypatch.setattr(Deidentifier, "detect_many", refuse)
    assert [comparable(g) for g in _detect_records(deid, rows, config)] == expected
