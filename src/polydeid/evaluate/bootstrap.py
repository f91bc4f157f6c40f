"""Uncertainty of scores: bootstrap intervals over documents and mean ± SD over runs.

``bootstrap_ci`` resamples documents with replacement (seeded ``random.Random``), sums each
resample's micro counts and takes the percentile interval of the resampled P, R and F1
(linear interpolation between order statistics, numpy's default). Resamples where a metric is
undefined (e.g. no gold span drawn) are left out of that metric's interval and counted.

``mean_sd`` summarises several runs (seeds, folds) of any result with ``to_dict()``: every
numeric leaf, keyed by its dotted path, gets the mean and the sample standard deviation.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Protocol

from polydeid.evaluate.metrics import PRF, Scores

__all__ = [
    "BootstrapCIs",
    "Interval",
    "MeanSD",
    "RunSummary",
    "bootstrap_ci",
    "mean_sd",
    "paired_f1_difference",
    "paired_recall_difference",
    "percentile",
]

_METRICS: tuple[str, ...] = ("precision", "recall", "f1")
_MODES: Mapping[str, Callable[[Scores], PRF]] = MappingProxyType(
    {"strict": lambda s: s.strict.micro, "relaxed": lambda s: s.relaxed.micro}
)


@dataclass(frozen=True, slots=True)
class Interval:
    """A point estimate with its bootstrap percentile interval."""

    estimate: float | None
    low: float | None
    high: float | None
    n_defined: int

    def to_dict(self) -> dict[str, object]:
        return {
            "estimate": self.estimate,
            "low": self.low,
            "high": self.high,
            "n_defined": self.n_defined,
        }


@dataclass(frozen=True, slots=True)
class BootstrapCIs:
    """Percentile intervals of micro P/R/F1, strict and relaxed, over resampled documents."""

    level: float
    n_resamples: int
    seed: int
    n_documents: int
    intervals: Mapping[str, Mapping[str, Interval]]

    def __getitem__(self, mode: str) -> Mapping[str, Interval]:
        return self.intervals[mode]

    def to_dict(self) -> dict[str, object]:
        return {
            "level": self.level,
            "n_resamples": self.n_resamples,
            "seed": self.seed,
            "n_documents": self.n_documents,
            **{
                mode: {name: iv.to_dict() for name, iv in table.items()}
                for mode, table in self.intervals.items()
            },
        }


def percentile(ordered: Sequence[float], q: float) -> float:
    """The ``q``-quantile (0–1) of sorted values, interpolating linearly between neighbours."""
    if not ordered:
        raise ValueError("percentile of no values")
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"quantile {q} outside [0, 1]")
    position = q * (len(ordered) - 1)
    lo = math.floor(position)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (position - lo)


def _interval(estimate: float | None, draws: list[float | None], level: float) -> Interval:
    defined = sorted(v for v in draws if v is not None)
    if not defined:
        return Interval(estimate, None, None, 0)
    tail = (1.0 - level) / 2
    low, high = percentile(defined, tail), percentile(defined, 1.0 - tail)
    return Interval(estimate, low, high, len(defined))


def _resampled_totals(
    columns: Sequence[Sequence[int]], n_resamples: int, seed: int
) -> Iterator[PRF]:
    """Summed PRF counts of each resample of documents (same draws for every column)."""
    rng = random.Random(seed)
    n = len(columns[0])
    population = range(n)
    for _ in range(n_resamples):
        picks = rng.choices(population, k=n)
        yield PRF(*(sum(map(col.__getitem__, picks)) for col in columns))


def _columns(parts: Sequence[PRF]) -> list[list[int]]:
    return [
        [p.correct_predicted for p in parts],
        [p.predicted for p in parts],
        [p.found_gold for p in parts],
        [p.gold for p in parts],
    ]


def bootstrap_ci(
    scores: Scores, *, n_resamples: int = 1000, seed: int = 0, level: float = 0.95
) -> BootstrapCIs:
    """Bootstrap percentile intervals of micro P/R/F1 (strict and relaxed) over documents.

    ``scores`` must come from ``score_corpus`` (it needs ``per_document``).
    """
    docs = list(scores.per_document.values())
    if not docs:
        raise ValueError("bootstrap needs per-document scores (use score_corpus)")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be positive, got {n_resamples}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level {level} outside (0, 1)")
    intervals: dict[str, Mapping[str, Interval]] = {}
    for mode, pick in _MODES.items():
        parts = [pick(d) for d in docs]
        draws = list(_resampled_totals(_columns(parts), n_resamples, seed))
        whole = sum(parts, PRF())
        intervals[mode] = MappingProxyType(
            {
                name: _interval(getattr(whole, name), [getattr(d, name) for d in draws], level)
                for name in _METRICS
            }
        )
    return BootstrapCIs(level, n_resamples, seed, len(docs), MappingProxyType(intervals))


class _HasToDict(Protocol):
    def to_dict(self) -> Mapping[str, object]: ...


@dataclass(frozen=True, slots=True)
class MeanSD:
    """Mean and sample standard deviation of one metric over the runs that define it."""

    mean: float
    sd: float | None
    n: int

    def to_dict(self) -> dict[str, object]:
        return {"mean": self.mean, "sd": self.sd, "n": self.n}


@dataclass(frozen=True, slots=True)
class RunSummary:
    """Mean ± SD of every numeric result over several runs, keyed by dotted path."""

    n_runs: int
    stats: Mapping[str, MeanSD]

    def __getitem__(self, path: str) -> MeanSD:
        return self.stats[path]

    def to_dict(self) -> dict[str, object]:
        return {"n_runs": self.n_runs, "stats": {k: v.to_dict() for k, v in self.stats.items()}}


def _paired(
    ids: Sequence[str],
    difference: Callable[[Sequence[int]], float | None],
    n_resamples: int,
    seed: int,
    level: float,
) -> Interval:
    """``difference`` over all of ``ids`` (their indices) with its percentile interval over
    resamples that draw each index once for both sides."""
    if not ids:
        return Interval(None, None, None, 0)
    rng = random.Random(seed)
    population = range(len(ids))
    draws = [difference(rng.choices(population, k=len(ids))) for _ in range(n_resamples)]
    return _interval(difference(population), draws, level)


def paired_recall_difference(
    first: Mapping[str, tuple[int, int]],
    second: Mapping[str, tuple[int, int]],
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> Interval:
    """Recall of ``first`` minus recall of ``second`` with its paired bootstrap interval: both
    map the same documents to ``(found, gold)`` counts, and each resample draws documents once
    for both (resamples without a gold span are left out)."""
    if set(first) != set(second):
        raise ValueError("a paired difference needs the same documents on both sides")
    ids = sorted(first)
    columns = [[first[d][0] for d in ids], [second[d][0] for d in ids], [first[d][1] for d in ids]]
    if any(first[d][1] != second[d][1] for d in ids):
        raise ValueError("both sides must count the same gold spans")

    def difference(picks: Sequence[int]) -> float | None:
        gold = sum(columns[2][i] for i in picks)
        if not gold:
            return None
        return (sum(columns[0][i] for i in picks) - sum(columns[1][i] for i in picks)) / gold

    return _paired(ids, difference, n_resamples, seed, level)


def paired_f1_difference(
    first: Mapping[str, PRF],
    second: Mapping[str, PRF],
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> Interval:
    """Micro F1 of ``first`` minus micro F1 of ``second`` with its paired bootstrap interval:
    both map the same documents to their counts (gold may differ, e.g. in scope), and each
    resample draws documents once for both; resamples where either F1 is undefined are left
    out."""
    if set(first) != set(second):
        raise ValueError("a paired difference needs the same documents on both sides")
    ids = sorted(first)
    left = _columns([first[d] for d in ids])
    right = _columns([second[d] for d in ids])

    def difference(picks: Sequence[int]) -> float | None:
        a = PRF(*(sum(map(col.__getitem__, picks)) for col in left)).f1
        b = PRF(*(sum(map(col.__getitem__, picks)) for col in right)).f1
        return None if a is None or b is None else a - b

    return _paired(ids, difference, n_resamples, seed, level)


def _numeric_leaves(tree: Mapping[str, object], prefix: str = "") -> Iterator[tuple[str, float]]:
    for key, value in tree.items():
        path = f"{prefix}{key}"
        if isinstance(value, Mapping):
            yield from _numeric_leaves(value, f"{path}.")
        elif isinstance(value, int | float) and not isinstance(value, bool):
            yield path, float(value)


def mean_sd(runs: Sequence[_HasToDict]) -> RunSummary:
    """Mean and sample SD (``None`` for one run) of each numeric leaf of ``to_dict()``.

    A metric that is ``None`` in some runs is summarised over the runs that define it (``n``).
    """
    if not runs:
        raise ValueError("mean_sd needs at least one run")
    values: dict[str, list[float]] = {}
    for run in runs:
        for path, value in _numeric_leaves(run.to_dict()):
            values.setdefault(path, []).append(value)
    stats = {
        path: MeanSD(statistics.fmean(vs), statistics.stdev(vs) if len(vs) > 1 else None, len(vs))
        for path, vs in values.items()
    }
    return RunSummary(len(runs), MappingProxyType(stats))
