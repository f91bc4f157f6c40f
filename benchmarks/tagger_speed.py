"""Speed of the full pipeline (rules + tagger) against the rule layer and Presidio, same text.

Runs each system over the same documents in one process, one after the other, and writes
``benchmarks/results/tagger_speed.md``: kB of text per second, documents per second and
peak resident memory growth. Text: MEDDOCAN dev case reports (Spanish clinical prose, from
../shared/data when present) and synthetic notes in all 17 languages.

A system ``NAME@PRECISION`` runs profile NAME with the tagger's matrix products in PRECISION
(``float32`` or ``bfloat16``; plain NAME: what ``auto`` chooses on this machine), so both
precisions are compared in one run.

    .venv/bin/python benchmarks/tagger_speed.py [--docs 60] [--threads 2]
        [--systems rules,default@float32,default,presidio]
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import time
from pathlib import Path

from polydeid.core.segments import Segment
from polydeid.corpora import read_corpus
from polydeid.detect.tagger.model import TaggerModel
from polydeid.detect.tagger.precision import native_bf16, resolve
from polydeid.evaluate.harness import build_system

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data"
RESULTS = ROOT / "benchmarks" / "results" / "tagger_speed.md"


def texts(docs: int) -> dict[str, list[tuple[str, str]]]:
    from polydeid.synth.generate import generate

    sets: dict[str, list[tuple[str, str]]] = {}
    meddocan = DATA / "meddocan" / "dev"
    if meddocan.is_dir():
        corpus = read_corpus(meddocan, "brat", scheme="meddocan", lang="es")
        sets["MEDDOCAN dev (es)"] = [(d.lang, d.text) for d in corpus.documents[:docs]]
    per_language = max(1, docs // 17)
    synthetic = list(generate(per_language=per_language, seed=91, name_split="test"))
    sets["synthetic, 17 languages"] = [(d.lang, d.text) for d in synthetic]
    return sets


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=60)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--systems", default="rules,default@float32,default,presidio")
    args = parser.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    sets = texts(args.docs)
    rows = []
    settings: dict[str, str] = {}
    for system in args.systems.split(","):
        name, _, precision = system.partition("@")
        before = rss_mb()
        start = time.perf_counter()
        _, pipeline = build_system(name)
        load = time.perf_counter() - start
        for detector in pipeline.detectors:
            model = getattr(detector, "model", None)
            if isinstance(model, TaggerModel):
                model.precision = resolve(precision or None)
                settings[system] = (
                    f"{model.precision}, windows of at most {model.meta.max_tokens} tokens "
                    f"sharing at least {model.min_overlap}"
                )
        for name, docs in sets.items():
            for lang in {lang for lang, _ in docs}:  # warm-up: per-language pattern compilation
                pipeline.detect(Segment(next(t for g, t in docs if g == lang), lang=lang))
            start = time.perf_counter()
            for lang, text in docs:
                pipeline.detect(Segment(text, lang=lang))
            seconds = time.perf_counter() - start
            size = sum(len(t.encode("utf-8")) for _, t in docs) / 1000
            rows.append(
                [
                    system,
                    name,
                    str(len(docs)),
                    f"{size:.0f}",
                    f"{size / seconds:.1f}",
                    f"{len(docs) / seconds:.2f}",
                    f"{load:.1f}",
                    f"{rss_mb() - before:.0f}",
                ]
            )
            print(" | ".join(rows[-1]), flush=True)
    machine = f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    header = ["system", "text", "docs", "kB", "kB/s", "docs/s", "load s", "RSS growth MB"]
    lines = [
        "# Pipeline speed: rules + tagger vs rules vs Presidio (same text, one run)",
        "",
        f"Command: `.venv/bin/python benchmarks/tagger_speed.py --docs {args.docs} "
        f"--threads {args.threads} --systems {args.systems}`. Machine: {machine} (the "
        f"project's shared development machine), torch threads {args.threads}. Presidio runs "
        "its English spaCy pipeline (en_core_web_sm) on every language (its only offline "
        f"model). Native bfloat16 on this CPU: {'yes' if native_bf16() else 'no'}. Systems "
        "sharing a tagger load it once: its load time and memory show under the first.",
        "",
        *(f"- `{system}`: tagger in {text}" for system, text in settings.items()),
        "",
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
        *("| " + " | ".join(r) + " |" for r in rows),
    ]
    RESULTS.write_text("\n".join(lines) + "\n", "utf-8")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
