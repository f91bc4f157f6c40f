"""From text to model windows and back: word grid, sub-token alignment, windows, word rows.

Pure Python (no torch), shared by training and inference so that both see the same inputs.
Decoding the words' tags into spans is :mod:`polydeid.detect.tagger.decode`.

* A document is tokenised whole (offsets in the original text); each word of
  :func:`polydeid.text.wordgrid.words` is read at the token holding its first character,
  which carries the word's tag; other tokens are ignored in the loss and in decoding.
* Long documents are cut into overlapping windows of at most ``max_tokens`` content tokens
  (``stride`` tokens apart). Each word is decided by exactly one window: the one in which its
  first token sits farthest from a window edge, so a name cut by one window's edge is read
  whole in the next, and found once.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category
from polydeid.text.wordgrid import words

OUTSIDE = "O"
#: Categories the tagger is trained on, in tag order (every canonical category).
CATEGORIES: tuple[Category, ...] = tuple(Category)
TAGS: tuple[str, ...] = (
    OUTSIDE,
    *(f"{prefix}-{c.value}" for c in CATEGORIES for prefix in ("B", "I")),
)
TAG_INDEX: Mapping[str, int] = {tag: i for i, tag in enumerate(TAGS)}
IGNORE = -100


@dataclass(frozen=True, slots=True)
class Aligned:
    """A tokenised document aligned with its word grid."""

    grid: tuple[tuple[int, int], ...]  # words: (start, end) in the text
    token_ids: tuple[int, ...]  # content tokens only (no bos/eos)
    word_token: tuple[int, ...]  # per word: the token holding its first character (-1: none)

    def __repr__(self) -> str:
        return f"Aligned(words={len(self.grid)}, tokens={len(self.token_ids)})"


def align_tokens(
    text: str, token_ids: Sequence[int], offsets: Sequence[tuple[int, int]]
) -> Aligned:
    """Align content tokens (ids and original offsets, specials removed) with the word grid.

    Each word is read at the token that holds its first character. A token may hold the
    start of several words (``y-`` of ``Mary-Jane`` in some vocabularies): it is trained on
    the first of them and all of them take its prediction, so no word is ever left without
    one and a name is never cut in two by the tokenizer.
    """
    grid = tuple(words(text))
    starts = [s for s, e in offsets]
    word_token: list[int] = []
    for start, _ in grid:
        t = bisect.bisect_right(starts, start) - 1
        while t >= 0 and offsets[t][1] <= start:  # the token ends before the word: none holds it
            t = -1
        word_token.append(t if t >= 0 and offsets[t][0] <= start < offsets[t][1] else -1)
    return Aligned(grid, tuple(token_ids), tuple(word_token))


def windows(length: int, max_tokens: int, stride: int) -> list[tuple[int, int]]:
    """``[start, end)`` token ranges covering ``length`` tokens, overlapping when longer."""
    if max_tokens <= 0 or stride <= 0 or stride > max_tokens:
        raise ValueError("need 0 < stride <= max_tokens")
    if length <= max_tokens:
        return [(0, length)]
    out = []
    start = 0
    while True:
        end = min(start + max_tokens, length)
        out.append((start, end))
        if end == length:
            return out
        start = min(start + stride, length - max_tokens)


def even_windows(length: int, max_tokens: int, min_overlap: int) -> list[tuple[int, int]]:
    """The fewest equal ``[start, end)`` windows of at most ``max_tokens`` tokens covering
    ``length`` tokens, neighbours sharing at least ``min_overlap`` tokens.

    Inference uses these rather than :func:`windows`: a document's windows are all the same
    length, so they batch without padding, and no window is mostly overlap (``windows`` ends
    with a full window reaching back over its neighbour).
    """
    if max_tokens <= 0 or not 0 <= min_overlap < max_tokens:
        raise ValueError("need 0 <= min_overlap < max_tokens")
    if length <= max_tokens:
        return [(0, length)]
    count = -(-(length - min_overlap) // (max_tokens - min_overlap))
    size = -(-(length + (count - 1) * min_overlap) // count)
    step = (length - size) / (count - 1)
    return [(s, s + size) for s in (round(i * step) for i in range(count))]


def owner_windows(aligned: Aligned, spans: Sequence[tuple[int, int]]) -> list[int]:
    """For each word, the window that decides it: the one where its token is farthest from an
    edge (-1 for words without a token)."""
    owners = []
    for t in aligned.word_token:
        best, margin = -1, -1
        if t >= 0:
            for w, (start, end) in enumerate(spans):
                if start <= t < end and min(t - start, end - 1 - t) > margin:
                    best, margin = w, min(t - start, end - 1 - t)
        owners.append(best)
    return owners


def word_tags(grid: Sequence[tuple[int, int]], spans: Sequence[Span]) -> list[str]:
    """BIO tags of the words, from gold spans (words overlapping a span take its category)."""
    tags = [OUTSIDE] * len(grid)
    starts = [s for s, _ in grid]
    for span in sorted(spans, key=lambda s: (s.start, -s.end)):
        if not isinstance(span.label, Category):
            continue
        i = max(0, bisect.bisect_right(starts, span.start) - 1)
        begun = False
        while i < len(grid) and grid[i][0] < span.end:
            if grid[i][1] > span.start and tags[i] == OUTSIDE:
                tags[i] = f"{'I' if begun else 'B'}-{span.label.value}"
                begun = True
            i += 1
    return tags


def token_labels(aligned: Aligned, tags: Sequence[str]) -> list[int]:
    """Per content token: the tag of the first word it starts, :data:`IGNORE` for the others."""
    return first_tokens(aligned, [TAG_INDEX[tag] for tag in tags])


def first_tokens(aligned: Aligned, values: Sequence[int]) -> list[int]:
    """Per content token: the value of the first word it starts, :data:`IGNORE` for the others."""
    labels = [IGNORE] * len(aligned.token_ids)
    for word, t in enumerate(aligned.word_token):
        if t >= 0 and labels[t] == IGNORE:
            labels[t] = values[word]
    return labels


def word_rows(
    docs: Sequence[Aligned],
    plans: Sequence[tuple[Sequence[tuple[int, int]], Sequence[int]]],
    results: Mapping[tuple[int, int], Any],
) -> list[tuple[Aligned, list[list[float] | None]]]:
    """Each document's per-word label probabilities: the row of the word's first token in
    the window that owns the word (``plans[d]`` = (window spans, owner window per word);
    ``results[(d, window start)]`` = the window's token rows). Words without a token (or
    owner) get None."""
    out = []
    for d, aligned in enumerate(docs):
        spans, owners = plans[d]
        per_word: list[list[float] | None] = [None] * len(aligned.grid)
        rows: dict[int, list[list[float]]] = {}  # window start -> its rows, converted once
        for word, t in enumerate(aligned.word_token):
            if t >= 0 and owners[word] >= 0:
                start = spans[owners[word]][0]
                if start not in rows:
                    rows[start] = results[(d, start)].tolist()
                per_word[word] = rows[start][t - start]
        out.append((aligned, per_word))
    return out
