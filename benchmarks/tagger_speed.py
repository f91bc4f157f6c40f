"""Speed of the full pipeline (rules + tagger) against the rule layer and Presidio, same text.

Runs every system over the same documents in one process and writes
``benchmarks/results/tagger_speed.md``: kB of text per second, documents per second and
peak resident memory growth. Text: MEDDOCAN dev case reports (Spanish clinical prose, from
../shared/data when present) and synthetic notes in all 17 languages.

Systems are measured round-robin (``--rounds``, default 3: each reads each set once a round)
and reported as the median and range over rounds, with each system's speed relative to
Presidio's in the same round: a shared machine's drift then touches every system alike.
Every system is first warmed up on the same ``--warmup`` documents of each set, which are not
measured (further MEDDOCAN dev documents; synthetic notes of another seed), and on one measured
document per language: throughput is what a run over many records sees once per-language
patterns are compiled and the CPU's matrix kernels are built for the model's input shapes —
one-time costs that a short measured set would otherwise charge to its first documents. The
warm-up's time is reported in its own column.

A system ``NAME@PRECISION`` runs profile NAME with the tagger's matrix products in PRECISION
(``float32`` or ``bfloat16``; plain NAME: what ``auto`` chooses on this machine), so both
precisions are compared in one run. A system ``NAME+many`` reads each set's documents
together, :data:`polydeid.api.BATCH_RECORDS` at a time (``Pipeline.detect_many``, as
``polydeid redact`` reads a JSONL file's records); the others read them one call each.

``--queries N`` adds N ASQ-PHI dev queries (short English records, one per document) as a set
(default 150; 0: none).

    .venv/bin/python benchmarks/tagger_speed.py [--docs 60] [--warmup 20] [--rounds 3] [--threads 2]
        [--queries 150] [--systems rules,default@float32,default,default+many,presidio]
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from passes import cpu_model

from polydeid.api import BATCH_RECORDS
from polydeid.core.segments import Segment
from polydeid.corpora import read_corpus
from polydeid.detect.tagger.model import TaggerModel
from polydeid.detect.tagger.precision import native_bf16, resolve
from polydeid.evaluate.harness import build_system

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data"
RESULTS = ROOT / "benchmarks" / "results" / "tagger_speed.md"


Docs = list[tuple[str, str]]  # (language, text)


def texts(docs: int, warmup: int = 0) -> dict[str, tuple[Docs, Docs]]:
    """Per set of text: the measured documents and the warm-up documents (none shared)."""
    from polydeid.synth.generate import generate

    sets: dict[str, tuple[Docs, Docs]] = {}
    meddocan = DATA / "meddocan" / "dev"
    if meddocan.is_dir():
        corpus = read_corpus(meddocan, "brat", scheme="meddocan", lang="es")
        pairs = [(d.lang, d.text) for d in corpus.documents]
        sets["MEDDOCAN dev (es)"] = (pairs[:docs], pairs[docs : docs + warmup])

    def synthetic(count: int, seed: int) -> Docs:
        if count <= 0:
            return []
        notes = generate(per_language=max(1, count // 17), seed=seed, name_split="test")
        return [(d.lang, d.text) for d in notes]

    sets["synthetic, 17 languages"] = (synthetic(docs, 91), synthetic(warmup, 92))
    return sets


def asq_queries(count: int) -> Docs:
    """The first ``count`` ASQ-PHI dev queries (short English records), where present."""
    from quality import DEV_CORPORA, read_dev_corpus

    spec = next(c for c in DEV_CORPORA if c.name.startswith("ASQ-PHI"))
    if not spec.location.exists():
        return []
    return [(d.lang, d.text) for d in read_dev_corpus(spec).documents][:count]


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@dataclass
class System:
    """A system under test: its pipeline, the tagger precision it runs, its one-time costs."""

    name: str
    pipeline: Any
    precision: str | None
    load: float
    warm: dict[str, float] = field(default_factory=dict)
    rss: float = 0.0
    taggers: list[TaggerModel] = field(default_factory=list)
    many: bool = False  # documents read together (detect_many), BATCH_RECORDS at a time

    def use(self) -> None:
        """Set the tagger precision this system runs (systems may share one tagger)."""
        for model in self.taggers:
            model.precision = resolve(self.precision or None)

    def run(self, docs: Docs) -> float:
        self.use()
        start = time.perf_counter()
        if self.many:
            for k in range(0, len(docs), BATCH_RECORDS):
                group = docs[k : k + BATCH_RECORDS]
                self.pipeline.detect_many([Segment(text, lang=lang) for lang, text in group])
        else:
            for lang, text in docs:
                self.pipeline.detect(Segment(text, lang=lang))
        return time.perf_counter() - start


def load(spec: str, sets: dict[str, tuple[Docs, Docs]]) -> System:
    base, plus, mode = spec.partition("+")
    if plus and mode != "many":
        raise SystemExit(f"unknown reading mode {mode!r} in {spec!r} (known: many)")
    name, _, precision = base.partition("@")
    before = rss_mb()
    start = time.perf_counter()
    _, pipeline = build_system(name)
    system = System(spec, pipeline, precision or None, time.perf_counter() - start)
    system.many = bool(plus)
    system.taggers = [
        d.model for d in pipeline.detectors if isinstance(getattr(d, "model", None), TaggerModel)
    ]
    for set_name, (docs, warm) in sets.items():
        firsts = [next(d for d in docs if d[0] == lang) for lang in {g for g, _ in docs}]
        system.warm[set_name] = system.run([*warm, *firsts])
    system.rss = rss_mb() - before
    return system


def packed(model: TaggerModel, precision: str | None) -> str:
    """Whether the tagger's fast path ran with its linear weights laid out for oneDNN."""
    return " (linear weights packed for oneDNN)" if model.packed(resolve(precision)) else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=60)
    parser.add_argument("--warmup", type=int, default=20, help="unmeasured documents per set")
    parser.add_argument("--rounds", type=int, default=3, help="measurements of each system")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--queries", type=int, default=150, help="ASQ-PHI dev queries (a set)")
    parser.add_argument("--systems", default="rules,default@float32,default,default+many,presidio")
    args = parser.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    sets = texts(args.docs, args.warmup)
    if args.queries:
        queries = asq_queries(args.queries + args.warmup)
        if queries:
            sets["ASQ-PHI dev queries (en)"] = (queries[args.warmup :], queries[: args.warmup])
    systems = [load(spec, sets) for spec in args.systems.split(",")]
    seconds: dict[tuple[str, str], list[float]] = {}
    for r in range(args.rounds):  # round-robin: drift on a shared machine hits every system
        for system in systems:
            for set_name, (docs, _) in sets.items():
                took = system.run(docs)
                seconds.setdefault((system.name, set_name), []).append(took)
                print(f"round {r + 1} | {system.name} | {set_name} | {took:.2f} s", flush=True)
    rows = []
    for system in systems:
        for set_name, (docs, _) in sets.items():
            size = sum(len(t.encode("utf-8")) for _, t in docs) / 1000
            rates = sorted(size / t for t in seconds[(system.name, set_name)])
            rows.append(
                [
                    system.name,
                    set_name,
                    str(len(docs)),
                    f"{size:.0f}",
                    f"{statistics.median(rates):.1f}",
                    f"{rates[0]:.1f}–{rates[-1]:.1f}",
                    f"{len(docs) / statistics.median(seconds[(system.name, set_name)]):.2f}",
                    f"{system.load:.1f}",
                    f"{system.warm[set_name]:.1f}",
                    f"{system.rss:.0f}",
                ]
            )
    ratios = []
    reference = "presidio"
    for system in systems:
        if system.name == reference or (reference, next(iter(sets))) not in seconds:
            continue
        for set_name in sets:
            # per round: the reference's time over this system's, on the same text
            per_round = sorted(
                ref / own
                for ref, own in zip(
                    seconds[(reference, set_name)], seconds[(system.name, set_name)], strict=True
                )
            )
            ratios.append(
                f"| {system.name} | {set_name} | {statistics.median(per_round):.2f} | "
                f"{per_round[0]:.2f}–{per_round[-1]:.2f} |"
            )
    machine = (
        f"{cpu_model()} ({platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()})"
    )
    settings = {
        s.name: f"{resolve(s.precision)}{packed(m, s.precision)}, windows of at most "
        f"{m.meta.max_tokens} tokens sharing at least {m.min_overlap}, inputs padded to a "
        f"multiple of {m.width_align}"
        for s in systems
        for m in s.taggers[:1]
    }
    header = [
        "system",
        "text",
        "docs",
        "kB",
        "kB/s (median)",
        "kB/s (range)",
        "docs/s",
        "load s",
        "warm-up s",
        "RSS growth MB",
    ]
    lines = [
        "# Pipeline speed: rules + tagger vs rules vs Presidio (same text, one run)",
        "",
        " ".join(
            [
                f"Command: `.venv/bin/python benchmarks/tagger_speed.py --docs {args.docs}",
                f"--warmup {args.warmup} --rounds {args.rounds} --threads {args.threads}",
                f"--queries {args.queries} --systems {args.systems}`.",
                f"Machine: {machine} (the project's shared development machine),",
                f"torch threads {args.threads}. Presidio runs its English spaCy pipeline",
                "(en_core_web_sm) on every language (its only offline model).",
                f"Native bfloat16 on this CPU: {'yes' if native_bf16() else 'no'}.",
                "Systems sharing a tagger load it once: its load time and memory show under",
                "the first. Each system is first run, unmeasured, over",
                f"{args.warmup} other documents of each set and one measured document per",
                "language (warm-up s); then every system reads every set once per round,",
                f"round-robin, for {args.rounds} rounds: the median and range over rounds.",
                "A system `…+many` reads a set's documents together,",
                f"{BATCH_RECORDS} at a time (`Pipeline.detect_many`, as `polydeid redact`",
                "reads a JSONL file); the others, and Presidio, one call each.",
            ]
        ),
        "",
        *(f"- `{name}`: tagger in {text}" for name, text in settings.items()),
        "",
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
        *("| " + " | ".join(r) + " |" for r in rows),
    ]
    if ratios:
        lines += [
            "",
            f"Speed relative to {reference} (its time over the system's on the same text in the "
            "same round; above 1: faster than it):",
            "",
            "| system | text | median | range |",
            "|---|---|---|---|",
            *ratios,
        ]
    RESULTS.write_text("\n".join(lines) + "\n", "utf-8")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
