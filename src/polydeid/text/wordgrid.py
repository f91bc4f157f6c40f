"""The whitespace-and-punctuation word grid, and BIO tags over it.

The grid is what a token classifier is fed (input pre-split into words; the first sub-token of
each word carries the word's tag). A **word** is one of:

- a run of letters, digits and combining marks (``\\p{L}``, ``\\p{N}``, ``\\p{M}``, plus the
  zero-width (non-)joiners U+200C/U+200D that Indic and Arabic-script words carry inside them),
  in which an apostrophe (U+0027 or U+2019) between two such characters stays inside the word:
  ``Ng'ang'a``, ``O’Brien``; ``ʼ`` (U+02BC) is a letter already;
- one Han, Hiragana or Katakana character with its marks (Chinese and Japanese are not written
  with spaces, so each character is a word, as BERT's basic tokenizer does);
- any other single character that is not whitespace: each punctuation mark or symbol is its
  own word.

Whitespace and the remaining invisible format characters (``\\p{Cf}``: soft hyphen, zero-width
space, BOM, bidi marks) separate words and belong to none.

**Hyphens split**: ``Mary-Jane`` is ``Mary`` ``-`` ``Jane`` and ``0772-123456`` is ``0772``
``-`` ``123456``. Gold spans start and end at letters or digits, so a span over the whole name or
number still aligns, and so does a span over one half (``Mary`` of ``Mary-Jane``, the date of
``12-03-2024/13-03-2024``); a grid that kept hyphens inside words could not align the latter.
The price is that a span ending inside a word joined by an apostrophe (``John`` of ``John's``)
does not align; :func:`count_unaligned` counts such spans and :func:`bio_tags` tags the whole
word.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

import regex

from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category, Fact, Label, Scheme

Grid = list[tuple[int, int]]

OUTSIDE = "O"
_CJK = r"\p{Han}\p{Hiragana}\p{Katakana}"
_WORD_CHAR = rf"[[\p{{L}}\p{{N}}\p{{M}}\u200c\u200d]--[{_CJK}]]"
_SEPARATOR = r"[\s\p{Cf}]"
_WORD = regex.compile(
    rf"[{_CJK}]\p{{M}}*|{_WORD_CHAR}+(?:['\u2019]{_WORD_CHAR}+)*|[^\s\p{{Cf}}]",
    regex.VERSION1,
)
# The same grid for text whose every character the standard library classifies alike (letters
# and digits as ``isalnum``, whitespace as ``isspace``; no marks, CJK or format characters):
# ``re`` runs it about twice as fast as ``regex`` runs the pattern above.
_FAST_WORD = re.compile(r"[^\W_]+(?:['\u2019][^\W_]+)*|\S")
_FULL_CLASS = regex.compile(rf"(?P<c>[{_CJK}])|(?P<w>{_WORD_CHAR})|(?P<s>{_SEPARATOR})", regex.V1)
_FACTS = {f.value: f for f in Fact}


def words(text: str) -> Grid:
    """The word grid of ``text``: ``(start, end)`` of each word, in order."""
    if all(map(_fast_agrees, set(text))):
        return list(map(re.Match.span, _FAST_WORD.finditer(text)))
    return [m.span() for m in _WORD.finditer(text)]


@lru_cache(maxsize=8192)
def _fast_agrees(char: str) -> bool:
    """Whether the fast pattern classifies ``char`` as the full grid does."""
    full = _FULL_CLASS.match(char)
    kind = full.lastgroup if full is not None else "p"
    fast = "w" if char.isalnum() else "s" if char.isspace() else "p"
    return kind == fast


@dataclass(frozen=True, slots=True)
class Alignment:
    """Where one span falls on a grid: word indices ``[first, last]`` and whether it aligns."""

    first: int
    last: int
    aligned: bool

    @property
    def empty(self) -> bool:
        """Whether the span covers no word at all (e.g. only whitespace)."""
        return self.first > self.last


class _Index:
    """Word starts and ends of a grid, for bisecting."""

    def __init__(self, grid: Sequence[tuple[int, int]]) -> None:
        self.starts = [s for s, _ in grid]
        self.ends = [e for _, e in grid]

    def align(self, span: Span) -> Alignment:
        first = bisect_right(self.ends, span.start)
        last = bisect_left(self.starts, span.end) - 1
        aligned = first <= last and self.starts[first] == span.start and self.ends[last] == span.end
        return Alignment(first, last, aligned)


def align(grid: Sequence[tuple[int, int]], span: Span) -> Alignment:
    """Which words ``span`` overlaps, and whether it starts and ends on word boundaries."""
    return _Index(grid).align(span)


def count_unaligned(grid: Sequence[tuple[int, int]], spans: Iterable[Span]) -> int:
    """How many of ``spans`` do not start and end exactly on word boundaries of ``grid``."""
    index = _Index(grid)
    return sum(not index.align(span).aligned for span in spans)


def bio_tags(
    grid: Sequence[tuple[int, int]],
    spans: Iterable[Span],
    *,
    names: Mapping[Label, str] | None = None,
) -> list[str]:
    """``B-``/``I-``/``O`` tag per word; a word is tagged when a span overlaps any of it.

    The tag's label is ``names[span.label]`` when ``names`` is given (spans whose label it lacks
    are skipped), else the label's canonical name. Where spans overlap, the earlier-starting
    (then longer) span keeps the words it reached first; the other starts at its first free word.
    """
    index = _Index(grid)
    tags = [OUTSIDE] * len(grid)
    for span in sorted(spans, key=lambda s: (s.start, -s.end)):
        name = span.label.value if names is None else names.get(span.label)
        if name is None:
            continue
        where = index.align(span)
        free = [i for i in range(where.first, where.last + 1) if tags[i] == OUTSIDE]
        for position, i in enumerate(free):
            tags[i] = f"{'B' if position == 0 else 'I'}-{name}"
    return tags


def spans_from_bio(
    text: str,
    grid: Sequence[tuple[int, int]],
    tags: Sequence[str],
    *,
    scheme: Scheme | None = None,
    source: str = "wordgrid.bio",
) -> list[Span]:
    """Spans from one tag per word (inverse of :func:`bio_tags`); a stray ``I-`` starts a span.

    Labels are canonical category or fact names, or ``scheme`` labels mapped onto categories
    (labels the scheme maps to "not an identifier" are dropped). Raises ``ValueError`` when
    grid and tags differ in length, a word lies outside ``text`` or a tag is not B-, I- or O.
    """
    if len(grid) != len(tags):
        raise ValueError(f"{len(grid)} words but {len(tags)} tags")
    if grid and (grid[-1][1] > len(text) or grid[0][0] < 0):
        raise ValueError("the grid reaches outside the text")
    spans: list[Span] = []
    current: tuple[int, int, str] | None = None  # start, end, label name
    for i, ((start, end), tag) in enumerate(zip(grid, tags, strict=True)):
        prefix, name = _split_tag(tag, i)
        if prefix == OUTSIDE:
            _close(current, spans, scheme, source)
            current = None
            continue
        if prefix == "I" and current is not None and current[2] == name:
            current = (current[0], end, name)
            continue
        _close(current, spans, scheme, source)
        current = (start, end, name)
    _close(current, spans, scheme, source)
    return spans


def _split_tag(tag: str, index: int) -> tuple[str, str]:
    if tag == OUTSIDE:
        return OUTSIDE, ""
    prefix, sep, name = tag.partition("-")
    if not sep or prefix not in {"B", "I"} or not name:
        raise ValueError(f"tag {index} is not O, B-<label> or I-<label>")
    return prefix, name


def _close(
    current: tuple[int, int, str] | None,
    spans: list[Span],
    scheme: Scheme | None,
    source: str,
) -> None:
    """Append the span being built, if any and if its label maps to a category or fact."""
    if current is None:
        return
    start, end, name = current
    label = _label(name, scheme)
    if label is not None:
        spans.append(Span(start, end, label, source))


def _label(name: str, scheme: Scheme | None) -> Label | None:
    if scheme is not None:
        return scheme.map(name)
    if name in _FACTS:
        return _FACTS[name]
    return Category.parse(name)
