"""Residual risk: how many gold identifiers survive redaction, with exact upper bounds.

Definitions (counts only; no text is kept or reported):

- A character of a gold identifier span is *identifying* when it is a letter, a mark or a
  digit (Unicode ``L``, ``M``, ``N``): whitespace and punctuation name nobody, so a name found
  as two spans either side of its space, or an e-mail whose ``@`` alone is uncovered, is not
  a leak. A gold span with no identifying character is not counted.
- A character is *covered* when a predicted identifier span of any category contains it: a
  redaction hides what it covers whatever it calls it. Predicted clinical facts cover nothing
  (every policy keeps them as written).
- A gold identifier is **leaked** when at least one of its identifying characters is not
  covered (some of it survives), and **wholly leaked** when none of them is covered (all of
  it survives). Every wholly leaked identifier is leaked.
- Counts are kept per cell ``(language, category, format)``: the document's language, the
  gold span's category (the corpus scheme's label mapped to polydeid's taxonomy) and the
  document's format (``meta["text_format"]`` where a document carries one, such as the
  synthetic set's layouts, otherwise the format it was read as, ``text`` by default).
- The rate's bound is the upper end of the two-sided Clopper–Pearson interval (exact
  binomial, 95 % by default), so a cell with 0 leaks of ``n`` still bounds the rate by
  ``1 − 0.025^(1/n)``. Cells and documents are treated as independent draws; identifiers of
  one document are not, so the bound is optimistic where one document repeats a leak.
"""

from __future__ import annotations

import bisect
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

import regex

from polydeid.core.spans import Span
from polydeid.corpora.document import AnnotatedDocument

__all__ = [
    "ALL",
    "LEAK_DEFINITION",
    "LeakCount",
    "LeakTable",
    "clopper_pearson",
    "document_format",
    "document_leaks",
    "leak_table",
]

#: One line for reports: what a leak is.
LEAK_DEFINITION = (
    "a gold identifier is leaked when some of its letters or digits lie in no predicted "
    "identifier span (of any category); wholly leaked when none of them is covered"
)

#: How a report labels a row summed over an axis (language, category or format).
ALL = "all"

_IDENTIFYING = regex.compile(r"[\p{L}\p{M}\p{N}]")
_ITERATIONS = 200
#: Log of the share below which a term of the binomial sum is left out.
_NEGLIGIBLE = -44.0


def _binomial_cdf(k: int, n: int, p: float) -> float:
    """P(X ≤ k) for X ~ Binomial(n, p), summed in log space from the largest term outwards
    (terms fall away from the mode, so the sum stops once they drop below 1e-19 of it)."""
    if k < 0:
        return 0.0
    if k >= n or p <= 0.0:
        return 1.0
    if p >= 1.0:
        return 0.0
    log_p, log_q, base = math.log(p), math.log1p(-p), math.lgamma(n + 1)

    def log_term(i: int) -> float:
        return base - math.lgamma(i + 1) - math.lgamma(n - i + 1) + i * log_p + (n - i) * log_q

    center = min(k, math.floor((n + 1) * p))
    top = log_term(center)
    terms = [1.0]
    for step in (-1, 1):
        i = center + step
        while 0 <= i <= k:
            relative = log_term(i) - top
            if relative < _NEGLIGIBLE:
                break
            terms.append(math.exp(relative))
            i += step
    return min(1.0, math.exp(top) * math.fsum(terms))


def _solve_decreasing(target: float, k: int, n: int) -> float:
    """The ``p`` in (0, 1) where the decreasing P(X ≤ k; n, p) equals ``target``."""
    lo, hi = 0.0, 1.0
    for _ in range(_ITERATIONS):
        mid = (lo + hi) / 2
        if mid in (lo, hi):
            break
        if _binomial_cdf(k, n, mid) > target:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def clopper_pearson(k: int, n: int, level: float = 0.95) -> tuple[float, float]:
    """The exact two-sided Clopper–Pearson interval of a binomial rate, ``k`` events in ``n``.

    Lower end 0 when ``k == 0``, upper end 1 when ``k == n``; otherwise the ``p`` where
    P(X ≥ k) and P(X ≤ k) equal ``(1 − level) / 2`` (the beta quantiles), found by bisection
    on the binomial CDF to double precision.
    """
    if n <= 0 or not 0 <= k <= n:
        raise ValueError(f"need 0 <= k <= n and n > 0, got k={k}, n={n}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level {level} outside (0, 1)")
    tail = (1.0 - level) / 2
    lower = 0.0 if k == 0 else _solve_decreasing(1.0 - tail, k - 1, n)
    upper = 1.0 if k == n else _solve_decreasing(tail, k, n)
    return lower, upper


@dataclass(frozen=True, slots=True)
class LeakCount:
    """Gold identifiers of one cell, how many leaked and how many leaked whole."""

    gold: int = 0
    leaked: int = 0
    whole: int = 0

    @property
    def rate(self) -> float | None:
        return self.leaked / self.gold if self.gold else None

    @property
    def whole_rate(self) -> float | None:
        return self.whole / self.gold if self.gold else None

    def upper(self, level: float = 0.95) -> float | None:
        """Upper end of the two-sided Clopper–Pearson interval of :attr:`rate`."""
        return clopper_pearson(self.leaked, self.gold, level)[1] if self.gold else None

    def whole_upper(self, level: float = 0.95) -> float | None:
        """Upper end of the two-sided Clopper–Pearson interval of :attr:`whole_rate`."""
        return clopper_pearson(self.whole, self.gold, level)[1] if self.gold else None

    def __add__(self, other: LeakCount) -> LeakCount:
        return LeakCount(
            self.gold + other.gold, self.leaked + other.leaked, self.whole + other.whole
        )

    def to_dict(self, level: float = 0.95) -> dict[str, object]:
        return {
            "gold": self.gold,
            "leaked": self.leaked,
            "rate": self.rate,
            "upper": self.upper(level),
            "whole": self.whole,
            "whole_rate": self.whole_rate,
            "whole_upper": self.whole_upper(level),
        }


#: A cell's key: (language, category value, format).
Cell = tuple[str, str, str]


@dataclass(frozen=True, slots=True)
class LeakTable:
    """Leak counts per ``(language, category, format)`` cell, with marginals and totals."""

    cells: Mapping[Cell, LeakCount] = field(default_factory=lambda: MappingProxyType({}))
    level: float = 0.95

    def total(
        self, *, lang: str | None = None, category: str | None = None, format: str | None = None
    ) -> LeakCount:
        """The sum over the cells that match every key given (none given: all cells)."""
        out = LeakCount()
        for (c_lang, c_cat, c_fmt), count in self.cells.items():
            if lang not in (None, c_lang) or category not in (None, c_cat):
                continue
            if format not in (None, c_fmt):
                continue
            out += count
        return out

    def marginal(self, axes: Sequence[str]) -> dict[tuple[str, ...], LeakCount]:
        """Counts summed over the axes not named; ``axes`` from ``lang``, ``category``,
        ``format``, in the order wanted in the key."""
        index = {"lang": 0, "category": 1, "format": 2}
        positions = [index[a] for a in axes]
        out: dict[tuple[str, ...], LeakCount] = defaultdict(LeakCount)
        for cell, count in self.cells.items():
            key = tuple(cell[i] for i in positions)
            out[key] += count
        return dict(out)

    def __add__(self, other: LeakTable) -> LeakTable:
        return LeakTable.combine((self, other))

    @staticmethod
    def combine(tables: Iterable[LeakTable]) -> LeakTable:
        """The cell-by-cell sum of ``tables`` (they must share one level)."""
        sums: dict[Cell, LeakCount] = defaultdict(LeakCount)
        levels = set()
        for table in tables:
            levels.add(table.level)
            for cell, count in table.cells.items():
                sums[cell] += count
        if len(levels) > 1:
            raise ValueError("leak tables of different confidence levels")
        level = levels.pop() if levels else 0.95
        return LeakTable(MappingProxyType({k: sums[k] for k in sorted(sums)}), level)

    def summary(self) -> str:
        """One line of counts for a terminal: leaked, wholly leaked, rate and bound."""
        total = self.total()
        upper = total.upper(self.level)
        if total.rate is None or upper is None:
            return "no gold identifier to leak"
        return (
            f"{total.leaked} of {total.gold} gold identifier(s) leaked ({total.whole} wholly); "
            f"leak rate {total.rate:.4f}, {self.level * 100:g} % upper bound {upper:.4f}"
        )

    def to_dict(self) -> dict[str, object]:
        """JSON-ready: the definition, the level, every cell and the total."""
        return {
            "definition": LEAK_DEFINITION,
            "level": self.level,
            "bound": "two-sided Clopper-Pearson, upper end",
            "cells": [
                {"lang": lang, "category": cat, "format": fmt, **count.to_dict(self.level)}
                for (lang, cat, fmt), count in sorted(self.cells.items())
            ],
            "total": self.total().to_dict(self.level),
        }


def document_format(document: AnnotatedDocument, default: str = "text") -> str:
    """The format a document's leaks are counted under: its ``text_format`` or ``default``."""
    value = document.meta.get("text_format")
    return value if isinstance(value, str) and value else default


def _covered(predicted: Iterable[Span]) -> tuple[list[int], list[int]]:
    """The union of the identifier spans' ranges, as parallel sorted starts and ends."""
    starts: list[int] = []
    ends: list[int] = []
    for span in sorted((s for s in predicted if not s.is_fact), key=lambda s: s.start):
        if ends and span.start <= ends[-1]:
            ends[-1] = max(ends[-1], span.end)
        else:
            starts.append(span.start)
            ends.append(span.end)
    return starts, ends


def _outcome(
    text: str, start: int, end: int, starts: list[int], ends: list[int]
) -> tuple[bool, bool, bool]:
    """(counted, leaked, wholly leaked) of the gold range ``[start, end)``."""
    covered_id = uncovered_id = False
    position = start
    i = bisect.bisect_right(ends, start)
    while position < end:
        if i < len(starts) and starts[i] < end:
            block_start, block_end = max(starts[i], position), min(ends[i], end)
        else:
            block_start = block_end = end
        if block_start > position and _IDENTIFYING.search(text, position, block_start):
            uncovered_id = True
        if block_end > block_start and _IDENTIFYING.search(text, block_start, block_end):
            covered_id = True
        position = block_end
        i += 1
    if not (covered_id or uncovered_id):
        return False, False, False
    return True, uncovered_id, not covered_id


def document_leaks(
    document: AnnotatedDocument, predicted: Iterable[Span], *, format: str = "text"
) -> LeakTable:
    """The leak counts of one document against its predicted spans (definitions above)."""
    starts, ends = _covered(predicted)
    fmt = document_format(document, format)
    sums: dict[Cell, LeakCount] = defaultdict(LeakCount)
    for gold in document.spans:
        if gold.end > len(document.text):
            raise ValueError(f"gold span {gold.start}:{gold.end} past the end of its document")
        counted, leaked, whole = _outcome(document.text, gold.start, gold.end, starts, ends)
        if counted:
            sums[(document.lang, gold.label.value, fmt)] += LeakCount(1, int(leaked), int(whole))
    return LeakTable(MappingProxyType(dict(sums)))


def leak_table(
    documents: Iterable[AnnotatedDocument],
    predictions: Mapping[str, Sequence[Span]],
    *,
    format: str = "text",
    level: float = 0.95,
) -> LeakTable:
    """Leak counts of every document (a document without predictions predicted nothing)."""
    table = LeakTable.combine(
        document_leaks(doc, predictions.get(doc.id, ()), format=format) for doc in documents
    )
    return LeakTable(table.cells, level)
