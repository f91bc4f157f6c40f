"""Eponymous diagnoses, devices, signs, tests and scales are protected facts; the same surnames
elsewhere stay names."""

from __future__ import annotations

import re

import pytest

from polydeid.api import Deidentifier
from polydeid.core.resolve import resolve
from polydeid.core.segments import Segment
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category, Fact
from polydeid.detect.rules.eponyms import EponymRule, EponymTermRule, eponym_names
from polydeid.locales import language_data, languages
from polydeid.locales.eponyms import eponyms
from polydeid.locales.names import name_data
from polydeid.text.normalise import normalise

PERSONS = {Category.PERSON, Category.PERSON_THIRD_PARTY}


def lang_id(value: object) -> str:
    """A test id that shows a case's language only, not its text with its invented names."""
    return value if isinstance(value, str) and len(value) == 2 else "case"


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


# --- eponymous devices, signs, tests, manoeuvres and scales ------------------------------------


def terms(text: str, lang: str) -> list[str]:
    return [text[s.start : s.end] for s in EponymTermRule().detect(Segment(text, lang=lang))]


@pytest.mark.parametrize(
    ("lang", "text", "expected"),
    [
        (
            "en",
            "Foley catheter in place, Babinski neg, positive Romberg, Murphy's sign positive, "
            "Swan-Ganz catheter, Glasgow 15, Apgar 9/10, Child-Pugh B, Mallampati II.",
            [
                "Foley catheter",
                "Babinski neg",
                "positive Romberg",
                "Murphy's sign",
                "Swan-Ganz catheter",
                "Glasgow 15",
                "Apgar 9/10",
                "Child-Pugh B",
                "Mallampati II",
            ],
        ),
        # the ways ICU notes write them: lower case, capitals, devices alone in lower case
        (
            "en",
            "foley draining clear urine, swan removed, hickman site clean, BABINSKI NEGATIVE, "
            "glasgow coma scale 15, ambu bag at bedside, yankauer for secretions.",
            [
                "foley",
                "swan",
                "hickman",
                "BABINSKI NEGATIVE",
                "glasgow coma scale",
                "ambu bag",
                "yankauer",
            ],
        ),
        (
            "de",
            "Babinski-Zeichen negativ, Zeichen nach Lasègue, Lasègue negativ, positiver Babinski, "
            "Trendelenburg-Lagerung, Valsalva-Manöver, Glasgow-Koma-Skala 15.",
            [
                "Babinski-Zeichen",
                "Zeichen nach Lasègue",
                "Lasègue negativ",
                "positiver Babinski",
                "Trendelenburg-Lagerung",
                "Valsalva-Manöver",
                "Glasgow-Koma-Skala",
            ],
        ),
        (
            "es",
            "signo de Babinski, sonda Foley, escala de Glasgow 15, maniobra de Valsalva, "
            "Lasègue positivo.",
            [
                "signo de Babinski",
                "sonda Foley",
                "escala de Glasgow",
                "maniobra de Valsalva",
                "Lasègue positivo",
            ],
        ),
        (
            "fr",
            "signe de Lasègue, sonde de Foley, score de Glasgow à 15, manœuvre de Valsalva, "
            "Babinski négatif.",
            [
                "signe de Lasègue",
                "sonde de Foley",
                "score de Glasgow",
                "manœuvre de Valsalva",
                "Babinski négatif",
            ],
        ),
        (
            "vi",
            "dấu hiệu Babinski âm tính, thang điểm Glasgow 15, nghiệm pháp Valsalva.",
            ["dấu hiệu Babinski", "thang điểm Glasgow", "nghiệm pháp Valsalva"],
        ),
        (
            "sw",
            "Katheta ya Foley imewekwa; kipimo cha Glasgow ni 15.",
            ["Katheta ya Foley", "kipimo cha Glasgow"],
        ),
        # Luganda has no term words of its own: the English ones and the distinctive eponyms
        ("lg", "Foley catheter eteekeddwamu, Apgar 9.", ["Foley catheter", "Apgar 9"]),
    ],
)
def test_eponymous_terms_are_found_whole(lang: str, text: str, expected: list[str]) -> None:
    assert terms(text, lang) == expected


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        ("en", "Mr Murphy was seen today."),  # a surname with no term word
        ("en", "Dr Thomas test results reviewed."),  # after a title: the person
        ("en", "Wells 45 years old, known diabetic."),  # a scale's value followed by an age unit
        ("en", "Seen with Foley and Murphy today."),  # capitalised devices alone are names
        ("de", "Herr Weber kam mit seiner Frau."),
        ("fr", "Mme Glasgow est venue seule."),
        ("es", "El paciente Romberg refiere dolor."),
    ],
)
def test_surnames_without_a_term_word_are_not_terms(lang: str, text: str) -> None:
    assert terms(text, lang) == []


def test_a_model_name_inside_a_term_is_cut_and_the_name_beside_it_kept() -> None:
    text = "Foley catheter placed by Mary Hickman"
    facts = EponymTermRule().detect(Segment(text, lang="en"))
    assert [f.label for f in facts] == [Fact.CLINICAL_TERM]
    tagger = [
        Span(0, 5, Category.PERSON, "tagger.e5small.v1", 0.7),
        Span(text.index("Mary"), len(text), Category.PERSON, "tagger.e5small.v1", 0.95),
    ]
    kept = resolve([*facts, *tagger], text=text)
    assert [text[s.start : s.end] for s in kept] == ["Mary Hickman"]


def test_every_term_table_is_well_formed() -> None:
    data = eponyms()
    assert len(data.terms) > 100 and {"Foley", "Babinski", "Glasgow"} <= set(data.terms)
    with_tables = 0
    for lang in languages():
        table = language_data(lang, "facts").get("eponym_term")
        if table is None:
            continue
        with_tables += 1
        assert set(table) <= {"after", "before", "results"}, lang
        for word in (*table.get("after", ()), *table.get("before", ()), *table.get("results", ())):
            assert word.strip() == word and word, lang
    assert with_tables >= 9


# --- surnames that are also eponyms, in a person's name ----------------------------------------


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        # a labelled name: the eponym is the name's surname, a result or term word after it
        ("en", "Patient name: Patrick Allen present at bedside."),
        ("en", "Patient name: Sarah Thomas position unchanged"),
        ("en", "Patient: Zorbina Jones negative for covid."),
        ("en", "Patient name: Fowler position reviewed"),
        ("en", "Seen with Sarah Thomas position unchanged."),  # a given name before it
        ("en", "Reviewed by J. Weber test results."),  # an initial before it
        ("en", "Dr Fowler position discussed."),  # a title before it
        ("de", "Patient: Anna Weber positiv getestet."),
        ("de", "Name: Thomas Allen unauffällig."),
        ("de", "Frau Jones Lagerung besprochen."),
        ("es", "Paciente: María Allen presente en la habitación."),
        ("es", "Nombre: Jones positivo para gripe."),
        ("es", "Sra. Fowler positiva en la prueba."),
        ("fr", "Nom : Claire Weber présent au lit."),
        ("fr", "Patient : Patrick Thomas négatif."),
        ("fr", "Mme Jones positive au test."),
    ],
    ids=lang_id,
)
def test_surname_eponyms_in_a_persons_name_are_not_terms(lang: str, text: str) -> None:
    assert terms(text, lang) == []


@pytest.mark.parametrize(
    ("lang", "text", "expected"),
    [
        # a name that ends its sentence is not part of the term after it
        (
            "sw",
            "Mgonjwa Amina Wanjiru. Katheta ya Foley imewekwa.",
            ["Katheta ya Foley"],
        ),
        ("en", "Seen with Sarah. Thomas splint on.", ["Thomas splint"]),
        # a surname-eponym with a term word and no name before it is still the term
        (
            "en",
            "Allen test normal, Thomas splint on, Fowler position.",
            ["Allen test", "Thomas splint", "Fowler position"],
        ),
        (
            "de",
            "Weber-Versuch lateralisiert, Schober-Zeichen negativ.",
            ["Weber-Versuch", "Schober-Zeichen"],
        ),
        # a distinctive sign keeps its result words
        ("en", "Kernig negative, Romberg positive.", ["Kernig negative", "Romberg positive"]),
    ],
    ids=lang_id,
)
def test_surname_eponyms_with_a_term_word_are_terms(
    lang: str, text: str, expected: list[str]
) -> None:
    assert terms(text, lang) == expected


def test_every_term_eponym_that_is_a_listed_name_is_marked_a_surname() -> None:
    data = eponyms()
    listed: set[str] = set()
    for lang in languages():
        names = name_data(lang)
        if names is not None:
            lookup = names.lookups["*"]
            listed |= lookup.surnames | lookup.given_names
    unmarked = [
        term
        for term in data.terms
        if term not in data.surnames
        and any(normalise(part) in listed for part in re.split(r"[-–‐ ]+", term) if part)
    ]
    assert unmarked == []
    assert set(data.surnames) <= set(data.terms)


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        ("en", "Patient name: Patrick Allen present at bedside."),
        ("en", "Patient name: Sarah Thomas position unchanged"),
        ("en", "Patient name: Zorbina Jones negative for covid."),
    ],
    ids=lang_id,
)
def test_a_labelled_name_with_a_surname_eponym_is_redacted(lang: str, text: str) -> None:
    spans = Deidentifier(profile="rules").detect(text, lang=lang)
    start = text.index(":") + 1
    name = " ".join(text[start:].split()[:2])
    start = text.index(name)
    end = start + len(name)
    assert [s for s in spans if s.label in PERSONS and s.start <= start and s.end >= end]
