"""Many whole-string patterns tried in one pass: which of them match a short string.

A :class:`FullMatchSet` answers, for one string, the positions of the patterns that match all
of it, with one linear-time automaton over every pattern at once (``RE2::Set``, from the
``google-re2`` package) instead of one backtracking match per pattern. It serves as a sieve
before exact checks. A pattern RE2 cannot read (its syntax is narrower than Python's ``re``)
is reported for every string, so a sieve built on it keeps every string the pattern matches.
"""

from __future__ import annotations

from collections.abc import Sequence

import re2

#: Memory RE2 may use for one set's program and its automaton's cache (RE2's default). The
#: strings asked about are short, so one search needs a few states, far below it (a search
#: that ran out would report no match); a full cache is emptied and built again.
_MAX_MEM = 8 << 20


class FullMatchSet:
    """The patterns of ``patterns`` (``re`` syntax) that match a whole ASCII string
    (:meth:`matching`). Compiled once, at construction."""

    __slots__ = ("_always", "_index", "_set")

    def __init__(self, patterns: Sequence[str]) -> None:
        options = re2.Options()
        options.max_mem = _MAX_MEM
        options.log_errors = False  # a pattern RE2 cannot read is kept aside, not logged
        options.never_capture = True  # only which patterns match is asked
        self._set = re2.Set.FullMatchSet(options)
        self._index: list[int] = []  # RE2's numbering -> position in ``patterns``
        always = []
        for k, pattern in enumerate(patterns):
            try:
                self._set.Add(pattern)
            except re2.error:
                always.append(k)
            else:
                self._index.append(k)
        self._always = tuple(always)
        self._set.Compile()

    def matching(self, text: str) -> list[int]:
        """Positions in ``patterns`` of each pattern that matches all of ``text``, and of those
        RE2 could not read. ``text`` must be ASCII: RE2 reads ``\\d`` as the ASCII digits, ``re``
        as every decimal digit."""
        if not text.isascii():
            raise ValueError("FullMatchSet reads ASCII text only")
        index = self._index
        found = [index[k] for k in self._set.Match(text) or ()]
        return [*found, *self._always] if self._always else found
