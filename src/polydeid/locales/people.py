"""The ``people.toml`` locale data kind: a country's ethnic groups (tribes) as its records
write them.

``locales/countries/<CC>/people.toml``::

    [meta]    sources, licence, description; recorded = whether the country's records note
              a person's ethnic group at all (true when absent)
    [people]  tribes = the groups as written (masculine or unmarked forms); tribes_female =
              feminine forms in the same order, where the language has them (not read yet)

:func:`country_people` reads it into a :class:`People`.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from polydeid.core.errors import ConfigError
from polydeid.locales import _schema as schema
from polydeid.locales import country_data


@dataclass(frozen=True, slots=True)
class People:
    """The ethnic groups of one country; empty without a ``people.toml``."""

    country: str
    #: whether the country's records note a person's ethnic group
    recorded: bool = True
    tribes: tuple[str, ...] = ()


@cache
def country_people(country: str) -> People:
    """The :class:`People` of country ``country`` (ISO alpha-2); validated, cached."""
    cc = country.upper()
    raw = country_data(cc, "people")
    file = f"countries/{cc}/people.toml"
    recorded = schema.table(raw, "meta", file).get("recorded", True)
    if not isinstance(recorded, bool):
        raise ConfigError("expected true or false", location=schema.at(file, "meta.recorded"))
    people = schema.table(raw, "people", file)
    return People(
        country=cc,
        recorded=recorded,
        tribes=schema.strings(people, "tribes", file, "people."),
    )
