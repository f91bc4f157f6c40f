"""The ``kinship.toml`` packs load as written, name their sources, and read a mention the way
``locales/languages/en/kinship.toml`` documents (polydeid.locales.kinship)."""

from __future__ import annotations

import pytest

from polydeid.core.errors import ConfigError
from polydeid.locales import language_data, languages
from polydeid.locales.kinship import KinshipWords, kinship_vocabulary, kinship_words

#: The languages issue 33 asks kinship and role words of, and the other shipped languages.
LISTED = ("en", "de", "es", "fr", "vi", "sw", "lg", "rw", "luo", "pt", "it", "nl")
OTHERS = ("am", "ar", "hi", "ru", "zh")

FIELDS = {
    "kinship": "kinship.words",
    "modifiers": "kinship.modifiers",
    "roles": "role.words",
    "forms": "address.forms",
    "salutations": "address.salutations",
    "grammar": "grammar.words",
    "elisions": "grammar.elisions",
}


@pytest.mark.parametrize("lang", languages())
def test_every_pack_loads_as_written(lang: str) -> None:
    raw = language_data(lang, "kinship")
    words = kinship_words(lang)
    assert words.code == lang and kinship_words(lang) is words
    for field, path in FIELDS.items():
        table, key = path.split(".")
        assert getattr(words, field) == tuple(raw.get(table, {}).get(key, ())), field
    if raw:
        assert raw["meta"]["sources"] and raw["meta"]["licence"]


@pytest.mark.parametrize("lang", LISTED + OTHERS)
def test_each_listed_language_ships_kinship_role_and_address_words(lang: str) -> None:
    words = kinship_words(lang)
    assert words.kinship and words.roles and words.forms and words.grammar
    assert all(w == w.strip() and w for w in (*words.kinship, *words.roles, *words.forms))


def test_a_language_without_a_pack_reads_nothing() -> None:
    assert KinshipWords("xx").kinship == ()
    assert not kinship_vocabulary().is_mention("mother")


def test_a_malformed_list_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    from polydeid.locales import kinship as module

    monkeypatch.setattr(module, "language_data", lambda code, kind: {"kinship": {"words": "x"}})
    module.kinship_words.cache_clear()
    try:
        with pytest.raises(ConfigError, match=r"kinship\.words"):
            module.kinship_words("en")
    finally:
        module.kinship_words.cache_clear()


@pytest.mark.parametrize(
    ("lang", "text", "mention"),
    [
        ("en", "his wife", True),
        ("en", "Pt's daughter", True),  # the elided "s" of the possessive
        ("en", "two brothers", True),
        ("en", "maternal", False),  # a modifier alone makes nothing
        ("en", "Dear", False),  # a salutation alone makes nothing
        ("en", "the", False),
        ("en", "", False),
        ("en", "Mr Son", False),  # a capitalised relation after a title: a surname
        ("en", "MR SON", False),
        ("en", "wife Mary", False),
        ("de", "Herr Kollege", True),  # a form of address counts after a title
        ("de", "Herr Vater", False),
        ("es", "dos hermanas", True),
        ("es", "2 sobrinos", True),  # a count in digits is a filler
        ("es", "madre de 34 años", False),
        ("es", "su nieto", True),
        ("ru", "его жена", True),
        ("ru", "родственники", True),
        ("zh", "患者", True),
        ("zh", "家属", True),
        ("ar", "زوجة المريض", True),
        ("hi", "उसकी पत्नी", True),
        ("am", "ቤተሰብ", True),
        ("es", "Nieto", False),  # a surname of the Spanish pool: only lower case is kinship
        ("fr", "l'épouse", True),
        ("lg", "maama w'omulwadde", True),
        ("vi", "anh trai", True),
        ("vi", "Anh", False),  # a given name, listed only in compounds
        ("nl", "De Neef", False),  # a surname after its particle
    ],
)
def test_is_mention(lang: str, text: str, mention: bool) -> None:
    langs = (lang,) if lang == "en" else (lang, "en")
    assert kinship_vocabulary(*langs).is_mention(text) is mention


@pytest.mark.parametrize("lang", LISTED)
def test_no_name_of_the_languages_pools_reads_as_a_mention(lang: str) -> None:
    from polydeid.locales.names import name_data

    data = name_data(lang)
    assert data is not None
    lists = ("given_male", "given_female", "family", "family_male", "family_female", "clans")
    names = {
        n
        for pool in (data.default, *data.by_country.values())
        for k in lists
        for n in getattr(pool, k)
    }
    vocabulary = kinship_vocabulary(*((lang,) if lang == "en" else (lang, "en")))
    assert sorted(n for n in names if vocabulary.is_mention(n)) == []
