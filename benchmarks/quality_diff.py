"""Compare two runs of ``benchmarks/quality.py``: what changed, per corpus and category.

Reads two ``quality.md`` files (say, the committed one at a base commit and a new run) and
writes a Markdown report: per corpus and system, strict F1 before and after with the new run's
bootstrap interval and a flag where the new F1 falls below the old one by more than that
interval's lower half-width; then every category whose strict precision, recall or F1 moved by
at least ``--min-change``.

    git show BASE:benchmarks/results/quality.md > /tmp/base.md
    .venv/bin/python benchmarks/quality_diff.py /tmp/base.md benchmarks/results/quality.md \\
        --out benchmarks/results/quality-diff.md
"""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass
from pathlib import Path

UNDEFINED = "–"


@dataclass(frozen=True)
class Row:
    """One system's strict figures on one corpus (or one category of it)."""

    precision: float | None
    recall: float | None
    f1: float | None
    gold: int | None = None
    predicted: int | None = None


@dataclass
class CorpusRun:
    summary: dict[str, Row]
    intervals: dict[str, tuple[float, float]]
    categories: dict[tuple[str, str], Row]


def _number(cell: str) -> float | None:
    cell = cell.strip()
    return None if cell in {UNDEFINED, "-", ""} else float(cell)


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def read_quality(path: Path) -> dict[str, CorpusRun]:
    """Every corpus section of a ``quality.md``: summary rows, F1 intervals, category rows."""
    runs: dict[str, CorpusRun] = {}
    current: CorpusRun | None = None
    table = ""
    header: list[str] = []
    for line in path.read_text("utf-8").splitlines():
        if line.startswith("## "):
            name = line[3:].strip()
            current = runs.setdefault(name, CorpusRun({}, {}, {}))
            table = ""
        elif line.startswith("### "):
            table = line[4:].strip()
        elif current is not None and line.startswith("| ") and not line.startswith("| :--"):
            cells = _cells(line)
            if cells[0] in {"System", "Category"}:
                header = cells
                continue
            if table == "Summary" and header and header[0] == "System":
                col = {h: i for i, h in enumerate(header)}
                current.summary[cells[0]] = Row(
                    _number(cells[col["Strict P"]]),
                    _number(cells[col["Strict R"]]),
                    _number(cells[col["Strict F1"]]),
                )
                ci = cells[col["Strict F1 CI"]] if "Strict F1 CI" in col else ""
                match = re.fullmatch(r"([0-9.]+)[–-]([0-9.]+)", ci)
                if match:
                    current.intervals[cells[0]] = (float(match[1]), float(match[2]))
            elif table == "Per category" and header and header[0] == "Category":
                col = {h: i for i, h in enumerate(header)}
                current.categories[(cells[0], cells[1])] = Row(
                    _number(cells[col["Strict P"]]),
                    _number(cells[col["Strict R"]]),
                    _number(cells[col["Strict F1"]]),
                    int(cells[col["Gold"]]),
                    int(cells[col["Predicted"]]),
                )
    return {name: run for name, run in runs.items() if run.summary}


def _fmt(value: float | None) -> str:
    return UNDEFINED if value is None else f"{value:.3f}"


def _delta(old: float | None, new: float | None) -> float | None:
    return None if old is None or new is None else new - old


def compare(old: dict[str, CorpusRun], new: dict[str, CorpusRun], min_change: float) -> str:
    """The Markdown report (see the module docstring)."""
    lines = [
        "## Strict F1 per corpus and system",
        "",
        "`worse` marks a new F1 below the old one by more than the new run's bootstrap "
        "interval reaches below its point estimate.",
        "",
        "| corpus | system | old F1 | new F1 | change | new 95 % CI | |",
        "|---|---|--:|--:|--:|---|---|",
    ]
    for corpus, run in new.items():
        before = old.get(corpus)
        for system, row in run.summary.items():
            prior = before.summary.get(system) if before else None
            change = _delta(prior.f1 if prior else None, row.f1)
            interval = run.intervals.get(system)
            flag = ""
            if change is not None and interval is not None and row.f1 is not None:
                flag = "worse" if -change > row.f1 - interval[0] else ""
            lines.append(
                f"| {corpus} | {system} | {_fmt(prior.f1 if prior else None)} | "
                f"{_fmt(row.f1)} | {'' if change is None else f'{change:+.3f}'} | "
                f"{'' if interval is None else f'{interval[0]:.3f}–{interval[1]:.3f}'} | "
                f"{flag} |"
            )
    lines += [
        "",
        f"## Categories that moved (strict P, R or F1 by at least {min_change})",
        "",
        "| corpus | category | system | gold old→new | predicted old→new | P old→new | "
        "R old→new | F1 old→new |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for corpus, run in new.items():
        before = old.get(corpus)
        for key, row in run.categories.items():
            prior = before.categories.get(key) if before else None
            moves = [
                _delta(getattr(prior, f) if prior else None, getattr(row, f))
                for f in ("precision", "recall", "f1")
            ]
            appeared = prior is None and bool(row.gold or row.predicted)
            defined = prior is not None and (prior.f1 is None) != (row.f1 is None)
            moved = any(m is not None and abs(m) >= min_change for m in moves)
            if not (appeared or defined or moved):
                continue

            def pair(field: str, prior: Row | None = prior, row: Row = row) -> str:
                was = getattr(prior, field) if prior else None
                now = getattr(row, field)
                if isinstance(now, int) or isinstance(was, int):
                    return f"{'' if was is None else was}→{now}"
                return f"{_fmt(was)}→{_fmt(now)}"

            lines.append(
                f"| {corpus} | {key[0]} | {key[1]} | {pair('gold')} | {pair('predicted')} | "
                f"{pair('precision')} | {pair('recall')} | {pair('f1')} |"
            )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", type=Path)
    parser.add_argument("new", type=Path)
    parser.add_argument("--min-change", type=float, default=0.01)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--title", default="Quality: what changed")
    args = parser.parse_args()
    report = f"# {args.title}\n\n" + compare(
        read_quality(args.old), read_quality(args.new), args.min_change
    )
    if args.out:
        args.out.write_text(report, "utf-8")
    else:
        print(report, end="")


if __name__ == "__main__":
    main()
