"""Latin anatomy with its abbreviated head and organisms are protected clinical terms; names
with an initial stay names."""

from __future__ import annotations

import pytest

from polydeid.core.resolve import resolve
from polydeid.core.segments import Segment
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category, Fact
from polydeid.detect.rules.latin_terms import LatinTermRule


def found(text: str, lang: str) -> list[str]:
    return [text[s.start : s.end] for s in LatinTermRule().detect(Segment(text, lang=lang))]


@pytest.mark.parametrize(
    ("lang", "text", "expected"),
    [
        (
            "de",
            "Verschluss der A. brachialis, Biopsie des N. suralis, Thrombose der V. cava "
            "inferior, Atrophie des M. deltoideus, Ruptur des Lig. collaterale mediale.",
            [
                "A. brachialis",
                "N. suralis",
                "V. cava inferior",
                "M. deltoideus",
                "Lig. collaterale mediale",
            ],
        ),
        ("de", "In der Blutkultur E. coli und S. aureus.", ["E. coli", "S. aureus"]),
        (
            "en",
            "Urine grew Escherichia coli; Candida spp. in sputum.",
            ["Escherichia coli", "Candida spp."],
        ),
        (
            "es",
            "Hemocultivo positivo para K. pneumoniae; lesión del N. medianus.",
            ["K. pneumoniae", "N. medianus"],
        ),
        (
            "fr",
            "Infection à P. aeruginosa, atteinte du N. ulnaris.",
            ["P. aeruginosa", "N. ulnaris"],
        ),
        (
            "sw",
            "Kipimo kilionyesha M. tuberculosis na P. falciparum.",
            ["M. tuberculosis", "P. falciparum"],
        ),
        ("vi", "Cấy máu mọc E. coli.", ["E. coli"]),
        ("en", "Punktion der A.carotis interna", ["A.carotis interna"]),
    ],
)
def test_latin_terms_are_found_whole(lang: str, text: str, expected: list[str]) -> None:
    assert found(text, lang) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Seen by A. Costa and N. Smith.",  # a capital after the initial: a name
        "M. van Dijk, A. della Rosa and E. Coli signed.",  # particles; a capitalised epithet
        "M. said the pain was better.",  # an English word is no Latin word
        "Vitamin A. Patient stable.",
    ],
)
def test_names_with_an_initial_are_not_terms(text: str) -> None:
    assert found(text, "en") == []


def test_a_model_name_on_a_latin_term_is_dropped_and_the_name_beside_it_kept() -> None:
    text = "Läsion des N. suralis, Patientin Erika Brandt"
    facts = LatinTermRule().detect(Segment(text, lang="de"))
    assert [f.label for f in facts] == [Fact.CLINICAL_TERM]
    start = text.index("N.")
    tagger = [
        Span(start, start + 10, Category.PERSON, "tagger.e5small.v1", 0.8),
        Span(text.index("Erika"), len(text), Category.PERSON, "tagger.e5small.v1", 0.95),
    ]
    kept = resolve([*facts, *tagger], text=text)
    assert [text[s.start : s.end] for s in kept] == ["Erika Brandt"]
