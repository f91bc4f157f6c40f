"""Batch workers end when their parent dies, even by SIGKILL (no orphan keeps its memory)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import polydeid

SRC = str(Path(polydeid.__file__).resolve().parents[1])

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")


def parent_of(pid: int) -> int | None:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2 :].split()
    return None if fields[0] == "Z" else int(fields[1])


def children(pid: int) -> set[int]:
    return {
        int(p.name)
        for p in Path("/proc").iterdir()
        if p.name.isdigit() and parent_of(int(p.name)) == pid
    }


def alive(pid: int) -> bool:
    return parent_of(pid) is not None


@pytest.mark.slow
def test_workers_exit_when_the_parent_is_killed(tmp_path):
    src, out = tmp_path / "in", tmp_path / "out"
    src.mkdir()
    for k in range(4):
        lines = [json.dumps({"id": f"{k}-{i}", "text": f"Call 0772 {i:06d}."}) for i in range(400)]
        (src / f"p{k}.jsonl").write_text("\n".join(lines) + "\n")
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    code = "import sys; from polydeid.cli import main; sys.exit(main(sys.argv[1:]))"
    argv = ["batch", str(src), str(out), "--profile", "rules", "--workers", "2"]
    proc = subprocess.Popen(
        [sys.executable, "-c", code, *argv, "--chunk-size", "5", "--no-progress"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    workers: set[int] = set()
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            workers = {
                pid
                for pid in children(proc.pid)
                if "spawn_main" in Path(f"/proc/{pid}/cmdline").read_text(errors="replace")
            }
            if len(workers) == 2 and (out / ".polydeid-manifest.sqlite").exists():
                break
            time.sleep(0.05)
        assert proc.poll() is None and len(workers) == 2, "the run ended before the kill"
        os.kill(proc.pid, signal.SIGKILL)  # the parent only, not its process group
        proc.wait(timeout=30)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(alive(pid) for pid in workers):
            time.sleep(0.05)
        assert not [pid for pid in workers if alive(pid)]
    finally:
        for pid in workers:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
        if proc.poll() is None:
            proc.kill()
