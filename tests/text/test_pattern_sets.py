"""A set of whole-string patterns answers as each pattern matched alone does."""

from __future__ import annotations

import random
import re

import pytest

from polydeid.text.pattern_sets import FullMatchSet

PATTERNS = [
    r"[2-9]\d{9}",
    r"0(?:7[0-9]|4[15])\d{7}",
    r"(?:1\d|2[0-4])\d{5,8}",
    r"\d{3}(?:-\d{2})?",
    r"(?=\d{4})\d+",  # a look-ahead: RE2 cannot read it
    r"(\d)\1{6}",  # a back-reference: nor this
]
UNREAD = {4, 5}


def test_the_set_finds_every_pattern_that_matches_a_whole_string() -> None:
    patterns = FullMatchSet(PATTERNS)
    compiled = [re.compile(p) for p in PATTERNS]
    rng = random.Random(7)
    matched = 0
    for _ in range(3000):
        text = "".join(rng.choice("0123456789-") for _ in range(rng.randrange(0, 14)))
        found = set(patterns.matching(text))
        exact = {k for k, c in enumerate(compiled) if c.fullmatch(text)}
        assert found == exact | UNREAD
        matched += len(exact - UNREAD)
    assert matched > 300


def test_only_a_whole_match_counts() -> None:
    patterns = FullMatchSet([r"\d{3}", r"ab"])
    assert patterns.matching("123") == [0]
    assert patterns.matching("1234") == []
    assert patterns.matching("xab") == []
    assert patterns.matching("ab") == [1]


def test_non_ascii_text_is_refused() -> None:
    """RE2 reads ``\\d`` as the ASCII digits only: a string of other digits would be judged
    otherwise than ``re`` judges it."""
    with pytest.raises(ValueError, match="ASCII"):
        FullMatchSet([r"\d+"]).matching("٠٧٧٢")


def test_a_pattern_re2_cannot_read_is_kept_aside_without_a_log_line(
    capfd: pytest.CaptureFixture[str],
) -> None:
    """RE2 would log such a pattern on the process's standard error; the set keeps it aside
    (reported for every string) and writes nothing."""
    patterns = FullMatchSet([r"(?=\d)\d", r"\d"])
    assert patterns.matching("7") == [1, 0]
    assert patterns.matching("x") == [0]
    captured = capfd.readouterr()
    assert captured.err == "" and captured.out == ""
