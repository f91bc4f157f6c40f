"""Shared helpers for the transform tests."""

from __future__ import annotations

import pytest

from polydeid.core.segments import Segment
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category

KEY = bytes(range(32))
OTHER_KEY = bytes(range(1, 33))


def span_of(text: str, fragment: str, label: Category, *, nth: int = 0) -> Span:
    """The span of the ``nth`` occurrence of ``fragment`` in ``text``."""
    start = -1
    for _ in range(nth + 1):
        start = text.index(fragment, start + 1)
    return Span(start, start + len(fragment), label, "test.v1")


@pytest.fixture
def segment_en() -> Segment:
    return Segment("Patient John Smith seen by Dr Mary Jones.", lang="en")
