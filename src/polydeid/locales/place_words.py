"""The language-level ``places.toml`` locale data kind: how a language writes place names
around them (the country-level ``places.toml`` of place lists is :mod:`polydeid.locales.places`).

``locales/languages/<code>/places.toml`` (every table optional)::

    [meta]   sources, licence
    [heads]  before = heads written right before a place's name and part of it
             ("county ma" in Dholuo "County ma Siaya")
    [words]  conjunctions = words that never end a place ("gi", "kod": and, with)

:func:`place_words` reads it into a :class:`PlaceWords`; words are kept as written.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from polydeid.locales import _schema as schema
from polydeid.locales import language_data


@dataclass(frozen=True, slots=True)
class PlaceWords:
    """The place words of one language pack; empty without a ``places.toml``."""

    code: str
    heads_before: tuple[str, ...] = ()
    conjunctions: tuple[str, ...] = ()


@cache
def place_words(code: str) -> PlaceWords:
    """The :class:`PlaceWords` of language ``code`` (a canonical code); validated, cached."""
    raw = language_data(code, "places")
    file = f"languages/{code}/places.toml"
    heads = schema.table(raw, "heads", file)
    words = schema.table(raw, "words", file)
    return PlaceWords(
        code=code,
        heads_before=schema.strings(heads, "before", file, "heads."),
        conjunctions=schema.strings(words, "conjunctions", file, "words."),
    )
