"""Mixed-language records end to end: ``polydeid redact --lang auto`` and
``Deidentifier().redact(text, lang="auto")`` leave no identifier in records that switch between
English and Kiswahili or Luganda (tests/fixtures/mixed_language: invented people, fictional
numbers). The language of each part is tested in tests/detect/test_langid_stretches.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import regex

from polydeid import Deidentifier
from polydeid.cli import main

RECORDS = json.loads(
    (Path(__file__).parent / "fixtures" / "mixed_language" / "records.json").read_text("utf-8")
)["records"]
_TOKEN = regex.compile(r"[\p{L}\p{N}]+")
#: The records mixing English with Kiswahili or Luganda.
EAST_AFRICAN = [
    r for r in RECORDS if {lang for lang, _ in r["sentences"]} in ({"en", "sw"}, {"en", "lg"})
]


def _text(record: dict) -> str:
    return record["join"].join(s for _, s in record["sentences"])


def _left(record: dict, output: str, values: list[str] | None = None) -> list[int]:
    """Indices (never the values) of the record's identifiers of which any part (a word or a
    group of three or more digits: ``617`` of a phone number's area code) is still in
    ``output``; an e-mail address counts when whole (its parts are common words)."""
    values = record["identifiers"] if values is None else values
    words = set(_TOKEN.findall(output))
    return [
        k
        for k, value in enumerate(values)
        if (
            value in output
            if "@" in value
            else any(len(p) >= 3 and p in words for p in _TOKEN.findall(value))
        )
    ]


def test_the_fixture_mixes_both_east_african_languages_with_english() -> None:
    pairs = {frozenset(lang for lang, _ in r["sentences"]) for r in EAST_AFRICAN}
    assert pairs == {frozenset({"en", "sw"}), frozenset({"en", "lg"})}


@pytest.mark.torch
def test_redact_lang_auto_cli_leaves_no_identifier(tmp_path: Path) -> None:
    src = tmp_path / "mixed.jsonl"
    src.write_text(
        "".join(json.dumps({"id": r["id"], "text": _text(r)}) + "\n" for r in EAST_AFRICAN),
        "utf-8",
    )
    out = tmp_path / "out.jsonl"
    assert main(["redact", str(src), "-o", str(out), "--lang", "auto"]) == 0
    rows = {row["id"]: row for row in map(json.loads, out.read_text("utf-8").splitlines())}
    for record in EAST_AFRICAN:
        row = rows[record["id"]]
        assert row["lang"] in {"en", "sw", "lg"}
        assert _left(record, row["text"]) == [], record["id"]


@pytest.mark.torch
def test_redact_lang_auto_api_leaves_no_identifier() -> None:
    deid = Deidentifier()
    for record in EAST_AFRICAN:
        assert _left(record, deid.redact(_text(record), lang="auto")) == [], record["id"]


def test_redact_lang_auto_text_file_with_the_rule_layer(tmp_path: Path) -> None:
    # The fixed-format identifiers (dates, phones of every country, e-mail) of every mixed
    # record, through the CLI's plain-text path.
    for record in RECORDS:
        src = tmp_path / f"{record['id']}.txt"
        src.write_text(_text(record), "utf-8")
        out = tmp_path / f"{record['id']}.out.txt"
        argv = ["redact", str(src), "-o", str(out), "--lang", "auto", "--profile", "rules"]
        assert main(argv) == 0
        output = out.read_text("utf-8")
        fixed = [v for v in record["identifiers"] if any(c.isdigit() for c in v) or "@" in v]
        assert _left(record, output, fixed) == [], record["id"]


# A structured document whose free text switches language: with --lang auto each sentence is
# read in its own language, so a Kiswahili date in an English note is found; a named language
# reads the whole document in that language.
_MIXED_NOTE = (
    "Patient seen in the outpatient clinic today with fever and cough for three days. "
    "Mgonjwa alionekana kliniki tarehe 5 Machi 2024 akiwa na homa kali. "
    "Plan: review in one week with the results of the blood count."
)


def test_a_csv_document_switching_language_is_read_part_by_part(tmp_path: Path) -> None:
    src = tmp_path / "notes.csv"
    src.write_text('id,notes\n1,"' + _MIXED_NOTE + '"\n', "utf-8")
    out = tmp_path / "out.csv"
    argv = ["redact", str(src), "-o", str(out), "--format", "csv", "--profile", "rules"]
    assert main([*argv, "--lang", "auto"]) == 0
    assert "2024" not in out.read_text("utf-8")
    assert "Mgonjwa alionekana kliniki tarehe [DATE]" in out.read_text("utf-8")
    assert main([*argv, "--lang", "en"]) == 0
    assert "2024" in out.read_text("utf-8")


def test_the_api_reads_a_mixed_document_with_lang_auto() -> None:
    doc = {"resourceType": "Observation", "status": "final", "note": [{"text": _MIXED_NOTE}]}
    deid = Deidentifier(profile="rules")
    found = deid.detect_document(doc, format="fhir", lang="auto")
    assert [fs.span.label.value for fs in found] == ["DATE"]
    redacted = deid.redact_document(json.dumps(doc), format="fhir", lang="auto")
    assert "2024" not in redacted.output
