"""Rule-layer throughput: MB of clinical text per second on one core.

Two corpora: real clinical prose (MEDDOCAN train, Spanish, read from ../shared/data when
present) and dense synthetic notes in all 17 languages built from the bundled example records
and the clinical-facts fixture corpus, cut into notes of about 2 kB. Runs the ``rules``
profile and each of its detectors alone in one process, and writes
``benchmarks/results/rules_speed.md``. The start-up (every language's patterns and data) is
timed in two new processes: with an empty cache directory, then with what the first kept.

    .venv/bin/python benchmarks/rules_speed.py [--mb 2] [--repeat 3] [--output FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from passes import cpu_model, reference_seconds

from polydeid.core.segments import Segment
from polydeid.detect.pipeline import Pipeline
from polydeid.detect.profiles import profile_detectors
from polydeid.detect.registry import PROFILES
from polydeid.testing import FakeDetector

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "rules_speed.md"


def load_lines() -> list[tuple[str, str]]:
    """(lang, line) pairs from the example notes and the clinical-facts fixtures."""
    lines: list[tuple[str, str]] = []
    for raw in (ROOT / "examples" / "notes.jsonl").read_text("utf-8").splitlines():
        if raw.strip():
            record = json.loads(raw)
            lines.append((record["lang"], record["text"]))
    for path in sorted((ROOT / "tests" / "fixtures" / "clinical_facts").glob("*.jsonl")):
        for raw in path.read_text("utf-8").splitlines():
            if raw.strip():
                record = json.loads(raw)
                lines.append((record["lang"], record["text"]))
    return lines


def build_corpus(megabytes: float, seed: int = 13) -> list[Segment]:
    rng = random.Random(seed)
    by_lang: dict[str, list[str]] = {}
    for lang, line in load_lines():
        by_lang.setdefault(lang, []).append(line)
    target = int(megabytes * 1_000_000)
    segments: list[Segment] = []
    size = 0
    langs = sorted(by_lang)
    while size < target:
        lang = rng.choice(langs)
        parts: list[str] = []
        while sum(len(p) + 1 for p in parts) < 2000:
            parts.append(rng.choice(by_lang[lang]))
        text = "\n".join(parts)
        segments.append(Segment(text, lang=lang))
        size += len(text.encode("utf-8"))
    return segments


def measure(pipeline: Pipeline, segments: list[Segment], repeat: int) -> tuple[float, int]:
    """Best wall time over ``repeat`` runs, and the number of spans found."""
    best = float("inf")
    found = 0
    for _ in range(repeat):
        start = time.perf_counter()
        found = sum(len(pipeline.detect(s)) for s in segments)
        best = min(best, time.perf_counter() - start)
    return best, found


def meddocan_corpus() -> list[Segment]:
    """MEDDOCAN train case reports (real Spanish clinical prose), when ../shared/data is here."""
    folder = ROOT.parent / "shared" / "data" / "meddocan" / "train"
    return [Segment(p.read_text("utf-8"), lang="es") for p in sorted(folder.glob("*.txt"))]


def table(name: str, segments: list[Segment], pipeline: Pipeline, repeat: int) -> list[str]:
    nbytes = sum(len(s.text.encode("utf-8")) for s in segments)
    rows = [("rules (all)", *measure(pipeline, segments, repeat))]
    none = FakeDetector([], id="none")
    rows.append(
        ("none: reading, resolution and passes alone", *measure(Pipeline([none]), segments, repeat))
    )
    for detector in pipeline.detectors:
        rows.append((detector.id, *measure(Pipeline([detector]), segments, repeat)))
    lines = [
        f"## {name}",
        "",
        f"{len(segments)} notes, {nbytes / 1e6:.2f} MB.",
        "",
        "| detector | seconds | MB/s per core | spans |",
        "|---|---:|---:|---:|",
    ]
    for label, t, n in rows:
        lines.append(f"| {label} | {t:.3f} | {nbytes / 1e6 / t:.2f} | {n} |")
    return [*lines, ""]


def start_up(synthetic: list[Segment]) -> tuple[Pipeline, int, float]:
    """The rules pipeline after one segment of every language (every language's patterns
    compiled, its data loaded), the number of languages, and the seconds it took."""
    start = time.perf_counter()
    pipeline = Pipeline(profile_detectors("rules"))
    first: dict[str, Segment] = {}
    for segment in synthetic:
        first.setdefault(segment.lang, segment)
    for segment in first.values():
        pipeline.detect(segment)
    return pipeline, len(first), time.perf_counter() - start


def start_up_apart(mb: float) -> tuple[float, float]:
    """:func:`start_up`'s seconds in a new process with an empty cache directory, and in
    another with the cache the first one kept (polydeid.core.cache)."""
    seconds = []
    with tempfile.TemporaryDirectory() as cache:
        for _ in range(2):
            done = subprocess.run(
                [sys.executable, __file__, "--mb", f"{mb:g}", "--start-up-only"],
                env={**os.environ, "POLYDEID_CACHE": cache},
                capture_output=True,
                text=True,
                check=True,
            )
            seconds.append(float(done.stdout.split()[-1]))
    return seconds[0], seconds[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=2.0, help="size of the synthetic corpus in MB")
    parser.add_argument("--repeat", type=int, default=3, help="runs per row (best is kept)")
    parser.add_argument("--start-up-only", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()
    synthetic = build_corpus(args.mb)
    if args.start_up_only:
        print(f"{start_up(synthetic)[2]:.3f}")
        return
    empty, kept = start_up_apart(args.mb)
    pipeline, n_languages, _ = start_up(synthetic)
    machine = (
        f"{cpu_model()} ({platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}); reference workload (`passes.reference_seconds`) "
        f"{reference_seconds():.3f} s"
    )
    lines = [
        "# Rule-layer throughput",
        "",
        f"Machine: {machine} (the project's shared development machine); one process, one",
        f"thread; best of {args.repeat} runs per row. Command: "
        f"`.venv/bin/python benchmarks/rules_speed.py --mb {args.mb:g} --repeat {args.repeat}`.",
        f"Profile `rules` = {', '.join(PROFILES['rules'])}. Each detector's row is a pipeline "
        "of that detector alone: it includes the row `none` (the text's reading, resolution "
        "and the segment passes around a detector that finds nothing).",
        f"Start-up (build the profile, compile the patterns of {n_languages} languages, in a "
        f"new process): {empty:.2f} s with an empty cache directory, {kept:.2f} s with the "
        "tables the first run kept there (the gazetteers' indexes); not counted below.",
        "",
    ]
    real = meddocan_corpus()
    if real:
        lines += table(
            "Real clinical prose: MEDDOCAN train case reports (Spanish)",
            real,
            pipeline,
            args.repeat,
        )
    lines += table(
        "Dense synthetic notes, 17 languages (worst case: a fact or identifier every ~30 "
        "characters), from examples/notes.jsonl and tests/fixtures/clinical_facts, seed 13",
        synthetic,
        pipeline,
        args.repeat,
    )
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text("\n".join(lines), "utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
