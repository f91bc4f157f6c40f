"""The places of a country (``countries/<CC>/places.toml``): lists, streets, facility and
organisation patterns, for surrogates and synthetic notes.

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

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache

from polydeid.locales import country_data
from polydeid.locales.names import names_of, script_of
from polydeid.text.normalise import normalise

#: Preference order of place lists when the original is found in none of them.
PLACE_PREFERENCE = ("villages", "localities", "parishes", "wards", "cities", "districts", "regions")


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


@cache
def place_data(country: str) -> PlaceData | None:
    """Places of country ``country``, or None when it ships no ``places.toml``."""
    raw = country_data(country.upper(), "places")
    if not raw:
        return None
    lists = {k: names_of(v) for k, v in raw.get("places", {}).items()}
    lookup: dict[str, str] = {}
    for kind in lists:  # later (larger) divisions win: "Abim" is a district before a village
        for name in lists[kind]:
            lookup[normalise(name)] = kind
    streets, facilities, orgs = (raw.get(k, {}) for k in ("streets", "facilities", "organizations"))
    return PlaceData(
        country=country.upper(),
        lists=lists,
        streets=names_of(streets.get("names", ())),
        address_patterns=names_of(streets.get("patterns", ())),
        facility_patterns=names_of(facilities.get("patterns", ())),
        facility_names=names_of(facilities.get("names", ())),
        organization_patterns=names_of(orgs.get("patterns", ())),
        lookup=lookup,
    )
