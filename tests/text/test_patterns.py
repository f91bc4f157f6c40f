"""Guarded patterns (polydeid.text.patterns): the same words give the same pattern."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from polydeid.text import patterns
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


# --- compiled patterns kept in polydeid's cache ------------------------------------------

_LONG = "(?:" + "|".join(f"ward{i}|bed{i}" for i in range(40)) + r")\b"
_SAMPLE = "moved from ward7 to bed12 and bed123"


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("POLYDEID_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache" / patterns._KEPT_KIND


def _spans(pattern: regex.Pattern[str]) -> list[tuple[int, int]]:
    return [m.span() for m in pattern.finditer(_SAMPLE)]


def _no_compiling(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("compiled again")

    monkeypatch.setattr(patterns.regex, "compile", refuse)


def test_a_long_pattern_is_kept_compiled_and_read_back_without_compiling(
    cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = patterns.compile_pattern(_LONG, regex.IGNORECASE)
    (kept,) = cache_dir.iterdir()
    assert kept.stat().st_mode & 0o077 == 0
    _no_compiling(monkeypatch)
    again = patterns.compile_pattern(_LONG, regex.IGNORECASE)
    assert again is not first and again.pattern == _LONG and again.flags == first.flags
    assert _spans(again) == _spans(first) == [(11, 16), (20, 25)]
    with pytest.raises(AssertionError, match="compiled again"):
        patterns.compile_pattern(_LONG)  # other flags: another kept pattern


def test_short_patterns_are_not_kept(cache_dir: Path) -> None:
    patterns.compile_pattern(r"\bbed\d+")
    assert not cache_dir.exists()


def test_a_cache_that_cannot_be_written_still_compiles(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("POLYDEID_CACHE", str(blocker / "cache"))
    assert _spans(patterns.compile_pattern(_LONG)) == [(11, 16), (20, 25)]


_RAN: list[str] = []


def _record(what: str) -> None:
    _RAN.append(what)


class _Planted:
    """What a planted file runs when it is unpickled with the standard reader."""

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (_record, ("ran",))


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"not a pickle",
        pickle.dumps((8224, "not a pattern")),
        pickle.dumps((8224, regex.compile("another pattern"))),
        pickle.dumps((8224 | int(regex.IGNORECASE), regex.compile(_LONG, regex.I))),
        pickle.dumps([_Planted()]),
        pickle.dumps((8224, regex.compile(_LONG), os.system)),
    ],
    ids=["empty", "garbage", "no-pattern", "another-pattern", "other-flags", "code", "global"],
)
def test_a_foreign_or_damaged_file_is_compiled_again_and_runs_nothing(
    cache_dir: Path, body: bytes
) -> None:
    patterns.compile_pattern(_LONG)
    (kept,) = cache_dir.iterdir()
    kept.write_bytes(body)
    _RAN.clear()
    compiled = patterns.compile_pattern(_LONG)
    assert _RAN == []
    assert compiled.pattern == _LONG and _spans(compiled) == [(11, 16), (20, 25)]
    assert kept.read_bytes() != body  # replaced by the pattern compiled again


def test_the_planted_file_would_run_code_with_the_standard_reader() -> None:
    _RAN.clear()
    pickle.loads(pickle.dumps([_Planted()]))
    assert _RAN == ["ran"]


def test_kept_patterns_are_read_back_in_a_new_process(cache_dir: Path) -> None:
    probe = (
        "import regex; from polydeid.text import patterns; "
        "regex.compile = None; "  # a kept pattern must not be compiled again
        f"p = patterns.compile_pattern({_LONG!r}); "
        f"print([m.span() for m in p.finditer({_SAMPLE!r})])"
    )
    patterns.compile_pattern(_LONG)
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[(11, 16), (20, 25)]"
