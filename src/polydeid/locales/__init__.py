"""Language and country packs: data files only, read by rules, surrogates and the generator.

Layout::

    locales/languages/<code>/language.toml   name, ISO codes, aliases, script, countries (required)
    locales/languages/<code>/<kind>.toml     dates, ages, context, facts, names, … (optional)
    locales/countries/<CC>/<kind>.toml       ids, phones, places, facilities, … (optional)

Every data file starts with a ``[meta]`` table naming its sources and licence, and is validated
against the schema of its kind when it is read (:mod:`polydeid.locales._schema`): an unknown
key, a value of the wrong type, a file of an unknown kind or a missing required file (see
``REQUIRED_LANGUAGE_KINDS``) is a :class:`~polydeid.core.errors.DataFileError` naming the file
and the key, never a table read as empty.
Canonical language codes are ISO 639-1 where one exists (``lg``, ``sw``, ``rw``) and
ISO 639-3 otherwise (``luo``); ISO 639-3 and common names are accepted as aliases.
"""

from __future__ import annotations

import hashlib
import math
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from importlib.abc import Traversable
from typing import Any

from polydeid.core.cache import load_table, store_table
from polydeid.core.errors import (
    ConfigError,
    DataFileError,
    UnknownCountryError,
    UnknownLanguageError,
)
from polydeid.core.segments import Segment
from polydeid.locales import _schema

_ROOT = resources.files("polydeid.locales")


@dataclass(frozen=True, slots=True)
class LanguageInfo:
    code: str
    name: str
    iso639_1: str | None
    iso639_3: str
    script: str
    countries: tuple[str, ...]
    aliases: tuple[str, ...]


def _read_toml(path: Traversable, schema: Any, file: str) -> dict[str, Any]:
    """The table of the data file at ``path`` (``file``: its name under the locales folder),
    validated against ``schema``. A file's parsed table is kept in polydeid's cache by the
    digest of its text (:mod:`polydeid.core.cache`) and read from there while it is unchanged:
    ``tomllib`` is pure Python, and a process that reads many languages parses a few hundred
    files."""
    text = path.read_text("utf-8")
    stamp = hashlib.sha256(text.encode("utf-8")).hexdigest()
    raw = load_table(_PARSED, file, stamp)
    if not isinstance(raw, dict):
        try:
            raw = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise ConfigError(f"malformed locale data file: {exc}", location=str(path)) from None
        if _json_plain(raw):
            store_table(_PARSED, file, stamp, raw)
    _schema.validate(raw, schema, file)
    return raw


#: The cache's kind for parsed data files.
_PARSED = "locale-toml"


def _json_plain(value: Any) -> bool:
    """Whether ``value`` reads back from JSON as it is: tables with string keys, lists,
    strings, booleans, integers and finite floats (a TOML date is not kept)."""
    if isinstance(value, dict):
        return all(isinstance(k, str) and _json_plain(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_json_plain(v) for v in value)
    if isinstance(value, float):
        return math.isfinite(value)
    return isinstance(value, str | bool | int)


def check_data(raw: dict[str, Any], file: str, *, location: str | None = None) -> dict[str, Any]:
    """``raw``, the table of the data file ``file`` (``lexicon/data/fields.toml``, a name in
    :data:`~polydeid.locales._schema.TABLES`), once it fits its schema: for the readers of the
    lexicon and format tables and the tagger's router. ``location``: where that file is, when
    not shipped (the errors name it)."""
    _schema.validate(raw, _schema.schema_of(_schema.TABLES, file, file), location or file)
    return raw


@cache
def languages() -> tuple[str, ...]:
    """Canonical codes of every language with a pack."""
    folder = _ROOT / "languages"
    return tuple(sorted(p.name for p in folder.iterdir() if (p / "language.toml").is_file()))


@cache
def _alias_table() -> dict[str, str]:
    table: dict[str, str] = {}
    for code in languages():
        info = language_info(code)
        for alias in (code, info.iso639_3, info.iso639_1, info.name, *info.aliases):
            if alias:
                table[alias.lower()] = code
    return table


def canonical_language(code: str) -> str:
    """The canonical code for ``code`` (``"lug"`` → ``"lg"``); raises for unknown languages."""
    key = code.strip().lower().replace("_", "-")
    table = _alias_table()
    if key in table:
        return table[key]
    base = key.split("-")[0]
    if base in table:
        return table[base]
    raise UnknownLanguageError(code, known=languages())


@cache
def language_info(code: str) -> LanguageInfo:
    folder = _ROOT / "languages" / code
    if not (folder / "language.toml").is_file():
        raise UnknownLanguageError(code, known=languages())
    raw = _read_toml(
        folder / "language.toml", _schema.LanguageFile, f"languages/{code}/language.toml"
    )
    return LanguageInfo(
        code=code,
        name=raw["name"],
        iso639_1=raw.get("iso639_1") or None,
        iso639_3=raw["iso639_3"],
        script=raw["script"],
        countries=tuple(raw.get("countries", ())),
        aliases=tuple(raw.get("aliases", ())),
    )


@cache
def language_data(code: str, kind: str) -> dict[str, Any]:
    """The ``<kind>.toml`` table of language ``code``; empty when the pack has none."""
    file = f"languages/{code}/{kind}.toml"
    schema = _schema.schema_of(_schema.LANGUAGE_KINDS, kind, file)
    path = _ROOT / "languages" / code / f"{kind}.toml"
    if path.is_file():
        return _read_toml(path, schema, file)
    if kind in _schema.REQUIRED_LANGUAGE_KINDS and (_ROOT / "languages" / code).is_dir():
        raise DataFileError("the language pack lacks a required data file", location=file)
    return {}


@cache
def shared_data(kind: str) -> dict[str, Any]:
    """The language-independent ``<kind>.toml`` table at the locales root; empty when absent."""
    file = f"{kind}.toml"
    schema = _schema.schema_of(_schema.SHARED_KINDS, kind, file)
    path = _ROOT / file
    return _read_toml(path, schema, file) if path.is_file() else {}


@cache
def countries() -> tuple[str, ...]:
    folder = _ROOT / "countries"
    return tuple(sorted(p.name for p in folder.iterdir() if p.is_dir()))


@cache
def country_data(country: str, kind: str) -> dict[str, Any]:
    """The ``<kind>.toml`` table of country ``country`` (ISO alpha-2); empty when absent."""
    file = f"countries/{country.upper()}/{kind}.toml"
    schema = _schema.schema_of(_schema.COUNTRY_KINDS, kind, file)
    path = _ROOT / file
    return _read_toml(path, schema, file) if path.is_file() else {}


@cache
def known_countries() -> frozenset[str]:
    """ISO 3166 alpha-2 codes a record may name as its country: the regions of phonenumbers'
    numbering plans (``XX``, the folder of international formats, is none)."""
    import phonenumbers

    return frozenset(phonenumbers.SUPPORTED_REGIONS)


def canonical_country(code: str) -> str:
    """``code`` upper-cased (``"ke"`` → ``"KE"``); UnknownCountryError for a code that is no
    known country, so that a run refuses it before reading any record."""
    key = code.strip().upper() if isinstance(code, str) else ""
    if key not in known_countries():
        raise UnknownCountryError(code if isinstance(code, str) else "")
    return key


def default_countries(lang: str) -> tuple[str, ...]:
    """Countries whose conventions apply to text in ``lang`` by default."""
    return language_info(canonical_language(lang)).countries


def segment_languages(segment: Segment, *, with_english: bool = True) -> Sequence[str]:
    """The segment's language, then the languages of its other parts when it mixes languages
    (``Segment.stretches``, so that a transform reads a date or age written in any of them),
    plus English (clinical text mixes in English terms)."""
    langs = [canonical_language(segment.lang)]
    langs += [canonical_language(s.lang) for s in segment.stretches]
    if with_english:
        langs.append("en")
    return tuple(dict.fromkeys(langs))


def segment_countries(segment: Segment) -> Sequence[str]:
    """The segment's countries, or its language's default countries."""
    return segment.countries or default_countries(segment.lang)
