"""Synthetic corpus: generation speed, validation, diversity, and what the rule layer finds.

Generates ``--per-language`` documents in every language (seed 13, train name split), times
generation and validation, and writes ``benchmarks/results/synth.md``:

* speed: documents per second, for the whole corpus and per language;
* validation: errors and warnings by code (the corpus must have zero errors);
* per language: documents, spans per category, distinct sentence templates, distinct name
  tokens / name tokens, distinct-2 of the masked text;
* axes: document types, text formats, lengths, edge cases (documents carrying each);
* rule-layer recall on the synthetic corpus per category (label-agnostic, any overlap), a
  check that the generated values follow the conventions the rules know, and a map of what
  only a model can find (names, places).

    .venv/bin/python benchmarks/synth.py [--per-language 1000] [--seed 13]
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

from polydeid.api import Deidentifier
from polydeid.core.taxonomy import Category
from polydeid.synth.export import export_jsonl
from polydeid.synth.generate import EDGE_CASES, generate, synth_languages
from polydeid.synth.validate import validate_jsonl

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "synth.md"


def table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    return lines + ["| " + " | ".join(row) + " |" for row in rows]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-language", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--recall-docs", type=int, default=150, help="documents per language")
    args = parser.parse_args()

    langs = synth_languages()
    started = time.perf_counter()
    docs = list(generate(per_language=args.per_language, seed=args.seed))
    generation = time.perf_counter() - started
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "synth.jsonl"
        export_jsonl(docs, path)
        started = time.perf_counter()
        report = validate_jsonl(path)
        validation = time.perf_counter() - started

    by_lang = defaultdict(list)
    for doc in docs:
        by_lang[doc.lang].append(doc)

    # Rule-layer recall (any overlap) per category on the first documents of each language.
    deid = Deidentifier(profile="rules")
    found: Counter[str] = Counter()
    total: Counter[str] = Counter()
    for lang in langs:
        for doc in by_lang[lang][: args.recall_docs]:
            detected = deid.detect(doc.text, lang=doc.lang)
            for span in doc.spans:
                total[span.label.value] += 1
                found[span.label.value] += any(
                    d.start < span.end and span.start < d.end for d in detected
                )

    machine = f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    chars = sum(len(d.text) for d in docs)
    lines = [
        "# Synthetic clinical corpus: speed, validation, diversity",
        "",
        f"Command: `.venv/bin/python benchmarks/synth.py --per-language {args.per_language} "
        f"--seed {args.seed}`. Machine: {machine} (the project's shared development machine), "
        "one process.",
        "",
        f"- {len(docs)} documents in {len(langs)} languages ({args.per_language} each), "
        f"{chars / 1e6:.1f} M characters, {sum(len(d.spans) for d in docs)} identifier spans, "
        f"{sum(len(d.facts) for d in docs)} clinical-fact spans.",
        f"- Generation: {generation:.1f} s ({len(docs) / generation:.0f} documents/s).",
        f"- Validation: {validation:.1f} s; {len(report.errors)} errors, "
        f"{len(report.warnings)} warnings; {'OK' if report.ok else 'NOT OK'}.",
        "",
    ]
    codes = report.codes()
    if codes:
        lines += table(["validator code", "count"], [[c, str(n)] for c, n in sorted(codes.items())])
        lines += [
            "",
            "LANG_UNCERTAIN: py3langid below 0.9 on a document (short structured documents, "
            "HL7/JSON/log syntax, code-mixed notes); a warning, not an error.",
            "",
        ]

    lines += ["## Per language", ""]
    categories = sorted({s.label.value for d in docs for s in d.spans})
    rows = []
    for lang in langs:
        diversity = report.diversity[lang]
        rows.append(
            [
                lang,
                str(diversity.documents),
                str(sum(diversity.spans.values())),
                str(diversity.templates),
                f"{diversity.distinct_name_tokens}/{diversity.name_tokens}",
                f"{diversity.distinct_n[1]:.3f}",
                f"{diversity.sentence_shapes}/{diversity.sentences}",
            ]
        )
    lines += table(
        [
            "lang",
            "docs",
            "spans",
            "distinct templates",
            "distinct name tokens",
            "distinct-2",
            "sentence shapes",
        ],
        rows,
    )
    lines += ["", "### Spans per category", ""]
    rows = []
    for lang in langs:
        counts = report.diversity[lang].spans
        rows.append([lang, *(str(counts.get(c, 0)) for c in categories)])
    lines += table(["lang", *categories], rows)

    lines += ["", "## Axes (documents)", ""]
    for axis in ("document_type", "text_format", "length"):
        counts = Counter(d.meta[axis] for d in docs)
        lines += table([axis, "documents"], [[k, str(v)] for k, v in sorted(counts.items())])
        lines.append("")
    edges = Counter(e for d in docs for e in d.meta["edge_cases"])
    lines += table(
        ["edge case", "documents", "meaning"],
        [[e, str(edges.get(e, 0)), EDGE_CASES[e]] for e in EDGE_CASES],
    )

    lines += [
        "",
        f"## Rule layer on the synthetic corpus ({args.recall_docs} documents per language)",
        "",
        "Share of gold spans that a `rules` detection overlaps (any overlap, any label). "
        "Fixed-format categories show the generated values follow conventions the rules know; "
        "names, places and organisations are for the tagger.",
        "",
    ]
    rows = [
        [c, str(total[c]), f"{found[c] / total[c]:.3f}" if total[c] else "-"]
        for c in (x.value for x in Category)
        if total[c]
    ]
    lines += table(["category", "gold spans", "rule recall (overlap)"], rows)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text("\n".join(lines) + "\n", "utf-8")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
