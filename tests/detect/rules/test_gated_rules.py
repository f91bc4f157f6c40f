"""Rules that try their patterns only where a word of their lists starts (polydeid.text.gate)
find what they find when they try every word, or scan the whole text."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from polydeid.core.segments import Segment
from polydeid.detect.rules import _base, demographics, gazetteer
from polydeid.detect.rules.care_roles import CareRoleRule
from polydeid.detect.rules.demographics import LabelledDemographicRule
from polydeid.detect.rules.eponyms import EponymRule, EponymTermRule
from polydeid.detect.rules.gazetteer import GazetteerRule
from polydeid.text import patterns

#: Words of the places and terms of Spain, Kenya and Ethiopia, their contexts and the
#: function words that begin many names ("La Paz", "San José"); and whole phrases of them.
_WORDS = {
    "es": [
        "La",
        "la",
        "Paz",
        "Coruña",
        "A",
        "San",
        "José",
        "de",
        "Madrid",
        "Valencia",
        "Calle",
        "Goya",
        "nº",
        "12",
        "en",
        "Hospital",
        "Universitario",
        "Getafe",
        "Parkinson",
        "Crohn",
        "enfermedad",
        "síndrome",
        "Guillain",
        "Barré",
        "sonda",
        "Foley",
        "signo",
        "Lasègue",
        "su",
        "médico",
        "familia",
        "el",
        "Glasgow",
        "15",
        "-",
        "'",
        ".",
        ",",
    ],
    "sw": [
        "Nairobi",
        "Kenyatta",
        "National",
        "Hospital",
        "hospitali",
        "ya",
        "Mombasa",
        "katika",
        "mjini",
        "Kisumu",
        "Moi",
        "Teaching",
        "and",
        "Referral",
        "KNH",
        "Road",
        "12",
        "-",
        ",",
    ],
    "am": ["በ", "አዲስ", "አበባ", "ከ", "ሆስፒታል", "ጥቁር", "አንበሳ", "በአዲስ", "ወደ", "።", "12"],
}
_PHRASES = {
    "es": [
        "en A Coruña",
        "vive en La Alameda",
        "Calle de Goya nº 12",
        "en San Andrés",
        "Hospital Clínico",
        "A Estrada",
        "enfermedad de Crohn",
        "síndrome de Guillain-Barré",
        "signo de Lasègue",
        "su médico de familia",
        "sonda Foley",
        "Glasgow 15",
        "maladie de Parkinson",
        "Parkinson's disease",
    ],
    "sw": [
        "Moi Teaching and Referral Hospital",
        "katika Moi Avenue",
        "Kenyatta National Hospital",
        "hospitali ya Mombasa",
        "ukoo wa Abasuba",
        "kabila la Wachaga",
        "ekika kya Ngabi",
        "ekika ky'Engabi",
        "Kabila: Luo",
    ],
    "am": ["በአዲስ አበባ", "ወደ ጥቁር አንበሳ ሆስፒታል"],
}
_COUNTRIES = {"es": ("ES",), "sw": ("KE",), "am": ("ET",)}
_GAPS = [" ", "  ", "-", " - ", "'", ".", "/", ", ", "\n", ""]


def _texts(lang: str) -> st.SearchStrategy[str]:
    piece = st.one_of(st.sampled_from(_WORDS[lang]), st.sampled_from(_PHRASES[lang]))
    gap = st.sampled_from(_GAPS)
    return st.lists(st.tuples(piece, gap), max_size=24).map(
        lambda parts: "".join(p + g for p, g in parts)
    )


def _every_word(*_: object) -> None:
    return None


@pytest.mark.parametrize("lang", sorted(_WORDS))
def test_places_are_those_every_word_finds(lang: str) -> None:
    rule = GazetteerRule()

    @settings(max_examples=150, deadline=None)
    @given(_texts(lang))
    def check(text: str) -> None:
        segment = Segment(text, lang=lang, countries=_COUNTRIES[lang])
        gated = rule.detect(segment)
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(gazetteer, "_gate", _every_word)
            assert rule.detect(segment) == gated

    check()


def _whole_scan(pattern, segment, rule_id, keys) -> Iterator[patterns.Match]:
    return patterns.guarded_finditer(pattern, segment, rule_id)


@pytest.mark.parametrize("rule", [EponymRule(), CareRoleRule(), EponymTermRule()])
def test_facts_are_those_a_whole_scan_finds(rule: _base.RuleDetector) -> None:
    @settings(max_examples=150, deadline=None)
    @given(_texts("es"), st.sampled_from(["es", "en", "fr"]))
    def check(text: str, lang: str) -> None:
        segment = Segment(text, lang=lang)
        gated = rule.detect(segment)
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(_base, "gated_finditer", _whole_scan)
            mp.setattr("polydeid.detect.rules.eponyms.gated_finditer", _whole_scan)
            assert rule.detect(segment) == gated

    check()


def test_demographic_nouns_are_those_a_whole_scan_finds() -> None:
    rule = LabelledDemographicRule()

    @settings(max_examples=150, deadline=None)
    @given(_texts("sw"), st.sampled_from(["sw", "lg"]))
    def check(text: str, lang: str) -> None:
        segment = Segment(text, lang=lang)
        gated = rule.detect(segment)
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(demographics, "gated_finditer", _whole_scan)
            assert rule.detect(segment) == gated

    check()


def test_the_gate_finds_something_in_these_texts() -> None:
    """The comparisons above are not of two empty lists."""
    text = "ingresa en A Coruña con enfermedad de Crohn y sonda Foley; su médico de familia"
    places = GazetteerRule().detect(Segment(text, lang="es", countries=("ES",)))
    assert [text[s.start : s.end] for s in places] == ["A Coruña"]
    assert EponymRule().detect(Segment(text, lang="es"))
    assert EponymTermRule().detect(Segment(text, lang="es"))
    assert CareRoleRule().detect(Segment(text, lang="es"))
    assert LabelledDemographicRule().detect(Segment("ni wa kabila la Wachaga", lang="sw"))
