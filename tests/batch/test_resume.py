"""Resuming ``polydeid batch``: after a SIGKILL mid-run, a re-run with the same arguments does
exactly the units not done, and the outputs hold every input record once, equal to a clean
run's; changed inputs are done again; lost outputs are rebuilt."""

from __future__ import annotations

import csv
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from polydeid.cli import main

MANIFEST = ".polydeid-manifest.sqlite"
CHUNK = 25


def make_inputs(root: Path) -> set[str]:
    """2,000 records: three JSONL files, a CSV file and 50 text files (and two bad lines);
    the ids of the good records."""
    root.mkdir(parents=True)
    ids: set[str] = set()
    for k in range(3):
        lines = []
        for i in range(600):
            rid = f"j{k}-{i}"
            ids.add(rid)
            text = f"Seen on 2020-01-{i % 28 + 1:02d}; phone 0772 {i:06d}; mail p{i}@example.org."
            lines.append(json.dumps({"id": rid, "text": text}))
        lines.insert(100, "{not json")
        (root / f"part{k}.jsonl").write_text("\n".join(lines) + "\n", "utf-8")
    with (root / "visits.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "text"])
        for i in range(150):
            ids.add(f"c{i}")
            writer.writerow([f"c{i}", f"Visit on 2021-03-{i % 28 + 1:02d}, call 0772 {i:06d}."])
    notes = root / "notes"
    notes.mkdir()
    for i in range(50):
        ids.add(f"notes/n{i:02d}.txt")
        (notes / f"n{i:02d}.txt").write_text(f"Note of 2022-05-{i % 28 + 1:02d}.", "utf-8")
    return ids


def expected_units() -> int:
    per_jsonl = -(-601 // CHUNK)  # 600 records and a malformed line
    return 3 * per_jsonl + 150 // CHUNK + 50


def args(src: Path, out: Path, workers: int) -> list[str]:
    return [
        "batch",
        str(src),
        str(out),
        "--profile",
        "rules",
        "--workers",
        str(workers),
        "--chunk-size",
        str(CHUNK),
        "--no-progress",
    ]


def done_units(out: Path) -> int:
    path = out / MANIFEST
    if not path.exists():
        return 0
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=1)
        try:
            return int(db.execute("SELECT COUNT(*) FROM units").fetchone()[0])
        finally:
            db.close()
    except sqlite3.Error:
        return 0


def output_files(out: Path) -> dict[str, bytes]:
    return {
        p.relative_to(out).as_posix(): p.read_bytes()
        for p in sorted(out.rglob("*"))
        if p.is_file() and not p.name.startswith(".") and p.name != "summary.json"
    }


def output_ids(out: Path) -> Counter[str]:
    ids: Counter[str] = Counter()
    for k in range(3):
        for line in (out / f"part{k}.jsonl").read_text("utf-8").splitlines():
            ids[json.loads(line)["id"]] += 1
    with (out / "visits.csv").open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            ids[row["id"]] += 1
    for path in (out / "notes").iterdir():
        ids[f"notes/{path.name}"] += 1
    return ids


def kill_mid_run(src: Path, out: Path, log: Path) -> int:
    """Start a 2-worker run in its own process group and SIGKILL the whole group once the
    manifest shows some but not all units done; the units done at the kill."""
    total = expected_units()
    with log.open("wb") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "polydeid.cli", *args(src, out, 2)],
            stdout=subprocess.DEVNULL,
            stderr=err,
            start_new_session=True,
        )
        try:
            deadline = time.monotonic() + 90
            while time.monotonic() < deadline and proc.poll() is None:
                if 10 <= done_units(out) <= total - 20:
                    break
                time.sleep(0.01)
            assert proc.poll() is None, "the run ended before it could be killed"
            os.killpg(proc.pid, signal.SIGKILL)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
    return done_units(out)


@pytest.mark.slow
def test_sigkill_then_resume_processes_exactly_the_missing_units(tmp_path, capsys):
    src, out, clean = tmp_path / "in", tmp_path / "out", tmp_path / "clean"
    ids = make_inputs(src)
    assert len(ids) == 2000
    done = kill_mid_run(src, out, tmp_path / "killed.log")
    total = expected_units()
    assert 0 < done < total
    assert not (out / "summary.json").exists()

    assert main(args(src, out, 1)) == 1  # the three malformed lines are quarantined
    err = capsys.readouterr().err
    assert f"{done} already done" in err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["units"] == total
    assert summary["units_done_before"] == done
    assert summary["units_processed"] == total - done
    assert summary["records_in"] == 2003 and summary["written"] == 2000
    assert summary["quarantined"] == 3 and summary["complete"] is True

    # every record exactly once, none lost
    found = output_ids(out)
    assert set(found) == ids
    assert max(found.values()) == 1
    assert not (out / ".polydeid-parts").exists()
    assert not [p for p in out.rglob("*.polydeid-tmp")]

    # and the outputs are those of a clean single run
    assert main(args(src, clean, 1)) == 1
    assert output_files(out) == output_files(clean)
    quarantine = (out / "quarantine.jsonl").read_text().splitlines()
    assert [json.loads(x)["line"] for x in quarantine] == [101, 101, 101]

    # a third run finds nothing to do
    assert main(args(src, out, 1)) == 1
    summary = json.loads((out / "summary.json").read_text())
    assert summary["units_processed"] == 0 and summary["units_done_before"] == total
    assert output_files(out) == output_files(clean)


def _small_inputs(src: Path) -> None:
    src.mkdir()
    for name in ("a", "b"):
        lines = [json.dumps({"id": f"{name}{i}", "text": f"Call 0772 {i:06d}."}) for i in range(60)]
        (src / f"{name}.jsonl").write_text("\n".join(lines) + "\n")
    (src / "note.txt").write_text("Seen 2020-01-02.")


def test_a_changed_input_file_is_done_again(tmp_path, capsys):
    src, out = tmp_path / "in", tmp_path / "out"
    _small_inputs(src)
    assert main(args(src, out, 1)) == 0
    capsys.readouterr()
    lines = [json.dumps({"id": f"new{i}", "text": f"Call 0772 {i:06d}."}) for i in range(30)]
    (src / "b.jsonl").write_text("\n".join(lines) + "\n")
    assert main(args(src, out, 1)) == 0
    assert "1 input file(s) changed" in capsys.readouterr().err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["units_processed"] == 2 and summary["files_changed"] == 1
    assert summary["records_in"] == 60 + 30 + 1
    ids = [json.loads(x)["id"] for x in (out / "b.jsonl").read_text().splitlines()]
    assert ids == [f"new{i}" for i in range(30)]


def test_lost_outputs_and_parts_are_rebuilt(tmp_path):
    src, out = tmp_path / "in", tmp_path / "out"
    _small_inputs(src)
    assert main(args(src, out, 1)) == 0
    before = output_files(out)
    (out / "a.jsonl").unlink()
    (out / "note.txt").unlink()
    assert main(args(src, out, 1)) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["units_processed"] == 3 + 1
    assert output_files(out) == before


def test_units_done_but_not_yet_assembled_are_joined_without_redoing(tmp_path):
    """A kill between the last unit's commit and the file's assembly: the re-run joins the
    part files and processes nothing."""
    src, out = tmp_path / "in", tmp_path / "out"
    _small_inputs(src)
    assert main(args(src, out, 1)) == 0
    before = output_files(out)
    # put the manifest back to "all units done, a.jsonl not assembled" with its parts
    db = sqlite3.connect(out / MANIFEST)
    with db:
        db.execute("UPDATE files SET committed = 0 WHERE source = 'a.jsonl'")
    db.close()
    from polydeid.batch.sources import parts_dir

    parts = parts_dir(out, "a.jsonl")
    parts.mkdir(parents=True)
    lines = (out / "a.jsonl").read_bytes().splitlines(keepends=True)
    for index in range(3):
        chunk = b"".join(lines[index * CHUNK : (index + 1) * CHUNK])
        (parts / f"part-{index:06d}.jsonl").write_bytes(chunk)
    (out / "a.jsonl").unlink()
    assert main(args(src, out, 1)) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["units_processed"] == 0
    assert output_files(out) == before
    assert not parts.exists()


def test_a_unit_that_fails_is_left_for_the_re_run(tmp_path, monkeypatch, capsys):
    """A failure that is not the record's own (here a vault that fails every record of one
    file) fails its units: nothing of them is written or quarantined (a fault of several units
    is no record's), the rest goes on, and the re-run does just those units."""
    from polydeid.batch import runner
    from polydeid.core.errors import TransformError

    src, out, clean = tmp_path / "in", tmp_path / "out", tmp_path / "clean"
    _small_inputs(src)
    real = runner.finish_record

    def flaky(deid, prepared, spans=None):
        if str(prepared.head.get("id")).startswith("b"):
            raise TransformError("the SQLite vault failed (OperationalError)")
        return real(deid, prepared, spans)

    monkeypatch.setattr(runner, "finish_record", flaky)
    assert main(args(src, out, 1)) == 1
    err = capsys.readouterr().err
    assert "b.jsonl (unit 2): the SQLite vault failed" in err
    assert "b.jsonl (unit 2): the same fault failed 3 units: left for a re-run" in err
    assert "3 unit(s) not done" in err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["complete"] is False and summary["units_failed"] == 3
    assert summary["quarantined"] == 0
    assert (out / "a.jsonl").exists() and not (out / "b.jsonl").exists()

    monkeypatch.setattr(runner, "finish_record", real)
    assert main(args(src, out, 1)) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["units_processed"] == 3 and summary["complete"] is True
    assert main(args(src, clean, 1)) == 0
    assert output_files(out) == output_files(clean)
