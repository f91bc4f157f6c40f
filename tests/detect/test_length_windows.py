"""A segment longer than ``SEGMENT_CHARS`` is read in overlapping windows cut by length."""

from __future__ import annotations

import itertools
import random

import pytest

from polydeid.api import Deidentifier
from polydeid.core.segments import Segment, Stretch
from polydeid.detect import pipeline
from polydeid.detect.pipeline import length_windows


def _covers(text: str, windows: list[tuple[int, int, int, int]], limit: int) -> None:
    assert windows[0][1] == 0 and windows[-1][2] == len(text)
    for (_, _, end, _), (_, start, _, _) in itertools.pairwise(windows):
        assert end == start
    for lo, start, end, hi in windows:
        assert lo <= start < end <= hi and end - start <= limit


def test_a_short_text_is_one_window() -> None:
    assert length_windows("abc def", 100, 10) == [(0, 0, 7, 7)]


def test_parts_end_after_a_line_break_else_a_space_else_at_the_limit() -> None:
    text = ("word " * 30 + "\n") * 20
    windows = length_windows(text, 400, 50)
    _covers(text, windows, 400)
    assert all(text[end - 1] == "\n" for _, _, end, _ in windows[:-1])
    spaced = "word " * 300
    windows = length_windows(spaced, 400, 50)
    _covers(spaced, windows, 400)
    assert all(spaced[end - 1] == " " for _, _, end, _ in windows[:-1])
    token = "x7" * 500
    windows = length_windows(token, 400, 50)
    _covers(token, windows, 400)
    assert [end for _, _, end, _ in windows] == [400, 800, 1000]
    assert windows[1][0] == 350 and windows[1][3] == 850


@pytest.fixture(scope="module")
def deid() -> Deidentifier:
    return Deidentifier(profile="rules")


@pytest.fixture
def small_windows(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pipeline, "SEGMENT_CHARS", 1_500)
    monkeypatch.setattr(pipeline, "WINDOW_OVERLAP", 120)


def _identifier_list(rng: random.Random, size: int) -> str:
    parts: list[str] = []
    while sum(map(len, parts)) < size:
        kind = rng.randrange(3)
        if kind == 0:
            parts.append(f"ka{rng.randrange(1000)}.lo@mail.example, ")
        elif kind == 1:
            parts.append(f"0772 {rng.randrange(100000, 999999)}, ")
        else:
            parts.append(f"MRN {rng.randrange(1000000, 9999999)}; ")
    return "".join(parts)


def test_windows_find_what_the_whole_text_holds(deid: Deidentifier, small_windows: None) -> None:
    """Identifiers cut by a part's edge are read whole in its window: the spans of a text of
    eight windows without a line break are those of the same text read whole."""
    text = _identifier_list(random.Random(7), 12_000)
    windowed = deid.detect(text)
    pipeline.SEGMENT_CHARS = 10**9  # the fixture restores it
    assert deid.detect(text) == windowed
    assert len(windowed) > 400


def test_one_giant_token_and_mixed_languages_are_read_in_windows(
    deid: Deidentifier, small_windows: None
) -> None:
    token = "q9" * 3_000
    assert deid.detect(token + " x@ex.org")[-1].label.value == "CONTACT_OTHER"
    text = "Simu 0772 123456. " * 100 + "Phone 0772 654321. " * 100
    half = len("Simu 0772 123456. ") * 100
    segment = Segment(
        text, lang="sw", stretches=(Stretch(0, half, "sw"), Stretch(half, len(text), "en"))
    )
    assert len(deid.detect_segment(segment)) == 200
