"""Places and facilities the packs know are found by name, with the language's context; common
words, person names and parts of longer names are left alone without it."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from polydeid.api import Deidentifier
from polydeid.core.segments import Segment
from polydeid.core.taxonomy import Category
from polydeid.detect.rules.gazetteer import GazetteerRule
from polydeid.locales import countries, language_data, languages
from polydeid.locales.gazetteer import (
    PlaceKind,
    facility_names,
    gazetteer,
    is_common_word,
    is_person_name,
    regions,
)
from polydeid.locales.place_words import place_words

RULE = GazetteerRule()


def found(text: str, lang: str, countries_: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    spans = RULE.detect(Segment(text, lang=lang, countries=countries_))
    return [(text[s.start : s.end], s.label.name) for s in spans]


FACILITY = Category.LOCATION_FACILITY.name
VILLAGE = Category.LOCATION_VILLAGE.name
ADDRESS = Category.LOCATION_ADDRESS.name

#: The national referral hospitals, and their like, in every East African language and in
#: English notes from Uganda, Kenya, Tanzania and Rwanda: (lang, countries, text, the name).
EAST_AFRICA = [
    ("lg", (), "Omulwadde yalabiddwa e Mulago nga 5 Museenene 2024.", "Mulago"),
    ("sw", (), "Mgonjwa alionekana Mulago tarehe 5 Machi 2024.", "Mulago"),
    ("sw", ("TZ",), "Mgonjwa alipelekwa hospitali ya Muhimbili tarehe 5 Machi 2024.", "Muhimbili"),
    (
        "sw",
        ("KE",),
        "Mgonjwa alionekana Kenyatta National Hospital jana.",
        "Kenyatta National Hospital",
    ),
    ("rw", (), "Umurwayi yabonetse ku bitaro bya CHUK ku wa 5 Werurwe 2024.", "CHUK"),
    ("rw", (), "Umurwayi yoherejwe i Butaro.", "Butaro"),
    ("luo", (), "Jatuo ne oneno e Mbagathi e tarik 5 Mach 2024.", "Mbagathi"),
    ("luo", (), "Ne otere e osiptal mar Kenyatta National Hospital.", "Kenyatta National Hospital"),
    ("am", (), "ታካሚው በጥቁር አንበሳ ሆስፒታል ታይቷል።", "ጥቁር አንበሳ ሆስፒታል"),
    ("en", ("UG",), "Pt seen at Mulago on 5 March 2024, referred from Kisenyi HC IV.", "Mulago"),
    ("en", ("UG",), "Referred from Kisenyi Health Centre IV.", "Kisenyi Health Centre IV"),
    ("en", ("KE",), "Admitted to KNH with fever.", "KNH"),
    ("en", ("TZ",), "Transferred to Bugando Medical Centre for surgery.", "Bugando Medical Centre"),
    ("en", ("RW",), "Followed up at King Faisal Hospital since 2019.", "King Faisal Hospital"),
]


def _ids(cases: list[tuple[str, ...]]) -> list[str]:
    """Test ids without the places' names: language and position."""
    return [f"{case[0]}-{i}" for i, case in enumerate(cases)]


EAST_AFRICA_IDS = _ids(EAST_AFRICA)


@pytest.mark.parametrize(("lang", "countries_", "text", "name"), EAST_AFRICA, ids=EAST_AFRICA_IDS)
def test_east_african_facilities_are_found(lang, countries_, text, name) -> None:
    assert (name, FACILITY) in found(text, lang, countries_)


@pytest.mark.parametrize(("lang", "countries_", "text", "name"), EAST_AFRICA, ids=EAST_AFRICA_IDS)
def test_east_african_facilities_leave_no_trace_with_the_rules(
    lang, countries_, text, name
) -> None:
    out = Deidentifier(profile="rules").redact(text, lang=lang, countries=countries_)
    assert name not in out
    assert "[LOCATION_FACILITY]" in out


@pytest.fixture(scope="module")
def default_profile() -> Deidentifier:
    """The shipped default profile (rules and tagger), built once for the module."""
    return Deidentifier()


@pytest.mark.torch
@pytest.mark.parametrize(("lang", "countries_", "text", "name"), EAST_AFRICA, ids=EAST_AFRICA_IDS)
def test_east_african_facilities_leave_no_trace_by_default(
    default_profile, lang, countries_, text, name
) -> None:
    out = default_profile.redact(text, lang=lang, countries=countries_)
    assert name not in out


ELSEWHERE = [
    ("en", "Pt lives in Gulu, seen in Nairobi and London.", ["Gulu", "Nairobi", "London"]),
    ("de", "Der Patient wohnt in Bremen und kam aus Essen.", ["Bremen", "Essen"]),
    (
        "de",
        "Aufnahme im Klinikum Großhadern, Verlegung an die Charité.",
        ["Klinikum Großhadern", "Charité"],
    ),
    (
        "es",
        "Natural de Getafe, ingresa en el Hospital Universitario de Getafe.",
        ["Getafe", "Hospital Universitario de Getafe"],
    ),
    ("fr", "Née à Lyon, suivie à l'Hôpital Necker depuis 2019.", ["Lyon", "Hôpital Necker"]),
    (
        "vi",
        "Bệnh nhân trú tại Hà Nội, điều trị tại Bệnh viện Bạch Mai.",
        ["Hà Nội", "Bệnh viện Bạch Mai"],
    ),
]


@pytest.mark.parametrize(("lang", "text", "expected"), ELSEWHERE, ids=_ids(ELSEWHERE))
def test_places_in_european_and_asian_languages(lang, text, expected) -> None:
    assert [t for t, _ in found(text, lang)] == expected


LEFT_ALONE = [
    # common words that are also places (a German noun: Essen; English: Reading, Bath)
    ("de", "Essen wurde gut vertragen, Halle und Zug ohne Befund."),
    ("en", "Reading glasses needed. Bath daily."),
    ("en", "the bridge was closed"),
    # a person's name that is also a place, without context
    ("lg", "Matovu yazze ku ssaawa 3."),
    # a place name in capitals within a text of small letters: an acronym
    ("en", "Follow the ADA guidance."),
    # lower case without context
    ("en", "mulago is a word here"),
    # part of a longer name: an organisation
    ("en", "She works at Makerere University and the Kampala Capital City Authority."),
    # glued to a word by a hyphen
    ("en", "A Kampala-based charity."),
    # initials only count in capitals
    ("en", "knh"),
]


@pytest.mark.parametrize(("lang", "text"), LEFT_ALONE, ids=_ids(LEFT_ALONE))
def test_left_alone_without_context(lang, text) -> None:
    assert found(text, lang) == []


def test_common_word_or_person_name_needs_context() -> None:
    assert found("Er kam aus Essen.", "de") == [("Essen", VILLAGE)]
    assert found("Essen.", "de") == []
    assert is_common_word("Essen", "de") and not is_common_word("Bremen", "de")
    # a major city's name that is a word of the language's own pack (Kinyarwanda "aba": these)
    assert found("Aba bakinnyi bageze i Kigali.", "rw") == [("Kigali", VILLAGE)]
    assert found("Yavuye i Aba.", "rw") == [("Aba", VILLAGE)]
    # Matovu: a village of Uganda and a Luganda name
    assert is_person_name("Matovu", ["lg"])
    assert found("Matovu yazze.", "lg") == []
    assert found("Alikuwa kwenda Matovu.", "lg") == []  # 'kwenda' is Kiswahili, not Luganda
    assert found("Yazze okuva e Matovu.", "lg") == [("Matovu", VILLAGE)]
    assert found("Anaishi katika Matovu.", "sw", ("UG",)) == [("Matovu", VILLAGE)]
    # a locative also written before people is no context for a person's name
    assert found("Alikwenda kwenda Matovu.", "sw", ("UG",)) == []
    assert found("Please talk to Linda, who moved from Linda to Gulu.", "en", ("US", "UG")) == [
        ("Gulu", VILLAGE)
    ]


def test_facility_word_after_joins_the_span() -> None:
    assert found("Seen at Gulu Regional Referral Hospital.", "en", ("UG",)) == [
        ("Gulu Regional Referral Hospital", FACILITY)
    ]
    assert found("Seen at Gulu Hospital today.", "en", ("UG",)) == [("Gulu Hospital", FACILITY)]


def test_street_needs_a_house_number() -> None:
    assert found("Lives at 12 Kampala Road.", "en", ("UG",)) == [("12 Kampala Road", ADDRESS)]
    assert found("Kampala Road was closed.", "en", ("UG",)) == []


def test_spans_follow_the_text_and_do_not_overlap() -> None:
    text = "e Mulago, e Mengo ne Nsambya, mu Kampala ne Wakiso. " * 50
    spans = RULE.detect(Segment(text, lang="lg"))
    assert len(spans) == 250
    assert all(a.end <= b.start for a, b in itertools.pairwise(spans))


def test_every_country_with_a_pack_loads() -> None:
    for country in countries():
        facility_names(country)
    for country in ("UG", "KE", "TZ", "RW", "ET", "DE", "FR", "ES", "GB", "US", "VN"):
        facilities = facility_names(country)
        assert facilities.names and facilities.sources, country
    entries = gazetteer(("UG",), frozenset({"Latin"}))
    kinds = {e.kind for e in entries}
    assert kinds == {PlaceKind.FACILITY, PlaceKind.PLACE, PlaceKind.STREET}
    assert any(e.name == "Mulago" and e.kind is PlaceKind.FACILITY for e in entries)
    # airport codes and lower-case transliterations of GeoNames alternate names are no names
    assert not {"KLA", "kampala"} & {e.name for e in entries}


@pytest.mark.parametrize("lang", ["en", "de", "es", "fr", "vi", "lg", "sw", "rw", "luo", "am"])
def test_place_words_load(lang: str) -> None:
    words = place_words(lang)
    assert language_data(lang, "places")["meta"]["sources"]
    assert words.locatives or words.attached


def test_every_language_runs() -> None:
    for lang in languages():
        RULE.detect(Segment("Kampala, Paris, Berlin.", lang=lang))


#: A place list is no longer name: a place after the place found before it, or followed by
#: a listed place, a country or a US state: (lang, countries, text, the places found).
PLACE_LISTS = [
    ("en", ("US",), "Patient lives in Boston MA with his wife.", ["Boston"]),
    ("en", ("UG",), "Lives in Kampala Uganda.", ["Kampala"]),
    ("en", ("UG",), "Seen at Mulago Hospital Kampala last week.", ["Mulago Hospital", "Kampala"]),
    ("en", ("UG",), "The Kampala Gulu highway was closed.", ["Kampala", "Gulu"]),
]


@pytest.mark.parametrize(
    ("lang", "countries_", "text", "names"), PLACE_LISTS, ids=_ids(PLACE_LISTS)
)
def test_a_place_list_is_no_longer_name(lang, countries_, text, names) -> None:
    assert [t for t, _ in found(text, lang, countries_)] == names
    out = Deidentifier(profile="rules").redact(text, lang=lang, countries=countries_)
    assert not any(name in out for name in names)


def test_a_facility_after_a_locative_is_still_a_longer_name() -> None:
    assert found("She studied at Makerere University.", "en", ("UG",)) == []
    assert found("He plays for Gicumbi FC.", "en", ("RW",)) == []
    assert found("Admitted to Kampala Presbyterian Hospital today.", "en", ("UG",)) == []
    assert found("Seen at Kampala General on 5 May.", "en", ("UG",)) == []


#: A house number after a street through the language's number mark (places.toml
#: ``[streets] number_marks``).
NUMBER_MARKS = [
    ("es", ("ES",), "Vive en Calle de Goya nº 12, 3º.", "Calle de Goya nº 12"),
    ("de", ("DE",), "Wohnort: Am Sportplatz Nr. 5, seit 2019.", "Am Sportplatz Nr. 5"),
    ("en", ("UG",), "Lives at Kampala Road No. 12 with family.", "Kampala Road No. 12"),
]


@pytest.mark.parametrize(
    ("lang", "countries_", "text", "address"), NUMBER_MARKS, ids=_ids(NUMBER_MARKS)
)
def test_a_house_number_after_the_languages_number_mark(lang, countries_, text, address) -> None:
    assert (address, ADDRESS) in found(text, lang, countries_)


def test_language_knowledge_is_read_from_places_toml() -> None:
    assert "nº" in place_words("es").number_marks
    assert "Nr." in place_words("de").number_marks
    assert place_words("de").german_nouns and not place_words("en").german_nouns
    # a language without number marks reads a house number only after a comma or a space
    assert place_words("lg").number_marks == ()


def test_the_common_word_cache_is_bounded() -> None:
    # the words around a place come from the text: no unbounded cache of them
    assert is_common_word.cache_info().maxsize is not None


def test_regions_are_countries_and_us_states() -> None:
    names, codes = regions()
    assert {"uganda", "kenya", "massachusetts"} <= names
    assert {"MA", "NY"} <= codes


def test_a_language_whose_wordfreq_tokenizer_is_not_installed_has_no_common_words() -> None:
    """wordfreq reads Chinese through ``jieba`` and Japanese and Korean through MeCab, which
    polydeid does not install: their words are no common words (kept by the name and place
    rules), where asking wordfreq would raise."""
    import importlib.util

    from polydeid.locales import gazetteer as places

    if importlib.util.find_spec("jieba") is not None:
        pytest.skip("jieba is installed here")
    assert "zh" not in places._wordfreq_languages()
    assert places.is_common_word("北京", "zh") is False
    assert places.is_common_word("house", "en") is True


def test_the_gazetteer_index_is_kept_in_the_cache_and_read_back_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The index of a set of countries is built once, kept in polydeid's cache, and read back
    equal to a new build in a new process; a damaged file is built again."""
    from polydeid.detect.rules import gazetteer as rule

    monkeypatch.setenv("POLYDEID_CACHE", str(tmp_path))
    key = (("UG", "KE"), frozenset({"Latin"}))
    built = rule._build_index(*key)
    rule._index.cache_clear()
    assert rule._index(*key) == built  # built, and kept
    (kept,) = (tmp_path / "gazetteer").glob("*.json")
    rule._index.cache_clear()
    calls: list[object] = []
    monkeypatch.setattr(rule, "_build_index", lambda *a: calls.append(a) or built)
    assert rule._index(*key) == built  # read back
    assert calls == []
    kept.write_text('{"format": 1, "truncated', encoding="utf-8")
    rule._index.cache_clear()
    assert rule._index(*key) == built
    assert calls == [key]  # built again
    rule._index.cache_clear()


def test_a_kept_index_builds_names_when_looked_up_and_refuses_a_damaged_row() -> None:
    """Names are built from the kept rows when first looked up (the same object each time);
    a row of the wrong shape fails closed with a coded error, not as a missing name."""
    from polydeid.core.errors import ConfigError
    from polydeid.detect.rules import gazetteer as rule

    table = {
        "single": {"gulu": ["Gulu", 1, True], "bad": ["Bad", "no-such-kind"]},
        "pairs": [["fort", "portal", [["Fort Portal", 1, True]]]],
    }
    index = rule._index_from_table(table)
    assert index is not None and index.first == {"gulu", "bad", "fort"}
    gulu = index.single["gulu"]
    assert gulu.entry.name == "Gulu" and gulu.words == ("gulu",)
    assert index.single.get("gulu") is gulu and index.single.get("kampala") is None
    (fort,) = index.by_pair[("fort", "portal")]
    assert fort.words == ("fort", "portal")
    with pytest.raises(ConfigError):
        index.single.get("bad")
    assert rule._index_from_table({"single": [], "pairs": []}) is None
    assert rule._index_from_table({"single": {}, "pairs": [[1, 2]]}) is None
