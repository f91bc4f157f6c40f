"""Residual risk on every development corpus and the synthetic set: leaked identifiers.

For each corpus of ``quality.py``'s list (read and cut as there) and the synthetic set of
unseen names, every system's leak counts (:mod:`polydeid.evaluate.leaks`): per language ×
category × format, the gold identifiers of which some letter or digit survives, those that
survive whole, the leak rate and the upper end of its 95 % two-sided Clopper–Pearson
interval. The synthetic set is counted twice: read as text (as ``polydeid eval`` reads it)
and read as files of its twelve layouts, as the CLI reads them. Writes
``benchmarks/results/leaks.md``.

    .venv/bin/python benchmarks/leaks.py [--systems rules,default] [--only NAME,...]
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from passes import cpu_model
from quality import (
    DATA,
    DEV_CORPORA,
    RESULTS,
    predictions_as_files,
    read_dev_corpus,
    synthetic_unseen,
)

from polydeid.corpora import Corpus
from polydeid.evaluate.harness import evaluate
from polydeid.evaluate.leaks import ALL, LEAK_DEFINITION, LeakCount, LeakTable, leak_table
from polydeid.evaluate.report import leak_rows


def _num(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def _cells(count: LeakCount) -> list[str]:
    return [str(count.leaked), _num(count.rate), _num(count.upper()), str(count.whole)]


def _pick(table: LeakTable, key: tuple[str, str, str]) -> LeakCount:
    lang, category, fmt = (None if part == ALL else part for part in key)
    return table.total(lang=lang, category=category, format=fmt)


def _table(
    systems: Sequence[str], tables: Sequence[LeakTable], keys: Sequence[tuple[str, str, str]]
) -> list[str]:
    """Markdown rows: labels, gold once (every system shares the gold), then per system."""
    header = ["language", "category", "format", "gold"]
    for name in systems:
        header += [f"{name} leaked", f"{name} rate", f"{name} 95 % upper", f"{name} wholly"]
    lines = ["| " + " | ".join(header) + " |", "|---|---|---|" + "--:|" * (len(header) - 3)]
    for key in keys:
        counts = [_pick(t, key) for t in tables]
        if len({c.gold for c in counts}) > 1:
            raise ValueError("systems disagree on the gold count of a cell")
        row = [*key, str(counts[0].gold)]
        for count in counts:
            row += _cells(count)
        lines.append("| " + " | ".join(row) + " |")
    return lines


def _keys_by(table: LeakTable, axes: Sequence[str]) -> list[tuple[str, str, str]]:
    """Row keys of the marginal over ``axes`` (others read ``all``), total first."""
    order = {"lang": 0, "category": 1, "format": 2}
    keys = []
    for part in sorted(table.marginal(axes)):
        key = [ALL, ALL, ALL]
        for axis, value in zip(axes, part, strict=True):
            key[order[axis]] = value
        keys.append((key[0], key[1], key[2]))
    return [(ALL, ALL, ALL), *keys]


def section(title: str, note: str, systems: Sequence[str], tables: Sequence[LeakTable]) -> str:
    """One corpus: its full table, or for many cells (the synthetic set) the margins first
    and the full table folded."""
    full = [key for key, _ in leak_rows(tables[0])]
    parts = [f"## {title}", "", note, ""]
    if len(full) <= 60:
        parts += _table(systems, tables, full)
    else:
        parts += ["By format (all languages and categories):", ""]
        parts += _table(systems, tables, _keys_by(tables[0], ["format"]))
        parts += ["", "By language (all categories and formats):", ""]
        parts += _table(systems, tables, _keys_by(tables[0], ["lang"]))
        parts += ["", "By category (all languages and formats):", ""]
        parts += _table(systems, tables, _keys_by(tables[0], ["category"]))
        parts += ["", "<details><summary>Every language × category × format</summary>", ""]
        parts += _table(systems, tables, full)
        parts += ["", "</details>"]
    return "\n".join(parts) + "\n"


def summary(rows: Sequence[tuple[str, Sequence[LeakTable]]], systems: Sequence[str]) -> list[str]:
    header = ["corpus", "gold"]
    for name in systems:
        header += [f"{name} leaked", f"{name} rate", f"{name} 95 % upper", f"{name} wholly"]
    lines = ["| " + " | ".join(header) + " |", "|---|" + "--:|" * (len(header) - 1)]
    for title, tables in rows:
        totals = [t.total() for t in tables]
        row = [title, str(totals[0].gold)]
        for count in totals:
            row += _cells(count)
        lines.append("| " + " | ".join(row) + " |")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--systems", default="rules,default")
    parser.add_argument("--only", default="", help="comma-separated substrings of corpus names")
    parser.add_argument(
        "--synthetic-per-language",
        type=int,
        default=60,
        help="synthetic unseen-name documents per language (as quality.py)",
    )
    parser.add_argument("--out", type=Path, default=RESULTS / "leaks.md")
    args = parser.parse_args()
    only = [k for k in args.only.split(",") if k]
    selected = [s for s in DEV_CORPORA if not only or any(k in s.name for k in only)]
    if any(spec.root == DATA for spec in selected) and not DATA.is_dir():
        print(f"no development data at {DATA}", file=sys.stderr)
        return 2
    systems = [s for s in args.systems.split(",") if s]
    started = time.perf_counter()
    done: list[tuple[str, str, Sequence[LeakTable]]] = []
    descriptions: dict[str, str] = {}

    def run(corpus: Corpus, note: str, fmt: str) -> None:
        result = evaluate(corpus, systems, corpus_format=fmt, bootstrap=0)
        descriptions.update((s.name, s.description) for s in result.systems)
        done.append((corpus.name, note, [s.leaks for s in result.systems]))
        print(f"{corpus.name}: {result.gold_spans} gold spans", flush=True)

    for spec in selected:
        run(read_dev_corpus(spec), f"Read as text (corpus format {spec.format}).", spec.format)
    if not only or "synthetic" in args.only:
        corpus = synthetic_unseen(args.synthetic_per_language)
        run(
            corpus,
            "Read as text, as `polydeid eval` reads it; format: the layout the note is in.",
            "jsonl",
        )
        as_files: list[LeakTable] = []
        for name in systems:
            predictions = predictions_as_files(corpus.documents, name)
            as_files.append(leak_table(corpus.documents, predictions))
        done.append(
            (
                f"{corpus.name}, read as files",
                "Each note read as a file of its layout, as the CLI reads it (JSON, FHIR, XML, "
                "HL7 v2, CSV, logs and code through polydeid's readers; prose, forms and chat as "
                "text: `quality.predictions_as_files`).",
                as_files,
            )
        )
    seconds = time.perf_counter() - started
    command = "`.venv/bin/python benchmarks/leaks.py " + " ".join(sys.argv[1:]) + "`"
    page = [
        "# Residual risk: gold identifiers leaked",
        "",
        f"Command: {command.replace('  ', ' ')}; machine: {cpu_model()} ({platform.machine()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}); {seconds:.0f} s.",
        "",
        "Columns, one group per system:",
        "",
        *(f"- `{name}`: {descriptions.get(name, name)}" for name in systems),
        "",
        f"Leak: {LEAK_DEFINITION}; whitespace and punctuation identify nobody, and every "
        "prediction covers, in the categories a corpus scores or not (a redaction hides what it "
        "covers whatever it calls it). `leaked`: gold identifiers of which some letter or digit "
        "survives; `wholly`: of which all survive; `rate`: leaked / gold; `95 % upper`: the "
        "upper end of the two-sided 95 % Clopper–Pearson interval of the rate (exact binomial, "
        "identifiers counted as independent draws: identifiers of one document are not, so "
        "read the bound as optimistic where one document repeats a leak). `all`: summed over "
        "that column. Categories: the corpus scheme's labels mapped to polydeid's taxonomy. "
        "Gold conventions count as they are: a title a corpus puts inside a name span "
        '("Dr. Patel") leaks when a system leaves the title out.',
        "",
        "## Summary",
        "",
        *summary([(title, tables) for title, _, tables in done], systems),
        "",
    ]
    for title, note, tables in done:
        page.append(section(title, note, systems, tables))
    args.out.write_text("\n".join(page), "utf-8")
    print(f"wrote {args.out} in {seconds:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
