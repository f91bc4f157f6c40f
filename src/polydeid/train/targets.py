"""What a training corpus teaches the tagger, word by word: the tags each word may take.

A corpus annotated in polydeid's own categories (the synthetic notes, MEDDOCAN, ASQ-PHI)
teaches one tag per word (``exact``). A corpus of news, web, social-media or court text
annotates a few coarse groups (:data:`~polydeid.core.taxonomy.COARSE_GROUP`) without roles: its
person is anybody, not a patient, and its place any place. Each word of such a span may take
the tag of any category of the span's group, at its position (``B-``/``I-``), and the loss
counts the probability of all of them together (a partial label): the corpus teaches where a
name is, not whose. The role is learned from the exact corpora and read by the decoder from
context. Outside its spans, a word of any corpus may be ``O`` or a tag of any group the corpus
does not annotate: a date in a corpus that marks no dates is not taught as "no date".

The allowed sets are interned in :class:`TagClasses`: a set of one tag is that tag's index
(the plain cross-entropy target), a larger set an index past the tags;
:func:`partial_label_loss` reads them through the table.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from polydeid.core.spans import Span
from polydeid.core.taxonomy import COARSE_GROUP, Category, scheme
from polydeid.detect.tagger.windows import OUTSIDE, TAG_INDEX, TAGS, word_tags


@dataclass(frozen=True, slots=True)
class Supervision:
    """How a corpus's gold is read: ``exact`` categories or only their groups, and the coarse
    groups it annotates (None: every group)."""

    exact: bool = True
    groups: frozenset[str] | None = None

    @classmethod
    def of_scheme(cls, scheme_name: str | None, *, exact: bool) -> Supervision:
        """The supervision of a corpus read with ``scheme_name`` (None: polydeid's own)."""
        if scheme_name is None:
            return cls(exact=exact)
        groups = scheme(scheme_name).groups
        return cls(exact=exact, groups=None if groups >= set(COARSE_GROUP.values()) else groups)

    def allowed(self, tag: str) -> frozenset[int]:
        """The tag indices a word whose gold tag is ``tag`` may take."""
        return _allowed_by_tag(self)[tag]


@cache
def _allowed_by_tag(supervision: Supervision) -> dict[str, frozenset[int]]:
    """:meth:`Supervision.allowed` for every tag, worked out once per supervision (it is asked
    for every word of the training data)."""
    unannotated = {
        TAG_INDEX[f"{position}-{c.value}"]
        for c in Category
        if supervision.groups is not None and COARSE_GROUP[c] not in supervision.groups
        for position in "BI"
    }
    table = {OUTSIDE: frozenset({TAG_INDEX[OUTSIDE], *unannotated})}
    for tag in TAGS:
        if tag == OUTSIDE:
            continue
        if supervision.exact:
            table[tag] = frozenset({TAG_INDEX[tag]})
            continue
        position, _, label = tag.partition("-")
        group = COARSE_GROUP[Category(label)]
        table[tag] = frozenset(
            TAG_INDEX[f"{position}-{c.value}"] for c in Category if COARSE_GROUP[c] == group
        )
    return table


class TagClasses:
    """Interned allowed-tag sets: one tag is its own index; a larger set gets an index from
    ``len(TAGS)`` on, in the order first seen."""

    def __init__(self) -> None:
        self._index: dict[frozenset[int], int] = {}
        self.sets: list[frozenset[int]] = []

    def index(self, allowed: frozenset[int]) -> int:
        if not allowed:
            raise ValueError("an allowed-tag set is empty")
        if len(allowed) == 1:
            return next(iter(allowed))
        found = self._index.get(allowed)
        if found is None:
            found = self._index[allowed] = len(TAGS) + len(self.sets)
            self.sets.append(allowed)
        return found

    def table(self) -> list[list[bool]]:
        """Row ``k``: the tags class ``k`` allows (the tags first, one each; then the sets)."""
        rows = [[i == t for i in range(len(TAGS))] for t in range(len(TAGS))]
        rows += [[i in allowed for i in range(len(TAGS))] for allowed in self.sets]
        return rows


def word_classes(
    grid: Sequence[tuple[int, int]],
    spans: Sequence[Span],
    supervision: Supervision,
    classes: TagClasses,
) -> list[int]:
    """Each word's class (:class:`TagClasses`) from the gold spans, read as ``supervision``
    says."""
    return [classes.index(supervision.allowed(tag)) for tag in word_tags(grid, spans)]


def partial_label_loss(logits: Any, targets: Any, table: Any, ignore: int) -> Any:
    """Mean over the positions whose target is not ``ignore`` of ``−log Σ p(tag)`` over the
    tags the target's class allows (``table``: a boolean tensor, one row per class). Where
    every class is one tag, this is the cross-entropy."""
    import torch

    where = targets != ignore
    rows = logits[where].float()
    if rows.numel() == 0:
        return logits.sum() * 0.0
    allowed = table[targets[where]]
    kept = rows.masked_fill(~allowed, float("-inf"))
    return (torch.logsumexp(rows, dim=-1) - torch.logsumexp(kept, dim=-1)).mean()
