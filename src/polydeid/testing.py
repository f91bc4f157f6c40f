"""Test helpers for code that uses polydeid: a detector that returns fixed spans, and a
counter of the function calls a piece of work makes (a growth check that does not time)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable

from polydeid.core.segments import Segment
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category, Fact

__all__ = ["FakeDetector", "call_count"]


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


def call_count(run: Callable[[], object]) -> int:
    """Python and C function calls (generator steps included) made while ``run`` runs."""
    count = 0

    def tally(frame: object, event: str, arg: object) -> None:
        nonlocal count
        if event in ("call", "c_call"):
            count += 1

    sys.setprofile(tally)
    try:
        run()
    finally:
        sys.setprofile(None)
    return count
