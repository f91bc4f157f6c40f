"""The common-word prior (pass ``names.common_word``): vocabulary a model read as a name is
no name; real names, also those that are words, stay."""

from __future__ import annotations

import time

import pytest

from polydeid.core.segments import Segment
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category
from polydeid.detect.pipeline import Pipeline
from polydeid.detect.vocabulary import CONFIDENT, Prior, drop_common_words, word_prior
from polydeid.locales.clinical_terms import clinical_terms
from polydeid.locales.common_words import DRUG_MIN_LETTERS, is_clinical_word
from polydeid.locales.names import is_pool_name, pool_names
from polydeid.testing import FakeDetector


def _lang_only(value: object) -> str:
    """A test id that shows a case's language and never its text (names stay out of ids)."""
    return value if isinstance(value, str) and len(value) <= 3 else "case"


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
    text = "Avenida del Fiscal Portero 12"
    street = Span(0, text.index(" Portero"), Category.LOCATION_ADDRESS, TAGGER, 0.8)
    word = model_names(text, ["Portero"], 0.7)[0]
    assert drop_common_words(text, [street, word], "es") == (street, word)
    assert drop_common_words(text, [word], "es") == ()


@pytest.mark.parametrize(
    ("lang", "text", "word"),
    [
        # a drug stem is no ending of a name: not "-amid" ("-amide" less its "e"), "-quin"
        ("en", "Seen by Abdelhamid today.", "Abdelhamid"),
        ("en", "SEEN BY ABDELHAMID TODAY.", "ABDELHAMID"),
        ("de", "Rückruf an Abdelhamid erfolgt.", "Abdelhamid"),
        ("fr", "Vu par BOURQUIN ce jour.", "BOURQUIN"),
        ("fr", "Vu par Bourquin ce jour.", "Bourquin"),
        ("es", "Visto por ABDELHAMID hoy.", "ABDELHAMID"),
    ],
    ids=_lang_only,
)
def test_a_name_with_a_drug_ending_stays_even_when_the_model_is_sure(
    lang: str, text: str, word: str
) -> None:
    assert kept(text, lang, [word], score=0.99) == [word]


@pytest.mark.parametrize(
    ("lang", "word"),
    [
        ("de", "Olanzapin"),
        ("de", "Furosemid"),
        ("de", "Lidocain"),
        ("de", "Hydroxychloroquin"),
        ("de", "Prednisolon"),
        ("es", "Pantoprazol"),
        ("fr", "Budesonide"),
        ("en", "OLANZAPINE"),
        ("en", "pantoprazole"),
    ],
)
def test_drug_names_are_clinical_as_each_language_writes_them(lang: str, word: str) -> None:
    assert word_prior(word, lang) is Prior.CLINICAL


def test_no_listed_name_ends_with_a_drug_stem() -> None:
    stems = tuple(s.casefold() for s in clinical_terms().drug_stems)
    names = {
        n for lang in ("en", "de", "fr", "es", "it", "nl", "pt", "ar") for n in pool_names(lang)
    }
    clashes = [n for n in names if len(n) >= DRUG_MIN_LETTERS and n.endswith(stems)]
    assert clashes == []


def test_a_listed_name_is_no_drug_but_the_same_word_in_lower_case_is() -> None:
    name = "Bourquin"
    assert is_pool_name(name)
    assert not is_clinical_word("Tellbourquin", "en")  # no stem "-quin"
    assert is_clinical_word("chloroquine", "en")


@pytest.mark.parametrize(
    ("lang", "text", "word"),
    [
        # a listed name in capitals stays a name
        ("en", "Seen by BAKER today.", "BAKER"),
        ("fr", "Vue par ROSE ce matin.", "ROSE"),
        # a clinical word in capitals after a given name or a title is a surname
        ("en", "Called Kevin FOLEY today.", "FOLEY"),
        ("en", "Discussed with Dr BRADY.", "BRADY"),
        ("en", "Discussed with Dr. CATH.", "CATH"),
        ("de", "Rücksprache mit Herrn Dr. BRADY.", "BRADY"),
        # a listed name in lower case where the whole text is in lower case
        ("en", "spoke with brady today about discharge.", "brady"),
    ],
    ids=_lang_only,
)
def test_listed_names_in_capitals_and_in_name_contexts_stay(
    lang: str, text: str, word: str
) -> None:
    assert kept(text, lang, [word], score=0.99) == [word]


@pytest.mark.parametrize(
    ("lang", "text", "word"),
    [
        # clinical abbreviations in capitals with no name around
        ("en", "HR 48, BRADY overnight, atropine given.", "BRADY"),
        ("en", "CATH lab at 14:00, groin site clean.", "CATH"),
        ("en", "FOLEY draining clear urine.", "FOLEY"),
        # a listed name in lower case in mixed-case text is the clinical word
        ("en", "HR 48, brady overnight.", "brady"),
        ("de", "Patient heute brady, HF 45.", "brady"),
    ],
)
def test_clinical_words_without_a_name_around_are_dropped(lang: str, text: str, word: str) -> None:
    assert kept(text, lang, [word], score=0.99) == []


@pytest.mark.parametrize(
    ("lang", "text", "word"),
    [
        # a title of another language than the segment's
        ("de", "Spoke with Mr Herz about the results.", "Herz"),
        ("en", "Telefonat mit Herrn Herz.", "Herz"),
        ("fr", "Entretien avec Frau Leber.", "Leber"),
        ("es", "Hablé con Mrs Fiebre.", "Fiebre"),
    ],
    ids=_lang_only,
)
def test_a_title_of_any_language_marks_a_name(lang: str, text: str, word: str) -> None:
    assert kept(text, lang, [word], score=0.99) == [word]


@pytest.mark.parametrize(
    ("lang", "text", "word"),
    [
        # surnames that are also common words of German, in a name context
        ("de", "Rücksprache mit Frau Busch.", "Busch"),
        ("de", "Ehefrau Engel informiert.", "Engel"),
        ("de", "Tochter Jana Will kam mit.", "Will"),
        # a common word after a kinship or role word, a label or a given name
        ("de", "Pat. Engel, Zi. 12.", "Engel"),
        ("en", "Lives with wife Brook, who drives.", "Brook"),
        ("en", "Patient: Sterling, 54.", "Sterling"),
        ("es", "Acompañado por su esposa Herrero.", "Herrero"),
        ("fr", "Accompagné de sa fille Marchand.", "Marchand"),
    ],
    ids=_lang_only,
)
def test_names_that_are_common_words_stay_below_a_confident_score(
    lang: str, text: str, word: str
) -> None:
    assert kept(text, lang, [word], score=0.85) == [word]


@pytest.mark.parametrize(
    ("lang", "text", "word"),
    [
        ("en", "Brook crossing at the park.", "Brook"),
        ("de", "Engel aus Holz auf dem Nachttisch.", "Engel"),
        # a German noun after a kinship word is the noun ("laut Mutter Auskunft")
        ("de", "Laut Mutter Auskunft erhalten.", "Auskunft"),
        # a title of another language counts only written as a title ("hr" is an hour)
        ("en", "UO 400 cc in 1 hr. Cardiology fellow aware.", "Cardiology"),
        # a name in capitals in capitals-only text gives no name context
        ("en", "PT WAS EXTUBATED, FAMILY DECLINED AUTOPSY.", "DECLINED"),
    ],
)
def test_common_words_without_a_name_around_still_go_below_a_confident_score(
    lang: str, text: str, word: str
) -> None:
    assert kept(text, lang, [word], score=0.85) == []


def test_many_spans_are_judged_in_near_linear_time() -> None:
    # each span is compared with its neighbours only, not with every other span
    unit = "Fieber, Jana Voss; "
    text = unit * 10_000
    spans = []
    for i in range(10_000):
        base = i * len(unit)
        spans.append(Span(base, base + 6, Category.PERSON, TAGGER, 0.7))
        spans.append(Span(base + 8, base + 17, Category.PERSON, TAGGER, 0.95))
    start = time.perf_counter()
    out = drop_common_words(text, spans, "de")
    assert time.perf_counter() - start < 5.0
    assert len(out) == 10_000 and all(text[s.start : s.end] == "Jana Voss" for s in out)
