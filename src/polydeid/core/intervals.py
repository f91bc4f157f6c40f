"""Interval indexes over half-open character ranges ``[start, end)``, for the steps after
detection that ask which spans overlap a range: each query costs O(log n) plus the ranges it
reports, so a segment with n spans is read in O(n log n), not O(n²).

* :class:`IntervalIndex` — a fixed collection of ranges, overlapping one another or not:
  which of them overlap a query range (a segment tree of the largest end, over the ranges
  sorted by start).
* :func:`merged` — the union of ranges as sorted, disjoint ranges; :func:`union_overlaps` and
  :func:`union_within` ask it with bisection.
* :class:`DisjointRanges` — a growing set of pairwise disjoint ranges (the spans resolution has
  accepted so far): whether a range meets any, and which. Its starts are kept in a 64-ary bit
  tree, so inserting a range and finding the last start before a position cost
  O(log₆₄ of the largest position).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Iterator, Sequence


class IntervalIndex:
    """Which of a fixed sequence of ranges overlap a query range.

    ``ranges`` are ``(start, end)`` pairs, in any order, overlapping or not; queries answer
    with their positions in ``ranges``, ascending.
    """

    __slots__ = ("_order", "_size", "_starts", "_tree")

    def __init__(self, ranges: Sequence[tuple[int, int]]) -> None:
        self._order = sorted(range(len(ranges)), key=lambda i: ranges[i][0])
        self._starts = [ranges[i][0] for i in self._order]
        size = 1
        while size < len(ranges):
            size *= 2
        tree = [-1] * (2 * size)  # the largest end under each node (-1: none)
        for leaf, i in enumerate(self._order):
            tree[size + leaf] = ranges[i][1]
        for node in range(size - 1, 0, -1):
            tree[node] = max(tree[2 * node], tree[2 * node + 1])
        self._size, self._tree = size, tree

    def __len__(self) -> int:
        return len(self._order)

    def _leaves(self, start: int, end: int) -> Iterator[int]:
        """Leaves (positions in start order) of the ranges overlapping ``[start, end)``."""
        limit = bisect_left(self._starts, end)  # the ranges that start before ``end``
        if limit == 0:
            return
        tree, size = self._tree, self._size
        stack = [(1, 0, size)]
        while stack:
            node, lo, hi = stack.pop()
            if lo >= limit or tree[node] <= start:
                continue
            if node >= size:
                yield lo
                continue
            mid = (lo + hi) // 2
            stack.append((2 * node + 1, mid, hi))
            stack.append((2 * node, lo, mid))

    def overlapping(self, start: int, end: int) -> list[int]:
        """Positions in ``ranges`` of the ranges that overlap ``[start, end)``, ascending."""
        return sorted(self._order[leaf] for leaf in self._leaves(start, end))

    def any_overlaps(self, start: int, end: int) -> bool:
        """Whether any of the ranges overlaps ``[start, end)``."""
        return next(self._leaves(start, end), None) is not None


def merged(ranges: Iterable[tuple[int, int]]) -> tuple[list[int], list[int]]:
    """The union of ``ranges`` as the starts and ends of sorted, disjoint ranges (ranges that
    touch are joined: as sets of positions the union is the same)."""
    starts: list[int] = []
    ends: list[int] = []
    for start, end in sorted(ranges):
        if ends and start <= ends[-1]:
            ends[-1] = max(ends[-1], end)
        else:
            starts.append(start)
            ends.append(end)
    return starts, ends


def union_overlaps(union: tuple[list[int], list[int]], start: int, end: int) -> bool:
    """Whether ``[start, end)`` overlaps the union :func:`merged` returned."""
    starts, ends = union
    k = bisect_left(starts, end) - 1  # the last range that starts before ``end``
    return k >= 0 and ends[k] > start


def union_within(union: tuple[list[int], list[int]], start: int, end: int) -> list[tuple[int, int]]:
    """The ranges of the union :func:`merged` returned that overlap ``[start, end)``, in
    order."""
    starts, ends = union
    k = bisect_left(starts, end) - 1
    out: list[tuple[int, int]] = []
    while k >= 0 and ends[k] > start:
        out.append((starts[k], ends[k]))
        k -= 1
    out.reverse()
    return out


class DisjointRanges:
    """A growing set of pairwise disjoint ranges with non-negative starts.

    :meth:`add` takes a range that overlaps none of the set (the caller checks: the set
    does not); :meth:`meets` and :meth:`overlapping` read the last start before a query's end
    and walk back while ranges still reach into the query.
    """

    __slots__ = ("_ends", "_levels", "_limit")

    def __init__(self, limit: int) -> None:
        """``limit``: more than any start that will be added."""
        depth = 1
        while 64**depth < limit:
            depth += 1
        self._limit = 64**depth
        self._ends: dict[int, int] = {}
        #: level 0: bit ``s & 63`` of word ``s >> 6`` is set for each start ``s``; each level
        #: above marks the words of the one below that are not zero.
        self._levels: list[dict[int, int]] = [{} for _ in range(depth)]

    def __len__(self) -> int:
        return len(self._ends)

    def add(self, start: int, end: int) -> None:
        if not 0 <= start < self._limit:
            raise ValueError(f"start {start} outside [0, {self._limit})")
        self._ends[start] = end
        for level in self._levels:
            word = start >> 6
            level[word] = level.get(word, 0) | (1 << (start & 63))
            start = word

    def _before(self, position: int) -> int:
        """The largest start less than ``position``, or -1."""
        x = position - 1
        levels = self._levels
        for depth, level in enumerate(levels):
            if x < 0:
                return -1
            bits = level.get(x >> 6, 0) & ((2 << (x & 63)) - 1)
            if bits:
                x = (x & ~63) | (bits.bit_length() - 1)
                for lower in reversed(levels[:depth]):
                    x = (x << 6) | (lower[x].bit_length() - 1)
                return x
            x = (x >> 6) - 1
        return -1

    def meets(self, start: int, end: int) -> bool:
        """Whether ``[start, end)`` overlaps a range of the set."""
        last = self._before(end)
        return last >= 0 and self._ends[last] > start

    def overlapping(self, start: int, end: int) -> list[tuple[int, int]]:
        """The ranges of the set that overlap ``[start, end)``, in order."""
        out: list[tuple[int, int]] = []
        last = self._before(end)
        while last >= 0 and self._ends[last] > start:
            out.append((last, self._ends[last]))
            last = self._before(last)
        out.reverse()
        return out
