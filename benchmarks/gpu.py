"""The default profile end to end on one device: MB/s, GPU utilisation, the CPU/GPU split.

Issue 36's GPU path: ``polydeid batch --device cuda`` runs every worker's tagger on the GPU
(bfloat16 where it has it, batches of up to 4,096 tokens) while the workers' CPUs do the
rules, tokenising, decoding and passes. Two measurements on one set of synthetic notes
(17 languages, ``polydeid.synth``), written to ``benchmarks/results/gpu.md``:

1. **End to end**: ``polydeid batch NOTES OUT --device D --workers W`` in a fresh process,
   wall time including start-up: MB/s and records/s. Where ``nvidia-smi`` is on the path it
   is sampled every half second meanwhile: the GPU's utilisation (mean, max) and memory.
2. **Split**, in this process: one de-identifier on the device reads a sample of the notes
   64 at a time (``detect_many``); the encoder's forward passes are timed apart (on a GPU,
   synchronised), the rest is the CPU's share.

Run it where a GPU is; it runs on the CPU too (``--device cpu``, for testing the script).

    .venv/bin/python benchmarks/gpu.py [--device cuda] [--mb 20] [--workers 8] [--output F]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from passes import cpu_model

from polydeid.synth.generate import generate

RESULTS = Path(__file__).resolve().parent / "results" / "gpu.md"


def write_notes(path: Path, megabytes: float, seed: int = 41) -> tuple[int, int]:
    """Synthetic prose notes of every language until ``megabytes``, as JSONL: (records,
    bytes). A first set is generated and its records repeated, each under its own id."""
    base = [(d.lang, d.text) for d in generate(per_language=12, seed=seed, formats=["prose"])]
    target = int(megabytes * 1_000_000)
    size = count = 0
    with path.open("w", encoding="utf-8") as handle:
        while size < target:
            lang, text = base[count % len(base)]
            line = json.dumps({"id": count, "lang": lang, "text": text}, ensure_ascii=False)
            handle.write(line + "\n")
            size += len(line.encode("utf-8")) + 1
            count += 1
    return count, size


class GpuSampler:
    """``nvidia-smi`` read every half second in a thread: utilisation % and memory MiB."""

    def __init__(self) -> None:
        self.samples: list[tuple[float, float]] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def __enter__(self) -> GpuSampler:
        if shutil.which("nvidia-smi"):
            self._thread = threading.Thread(target=self._run, daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def _run(self) -> None:
        query = [
            "nvidia-smi",
            "--query-gpu=utilization.gpu,memory.used",
            "--format=csv,noheader,nounits",
        ]
        while not self._stop.is_set():
            done = subprocess.run(query, capture_output=True, text=True, check=False)
            for line in done.stdout.splitlines()[:1]:
                parts = [p.strip() for p in line.split(",")]
                if len(parts) == 2:
                    self.samples.append((float(parts[0]), float(parts[1])))
            self._stop.wait(0.5)

    def summary(self) -> str:
        if not self.samples:
            return "not sampled (no nvidia-smi)"
        use = [u for u, _ in self.samples]
        memory = max(m for _, m in self.samples)
        return (
            f"utilisation mean {statistics.mean(use):.0f} %, max {max(use):.0f} % "
            f"({len(use)} samples); memory max {memory:.0f} MiB"
        )


def end_to_end(notes: Path, device: str, workers: int, work: Path) -> float:
    """Wall seconds of ``polydeid batch`` over ``notes`` in a fresh process."""
    out = work / f"out-{device}-{workers}"
    command = [
        sys.executable, "-m", "polydeid.cli", "batch", str(notes), str(out),
        "--device", device, "--workers", str(workers), "--no-progress",
    ]  # fmt: skip
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"polydeid batch failed ({done.returncode}): {done.stderr[-2000:]}")
    return seconds


def split(notes: Path, device: str, records: int) -> tuple[float, float, int]:
    """(seconds in all, seconds in the encoder's forward, bytes) of one de-identifier on
    ``device`` reading the first ``records`` notes 64 at a time (after one unmeasured batch)."""
    from polydeid.api import Deidentifier
    from polydeid.core.segments import Segment
    from polydeid.detect.tagger.precision import device_environment

    rows = [json.loads(line) for line in notes.read_text("utf-8").splitlines()[:records]]
    segments = [Segment(r["text"], lang=r["lang"]) for r in rows]
    with device_environment(device):
        deid = Deidentifier(profile="default")
    forward_seconds = [0.0]
    for detector in deid.pipeline.detectors:
        model = getattr(detector, "model", None)
        if model is None:
            continue
        original = model._forward
        sync = _synchronise(model.device)

        def timed(_forward: Callable[[], Any] = original, sync: Callable[[], None] = sync) -> Any:
            inner = _forward()

            def run(ids: Any, mask: Any) -> Any:
                sync()
                start = time.perf_counter()
                try:
                    return inner(ids, mask)
                finally:
                    sync()
                    forward_seconds[0] += time.perf_counter() - start

            return run

        model._forward = timed
    deid.pipeline.detect_many(segments[:64])
    forward_seconds[0] = 0.0
    start = time.perf_counter()
    for k in range(0, len(segments), 64):
        deid.pipeline.detect_many(segments[k : k + 64])
    total = time.perf_counter() - start
    return total, forward_seconds[0], sum(len(s.text.encode("utf-8")) for s in segments)


def _synchronise(device: str) -> Callable[[], None]:
    if device == "cuda":
        import torch

        return torch.cuda.synchronize
    return lambda: None


def machine(device: str) -> str:
    line = (
        f"{cpu_model()} ({platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()})"
    )
    if device == "cuda":
        import torch

        line += f"; GPU {torch.cuda.get_device_name(0)}, torch {torch.__version__}"
    return line


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    parser.add_argument("--mb", type=float, default=20.0, help="MB of notes end to end")
    parser.add_argument("--workers", type=int, default=max(1, (os.cpu_count() or 2) // 2))
    parser.add_argument("--split-records", type=int, default=1000)
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()
    if args.device == "cuda":
        from polydeid.core.errors import ConfigError
        from polydeid.detect.tagger.precision import resolve_device

        try:
            resolve_device("cuda")
        except ConfigError as exc:  # no GPU here: say so before any work
            raise SystemExit(f"gpu.py: {exc.message}") from None
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        notes = work / "notes.jsonl"
        records, size = write_notes(notes, args.mb)
        with GpuSampler() as gpu:
            seconds = end_to_end(notes, args.device, args.workers, work)
        total, forward, sample_bytes = split(notes, args.device, args.split_records)
    command = (
        f"`.venv/bin/python benchmarks/gpu.py --device {args.device} --mb {args.mb:g} "
        f"--workers {args.workers} --split-records {args.split_records}`"
    )
    lines = [
        "# The default profile end to end on one device",
        "",
        f"Command: {command}. Machine: {machine(args.device)}.",
        "",
        "## End to end (`polydeid batch`, a fresh process, start-up included)",
        "",
        "| device | workers | records | MB | seconds | MB/s | records/s |",
        "|---|---:|---:|---:|---:|---:|---:|",
        f"| {args.device} | {args.workers} | {records} | {size / 1e6:.2f} | {seconds:.1f} | "
        f"{size / 1e6 / seconds:.3f} | {records / seconds:.1f} |",
        "",
        f"GPU while it ran: {gpu.summary()}.",
        "",
        "## Split (one de-identifier in one process, 64 notes a call)",
        "",
        "| notes | MB | seconds | MB/s | encoder forward s | encoder share | CPU (the rest) s |",
        "|---:|---:|---:|---:|---:|---:|---:|",
        f"| {min(records, args.split_records)} | {sample_bytes / 1e6:.2f} | {total:.2f} | "
        f"{sample_bytes / 1e6 / total:.3f} | {forward:.2f} | {forward / total:.0%} | "
        f"{total - forward:.2f} |",
        "",
    ]
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text("\n".join(lines), "utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
