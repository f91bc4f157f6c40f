"""Guarded patterns (polydeid.text.patterns): the same words give the same pattern."""

from __future__ import annotations

import os
import subprocess
import sys

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
