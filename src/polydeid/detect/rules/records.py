"""Facility and patient record numbers: register labels, and the facility register structure.

Two ways a record number (``ID_RECORD``) is found:

1. **After a register label** (source ``rule.record.prefix.v1``): a ``[record]`` phrase of the
   segment language's ``identifiers.toml`` (plus English) — MRN, IP No., OPD No., Reg. No.,
   Patient ID, NHC, Nº historia, Fallnummer, Patienten-Nr., Numéro de dossier, IPP, Mã bệnh
   nhân, Số hồ sơ, Namba ya usajili, 住院号, … — then separators and at most three filler words,
   then the value: a token of letters, digits and ``- / .`` (``ST-998877``, ``12345-JS``,
   ``2345/24``) or digit groups joined by single spaces, holding at least ``min_digits`` digits.
   The span covers the value only. A label written into the value with a hyphen
   (``nhc-150679``) is recognised too; the span then starts after the hyphen. Quotes, angle
   brackets and underscores separate too, so a JSON key, an XML start tag or a snake_case key
   pasted as text labels its value (``"mrn": "32791-UJ"``, ``<mrn>PT-743997</mrn>``,
   ``record_number=2058431``).
2. **By its structure alone** (source ``rule.record.structure.v1``): 2-4 capitals, a 2- or
   4-digit year, 4-6 digits, joined by ``/`` or ``-`` (``MUL/2024/00871``, ``KNH/24/00871``,
   ``KCMC-2023-004512``). Not when the capitals are listed in ``not_prefixes``, not when a
   4-digit year is outside ``[min_year, max_year]``, and not when it reads as ``ABC/MM/YYYY``
   (a month, then a year).

Dates (``12/03/2024``), decimals and numbers after ordinary words are never values. Settings
live in the ``[records]`` table of ``locales/countries/XX/ids.toml``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

import regex

from polydeid.core.errors import ConfigError
from polydeid.core.segments import Segment
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category, Fact
from polydeid.detect.rules._base import RuleDetector
from polydeid.detect.rules.ids import (
    LabelledToken,
    ValueShape,
    ascii_view,
    fail_closed,
    labelled_tokens,
    value_shape,
)
from polydeid.locales import segment_languages
from polydeid.locales.ids import INTERNATIONAL, RecordSpec, country_ids, read_records
from polydeid.text.patterns import Pattern, compile_pattern

RULE_ID = "rules.records.v1"
SOURCE_PREFIX = "rule.record.prefix.v1"
SOURCE_STRUCTURE = "rule.record.structure.v1"

_STRUCTURE_PARTS = compile_pattern(r"([A-Z]+)[/\-]([0-9]+)[/\-]([0-9]+)")


@dataclass(frozen=True, slots=True)
class RecordSettings:
    """The ``[records]`` table: value shape, structure rule and scores."""

    shape: ValueShape
    prefix_score: float
    structure: Pattern
    structure_score: float
    min_year: int
    max_year: int
    not_prefixes: frozenset[str]

    def structural(self, value: str) -> bool:
        """Whether ``value`` is a facility register number by its structure alone."""
        if self.structure.fullmatch(value) is None:
            return False
        parts = _STRUCTURE_PARTS.fullmatch(value)
        if parts is None:
            return False
        prefix, year, serial = parts.groups()
        if prefix in self.not_prefixes:
            return False
        if len(year) == 4 and not self.min_year <= int(year) <= self.max_year:
            return False
        looks_like_month_year = len(year) == 2 and 1 <= int(year) <= 12 and len(serial) == 4
        return not (looks_like_month_year and 1900 <= int(serial) <= 2099)


_WHERE = f"countries/{INTERNATIONAL}/ids.toml [records]"


def _read_settings(table: Mapping[str, Any]) -> RecordSettings:
    """The settings of a ``[records]`` table as written (checked by
    :func:`polydeid.locales.ids.read_records`)."""
    return _settings(read_records(table, _WHERE))


def _settings(spec: RecordSpec | None) -> RecordSettings:
    where = _WHERE
    if spec is None:
        raise ConfigError("malformed record settings: no [records] table", location=where)
    try:
        return RecordSettings(
            shape=value_shape(spec.value, spec.min_digits, where),
            prefix_score=spec.prefix_score,
            structure=compile_pattern(spec.structure),
            structure_score=spec.structure_score,
            min_year=spec.min_year,
            max_year=spec.max_year,
            not_prefixes=spec.not_prefixes,
        )
    except regex.error as exc:
        raise ConfigError(
            f"malformed record settings: {type(exc).__name__}: {exc}", location=where
        ) from None


@cache
def record_settings() -> RecordSettings:
    """The record-number settings (cached)."""
    return _settings(country_ids(INTERNATIONAL).records)


class RecordNumberRule(RuleDetector):
    """Record numbers after register labels, and facility register numbers by structure."""

    id = RULE_ID
    labels: frozenset[Category | Fact] = frozenset({Category.ID_RECORD})

    def __init__(self) -> None:
        self._settings = record_settings()

    def find(self, segment: Segment) -> list[Span]:
        view = ascii_view(segment)
        languages = tuple(segment_languages(segment))
        spans: list[Span] = []
        with fail_closed(segment, self.id):
            for token in labelled_tokens(view, self.id, languages):
                span = self._record(view.text, token)
                if span is not None:
                    spans.append(span)
        return spans

    def _record(self, text: str, token: LabelledToken) -> Span | None:
        settings = self._settings
        if settings.structural(text[token.token_start : token.end]):
            return Span(
                token.token_start,
                token.end,
                Category.ID_RECORD,
                SOURCE_STRUCTURE,
                settings.structure_score,
            )
        if token.kind != "record" or not settings.shape.accepts(
            text[token.value_start : token.end]
        ):
            return None
        return Span(
            token.value_start, token.end, Category.ID_RECORD, SOURCE_PREFIX, settings.prefix_score
        )
