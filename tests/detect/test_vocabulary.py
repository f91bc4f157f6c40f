"""The common-word prior (pass ``names.common_word``): vocabulary a model read as a name is
no name; real names, also those that are words, stay."""

from __future__ import annotations

import pytest

from polydeid.core.segments import Segment
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category
from polydeid.detect.pipeline import Pipeline
from polydeid.detect.vocabulary import CONFIDENT, Prior, drop_common_words, word_prior
from polydeid.testing import FakeDetector

TAGGER = "tagger.e5small.v1"


def model_names(text: str, words: list[str], score: float) -> list[Span]:
    spans = []
    for word in words:
        start = text.index(word)
        spans.append(Span(start, start + len(word), Category.PERSON, TAGGER, score))
    return spans


def kept(text: str, lang: str, words: list[str], score: float = 0.8) -> list[str]:
    spans = drop_common_words(text, model_names(text, words, score), lang)
    return [text[s.start : s.end] for s in spans]


@pytest.mark.parametrize(
    ("lang", "text", "vocabulary", "name"),
    [
        # German writes every noun with a capital: anatomy, symptoms, remedies
        (
            "de",
            "Leber und Kniegelenk o.B., Fieber seit gestern, Salbe lokal; Pat. Jutta Kowalski.",
            ["Leber", "Kniegelenk", "Fieber", "Salbe"],
            "Jutta Kowalski",
        ),
        (
            "de",
            "FIEBER, LEBER vergrößert. Ehemann Horst Brandt informiert.",
            ["FIEBER", "LEBER"],
            "Horst Brandt",
        ),
        # ICU abbreviations in lower case and capitals
        (
            "en",
            "aline in place, neo weaned, peep 5, afebrile; wife Deborah Hollis at bedside.",
            ["aline", "neo", "peep", "afebrile"],
            "Deborah Hollis",
        ),
        ("en", "ALINE dampened, NEO off. Seen by Dr Marcus Pell.", ["ALINE", "NEO"], "Marcus Pell"),
        # drug names by their INN stems, in every language
        (
            "en",
            "Started Olanzapine at night; daughter Priya Raman called.",
            ["Olanzapine"],
            "Priya Raman",
        ),
        (
            "de",
            "Pantoprazol und Amlodipin weiter; Sohn Lukas Brenner.",
            ["Pantoprazol", "Amlodipin"],
            "Lukas Brenner",
        ),
        (
            "es",
            "Fiebre y dolor; Pomada tópica. Paciente: Lucía Ferrandis.",
            ["Fiebre", "Pomada"],
            "Lucía Ferrandis",
        ),
        (
            "fr",
            "Fièvre, douleur; Olanzapine. Patiente Odile Marchetti.",
            ["Fièvre", "Olanzapine"],
            "Odile Marchetti",
        ),
    ],
)
def test_vocabulary_is_dropped_and_the_name_beside_it_kept(
    lang: str, text: str, vocabulary: list[str], name: str
) -> None:
    assert kept(text, lang, [*vocabulary, name]) == [name]


@pytest.mark.parametrize(
    ("lang", "text", "word"),
    [
        # names that are also words: a shipped name list has them
        ("en", "Seen with Rose today.", "Rose"),
        ("en", "Baker reports less pain.", "Baker"),
        ("de", "Weiß berichtet über Schmerzen.", "Weiß"),
        ("de", "Kaiser kam zur Kontrolle.", "Kaiser"),
        ("fr", "Aline est venue seule.", "Aline"),  # a given name written as one
        # a title before the word makes it a person
        ("de", "Frau Leber kam zur Kontrolle.", "Leber"),
        ("en", "Mr Fever was seen.", "Fever"),
        # no frequencies for this language: the prior leaves its names alone
        ("vi", "Bệnh nhân Hoa đã khỏe.", "Hoa"),
    ],
)
def test_names_that_are_words_stay(lang: str, text: str, word: str) -> None:
    assert kept(text, lang, [word]) == [word]


def test_a_confident_model_outweighs_a_common_word_but_not_a_clinical_word() -> None:
    text = "Fenster offen, aline liegt."
    assert kept(text, "de", ["Fenster", "aline"], score=CONFIDENT) == ["Fenster"]
    assert kept(text, "de", ["Fenster", "aline"], score=CONFIDENT - 0.01) == []


def test_only_model_names_are_judged() -> None:
    text = "Patient: Fieber"
    start = text.index("Fieber")
    labelled = Span(start, len(text), Category.PERSON, "rule.name.label.v1", 0.5)
    place = Span(start, len(text), Category.LOCATION_VILLAGE, TAGGER, 0.5)
    assert drop_common_words(text, [labelled], "de") == (labelled,)
    assert drop_common_words(text, [place], "de") == (place,)


def test_word_prior() -> None:
    assert word_prior("Fenster", "de") is Prior.COMMON  # german-nouns
    assert word_prior("Kniegelenk", "de") is Prior.CLINICAL  # clinical_terms.toml
    assert word_prior("Müller", "de") is Prior.NAME  # a noun, but a surname too
    assert word_prior("peep", "en") is Prior.CLINICAL
    assert word_prior("Olanzapin", "de") is Prior.CLINICAL
    assert word_prior("Anderson", "en") is Prior.NAME  # "-son" is no drug stem


def test_the_pass_runs_in_the_pipeline_and_is_switched_off_by_id() -> None:
    text = "Fieber seit gestern, Tochter Jana Voss informiert."
    found = FakeDetector(
        [
            Span(0, 6, Category.PERSON, TAGGER, 0.7),
            Span(text.index("Jana"), text.index(" informiert"), Category.PERSON, TAGGER, 0.95),
        ]
    )
    segment = Segment(text, lang="de")
    with_pass = Pipeline([found]).detect(segment)
    assert [text[s.start : s.end] for s in with_pass] == ["Jana Voss"]
    without = Pipeline([found], disabled_passes={"names.common_word"}).detect(segment)
    assert [text[s.start : s.end] for s in without] == ["Fieber", "Jana Voss"]


def test_lower_case_common_words_are_left_to_the_model() -> None:
    # a kinship word is no name, but that is the kinship pass's to say, not the word prior's
    text = "Vive con la madre y la hermana."
    assert kept(text, "es", ["madre", "hermana"]) == ["madre", "hermana"]


def test_a_word_beside_another_identifier_is_part_of_it() -> None:
    text = "C/ Fiscal Luis Portero García 29010"
    street = Span(3, text.index(" Portero"), Category.LOCATION_ADDRESS, TAGGER, 0.8)
    word = model_names(text, ["Portero"], 0.7)[0]
    assert drop_common_words(text, [street, word], "es") == (street, word)
    assert drop_common_words(text, [word], "es") == ()
