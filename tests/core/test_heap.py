"""Giving freed heap memory back to the system (polydeid.core.heap)."""

from __future__ import annotations

import pytest

from polydeid.core import heap


def test_release_answers_whether_it_could(monkeypatch: pytest.MonkeyPatch) -> None:
    assert isinstance(heap.release(), bool)
    monkeypatch.setattr(heap, "_malloc_trim", lambda: None)  # a C library without it
    assert heap.release() is False


def test_the_releaser_returns_memory_once_enough_work_has_passed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[int] = []
    monkeypatch.setattr(heap, "release", lambda: calls.append(1) or True)
    releaser = heap.Releaser(100)
    assert [releaser.done(n) for n in (40, 40, 30, 99, 1, 500)] == [
        False,
        False,
        True,  # 110 units
        False,
        True,  # 100 more
        True,
    ]
    assert len(calls) == 3
    with pytest.raises(ValueError, match="positive"):
        heap.Releaser(0)
