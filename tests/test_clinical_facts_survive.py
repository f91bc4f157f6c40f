"""Clinical facts survive de-identification, in every language of the fixture corpus."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from polydeid import Deidentifier, Segment
from polydeid.detect.profiles import profile_categories
from polydeid.locales import languages

FIXTURES = Path(__file__).parent / "fixtures" / "clinical_facts"
RULE_LABELS = {c.value for c in profile_categories("rules", partial=False)}


@pytest.fixture(scope="module")
def deid() -> Deidentifier:
    return Deidentifier(profile="rules", policy="tag")


def records(lang: str) -> list[dict]:
    path = FIXTURES / f"{lang}.jsonl"
    return [json.loads(x) for x in path.read_text("utf-8").splitlines() if x.strip()]


@pytest.mark.parametrize("lang", languages())
def test_facts_unchanged_and_rule_identifiers_redacted(deid: Deidentifier, lang: str) -> None:
    rows = records(lang)
    assert len(rows) >= 25
    changed, leaked = [], []
    for index, row in enumerate(rows):
        result = deid.redact_segment(Segment(row["text"], lang=lang))
        for fact in row["facts"]:
            if any(r.start < fact["end"] and fact["start"] < r.end for r in result.replacements):
                changed.append((index, fact["kind"]))
        for ident in row.get("identifiers", []):
            if ident["label"] not in RULE_LABELS:
                continue
            if not any(
                r.start <= ident["start"] and ident["end"] <= r.end for r in result.replacements
            ):
                leaked.append((index, ident["label"]))
    assert not changed, f"facts changed (line index, kind): {changed}"
    assert not leaked, f"rule identifiers not redacted (line index, label): {leaked}"


def test_fact_text_is_byte_identical_after_redaction(deid: Deidentifier) -> None:
    for lang in languages():
        for row in records(lang):
            out = deid.redact(row["text"], lang=lang)
            for fact in row["facts"]:
                assert row["text"][fact["start"] : fact["end"]] in out


@pytest.mark.torch
def test_facts_survive_the_full_pipeline_with_the_tagger() -> None:
    """The tagger's spans are resolved against protected facts like the rules' are."""
    pytest.importorskip("torch")
    deid = Deidentifier(profile="default", policy="tag")
    changed = []
    for lang in languages():
        for index, row in enumerate(records(lang)[:8]):
            result = deid.redact_segment(Segment(row["text"], lang=lang))
            for fact in row["facts"]:
                touched = (
                    r.start < fact["end"] and fact["start"] < r.end for r in result.replacements
                )
                if any(touched):
                    changed.append((lang, index, fact["kind"]))
    assert not changed, f"facts changed (lang, line index, kind): {changed}"
