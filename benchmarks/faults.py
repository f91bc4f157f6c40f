"""Fault injection: SIGKILL ``polydeid batch`` and ``polydeid serve`` at random points and check
that nothing is lost, nothing is duplicated and no process is left behind.

Batch: JSONL files of invented records (unique ids) with hostile lines among them (nested
10,000 deep, a 100,000-digit number, malformed JSON) are run with 2 workers; each round starts
the run and SIGKILLs it once a random number of the units left is done, alternately the whole
process group and the parent alone (its workers must then exit by themselves); a last run
finishes the job.
Checked: every good record id is in the output exactly once, the hostile lines and nothing
else are quarantined, the outputs are byte-identical to an uninterrupted run, and no process
of a killed run is alive 10 s after the kill.

Service: ``polydeid serve --profile rules --policy surrogate`` with a key and a SQLite vault;
client threads send every record to ``POST /redact`` while the server is SIGKILLed at a
random moment; the server is restarted and every record without an answer is sent again.
Checked: every record is answered in the end, each answer equals the answer of an
uninterrupted server (the vault gives no record a second surrogate), the vault passes
SQLite's integrity check, and no process of a killed server is alive 10 s after the kill.

Usage::

    .venv/bin/python benchmarks/faults.py [--rounds 6] [--records 2000] [--seed 34]
        [--out benchmarks/results/faults.md]

Exit status 0 when every check holds, 1 otherwise.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import json
import os
import platform
import random
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_CLI = "import sys; from polydeid.cli import main; sys.exit(main(sys.argv[1:]))"
_GRACE = 10.0


def _env() -> dict[str, str]:
    src = str(ROOT / "src")
    return {**os.environ, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}


def _polydeid(*argv: str, **kwargs: object) -> subprocess.Popen[bytes]:
    return subprocess.Popen(  # type: ignore[call-overload, no-any-return]
        [sys.executable, "-c", _CLI, *argv], env=_env(), start_new_session=True, **kwargs
    )


# --- processes ------------------------------------------------------------------------------


def _stat(pid: int) -> list[str] | None:
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return raw[raw.rindex(")") + 2 :].split()


def session_members(sid: int) -> set[int]:
    """Living (not zombie) processes of session ``sid``."""
    members = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            fields = _stat(int(entry.name))
            if fields is not None and fields[0] != "Z" and int(fields[3]) == sid:
                members.add(int(entry.name))
    return members


def orphans_after(sid: int) -> list[int]:
    """The processes of session ``sid`` still alive ``_GRACE`` seconds from now."""
    deadline = time.monotonic() + _GRACE
    while time.monotonic() < deadline:
        left = session_members(sid)
        if not left:
            return []
        time.sleep(0.1)
    left = sorted(session_members(sid))
    for pid in left:  # leave the machine clean
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return left


# --- inputs ---------------------------------------------------------------------------------

FIRST = ["Zebedee", "Wanjiru", "Nakato", "Amara", "Ilse", "Tomasz", "Ayesha", "Kofi"]
LAST = ["Quartermain", "Achieng", "Okonkwo", "Lindqvist", "Barzani", "Mwangi", "Haugen"]


def note(rng: random.Random, i: int) -> str:
    name = f"{rng.choice(FIRST)} {rng.choice(LAST)}"
    return (
        f"Patient name: {name}. Seen on 2024-{i % 12 + 1:02d}-{i % 28 + 1:02d}; "
        f"call 0772 {rng.randrange(10**6):06d} or mail p{i}@example.org. MRN {4400000 + i}."
    )


HOSTILE = {
    "deep": '{"id": "deep", "text": "x", "v": ' + "[" * 10_000 + "]" * 10_000 + "}",
    "big": '{"id": "big", "text": "x", "v": ' + "9" * 100_000 + "}",
    "malformed": '{"id": "malformed", "text": ',
}


def make_inputs(root: Path, records: int, rng: random.Random) -> tuple[set[str], int]:
    """Three JSONL files of invented notes with the hostile lines among them; (good ids,
    hostile lines)."""
    root.mkdir(parents=True)
    ids: set[str] = set()
    per_file = -(-records // 3)
    hostile = list(HOSTILE.values())
    for k in range(3):
        lines = []
        for i in range(k * per_file, min(records, (k + 1) * per_file)):
            ids.add(f"r{i}")
            lines.append(json.dumps({"id": f"r{i}", "text": note(rng, i)}))
        lines.insert(rng.randrange(len(lines) + 1), hostile[k])
        (root / f"part{k}.jsonl").write_text("\n".join(lines) + "\n", "utf-8")
    return ids, len(hostile)


# --- batch ----------------------------------------------------------------------------------


def batch_argv(src: Path, out: Path, chunk: int) -> list[str]:
    return [
        "batch", str(src), str(out), "--profile", "rules", "--workers", "2",
        "--chunk-size", str(chunk), "--no-progress",
    ]  # fmt: skip


def quarantine_codes(out: Path) -> Counter[str]:
    """The error codes of ``OUT/quarantine.jsonl`` (one per quarantined record)."""
    path = out / "quarantine.jsonl"
    lines = path.read_text("utf-8").splitlines() if path.exists() else []
    return Counter(json.loads(line)["reason"]["code"] for line in lines)


def done_units(out: Path) -> int:
    path = out / ".polydeid-manifest.sqlite"
    if not path.exists():
        return 0
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
    try:
        return int(db.execute("SELECT COUNT(*) FROM units").fetchone()[0])
    except sqlite3.Error:
        return 0
    finally:
        db.close()


def outputs(out: Path) -> dict[str, bytes]:
    return {
        p.relative_to(out).as_posix(): p.read_bytes()
        for p in sorted(out.rglob("*"))
        if p.is_file() and not p.name.startswith(".") and p.name != "summary.json"
    }


@dataclass
class BatchReport:
    rounds: list[str] = field(default_factory=list)
    clean_s: float = 0.0
    good: int = 0
    hostile: int = 0
    written: Counter[str] = field(default_factory=Counter)
    quarantined: int = 0
    identical: bool = False
    orphans: list[int] = field(default_factory=list)
    final_exit: int = -1
    codes: dict[str, Counter[str]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        once = all(n == 1 for n in self.written.values())
        return (
            once
            and len(self.written) == self.good
            and self.quarantined == self.hostile
            and self.identical
            and not self.orphans
            and self.final_exit == 1  # 1: the hostile lines are quarantined
        )


def run_batch_faults(
    work: Path, records: int, rounds: int, chunk: int, rng: random.Random
) -> BatchReport:
    report = BatchReport()
    src = work / "in"
    ids, report.hostile = make_inputs(src, records, rng)
    report.good = len(ids)
    clean, out = work / "clean", work / "out"
    started = time.monotonic()
    proc = _polydeid(*batch_argv(src, clean, chunk), stderr=subprocess.DEVNULL)
    proc.wait()
    report.clean_s = time.monotonic() - started
    total = done_units(clean)
    for n in range(rounds):
        whole_group = n % 2 == 0
        before = done_units(out)
        target = before + rng.randrange(max(1, total - before))
        proc = _polydeid(*batch_argv(src, out, chunk), stderr=subprocess.DEVNULL)
        started = time.monotonic()
        # the parent, its two workers and the resource tracker up, and ``target`` units done
        while proc.poll() is None and (
            len(session_members(proc.pid)) < 3 or done_units(out) < target
        ):
            time.sleep(0.01)
        jitter = rng.uniform(0.0, 0.3)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=jitter)
        if proc.poll() is not None:
            report.rounds.append(f"finished before the kill ({time.monotonic() - started:.1f} s)")
            continue
        up = time.monotonic() - started
        running = len(session_members(proc.pid))
        if whole_group:
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        left = orphans_after(proc.pid)
        report.orphans.extend(left)
        what = "process group" if whole_group else "parent only"
        report.rounds.append(
            f"SIGKILL ({what}) at {up:.1f} s, {running} processes running, "
            f"{done_units(out)} of {total} units done; {len(left)} alive {_GRACE:.0f} s later"
        )
    proc = _polydeid(*batch_argv(src, out, chunk), stderr=subprocess.DEVNULL)
    report.final_exit = proc.wait()
    report.orphans.extend(orphans_after(proc.pid))
    for path in sorted(out.glob("*.jsonl")):
        if path.name == "quarantine.jsonl":
            continue
        for line in path.read_text("utf-8").splitlines():
            report.written[json.loads(line)["id"]] += 1
    report.quarantined = sum(quarantine_codes(out).values())
    report.codes = {"uninterrupted": quarantine_codes(clean), "killed": quarantine_codes(out)}
    got, want = outputs(out), outputs(clean)
    report.identical = got == want
    differ = sorted(name for name in set(got) | set(want) if got.get(name) != want.get(name))
    if differ:
        report.rounds.append(f"outputs that differ from the uninterrupted run: {differ}")
    missing = ids - set(report.written)
    if missing:
        report.rounds.append(f"{len(missing)} good record(s) missing from the output")
    return report


# --- service --------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(port: int, key: Path, vault: Path) -> subprocess.Popen[bytes]:
    proc = _polydeid(
        "serve", "--profile", "rules", "--policy", "surrogate", "--key-file", str(key),
        "--vault", str(vault), "--port", str(port), "--log-level", "error",
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/health")
            if conn.getresponse().status == 200:
                return proc
        except OSError:
            time.sleep(0.2)
        if proc.poll() is not None:
            break
    raise RuntimeError("the service did not start")


def redact(port: int, text: str) -> str | None:
    """The de-identified text, or None when the request got no complete answer."""
    body = json.dumps({"text": text, "lang": "en"}).encode("utf-8")
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        conn.request("POST", "/redact", body, {"Content-Type": "application/json"})
        response = conn.getresponse()
        data = response.read()
    except (OSError, http.client.HTTPException):
        return None
    if response.status != 200:
        return None
    return str(json.loads(data)["text"])


@dataclass
class ServiceReport:
    rounds: list[str] = field(default_factory=list)
    records: int = 0
    answered: Counter[str] = field(default_factory=Counter)
    different: int = 0
    integrity: str = ""
    orphans: list[int] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return (
            len(self.answered) == self.records
            and self.different == 0
            and self.integrity == "ok"
            and not self.orphans
        )


def send_all(port: int, todo: dict[str, str], threads: int) -> dict[str, str]:
    """Send every record once from ``threads`` clients; the answers received."""
    answers: dict[str, str] = {}
    lock = threading.Lock()
    queue = list(todo.items())

    def client() -> None:
        while True:
            with lock:
                if not queue:
                    return
                rid, text = queue.pop()
            answer = redact(port, text)
            if answer is not None:
                with lock:
                    answers[rid] = answer

    workers = [threading.Thread(target=client) for _ in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return answers


def run_service_faults(work: Path, records: int, rounds: int, rng: random.Random) -> ServiceReport:
    report = ServiceReport(records=records)
    texts = {f"s{i}": note(rng, i) for i in range(records)}
    key = work / "key"
    proc = _polydeid("keygen", str(key), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    proc.wait()
    port = free_port()
    reference_vault, vault = work / "reference.sqlite", work / "vault.sqlite"
    server = start_server(port, key, reference_vault)
    started = time.monotonic()
    reference = send_all(port, texts, 4)
    elapsed = time.monotonic() - started
    os.killpg(server.pid, signal.SIGTERM)
    server.wait()
    if len(reference) != len(texts):
        report.rounds.append("the uninterrupted server left records unanswered")
    answers: dict[str, str] = {}
    for _ in range(rounds):
        pending = {rid: t for rid, t in texts.items() if rid not in answers}
        if not pending:
            break
        port = free_port()
        server = start_server(port, key, vault)
        # before the records left could all be answered
        delay = rng.uniform(0.1, max(0.3, 0.8 * elapsed * len(pending) / len(texts)))
        killer = threading.Timer(delay, os.kill, (server.pid, signal.SIGKILL))
        killer.start()
        got = send_all(port, pending, 4)
        killer.cancel()
        if server.poll() is None:
            os.kill(server.pid, signal.SIGKILL)
        server.wait()
        left = orphans_after(server.pid)
        report.orphans.extend(left)
        for rid, answer in got.items():
            report.answered[rid] += 1
            answers[rid] = answer
        report.rounds.append(
            f"SIGKILL at {delay:.1f} s: {len(got)} of {len(pending)} answered; "
            f"{len(left)} alive {_GRACE:.0f} s later"
        )
    port = free_port()
    server = start_server(port, key, vault)
    pending = {rid: t for rid, t in texts.items() if rid not in answers}
    got = send_all(port, pending, 4)
    for rid, answer in got.items():
        report.answered[rid] += 1
        answers[rid] = answer
    report.rounds.append(f"restart: the last {len(got)} of {len(pending)} answered")
    os.killpg(server.pid, signal.SIGTERM)
    server.wait()
    report.orphans.extend(orphans_after(server.pid))
    report.different = sum(1 for rid, a in answers.items() if reference.get(rid) != a)
    db = sqlite3.connect(str(vault))
    try:
        report.integrity = str(db.execute("PRAGMA integrity_check").fetchone()[0])
    finally:
        db.close()
    return report


# --- report ---------------------------------------------------------------------------------


def render(
    batch: BatchReport, service: ServiceReport, args: argparse.Namespace, seconds: float
) -> str:
    command = (
        f".venv/bin/python benchmarks/faults.py --rounds {args.rounds} --records {args.records} "
        f"--service-records {args.service_records} --chunk-size {args.chunk_size} "
        f"--seed {args.seed}"
    )
    yes = {True: "yes", False: "**NO**"}
    twice = sum(1 for n in batch.written.values() if n > 1)
    lines = [
        "# Faults: SIGKILL of batch and service processes",
        "",
        f"Command: `{command}` ({seconds:.0f} s; {platform.machine()}, "
        f"{os.cpu_count()} CPUs, Python {platform.python_version()}).",
        "",
        "## Batch (`polydeid batch --workers 2 --profile rules`)",
        "",
        f"{batch.good} good records in 3 JSONL files and {batch.hostile} hostile lines (nested "
        f"10,000 deep, a 100,000-digit number, malformed JSON); chunks of {args.chunk_size} "
        f"records; an uninterrupted run took {batch.clean_s:.1f} s.",
        "",
        *[f"{n}. {line}" for n, line in enumerate(batch.rounds, start=1)],
        "",
        "| check | result |",
        "|---|---|",
        f"| every good record written | {yes[len(batch.written) == batch.good]} "
        f"({len(batch.written)} of {batch.good}) |",
        f"| none written twice | {yes[twice == 0]} ({twice}) |",
        f"| hostile lines quarantined, nothing else | {yes[batch.quarantined == batch.hostile]} "
        f"({batch.quarantined} of {batch.hostile}) |",
        f"| outputs byte-identical to an uninterrupted run | {yes[batch.identical]} |",
        f"| final run's exit status 1 (records quarantined) | {yes[batch.final_exit == 1]} "
        f"({batch.final_exit}) |",
        f"| no process alive {_GRACE:.0f} s after a kill | {yes[not batch.orphans]} "
        f"({len(batch.orphans)}) |",
        "",
        "Quarantine codes: "
        + "; ".join(
            f"{run} run {dict(sorted(codes.items()))}" for run, codes in batch.codes.items()
        )
        + ".",
        "",
        "## Service (`polydeid serve --profile rules --policy surrogate`, key and SQLite vault)",
        "",
        f"{service.records} records sent by 4 client threads to `POST /redact`.",
        "",
        *[f"{n}. {line}" for n, line in enumerate(service.rounds, start=1)],
        "",
        "| check | result |",
        "|---|---|",
        f"| every record answered | {yes[len(service.answered) == service.records]} "
        f"({len(service.answered)} of {service.records}) |",
        f"| answers equal an uninterrupted server's (same surrogates) | "
        f"{yes[service.different == 0]} ({service.different} differ) |",
        f"| vault integrity check | {yes[service.integrity == 'ok']} ({service.integrity}) |",
        f"| no process alive {_GRACE:.0f} s after a kill | {yes[not service.orphans]} "
        f"({len(service.orphans)}) |",
        "",
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=6, help="kills per part (default 6)")
    p.add_argument("--records", type=int, default=2000, help="batch records (default 2000)")
    p.add_argument("--service-records", type=int, default=400, help="service records (default 400)")
    p.add_argument("--chunk-size", type=int, default=50, help="batch chunk size (default 50)")
    p.add_argument("--seed", type=int, default=34)
    p.add_argument("--out", default=str(ROOT / "benchmarks/results/faults.md"))
    args = p.parse_args(argv)
    if not Path("/proc/self/stat").exists():
        print("faults.py needs Linux (/proc)", file=sys.stderr)
        return 2
    rng = random.Random(args.seed)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="polydeid-faults-") as tmp:
        work = Path(tmp)
        (work / "batch").mkdir()
        (work / "service").mkdir()
        batch = run_batch_faults(work / "batch", args.records, args.rounds, args.chunk_size, rng)
        print(f"batch: {'ok' if batch.ok else 'FAILED'}", file=sys.stderr)
        service = run_service_faults(work / "service", args.service_records, args.rounds, rng)
        print(f"service: {'ok' if service.ok else 'FAILED'}", file=sys.stderr)
    text = render(batch, service, args, time.monotonic() - started)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text, "utf-8")
    print(text)
    return 0 if batch.ok and service.ok else 1


if __name__ == "__main__":
    sys.exit(main())
