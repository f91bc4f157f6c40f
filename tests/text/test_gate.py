"""The word gate (polydeid.text.gate) and gated scans (patterns.gated_finditer): where a
word of a list starts, and the matches a whole-text scan finds, found only there."""

from __future__ import annotations

import time

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from polydeid.core.errors import RuleTimeoutError
from polydeid.core.segments import Segment
from polydeid.text import patterns
from polydeid.text.gate import GateWords, gate_words, key_of, keys_of
from polydeid.text.memo import shared_reading
from polydeid.text.patterns import compile_pattern, gated_finditer, guarded_finditer

_GATE_WORD = regex.compile(r"(?<![\p{L}\p{N}])\p{L}+")

#: Pieces that make the gate's hard cases: characters that fold to several ("ß", "İ"),
#: marks, digits glued to words, other scripts, keys inside longer words.
_PIECES = [
    "de",
    "De",
    "DE",
    "la",
    "La",
    "san",
    "Sankt",
    "straße",
    "STRASSE",
    "İstanbul",
    "istanbul",
    "e\u0301",
    "\u0301",
    "3",
    "a",
    "A",
    "ł",
    "Łódź",
    "Ωμέγα",
    "ΩΜΈΓΑ",
    "Ḱ",
    "ﬁ",
    "Foley",
    "FOLEY",
    "desde",
    "pared",
    "'",
    "-",
    " ",
    "  ",
    "\n",
    ".",
    "ǅ",
    "Ǆ",
    "ǆ",
]
_KEYS = frozenset(
    {"de", "la", "san", "straße", "strasse", "istanbul", "a", "łódź", "ωμέγα", "foley", "ǆ"}
)
texts = st.lists(st.sampled_from(_PIECES), max_size=40).map("".join)


def _brute(text: str, keys: frozenset[str]) -> list[int]:
    return [m.start() for m in _GATE_WORD.finditer(text) if m.group().casefold() in keys]


def test_key_of_is_the_leading_letters_casefolded() -> None:
    assert key_of("Guillain-Barré") == "guillain"
    assert key_of("maladie d'") == "maladie"
    assert key_of("STRASSE") == "strasse"
    assert key_of("+ve") is None
    assert keys_of(["Foley", "swan"]) == frozenset({"foley", "swan"})
    assert keys_of(["Foley", "(-)"]) is None


@settings(max_examples=400, deadline=None)
@given(texts)
def test_starts_are_every_word_of_a_key(text: str) -> None:
    assert GateWords(text).starts(_KEYS) == _brute(text, _KEYS)


def test_a_text_that_folds_longer_is_read_word_by_word() -> None:
    text = "Straße, de la STRASSE; ß a de"
    assert len(text.casefold()) != len(text)
    assert GateWords(text).starts(_KEYS) == _brute(text, _KEYS)


def test_no_key_present_reads_nothing_more() -> None:
    words = GateWords("the patient was seen today")
    assert words.starts(frozenset({"foley"})) == []
    assert words.keys == frozenset({"the", "patient", "was", "seen", "today"})


def test_a_text_is_read_once_per_shared_reading() -> None:
    text = "seen with a Foley catheter"
    with shared_reading():
        first = gate_words(text)
        assert gate_words(text) is first
    assert gate_words(text) is not first  # nothing kept past the block


_PHRASES = ["de la", "San", "Foley", "straße", "Łódź", "la", "a"]
_PATTERN = compile_pattern(
    r"(?<![\p{L}\p{N}])(?:"
    + "|".join(
        rf"(?i:{regex.escape(p)})" if k % 2 else regex.escape(p) for k, p in enumerate(_PHRASES)
    )
    + r")(?:[ \t]+\p{L}+)?(?!\p{L})"
)


@settings(max_examples=400, deadline=None)
@given(texts)
def test_gated_scan_finds_what_the_whole_scan_finds(text: str) -> None:
    segment = Segment(text, lang="en")
    keys = keys_of(_PHRASES)
    assert keys is not None
    whole = [m.span() for m in guarded_finditer(_PATTERN, segment, "test")]
    assert [m.span() for m in gated_finditer(_PATTERN, segment, "test", keys)] == whole


def test_gated_scan_fails_closed_past_its_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(patterns, "PATTERN_TIMEOUT_S", 0.05)
    slow = compile_pattern(r"(?<![\p{L}\p{N}])aa(?:(?:a|a)*)*b")
    segment = Segment("aa" + "a" * 40 + " ", lang="en")
    start = time.thread_time()
    with pytest.raises(RuleTimeoutError):
        list(gated_finditer(slow, segment, "rule.test", frozenset({"aa" + "a" * 40})))
    assert time.thread_time() - start < 5


def test_gated_scan_shares_one_budget_over_many_starts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Many starts, each under the limit alone, together past it: the scan stops."""
    monkeypatch.setattr(patterns, "PATTERN_TIMEOUT_S", 0.2)
    slow = compile_pattern(r"(?<![\p{L}\p{N}])(?:a|a)(?:(?:a|a)*)*b")
    text = " ".join(["a" * 18] * 400)
    with pytest.raises(RuleTimeoutError):
        list(gated_finditer(slow, Segment(text, lang="en"), "rule.test", frozenset({"a" * 18})))
