"""Eponymous diagnoses are protected facts; the same surnames elsewhere stay names."""

from __future__ import annotations

import pytest

from polydeid.core.resolve import resolve
from polydeid.core.segments import Segment
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category, Fact
from polydeid.detect.rules.eponyms import EponymRule, eponym_names
from polydeid.locales import language_data, languages


def found(text: str, lang: str) -> list[str]:
    return [text[s.start : s.end] for s in EponymRule().detect(Segment(text, lang=lang))]


@pytest.mark.parametrize(
    ("lang", "text", "expected"),
    [
        (
            "en",
            "Known Crohn's disease, Down syndrome, Guillain-Barré syndrome, Hodgkin lymphoma, "
            "Bell's palsy, Graves' disease and Wolff-Parkinson-White syndrome.",
            [
                "Crohn's disease",
                "Down syndrome",
                "Guillain-Barré syndrome",
                "Hodgkin lymphoma",
                "Bell's palsy",
                "Graves' disease",
                "Wolff-Parkinson-White syndrome",
            ],
        ),
        ("en", "diagnosed with Lou Gehrig’s disease", ["Lou Gehrig’s disease"]),
        (
            "de",
            "Vorerkrankungen: Morbus Crohn, Hodgkin-Lymphom, Creutzfeldt-Jakob-Krankheit, "
            "M. Parkinson.",
            ["Morbus Crohn", "Hodgkin-Lymphom", "Creutzfeldt-Jakob-Krankheit", "M. Parkinson"],
        ),
        (
            "es",
            "enfermedad de Crohn y síndrome de Down",
            ["enfermedad de Crohn", "síndrome de Down"],
        ),
        (
            "fr",
            "maladie d'Alzheimer et maladie de Parkinson",
            ["maladie d'Alzheimer", "maladie de Parkinson"],
        ),
        (
            "sw",
            "Ana ugonjwa wa Parkinson na saratani ya Kaposi.",
            ["ugonjwa wa Parkinson", "saratani ya Kaposi"],
        ),
        # English disease words apply in every language (clinical text mixes them in)
        ("lg", "Alina Parkinson's disease.", ["Parkinson's disease"]),
    ],
)
def test_eponymous_diagnoses_are_found_whole(lang: str, text: str, expected: list[str]) -> None:
    assert found(text, lang) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Mr Parkinson's wife called.",  # a possessive without a disease word
        "John Parkinson was seen today.",
        "Patient is still disease free.",  # common words in lower case are not eponyms
        "Mrs Turner, 54, known diabetic.",
        "Parkinsonism disease",  # not a whole eponym
    ],
)
def test_surnames_without_a_disease_word_are_not_facts(text: str) -> None:
    assert found(text, "en") == []


def test_a_model_name_inside_a_diagnosis_is_dropped_and_a_patient_name_kept() -> None:
    text = "Lou Gehrig’s disease in John Parkinson"
    facts = EponymRule().detect(Segment(text, lang="en"))
    assert [f.label for f in facts] == [Fact.DIAGNOSIS]
    tagger = [
        Span(0, 10, Category.PERSON, "tagger.e5small.v1", 0.7),
        Span(text.index("John"), len(text), Category.PERSON, "tagger.e5small.v1", 0.9),
    ]
    kept = resolve([*facts, *tagger], text=text)
    assert [text[s.start : s.end] for s in kept] == ["John Parkinson"]


def test_every_language_table_is_well_formed() -> None:
    assert len(eponym_names()) > 100
    with_tables = 0
    for lang in languages():
        table = language_data(lang, "facts").get("eponym")
        if table is None:
            continue
        with_tables += 1
        assert set(table) <= {"after", "before"}, lang
        for word in (*table.get("after", ()), *table.get("before", ())):
            assert word.strip() == word and word, lang
    assert with_tables >= 9
