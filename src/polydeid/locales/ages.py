"""The ``ages.toml`` locale data kind: how a language writes a person's age.

``locales/languages/<code>/ages.toml`` (every table optional; the full schema is described at
the top of ``languages/en/ages.toml``)::

    [meta]          sources, licence
    [units.<unit>]  <unit> is year, month, week or day; after, before, age_only = unit words
                    written after the number, before it, and forms that always state an age
    [context]       labels, at_event, after, nearby = words that make a number an age
    [not_age]       before, after, labels = words that make it a time span or another's age
    [numbers]       number words: order ("tens_first" | "ones_first"), joiners, units,
                    words / tens / hundreds = tables of words and their values

:func:`age_words` reads it into an :class:`AgeWords`; words are kept as written.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from types import MappingProxyType
from typing import Any

from polydeid.core.errors import ConfigError
from polydeid.locales import _schema as schema
from polydeid.locales import language_data, languages

#: The units an age is counted in.
AGE_UNITS = ("year", "month", "week", "day")
#: How a language orders the parts of a number written in words.
NUMBER_ORDERS = ("tens_first", "ones_first")


@dataclass(frozen=True, slots=True)
class UnitWords:
    """The words of one unit (``[units.<unit>]``)."""

    #: written after the number: "46 years"
    after: tuple[str, ...] = ()
    #: forms after the number that always state an age: "46-year-old"
    age_only: tuple[str, ...] = ()
    #: written before the number: "emyaka 46"
    before: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class NumberWordTables:
    """Number words for ages written in words (``[numbers]``)."""

    order: str = "tens_first"
    joiners: tuple[str, ...] = (" ",)
    units: tuple[str, ...] = ()
    words: Mapping[str, int] = field(default_factory=dict)
    tens: Mapping[str, int] = field(default_factory=dict)
    hundreds: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class AgeWords:
    """The age vocabulary of one language pack; empty without an ``ages.toml``."""

    code: str
    #: unit words by unit name (:data:`AGE_UNITS`), in file order
    units: Mapping[str, UnitWords] = field(default_factory=dict)
    labels: tuple[str, ...] = ()
    at_event: tuple[str, ...] = ()
    after: tuple[str, ...] = ()
    nearby: tuple[str, ...] = ()
    not_before: tuple[str, ...] = ()
    not_after: tuple[str, ...] = ()
    not_labels: tuple[str, ...] = ()
    #: None when the pack writes no ``[numbers]`` table
    numbers: NumberWordTables | None = None


def read_numbers(raw: Mapping[str, Any], file: str) -> NumberWordTables:
    """The ``[numbers]`` table ``raw`` of ``file``, checked."""
    order = schema.string(raw, "order", file, "numbers.", default="tens_first")
    if order not in NUMBER_ORDERS:
        raise ConfigError("order must be tens_first or ones_first", location=f"{file} numbers")
    joiners = raw.get("joiners", [" "])
    if not isinstance(joiners, list):
        raise ConfigError("joiners must be a list", location=f"{file} numbers.joiners")
    return NumberWordTables(
        order=order,
        joiners=tuple(str(j) for j in joiners),
        units=schema.strings(raw, "units", file, "numbers."),
        words=schema.word_values(raw, "words", file, "numbers."),
        tens=schema.word_values(raw, "tens", file, "numbers."),
        hundreds=schema.word_values(raw, "hundreds", file, "numbers."),
    )


@cache
def age_words(code: str) -> AgeWords:
    """The :class:`AgeWords` of language ``code`` (a canonical code); validated, cached."""
    raw = language_data(code, "ages")
    file = f"languages/{code}/ages.toml"
    units: dict[str, UnitWords] = {}
    for unit, table in schema.table(raw, "units", file).items():
        path = f"units.{unit}."
        if unit not in AGE_UNITS or not isinstance(table, Mapping):
            raise ConfigError(
                f"unknown unit {unit!r} (known: {', '.join(AGE_UNITS)})",
                location=schema.at(file, f"units.{unit}"),
            )
        units[unit] = UnitWords(
            after=schema.strings(table, "after", file, path),
            age_only=schema.strings(table, "age_only", file, path),
            before=schema.strings(table, "before", file, path),
        )
    context = schema.table(raw, "context", file)
    not_age = schema.table(raw, "not_age", file)
    numbers = schema.table(raw, "numbers", file) if "numbers" in raw else None
    return AgeWords(
        code=code,
        units=MappingProxyType(units),
        labels=schema.strings(context, "labels", file, "context."),
        at_event=schema.strings(context, "at_event", file, "context."),
        after=schema.strings(context, "after", file, "context."),
        nearby=schema.strings(context, "nearby", file, "context."),
        not_before=schema.strings(not_age, "before", file, "not_age."),
        not_after=schema.strings(not_age, "after", file, "not_age."),
        not_labels=schema.strings(not_age, "labels", file, "not_age."),
        numbers=None if numbers is None else read_numbers(numbers, file),
    )


@cache
def age_languages() -> frozenset[str]:
    """The languages whose pack ships an ``ages.toml``."""
    return frozenset(code for code in languages() if language_data(code, "ages"))
