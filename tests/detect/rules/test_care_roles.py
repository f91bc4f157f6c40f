"""A clinician's specialty title that holds a kinship word is a protected fact, not a relative;
the bare title after a verb (an occupation) is left to the profession detectors."""

from __future__ import annotations

import pytest

from polydeid.core.resolve import resolve
from polydeid.core.segments import Segment
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category, Fact
from polydeid.detect.pipeline import Pipeline
from polydeid.detect.profiles import profile_detectors
from polydeid.detect.registry import PROFILES
from polydeid.detect.rules.care_roles import CareRoleRule
from polydeid.locales import language_data, languages


def found(text: str, lang: str) -> list[str]:
    return [text[s.start : s.end] for s in CareRoleRule().detect(Segment(text, lang=lang))]


@pytest.mark.parametrize(
    ("lang", "text", "expected"),
    [
        (
            "es",
            "Remitida por su médico de familia; el médico familiar pidió una analítica.",
            ["médico de familia", "médico familiar"],
        ),
        ("es", "Su médica de familia solicitó interconsulta.", ["médica de familia"]),
        (
            "en",
            "Referred by her Family Doctor; the family physician agreed.",
            ["Family Doctor", "family physician"],
        ),
        ("fr", "Adressée par son médecin de famille.", ["médecin de famille"]),
        ("pt", "Encaminhada pelo médico de família.", ["médico de família"]),
        ("it", "Inviata dal medico di famiglia.", ["medico di famiglia"]),
        # English titles apply in every language (clinical text mixes them in)
        ("sw", "Alipelekwa na her family doctor.", ["family doctor"]),
    ],
)
def test_a_treating_clinicians_title_is_found_whole(
    lang: str, text: str, expected: list[str]
) -> None:
    assert found(text, lang) == expected


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        ("es", "Trabaja como médico de familia en un centro de salud."),  # an occupation
        ("es", "Es médico de familia."),
        ("en", "She is a family doctor."),
        ("en", "Family doctor: Dr Okello."),  # no determiner: a label, left to the name rules
        ("es", "Acude con su familia."),  # a relative stays a relative
        ("es", "su médico de familiares"),  # not a whole title
    ],
)
def test_an_occupation_or_a_relative_is_not_a_care_role(lang: str, text: str) -> None:
    assert found(text, lang) == []


def test_a_relative_read_inside_the_title_is_dropped_and_a_real_relative_kept() -> None:
    text = "Su médico de familia habló con su hermana."
    facts = CareRoleRule().detect(Segment(text, lang="es"))
    assert [f.label for f in facts] == [Fact.CARE_ROLE]
    family = text.index("familia")
    sister = text.index("hermana")
    tagger = [
        Span(family, family + 7, Category.PERSON_THIRD_PARTY, "tagger.e5small.v1", 0.9),
        Span(sister, sister + 7, Category.PERSON_THIRD_PARTY, "tagger.e5small.v1", 0.9),
    ]
    kept = resolve([*facts, *tagger], text=text)
    assert [text[s.start : s.end] for s in kept] == ["hermana"]


def test_the_rule_runs_in_both_shipped_profiles_and_protects_the_title() -> None:
    assert "facts.care_roles.v1" in PROFILES["default"]
    text = "Remitida por su médico de familia."
    spans = Pipeline(profile_detectors("rules")).facts(Segment(text, lang="es"))
    assert [(text[s.start : s.end], s.label) for s in spans] == [
        ("médico de familia", Fact.CARE_ROLE)
    ]


def test_every_language_table_is_well_formed() -> None:
    with_tables = 0
    for lang in languages():
        table = language_data(lang, "facts").get("care_role")
        if table is None:
            continue
        with_tables += 1
        assert set(table) == {"determiners", "roles"}, lang
        for word in (*table["determiners"], *table["roles"]):
            assert word.strip() == word and word, lang
    assert with_tables >= 5
