"""Batch runner and service throughput: records per second and peak memory.

- ``polydeid batch`` on one synthetic JSONL file (17 languages, prose notes), with 1 and 2
  worker processes, rules-only and the default profile (rules + tagger), each in a fresh
  process, cut into units as a user's run cuts it (the default ``--chunk-size`` and
  ``--chunk-bytes``); with the default profile and 2 workers also as one unit of up to
  1,000 records (``--chunk-bytes`` out of the way: units by record count alone, as before
  the byte bound); peak memory is the sum of the runner's and its workers' own peaks
  (VmHWM).
- ``polydeid serve`` (rules profile) answering ``POST /redact`` for the same notes from one
  client, one request at a time: requests per second and latency percentiles.

Usage::

    .venv/bin/python benchmarks/batch.py [--records 2000] [--tagger-records 200]
        [--out benchmarks/results/batch.md]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from passes import cpu_model

from polydeid.synth.generate import generate

#: Runs the CLI, then prints the peak resident memory of this process and of every worker
#: it started (each reads its own VmHWM before exiting, through a pool finaliser).
_PROBE = """
import os, re, sys, multiprocessing as mp
os.environ["PEAKS_PARENT"] = str(os.getpid())
from polydeid.cli import main
def hwm():
    return int(re.search(r"VmHWM:\\s+(\\d+)", open("/proc/self/status").read()).group(1))
code = main(sys.argv[1:])
children = 0
for name in os.listdir(os.environ["PEAKS"]):
    children += int(open(os.path.join(os.environ["PEAKS"], name)).read())
print(hwm() + children)
sys.exit(code)
"""


def write_records(path: Path, count: int, seed: int) -> int:
    per_language = max(1, count // 17 + 1)
    size = 0
    with path.open("w", encoding="utf-8") as handle:
        for i, doc in enumerate(generate(per_language=per_language, seed=seed, formats=["prose"])):
            if i >= count:
                break
            line = json.dumps({"id": i, "lang": doc.lang, "text": doc.text}, ensure_ascii=False)
            handle.write(line + "\n")
            size += len(line.encode("utf-8")) + 1
    return size


def run_batch(
    source: Path, workers: int, profile: str, work: Path, extra: Sequence[str] = ()
) -> tuple[float, int, int]:
    """Seconds, peak kB (all processes) and units of one run in a fresh process."""
    name = f"{profile}-{workers}-{len(extra)}"
    out = work / f"out-{name}"
    peaks = work / f"peaks-{name}"
    peaks.mkdir()
    env = {
        **os.environ,
        "PEAKS": str(peaks),
        # each spawned worker records its own peak when it exits (see sitecustomize below);
        # a PYTHONPATH of the caller's (another checkout's src) still comes after it
        "PYTHONPATH": os.pathsep.join(
            p for p in (str(work / "site"), os.environ.get("PYTHONPATH", "")) if p
        ),
    }
    started = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            _PROBE,
            "batch",
            str(source),
            str(out),
            "--workers",
            str(workers),
            "--profile",
            profile,
            "--no-progress",
            *extra,
        ],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    seconds = time.perf_counter() - started
    units = json.loads((out / "summary.json").read_text(encoding="utf-8"))["units"]
    return seconds, int(done.stdout.strip().splitlines()[-1]), units


_SITECUSTOMIZE = """
import atexit, os, re
def _peak():
    folder = os.environ.get("PEAKS")
    if folder and str(os.getpid()) != os.environ.get("PEAKS_PARENT"):
        kb = re.search(r"VmHWM:\\s+(\\d+)", open("/proc/self/status").read()).group(1)
        with open(os.path.join(folder, str(os.getpid())), "w") as f:
            f.write(kb)
atexit.register(_peak)
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run_service(source: Path, limit: int) -> dict[str, float]:
    import httpx
    import uvicorn

    from polydeid.serve.app import Settings, create_app

    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(
            create_app(Settings(profile="rules")), host="127.0.0.1", port=port, log_level="warning"
        )
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    records = [json.loads(line) for line in source.read_text("utf-8").splitlines()[:limit]]
    latencies: list[float] = []
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as client:
        # warm-up, untimed: each language's patterns compile on its first request
        for lang in sorted({r["lang"] for r in records}):
            client.post("/redact", json={"text": "warm-up 1 March 2024", "lang": lang})
        started = time.perf_counter()
        for r in records:
            t0 = time.perf_counter()
            response = client.post("/redact", json={"text": r["text"], "lang": r["lang"]})
            response.raise_for_status()
            latencies.append(time.perf_counter() - t0)
        total = time.perf_counter() - started
    server.should_exit = True
    thread.join(timeout=10)
    latencies.sort()
    return {
        "requests": len(records),
        "rps": len(records) / total,
        "p50": 1000 * statistics.median(latencies),
        "p95": 1000 * latencies[int(0.95 * (len(latencies) - 1))],
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=2000)
    parser.add_argument("--tagger-records", type=int, default=200)
    parser.add_argument("--seed", type=int, default=41)
    parser.add_argument("--out", default="benchmarks/results/batch.md")
    args = parser.parse_args(argv)
    rows: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "site").mkdir()
        (work / "site" / "sitecustomize.py").write_text(_SITECUSTOMIZE, encoding="utf-8")
        for profile, count in (("rules", args.records), ("default", args.tagger_records)):
            source = work / f"records-{profile}.jsonl"
            size = write_records(source, count, args.seed)
            runs: list[tuple[int, str, list[str]]] = [
                (1, "default", []),
                (2, "default", []),
            ]
            if profile == "default":
                runs.append((2, "by records alone", ["--chunk-bytes", str(1 << 40)]))
            for workers, cut, extra in runs:
                seconds, peak_kb, units = run_batch(source, workers, profile, work, extra)
                rows.append(
                    f"| {profile} | {workers} | {cut} | {units} | {count:,} | "
                    f"{size / 1e6:.2f} | {seconds:.1f} | {count / seconds:.1f} | "
                    f"{size / 1000 / seconds:.1f} | {peak_kb / 1024:.0f} |"
                )
                print(rows[-1], file=sys.stderr)
        service = run_service(work / "records-rules.jsonl", min(args.records, 500))
    table = "\n".join(
        [
            "# Batch runner and service throughput",
            "",
            f"Command: `.venv/bin/python benchmarks/batch.py --records {args.records} "
            f"--tagger-records {args.tagger_records} --seed {args.seed}`",
            "",
            " ".join(
                [
                    f"Machine: {cpu_model()} ({platform.machine()}, {os.cpu_count()} cores,",
                    f"shared), Python {platform.python_version()}. Synthetic prose notes in 17",
                    "languages; every run in a fresh process, wall time including start-up (the",
                    "tagger profile converts nothing: the encoder cache is warm). Peak memory:",
                    "the runner's plus each worker's own peak resident set (VmHWM), summed over",
                    "every process of the run. Units: the input cut as a user's run cuts it",
                    "(default: units of at most 1,000 records that end once they hold 64 KiB;",
                    "by records alone: `--chunk-bytes` out of the way, as before the byte bound,",
                    "one unit for a file of up to 1,000 records).",
                ]
            ),
            "",
            "| profile | workers | units cut | units | records | MB | s | records/s | kB/s "
            "| peak MB (all processes) |",
            "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|",
            *rows,
            "",
            f"Service (`polydeid serve`, rules profile, one client, sequential `POST /redact` "
            f"of {service['requests']:.0f} of the same notes over HTTP on 127.0.0.1, after one "
            f"untimed warm-up request per language): "
            f"{service['rps']:.1f} requests/s, latency p50 {service['p50']:.1f} ms, "
            f"p95 {service['p95']:.1f} ms.",
            "",
        ]
    )
    Path(args.out).write_text(table, encoding="utf-8")
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
