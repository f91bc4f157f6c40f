"""Name and place pools for surrogates, read from the locale data files.

``locales/languages/<code>/names.toml``::

    [meta]      sources, licence
    [format]    order = "given_first" | "family_first"; joiner = " " ("" for Chinese);
                family_words = how many final words are surnames in a 3+ word name (2 for Spanish);
                titles = honorifics kept as written ("Dr", "Bw", "Frau")
    [default]   given_male, given_female, family; optional family_male/family_female
                (gendered surnames), middle_male/middle_female (Vietnamese), clans
    [countries.<CC>]  the same lists for names as written in that country (optional)

``locales/countries/<CC>/places.toml``::

    [meta]      sources, licence
    [places]    named lists from the smallest division to the largest: villages, parishes,
                subcounties, districts, cities, regions, … (a name in several lists counts as
                the largest)
    [streets]   names = street names; patterns = address patterns with {street} and {number}
    [facilities] patterns with {place} (e.g. "{place} Health Centre III"); names = real ones
    [organizations] patterns with {place}
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from polydeid.locales import canonical_language, country_data, language_data, language_info
from polydeid.transform.normalise import normalise

_NAME_LISTS = (
    "given_male",
    "given_female",
    "family",
    "family_male",
    "family_female",
    "middle_male",
    "middle_female",
    "clans",
)

#: Language whose names stand in when a name is written in another script than the segment's.
SCRIPT_LANGUAGE: Mapping[str, str] = {
    "Latin": "en",
    "Cyrillic": "ru",
    "Arabic": "ar",
    "Devanagari": "hi",
    "Ethiopic": "am",
    "Han": "zh",
}

_UNICODE_SCRIPT = {"CJK": "Han", **{s.upper(): s for s in SCRIPT_LANGUAGE}}

#: Preference order of place lists when the original is found in none of them.
PLACE_PREFERENCE = ("villages", "localities", "parishes", "wards", "cities", "districts", "regions")


@dataclass(frozen=True, slots=True)
class NameLookup:
    """Normalised name sets that tell a word's role and gender."""

    female: frozenset[str]
    male: frozenset[str]
    surnames: frozenset[str]
    given_names: frozenset[str]

    @classmethod
    def of(cls, pools: Sequence[NamePool]) -> NameLookup:
        def keys(*lists: str) -> set[str]:
            return {normalise(n) for p in pools for attr in lists for n in getattr(p, attr)}

        female = keys("given_female", "family_female")
        male = keys("given_male", "family_male")
        surnames = keys("family", "family_male", "family_female")
        given = keys("given_female", "given_male")
        only_female, only_male = frozenset(female - male), frozenset(male - female)
        return cls(only_female, only_male, frozenset(surnames), frozenset(given))

    def role(self, word: str) -> str | None:
        """``family`` or ``given`` when the word is known as only one of them."""
        key = normalise(word)
        if key in self.surnames and key not in self.given_names:
            return "family"
        if key in self.given_names and key not in self.surnames:
            return "given"
        return None

    def gender(self, word: str) -> bool | None:
        """True for female, False for male, None when unknown or ambiguous."""
        key = normalise(word)
        return True if key in self.female else False if key in self.male else None


@dataclass(frozen=True, slots=True)
class NamePool:
    """Given, middle and family names of one language (optionally as used in one country)."""

    given_male: tuple[str, ...]
    given_female: tuple[str, ...]
    family: tuple[str, ...]
    family_male: tuple[str, ...]
    family_female: tuple[str, ...]
    middle_male: tuple[str, ...]
    middle_female: tuple[str, ...]
    clans: tuple[str, ...]

    def given(self, female: bool) -> tuple[str, ...]:
        own = self.given_female if female else self.given_male
        return own or self.given_male or self.given_female

    def surname(self, female: bool) -> tuple[str, ...]:
        gendered = self.family_female if female else self.family_male
        return gendered or self.family or self.given(female)

    def middle(self, female: bool) -> tuple[str, ...]:
        return (self.middle_female if female else self.middle_male) or self.given(female)


@dataclass(frozen=True, slots=True)
class NameData:
    """The names of one language: format, pools, and lookup sets for role and gender."""

    lang: str
    script: str
    family_first: bool
    family_words: int
    joiner: str
    titles: frozenset[str]
    default: NamePool
    by_country: Mapping[str, NamePool]
    lookups: Mapping[str, NameLookup]

    def pool_key(self, countries: Sequence[str]) -> str:
        """The country pool to use for ``countries`` (``"default"`` when none has one)."""
        for cc in countries:
            if cc.upper() in self.by_country:
                return cc.upper()
        return "default"

    def pool(self, countries: Sequence[str]) -> NamePool:
        key = self.pool_key(countries)
        return self.default if key == "default" else self.by_country[key]

    def lookup_chain(self, countries: Sequence[str]) -> tuple[NameLookup, ...]:
        """The pool's own lookup first, then the lookup over every pool of the language."""
        return (self.lookups[self.pool_key(countries)], self.lookups["*"])


@dataclass(frozen=True, slots=True)
class PlaceData:
    """The place lists and patterns of one country."""

    country: str
    lists: Mapping[str, tuple[str, ...]]
    streets: tuple[str, ...]
    address_patterns: tuple[str, ...]
    facility_patterns: tuple[str, ...]
    facility_names: tuple[str, ...]
    organization_patterns: tuple[str, ...]
    lookup: Mapping[str, str]

    @property
    def places(self) -> tuple[str, ...]:
        """Small named places to fill ``{place}`` in patterns."""
        for kind in ("villages", "localities", "cities", "districts"):
            if self.lists.get(kind):
                return self.lists[kind]
        return next((values for values in self.lists.values() if values), ())

    def list_for(self, original: str) -> tuple[str, ...]:
        """The list the original belongs to, else the most local list in the original's script."""
        known = self.lookup.get(normalise(original))
        script = script_of(original)
        fallback: tuple[str, ...] = ()
        for kind in (known,) if known else (*PLACE_PREFERENCE, *self.lists):
            values = self.lists.get(kind, ())
            same_script = tuple(v for v in values if script_of(v) == script)
            if same_script:
                return same_script
            fallback = fallback or values
        return fallback


def script_of(text: str) -> str | None:
    """The script of the first letter of ``text`` (``"Latin"``, ``"Han"``, …), if known."""
    for ch in text:
        if ch.isalpha():
            word = unicodedata.name(ch, "").split(" ", 1)[0]
            return _UNICODE_SCRIPT.get(word)
    return None


@cache
def name_data(lang: str) -> NameData | None:
    """Names of language ``lang``, or None when its pack ships no ``names.toml``."""
    code = canonical_language(lang)
    raw = language_data(code, "names")
    if not raw:
        return None
    fmt = raw.get("format", {})
    default = _pool(raw.get("default", {}))
    by_country = {cc.upper(): _pool(t) for cc, t in raw.get("countries", {}).items()}
    lookups = {
        "default": NameLookup.of([default]),
        "*": NameLookup.of([default, *by_country.values()]),
    }
    lookups.update({cc: NameLookup.of([pool]) for cc, pool in by_country.items()})
    return NameData(
        lang=code,
        script=language_info(code).script,
        family_first=fmt.get("order", "given_first") == "family_first",
        family_words=int(fmt.get("family_words", 1)),
        joiner=fmt.get("joiner", " "),
        titles=frozenset(normalise(t).rstrip(".") for t in fmt.get("titles", ())),
        default=default,
        by_country=by_country,
        lookups=lookups,
    )


@cache
def place_data(country: str) -> PlaceData | None:
    """Places of country ``country``, or None when it ships no ``places.toml``."""
    raw = country_data(country.upper(), "places")
    if not raw:
        return None
    lists = {k: _names(v) for k, v in raw.get("places", {}).items()}
    lookup: dict[str, str] = {}
    for kind in lists:  # later (larger) divisions win: "Abim" is a district before a village
        for name in lists[kind]:
            lookup[normalise(name)] = kind
    streets, facilities, orgs = (raw.get(k, {}) for k in ("streets", "facilities", "organizations"))
    return PlaceData(
        country=country.upper(),
        lists=lists,
        streets=_names(streets.get("names", ())),
        address_patterns=_names(streets.get("patterns", ())),
        facility_patterns=_names(facilities.get("patterns", ())),
        facility_names=_names(facilities.get("names", ())),
        organization_patterns=_names(orgs.get("patterns", ())),
        lookup=lookup,
    )


def _pool(table: Mapping[str, Any]) -> NamePool:
    return NamePool(**{k: _names(table.get(k, ())) for k in _NAME_LISTS})


def _names(values: Any) -> tuple[str, ...]:
    return tuple(dict.fromkeys(str(v).strip() for v in values if str(v).strip()))
