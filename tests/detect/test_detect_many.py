"""Several segments detected together (``Pipeline.detect_many``, ``Deidentifier.detect_many``
and ``redact_many``, the CLI's JSONL records): the same spans as one segment at a time."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from polydeid import cli
from polydeid.api import Deidentifier
from polydeid.core.errors import PolydeidError, UnknownLanguageError
from polydeid.core.segments import Segment, Stretch
from polydeid.core.spans import Span
from polydeid.detect.pipeline import SEGMENT_CHARS

_NOTES = [
    ("en", "Patient name: Zebedee Quartermain, MRN 4482913, seen 12 March 2024, tel 0772 123 456."),
    ("sw", "Mgonjwa alipiga simu +254 712 345 678 tarehe 5 Machi 2024; barua pepe x@ex.org."),
    ("de", "Frau Dr. Müller, geb. 03.04.1950, wohnhaft in Köln, Tel. 0221 4711 0815."),
    ("en", "MRN 4482\u200b913, call 0\u200b772 123 456 or john[at]example[.]com"),  # read forms
    ("en", ""),
    ("es", "Paciente de 45 años, DNI 12345678Z, ingresa el 3 de mayo de 2023 en Sevilla."),
]


def _segments() -> list[Segment]:
    segments = [Segment(text, lang=lang) for lang, text in _NOTES]
    en, sw = "Patient name: Zebedee Quartermain. ", "Mgonjwa Achieng' Otieno, miaka 45."
    mixed = Segment(
        en + sw,
        lang="en",
        stretches=(Stretch(0, len(en), "en"), Stretch(len(en), len(en + sw), "sw")),
    )
    long = Segment((_NOTES[0][1] + "\n") * (SEGMENT_CHARS // len(_NOTES[0][1]) + 5), lang="en")
    assert len(long.text) > SEGMENT_CHARS  # read in windows, as detect reads it
    return [*segments[:3], mixed, long, *segments[3:]]


@pytest.fixture(scope="module")
def rules() -> Deidentifier:
    return Deidentifier(profile="rules")


def test_segments_detected_together_get_the_spans_each_gets_alone(rules: Deidentifier) -> None:
    segments = _segments()
    together = rules.detect_many(segments)
    alone = [rules.detect_segment(s) for s in segments]
    assert together == alone
    assert sum(map(len, together)) > 20  # the sample has identifiers of every kind
    assert rules.detect_many([]) == []


def test_a_segment_detect_refuses_makes_the_call_refuse(rules: Deidentifier) -> None:
    with pytest.raises(UnknownLanguageError):
        rules.detect_many([Segment("Patient name: Zebedee.", lang="en"), Segment("x", lang="xx")])


def test_redact_many_replaces_as_redact_segment_does(tmp_path: Path) -> None:
    key = b"k" * 32
    together = Deidentifier(profile="rules", policy="surrogate", key=key)
    alone = Deidentifier(profile="rules", policy="surrogate", key=key)
    segments = _segments()
    ids = [f"doc{k}" for k in range(len(segments))]
    patients = ["p1", "p2", None, "p1", None, "p2", "p3", None]
    results = together.redact_many(segments, document_ids=ids, patient_ids=patients)
    expected = [
        alone.redact_segment(s, document_id=d, patient_id=p)
        for s, d, p in zip(segments, ids, patients, strict=True)
    ]
    assert [r.text for r in results] == [r.text for r in expected]
    assert [r.replacements for r in results] == [r.replacements for r in expected]
    with pytest.raises(ValueError, match="one document id"):
        together.redact_many(segments, document_ids=ids[:2])


def _jsonl(tmp_path: Path) -> Path:
    lines = []
    for k in range(cli.BATCH_RECORDS + 9):  # more than one group of records
        lang, text = _NOTES[k % len(_NOTES)]
        lines.append(json.dumps({"id": k, "lang": lang, "text": text}))
        if k == 3:
            lines.append("{not json")  # a line that is no record: its error keeps its place
        if k == 40:
            lines.append(json.dumps({"id": "bad", "lang": "xx", "text": "Zebedee"}))
    path = tmp_path / "notes.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("command", ["redact", "detect"])
def test_jsonl_records_detected_together_come_out_as_one_by_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    source = _jsonl(tmp_path)
    records = cli.BATCH_RECORDS + 9
    argv = [command, str(source), "--profile", "rules"]
    calls: list[int] = []
    detect_many = Deidentifier.detect_many

    def counted(self: Deidentifier, segments: list[Segment]) -> list[tuple[Span, ...]]:
        calls.append(len(segments))
        return detect_many(self, segments)

    monkeypatch.setattr(Deidentifier, "detect_many", counted)
    assert cli.main([*argv, "--output", str(tmp_path / "together.jsonl")]) == 1
    # 64 lines a group; the first holds the broken line and the refused record
    assert calls == [cli.BATCH_RECORDS - 2, records + 2 - cli.BATCH_RECORDS]
    monkeypatch.setattr(cli, "BATCH_RECORDS", 1)
    assert cli.main([*argv, "--output", str(tmp_path / "alone.jsonl")]) == 1
    together = (tmp_path / "together.jsonl").read_text("utf-8")
    assert together == (tmp_path / "alone.jsonl").read_text("utf-8")
    rows = [json.loads(line) for line in together.splitlines()]
    assert len(rows) == records + 2
    assert "error" in rows[4] and rows[4]["line"] == 5  # the broken line, in its place
    assert rows[42]["error"]["code"] and rows[42]["id"] == "bad"


def test_records_that_fail_together_are_detected_one_by_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = _jsonl(tmp_path)
    argv = ["redact", str(source), "--profile", "rules"]
    assert cli.main([*argv, "--output", str(tmp_path / "together.jsonl")]) == 1

    def refuse(self: Deidentifier, segments: list[Segment]) -> list[tuple[()]]:
        raise PolydeidError("one of them fails")

    monkeypatch.setattr(Deidentifier, "detect_many", refuse)
    assert cli.main([*argv, "--output", str(tmp_path / "alone.jsonl")]) == 1
    assert (tmp_path / "together.jsonl").read_bytes() == (tmp_path / "alone.jsonl").read_bytes()
