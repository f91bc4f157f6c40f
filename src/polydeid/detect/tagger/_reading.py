"""What the tagger's decoder works on: a word's tag, a span being read, the decoding context.

Shared by the decoder (:mod:`polydeid.detect.tagger.decode`) and its named passes
(:mod:`polydeid.detect.tagger.decoder_passes`). Pure Python, no torch.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum

from polydeid.core.taxonomy import COARSE_GROUP, Category
from polydeid.detect.tagger.windows import CATEGORIES, OUTSIDE, TAG_INDEX
from polydeid.locales.names import NameWords

#: Per coarse group (:data:`polydeid.core.taxonomy.COARSE_GROUP`): its categories with the
#: indices of their B- and I- tags. The decoder finds a span's extent at this level.
GROUPS: dict[str, tuple[tuple[Category, int, int], ...]] = {}
for _category in CATEGORIES:
    GROUPS.setdefault(COARSE_GROUP[_category], ())
    GROUPS[COARSE_GROUP[_category]] += (
        (_category, TAG_INDEX[f"B-{_category.value}"], TAG_INDEX[f"I-{_category.value}"]),
    )

#: Groups whose categories are roles of one thing (a patient or a third party named the same
#: way): a change of category inside a span is the model's doubt, not a boundary. In every
#: other group the categories are different things.
ROLE_GROUPS = frozenset({"NAME"})
#: Share of its group's probability a word's likeliest category needs to count as confident.
KIND_SHARE = 0.9


@dataclass(frozen=True, slots=True)
class WordTag:
    """A word's likeliest tag once each group's categories are added up: ``prefix`` (``O``,
    ``B``, ``I``), the coarse ``group``, the word's probability of being in it (``total``) and
    the category it is confidently read as (``kind``; None: not confident, or a role group)."""

    prefix: str
    group: str
    total: float
    kind: Category | None


def word_tag(probs: Sequence[float]) -> WordTag:
    """The :class:`WordTag` of one word's tag probabilities."""
    outside = probs[TAG_INDEX[OUTSIDE]]
    if outside > 0.5:  # no group can outweigh it
        return WordTag(OUTSIDE, "", 0.0, None)
    best, prefix, group = outside, OUTSIDE, ""
    total = 0.0
    for name, members in GROUPS.items():
        b = sum(probs[bi] for _, bi, _ in members)
        i = sum(probs[ii] for _, _, ii in members)
        if b > best:
            best, prefix, group, total = b, "B", name, b + i
        if i > best:
            best, prefix, group, total = i, "I", name, b + i
    if prefix == OUTSIDE:
        return WordTag(OUTSIDE, "", 0.0, None)
    return WordTag(prefix, group, total, _kind(probs, group, total))


def _kind(probs: Sequence[float], group: str, total: float) -> Category | None:
    """The category a word of ``group`` (whose probability is ``total``) is confidently read
    as, or None (see :data:`KIND_SHARE`; always None in a role group)."""
    if group in ROLE_GROUPS:
        return None
    value, category = max(
        ((probs[bi] + probs[ii], c) for c, bi, ii in GROUPS[group]), key=lambda x: x[0]
    )
    return category if total > 0 and value >= KIND_SHARE * total else None


@dataclass(slots=True)
class Open:
    """A span being read from the words' tags: its group, first and last word, score (the
    lowest group probability of its words), per-category mass, and the category its last
    confident word was read as."""

    group: str
    first: int
    last: int
    score: float
    mass: dict[Category, float]
    kind: Category | None = None


class Cut(Enum):
    """What a boundary pass says about a word: the open span ends before it (``BEFORE``, the
    word is then read as usual), or ends and the word belongs to no span (``SKIP``)."""

    BEFORE = "before"
    SKIP = "skip"


@dataclass(slots=True)
class Reading:
    """A span as the decoder reads it, before its category is voted: words ``first`` to
    ``last`` (``end``: its character end where a pass moved it off the last word's end),
    ``floor`` (words before it belong to an earlier span), ``floor_after`` (the first word a
    later span may take), ``cued`` (a person by an honorific)."""

    group: str
    first: int
    last: int
    score: float
    mass: dict[Category, float]
    floor: int
    floor_after: int
    end: int | None = None
    cued: bool = False

    def start_char(self, grid: Sequence[tuple[int, int]]) -> int:
        return grid[self.first][0]

    def end_char(self, grid: Sequence[tuple[int, int]]) -> int:
        return grid[self.last][1] if self.end is None else self.end


@dataclass(frozen=True, slots=True)
class DecodeContext:
    """What the decoder's passes read: the text, its word grid, each word's tag probabilities
    (None where no window decided it) and the language's name words (None: no trimming)."""

    text: str = field(repr=False)
    grid: Sequence[tuple[int, int]] = field(repr=False)
    probabilities: Sequence[Sequence[float] | None] = field(repr=False)
    names: NameWords | None = None

    def word(self, index: int) -> str:
        start, end = self.grid[index]
        return self.text[start:end]


#: Name-role tallies by the text of a name: category -> summed probability.
Tallies = Mapping[str, Mapping[Category, float]]
