"""Tests of the corpus validator: structure, offsets, labels, language, duplicates, diversity."""

from __future__ import annotations

import json
import random
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from polydeid.core.errors import DetectorUnavailableError
from polydeid.corpora.jsonl import read_jsonl_corpus
from polydeid.synth import validate as validate_module
from polydeid.synth.validate import (
    Issue,
    ValidationReport,
    identifiable_languages,
    validate_corpus,
    validate_jsonl,
)

FIXTURES = Path(__file__).parent / "fixtures"
CLEAN = FIXTURES / "validate_clean.jsonl"
CORRUPT = FIXTURES / "validate_corrupt.jsonl"

_MARK = re.compile(r"\[\[([A-Z_]+)\|([^\]]+)\]\]")


def record(
    marked: str,
    *,
    id: str = "r1",
    lang: str = "en",
    meta: dict[str, Any] | None = None,
    facts: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A JSONL record from text marked up as ``[[LABEL|covered text]]``."""
    parts: list[str] = []
    spans: list[dict[str, Any]] = []
    pos = 0
    for m in _MARK.finditer(marked):
        parts.append(marked[pos : m.start()])
        start = len("".join(parts))
        covered = m.group(2)
        spans.append({"start": start, "end": start + len(covered), "label": m.group(1)})
        parts.append(covered)
        pos = m.end()
    parts.append(marked[pos:])
    data: dict[str, Any] = {"id": id, "text": "".join(parts), "lang": lang, "spans": spans}
    if meta is not None:
        data["meta"] = meta
    if facts is not None:
        data["facts"] = facts
    return data


def write(tmp_path: Path, records: Sequence[dict[str, Any] | str], name: str = "c.jsonl") -> Path:
    path = tmp_path / name
    lines = [r if isinstance(r, str) else json.dumps(r, ensure_ascii=False) for r in records]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def codes(issues: Sequence[Issue]) -> set[str]:
    return {i.code for i in issues}


def line_of(issue: Issue) -> int:
    found = re.search(r"\.jsonl:(\d+)", issue.location)
    assert found is not None, "issue not located at file:line"
    return int(found[1])


def all_messages(report: ValidationReport) -> list[str]:
    return [f"{i.location} {i.message}" for i in (*report.errors, *report.warnings)]


def assert_no_text_leak(report: ValidationReport, path: Path) -> None:
    """No span text and no three-word run of any document text appears in any issue."""
    messages = [*all_messages(report), report.to_markdown(), json.dumps(report.to_dict())]
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            data = json.loads(line)
        except json.JSONDecodeError:
            continue
        text = data["text"]
        covered = [text[s["start"] : s["end"]] for s in data["spans"] if s["end"] <= len(text)]
        covered += [s["text"] for s in data["spans"] if "text" in s]
        words = text.split()
        runs = [" ".join(words[i : i + 3]) for i in range(len(words) - 2)]
        for needle in [c for c in covered if len(c.strip()) >= 3] + runs:
            assert not any(needle in m for m in messages), "document text in a message"


# --------------------------------------------------------------------------------------------
# The fixtures


def test_clean_corpus_passes() -> None:
    report = validate_jsonl(CLEAN)
    assert report.ok
    assert report.errors == () and report.warnings == ()
    assert report.documents == 7
    assert set(report.diversity) == {"de", "en", "luo", "sw"}
    assert report.diversity["luo"].language.unverifiable == 1
    assert report.diversity["sw"].language.verified == 1
    assert report.diversity["en"].language.verified == 4


EXPECTED_CORRUPT = {
    (2, "BAD_JSON"),
    (3, "OFFSET_OUT_OF_RANGE"),
    (4, "SPAN_TEXT_MISMATCH"),
    (5, "UNKNOWN_LABEL"),
    (6, "FACT_LABELLED_IDENTIFIER"),
    (7, "TIME_LABELLED"),
    (8, "EXACT_DUPLICATE"),
    (9, "NEAR_DUPLICATE"),
    (10, "LANG_MISMATCH"),
}


def test_corrupt_corpus_is_rejected_with_each_error_at_its_line() -> None:
    report = validate_jsonl(CORRUPT)
    assert not report.ok
    assert {(line_of(e), e.code) for e in report.errors} == EXPECTED_CORRUPT
    assert all(e.location.startswith(str(CORRUPT)) for e in report.errors)
    assert [line_of(e) for e in report.errors] == sorted(line_of(e) for e in report.errors)


def test_duplicates_point_at_the_first_copy() -> None:
    report = validate_jsonl(CORRUPT)
    found = {e.code: e.message for e in report.errors}
    assert found["EXACT_DUPLICATE"].endswith(f"{CORRUPT}:1")
    assert f"{CORRUPT}:1 " in found["NEAR_DUPLICATE"]


@pytest.mark.parametrize("path", [CLEAN, CORRUPT], ids=["clean", "corrupt"])
def test_no_document_or_span_text_in_any_message(path: Path) -> None:
    assert_no_text_leak(validate_jsonl(path), path)


def test_validate_corpus_on_a_readers_output() -> None:
    corpus = read_jsonl_corpus(CORRUPT)
    report = validate_corpus(corpus)
    by_code = {e.code: e.location for e in report.errors}
    # the reader already refused lines 2, 3 and 5; they come back as located read failures
    assert by_code["READ_FAILURE"].startswith(str(CORRUPT))
    failure_lines = sorted(line_of(e) for e in report.errors if e.code == "READ_FAILURE")
    assert failure_lines == [2, 3, 5]
    assert by_code["FACT_LABELLED_IDENTIFIER"] == "doc c6"
    assert by_code["TIME_LABELLED"] == "doc c7"
    assert by_code["EXACT_DUPLICATE"] == "doc c8"
    assert by_code["NEAR_DUPLICATE"] == "doc c9"
    assert by_code["LANG_MISMATCH"] == "doc c10"
    assert "SPAN_TEXT_MISMATCH" not in by_code  # a reader's documents carry no span text


def test_validate_corpus_flags_duplicate_ids(tmp_path: Path) -> None:
    a = record("Patient [[PERSON|Ann Lee]] reviewed today on the ward.", id="x")
    b = record("Completely different words describe another admission here.", id="x")
    report = validate_corpus(read_jsonl_corpus(write(tmp_path, [a, b])), check_language=False)
    assert [e.code for e in report.errors] == ["DUPLICATE_ID"]


# --------------------------------------------------------------------------------------------
# Structure and offsets


def structure_errors(tmp_path: Path, line: dict[str, Any] | str, **kw: Any) -> set[str]:
    report = validate_jsonl(write(tmp_path, [line]), check_language=False, **kw)
    return codes(report.errors)


STRUCTURE_CASES = [
    ("not an object", "[1, 2]", {"NOT_OBJECT"}),
    ("no text", {"id": "a", "lang": "en", "spans": []}, {"MISSING_FIELD"}),
    ("text not a string", {"id": "a", "text": 3, "lang": "en", "spans": []}, {"BAD_TYPE"}),
    ("no spans", {"id": "a", "text": "Fever.", "lang": "en"}, {"MISSING_FIELD"}),
    ("no id", {"text": "Fever.", "lang": "en", "spans": []}, {"MISSING_FIELD"}),
    ("bool id", {"id": True, "text": "Fever.", "lang": "en", "spans": []}, {"BAD_TYPE"}),
    ("no lang", {"id": "a", "text": "Fever.", "spans": []}, {"MISSING_FIELD"}),
    (
        "unknown lang",
        {"id": "a", "text": "Fever.", "lang": "xx", "spans": []},
        {"UNKNOWN_LANGUAGE"},
    ),
    ("alias lang", {"id": "a", "text": "Fever.", "lang": "lug", "spans": []}, set()),
    ("span not object", {"id": "a", "text": "Fever.", "lang": "en", "spans": [3]}, {"BAD_TYPE"}),
    (
        "float offsets",
        {
            "id": "a",
            "text": "Fever.",
            "lang": "en",
            "spans": [{"start": 0.0, "end": 2, "label": "AGE"}],
        },
        {"BAD_OFFSETS"},
    ),
    (
        "bool offsets",
        {
            "id": "a",
            "text": "Fever.",
            "lang": "en",
            "spans": [{"start": False, "end": 2, "label": "AGE"}],
        },
        {"BAD_OFFSETS"},
    ),
    (
        "start equals end",
        {
            "id": "a",
            "text": "Fever 3.",
            "lang": "en",
            "spans": [{"start": 6, "end": 6, "label": "AGE"}],
        },
        {"BAD_OFFSETS"},
    ),
    (
        "negative start",
        {
            "id": "a",
            "text": "Fever 3.",
            "lang": "en",
            "spans": [{"start": -1, "end": 2, "label": "AGE"}],
        },
        {"OFFSET_OUT_OF_RANGE"},
    ),
    (
        "lower-case label",
        {
            "id": "a",
            "text": "Age 34.",
            "lang": "en",
            "spans": [{"start": 4, "end": 6, "label": "age"}],
        },
        {"UNKNOWN_LABEL"},
    ),
    (
        "fact kind as label",
        {
            "id": "a",
            "text": "Age 34.",
            "lang": "en",
            "spans": [{"start": 4, "end": 6, "label": "DOSE"}],
        },
        {"UNKNOWN_LABEL"},
    ),
    (
        "unknown fact kind",
        {
            "id": "a",
            "text": "Took 5 mg.",
            "lang": "en",
            "spans": [],
            "facts": [{"start": 5, "end": 9, "kind": "ALLERGY"}],
        },
        {"UNKNOWN_FACT_KIND"},
    ),
    (
        "known fact kind",
        {
            "id": "a",
            "text": "Took 5 mg.",
            "lang": "en",
            "spans": [],
            "facts": [{"start": 5, "end": 9, "kind": "DOSE"}],
        },
        set(),
    ),
    (
        "meta not an object",
        {"id": "a", "text": "Fever.", "lang": "en", "spans": [], "meta": []},
        {"BAD_META"},
    ),
    (
        "edge_cases not a list",
        {"id": "a", "text": "Fever.", "lang": "en", "spans": [], "meta": {"edge_cases": "x"}},
        {"BAD_META"},
    ),
    (
        "length not a string",
        {"id": "a", "text": "Fever.", "lang": "en", "spans": [], "meta": {"length": 3}},
        {"BAD_META"},
    ),
]


@pytest.mark.parametrize(
    ("line", "expected"),
    [(line, expected) for _, line, expected in STRUCTURE_CASES],
    ids=[label for label, _, _ in STRUCTURE_CASES],
)
def test_structure(tmp_path: Path, line: dict[str, Any] | str, expected: set[str]) -> None:
    raw = line if isinstance(line, str) else json.dumps(line)
    assert structure_errors(tmp_path, raw) == expected


def test_bad_utf8_is_located(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    good = json.dumps(record("Patient [[PERSON|Ann Lee]] seen today.")).encode()
    path.write_bytes(good + b"\n" + b'{"id": "b", "text": "\xff"}\n')
    report = validate_jsonl(path, check_language=False)
    assert [(line_of(e), e.code) for e in report.errors] == [(2, "BAD_UTF8")]


def test_blank_lines_keep_line_numbers(tmp_path: Path) -> None:
    good = record("Patient [[PERSON|Ann Lee]] seen today.")
    path = write(tmp_path, [good, "", "{oops"])
    report = validate_jsonl(path, check_language=False)
    assert [(line_of(e), e.code) for e in report.errors] == [(3, "BAD_JSON")]


def test_duplicate_span_is_an_error_and_overlap_a_warning(tmp_path: Path) -> None:
    line = record("Patient [[PERSON|Ann Lee]] seen today.")
    span = line["spans"][0]
    line["spans"] += [
        dict(span),
        {"start": span["start"] + 4, "end": span["end"], "label": "PERSON"},
    ]
    report = validate_jsonl(write(tmp_path, [line]), check_language=False)
    assert [e.code for e in report.errors] == ["DUPLICATE_SPAN"]
    assert "spans[1]" in report.errors[0].message
    assert codes(report.warnings) == {"OVERLAPPING_SPANS"}


def test_duplicate_id_across_lines(tmp_path: Path) -> None:
    a = record("Patient [[PERSON|Ann Lee]] reviewed today on the ward.", id="same")
    b = record("Completely different words describe another admission here.", id="same")
    report = validate_jsonl(write(tmp_path, [a, b]), check_language=False)
    assert [(line_of(e), e.code) for e in report.errors] == [(2, "DUPLICATE_ID")]


def test_span_text_given_and_equal_passes(tmp_path: Path) -> None:
    line = record("Patient [[PERSON|Ann Lee]] seen today.")
    line["spans"][0]["text"] = "Ann Lee"
    assert structure_errors(tmp_path, line) == set()


@pytest.mark.parametrize(
    ("marked", "code"),
    [
        ("Patient[[PERSON| Ann Lee]] seen.", "SPAN_BOUNDARY_SPACE"),
        ("Patient [[PERSON|Ann Lee ]]seen.", "SPAN_BOUNDARY_SPACE"),
        ("Patient [[PERSON|Ann Lee,]] seen.", "SPAN_BOUNDARY_PUNCT"),
        ("Patient [[PERSON|(Ann Lee]] seen.", "SPAN_BOUNDARY_PUNCT"),
        ("Patient [[PERSON|Ann Lee]] seen.", None),
    ],
    ids=["leading-space", "trailing-space", "trailing-comma", "leading-paren", "clean"],
)
def test_span_boundaries_are_warnings(tmp_path: Path, marked: str, code: str | None) -> None:
    report = validate_jsonl(write(tmp_path, [record(marked)]), check_language=False)
    assert report.ok
    assert codes(report.warnings) == ({code} if code else set())


def test_meta_axes(tmp_path: Path) -> None:
    meta = {"document_type": "clinic_note", "length": "huge", "colour": "red"}
    line = record("Patient [[PERSON|Ann Lee]] seen today.", meta=meta)
    path = write(tmp_path, [line])
    report = validate_jsonl(path, check_language=False, axes={"length": ["short", "long"]})
    assert [e.code for e in report.errors] == ["BAD_META"]
    assert "length" in report.errors[0].message
    assert [w.code for w in report.warnings] == ["UNKNOWN_META"]
    assert validate_jsonl(path, check_language=False).ok  # no allowed values given


# --------------------------------------------------------------------------------------------
# Per-label checks

LABEL_CASES = [
    # (id, lang, marked text, expected error code or None)
    (
        "dose-as-id",
        "en",
        "Given paracetamol [[ID_NATIONAL|500 mg]] orally.",
        "FACT_LABELLED_IDENTIFIER",
    ),
    ("vital-as-id", "en", "BP [[ID_OTHER|120/80]] mmHg on arrival.", "FACT_LABELLED_IDENTIFIER"),
    ("lab-as-name", "en", "Creatinine [[PERSON|86]] µmol/L today.", "FACT_LABELLED_IDENTIFIER"),
    (
        "lab-as-date",
        "en",
        "Haemoglobin [[DATE|12.5 g/dL]] on admission.",
        "FACT_LABELLED_IDENTIFIER",
    ),
    ("record-number-ok", "en", "MRN [[ID_RECORD|204518]] on file.", None),
    ("phone-ok", "en", "Tel [[CONTACT_PHONE|0772 123456]] for the mother.", None),
    ("time-as-date", "en", "Seen at [[DATE|14:30]] in clinic.", "TIME_LABELLED"),
    ("time-am-as-date", "en", "Seen at [[DATE|8 am]] in clinic.", "TIME_LABELLED"),
    ("time-pm-dots-as-id", "en", "Seen at [[ID_OTHER|8:15 p.m.]] in clinic.", "TIME_LABELLED"),
    ("time-h-as-date", "fr", "Vu à [[DATE|14h30]] en consultation.", "TIME_LABELLED"),
    ("date-time-ok", "en", "Seen on [[DATE|12/03/2024 14:30]] in clinic.", None),
    ("german-date-ok", "de", "Aufnahme am [[DATE|12.03.]] wegen Fieber.", None),
    ("title-alone-dot", "en", "Seen by [[PERSON_THIRD_PARTY|Dr.]] Okello.", "TITLE_ALONE"),
    ("title-alone", "en", "Seen by [[PERSON|Mr]] Okello.", "TITLE_ALONE"),
    ("title-alone-german", "de", "Gesehen von [[PERSON_THIRD_PARTY|Frau]] Weber.", "TITLE_ALONE"),
    ("title-with-name-ok", "en", "Seen by [[PERSON_THIRD_PARTY|Dr. Okello]] today.", None),
    ("age-word", "en", "The [[AGE|elderly]] woman was seen.", "AGE_NO_NUMBER"),
    ("age-digits-ok", "en", "A [[AGE|34-year-old]] woman was seen.", None),
    ("age-number-word-ok", "en", "Aged [[AGE|forty-two years]] at admission.", None),
    ("age-number-word-de-ok", "de", "Patientin, [[AGE|zweiundvierzig Jahre]] alt.", None),
    ("phone-short", "en", "Call [[CONTACT_PHONE|0772 12]] later.", "PHONE_TOO_FEW_DIGITS"),
    ("phone-intl-ok", "en", "Call [[CONTACT_PHONE|+256 772 123456]] later.", None),
    ("email-no-at", "en", "Write to [[CONTACT_OTHER|jane.doe gmail.com]] soon.", "EMAIL_NO_AT"),
    ("email-dot-word-no-at", "en", "Write to [[CONTACT_OTHER|jane dot doe]] soon.", "EMAIL_NO_AT"),
    ("email-ok", "en", "Write to [[CONTACT_OTHER|jane.doe@gmail.com]] soon.", None),
    (
        "email-obfuscated-ok",
        "en",
        "Write to [[CONTACT_OTHER|jane dot doe at gmail dot com]] soon.",
        None,
    ),
    ("url-ok", "en", "See [[CONTACT_OTHER|www.gmail.com]] for forms.", None),
    ("handle-ok", "en", "Tweets as [[CONTACT_OTHER|janedoe_77]] often.", None),
    ("date-relative", "en", "Admitted [[DATE|yesterday]] with fever.", "DATE_NO_DIGIT_OR_MONTH"),
    ("date-month-ok", "en", "Admitted in [[DATE|March]] with fever.", None),
    ("date-weekday-ok", "en", "Admitted on [[DATE|Monday]] with fever.", None),
    ("date-german-month-ok", "de", "Aufnahme [[DATE|Mitte März]] wegen Fieber.", None),
    ("date-swahili-month-ok", "sw", "Alifika [[DATE|mwezi Machi]] akiwa na homa.", None),
    ("date-chinese-month-ok", "zh", "患者于[[DATE|三月]]入院。", None),
]


@pytest.mark.parametrize(
    ("lang", "marked", "code"),
    [(lang, marked, code) for _, lang, marked, code in LABEL_CASES],
    ids=[case[0] for case in LABEL_CASES],
)
def test_label_checks(tmp_path: Path, lang: str, marked: str, code: str | None) -> None:
    path = write(tmp_path, [record(marked, lang=lang)])
    report = validate_jsonl(path, check_language=False)
    assert codes(report.errors) == ({code} if code else set())
    assert_no_text_leak(report, path)


def test_declared_fact_under_an_identifier(tmp_path: Path) -> None:
    line = record(
        "Took [[ID_OTHER|5 tabs]] daily.", facts=[{"start": 5, "end": 11, "kind": "QUANTITY"}]
    )
    assert structure_errors(tmp_path, line) == {"FACT_LABELLED_IDENTIFIER"}


def test_declared_fact_under_an_age(tmp_path: Path) -> None:
    line = record(
        "Unwell [[AGE|for 3 years]] now.", facts=[{"start": 7, "end": 18, "kind": "DURATION"}]
    )
    assert structure_errors(tmp_path, line) == {"IDENTIFIER_OVERLAPS_FACT"}


def test_an_age_next_to_a_duration_is_fine(tmp_path: Path) -> None:
    line = record("A [[AGE|34 years]] old man, cough for 3 years.")
    assert structure_errors(tmp_path, line) == set()


# --------------------------------------------------------------------------------------------
# Language

ENGLISH = "The patient was transferred to the surgical ward this afternoon for observation."
SWAHILI = "Mgonjwa alifika kliniki akiwa na homa na kikohozi, akapewa dawa na kushauriwa kurudi."


def language_report(tmp_path: Path, lines: Sequence[dict[str, Any]]) -> ValidationReport:
    return validate_jsonl(write(tmp_path, lines))


def test_english_declared_german_is_flagged(tmp_path: Path) -> None:
    report = language_report(tmp_path, [record(ENGLISH, lang="de")])
    assert [e.code for e in report.errors] == ["LANG_MISMATCH"]
    assert "'de'" in report.errors[0].message and "'en'" in report.errors[0].message
    assert report.diversity["de"].language.mismatched == 1


def test_matching_language_passes(tmp_path: Path) -> None:
    report = language_report(tmp_path, [record(ENGLISH), record(SWAHILI, id="b", lang="sw")])
    assert report.ok and not report.warnings
    assert report.diversity["sw"].language.verified == 1


def test_code_mixed_documents_are_tolerated(tmp_path: Path) -> None:
    meta = {"edge_cases": ["code_mixed"]}
    report = language_report(tmp_path, [record(ENGLISH, lang="sw", meta=meta)])
    assert report.ok and not report.warnings
    assert report.diversity["sw"].language.code_mixed == 1


def test_unknown_to_the_identifier_is_unverifiable(tmp_path: Path) -> None:
    assert "luo" not in identifiable_languages()
    assert {"en", "de", "sw"} <= identifiable_languages()
    report = language_report(tmp_path, [record(ENGLISH, lang="luo")])
    assert report.ok and not report.warnings
    assert report.diversity["luo"].language.unverifiable == 1


def test_short_text_is_unverifiable(tmp_path: Path) -> None:
    report = language_report(tmp_path, [record("Seen today, well.", lang="de")])
    assert report.ok
    assert report.diversity["de"].language.unverifiable == 1


def test_identifiers_are_masked_before_identification(tmp_path: Path) -> None:
    names = " ".join(f"[[PERSON|Wolfgang Müller-Lüdenscheidt {i}]]" for i in range(6))
    report = language_report(tmp_path, [record(f"{names} {ENGLISH}", lang="en")])
    assert report.ok and report.diversity["en"].language.verified == 1


# --------------------------------------------------------------------------------------------
# Duplicates

TEMPLATE = (
    "Discharge summary for {name}, admitted on {date} with community acquired pneumonia. "
    "Treated with ceftriaxone and discharged home in good condition after five days."
)


def test_two_fillings_of_one_template_are_near_duplicates(tmp_path: Path) -> None:
    a = record(TEMPLATE.format(name="[[PERSON|Ann Lee]]", date="[[DATE|3 May 2024]]"), id="a")
    b = record(TEMPLATE.format(name="[[PERSON|Bo Chan]]", date="[[DATE|9 June 2023]]"), id="b")
    report = validate_jsonl(write(tmp_path, [a, b]), check_language=False)
    assert [(line_of(e), e.code) for e in report.errors] == [(2, "NEAR_DUPLICATE")]


def test_fillings_with_different_surrounding_text_are_not(tmp_path: Path) -> None:
    a = record(TEMPLATE.format(name="[[PERSON|Ann Lee]]", date="[[DATE|3 May 2024]]"), id="a")
    other = (
        "Clinic review for {name} on {date}: blood pressure well controlled on amlodipine, "
        "no headaches or chest pain, continue the same dose and return in three months."
    )
    b = record(other.format(name="[[PERSON|Ann Lee]]", date="[[DATE|3 May 2024]]"), id="b")
    report = validate_jsonl(write(tmp_path, [a, b]), check_language=False)
    assert report.ok


def test_near_duplicate_threshold_is_configurable(tmp_path: Path) -> None:
    a = record(TEMPLATE.format(name="[[PERSON|Ann Lee]]", date="[[DATE|3 May 2024]]"), id="a")
    changed = TEMPLATE.replace("five days", "seven days")
    b = record(changed.format(name="[[PERSON|Bo Chan]]", date="[[DATE|9 June 2023]]"), id="b")
    path = write(tmp_path, [a, b])
    assert validate_jsonl(path, check_language=False).ok  # well below 0.9
    loose = validate_jsonl(path, check_language=False, near_duplicate_threshold=0.5)
    assert codes(loose.errors) == {"NEAR_DUPLICATE"}


def random_words(rng: random.Random, vocabulary: Sequence[str]) -> list[str]:
    return rng.choices(vocabulary, k=150)


def words_document(words: Sequence[str], index: int, name: str) -> dict[str, Any]:
    return record(" ".join(words) + f" [[PERSON|{name}]].", id=f"d{index}")


@pytest.mark.slow
def test_duplicate_search_scales_and_finds_the_planted_pair(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    compared = 0
    exact_jaccard = validate_module._jaccard

    def counting_jaccard(a: set[int], b: set[int]) -> float:
        nonlocal compared
        compared += 1
        return exact_jaccard(a, b)

    monkeypatch.setattr(validate_module, "_jaccard", counting_jaccard)
    rng = random.Random(7)
    vocabulary = [f"w{i}" for i in range(3000)]
    texts = [random_words(rng, vocabulary) for _ in range(1500)]
    lines = [words_document(words, i, f"Person{i}") for i, words in enumerate(texts)]
    # one word changed in the middle and another name: Jaccard (146-5)/(146+5) = 0.93
    changed = [*texts[1000][:75], "changed", *texts[1000][76:]]
    lines.append(words_document(changed, 1500, "Someone"))
    report = validate_jsonl(write(tmp_path, lines), check_language=False)
    dup = [e for e in report.errors if e.code == "NEAR_DUPLICATE"]
    assert [(line_of(e), e.message.split(" (")[0].rsplit(":", 1)[1]) for e in dup] == [
        (1501, "1001")
    ]
    assert codes(report.errors) == {"NEAR_DUPLICATE"}
    assert compared < 30, "only LSH candidates are compared, not all pairs"


# --------------------------------------------------------------------------------------------
# Diversity


def test_diversity_numbers_on_a_hand_made_example(tmp_path: Path) -> None:
    meta_a = {
        "document_type": "clinic_note",
        "length": "short",
        "edge_cases": ["ocr"],
        "template": "t1",
    }
    meta_b = {
        "document_type": "discharge_summary",
        "length": "short",
        "edge_cases": [],
        "template": "t1",
    }
    a = record("[[PERSON|Ann Lee]] has fever. Temp 38. [[PERSON|Ann Lee]] has cough.", meta=meta_a)
    b = record("[[PERSON|Bo Lee]] has fever. Temp 39.", id="b", meta=meta_b)
    report = validate_jsonl(write(tmp_path, [a, b]), check_language=False)
    assert report.ok
    d = report.diversity["en"]
    assert d.documents == 2
    assert dict(d.spans) == {"PERSON": 3}
    assert d.templates == 1
    # sentences: "<PERSON> has fever." ×2, "Temp 00." ×2, "<PERSON> has cough."
    assert (d.sentences, d.sentence_shapes) == (5, 3)
    # tokens A: <PERSON> has fever temp 38 <PERSON> has cough; B: <PERSON> has fever temp 39
    assert d.distinct_n == pytest.approx((7 / 13, 7 / 11, 7 / 9))
    # name tokens: ann lee ann lee bo lee
    assert (d.name_tokens, d.distinct_name_tokens) == (6, 3)
    assert dict(d.axes["document_type"]) == {"clinic_note": 1, "discharge_summary": 1}
    assert dict(d.axes["length"]) == {"short": 2}
    assert dict(d.axes["edge_cases"]) == {"ocr": 1}
    assert "text_format" not in d.axes


def test_report_serialises(tmp_path: Path) -> None:
    report = validate_jsonl(CORRUPT)
    data = json.loads(json.dumps(report.to_dict()))
    assert data["ok"] is False and data["documents"] == report.documents
    assert {e["code"] for e in data["errors"]} == {code for _, code in EXPECTED_CORRUPT}
    assert data["diversity"]["en"]["distinct_1"] == round(report.diversity["en"].distinct_n[0], 4)
    markdown = validate_jsonl(CLEAN).to_markdown()
    assert "| lang | docs | spans |" in markdown
    for lang in ("de", "en", "luo", "sw"):
        assert f"### {lang}" in markdown and f"\n| {lang} | " in markdown
    assert "0 errors" in markdown and "OK." in markdown
    assert "NOT OK" in report.to_markdown()


def test_report_is_frozen() -> None:
    report = validate_jsonl(CLEAN)
    with pytest.raises(AttributeError):
        report.errors = ()  # type: ignore[misc]
    assert "ValidationReport(" in repr(report) and "errors=0" in repr(report)


# --------------------------------------------------------------------------------------------
# Properties

_WORDS = st.sampled_from(["fever", "cough", "ward", "clinic", "review", "stable", "home", "rest"])
_NAMES = st.text(
    alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz", min_size=3, max_size=12
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    words=st.lists(_WORDS, min_size=3, max_size=30),
    names=st.lists(_NAMES, min_size=1, max_size=4, unique=True),
    shift=st.integers(min_value=1, max_value=5),
)
def test_wrong_span_text_never_leaks(
    tmp_path: Path, words: list[str], names: list[str], shift: int
) -> None:
    """Shifted spans are caught as mismatches, and neither the text nor the names leak."""
    marked = " ".join(words) + " " + " ".join(f"[[PERSON|Q{n}]]" for n in names) + " end"
    line = record(marked)
    text = line["text"]
    for span in line["spans"]:
        span["text"] = text[span["start"] : span["end"]]
        span["start"] = max(0, span["start"] - shift)
        span["end"] = min(len(text), span["end"] - shift)
    path = write(tmp_path, [line], name="p.jsonl")
    report = validate_jsonl(path, check_language=False)
    assert codes(report.errors) == {"SPAN_TEXT_MISMATCH"}
    assert sum(e.code == "SPAN_TEXT_MISMATCH" for e in report.errors) == len(names)
    for name in names:
        assert not any(f"Q{name}" in m for m in all_messages(report))


def test_a_directory_is_validated_file_by_file(tmp_path: Path) -> None:
    write(tmp_path, [record("Patient [[PERSON|Ann Lee]] reviewed today on the ward.")], "a.jsonl")
    write(tmp_path, ["{oops"], "b.jsonl")
    (tmp_path / "notes.txt").write_text("{not a corpus file", encoding="utf-8")
    report = validate_jsonl(tmp_path, check_language=False)
    assert [(e.location, e.code) for e in report.errors] == [
        (f"{tmp_path / 'b.jsonl'}:1", "BAD_JSON")
    ]
    assert report.documents == 1


def test_language_check_fails_closed_without_py3langid(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "py3langid.langid", None)
    validate_module._identifier.cache_clear()
    validate_module._restricted_identifier.cache_clear()
    path = write(tmp_path, [record(ENGLISH)])
    try:
        with pytest.raises(DetectorUnavailableError):
            validate_jsonl(path)
        assert validate_jsonl(path, check_language=False).ok
    finally:
        validate_module._identifier.cache_clear()
        validate_module._restricted_identifier.cache_clear()
