"""The ``names_heldout.toml`` locale data kind: names kept out of every ``names.toml``, for
unseen-name evaluation (:mod:`polydeid.evaluate.disjoint`).

``locales/languages/<code>/names_heldout.toml``::

    [meta]     sources, licence, description
    [default]  given_male, given_female, family; optional family_female, clans

:func:`heldout_pool` reads it into a :class:`HeldOutPool`: names stripped, blanks dropped,
first occurrence kept (:func:`polydeid.locales.names.names_of`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from polydeid.locales import _schema as schema
from polydeid.locales import language_data
from polydeid.locales.names import names_of


@dataclass(frozen=True, slots=True)
class HeldOutPool:
    """The ``[default]`` held-out names of one language pack."""

    code: str
    given_male: tuple[str, ...] = ()
    given_female: tuple[str, ...] = ()
    family: tuple[str, ...] = ()
    family_female: tuple[str, ...] = ()
    clans: tuple[str, ...] = ()


@cache
def heldout_pool(code: str) -> HeldOutPool | None:
    """The :class:`HeldOutPool` of language ``code`` (a canonical code), or None when its pack
    ships no (or an empty) ``[default]`` table; validated, cached."""
    raw = language_data(code, "names_heldout")
    file = f"languages/{code}/names_heldout.toml"
    table = schema.table(raw, "default", file)
    if not table:
        return None

    def names(key: str) -> tuple[str, ...]:
        return names_of(schema.strings(table, key, file, "default."))

    return HeldOutPool(
        code=code,
        given_male=names("given_male"),
        given_female=names("given_female"),
        family=names("family"),
        family_female=names("family_female"),
        clans=names("clans"),
    )
