"""What every named pass adds or removes on every development corpus.

For each pass of the pipeline (:data:`polydeid.detect.passes.SEGMENT_PASSES`) and of the
tagger's decoder (:data:`polydeid.detect.tagger.decoder_passes.DECODER_PASSES`), the ``default``
profile runs over the development corpora of ``benchmarks/quality.py`` (and its synthetic
notes) with that one pass switched off, and the result is compared with the full pipeline:
the strict micro F1 (categories must agree) with and without it, and how many spans it adds
(found with the pass, not without) and removes. The detectors' outputs and the tagger's word
probabilities are computed once and reused, so each pass costs only its decoding and
resolution. Writes ``benchmarks/results/passes.md``.

    .venv/bin/python benchmarks/passes.py [--only MEDDOCAN,MasakhaNER] [--synthetic-per-language 60]
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from quality import DATA, DEV_CORPORA, RESULTS, read_dev_corpus, synthetic_unseen

from polydeid.core.segments import Origin, Segment
from polydeid.core.spans import Span
from polydeid.corpora import Corpus
from polydeid.detect.base import Detector
from polydeid.detect.passes import SEGMENT_PASSES, SpanPass
from polydeid.detect.pipeline import Pipeline
from polydeid.detect.profiles import profile_detectors
from polydeid.detect.tagger.decoder_passes import DECODER_PASSES
from polydeid.detect.tagger.detector import TaggerDetector
from polydeid.detect.tagger.precision import native_bf16
from polydeid.detect.tagger.precision import resolve as tagger_precision
from polydeid.evaluate.bootstrap import Interval, paired_f1_difference
from polydeid.evaluate.harness import (
    facts_reference,
    score_in_scope,
    scored_categories,
    set_aside_unmarked_dates,
)
from polydeid.evaluate.metrics import PRF

Key = tuple[str, int, int, str]


class _CachedModel:
    """The tagger's model with each text's word probabilities computed once."""

    def __init__(self, model: Any) -> None:
        self.model = model
        self.cache: dict[str, Any] = {}

    def predict(self, texts: Sequence[str]) -> list[Any]:
        missing = [t for t in dict.fromkeys(texts) if t not in self.cache]
        if missing:
            self.cache.update(zip(missing, self.model.predict(missing), strict=True))
        return [self.cache[t] for t in texts]


def _memoised(detect: Callable[[Segment], Iterable[Span]]) -> Callable[[Segment], list[Span]]:
    cache: dict[tuple[str, str, tuple[str, ...], frozenset[str]], list[Span]] = {}

    def run(segment: Segment) -> list[Span]:
        key = (segment.text, segment.lang, segment.countries, segment.hints)
        if key not in cache:
            cache[key] = list(detect(segment))
        return cache[key]

    return run


def cached_detectors(profile: str) -> list[Detector]:
    """The profile's detectors, each computing a segment's spans (the tagger: its word
    probabilities) once."""
    detectors = profile_detectors(profile)
    for detector in detectors:
        if isinstance(detector, TaggerDetector):
            detector.model = _CachedModel(detector.model)  # type: ignore[assignment]
        else:
            detector.detect = _memoised(detector.detect)  # type: ignore[method-assign]
    return detectors


@dataclass(frozen=True)
class Outcome:
    f1: float | None
    spans: frozenset[Key]
    per_document: dict[str, PRF]


def run(pipeline: Pipeline, corpus: Corpus, facts: Any) -> Outcome:
    predictions: dict[str, tuple[Span, ...]] = {}
    for doc in corpus.documents:
        segment = Segment(doc.text, lang=doc.lang, origin=Origin(file=doc.source or doc.id))
        predictions[doc.id] = pipeline.detect(segment)
    predictions, _ = set_aside_unmarked_dates(corpus, predictions)
    scores, _ = score_in_scope(corpus, predictions, facts, scored_categories(corpus.scheme))
    keys = frozenset(
        (doc_id, s.start, s.end, s.label.value)
        for doc_id, spans in predictions.items()
        for s in spans
    )
    per_document = {doc_id: s.strict.micro for doc_id, s in scores.per_document.items()}
    return Outcome(scores.strict.micro.f1, keys, per_document)


def corpora(only: str, per_language: int) -> list[Corpus]:
    out = [
        read_dev_corpus(spec)
        for spec in DEV_CORPORA
        if not only or any(k in spec.name for k in only.split(","))
    ]
    if not only or "synthetic" in only:
        out.append(synthetic_unseen(per_language))
    return out


#: The processor flags that decide which fast paths run (vector widths, bfloat16, int8).
_SPEED_FLAGS = ("avx2", "avx512f", "avx512_vnni", "avx512_bf16", "amx_bf16", "amx_int8")


def cpu_model() -> str:
    """The processor's model name and its speed-relevant flags (Linux), else what the
    platform module says."""
    try:
        info = Path("/proc/cpuinfo").read_text("utf-8").splitlines()
    except OSError:
        return platform.processor() or "unknown CPU"
    model = next((ln.split(":", 1)[1].strip() for ln in info if ln.startswith("model name")), "")
    flags = next((set(ln.split(":", 1)[1].split()) for ln in info if ln.startswith("flags")), set())
    present = [f for f in _SPEED_FLAGS if f in flags]
    listed = " ".join(present) or "none of " + "/".join(_SPEED_FLAGS)
    return f"{model or 'unknown CPU'}; flags: {listed}; {compiled_note()}"


def compiled_note() -> str:
    """Which of polydeid's modules this process runs compiled ahead of time (mypyc)."""
    from polydeid import _compiled

    running = [m.rsplit(".", 1)[1] for m, s in _compiled.status().items() if s == "compiled"]
    return f"compiled: {', '.join(running)} (mypyc)" if running else "compiled: none"


def reference_seconds(repeat: int = 5) -> float:
    """Seconds of a fixed workload of plain Python and ``re`` (best of ``repeat``), none of
    polydeid's code: times of tables made on different days compare through it, since this
    machine's speed drifts from day to day."""
    text = "".join(f"{i % 97:02d} {i * 7919 % 100000:05d}, word{i % 13} " for i in range(120_000))
    pattern = re.compile(r"\d{2} (\d{5}), (\w+)")
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        counts: dict[str, int] = {}
        for match in pattern.finditer(text):
            counts[match.group(2)] = counts.get(match.group(2), 0) + int(match.group(1)) % 7
        sorted(((str(i * 7919 % 100_003), i) for i in range(300_000)), key=lambda p: p[0])
        best = min(best, time.perf_counter() - start)
    return best


def _short(name: str) -> str:
    return (
        name.split(" (")[0]
        .replace(", held-out 30 %", "")
        .replace(" dev", "")
        .replace(", written for polydeid", "")
    )


#: Resamples of each paired bootstrap interval (documents drawn once for both sides).
RESAMPLES = 200


def _effect(full: Outcome, without: Outcome) -> Interval | None:
    """The pass's F1 difference with its paired 95 % interval; None when no span changes."""
    if full.spans == without.spans:
        return None
    return paired_f1_difference(full.per_document, without.per_document, n_resamples=RESAMPLES)


def _cell(full: Outcome, without: Outcome, effect: Interval | None) -> str:
    if effect is None:
        return "·"
    added = len(full.spans - without.spans)
    removed = len(without.spans - full.spans)
    if effect.estimate is None:
        return f"n/a (+{added}/−{removed})"
    band = (
        ""
        if effect.low is None or effect.high is None
        else (f" [{effect.low:+.3f}, {effect.high:+.3f}]")
    )
    return f"{effect.estimate:+.4f}{band} (+{added}/−{removed})"


def verdict(effects: Sequence[tuple[str, Interval | None]]) -> str:
    """Where the pass pays (its interval above 0) and where it costs (below 0); a pass that
    pays nowhere no longer earns its place."""
    pays = [name for name, e in effects if e is not None and e.low is not None and e.low > 0]
    costs = [name for name, e in effects if e is not None and e.high is not None and e.high < 0]
    text = "pays on " + ", ".join(pays) if pays else "**pays nowhere**"
    return text + ("; costs on " + ", ".join(costs) if costs else "")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="comma-separated substrings of corpus names")
    parser.add_argument("--synthetic-per-language", type=int, default=60)
    args = parser.parse_args()
    if not DATA.is_dir():
        print(f"no development data at {DATA}", file=sys.stderr)
        return 2
    started = time.perf_counter()
    detectors = cached_detectors("default")
    passes: list[SpanPass] = [*SEGMENT_PASSES, *DECODER_PASSES]
    rows: dict[str, list[str]] = {p.id: [] for p in passes}
    effects: dict[str, list[tuple[str, Interval | None]]] = {p.id: [] for p in passes}
    names: list[str] = []
    for corpus in corpora(args.only, args.synthetic_per_language):
        facts, _ = facts_reference(corpus)
        full = run(Pipeline(detectors), corpus, facts)
        names.append(f"{_short(corpus.name)} (F1 {full.f1:.4f})" if full.f1 else corpus.name)
        for p in passes:
            without = run(Pipeline(detectors, disabled_passes={p.id}), corpus, facts)
            effect = _effect(full, without)
            effects[p.id].append((_short(corpus.name), effect))
            rows[p.id].append(_cell(full, without, effect))
        print(f"{corpus.name}: done ({time.perf_counter() - started:.0f} s)", flush=True)
    command = "`" + " ".join([".venv/bin/python benchmarks/passes.py", *sys.argv[1:]]) + "`"
    lines = [
        "# What each pass adds or removes",
        "",
        f"Command: {command}. Profile `default`; machine: {cpu_model()} ({platform.machine()}, "
        f"{os.cpu_count()} cores, native bfloat16: {'yes' if native_bf16() else 'no'}), tagger "
        f"products in {tagger_precision()}; {time.perf_counter() - started:.0f} s.",
        "",
        "Each cell: the strict micro F1 (categories must agree) of the full pipeline minus the "
        "F1 with only this pass switched off — positive: the pass pays — and, in brackets, the "
        "spans it adds (found with it, not without) and removes. In square brackets: the "
        f"paired 95 % bootstrap interval of the difference ({RESAMPLES} resamples of the "
        "corpus's documents, each drawn once for both sides, seed 0). `·`: no span changes. "
        "Corpora and scopes as in `quality.md` (the synthetic notes read as text). Verdict: "
        "the corpora where the interval lies above 0 (the pass pays) or below 0 (it costs); "
        "a pass that pays nowhere no longer earns its place.",
        "",
        "| pass | stage | verdict | " + " | ".join(names) + " |",
        "|---|---|---|" + "---|" * len(names),
    ]
    for p in passes:
        lines.append(
            f"| `{p.id}` | {p.stage} | {verdict(effects[p.id])} | " + " | ".join(rows[p.id]) + " |"
        )
    lines += ["", "## The passes", ""]
    lines += [f"- `{p.id}` ({p.stage}): {p.summary}." for p in passes]
    page = "\n".join(lines) + "\n"
    name = "passes.md" if not args.only else "passes-partial.md"
    (RESULTS / name).write_text(page, "utf-8")
    print(page)
    return 0


if __name__ == "__main__":
    sys.exit(main())
