"""The language-level ``places.toml`` locale data kind: how a language writes place names
around them (the country-level ``places.toml`` of place lists is :mod:`polydeid.locales.places`).

``locales/languages/<code>/places.toml`` (every table optional)::

    [meta]     sources, licence
    [heads]    before = heads written right before a place's name and part of it
               ("county ma" in Dholuo "County ma Siaya")
    [words]    nouns_capitalised = whether the language capitalises every noun (German), so
               that a capital letter does not make a common word a name;
               german_nouns = whether its common nouns are read from ``german-nouns``
               (Wiktionary's German nouns) instead of word frequencies;
               joiners = words that join the parts of a longer name ("of", "de", "ya":
               "Afrika ya Kati"); organisations = nouns that open an organisation's name
               ("university", "tribunal", "chuo kikuu"), whose place is the organisation's
    [context]  before = locative words written right before a place ("e", "mu", "in", "bei",
               "tại"); attached = locative prefixes written joined to the place (Amharic "በ");
               people = those of them that stand before people's names as often ("to",
               "from", "à", "bei"): no context for a place that is also a person's name
    [facility] before = facility words written before a place that names the facility
               ("hospitali ya", "kituo cha afya"; context, not part of the name);
               after = facility words written after it and part of the facility's name
               ("Hospital", "Health Centre IV")
    [streets]  number_marks = marks written between a street and its house number ("nº",
               "n°", "no.": "Calle Mayor nº 12")

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
    nouns_capitalised: bool = False
    german_nouns: bool = False
    joiners: tuple[str, ...] = ()
    organisations: tuple[str, ...] = ()
    locatives: tuple[str, ...] = ()
    attached: tuple[str, ...] = ()
    people: tuple[str, ...] = ()
    facility_before: tuple[str, ...] = ()
    facility_after: tuple[str, ...] = ()
    number_marks: tuple[str, ...] = ()


@cache
def place_words(code: str) -> PlaceWords:
    """The :class:`PlaceWords` of language ``code`` (a canonical code); validated, cached."""
    raw = language_data(code, "places")
    file = f"languages/{code}/places.toml"
    heads = schema.table(raw, "heads", file)
    words = schema.table(raw, "words", file)
    context = schema.table(raw, "context", file)
    facility = schema.table(raw, "facility", file)
    streets = schema.table(raw, "streets", file)
    return PlaceWords(
        code=code,
        heads_before=schema.strings(heads, "before", file, "heads."),
        nouns_capitalised=schema.flag(words, "nouns_capitalised", file, "words."),
        german_nouns=schema.flag(words, "german_nouns", file, "words."),
        joiners=schema.strings(words, "joiners", file, "words."),
        organisations=schema.strings(words, "organisations", file, "words."),
        locatives=schema.strings(context, "before", file, "context."),
        attached=schema.strings(context, "attached", file, "context."),
        people=schema.strings(context, "people", file, "context."),
        facility_before=schema.strings(facility, "before", file, "facility."),
        facility_after=schema.strings(facility, "after", file, "facility."),
        number_marks=schema.strings(streets, "number_marks", file, "streets."),
    )
