"""Tests of the slot-value fillers: determinism, name splits, shapes, rule-layer acceptance."""

from __future__ import annotations

from functools import cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from polydeid import Deidentifier
from polydeid.core.errors import ConfigError
from polydeid.core.taxonomy import Category
from polydeid.detect.profiles import profile_categories
from polydeid.locales import languages
from polydeid.synth.fillers import (
    SPLITS,
    VARIANTS,
    FilledValue,
    Filler,
    _split_pool,
    name_split_of,
)
from polydeid.text.normalise import normalise

LANGS = languages()

RULE_CATEGORIES = profile_categories("rules", partial=False)

#: Context words after which the rule layer misses (part of) a date: known rule gaps, reported
#: to the lead. Values drawn with these prefixes are not counted.
KNOWN_RULE_GAPS: dict[tuple[str, Category], frozenset[str]] = {
    # "chakre 20 Dwe mar Apar 1995": the fact layer reads "chakre 20 Dwe" as a duration
    # ("since 20 months") and facts win over the longer date.
    ("luo", Category.DATE): frozenset({"chakre"}),
}

#: Country-specific formats checked on top of each language's default countries.
COUNTRY_CASES = (
    ("en", "US"),
    ("en", "UG"),
    ("en", "KE"),
    ("en", "TZ"),
    ("en", "RW"),
    ("es", "ES"),
    ("fr", "FR"),
    ("de", "DE"),
    ("nl", "NL"),
    ("pt", "PT"),
    ("pt", "BR"),
    ("sw", "TZ"),
    ("sw", "UG"),
)

N_ACCEPTED = 50


@cache
def _deid() -> Deidentifier:
    return Deidentifier(profile="rules")  # the values must satisfy the rule layer itself


def _probe(value: FilledValue) -> tuple[str, int]:
    text = f"{value.context_prefix} {value.text}" if value.context_prefix else value.text
    return text, len(text) - len(value.text)


def _accepted(value: FilledValue, lang: str) -> bool:
    text, start = _probe(value)
    return any(
        s.start == start and s.end == len(text) and s.label == value.category
        for s in _deid().detect(text, lang=lang)
    )


def _check_acceptance(lang: str, country: str | None, category: Category) -> None:
    filler = Filler(lang, country=country, seed=20260)
    gaps = KNOWN_RULE_GAPS.get((lang, category), frozenset())
    checked, failures = 0, []
    for i in range(N_ACCEPTED * 2):
        value = filler.value(category)
        if value.context_prefix in gaps:
            continue
        checked += 1
        if not _accepted(value, lang):
            failures.append(i)  # indices only: no value text in test output
        if checked == N_ACCEPTED:
            break
    assert checked == N_ACCEPTED
    assert failures == [], f"draws not recognised as one {category.name} span: {failures}"


@pytest.mark.parametrize("category", RULE_CATEGORIES, ids=lambda c: c.name)
@pytest.mark.parametrize("lang", LANGS)
def test_rule_layer_recognises_every_value(lang: str, category: Category) -> None:
    _check_acceptance(lang, None, category)


@pytest.mark.parametrize("category", [Category.ID_NATIONAL, Category.CONTACT_PHONE, Category.DATE])
@pytest.mark.parametrize(("lang", "country"), COUNTRY_CASES)
def test_rule_layer_recognises_country_values(lang: str, country: str, category: Category) -> None:
    _check_acceptance(lang, country, category)


@pytest.mark.parametrize(
    ("lang", "country", "variant"),
    [
        ("rw", "RW", "format"),
        ("sw", "TZ", "format"),
        ("am", None, "labelled"),
        ("ar", None, "labelled"),
        ("en", "GB", "format"),
    ],
)
def test_national_id_variants_are_recognised(lang: str, country: str | None, variant: str) -> None:
    filler = Filler(lang, country=country, seed=5)
    for _ in range(20):
        assert _accepted(filler.value(Category.ID_NATIONAL, variant=variant), lang)


@pytest.mark.parametrize("category", RULE_CATEGORIES, ids=lambda c: c.name)
def test_every_variant_is_recognised_in_english(category: Category) -> None:
    filler = Filler("en", country="GB", seed=11)
    for variant in VARIANTS[category]:
        if category is Category.AGE and variant == "unit_before":
            continue  # English writes the unit after the number only
        if category is Category.ID_NATIONAL and variant == "labelled":
            continue  # GB has a format; labelled values are checked for am/ar above
        for _ in range(10):
            assert _accepted(filler.value(category, variant=variant), "en"), variant


def test_rule_values_are_not_recognised_without_their_shape() -> None:
    """The acceptance check can fail: a broken value is not a whole span of its category."""
    value = Filler("en", country="GB", seed=1).value(Category.CONTACT_PHONE)
    broken = FilledValue(value.text + "x-y", value.category, value.context_prefix)
    assert not _accepted(broken, "en")


# --- determinism --------------------------------------------------------------------------------


def _draws(filler: Filler, n: int = 40) -> list[str]:
    cats = (Category.PERSON, Category.DATE, Category.CONTACT_PHONE, Category.ID_NATIONAL)
    return [filler.value(cats[i % len(cats)]).text for i in range(n)]


@pytest.mark.parametrize("lang", ["sw", "zh", "es", "ru"])
def test_same_seed_same_values(lang: str) -> None:
    assert _draws(Filler(lang, seed=7)) == _draws(Filler(lang, seed=7))


def test_different_seeds_differ() -> None:
    assert _draws(Filler("lg", seed=1)) != _draws(Filler("lg", seed=2))


def test_instances_do_not_share_rng_state() -> None:
    a, b = Filler("en", seed=3), Filler("en", seed=3)
    first = [a.value(Category.PERSON).text for _ in range(5)]
    for _ in range(50):  # drawing from b must not move a
        b.value(Category.DATE)
    fresh = Filler("en", seed=3)
    assert first == [fresh.value(Category.PERSON).text for _ in range(5)]
    assert [a.value(Category.AGE).text for _ in range(5)] == [
        fresh.value(Category.AGE).text for _ in range(5)
    ]


# --- name splits --------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", LANGS)
def test_name_splits_are_disjoint(lang: str) -> None:
    filler = Filler(lang, seed=0)
    pools = [_split_pool(filler.lang, filler.countries, split) for split in SPLITS]
    for kind in ("given", "family"):
        sets = [
            {normalise(n) for n in getattr(p, f"{kind}_female") + getattr(p, f"{kind}_male")}
            for p in pools
        ]
        assert all(sets), kind
        assert not sets[0] & sets[1] and not sets[0] & sets[2] and not sets[1] & sets[2], kind


@pytest.mark.parametrize("lang", ["en", "sw", "lg", "de"])
def test_drawn_names_stay_in_their_split(lang: str) -> None:
    for split in SPLITS:
        filler = Filler(lang, seed=9, name_split=split)
        pool = _split_pool(filler.lang, filler.countries, split)
        givens = set(pool.given_female + pool.given_male)
        for _ in range(60):
            text = filler.value(Category.PERSON, variant="full").text
            given, _, family = text.partition(" ")
            assert given in givens and name_split_of(family) == split, split


@given(st.text(min_size=1, max_size=20))
@settings(max_examples=200, deadline=None)
def test_name_split_is_a_function_of_the_normal_form(name: str) -> None:
    assert name_split_of(name) == name_split_of(normalise(name))
    assert name_split_of(name) in SPLITS


def test_unknown_split_raises() -> None:
    with pytest.raises(ConfigError, match="name_split"):
        Filler("en", seed=0, name_split="holdout")


# --- shapes -------------------------------------------------------------------------------------


def test_caps_shape_is_upper_case() -> None:
    filler = Filler("en", seed=4)
    for _ in range(20):
        text = filler.value(Category.PERSON, variant="caps").text
        assert text == text.upper() and text != text.lower()


def test_initials_shape_starts_with_an_initial() -> None:
    filler = Filler("sw", seed=4)
    for _ in range(20):
        first = filler.value(Category.PERSON, variant="initials").text.split()[0]
        assert len(first) == 2 and first.endswith(".") and first[0].isupper()


def test_single_shape_is_one_word() -> None:
    filler = Filler("lg", seed=4)
    assert all(
        len(filler.value(Category.PERSON, variant="single").text.split()) == 1 for _ in range(20)
    )


def test_title_shape_uses_a_title_of_the_language() -> None:
    filler = Filler("sw", seed=4)
    titles = {"Bw", "Bwana", "Bi", "Bibi", "Mama", "Baba", "Dkt", "Daktari", "Dr", "Mwl", "Mwalimu"}
    titles |= {"Mzee", "Sista"}
    for _ in range(20):
        assert filler.value(Category.PERSON, variant="title").text.split()[0] in titles


def test_chinese_names_have_no_spaces_and_titles_follow() -> None:
    filler = Filler("zh", seed=4)
    assert " " not in filler.value(Category.PERSON, variant="full").text
    titled = filler.value(Category.PERSON, variant="title").text
    assert " " not in titled and len(titled) >= 3


def test_hyphenated_and_apostrophe_shapes() -> None:
    filler = Filler("en", seed=4)
    assert all("-" in filler.value(Category.PERSON, variant="hyphenated").text for _ in range(10))
    assert all(
        "'" in v or "’" in v
        for v in (filler.value(Category.PERSON, variant="apostrophe").text for _ in range(10))
    )


def test_family_first_order_in_vietnamese() -> None:
    filler = Filler("vi", seed=4)
    for _ in range(10):
        assert len(filler.value(Category.PERSON, variant="full").text.split()) == 3


@pytest.mark.parametrize(
    ("lang", "variant"), [("zh", "initials"), ("zh", "caps"), ("ar", "hyphenated")]
)
def test_shape_outside_the_convention_raises(lang: str, variant: str) -> None:
    with pytest.raises(ConfigError, match="not a convention"):
        Filler(lang, seed=0).value(Category.PERSON, variant=variant)


@pytest.mark.parametrize("lang", LANGS)
def test_every_language_draws_names(lang: str) -> None:
    filler = Filler(lang, seed=2)
    for shape in filler.name_shapes():
        assert filler.value(Category.PERSON_THIRD_PARTY, variant=shape).text.strip()


def test_phone_formats() -> None:
    filler = Filler("en", country="GB", seed=6)
    assert filler.value(Category.CONTACT_PHONE, variant="international").text.startswith("+44 ")
    e164 = filler.value(Category.CONTACT_PHONE, variant="e164").text
    assert e164.startswith("+44") and e164[1:].isdigit()
    assert filler.value(Category.CONTACT_PHONE, variant="national").text.startswith("0")


def test_us_dates_are_month_first() -> None:
    filler = Filler("en", country="US", seed=6)
    for _ in range(20):
        text = filler.value(Category.DATE, variant="numeric").text
        assert int(text[:2]) <= 12 and int(text[3:5]) <= 28


def test_context_prefixes_come_from_the_language() -> None:
    value = Filler("sw", seed=1).value(Category.CONTACT_PHONE)
    assert value.context_prefix in {
        "simu",
        "namba ya simu",
        "nambari ya simu",
        "namba za simu",
        "simu ya mkononi",
        "simu ya kiganjani",
        "rununu",
        "namba ya mawasiliano",
        "mawasiliano",
        "piga simu",
        "piga",
        "tel",
    }


def test_places_and_clans() -> None:
    lg = Filler("lg", seed=1)
    for cat in (
        Category.PERSON_CLAN,
        Category.LOCATION_VILLAGE,
        Category.LOCATION_FACILITY,
        Category.LOCATION_ADDRESS,
        Category.ORGANIZATION,
    ):
        assert lg.value(cat).text.strip()


def test_repr_hides_the_value() -> None:
    value = Filler("en", seed=1).value(Category.PERSON, variant="full")
    assert value.text not in repr(value)


# --- unsupported --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "category", [Category.PROFESSION, Category.TRIBE, Category.RELIGION, Category.SEX]
)
def test_categories_without_data_raise(category: Category) -> None:
    with pytest.raises(ConfigError, match="no filler"):
        Filler("sw", seed=0).value(category)


@pytest.mark.parametrize(
    ("lang", "category"),
    [
        ("en", Category.PERSON_CLAN),  # no clan list
        ("nl", Category.PERSON_CLAN),  # no clan list
        ("zh", Category.LOCATION_ADDRESS),  # CN places.toml has no street patterns
        ("am", Category.ORGANIZATION),  # ET places.toml has no organisation patterns
    ],
)
def test_missing_locale_data_raises(lang: str, category: Category) -> None:
    with pytest.raises(ConfigError):
        Filler(lang, seed=0).value(category)


def test_unknown_variant_raises() -> None:
    with pytest.raises(ConfigError, match="unknown variant"):
        Filler("en", seed=0).value(Category.DATE, variant="roman")


def test_labelled_national_id_without_words_is_not_silent() -> None:
    with pytest.raises(ConfigError):
        Filler("am", seed=0).value(Category.ID_NATIONAL, variant="format")
