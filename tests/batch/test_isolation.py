"""A record that fails its unit the same way in two runs is quarantined and the rest of its
unit written; a fault that fails every unit is no record's own and quarantines nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from polydeid.cli import main
from polydeid.core.errors import TransformError

CHUNK = 25


def args(src: Path, out: Path, workers: int = 1) -> list[str]:
    return [
        "batch", str(src), str(out), "--profile", "rules", "--workers", str(workers),
        "--chunk-size", str(CHUNK), "--no-progress",
    ]  # fmt: skip


def inputs(src: Path) -> list[str]:
    src.mkdir()
    ids = []
    for name in ("a", "b"):
        lines = []
        for i in range(60):
            ids.append(f"{name}{i}")
            lines.append(json.dumps({"id": f"{name}{i}", "text": f"Call 0772 {i:06d}."}))
        (src / f"{name}.jsonl").write_text("\n".join(lines) + "\n")
    return ids


def written(out: Path) -> list[str]:
    return [
        json.loads(line)["id"]
        for name in ("a", "b")
        if (out / f"{name}.jsonl").exists()
        for line in (out / f"{name}.jsonl").read_text().splitlines()
    ]


def failing(monkeypatch, bad):
    from polydeid.batch import runner

    real = runner.redact_record_labelled

    def redact(deid, record, config, *, location):
        if bad(record["id"]):
            raise TransformError("the vault failed (OperationalError)")
        return real(deid, record, config, location=location)

    monkeypatch.setattr(runner, "redact_record_labelled", redact)


def test_a_record_failing_twice_the_same_way_is_quarantined(tmp_path, monkeypatch, capsys):
    src, out = tmp_path / "in", tmp_path / "out"
    ids = inputs(src)
    failing(monkeypatch, lambda rid: rid == "b30")
    assert main(args(src, out)) == 1
    summary = json.loads((out / "summary.json").read_text())
    assert summary["complete"] is False and summary["quarantined"] == 0
    assert "b31" not in written(out)  # held back with its unit, for now

    capsys.readouterr()
    assert main(args(src, out)) == 1
    err = capsys.readouterr().err
    assert "b.jsonl (unit 2): a record failed twice the same way: quarantined" in err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["complete"] is True and summary["quarantined"] == 1
    assert sorted(written(out)) == sorted(i for i in ids if i != "b30")
    (entry,) = [json.loads(x) for x in (out / "quarantine.jsonl").read_text().splitlines()]
    assert entry["source"] == "b.jsonl" and entry["line"] == 31
    assert entry["reason"]["code"] == "PD400"
    assert "failed twice the same way" in entry["reason"]["message"]

    assert main(args(src, out)) == 1  # nothing left to do; the quarantine stays
    summary = json.loads((out / "summary.json").read_text())
    assert summary["units_processed"] == 0 and summary["quarantined"] == 1


def test_a_fault_on_every_unit_quarantines_nothing(tmp_path, monkeypatch):
    src, out = tmp_path / "in", tmp_path / "out"
    inputs(src)
    failing(monkeypatch, lambda rid: True)
    for _ in range(3):
        assert main(args(src, out)) == 1
        summary = json.loads((out / "summary.json").read_text())
        assert summary["quarantined"] == 0 and summary["complete"] is False
    assert written(out) == []


def test_the_record_is_quarantined_only_when_it_fails_the_same_way(tmp_path, monkeypatch):
    from polydeid.batch import runner
    from polydeid.core.errors import DetectionError

    src, out = tmp_path / "in", tmp_path / "out"
    inputs(src)
    failing(monkeypatch, lambda rid: rid == "a3")
    assert main(args(src, out)) == 1
    real = runner.redact_record_labelled

    def other(deid, record, config, *, location):
        if record["id"] == "a3":
            raise DetectionError("a detector failed")  # another kind of fault: counted afresh
        return real(deid, record, config, location=location)

    monkeypatch.setattr(runner, "redact_record_labelled", other)
    for quarantined in (0, 1):
        assert main(args(src, out)) == 1
        summary = json.loads((out / "summary.json").read_text())
        assert summary["quarantined"] == quarantined
    (entry,) = [json.loads(x) for x in (out / "quarantine.jsonl").read_text().splitlines()]
    assert entry["line"] == 4 and entry["reason"]["code"] == "PD300"


@pytest.mark.slow
def test_hostile_json_records_in_a_batch(tmp_path):
    src, out = tmp_path / "in", tmp_path / "out"
    src.mkdir()
    lines = [json.dumps({"id": i, "text": f"Call 0772 {i:06d}."}) for i in range(10)]
    lines[3] = '{"id": 3, "text": "x", "v": ' + "[" * 10_000 + "]" * 10_000 + "}"
    lines[6] = '{"id": 6, "text": "x", "v": ' + "9" * 100_000 + "}"
    (src / "a.jsonl").write_text("\n".join(lines) + "\n")
    assert main(args(src, out, 2)) == 1
    ids = [json.loads(x)["id"] for x in (out / "a.jsonl").read_text().splitlines()]
    assert ids == [0, 1, 2, 4, 5, 7, 8, 9]
    entries = [json.loads(x) for x in (out / "quarantine.jsonl").read_text().splitlines()]
    assert [(e["line"], e["reason"]["code"]) for e in entries] == [(4, "PD203"), (7, "PD203")]


_CRASH_ON = """
import os, signal
if os.environ.get("POLYDEID_TEST_CRASH_ID"):
    from polydeid.batch import runner
    real = runner.redact_record_labelled
    def crash(deid, record, config, *, location):
        if record.get("id") == os.environ["POLYDEID_TEST_CRASH_ID"]:
            os.kill(os.getpid(), signal.SIGKILL)
        return real(deid, record, config, location=location)
    runner.redact_record_labelled = crash
"""


@pytest.mark.slow
def test_a_record_that_kills_its_worker_twice_is_quarantined(tmp_path):
    """A worker that dies on a record (SIGKILL here, as the kernel's OOM killer would) stops
    the run; the record is counted, and once it has killed a worker in two runs in a row the
    next run quarantines it and writes everything else once."""
    import os
    import subprocess
    import sys

    import polydeid

    src, out, hooks = tmp_path / "in", tmp_path / "out", tmp_path / "hooks"
    ids = inputs(src)
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(_CRASH_ON)
    source = str(Path(polydeid.__file__).resolve().parents[1])
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(hooks), source, os.environ.get("PYTHONPATH", "")]),
        "POLYDEID_TEST_CRASH_ID": "b7",
    }
    code = "import sys; from polydeid.cli import main; sys.exit(main(sys.argv[1:]))"
    argv = [sys.executable, "-c", code, *args(src, out, 2)]
    for count in (1, 2):
        proc = subprocess.run(argv, env=env, capture_output=True, timeout=300, check=False)
        err = proc.stderr.decode()
        assert proc.returncode == 1, err
        assert f"b.jsonl (unit 1): a worker died on a record ({count} time(s))" in err
    proc = subprocess.run(argv, env=env, capture_output=True, timeout=300, check=False)
    assert proc.returncode == 1  # one record quarantined
    summary = json.loads((out / "summary.json").read_text())
    assert summary["complete"] is True and summary["quarantined"] == 1
    assert sorted(written(out)) == sorted(i for i in ids if i != "b7")
    (entry,) = [json.loads(x) for x in (out / "quarantine.jsonl").read_text().splitlines()]
    assert entry["line"] == 8
    assert entry["reason"] == {
        "code": "PD000",
        "message": "its worker process died (failed twice the same way)",
    }
