"""The one span type: offsets, label, source and score — never the text itself."""

from __future__ import annotations

from dataclasses import dataclass

from polydeid.core.taxonomy import Category, Fact


@dataclass(frozen=True, slots=True, order=False)
class Span:
    """A labelled character range ``[start, end)`` of one segment's text.

    The text is read from the segment by offsets, so no repr, log line or exception that
    shows a span can leak the identifier.
    """

    start: int
    end: int
    label: Category | Fact
    source: str
    score: float = 1.0

    def __post_init__(self) -> None:
        if not 0 <= self.start < self.end:
            raise ValueError(f"invalid span offsets {self.start}:{self.end}")
        if not 0.0 <= self.score <= 1.0:
            raise ValueError(f"span score {self.score} outside [0, 1]")

    def __repr__(self) -> str:
        where = f"{self.start}:{self.end}"
        return f"Span({where} {self.label.name} via {self.source} @{self.score:.2f})"

    __str__ = __repr__

    @property
    def length(self) -> int:
        return self.end - self.start

    @property
    def is_fact(self) -> bool:
        return isinstance(self.label, Fact)

    def overlaps(self, other: Span) -> bool:
        return self.start < other.end and other.start < self.end

    def contains(self, other: Span) -> bool:
        return self.start <= other.start and other.end <= self.end

    def text_of(self, text: str) -> str:
        """The covered substring of ``text`` (for transforms; never log the result)."""
        return text[self.start : self.end]

    def shifted(self, offset: int) -> Span:
        if offset == 0:
            return self
        return Span(self.start + offset, self.end + offset, self.label, self.source, self.score)

    def with_label(self, label: Category | Fact) -> Span:
        return Span(self.start, self.end, label, self.source, self.score)

    def to_dict(self) -> dict[str, object]:
        return {
            "start": self.start,
            "end": self.end,
            "label": self.label.value,
            "score": round(self.score, 4),
            "source": self.source,
        }
