"""Tests of the protected clinical-facts layer (doses, labs, vitals, durations, quantities).

The fixture corpus ``tests/fixtures/clinical_facts/<lang>.jsonl`` holds, one JSON object per line,
``lang``, ``text``, ``facts`` ([{start, end, kind, text}]), ``identifiers`` ([{start, end, label,
text}]) and optionally ``ages`` ([{start, end, text}]); :func:`load_fixture_corpus` reads it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from polydeid.core.errors import UnknownLanguageError
from polydeid.core.resolve import resolve
from polydeid.core.segments import Segment
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category, Fact
from polydeid.detect.rules.ages import AgeRule
from polydeid.detect.rules.clinical_facts import (
    RULE_KINDS,
    ClinicalFactRule,
    VitalSpec,
    fact_vocabulary,
    parse_number,
    plain_value,
    word_alternation,
)
from polydeid.locales import language_data, languages
from polydeid.testing import FakeDetector
from polydeid.text.patterns import compile_pattern

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "clinical_facts"


@dataclass(frozen=True)
class Annotated:
    """A labelled range of a fixture line."""

    start: int
    end: int
    label: str


@dataclass(frozen=True)
class FixtureLine:
    """One line of the clinical-facts fixture corpus."""

    lang: str
    number: int
    text: str
    facts: tuple[Annotated, ...]
    identifiers: tuple[Annotated, ...]
    ages: tuple[Annotated, ...]


def _annotations(row: dict, key: str, label_key: str | None) -> tuple[Annotated, ...]:
    items = []
    for item in row.get(key, []):
        if row["text"][item["start"] : item["end"]] != item["text"]:
            raise ValueError(f"fixture {row['lang']}: {key} offsets do not match their text")
        items.append(Annotated(item["start"], item["end"], item[label_key] if label_key else "AGE"))
    return tuple(items)


def load_fixture_corpus(lang: str | None = None) -> list[FixtureLine]:
    """The fixture corpus (of one language, or all), with offsets checked against the text."""
    lines = []
    for path in sorted(FIXTURES.glob("*.jsonl")):
        if lang is not None and path.stem != lang:
            continue
        for number, raw in enumerate(path.read_text("utf-8").splitlines(), 1):
            row = json.loads(raw)
            lines.append(
                FixtureLine(
                    lang=row["lang"],
                    number=number,
                    text=row["text"],
                    facts=_annotations(row, "facts", "kind"),
                    identifiers=_annotations(row, "identifiers", "label"),
                    ages=_annotations(row, "ages", None),
                )
            )
    return lines


CORPUS = load_fixture_corpus()
RULE = ClinicalFactRule()
AGES = AgeRule()


def facts_in(text: str, lang: str = "en") -> list[tuple[str, str]]:
    """(covered text, kind) of every fact found, in order."""
    return [(text[s.start : s.end], s.label.value) for s in RULE.detect(Segment(text, lang=lang))]


# --------------------------------------------------------------------------------------------
# Fixture corpus


def test_corpus_covers_every_language_with_enough_lines() -> None:
    counts = {lang: sum(1 for line in CORPUS if line.lang == lang) for lang in languages()}
    assert all(n >= 25 for n in counts.values()), counts
    assert sum(len(line.facts) for line in CORPUS) > 1000


def test_corpus_lines_carry_identifiers_and_every_kind() -> None:
    for lang in languages():
        lines = [line for line in CORPUS if line.lang == lang]
        assert sum(1 for line in lines if line.identifiers) >= 8, lang
        kinds = {a.label for line in lines for a in line.facts}
        assert kinds == {k.value for k in RULE_KINDS}, lang


def _lines(lang: str) -> list[FixtureLine]:
    return [line for line in CORPUS if line.lang == lang]


def _spans(items: tuple[Annotated, ...]) -> set[tuple[int, int, str]]:
    return {(a.start, a.end, a.label) for a in items}


@pytest.mark.parametrize("lang", languages())
def test_corpus_facts_are_found_exactly(lang: str) -> None:
    wrong = []
    for line in _lines(lang):
        found = RULE.detect(Segment(line.text, lang=lang))
        if {(s.start, s.end, s.label.value) for s in found} != _spans(line.facts):
            wrong.append(line.number)
        assert all(s.source == f"fact.{s.label.value.lower()}.v1" for s in found)
    assert wrong == [], f"{lang}.jsonl lines with other facts than expected"


@pytest.mark.parametrize("lang", languages())
def test_corpus_ages_are_found_and_never_inside_facts(lang: str) -> None:
    wrong, inside = [], []
    for line in _lines(lang):
        segment = Segment(line.text, lang=lang)
        ages = AGES.detect(segment)
        if {(s.start, s.end, "AGE") for s in ages} != _spans(line.ages):
            wrong.append(line.number)
        facts = RULE.detect(segment)
        if [a for a in AgeRule(min_score=0.0).detect(segment) for f in facts if a.overlaps(f)]:
            inside.append(line.number)
    assert wrong == [], f"{lang}.jsonl lines with other ages than expected"
    assert inside == [], f"{lang}.jsonl lines with an age candidate inside a fact"


@pytest.mark.parametrize("lang", languages())
def test_corpus_identifiers_survive_fact_protection(lang: str) -> None:
    for line in _lines(lang):
        segment = Segment(line.text, lang=lang)
        facts = RULE.detect(segment)
        identifiers = [
            Span(a.start, a.end, Category.parse(a.label), "rule.fixture.v1")
            for a in line.identifiers
        ]
        overlapping = [f for f in facts for i in identifiers if f.overlaps(i)]
        assert overlapping == [], f"{lang}.jsonl line {line.number}"
        kept = resolve([*facts, *FakeDetector(identifiers).detect(segment)], line.text)
        assert {(s.start, s.end) for s in kept} == {(i.start, i.end) for i in identifiers}


# --------------------------------------------------------------------------------------------
# Positives by kind

POSITIVES: list[tuple[str, str, list[tuple[str, str]]]] = [
    # doses
    ("en", "paracetamol 500 mg", [("500 mg", "DOSE")]),
    ("en", "ceftriaxone 1 g IV stat", [("1 g IV stat", "DOSE")]),
    ("en", "2 x 500 mg", [("2 x 500 mg", "DOSE")]),
    ("en", "enoxaparin 0.5 mL", [("0.5 mL", "DOSE")]),
    ("en", "co-amoxiclav 875/125 mg bd", [("875/125 mg bd", "DOSE")]),
    ("de", "Ramipril 5 mg 1-0-1", [("5 mg", "DOSE"), ("1-0-1", "DOSE")]),
    ("en", "gentamicin 7 mg/kg/day", [("7 mg/kg/day", "DOSE")]),
    ("en", "cefuroxime q8h", [("q8h", "DOSE")]),
    ("sw", "mara 3 kwa siku", [("mara 3 kwa siku", "DOSE")]),
    ("zh", "每日3次", [("每日3次", "DOSE")]),
    # lab values
    ("en", "creatinine 86 µmol/L", [("creatinine 86 µmol/L", "LAB_VALUE")]),
    ("en", "Hb 12.5 g/dL", [("Hb 12.5 g/dL", "LAB_VALUE")]),
    ("en", "CD4 350 cells/µL", [("CD4 350 cells/µL", "LAB_VALUE")]),
    ("en", "viral load <40 copies/mL", [("viral load <40 copies/mL", "LAB_VALUE")]),
    ("en", "HIV VL: 125,000 copies/mL", [("HIV VL: 125,000 copies/mL", "LAB_VALUE")]),
    ("en", "WBC 11.2 ×10⁹/L", [("WBC 11.2 ×10⁹/L", "LAB_VALUE")]),
    ("en", "random glucose 7.1 mmol/L", [("glucose 7.1 mmol/L", "LAB_VALUE")]),
    ("en", "normal saline 0.9% 1 L", [("0.9%", "QUANTITY"), ("1 L", "DOSE")]),
    ("es", "creatinina 1,2 mg/dL", [("creatinina 1,2 mg/dL", "LAB_VALUE")]),
    ("ru", "креатинин 86 мкмоль/л", [("креатинин 86 мкмоль/л", "LAB_VALUE")]),
    # vitals
    ("en", "BP 120/80", [("BP 120/80", "VITAL")]),
    ("en", "BP: 120/80 mmHg", [("BP: 120/80 mmHg", "VITAL")]),
    ("en", "HR 88, RR 18", [("HR 88", "VITAL"), ("RR 18", "VITAL")]),
    ("en", "SpO2 97%", [("SpO2 97%", "VITAL")]),
    ("en", "T 38.5°C", [("T 38.5°C", "VITAL")]),
    ("en", "GCS 15/15", [("GCS 15/15", "VITAL")]),
    ("en", "GCS E4V5M6", [("E4V5M6", "VITAL")]),
    ("en", "Temp 37,8 °C", [("Temp 37,8 °C", "VITAL")]),
    ("fr", "TA 12/8, FC 88", [("TA 12/8", "VITAL"), ("FC 88", "VITAL")]),
    ("de", "RR 150/90 mmHg", [("RR 150/90 mmHg", "VITAL")]),
    ("vi", "huyết áp 120/80 mmHg", [("huyết áp 120/80 mmHg", "VITAL")]),
    ("sw", "shinikizo la damu 120/80", [("shinikizo la damu 120/80", "VITAL")]),
    ("zh", "体温38.5℃", [("体温38.5℃", "VITAL")]),
    ("en", "BP was 130/85", [("BP was 130/85", "VITAL")]),
    # durations
    ("en", "for 5 days", [("for 5 days", "DURATION")]),
    ("en", "x 7/7", [("x 7/7", "DURATION")]),
    ("en", "x5 days", [("x5 days", "DURATION")]),
    ("en", "for about 2-3 weeks", [("for about 2-3 weeks", "DURATION")]),
    ("sw", "kwa siku 3", [("kwa siku 3", "DURATION")]),
    ("de", "seit 3 Tagen", [("seit 3 Tagen", "DURATION")]),
    ("es", "durante 7 días", [("durante 7 días", "DURATION")]),
    ("es", "fiebre de 3 días de evolución", [("3 días de evolución", "DURATION")]),
    ("fr", "depuis 2 semaines", [("depuis 2 semaines", "DURATION")]),
    ("vi", "trong 5 ngày", [("trong 5 ngày", "DURATION")]),
    ("hi", "3 दिन से बुखार", [("3 दिन से", "DURATION")]),
    ("am", "ለ5 ቀናት", [("ለ5 ቀናት", "DURATION")]),
    ("lg", "okumala ennaku 5", [("okumala ennaku 5", "DURATION")]),
    ("rw", "amaze iminsi 3", [("amaze iminsi 3", "DURATION")]),
    ("luo", "kuom ndalo 4", [("kuom ndalo 4", "DURATION")]),
    ("zh", "持续3天", [("持续3天", "DURATION")]),
    ("ar", "لمدة 5 أيام", [("لمدة 5 أيام", "DURATION")]),
    ("ru", "в течение 3 дней", [("в течение 3 дней", "DURATION")]),
    # quantities
    ("en", "G2P1", [("G2P1", "QUANTITY")]),
    ("en", "G3 P2+1", [("G3 P2+1", "QUANTITY")]),
    ("en", "3 tablets", [("3 tablets", "QUANTITY")]),
    ("en", "1-2 tablets", [("1-2 tablets", "QUANTITY")]),
    ("lg", "emyaka 63 empeke 2", [("empeke 2", "QUANTITY")]),
    ("en", "vomited x3", [("x3", "QUANTITY")]),
    ("en", "30 pack-years", [("30 pack-years", "QUANTITY")]),
    ("sw", "vidonge 2", [("vidonge 2", "QUANTITY")]),
    ("de", "2 Tbl.", [("2 Tbl.", "QUANTITY")]),
    ("es", "2 comprimidos", [("2 comprimidos", "QUANTITY")]),
    ("vi", "2 viên", [("2 viên", "QUANTITY")]),
    ("ru", "2 таб.", [("2 таб.", "QUANTITY")]),
    ("zh", "每次2片", [("每次2片", "QUANTITY")]),
]


@pytest.mark.parametrize(
    ("lang", "text", "expected"), POSITIVES, ids=[f"pos-{i}" for i in range(len(POSITIVES))]
)
def test_positive(lang: str, text: str, expected: list[tuple[str, str]]) -> None:
    assert facts_in(text, lang) == expected


# --------------------------------------------------------------------------------------------
# Negatives: identifiers and non-facts stay free

NEGATIVES: list[tuple[str, str]] = [
    ("en", "Tel 0772 123456"),
    ("en", "Tel 0772 123456 mg"),
    ("lg", "Essimu 0772 123456 empeke."),
    ("en", "call 0772-123456 tablets"),
    ("en", "DOB 12/03/1980"),
    ("en", "admitted on 12.03.2024 at 14:30"),
    ("en", "aged 46 years"),
    ("en", "a 46-year-old woman"),
    ("en", "since 2010"),
    ("en", "T 0772 123456"),
    ("en", "HR 8"),
    ("en", "T 12"),
    ("en", "BP 40/120"),
    ("en", "GCS 16/15"),
    ("en", "Hb 0123456"),
    ("en", "CD4 12345678"),
    ("en", "MRN 2024 00871, bed 12"),
    ("en", "NIN CM12345678ABCD mg"),
    ("en", "cough 3 years"),
    ("en", "for 5 patients"),
    ("en", "3 years ago"),
    ("en", "P.O. Box 7062"),
    ("es", "Calle Mayor 5, 2ºC 28001 Madrid"),
    ("es", "Av. de Oviedo, 48, 5G. Localidad: Oviedo"),
    ("es", "Calle 25 no 1g-89, Bogotá"),
    ("ru", "родилась 12.03.1980 г."),
    ("vi", "ngày 12/03/1980"),
    ("zh", "1980年3月12日"),
    ("sw", "Simu 0712 345678"),
    ("es", "varón de 46 años"),
    ("de", "geb. 03.05.1977"),
]


@pytest.mark.parametrize(
    ("lang", "text"), NEGATIVES, ids=[f"neg-{i}" for i in range(len(NEGATIVES))]
)
def test_negative(lang: str, text: str) -> None:
    assert facts_in(text, lang) == []


def test_fact_next_to_phone_leaves_the_phone_free() -> None:
    text = "BP 120/80 Tel 0772 123456"
    spans = RULE.detect(Segment(text))
    assert [(s.start, s.end) for s in spans] == [(0, 9)]


def test_unknown_language_fails_closed() -> None:
    with pytest.raises(UnknownLanguageError):
        RULE.detect(Segment("BP 120/80", lang="xx-unknown"))


def test_rule_metadata() -> None:
    assert RULE.id == "facts.clinical.v1"
    assert RULE.labels == RULE_KINDS
    assert frozenset(Fact) > RULE_KINDS
    assert RULE.languages == frozenset(languages())


# --------------------------------------------------------------------------------------------
# Building blocks


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("12", 12.0),
        ("12.5", 12.5),
        ("12,5", 12.5),
        ("1,250", 1250.0),
        ("0,250", 0.25),
        ("1,250,000", 1250000.0),
        ("1.250.000", 1250000.0),
        ("12.03.1980", None),
        ("1.2.3", None),
        ("٤٦", 46.0),
        ("٤٦٫٥", 46.5),
    ],
)
def test_parse_number(text: str, value: float | None) -> None:
    assert parse_number(text) == value


def test_plain_value_rejects_identifier_fragments() -> None:
    assert plain_value("0772") is None
    assert plain_value("12345678") is None
    assert plain_value("0.5") == 0.5
    assert plain_value("88") == 88.0


def test_vital_spec_ranges_and_ratios() -> None:
    bp = VitalSpec("bp", 5, 300, ratio=True)
    gcs = VitalSpec("gcs", 3, 15, ratio=True, denominators=(15,))
    hr = VitalSpec("hr", 20, 300)
    assert bp.accepts(120, 80) and bp.accepts(12, 8) and not bp.accepts(80, 120)
    assert gcs.accepts(15, 15) and not gcs.accepts(15, 10) and not gcs.accepts(2, None)
    assert hr.accepts(88, None) and not hr.accepts(88, 60) and not hr.accepts(8, None)


def test_word_alternation_matches_whole_words_longest_first() -> None:
    forward = compile_pattern(word_alternation(["mg", "mg/dL", "BP", "T"]))
    assert forward.match("mg/dL x").group() == "mg/dL"
    assert forward.match("MG ").group() == "MG"  # short lower-case words: any case
    assert forward.match("bp") is None  # short words with a capital: exact case
    assert forward.match("mgx") is None  # whole words only
    assert forward.match("T°") is not None and forward.match("Ta") is None


def test_word_alternation_backward_in_lookbehind() -> None:
    before = compile_pattern(
        rf"(?<=(?P<w>{word_alternation(['blood pressure', 'pressure'], backward=True)}) )\d"
    )
    m = before.search("Blood  pressure 120")
    assert m is not None and m.group("w") == "Blood  pressure"
    assert before.search("bloodpressure 120") is None


def test_word_alternation_of_nothing_never_matches() -> None:
    assert compile_pattern(word_alternation([])).search("anything") is None


def test_malformed_facts_data_is_a_config_error() -> None:
    from polydeid.core.errors import ConfigError
    from polydeid.detect.rules.clinical_facts import _strings

    with pytest.raises(ConfigError):
        _strings({"markers": "for"}, "markers", "test")
    assert _strings({}, "markers", "test") == []


@pytest.mark.parametrize("lang", languages())
def test_every_language_has_facts_data_with_sources(lang: str) -> None:
    data = language_data(lang, "facts")
    assert data["meta"]["sources"] and data["meta"]["licence"]
    vocab = fact_vocabulary((lang, "en") if lang != "en" else ("en",))
    assert vocab.duration_markers and vocab.labels


# --------------------------------------------------------------------------------------------
# Properties

UNIT_KINDS = {
    "mg": Fact.DOSE,
    "g": Fact.DOSE,
    "mcg": Fact.DOSE,
    "mL": Fact.DOSE,
    "IU": Fact.DOSE,
    "mmol/L": Fact.LAB_VALUE,
    "mg/dL": Fact.LAB_VALUE,
    "mmHg": Fact.VITAL,
    "tablets": Fact.QUANTITY,
    "%": Fact.QUANTITY,
}


@settings(max_examples=60, deadline=None)
@given(
    whole=st.integers(min_value=0, max_value=5000),
    decimals=st.sampled_from(["", ".5", ",25"]),
    unit=st.sampled_from(sorted(UNIT_KINDS)),
    space=st.sampled_from(["", " "]),
    before=st.sampled_from(["Given ", "then ", "; ", "(", ""]),
)
def test_property_number_with_unit_is_one_fact(
    whole: int, decimals: str, unit: str, space: str, before: str
) -> None:
    fact = f"{whole}{decimals}{space}{unit}"
    assert facts_in(f"{before}{fact} today.") == [(fact, UNIT_KINDS[unit].value)]


@settings(max_examples=60, deadline=None)
@given(
    label=st.sampled_from(["Tel", "Phone", "DOB", "MRN", "ID", "Date", "Simu", "Tél.", "T", "P"]),
    groups=st.lists(st.integers(min_value=0, max_value=999999), min_size=1, max_size=3),
    lead=st.sampled_from(["0", "+256 ", "07", "2024/"]),
)
def test_property_identifier_numbers_are_never_facts(
    label: str, groups: list[int], lead: str
) -> None:
    number = lead + " ".join(f"{g:06d}" for g in groups)
    assert facts_in(f"{label} {number}") == []


@settings(max_examples=60, deadline=None)
@given(
    day=st.integers(1, 31),
    month=st.integers(1, 12),
    year=st.integers(1900, 2030),
    sep=st.sampled_from(["/", ".", "-"]),
    label=st.sampled_from(["DOB", "seen on", "BP", "T", "Hb", "x", "for"]),
)
def test_property_dates_are_never_covered(
    day: int, month: int, year: int, sep: str, label: str
) -> None:
    date = f"{day:02d}{sep}{month:02d}{sep}{year}"
    text = f"{label} {date} review"
    start = text.index(date)
    spans = RULE.detect(Segment(text))
    assert not [s for s in spans if s.start < start + len(date) and start < s.end]


def test_facts_never_overlap_meddocan_phi(shared_data: Callable[..., Path]) -> None:
    """On real clinical case reports, no fact span covers any gold identifier."""
    meddocan = shared_data("meddocan")
    overlaps, facts = 0, 0
    for ann in sorted(meddocan.glob("*/*.ann")):
        text = ann.with_suffix(".txt").read_text("utf-8")
        gold = []
        for line in ann.read_text("utf-8").splitlines():
            if line.startswith("T"):
                _, start, end = line.split("\t")[1].split()[:3]
                gold.append((int(start), int(end)))
        found = RULE.detect(Segment(text, lang="es"))
        facts += len(found)
        overlaps += sum(1 for f in found for s, e in gold if f.start < e and s < f.end)
    assert facts > 3000
    assert overlaps == 0
