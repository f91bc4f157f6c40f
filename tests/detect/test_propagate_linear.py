"""``names.carry`` reads a segment of many names in O(n): its phrase search through the
text's runs of letters and digits finds what each phrase's own pattern finds."""

from __future__ import annotations

import sys

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category
from polydeid.detect import propagate
from polydeid.detect.propagate import _CASE_STABLE, _case_stable, propagate_names

P = Category.PERSON


def _gate_characters() -> str:
    return "".join(
        chr(c)
        for c in range(0x110000)
        if not 0xD800 <= c <= 0xDFFF and _CASE_STABLE.fullmatch(chr(c)) is not None
    )


@pytest.mark.slow
def test_case_stable_characters_match_as_casefold_says() -> None:
    """Within the gate, a character matches another case-insensitively (the ``regex``
    module's rule) exactly when the two casefold alike, and both are letters or digits or
    neither: the run search may then compare casefolded runs."""
    gate = _gate_characters()
    by_fold: dict[str, set[str]] = {}
    for c in gate:
        by_fold.setdefault(c.casefold(), set()).add(c)
    for c in gate:
        if c.casefold() == c and c.upper() == c and c.lower() == c and c.title() == c:
            continue
        if len(c.casefold()) != 1:
            continue  # a text holding it is read the plain way (_case_stable)
        found = {
            m.group() for m in regex.finditer("(?i)" + regex.escape(c), gate, flags=regex.VERSION0)
        }
        assert found == by_fold[c.casefold()], hex(ord(c))
        assert len({x.isalnum() for x in found}) == 1, hex(ord(c))


def _plain(text: str, spans: list[Span]) -> tuple[Span, ...]:
    """``propagate_names`` with every phrase searched by its own pattern."""
    saved = propagate._FEW_PHRASES
    propagate._FEW_PHRASES = sys.maxsize
    try:
        return propagate_names(text, spans)
    finally:
        propagate._FEW_PHRASES = saved


_WORDS = ("ana", "Ana", "ANA", "bel", "ana-bel", "anabel", "maría", "MARÍA", "ſam", "sam", "x1")


@st.composite
def named_texts(draw: st.DrawFn) -> tuple[str, list[Span]]:
    pieces = draw(
        st.lists(
            st.one_of(
                st.sampled_from(_WORDS), st.sampled_from((" ", "  ", "\t", "\n", ", ", "(", "9"))
            ),
            min_size=1,
            max_size=40,
        )
    )
    text = "".join(pieces)
    spans: list[Span] = []
    pos = 0
    for piece in pieces:  # some of the words, and some word pairs, are confident names
        if piece in _WORDS and draw(st.booleans()):
            end = pos + len(piece)
            if draw(st.booleans()):
                nxt = regex.match(r"[ \t]+\w+", text[end:])
                end += nxt.end() if nxt else 0
            if not spans or spans[-1].end <= pos:
                spans.append(Span(pos, end, P, "tagger.x", draw(st.sampled_from((0.5, 0.95)))))
        pos += len(piece)
    return text, spans


@given(named_texts())
@settings(max_examples=150, deadline=None)
def test_run_search_carries_what_the_patterns_carry(case: tuple[str, list[Span]]) -> None:
    text, spans = case
    saved = propagate._FEW_PHRASES
    propagate._FEW_PHRASES = 0  # the run search whenever the text allows it
    try:
        fast = propagate_names(text, spans)
    finally:
        propagate._FEW_PHRASES = saved
    assert fast == _plain(text, spans)


def test_the_gate() -> None:
    assert _case_stable("Patient name: ana bel, María, Иван")
    assert not _case_stable("Straße")  # ß folds to two letters
    assert not _case_stable("\u212a")  # the Kelvin sign matches k, but folds as k does
    assert not _case_stable("a\u0345")  # the combining iota matches the letter iota
    assert not _case_stable("Kırık")  # I matches the dotless ı


def test_many_lower_case_names_are_each_carried_once() -> None:
    """200 lower-case confident names, each written twice: the second mention of each is
    carried; the work grows with the text, not with names × text."""
    names = [f"ka{chr(97 + i % 26)}{chr(97 + i // 26)}lo mi{i:03d}ru" for i in range(200)]
    names = [n.replace("0", "o").replace("1", "l") for n in names]
    first = "; ".join(f"name: {n}" for n in names)
    text = first + ". Later: " + "; ".join(names) + "."
    spans = []
    pos = 0
    for n in names:
        start = text.index(n, pos)
        spans.append(Span(start, start + len(n), P, "rule.name.v1", 0.9))
        pos = start + len(n)
    out = propagate_names(text, spans)
    assert len(out) == 2 * len(names)
    assert out == _plain(text, spans)


_NAME_PIECES = (
    "Ana",
    "ana",
    "ANA",
    "Anabel",
    "Ana-Bel",
    "-Ana",
    "'Ana",
    "l'Ana",
    "xAna",
    "Ana'",
    "é\u0301Ana",
    "\u0301Ana",
    "Okello",
    "okello",
    "Nyong'o",
    "Jo-Asembo",
    "Asembo",
    "O’Brien",
    "Brien",
)
_GAPS = (" ", "  ", "\n", ", ", "(", "9", "-", "'", "\u0301", "")


@st.composite
def carried_texts(draw: st.DrawFn) -> tuple[str, list[Span]]:
    """Texts of capitalised names glued and spaced every way, some of them name spans."""
    pieces = draw(
        st.lists(
            st.tuples(st.sampled_from(_NAME_PIECES), st.sampled_from(_GAPS)),
            min_size=1,
            max_size=30,
        )
    )
    text, spans, pos = "", [], 0
    for word, gap in pieces:
        if draw(st.booleans()) and (not spans or spans[-1].end <= pos):
            spans.append(Span(pos, pos + len(word), P, "tagger.x", 0.9))
        text += word + gap
        pos = len(text)
    return text, spans


@given(carried_texts())
@settings(max_examples=300, deadline=None)
def test_words_found_where_written_are_those_read_word_by_word(
    case: tuple[str, list[Span]],
) -> None:
    """A few one-word names are each looked for with ``str.find``; what that carries is
    what reading every word of the text carries."""
    text, spans = case
    found = propagate_names(text, spans)
    saved = propagate._FEW_WORDS
    propagate._FEW_WORDS = -1  # every word read, whatever the number of names
    try:
        assert propagate_names(text, spans) == found
    finally:
        propagate._FEW_WORDS = saved


@given(st.text(alphabet="Aab-'’\u0301 .9", max_size=40), st.sampled_from(["Ab", "A", "Aa-b"]))
@settings(max_examples=300, deadline=None)
def test_a_word_is_found_where_the_text_reads_it(text: str, word: str) -> None:
    from polydeid.detect.roles import NAME_WORD

    expected = [m.span() for m in NAME_WORD.finditer(text) if m.group() == word]
    assert list(propagate._word_at(text, word)) == expected
