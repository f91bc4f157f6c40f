"""Occupations, tribes, religions and clans after their field labels in running text
(polydeid.detect.rules.demographics, rules.demographics.v1)."""

from __future__ import annotations

import pytest

from polydeid.api import Deidentifier
from polydeid.core.segments import Segment
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category
from polydeid.detect.pipeline import Pipeline
from polydeid.detect.rules.demographics import SOURCE, LabelledDemographicRule
from polydeid.detect.rules.names import LabelledNameRule
from polydeid.lexicon.fields import demographic_label_for_words, normalise_name
from polydeid.testing import FakeDetector

RULE = LabelledDemographicRule()
JOB, TRIBE, FAITH, CLAN = (
    Category.PROFESSION,
    Category.TRIBE,
    Category.RELIGION,
    Category.PERSON_CLAN,
)


def found(text: str, lang: str = "en") -> list[tuple[str, Category]]:
    return [(text[s.start : s.end], s.label) for s in RULE.detect(Segment(text, lang=lang))]


@pytest.mark.parametrize(
    ("lang", "text", "expected"),
    [
        (
            "en",
            "Occupation: boda boda rider\nReligion: Anglican",
            [("boda boda rider", JOB), ("Anglican", FAITH)],
        ),
        (
            "sw",
            "Uhusiano: kaka. Kabila: Luo. Dini: Mlutheri. Mtoa taarifa: Asha",
            [("Luo", TRIBE), ("Mlutheri", FAITH)],
        ),
        (
            "lg",
            "* Eggwanga: Nubi\n* Ekika: Ngonge\n* Eddiini: Seventh-day Adventist",
            [("Nubi", TRIBE), ("Ngonge", CLAN), ("Seventh-day Adventist", FAITH)],
        ),
        (
            "lg",
            "Eggwanga lye: Nubi; omulimu gwe: omusuubuzi.",
            [("Nubi", TRIBE), ("omusuubuzi", JOB)],
        ),
        (
            "luo",
            "Tich: japur\nDin: Jehovah's Witness\nOganda: Luo\nDhoot: Kakwako",
            [("japur", JOB), ("Jehovah's Witness", FAITH), ("Luo", TRIBE), ("Kakwako", CLAN)],
        ),
        ("rw", "Umwuga: umuhinzi\nIdini: Gatolika", [("umuhinzi", JOB), ("Gatolika", FAITH)]),
        (
            "ru",
            "Профессия: пенсионер\nНациональность: грузин\nРод занятий: слесарь",
            [("пенсионер", JOB), ("грузин", TRIBE), ("слесарь", JOB)],
        ),  # "род занятий" (occupation), not "род" (clan)
        (
            "zh",
            "职业: 公务员\n民族: 赫哲族\n宗教信仰：佛教",
            [("公务员", JOB), ("赫哲族", TRIBE), ("佛教", FAITH)],
        ),
        ("am", "ብሔር: ሀዲያ. ሃይማኖት: ሙስሊም.", [("ሀዲያ", TRIBE), ("ሙስሊም", FAITH)]),
        (
            "vi",
            "Dân tộc: Cống\nTôn giáo: Phật giáo Hòa Hảo\nNghề nghiệp: nông dân",
            [("Cống", TRIBE), ("Phật giáo Hòa Hảo", FAITH), ("nông dân", JOB)],
        ),
        ("hi", "व्यवसाय: डिलीवरी बॉय; धर्म: हिंदू", [("डिलीवरी बॉय", JOB), ("हिंदू", FAITH)]),
        ("ar", "المهنة: سباك\nالديانة: مسلم", [("سباك", JOB), ("مسلم", FAITH)]),
        ("de", "Beruf: Busfahrer, Konfession: rk", [("Busfahrer", JOB), ("rk", FAITH)]),
        (
            "es",
            "Profesión: dependienta. Etnia: Maconde",
            [("dependienta", JOB), ("Maconde", TRIBE)],
        ),
        # a key and value of a log, a program or JSON pasted as text; an XML start tag
        (
            "en",
            '  "tribe": "Pare",\n  "religion": "Jehovah\'s Witness",',
            [("Pare", TRIBE), ("Jehovah's Witness", FAITH)],
        ),
        ("luo", '"notes": "Odak e Mwanza; din: Pentecostal.",', [("Pentecostal", FAITH)]),
        ("ru", "INFO admission_note: tribe=ингуш\n", [("ингуш", TRIBE)]),
        (
            "en",
            "<religion>Anglican</religion>\n<tribe>Kikuyu</tribe>",
            [("Anglican", FAITH), ("Kikuyu", TRIBE)],
        ),
        (
            "en",
            "nurse: Occupation?\npatient: primary school teacher",
            [("primary school teacher", JOB)],
        ),
    ],
    ids=lambda x: x if isinstance(x, str) and len(x) <= 3 else "",
)
def test_a_labels_value_is_of_the_labels_category(
    lang: str, text: str, expected: list[tuple[str, Category]]
) -> None:
    assert found(text, lang) == expected
    assert all(s.source == SOURCE for s in RULE.detect(Segment(text, lang=lang)))


@pytest.mark.parametrize(
    "text",
    [
        "Religion: unknown",  # says nothing is known
        "Occupation: N/A",
        "Tribe: -",
        "Religion code: 1013",  # the longest phrase decides: a code
        "Occupation: he used to work as a teacher in town",  # a sentence
        "Occupation:\nteacher",  # the value on the next line
        "Occupation: P7 teacher",  # a digit
        "The patient's religion was discussed with the family.",  # no label
        "Plan: review in clinic",  # another label
        "nurse: Any allergies?\npatient: penicillin",  # the question is no label
        "Faith: Hello doctor, I have a headache",  # a chat's speaker named like a label
        "Job: ok, see you",
    ],
    ids=lambda _: "",
)
def test_nothing_where_the_label_or_value_says_otherwise(text: str) -> None:
    assert found(text) == []


def test_labels_are_read_as_field_names_are() -> None:
    def category(label: str) -> Category | None:
        return demographic_label_for_words(normalise_name(label))

    assert category("Father's occupation") is JOB
    assert category("Ethnic group") is TRIBE
    assert category("Ekika kye") is CLAN
    assert category("Religion code") is None
    assert category("Patient name") is None  # the names rule's label, not this rule's


def test_the_label_decides_where_a_model_read_another_category() -> None:
    text = "Religion: Anglican\nTribe: Kikuyu\nSeen by the ward nurse."
    kikuyu = text.index("Kikuyu")
    model = FakeDetector([Span(kikuyu, kikuyu + 6, FAITH, "tagger.x", 0.9)])
    out = Pipeline([RULE, model]).detect(Segment(text, lang="en"))
    assert [(text[s.start : s.end], s.label, s.source) for s in out] == [
        ("Anglican", FAITH, SOURCE),
        ("Kikuyu", TRIBE, SOURCE),
    ]


def test_name_labels_are_not_this_rules_and_its_labels_are_not_names() -> None:
    text = "Patient name: Okello James\nOccupation: teacher"
    names = LabelledNameRule().detect(Segment(text, lang="en"))
    assert [(text[s.start : s.end], s.label) for s in names] == [("Okello James", Category.PERSON)]
    assert found(text) == [("teacher", JOB)]


def test_the_rules_profile_redacts_labelled_demographics() -> None:
    deid = Deidentifier(profile="rules", policy="tag")
    text = "Kabila: Luo. Dini: Mlutheri. Kazi: mkulima"
    out = deid.redact(text, lang="sw")
    assert out == "Kabila: [TRIBE]. Dini: [RELIGION]. Kazi: [PROFESSION]"


@pytest.mark.parametrize(
    ("lang", "text", "expected"),
    [
        ("lg", "Omusajja ow'ekika kya Kkobe; omulimu gwe: omusuubuzi.", "Kkobe"),
        ("lg", "Kitaawe w'omwana, wa kika kya Nkejje; babeera ku kyalo.", "Nkejje"),
        ("lg", "Ali wa kika ky’Ennyonyi Nakinsige era abeera Masaka.", "Ennyonyi Nakinsige"),
        ("sw", "Mgonjwa ni wa kabila la Wasukuma, anaongea Kiswahili.", "Wasukuma"),
        ("sw", "Baba ni wa ukoo wa Waitara.", "Waitara"),
    ],
    ids=lambda x: x if isinstance(x, str) and len(x) <= 3 else "",
)
def test_a_clan_or_tribe_noun_names_the_capitalised_words_after_it(
    lang: str, text: str, expected: str
) -> None:
    spans = [s for s in RULE.detect(Segment(text, lang=lang)) if s.label in (CLAN, TRIBE)]
    assert [text[s.start : s.end] for s in spans] == [expected]
    assert spans[0].label is (TRIBE if "kabila" in text else CLAN)


@pytest.mark.parametrize(
    "text",
    [
        "Kabila la watu wengi hapa ni wakulima.",  # no capitalised word after the noun
        "bekika kya Kkobe",  # the noun is part of another word
        "ekika kya\nKkobe",  # the value on the next line
    ],
    ids=lambda _: "",
)
def test_no_clan_or_tribe_after_a_noun_without_a_name(text: str) -> None:
    assert found(text, "lg") == []
