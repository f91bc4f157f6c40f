"""Segments: a piece of text with its origin, language and hints."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Origin:
    """Where a segment came from: file, line, field path (JSON path, CSV column, HL7 field)."""

    file: str | None = None
    line: int | None = None
    path: str | None = None

    def __str__(self) -> str:
        parts = [p for p in (self.file, None if self.line is None else str(self.line)) if p]
        where = ":".join(parts)
        if self.path:
            where = f"{where} {self.path}" if where else self.path
        return where or "<input>"


@dataclass(frozen=True, slots=True)
class Segment:
    """Text to de-identify, with context.

    ``lang`` is a canonical language code (see :mod:`polydeid.locales`); ``countries`` are
    ISO 3166 alpha-2 codes used for phone and ID conventions (defaults come from the language);
    ``hints`` are free-form context labels such as ``"field:family"``.
    """

    text: str
    lang: str = "en"
    origin: Origin = field(default_factory=Origin)
    countries: tuple[str, ...] = ()
    hints: frozenset[str] = frozenset()

    def __repr__(self) -> str:
        return f"Segment(len={len(self.text)} lang={self.lang} origin={self.origin})"

    __str__ = __repr__
