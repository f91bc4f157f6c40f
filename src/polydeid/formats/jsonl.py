"""JSON Lines records: ``{"text": ..., "id": ..., "lang": ...}`` one per line."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from polydeid.core.errors import PolydeidError, RecordError
from polydeid.formats import limits
from polydeid.formats.text import decode_utf8


@dataclass(frozen=True, slots=True)
class JsonlRecord:
    """One parsed record; ``line`` is 1-based in its source."""

    line: int
    data: dict[str, Any] = field(repr=False)  # may hold identifier text

    @property
    def text(self) -> str:
        return str(self.data["text"])

    @property
    def id(self) -> Any:
        return self.data.get("id")

    @property
    def lang(self) -> str | None:
        lang = self.data.get("lang")
        return str(lang) if lang is not None else None


@dataclass(frozen=True, slots=True)
class JsonlFailure:
    """A line that could not be read as a record, with the reason (never its content)."""

    line: int
    error: PolydeidError


def parse_object(raw: bytes, *, source: str, line: int) -> dict[str, Any]:
    """One JSONL line as a JSON object (any fields); raises :class:`PolydeidError` located at
    ``source:line``, never quoting the line (past a parse limit of :mod:`polydeid.formats.limits`:
    :class:`~polydeid.core.errors.InputLimitError`)."""
    location = f"{source}:{line}"
    text = decode_utf8(raw, source=source, first_line=line)
    try:
        data = limits.loads(text, location=location)
    except json.JSONDecodeError as exc:
        raise RecordError(
            f"malformed JSON ({exc.msg} at column {exc.colno})", location=location
        ) from None
    if not isinstance(data, dict):
        raise RecordError(
            f"a record must be a JSON object, not {type(data).__name__}", location=location
        )
    return data


def parse_record(raw: bytes, *, source: str, line: int) -> JsonlRecord:
    """Parse one JSONL line; raises :class:`PolydeidError` located at ``source:line``."""
    location = f"{source}:{line}"
    data = parse_object(raw, source=source, line=line)
    if not isinstance(data.get("text"), str):
        raise RecordError('a record needs a string field "text"', location=location)
    if "lang" in data and not isinstance(data["lang"], str):
        raise RecordError('field "lang" must be a string', location=location)
    if "id" in data and not isinstance(data["id"], str | int) and data["id"] is not None:
        raise RecordError('field "id" must be a string or an integer', location=location)
    return JsonlRecord(line=line, data=data)


def read_jsonl(data: bytes, *, source: str) -> Iterator[JsonlRecord | JsonlFailure]:
    """Every non-blank line of ``data`` as a record or a located failure, in order."""
    for index, raw in enumerate(data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            yield parse_record(raw.rstrip(b"\r"), source=source, line=index)
        except PolydeidError as exc:
            yield JsonlFailure(line=index, error=exc)


def looks_like_jsonl(data: bytes) -> bool:
    """Whether every non-blank line starts with ``{`` (used for stdin format detection)."""
    lines = [ln.strip() for ln in data.split(b"\n") if ln.strip()]
    return bool(lines) and all(ln.startswith(b"{") for ln in lines)
