"""The Detector role: anything that finds spans in a segment."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol, runtime_checkable

from polydeid.core.segments import Segment
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category, Fact


@runtime_checkable
class Detector(Protocol):
    """Anything that finds spans in a segment: rules, taggers, backends, test fakes.

    ``languages`` is the set of canonical language codes it supports; the empty set means
    "language-independent".
    """

    id: str
    languages: frozenset[str]
    labels: frozenset[Category | Fact]

    def detect(self, segment: Segment) -> Iterable[Span]: ...
