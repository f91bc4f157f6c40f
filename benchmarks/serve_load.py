"""The service under load: ``POST /redact`` latency at several numbers of concurrent clients,
and how long a request given up at its time limit keeps its worker.

- latency: a ``polydeid serve``-like server (``--profile``, uvicorn, two worker threads, in a
  child process started from ``--src``, so two source trees can be compared) answers a 2 kB
  English note; p50, p95 and p99 in ms and requests per second at each of ``--clients``
  concurrent clients, each sending its share of ``--requests`` one after another. With several
  ``--batch-max`` values the server is started once per value, in turn, so micro-batching
  (:mod:`polydeid.serve._batching`) is compared with each request alone in one run.
- cancellation: one worker, a 1 s time limit, and an e-mail list of ``--cancel-chars``
  characters: the seconds between the 503 answer and the moment the worker is free again.

Prints one JSON line; ``--out FILE`` also writes the latency table in markdown. Usage::

    .venv/bin/python benchmarks/serve_load.py [--src src] [--profile rules]
        [--clients 1,16] [--requests 200] [--batch-max 1,8] [--cancel-chars 160000] [--out F]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

NOTE_PART = (
    "Patient Amina Otieno, born 12/03/1984, seen at Kisumu County Hospital on 14 February 2024. "
    "Call her on +254 712 345678 or write to amina.otieno@example.org. MRN KNH-2023-001234. "
    "She reports headache for three days, no fever; BP 128/82, pulse 76. Plan: review in two "
    "weeks. "
)
NOTE = (NOTE_PART * 8)[:2048]

SERVER = """
import uvicorn
from polydeid.serve.app import Settings, create_app
app = create_app(Settings(profile={profile!r}, batch_max={batch_max}, max_queue=64))
uvicorn.run(app, host="127.0.0.1", port={port}, log_level="warning", access_log=False)
"""

CANCEL = """
import json, sys, time
from fastapi.testclient import TestClient
from polydeid.serve.app import Settings, create_app
text = ("x@ex.org " * ({chars} // 9 + 1))[:{chars}]
app = create_app(Settings(profile="rules", timeout=1.0, workers=1, max_bytes=5_000_000))
service = app.state.serve.service
done = []
submit = service.executor.submit
def tracked(*args, **kwargs):
    future = submit(*args, **kwargs)
    future.add_done_callback(lambda f: done.append(time.perf_counter()))
    return future
service.executor.submit = tracked
with TestClient(app) as client:
    r = client.post("/detect", json={{"text": text, "lang": "en"}})
    answered = time.perf_counter()
    while not done:
        time.sleep(0.02)
print(json.dumps({{"status": r.status_code, "worker_busy_after_answer_s": done[0] - answered}}))
"""


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def latency(
    src: Path, profile: str, batch_max: int, clients_list: Sequence[int], requests: int
) -> dict[str, Any]:
    import httpx

    port = _free_port()
    env = dict(os.environ, PYTHONPATH=str(src))
    server = SERVER.format(port=port, profile=profile, batch_max=batch_max)
    proc = subprocess.Popen([sys.executable, "-c", server], env=env)
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 120
        while True:
            try:
                if httpx.get(url + "/health").status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("the server did not start")
            time.sleep(0.2)
        body = {"text": NOTE, "lang": "en", "policy": "tag"}
        for _ in range(20):
            httpx.post(url + "/redact", json=body)
        out: dict[str, Any] = {}
        for clients in clients_list:
            total = max(requests, clients)
            seen: list[tuple[float, int]] = []

            def client(n: int, seen: list[tuple[float, int]] = seen) -> None:
                with httpx.Client(base_url=url, timeout=120) as http:
                    for _ in range(n):
                        started = time.perf_counter()
                        status = http.post("/redact", json=body).status_code
                        seen.append((time.perf_counter() - started, status))

            threads = [
                threading.Thread(target=client, args=(total // clients,)) for _ in range(clients)
            ]
            started = time.perf_counter()
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            wall = time.perf_counter() - started
            times = sorted(s for s, _ in seen)
            out[f"clients_{clients}"] = {
                "requests": len(times),
                "p50_ms": round(1000 * times[len(times) // 2], 1),
                "p95_ms": round(1000 * times[int(0.95 * (len(times) - 1))], 1),
                "p99_ms": round(1000 * times[int(0.99 * (len(times) - 1))], 1),
                "per_s": round(len(times) / wall, 1),
                "statuses": sorted({c for _, c in seen}),
            }
        return out
    finally:
        proc.terminate()
        proc.wait(10)


def cancellation(src: Path, chars: int) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=str(src))
    code = CANCEL.format(chars=chars)
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    result["worker_busy_after_answer_s"] = round(result["worker_busy_after_answer_s"], 2)
    return {"chars": chars, **result}


def markdown(report: dict[str, Any], command: str) -> str:
    """The latency table of ``report``, one row per batch bound and number of clients."""
    from passes import cpu_model, reference_seconds

    lines = [
        "# The service under load",
        "",
        f"Command: `{command}`. Machine: {cpu_model()} ({platform.machine()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}); reference workload "
        f"(`passes.reference_seconds`) {reference_seconds():.3f} s. Profile "
        f"`{report['profile']}`, two worker threads, `POST /redact` of a 2 kB English note "
        "(tag policy) over HTTP on 127.0.0.1; each client sends its share of the requests one "
        "after another; the servers ran one after another in this run.",
        "",
        "| batch max | clients | requests | p50 ms | p95 ms | p99 ms | requests/s |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for batch_max, rows in report["latency"].items():
        for key, row in rows.items():
            lines.append(
                f"| {batch_max} | {key.split('_')[1]} | {row['requests']} | {row['p50_ms']} | "
                f"{row['p95_ms']} | {row['p99_ms']} | {row['per_s']} |"
            )
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", type=Path, default=Path(__file__).parent.parent / "src")
    parser.add_argument("--profile", default="rules")
    parser.add_argument("--clients", default="1,16", help="comma-separated client counts")
    parser.add_argument("--requests", type=int, default=200, help="requests per client count")
    parser.add_argument("--batch-max", default="1", help="comma-separated; one server each")
    parser.add_argument("--cancel-chars", type=int, default=160_000)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    src = args.src.resolve()
    clients = [int(c) for c in args.clients.split(",") if c]
    report = {
        "src": str(src),
        "profile": args.profile,
        "latency": {
            int(b): latency(src, args.profile, int(b), clients, args.requests)
            for b in args.batch_max.split(",")
            if b
        },
        "cancellation": cancellation(src, args.cancel_chars) if args.cancel_chars else None,
    }
    print(json.dumps(report))
    if args.out is not None:
        command = ".venv/bin/python benchmarks/serve_load.py " + " ".join(
            sys.argv[1:] if argv is None else argv
        )
        args.out.write_text(markdown(report, command), "utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
