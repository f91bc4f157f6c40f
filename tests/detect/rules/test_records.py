"""Record numbers: register labels in every language, facility structure, negatives, properties.

The tables live in ``fixtures/records_cases.toml``. Test ids are case names, never the numbers.
"""

from __future__ import annotations

import dataclasses
import tomllib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from polydeid.core.errors import ConfigError
from polydeid.core.segments import Segment
from polydeid.core.taxonomy import Category
from polydeid.detect.rules import records
from polydeid.detect.rules.ids import IdentifierRule
from polydeid.detect.rules.records import (
    SOURCE_PREFIX,
    SOURCE_STRUCTURE,
    RecordNumberRule,
    record_settings,
)
from polydeid.locales import languages

FIXTURES = Path(__file__).parent / "fixtures"
CASES: list[dict[str, Any]] = tomllib.loads((FIXTURES / "records_cases.toml").read_text("utf-8"))[
    "case"
]
RULE = RecordNumberRule()


def found(text: str, lang: str = "en") -> set[tuple[str, str]]:
    """``(span text, source)`` of every span (for assertions only; never used as an id)."""
    spans = RULE.detect(Segment(text, lang=lang))
    assert all(s.label is Category.ID_RECORD for s in spans)
    return {(text[s.start : s.end], s.source) for s in spans}


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_case_table(case: dict[str, Any]) -> None:
    assert found(case["text"], case["lang"]) == {tuple(e) for e in case["expect"]}


def test_case_names_are_unique() -> None:
    names = [c["name"] for c in CASES]
    assert len(names) == len(set(names))


def test_every_language_has_a_label_case() -> None:
    covered = {c["lang"] for c in CASES if any(s == SOURCE_PREFIX for _, s in c["expect"])}
    assert covered >= set(languages())


def test_span_covers_the_number_only() -> None:
    text = "MRN: 4471203"
    (span,) = RULE.detect(Segment(text))
    assert (span.start, span.end) == (5, 12)
    assert span.source == SOURCE_PREFIX


def test_structure_scores_below_labelled() -> None:
    settings_ = record_settings()
    assert settings_.structure_score < settings_.prefix_score
    spans = RULE.detect(Segment("MRN 556677 and MUL/2024/00871"))
    assert [s.source for s in spans] == [SOURCE_PREFIX, SOURCE_STRUCTURE]


_STRUCTURES = [
    ("slash-4-digit-year", "MUL/2024/00871", True),
    ("slash-2-digit-year", "KNH/24/00871", True),
    ("hyphen-6-digit-serial", "KCMC-2023-004512", True),
    ("two-capitals", "MU/2024/1234", True),
    ("five-capitals", "MULAG/2024/00871", False),
    ("seven-digit-serial", "MUL/2024/0087123", False),
    ("three-digit-year", "MUL/224/00871", False),
    ("lower-case", "mul/2024/00871", False),
    ("year-after-range", "MUL/2099/00871", False),
    ("month-then-year", "MUL/11/2023", False),
]


@pytest.mark.parametrize(
    ("value", "ok"), [c[1:] for c in _STRUCTURES], ids=[c[0] for c in _STRUCTURES]
)
def test_structural(value: str, ok: bool) -> None:
    assert record_settings().structural(value) is ok


def test_not_prefixes_block_structure() -> None:
    blocked = dataclasses.replace(record_settings(), not_prefixes=frozenset({"MUL"}))
    assert not blocked.structural("MUL/2024/00871")
    assert blocked.structural("KNH/24/00871")


@given(st.text(alphabet="0123456789", min_size=3, max_size=12))
@settings(max_examples=80, deadline=None)
def test_any_number_after_mrn_is_taken_whole(number: str) -> None:
    text = f"Seen today, MRN: {number}. Next visit soon."
    spans = RULE.detect(Segment(text))
    start = text.index(number)
    assert [(s.start, s.end) for s in spans] == [(start, start + len(number))]


@given(
    st.sampled_from(["BP", "HR", "Hb", "T", "weight", "dose", "on", "for", "x"]),
    st.integers(min_value=100, max_value=999_999),
)
@settings(max_examples=80, deadline=None)
def test_numbers_after_clinical_words_never_fire(word: str, number: int) -> None:
    assert found(f"{word} {number} recorded") == set()


@given(st.text(max_size=200))
@settings(max_examples=150, deadline=None)
def test_arbitrary_text_never_crashes(text: str) -> None:
    for lang in ("en", "zh", "ru"):
        for span in RULE.detect(Segment(text, lang=lang)):
            assert 0 <= span.start < span.end <= len(text)


def test_record_label_is_not_a_national_id_label() -> None:
    segment = Segment("Patient ID: 12345678")
    assert [(s.start, s.end) for s in RULE.detect(segment)] == [(12, 20)]
    assert IdentifierRule().detect(segment) == []


@pytest.mark.parametrize("case", CASES[:12], ids=[c["name"] for c in CASES[:12]])
def test_same_result_after_the_identifier_rule(case: dict[str, Any]) -> None:
    # The two rules share the token pass of a segment; sharing must not change the result.
    segment = Segment(case["text"], lang=case["lang"])
    alone = RULE.detect(segment)
    IdentifierRule().detect(segment)
    assert RULE.detect(segment) == alone
    assert RULE.detect(Segment(case["text"], lang="en")) == RULE.detect(
        Segment(case["text"], lang="en")
    )


def test_malformed_settings_are_a_config_error() -> None:
    with pytest.raises(ConfigError):
        records._read_settings({"value": "[0-9]+", "min_digits": 3})


def test_repr_has_no_text() -> None:
    spans = RULE.detect(Segment("MRN: 4471203"))
    assert "4471203" not in repr(spans)
