"""The interval indexes, and resolution built on them, against the plain quadratic reading of
the same policy."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from polydeid.core.intervals import (
    DisjointRanges,
    IntervalIndex,
    merged,
    union_overlaps,
    union_within,
)
from polydeid.core.resolve import (
    DEFAULT_POLICY,
    ResolvePolicy,
    _merge_adjacent,
    merge_adjacent,
    resolve,
)
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category, Fact
from polydeid.testing import call_count

ranges = st.lists(
    st.tuples(st.integers(0, 200), st.integers(1, 40)).map(lambda p: (p[0], p[0] + p[1])),
    max_size=60,
)
query = st.tuples(st.integers(0, 240), st.integers(1, 60)).map(lambda p: (p[0], p[0] + p[1]))


def _meets(a: tuple[int, int], b: tuple[int, int]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


@given(ranges, st.lists(query, min_size=1, max_size=10))
@settings(max_examples=150, deadline=None)
def test_interval_index_reports_every_overlapping_range(
    items: list[tuple[int, int]], queries: list[tuple[int, int]]
) -> None:
    index = IntervalIndex(items)
    for q in queries:
        expected = [i for i, r in enumerate(items) if _meets(r, q)]
        assert index.overlapping(*q) == expected
        assert index.any_overlaps(*q) == bool(expected)


@given(ranges, st.lists(query, min_size=1, max_size=10))
@settings(max_examples=150, deadline=None)
def test_merged_union_is_the_union(
    items: list[tuple[int, int]], queries: list[tuple[int, int]]
) -> None:
    union = merged(items)
    points = {p for start, end in items for p in range(start, end)}
    assert {p for start, end in zip(*union, strict=True) for p in range(start, end)} == points
    for q in queries:
        assert union_overlaps(union, *q) == any(_meets(r, q) for r in items)
        inside = union_within(union, *q)
        assert inside == sorted(inside)
        assert {p for start, end in inside for p in range(start, end)} & set(range(*q)) == (
            points & set(range(*q))
        )


@given(st.lists(query, max_size=80), st.lists(query, min_size=1, max_size=10))
@settings(max_examples=150, deadline=None)
def test_disjoint_ranges_answer_as_a_list_would(
    offers: list[tuple[int, int]], queries: list[tuple[int, int]]
) -> None:
    taken = DisjointRanges(400)
    kept: list[tuple[int, int]] = []
    for offer in offers:
        hit = [r for r in sorted(kept) if _meets(r, offer)]
        assert taken.meets(*offer) == bool(hit)
        assert taken.overlapping(*offer) == hit
        if not hit:
            taken.add(*offer)
            kept.append(offer)
    for q in queries:
        assert taken.overlapping(*q) == [r for r in sorted(kept) if _meets(r, q)]


def test_disjoint_ranges_reach_far_positions() -> None:
    taken = DisjointRanges(10**9)
    for start in (0, 63, 64, 4095, 4096, 262_143, 999_999_990):
        taken.add(start, start + 1)
    assert taken.overlapping(0, 10**9) == [
        (s, s + 1) for s in (0, 63, 64, 4095, 4096, 262_143, 999_999_990)
    ]
    assert taken.overlapping(65, 4096) == [(4095, 4096)]
    assert not taken.meets(1, 63)
    with pytest.raises(ValueError):
        DisjointRanges(10).add(64, 65)


# --- resolution against the reference -----------------------------------------------------

_TRIM = " \t\r\n,;:.!?()[]{}\"'«»“”-–—/"


def _reference_cut(span: Span, blockers: Iterable[Span], text: str) -> list[Span]:
    pieces = [(span.start, span.end)]
    for b in blockers:
        if not span.overlaps(b):
            continue
        pieces = [
            part
            for start, end in pieces
            for part in ((start, min(end, b.start)), (max(start, b.end), end))
            if part[0] < part[1]
        ]
    out = []
    for start, end in pieces:
        if text:
            while start < end and text[start] in _TRIM:
                start += 1
            while end > start and text[end - 1] in _TRIM:
                end -= 1
            if not any(c.isalnum() for c in text[start:end]):
                continue
        if start < end:
            out.append(Span(start, end, span.label, span.source, span.score))
    return out


def reference_resolve(
    spans: Iterable[Span], text: str = "", policy: ResolvePolicy = DEFAULT_POLICY
) -> tuple[Span, ...]:
    """The policy of :mod:`polydeid.core.resolve` read the plain way: every candidate
    compared with every fact and every accepted span (quadratic)."""
    facts = [s for s in spans if s.is_fact]
    candidates = [s for s in spans if not s.is_fact]
    if facts:
        kept: list[Span] = []
        for s in candidates:
            if s.source.startswith(policy.overrides_facts) or not any(s.overlaps(f) for f in facts):
                kept.append(s)
            elif s.source.startswith(policy.split_on_overlap):
                kept.extend(_reference_cut(s, facts, text))
        candidates = kept
    ranked = sorted(
        set(candidates),
        key=lambda s: (-policy.priority(s.source), -s.score, -s.length, s.start, s.label.name),
    )
    accepted: list[Span] = []
    for span in ranked:
        if not any(span.overlaps(a) for a in accepted):
            accepted.append(span)
        elif span.source.startswith(policy.split_on_overlap):
            accepted.extend(_reference_cut(span, accepted, text))
    accepted.sort(key=lambda s: s.start)
    if policy.merge_adjacent and text:
        accepted = _merge_adjacent(accepted, text, policy)
    return tuple(accepted)


_SOURCES = (
    "tagger.x",
    "backend.y",
    "rule.dates.v1",
    "rule.id.v1",
    "rule.contact.email.v1",
    "rule.checksum.nl.v1",
    "rule.name.v1",
    "rule.place.v1",
    "hint.field",
    "fact.dose.v1",
)
_LABELS = (Category.PERSON, Category.DATE, Category.ID_OTHER, Fact.DOSE, Fact.LAB_VALUE)


@st.composite
def candidate_sets(draw: Callable[..., Any]) -> tuple[str, list[Span]]:
    text = draw(st.text(alphabet="ab1 ,.\t\n-", min_size=1, max_size=80))
    spans = []
    for _ in range(draw(st.integers(0, 40))):
        start = draw(st.integers(0, len(text) - 1))
        end = draw(st.integers(start + 1, len(text)))
        label = draw(st.sampled_from(_LABELS))
        source = "fact.v1" if isinstance(label, Fact) else draw(st.sampled_from(_SOURCES))
        score = draw(st.sampled_from((0.5, 0.9, 1.0)))
        spans.append(Span(start, end, label, source, score))
    return text, spans


@given(candidate_sets(), st.booleans())
@settings(max_examples=200, deadline=None)
def test_resolve_answers_as_the_quadratic_reading(
    case: tuple[str, list[Span]], with_text: bool
) -> None:
    text, spans = case
    given_text = text if with_text else ""
    assert resolve(spans, given_text) == reference_resolve(spans, given_text)


# --- the algorithmic property: work grows with n log n, not n² ------------------------------


def _crowded(n: int) -> list[Span]:
    """``n`` candidates that all overlap their neighbours, of varied lengths and sources (a
    tagger's spans are cut around the rules' ones), and a fact every 50 characters."""
    spans = []
    for i in range(n):
        source = ("rule.contact.email.v1", "tagger.x", "rule.dates.v1")[i % 3]
        spans.append(Span(3 * i, 3 * i + 4 + i % 7, Category.PERSON, source, 0.9))
        if i % 17 == 0:
            spans.append(Span(3 * i + 1, 3 * i + 3, Fact.DOSE, "fact.v1"))
    return spans


def test_resolution_work_grows_as_n_log_n() -> None:
    small, large = _crowded(2_000), _crowded(8_000)
    ratio = call_count(lambda: resolve(large)) / call_count(lambda: resolve(small))
    assert ratio < 6  # 4× the spans; n² would be 16×


def test_resolution_of_100k_spans() -> None:
    spans = _crowded(100_000)
    out = resolve(spans)
    assert all(a.end <= b.start for a, b in itertools.pairwise(out))
    assert len(out) > 30_000


@given(candidate_sets())
@settings(max_examples=150, deadline=None)
def test_merge_alone_is_resolution_of_spans_that_do_not_overlap(
    case: tuple[str, list[Span]],
) -> None:
    text, spans = case
    apart = resolve(spans)  # sorted, none overlapping, not merged (no text)
    assert merge_adjacent(apart, text) == resolve(list(apart), text)
