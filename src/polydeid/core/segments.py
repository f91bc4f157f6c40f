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
class Stretch:
    """A part ``[start, end)`` of a segment's text written in language ``lang``."""

    start: int
    end: int
    lang: str


@dataclass(frozen=True, slots=True)
class Segment:
    """Text to de-identify, with context.

    ``lang`` is a canonical language code (see :mod:`polydeid.locales`); ``countries`` are
    ISO 3166 alpha-2 codes used for phone and ID conventions (defaults come from the language);
    ``hints`` are free-form context labels such as ``"field:family"``. ``stretches`` give the
    language of each part of a text that mixes languages: in order, each starting where the
    last ended, together covering the text (``lang`` is then the record's main language, used
    for what is not read per part, such as surrogates); empty when all of it is in ``lang``.
    """

    text: str
    lang: str = "en"
    origin: Origin = field(default_factory=Origin)
    countries: tuple[str, ...] = ()
    hints: frozenset[str] = frozenset()
    stretches: tuple[Stretch, ...] = ()

    def __post_init__(self) -> None:
        if self.stretches:
            bounds = [(s.start, s.end) for s in self.stretches]
            ends = [0] + [e for _, e in bounds]
            if any(
                start != ends[k] or end <= start for k, (start, end) in enumerate(bounds)
            ) or ends[-1] != len(self.text):
                raise ValueError("a segment's stretches must cover its text in order")

    def __repr__(self) -> str:
        mixed = f" stretches={len(self.stretches)}" if self.stretches else ""
        return f"Segment(len={len(self.text)} lang={self.lang}{mixed} origin={self.origin})"

    __str__ = __repr__
