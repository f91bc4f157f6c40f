"""Structured formats: identifier coverage, over-redaction, output validity and throughput,
format-aware reading beside plain-text reading and Presidio, on one synthetic corpus.

The corpus is the synthetic generator's (``polydeid.synth``, test name split, all 17
languages) rendered in each structured format it writes — JSON, FHIR R4 bundles, CDA-like
XML, HL7 v2, CSV, chat, log lines and source code — with every identifier annotated by
construction. Each system sees the same documents in the same run:

- ``<profile>/text``: the document as one plain-text segment (what a text-only tool does);
- ``<profile>/format``: read by polydeid's reader for the detected format (fields, roles,
  field names as context, known identifiers propagated within a record);
- ``presidio/text``: Microsoft Presidio with its English pipeline, as text.

Figures per format and system:
- ``id chars``: share of the letters and digits inside gold identifier spans covered by a
  detected span (1 − leak, by character);
- ``ids whole``: share of gold identifiers with every letter and digit covered;
- ``over /100kB``: letters and digits outside any gold identifier that a detected span
  covers, per 100 kB of input (over-redaction: codes, keys, clinical text);
- ``facts hit``: share of gold clinical facts (doses, labs, vitals, drugs, diagnoses) a
  detected span touches;
- ``valid out``: share of documents whose tag-redacted output still parses as the format;
- ``kB/s``: input throughput of detection.

Usage::

    .venv/bin/python benchmarks/formats.py [--per-language 8] [--tagger-per-language 2]
        [--systems rules,default,presidio] [--out benchmarks/results/formats.md]
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import platform
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from polydeid.api import Deidentifier
from polydeid.core.errors import PolydeidError
from polydeid.core.segments import Segment
from polydeid.corpora.document import AnnotatedDocument
from polydeid.engine import read_document
from polydeid.formats.base import splice
from polydeid.formats.registry import detect_format
from polydeid.synth.formats import FILE_SUFFIXES
from polydeid.synth.generate import generate

#: the structured synthetic formats -> the file suffix used for format detection
SYNTH_FORMATS: dict[str, str] = {
    f: FILE_SUFFIXES[f]
    for f in ("json", "fhir", "xml", "hl7v2", "table_csv", "chat", "log", "code")
}


@dataclass
class Tally:
    """Counts for one (format, system) cell."""

    gold_chars: int = 0
    covered_chars: int = 0
    gold_ids: int = 0
    whole_ids: int = 0
    over_chars: int = 0
    facts: int = 0
    facts_hit: int = 0
    docs: int = 0
    valid: int = 0
    bytes_in: int = 0
    seconds: float = 0.0
    errors: int = 0
    reader: set[str] = field(default_factory=set)

    def row(self) -> list[str]:
        def share(a: int, b: int) -> str:
            return f"{a / b:.3f}" if b else "–"

        over = 100_000 * self.over_chars / self.bytes_in if self.bytes_in else 0.0
        rate = self.bytes_in / 1000 / self.seconds if self.seconds else 0.0
        return [
            share(self.covered_chars, self.gold_chars),
            share(self.whole_ids, self.gold_ids),
            f"{over:.0f}",
            share(self.facts_hit, self.facts),
            share(self.valid, self.docs),
            f"{rate:.1f}",
        ]


def _alnum_positions(text: str, start: int, end: int) -> set[int]:
    return {i for i in range(start, end) if text[i].isalnum()}


def _covered(ranges: Sequence[tuple[int, int]], size: int) -> bytearray:
    mask = bytearray(size)
    for start, end in ranges:
        mask[start:end] = b"\x01" * (end - start)
    return mask


def score(doc: AnnotatedDocument, ranges: Sequence[tuple[int, int]], tally: Tally) -> None:
    text = doc.text
    mask = _covered(ranges, len(text))
    gold_mask = bytearray(len(text))
    for span in doc.spans:
        positions = _alnum_positions(text, span.start, span.end)
        if not positions:
            continue
        hit = sum(1 for i in positions if mask[i])
        tally.gold_chars += len(positions)
        tally.covered_chars += hit
        tally.gold_ids += 1
        tally.whole_ids += hit == len(positions)
        gold_mask[span.start : span.end] = b"\x01" * (span.end - span.start)
    tally.over_chars += sum(
        1 for i, ch in enumerate(text) if mask[i] and not gold_mask[i] and ch.isalnum()
    )
    for fact in doc.facts:
        tally.facts += 1
        tally.facts_hit += any(mask[fact.start : fact.end])


def parses(fmt: str, text: str) -> bool:
    """Whether ``text`` still parses as ``fmt`` (code and logs always do)."""
    try:
        if fmt in ("json", "fhir"):
            json.loads(text)
        elif fmt == "xml":
            from defusedxml.ElementTree import fromstring

            fromstring(text.encode("utf-8"))
        elif fmt == "table_csv":
            rows = list(csv.reader(io.StringIO(text)))
            return len({len(r) for r in rows if r}) <= 1
        elif fmt == "hl7v2":
            read_document(text.encode("utf-8"), "hl7", source="check.hl7")
    except (ValueError, SyntaxError, PolydeidError):
        return False
    return True


def _tag(text: str, ranges: Sequence[tuple[int, int]]) -> str:
    return splice(text, [(s, e, "[X]") for s, e in sorted(set(ranges))])


def _merge(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for start, end in sorted(ranges):
        if out and start < out[-1][1]:
            out[-1] = (out[-1][0], max(end, out[-1][1]))
        else:
            out.append((start, end))
    return out


Runner = Callable[[AnnotatedDocument, str, str], list[tuple[int, int]]]


def text_runner(deid: Deidentifier) -> Runner:
    def run(doc: AnnotatedDocument, fmt: str, reader: str) -> list[tuple[int, int]]:
        segment = Segment(doc.text, lang=doc.lang or "en")
        return [(s.start, s.end) for s in deid.detect_segment(segment)]

    return run


def format_runner(deid: Deidentifier) -> Runner:
    processor = deid.processor()

    def run(doc: AnnotatedDocument, fmt: str, reader: str) -> list[tuple[int, int]]:
        if reader == "text":
            return text_runner(deid)(doc, fmt, reader)
        parsed = read_document(doc.text.encode("utf-8"), reader, source=f"{doc.id}")
        found = processor.detect(parsed, lang=doc.lang or "en")
        return [fs.raw() for fs in found]

    return run


def run(args: argparse.Namespace) -> str:
    systems: list[tuple[str, Runner, int]] = []
    wanted = [s.strip() for s in args.systems.split(",") if s.strip()]
    for name in wanted:
        if name == "presidio":
            from polydeid.evaluate.baselines import PresidioDetector

            deid = Deidentifier(
                detectors=[PresidioDetector(allow_any_language=True)], segment_steps=False
            )
            systems.append(("presidio/text", text_runner(deid), args.per_language))
            continue
        deid = Deidentifier(profile=name)
        count = args.tagger_per_language if name != "rules" else args.per_language
        systems.append((f"{name}/text", text_runner(deid), count))
        systems.append((f"{name}/format", format_runner(deid), count))
    # Warm-up, untimed: each language's rule patterns compile on first use (~0.5 s each).
    for doc in generate(per_language=1, seed=args.seed + 1, formats=["prose"]):
        for _, runner, _ in systems:
            runner(doc, "prose", "text")
    tallies: dict[tuple[str, str], Tally] = {}
    for fmt, suffix in SYNTH_FORMATS.items():
        docs = list(
            generate(
                per_language=args.per_language, seed=args.seed, name_split="test", formats=[fmt]
            )
        )
        by_lang: dict[str, int] = {}
        for doc in docs:
            rank = by_lang[doc.lang or ""] = by_lang.get(doc.lang or "", 0) + 1
            reader = detect_format(f"doc{suffix}", doc.text.encode("utf-8"))
            if reader == "jsonl":
                reader = "text"
            for name, runner, count in systems:
                if rank > count:
                    continue
                tally = tallies.setdefault((fmt, name), Tally())
                tally.reader.add(reader)
                started = time.perf_counter()
                try:
                    ranges = runner(doc, fmt, reader)
                except PolydeidError:
                    tally.errors += 1
                    continue
                tally.seconds += time.perf_counter() - started
                tally.bytes_in += len(doc.text.encode("utf-8"))
                tally.docs += 1
                score(doc, ranges, tally)
                tally.valid += parses(fmt, _tag(doc.text, _merge(ranges)))
        print(f"{fmt}: {len(docs)} documents", file=sys.stderr)
    return render(args, tallies, [s[0] for s in systems])


def render(
    args: argparse.Namespace, tallies: dict[tuple[str, str], Tally], systems: list[str]
) -> str:
    lines = [
        "# Structured formats: format-aware reading vs plain text vs Presidio",
        "",
        f"Command: `.venv/bin/python benchmarks/formats.py --per-language {args.per_language} "
        f"--tagger-per-language {args.tagger_per_language} --systems {args.systems} "
        f"--seed {args.seed}`",
        "",
        f"Machine: {platform.machine()}, 2 cores (shared), Python "
        f"{platform.python_version()}; all systems in one run on the same documents.",
        "",
        "Corpus: polydeid's synthetic generator, test name split, 17 languages, "
        f"{args.per_language} documents per language and format (the tagger profile on the "
        f"first {args.tagger_per_language} per language). Columns are defined in the script's "
        "docstring: id chars = 1 − character leak; ids whole = identifiers fully covered; "
        "over = identifier-free letters/digits covered per 100 kB; facts hit = clinical facts "
        "touched; valid out = tag-redacted output still parses; kB/s = detection throughput.",
        "",
        "| format | reader | system | docs | id chars | ids whole | over /100kB | facts hit "
        "| valid out | kB/s | errors |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    notes = [
        "",
        "Notes:",
        "- The synthetic documents' field names and form labels come from the same language "
        "packs (`field_labels.toml`) the readers know, so the format-aware rows are optimistic "
        "for real exports whose headers polydeid does not know (unknown fields are still "
        "scanned as text, as the text rows are).",
        "- `over` counts what the generator does not annotate: for HL7 v2 mostly MSH-7 (the "
        "message time), which the reader replaces as a date on purpose (fail closed).",
        "- The synthetic chat format is plain `speaker: text` lines, read as text; JSON chat "
        "transcripts are covered by tests/formats/test_chat.py.",
        "- Code false positives on real open-source code and docs: "
        "`benchmarks/results/code_fp.md` (`benchmarks/code_fp.py`).",
    ]
    for fmt in SYNTH_FORMATS:
        for name in systems:
            tally = tallies.get((fmt, name))
            if tally is None:
                continue
            reader = ",".join(sorted(tally.reader)) if name.endswith("/format") else "text"
            lines.append(
                f"| {fmt} | {reader} | {name} | {tally.docs} | "
                + " | ".join(tally.row())
                + f" | {tally.errors} |"
            )
    return "\n".join(lines + notes) + "\n"


def large_json(megabytes: float, workdir: Path) -> str:
    """Peak memory and time of ``polydeid redact --profile rules`` on one large JSON export
    (synthetic JSON records in one array), in a fresh process."""
    import subprocess

    records = [json.loads(d.text) for d in generate(per_language=4, seed=5, formats=["json"])]
    target = int(megabytes * 1_000_000)
    path = workdir / "large.json"
    with path.open("w", encoding="utf-8") as handle:
        handle.write("[\n")
        size, i = 2, 0
        while size < target:
            record = dict(records[i % len(records)], record_no=i)
            chunk = ("" if i == 0 else ",\n") + json.dumps(record, ensure_ascii=False)
            handle.write(chunk)
            size += len(chunk.encode("utf-8"))
            i += 1
        handle.write("\n]\n")
    size_mb = path.stat().st_size / 1e6
    # The child reports the peak of its own address space (VmHWM): ru_maxrss survives exec on
    # Linux, so it would count this process's models (tagger, Presidio) as the child's.
    probe = (
        "import re, sys\n"
        "from polydeid.cli import main\n"
        "code = main(sys.argv[1:])\n"
        "status = open('/proc/self/status').read()\n"
        "print(re.search(r'VmHWM:\\s+(\\d+)', status).group(1))\n"
        "sys.exit(code)\n"
    )
    started = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            probe,
            "redact",
            str(path),
            "-o",
            str(workdir / "large.out.json"),
            "--profile",
            "rules",
            "--format",
            "json",
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    seconds = time.perf_counter() - started
    peak_mb = int(done.stdout.strip().splitlines()[-1]) / 1024
    json.loads((workdir / "large.out.json").read_text(encoding="utf-8"))
    return (
        "\n## One large JSON document\n\n"
        f"`polydeid redact --profile rules --format json` on a {size_mb:.1f} MB JSON array "
        f"of {i:,} synthetic records, in a fresh process: {seconds:.1f} s "
        f"({size_mb * 1000 / seconds:.0f} kB/s), peak resident memory {peak_mb:.0f} MB "
        f"(interpreter, rules and the document text included); the output parses as JSON.\n"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-language", type=int, default=8)
    parser.add_argument("--tagger-per-language", type=int, default=2)
    parser.add_argument("--systems", default="rules,default,presidio")
    parser.add_argument("--seed", type=int, default=29)
    parser.add_argument("--out", default="benchmarks/results/formats.md")
    parser.add_argument("--large-mb", type=float, default=20.0, help="0: skip")
    args = parser.parse_args(argv)
    table = run(args)
    if args.large_mb > 0:
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            table += large_json(args.large_mb, Path(tmp))
    Path(args.out).write_text(table, encoding="utf-8")
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
