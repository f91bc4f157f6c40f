"""The names.toml and places.toml data files: provenance, shape, and sizes."""

import pytest

from polydeid.locales import country_data, language_data, languages
from polydeid.locales.names import name_data, script_of
from polydeid.locales.places import place_data

REQUIRED_COUNTRIES = ("UG", "KE", "RW", "TZ", "DE", "ES", "FR", "VN", "US", "GB")


def check_meta(raw):
    meta = raw["meta"]
    assert meta["sources"] and all(isinstance(s, str) and s for s in meta["sources"])
    assert meta["licence"]


@pytest.mark.parametrize("lang", languages())
def test_every_language_ships_names(lang):
    raw = language_data(lang, "names")
    check_meta(raw)
    data = name_data(lang)
    pool = data.default
    assert len(pool.given(True)) >= 20 and len(pool.given(False)) >= 20
    assert len(pool.surname(False)) >= 20 and len(pool.surname(True)) >= 20
    scripts = {script_of(n) for n in (*pool.given_male, *pool.given_female, *pool.family)}
    assert scripts == {data.script}, scripts
    for table in [pool, *data.by_country.values()]:
        for values in (table.given_male, table.given_female, table.family):
            assert len(values) == len(set(values)) and len(values) <= 1200


@pytest.mark.parametrize("country", REQUIRED_COUNTRIES)
def test_required_countries_ship_places(country):
    raw = country_data(country, "places")
    check_meta(raw)
    data = place_data(country)
    assert sum(len(v) for v in data.lists.values()) >= 40
    assert data.places and data.streets and data.address_patterns and data.facility_patterns
    for pattern in data.facility_patterns:
        assert "{place}" in pattern
    for pattern in data.address_patterns:
        assert "{street}" in pattern and "{number}" in pattern
    assert sum(len(v) for v in data.lists.values()) <= 6000


def test_east_african_places_are_local():
    assert "Wakiso" in place_data("UG").lists["districts"]
    assert "Gasabo" in place_data("RW").lists["districts"]
    assert "Mombasa" in place_data("KE").lists["counties"]
    assert "Arusha" in place_data("TZ").lists["regions"]
