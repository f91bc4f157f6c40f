"""Guarded patterns (polydeid.text.patterns): the same words give the same pattern."""

from __future__ import annotations

import os
import subprocess
import sys

import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from polydeid.text.patterns import ContextLexicon, phrase_alternation

WORDS = ["dr", "mr", "mrs", "nurse", "sister", "ward b", "bed", "doc"]
_PROBE = (
    "from polydeid.text.patterns import ContextLexicon, phrase_alternation; "
    f"w = {WORDS!r}; "
    "print(phrase_alternation(w, fold_case=True)); print(ContextLexicon(w).phrases)"
)


def test_patterns_are_the_same_whatever_the_hash_seed() -> None:
    """Equal-length words are ordered by their text, not by a set's order (which follows the
    process's hash seed), so every process builds the same pattern."""
    outputs = {
        subprocess.run(
            [sys.executable, "-c", _PROBE],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("1", "2", "3", "4")
    }
    assert len(outputs) == 1


def test_longest_first_then_by_text() -> None:
    assert phrase_alternation(["mr", "dr", "mrs"], fold_case=False) == "mrs|dr|mr"
    assert ContextLexicon(WORDS).phrases[:3] == ("sister", "ward b", "nurse")


def test_blank_words_are_left_out_and_spaces_are_chosen() -> None:
    """A blank word would make an empty alternative that matches everywhere."""
    assert phrase_alternation([" ", "ext", " ext "], fold_case=False) == "ext"
    assert phrase_alternation(["ext no"], fold_case=True, spaces=r"[ \t]+") == r"(?i:ext[ \t]+no)"


_PIECES = ["tel", "tel.", "phone", "ph", "no.", "mob", "电话", "n°", "nº", "fax", "é", "ß", "SS"]
_GLUE = ["-", " ", "\t", ".", "_", "1", "t", "e", "l", "x", "a", "0", "Tel", "PHONE"]


@settings(max_examples=1500, deadline=None)
@given(
    st.lists(
        st.lists(st.sampled_from(_PIECES + _GLUE), min_size=1, max_size=3).map("".join),
        min_size=1,
        max_size=7,
    ),
    st.lists(st.sampled_from(_PIECES + _GLUE), max_size=12).map("".join),
)
def test_phrase_tries_match_where_one_alternative_per_phrase_matches(
    phrases: list[str], text: str
) -> None:
    """The lexicon's pattern (one trie per kind of edge) finds a phrase exactly where the
    plain alternation of every phrase's own pattern does."""
    lexicon = ContextLexicon(phrases)
    if not lexicon:
        return
    plain = "|".join(ContextLexicon._phrase_pattern(p) for p in lexicon.phrases)
    expected = regex.compile(f"(?:{plain})", regex.IGNORECASE | regex.VERSION0)
    for start in range(len(text) + 1):
        assert lexicon.search(text, start) == (expected.search(text, start) is not None)
