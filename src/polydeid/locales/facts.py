"""The ``facts.toml`` locale data kind: the words around clinical facts (doses, lab values,
vital signs, durations) that must stay in the text.

``locales/languages/<code>/facts.toml`` (every table optional; the full schema is described at
the top of ``languages/en/facts.toml``)::

    [meta]          sources, licence
    [units]         lab, dose, frequency, vital, quantity = unit words written after a number,
                    by the kind of fact they make; per = denominators after a slash;
                    after_label = units that count only after a fact label
    [before]        quantity, frequency = words written before a number
    [dose]          routes, frequencies = words that may follow a dose
    [duration]      markers, fillers, units, units_before, after_markers
    [vital.<name>]  labels; min and max (a plausible range, given together), ratio (bool),
                    denominators (numbers): the English pack gives the ranges
    [lab]           names = lab tests followed by their value
    [quantity]      labels = labels followed by a small count
    [link]          words = words between a label and its value
    [eponym]        after, before = disease words written after or before an eponym
    [eponym_term]   after, before = device, sign, test and scale words written after or before
                    an eponym of ``eponyms.toml [terms]``; results = finding words ("negativ")
    [care_role]     determiners, roles = a clinician's specialty title after a determiner

:func:`fact_words` reads it into a :class:`FactWords`; words are kept as written.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from types import MappingProxyType

from polydeid.core.errors import ConfigError
from polydeid.locales import _schema as schema
from polydeid.locales import language_data


@dataclass(frozen=True, slots=True)
class VitalSign:
    """One ``[vital.<name>]`` table."""

    labels: tuple[str, ...] = ()
    #: (min, max) of a plausible value; None when the pack gives no range (English does)
    range: tuple[float, float] | None = None
    #: whether a ratio ("120/80") is allowed
    ratio: bool = False
    #: allowed denominators ("GCS 15/15")
    denominators: tuple[float, ...] = ()


@dataclass(frozen=True, slots=True)
class FactWords:
    """The clinical-fact vocabulary of one language pack; empty without a ``facts.toml``."""

    code: str
    # [units]
    lab_units: tuple[str, ...] = ()
    dose_units: tuple[str, ...] = ()
    frequency_units: tuple[str, ...] = ()
    vital_units: tuple[str, ...] = ()
    quantity_units: tuple[str, ...] = ()
    per_units: tuple[str, ...] = ()
    label_units: tuple[str, ...] = ()
    # [before]
    quantity_before: tuple[str, ...] = ()
    frequency_before: tuple[str, ...] = ()
    # [dose]
    routes: tuple[str, ...] = ()
    frequencies: tuple[str, ...] = ()
    # [duration]
    duration_markers: tuple[str, ...] = ()
    duration_fillers: tuple[str, ...] = ()
    duration_units: tuple[str, ...] = ()
    duration_units_before: tuple[str, ...] = ()
    duration_after_markers: tuple[str, ...] = ()
    #: [vital.<name>] by name, in file order
    vitals: Mapping[str, VitalSign] = field(default_factory=dict)
    # [lab], [quantity], [link]
    lab_names: tuple[str, ...] = ()
    quantity_labels: tuple[str, ...] = ()
    links: tuple[str, ...] = ()
    # [eponym]
    eponym_after: tuple[str, ...] = ()
    eponym_before: tuple[str, ...] = ()
    # [eponym_term]
    term_after: tuple[str, ...] = ()
    term_before: tuple[str, ...] = ()
    term_results: tuple[str, ...] = ()
    # [care_role]
    care_determiners: tuple[str, ...] = ()
    care_roles: tuple[str, ...] = ()


def _vital(raw: object, file: str, path: str) -> VitalSign:
    if not isinstance(raw, Mapping):
        raise ConfigError("expected a table", location=schema.at(file, path.rstrip(".")))
    bounds = None
    if "min" in raw or "max" in raw:
        bounds = (schema.number(raw, "min", file, path), schema.number(raw, "max", file, path))
    return VitalSign(
        labels=schema.strings(raw, "labels", file, path),
        range=bounds,
        ratio=schema.flag(raw, "ratio", file, path),
        denominators=tuple(
            float(d) for d in _numbers(raw.get("denominators", []), file, f"{path}denominators")
        ),
    )


def _numbers(raw: object, file: str, path: str) -> list[int | float]:
    if not isinstance(raw, list) or not all(
        isinstance(v, int | float) and not isinstance(v, bool) for v in raw
    ):
        raise ConfigError("expected a list of numbers", location=schema.at(file, path))
    return raw


@cache
def fact_words(code: str) -> FactWords:
    """The :class:`FactWords` of language ``code`` (a canonical code); validated, cached."""
    raw = language_data(code, "facts")
    file = f"languages/{code}/facts.toml"

    def words(table: str, key: str) -> tuple[str, ...]:
        return schema.strings(schema.table(raw, table, file), key, file, f"{table}.")

    vitals = {
        name: _vital(table, file, f"vital.{name}.")
        for name, table in schema.table(raw, "vital", file).items()
    }
    return FactWords(
        code=code,
        lab_units=words("units", "lab"),
        dose_units=words("units", "dose"),
        frequency_units=words("units", "frequency"),
        vital_units=words("units", "vital"),
        quantity_units=words("units", "quantity"),
        per_units=words("units", "per"),
        label_units=words("units", "after_label"),
        quantity_before=words("before", "quantity"),
        frequency_before=words("before", "frequency"),
        routes=words("dose", "routes"),
        frequencies=words("dose", "frequencies"),
        duration_markers=words("duration", "markers"),
        duration_fillers=words("duration", "fillers"),
        duration_units=words("duration", "units"),
        duration_units_before=words("duration", "units_before"),
        duration_after_markers=words("duration", "after_markers"),
        vitals=MappingProxyType(vitals),
        lab_names=words("lab", "names"),
        quantity_labels=words("quantity", "labels"),
        links=words("link", "words"),
        eponym_after=words("eponym", "after"),
        eponym_before=words("eponym", "before"),
        term_after=words("eponym_term", "after"),
        term_before=words("eponym_term", "before"),
        term_results=words("eponym_term", "results"),
        care_determiners=words("care_role", "determiners"),
        care_roles=words("care_role", "roles"),
    )
