"""Where the time goes: start-up, and each stage of de-identification, by wall-clock timers.

Issue 36 asks for this table before any speed work. Two parts, one machine, one run:

1. **Start-up**, each in a fresh interpreter (``--startups`` runs, the median): importing
   ``polydeid.api``; importing torch; building the ``Deidentifier`` of a profile; its first
   short English record, split by detector (a rule's first call compiles its patterns and
   builds its word lists; the tagger's loads and converts the model); and its second record.
   Also the one-line command (``echo … | polydeid redact - --lang en``) as a user runs it,
   wall-clock, beside a one-shot Presidio analyser run that puts its tags into the text
   (spaCy ``en_core_web_sm``, built offline as ``polydeid eval`` builds it, which imports
   ``polydeid.evaluate.baselines`` too).
2. **Steady state** over development text, after a warm-up: every detector's ``detect``,
   and inside the tagger the tokeniser, the encoder's forward passes, the mapping of window
   rows back to words and the decoder (with its passes); resolution; the segment passes;
   the transform (``tag`` policy). Each stage is timed with ``time.perf_counter`` around the
   call (no profiler slows Python-heavy stages more than the encoder), and the table gives
   its seconds and its share of the wall time. Sets: MEDDOCAN dev case reports (long
   Spanish documents), ASQ-PHI dev queries read one call each (short English records), and
   synthetic notes in 17 languages.

    .venv/bin/python benchmarks/speed_profile.py [--docs 40] [--queries 150] [--startups 3]
        [--profiles rules,default] [--no-presidio]

Writes ``benchmarks/results/speed_profile.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from passes import cpu_model
from tagger_speed import asq_queries, texts

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "speed_profile.md"
PYTHON = sys.executable
#: The short record of the start-up measurements (invented).
RECORD = "Patient Kalo Mirute, phone 0772 123456, seen 12/03/2024 for fever."

# --------------------------------------------------------------------------- start-up

_STARTUP = r"""
import json, sys, time
profile = sys.argv[1]
out = {}
t = time.perf_counter()
if profile != "rules":
    import torch  # noqa: F401
    out["import torch"] = time.perf_counter() - t
t = time.perf_counter()
from polydeid.api import Deidentifier
from polydeid.core.segments import Segment
out["import polydeid.api"] = time.perf_counter() - t
t = time.perf_counter()
deid = Deidentifier(profile=profile)
out["build Deidentifier"] = time.perf_counter() - t
record = sys.argv[2]
segment = Segment(record, lang="en")
part, detectors = deid.pipeline._routed(segment)
first = {}
t0 = time.perf_counter()
for detector in detectors:
    t = time.perf_counter()
    list(detector.detect(part))
    first[detector.id] = time.perf_counter() - t
t = time.perf_counter()
deid.redact_segment(segment)
out["first record: resolution, passes, transform"] = time.perf_counter() - t
out["first record, all"] = time.perf_counter() - t0
t = time.perf_counter()
deid.redact_segment(Segment(record.replace("Kalo", "Mira"), lang="en"))
out["second record"] = time.perf_counter() - t
import gc
from polydeid.core.collector import freeze_loaded
gc.collect()
t = time.perf_counter()
gc.collect()
out["a full collection of the cyclic collector"] = time.perf_counter() - t
freeze_loaded()
t = time.perf_counter()
gc.collect()
out["a full collection after freeze_loaded (batch workers, the service)"] = time.perf_counter() - t
print(json.dumps({"steps": out, "first": first}))
"""

_PRESIDIO_ONE_SHOT = r"""
import sys
from polydeid.evaluate.baselines import DEFAULT_PRESIDIO_MODELS, build_presidio_analyzer
text = sys.stdin.read()
analyzer = build_presidio_analyzer(DEFAULT_PRESIDIO_MODELS)  # offline: the pinned spaCy model
results = sorted(analyzer.analyze(text=text, language="en"), key=lambda r: (-r.start, r.end))
limit = len(text)
for r in results:
    if r.end <= limit:
        text, limit = text[: r.start] + f"<{r.entity_type}>" + text[r.end :], r.start
print(text)
"""


def _median_runs(argv: list[str], runs: int, stdin: str | None = None) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, input=stdin, text=True, capture_output=True, check=True)
        times.append(time.perf_counter() - start)
    return times


def startup(profile: str, runs: int) -> tuple[dict[str, float], dict[str, float]]:
    """Median seconds of each start-up step and of each detector's first call."""
    steps: dict[str, list[float]] = defaultdict(list)
    first: dict[str, list[float]] = defaultdict(list)
    for _ in range(runs):
        done = subprocess.run(
            [PYTHON, "-c", _STARTUP, profile, RECORD], capture_output=True, text=True, check=True
        )
        found = json.loads(done.stdout.strip().splitlines()[-1])
        for key, value in found["steps"].items():
            steps[key].append(value)
        for key, value in found["first"].items():
            first[key].append(value)
    return (
        {k: statistics.median(v) for k, v in steps.items()},
        {k: statistics.median(v) for k, v in first.items()},
    )


def one_line(profile: str, runs: int) -> float:
    """Median wall seconds of ``echo RECORD | polydeid redact - --lang en`` (warm disk cache:
    one unmeasured run first)."""
    argv = [
        str(Path(PYTHON).with_name("polydeid")),
        "redact",
        "-",
        "--lang",
        "en",
        "--profile",
        profile,
    ]
    _median_runs(argv, 1, RECORD)
    return statistics.median(_median_runs(argv, runs, RECORD))


def presidio_one_line(runs: int) -> float | None:
    try:
        argv = [PYTHON, "-c", _PRESIDIO_ONE_SHOT]
        _median_runs(argv, 1, RECORD)
        return statistics.median(_median_runs(argv, runs, RECORD))
    except (subprocess.CalledProcessError, FileNotFoundError):
        return None


# --------------------------------------------------------------------------- steady state


class Stages:
    """Seconds per stage, gathered by wrapping the calls that make up each stage."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self._undo: list[Callable[[], None]] = []

    def wrap(self, owner: Any, name: str, stage: str) -> None:
        original = getattr(owner, name)

        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                self.seconds[stage] += time.perf_counter() - start

        _put(owner, name, timed)
        self._undo.append(lambda: _put(owner, name, original))

    def undo(self) -> None:
        while self._undo:
            self._undo.pop()()


def _put(owner: Any, name: str, value: Any) -> None:
    """Set an attribute, also on a frozen dataclass instance."""
    if isinstance(owner, type(os)):
        setattr(owner, name, value)
    else:
        object.__setattr__(owner, name, value)


def _materialised(detect: Callable[..., Any]) -> Callable[..., Any]:
    """A detector's ``detect`` that returns a list, so a generator's work is timed in it."""

    def run(segment: Any) -> list[Any]:
        return list(detect(segment))

    return run


@contextmanager
def instrumented(deid: Any) -> Iterator[Stages]:
    """Timers around every stage of ``deid``'s pipeline, removed afterwards."""
    import polydeid.detect.pipeline as pipeline_module

    stages = Stages()
    for detector in deid.pipeline.detectors:
        model = getattr(detector, "model", None)
        if model is not None:  # the tagger: its own stages, then the rest of it
            import polydeid.detect.tagger.detector as tagger_detector
            import polydeid.detect.tagger.model as tagger_model

            stages.wrap(tagger_model, "encode_document", "tagger: tokeniser")
            stages.wrap(tagger_model, "word_rows", "tagger: window rows to words")
            stages.wrap(tagger_detector, "decode", "tagger: decoder and its passes")
            forward = model._forward

            def timed_forward(_forward: Callable[[], Any] = forward) -> Any:
                inner = _forward()

                def run(ids: Any, mask: Any) -> Any:
                    start = time.perf_counter()
                    try:
                        return inner(ids, mask)
                    finally:
                        stages.seconds["tagger: encoder forward"] += time.perf_counter() - start

                return run

            model._forward = timed_forward
            stages._undo.append(lambda m=model: delattr(m, "_forward"))
            stages.wrap(detector, "detect_many", "tagger: all")
        else:
            object.__setattr__(detector, "detect", _materialised(detector.detect))
            stages._undo.append(lambda d=detector: object.__delattr__(d, "detect"))
            stages.wrap(detector, "detect", f"rule: {detector.id}")
    stages.wrap(pipeline_module, "resolve", "resolution")
    for segment_pass in deid.pipeline.passes:
        stages.wrap(segment_pass, "run", f"pass: {segment_pass.id}")
    stages.wrap(deid.redactor, "redact", "transform (tag policy)")
    try:
        yield stages
    finally:
        stages.undo()


def steady(profile: str, docs: int, queries: int) -> list[tuple[str, float, dict[str, float]]]:
    """Per set: wall seconds over its documents and the seconds of each stage."""
    from polydeid.api import Deidentifier
    from polydeid.core.segments import Segment

    deid = Deidentifier(profile=profile)
    sets = {name: pairs for name, (pairs, _) in texts(docs, 0).items()}
    warm = {name: warmup for name, (_, warmup) in texts(docs, 10).items()}
    asq = asq_queries(queries + 20)
    if asq:
        sets["ASQ-PHI dev queries, one call each (en)"] = asq[20:]
        warm["ASQ-PHI dev queries, one call each (en)"] = asq[:20]
    out = []
    for name, pairs in sets.items():
        for lang, text in warm[name] + pairs[:1]:
            deid.redact_segment(Segment(text, lang=lang))
        with instrumented(deid) as stages:
            start = time.perf_counter()
            for lang, text in pairs:
                deid.redact_segment(Segment(text, lang=lang))
            wall = time.perf_counter() - start
        out.append(
            (
                f"{name}: {len(pairs)} documents, {sum(len(t) for _, t in pairs)} chars",
                wall,
                dict(stages.seconds),
            )
        )
    return out


# --------------------------------------------------------------------------- report


def _row(label: str, seconds: float, total: float) -> str:
    return f"| {label} | {seconds:.3f} | {100 * seconds / total:.1f} % |"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=40)
    parser.add_argument("--queries", type=int, default=150)
    parser.add_argument("--startups", type=int, default=3)
    parser.add_argument("--profiles", default="rules,default")
    parser.add_argument("--no-presidio", action="store_true")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()
    profiles = [p for p in args.profiles.split(",") if p]
    started = time.perf_counter()
    lines = [
        "# Where the time goes: start-up and each stage",
        "",
        f"Command: `.venv/bin/python benchmarks/speed_profile.py {' '.join(sys.argv[1:])}`. "
        f"Machine: {cpu_model()} ({platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}; the project's shared development machine). Wall-clock "
        "timers around each call (`time.perf_counter`), no profiler. Start-up: median of "
        f"{args.startups} fresh interpreters.",
        "",
    ]
    one_lines = []
    for profile in profiles:
        steps, first = startup(profile, args.startups)
        lines += [f"## Start-up, profile `{profile}`", "", "| step | seconds |", "|---|---:|"]
        lines += [f"| {k} | {v:.3f} |" for k, v in steps.items()]
        lines += ["", "First record, each detector's first call (lazy builds included):", ""]
        lines += ["| detector | seconds |", "|---|---:|"]
        lines += [f"| {k} | {v:.3f} |" for k, v in sorted(first.items(), key=lambda x: -x[1])]
        lines.append("")
        one_lines.append(
            (f"`polydeid redact - --lang en --profile {profile}`", one_line(profile, args.startups))
        )
    if not args.no_presidio:
        seconds = presidio_one_line(args.startups)
        if seconds is not None:
            one_lines.append(("Presidio analyser, one shot, tags put in (en_core_web_sm)", seconds))
    lines += [
        "## One short record from the command line (wall seconds, median)",
        "",
        "| command | seconds |",
        "|---|---:|",
    ]
    lines += [f"| {k} | {v:.2f} |" for k, v in one_lines]
    lines.append("")
    for profile in profiles:
        for name, wall, stages in steady(profile, args.docs, args.queries):
            accounted = sum(v for k, v in stages.items() if k != "tagger: all")
            tagger = stages.get("tagger: all", 0.0)
            inner = sum(
                v for k, v in stages.items() if k.startswith("tagger: ") and k != "tagger: all"
            )
            rows = {k: v for k, v in stages.items() if k != "tagger: all"}
            if tagger:
                rows["tagger: the rest (windows, batching, softmax)"] = max(0.0, tagger - inner)
                accounted += rows["tagger: the rest (windows, batching, softmax)"]
            rows["the rest (segmenting, reading, spans, Python around)"] = max(
                0.0, wall - accounted
            )
            lines += [
                f"## Steady state, profile `{profile}`: {name}",
                "",
                f"Wall time {wall:.2f} s.",
                "",
                "| stage | seconds | share |",
                "|---|---:|---:|",
            ]
            lines += [
                _row(k, v, wall)
                for k, v in sorted(rows.items(), key=lambda x: -x[1])
                if v >= 0.0005
            ]
            lines.append("")
    lines.append(f"{time.perf_counter() - started:.0f} s in all.")
    args.output.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(args.output.read_text(encoding="utf-8"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
