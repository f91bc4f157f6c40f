"""The ``identifiers.toml`` locale data kind: the labels a language writes before identifiers.

``locales/languages/<code>/identifiers.toml`` (every table optional)::

    [meta]         sources, licence
    [national_id]  words = national-ID labels ("NIN", "Kitambulisho")
    [record]       words = record-number labels ("MRN", "IP No.")
    [passport]     words = passport labels
    [insurance]    words = insurance-number labels
    [licence]      words = licence labels
    [postal_code]  words = postal-code labels ("PLZ", "CP")
    [fillers]      words = words that may stand between a label and its value ("No.", "ni")

:func:`identifier_words` reads it into an :class:`IdentifierWords`; words are kept as written.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from polydeid.locales import _schema as schema
from polydeid.locales import language_data

#: The tables of labels, each naming a kind of identifier.
LABEL_TABLES = ("national_id", "record", "passport", "insurance", "licence", "postal_code")


@dataclass(frozen=True, slots=True)
class IdentifierWords:
    """The identifier labels of one language pack; empty without an ``identifiers.toml``."""

    code: str
    national_id: tuple[str, ...] = ()
    record: tuple[str, ...] = ()
    passport: tuple[str, ...] = ()
    insurance: tuple[str, ...] = ()
    licence: tuple[str, ...] = ()
    postal_code: tuple[str, ...] = ()
    fillers: tuple[str, ...] = ()

    def words(self, table: str) -> tuple[str, ...]:
        """The words of ``table`` (one of :data:`LABEL_TABLES` or ``fillers``; else empty)."""
        return getattr(self, table) if table in (*LABEL_TABLES, "fillers") else ()


@cache
def identifier_words(code: str) -> IdentifierWords:
    """The :class:`IdentifierWords` of language ``code`` (a canonical code); validated, cached."""
    raw = language_data(code, "identifiers")
    file = f"languages/{code}/identifiers.toml"

    def words(table: str) -> tuple[str, ...]:
        return schema.strings(schema.table(raw, table, file), "words", file, f"{table}.")

    return IdentifierWords(
        code=code,
        national_id=words("national_id"),
        record=words("record"),
        passport=words("passport"),
        insurance=words("insurance"),
        licence=words("licence"),
        postal_code=words("postal_code"),
        fillers=words("fillers"),
    )
