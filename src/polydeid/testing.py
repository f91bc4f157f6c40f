"""Test doubles for code that uses polydeid: a detector that returns fixed spans."""

from __future__ import annotations

from collections.abc import Iterable

from polydeid.core.segments import Segment
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category, Fact

__all__ = ["FakeDetector"]


class FakeDetector:
    """A detector that returns fixed spans (for tests and examples); it satisfies
    :class:`polydeid.detect.base.Detector`."""

    def __init__(self, spans: Iterable[Span], *, id: str = "fake.v1") -> None:
        self.id = id
        self._spans = tuple(spans)
        self.languages: frozenset[str] = frozenset()
        self.labels: frozenset[Category | Fact] = frozenset(s.label for s in self._spans)

    def detect(self, segment: Segment) -> Iterable[Span]:
        return [s for s in self._spans if s.end <= len(segment.text)]
