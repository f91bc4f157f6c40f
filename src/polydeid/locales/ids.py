"""The ``ids.toml`` locale data kind: a country's identifier formats.

``locales/countries/<CC>/ids.toml`` (``XX``, a user-assigned ISO 3166 code, holds what belongs
to no single country: IBAN, payment cards, the labelled kinds and the record settings)::

    [meta]        sources, licence
    [[format]]    name, label (a category), starts ("digit" | "letter": the first character of
                  every match), pattern (no capturing groups), validator (a validator name or
                  "stdnum:<module>"), checksum (bool), context ("none" | "required"), optional
                  labels and score, and whatever parameters its validator reads (iin,
                  min_year, provinces, …)
    [[labelled]]  (XX) name, kind (a label table of identifiers.toml), label (a category),
                  value (a pattern the token after the label must match in full), min_digits,
                  optional score
    [records]     (XX) value, min_digits, prefix_score, structure (a pattern), structure_score,
                  min_year, max_year, not_prefixes

:func:`country_ids` reads it into a :class:`CountryIds`. Patterns are kept as strings and
validators as names: :mod:`polydeid.detect.rules.ids` compiles them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from polydeid.core.errors import ConfigError
from polydeid.core.taxonomy import Category
from polydeid.locales import _schema as schema
from polydeid.locales import country_data
from polydeid.locales.identifiers import LABEL_TABLES

#: Country folder holding the international formats, labelled kinds and record settings.
INTERNATIONAL = "XX"
#: Default score of a format or labelled kind that gives none.
DEFAULT_SCORE = 0.9


@dataclass(frozen=True, slots=True)
class IdFormatSpec:
    """One ``[[format]]`` table."""

    country: str
    name: str
    label: Category
    starts: str
    pattern: str
    validator: str
    checksum: bool
    #: whether the format counts only as the value of a national-ID label (``context``)
    needs_context: bool
    labels: tuple[str, ...]
    score: float
    #: the table as written: the parameters its validator reads
    params: Mapping[str, Any] = field(repr=False)


@dataclass(frozen=True, slots=True)
class LabelledSpec:
    """One ``[[labelled]]`` table: an identifier known by the label before it."""

    name: str
    kind: str
    label: Category
    value: str
    min_digits: int
    score: float


@dataclass(frozen=True, slots=True)
class RecordSpec:
    """The ``[records]`` table: the shape of record numbers."""

    value: str
    min_digits: int
    prefix_score: float
    structure: str
    structure_score: float
    min_year: int
    max_year: int
    not_prefixes: frozenset[str]


@dataclass(frozen=True, slots=True)
class CountryIds:
    """The identifier data of one country; empty without an ``ids.toml``."""

    country: str
    formats: tuple[IdFormatSpec, ...] = ()
    labelled: tuple[LabelledSpec, ...] = ()
    records: RecordSpec | None = None


def _category(raw: Mapping[str, Any], where: str) -> Category:
    try:
        return Category.parse(schema.string(raw, "label", where))
    except ConfigError as exc:
        raise exc.at(where) from None


def read_format(country: str, raw: Mapping[str, Any], where: str) -> IdFormatSpec:
    """One ``[[format]]`` table ``raw`` of ``country``, checked (``where`` locates errors)."""
    context = raw.get("context", "none")
    starts = raw.get("starts")
    if context not in ("none", "required") or starts not in ("digit", "letter"):
        raise ConfigError("context must be none|required and starts digit|letter", location=where)
    return IdFormatSpec(
        country=country,
        name=_required(raw, "name", where),
        label=_category(raw, where),
        starts=starts,
        pattern=_required(raw, "pattern", where),
        validator=_required(raw, "validator", where),
        checksum=schema.flag(raw, "checksum", where),
        needs_context=context == "required",
        labels=schema.strings(raw, "labels", where),
        score=schema.number(raw, "score", where, default=DEFAULT_SCORE),
        params=schema.frozen(raw),
    )


def read_labelled(raw: Mapping[str, Any], where: str) -> LabelledSpec:
    """One ``[[labelled]]`` table ``raw``, checked."""
    kind = raw.get("kind")
    if kind not in LABEL_TABLES:
        raise ConfigError(f"labelled kind must be one of {', '.join(LABEL_TABLES)}", location=where)
    return LabelledSpec(
        name=_required(raw, "name", where),
        kind=kind,
        label=_category(raw, where),
        value=_required(raw, "value", where),
        min_digits=schema.integer(raw, "min_digits", where),
        score=schema.number(raw, "score", where, default=DEFAULT_SCORE),
    )


def read_records(raw: Mapping[str, Any], where: str) -> RecordSpec:
    """The ``[records]`` table ``raw``, checked."""
    return RecordSpec(
        value=_required(raw, "value", where),
        min_digits=schema.integer(raw, "min_digits", where),
        prefix_score=schema.number(raw, "prefix_score", where),
        structure=_required(raw, "structure", where),
        structure_score=schema.number(raw, "structure_score", where),
        min_year=schema.integer(raw, "min_year", where),
        max_year=schema.integer(raw, "max_year", where),
        not_prefixes=frozenset(schema.strings(raw, "not_prefixes", where)),
    )


def _required(raw: Mapping[str, Any], key: str, where: str) -> str:
    if key not in raw:
        raise ConfigError(f"missing {key!r}", location=where)
    return schema.string(raw, key, where)


@cache
def country_ids(country: str) -> CountryIds:
    """The :class:`CountryIds` of country ``country`` (ISO alpha-2); validated, cached."""
    cc = country.upper()
    raw = country_data(cc, "ids")
    file = f"countries/{cc}/ids.toml"
    formats = tuple(
        read_format(cc, table, f"{file} format {table.get('name', '?')}")
        for table in schema.tables(raw, "format", file)
    )
    labelled = tuple(
        read_labelled(table, f"{file} labelled {table.get('name', '?')}")
        for table in schema.tables(raw, "labelled", file)
    )
    records = None
    if "records" in raw:
        records = read_records(schema.table(raw, "records", file), f"{file} [records]")
    return CountryIds(country=cc, formats=formats, labelled=labelled, records=records)
