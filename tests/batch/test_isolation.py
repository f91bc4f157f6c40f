"""A record that fails its unit is tried once more in the same run: when it fails the same way
again it is quarantined and the rest of its unit written, in that run; a failure that does not
repeat quarantines nothing; a fault that fails every unit is no record's own and quarantines
nothing. The failure counts survive a killed run."""

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


def poison_input(src: Path) -> None:
    """``a.jsonl``: 60 records, the 41st a poison record (id ``poison``)."""
    src.mkdir()
    lines = [json.dumps({"id": f"r{i}", "text": f"Call 0772 {i:06d}."}) for i in range(60)]
    lines[40] = json.dumps({"id": "poison", "text": "Seen by Zebedee Quartermain."})
    (src / "a.jsonl").write_text("\n".join(lines) + "\n")


def written(out: Path) -> list[str]:
    return [
        json.loads(line)["id"]
        for name in ("a", "b")
        if (out / f"{name}.jsonl").exists()
        for line in (out / f"{name}.jsonl").read_text().splitlines()
    ]


def failing(monkeypatch, bad):
    from polydeid.batch import runner

    real = runner.finish_record

    def finish(deid, prepared, spans=None):
        if bad(prepared.head["id"]):
            raise TransformError("the vault failed (OperationalError)")
        return real(deid, prepared, spans)

    monkeypatch.setattr(runner, "finish_record", finish)


def test_one_run_quarantines_a_record_failing_twice_the_same_way(tmp_path, monkeypatch, capsys):
    src, out = tmp_path / "in", tmp_path / "out"
    ids = inputs(src)
    failing(monkeypatch, lambda rid: rid == "b30")
    assert main(args(src, out)) == 1
    err = capsys.readouterr().err
    assert "b.jsonl (unit 2): a record failed its unit: trying the unit once more" in err
    assert "b.jsonl (unit 2): a record failed twice the same way: quarantined" in err
    assert "left for a re-run" not in err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["complete"] is True and summary["quarantined"] == 1
    assert summary["errors"] == {"PD400": 1} and summary["units_failed"] == 0
    assert sorted(written(out)) == sorted(i for i in ids if i != "b30")
    (entry,) = [json.loads(x) for x in (out / "quarantine.jsonl").read_text().splitlines()]
    assert entry["source"] == "b.jsonl" and entry["line"] == 31
    assert entry["reason"]["code"] == "PD400"
    assert "failed twice the same way" in entry["reason"]["message"]

    assert main(args(src, out)) == 1  # nothing left to do; the quarantine stays
    summary = json.loads((out / "summary.json").read_text())
    assert summary["units_processed"] == 0 and summary["quarantined"] == 1


def test_one_run_quarantines_a_poison_record(tmp_path, monkeypatch, capsys):
    """Good, poison, good records: on the poison record a detector fails (an error that is not
    the record's own kind, so it fails the unit), every time; one run writes every good record
    and quarantines the poison record with its code."""
    from polydeid.batch import runner
    from polydeid.core.errors import DetectionError

    src, out = tmp_path / "in", tmp_path / "out"
    poison_input(src)
    real = runner.finish_record

    def finish(deid, prepared, spans=None):
        if prepared.head["id"] == "poison":
            raise DetectionError("a detector failed")
        return real(deid, prepared, spans)

    monkeypatch.setattr(runner, "finish_record", finish)
    assert main(args(src, out)) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err and "Quartermain" not in err
    ids = [json.loads(x)["id"] for x in (out / "a.jsonl").read_text().splitlines()]
    assert ids == [f"r{i}" for i in range(60) if i != 40]
    text = (out / "quarantine.jsonl").read_text()
    assert "Quartermain" not in text and "poison" not in text
    (entry,) = [json.loads(x) for x in text.splitlines()]
    assert entry == {
        "source": "a.jsonl",
        "line": 41,
        "reason": {
            "code": "PD300",
            "message": "a detector failed (failed twice the same way)",
        },
    }
    summary = json.loads((out / "summary.json").read_text())
    assert summary["complete"] is True and summary["errors"] == {"PD300": 1}


def test_one_run_quarantines_a_poison_document(tmp_path, monkeypatch):
    """A document (one unit of one record) that fails the same way twice is quarantined in one
    run and has no output; the other documents are written."""
    import polydeid.engine
    from polydeid.core.errors import DetectionError

    src, out = tmp_path / "in", tmp_path / "out"
    src.mkdir()
    for name in ("n1", "n2", "n3"):
        (src / f"{name}.xml").write_text("<note>Seen 2020-01-02.</note>")
    real = polydeid.engine.read_document

    def read(data, fmt, *, source):
        if source == "n2.xml":
            raise DetectionError("a detector failed")
        return real(data, fmt, source=source)

    monkeypatch.setattr(polydeid.engine, "read_document", read)
    assert main(args(src, out)) == 1
    assert sorted(p.name for p in out.glob("n*.xml")) == ["n1.xml", "n3.xml"]
    (entry,) = [json.loads(x) for x in (out / "quarantine.jsonl").read_text().splitlines()]
    assert entry["source"] == "n2.xml" and entry["reason"]["code"] == "PD300"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["complete"] is True and summary["quarantined"] == 1


def test_a_failure_that_does_not_repeat_quarantines_nothing(tmp_path, monkeypatch, capsys):
    from polydeid.batch import runner
    from polydeid.core.errors import DetectionError

    src, out, clean = tmp_path / "in", tmp_path / "out", tmp_path / "clean"
    ids = inputs(src)
    real = runner.finish_record
    calls = []

    def once(deid, prepared, spans=None):
        if prepared.head["id"] == "a30":
            calls.append(prepared.head["id"])
            if len(calls) == 1:
                raise DetectionError("a detector failed")
        return real(deid, prepared, spans)

    monkeypatch.setattr(runner, "finish_record", once)
    assert main(args(src, out)) == 0
    err = capsys.readouterr().err
    assert "a.jsonl (unit 2): a record failed its unit: trying the unit once more" in err
    assert len(calls) == 2
    summary = json.loads((out / "summary.json").read_text())
    assert summary["complete"] is True and summary["quarantined"] == 0
    assert summary["units_processed"] == 6 and summary["units_failed"] == 0
    assert sorted(written(out)) == sorted(ids)
    assert (out / "quarantine.jsonl").read_text() == ""
    monkeypatch.setattr(runner, "finish_record", real)
    assert main(args(src, clean)) == 0
    assert (out / "a.jsonl").read_bytes() == (clean / "a.jsonl").read_bytes()


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
    """A retry that fails another way is a first failure of that kind: the unit is left for a
    re-run, which quarantines the record when it fails that way again."""
    from polydeid.batch import runner
    from polydeid.core.errors import DetectionError

    src, out = tmp_path / "in", tmp_path / "out"
    inputs(src)
    real = runner.finish_record
    calls = []

    def changing(deid, prepared, spans=None):
        if prepared.head["id"] == "a3":
            calls.append(prepared.head["id"])
            if len(calls) == 1:
                raise TransformError("the vault failed (OperationalError)")
            raise DetectionError("a detector failed")  # another kind of fault: counted afresh
        return real(deid, prepared, spans)

    monkeypatch.setattr(runner, "finish_record", changing)
    assert main(args(src, out)) == 1
    summary = json.loads((out / "summary.json").read_text())
    assert summary["quarantined"] == 0 and summary["complete"] is False
    assert summary["units_failed"] == 1 and len(calls) == 2  # one retry, no more
    assert main(args(src, out)) == 1
    summary = json.loads((out / "summary.json").read_text())
    assert summary["quarantined"] == 1 and summary["complete"] is True
    assert len(calls) == 3  # recognised at once: no retry before quarantining
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


_HOOK = """
import os, signal, sqlite3


def _first_time():
    once = os.environ.get("POLYDEID_TEST_ONCE")
    if not once:
        return True
    try:
        os.close(os.open(once, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return False
    return True


if os.environ.get("POLYDEID_TEST_ID") or os.environ.get("POLYDEID_TEST_KILL_ID"):
    from polydeid.batch import runner

    real = runner.finish_record

    def hook(deid, prepared, spans=None):
        record = prepared.head
        if os.environ.get("POLYDEID_TEST_PIDS"):
            with open(os.environ["POLYDEID_TEST_PIDS"], "a") as handle:
                handle.write(f"{os.getpid()}\\n")
        if record.get("id") == os.environ.get("POLYDEID_TEST_KILL_ID"):
            os.kill(os.getpid(), signal.SIGKILL)
        if record.get("id") in os.environ.get("POLYDEID_TEST_ID", "").split(",") and _first_time():
            if os.environ.get("POLYDEID_TEST_FAULT") == "crash":
                os.kill(os.getpid(), signal.SIGKILL)
            raise sqlite3.OperationalError("disk I/O error")
        return real(deid, prepared, spans)

    runner.finish_record = hook

if os.environ.get("POLYDEID_TEST_GROUP_KILL_TEXT"):
    from polydeid.api import Deidentifier

    together = Deidentifier.detect_many

    def kill_in_group(self, segments):
        if os.environ.get("POLYDEID_TEST_GROUP_CALLS"):
            with open(os.environ["POLYDEID_TEST_GROUP_CALLS"], "a") as handle:
                handle.write(f"{len(segments)}\\n")
        marker = os.environ["POLYDEID_TEST_GROUP_KILL_TEXT"]
        if any(marker in s.text for s in segments):
            os.kill(os.getpid(), signal.SIGKILL)
        return together(self, segments)

    Deidentifier.detect_many = kill_in_group
"""


def run_hooked(tmp_path: Path, src: Path, out: Path, workers: int, **hooks: str):
    """``polydeid batch`` in a child process whose workers run :data:`_HOOK` (set by the
    ``POLYDEID_TEST_*`` variables in ``hooks``)."""
    import os
    import subprocess
    import sys

    import polydeid

    folder = tmp_path / "hooks"
    folder.mkdir(exist_ok=True)
    (folder / "sitecustomize.py").write_text(_HOOK)
    source = str(Path(polydeid.__file__).resolve().parents[1])
    env = {k: v for k, v in os.environ.items() if not k.startswith("POLYDEID_TEST_")}
    env["PYTHONPATH"] = os.pathsep.join([str(folder), source, os.environ.get("PYTHONPATH", "")])
    env.update({f"POLYDEID_TEST_{k.upper()}": v for k, v in hooks.items()})
    code = "import sys; from polydeid.cli import main; sys.exit(main(sys.argv[1:]))"
    argv = [sys.executable, "-c", code, *args(src, out, workers)]
    return subprocess.run(argv, env=env, capture_output=True, timeout=300, check=False)


@pytest.mark.slow
def test_a_poison_record_in_a_worker_is_quarantined_in_one_run(tmp_path):
    """With worker processes, an unexpected error (here SQLite's) on one record: the unit is
    tried again in a fresh pool, and the record, failing the same way, is quarantined;
    everything else is written once."""
    src, out = tmp_path / "in", tmp_path / "out"
    ids = inputs(src)
    pids = tmp_path / "pids"
    proc = run_hooked(tmp_path, src, out, 2, id="a40", fault="raise", pids=str(pids))
    err = proc.stderr.decode()
    assert proc.returncode == 1, err
    assert "Traceback" not in err
    assert len(set(pids.read_text().split())) > 2  # the retry ran in a fresh pool
    assert "a.jsonl (unit 2): a record failed its unit: trying the unit once more" in err
    assert "a.jsonl (unit 2): a record failed twice the same way: quarantined" in err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["complete"] is True and summary["quarantined"] == 1
    assert sorted(written(out)) == sorted(i for i in ids if i != "a40")
    (entry,) = [json.loads(x) for x in (out / "quarantine.jsonl").read_text().splitlines()]
    assert entry == {
        "source": "a.jsonl",
        "line": 41,
        "reason": {
            "code": "PD000",
            "message": "unexpected OperationalError (failed twice the same way)",
        },
    }


@pytest.mark.slow
def test_a_record_that_kills_its_worker_twice_is_quarantined_in_one_run(tmp_path):
    """A worker that dies on a record (SIGKILL here, as the kernel's OOM killer would) breaks
    the pool: a fresh pool does the lost units, the record's unit once more; when it kills its
    worker again, the record is quarantined and everything else written once, in one run."""
    src, out = tmp_path / "in", tmp_path / "out"
    ids = inputs(src)
    proc = run_hooked(tmp_path, src, out, 2, id="b7", fault="crash")
    err = proc.stderr.decode()
    assert proc.returncode == 1, err  # one record quarantined
    assert "Traceback" not in err
    assert err.count("[PD000] b.jsonl (unit 1): its worker process died") == 2
    assert "b.jsonl (unit 1): a record failed its unit: trying the unit once more" in err
    assert "b.jsonl (unit 1): a record failed twice the same way: quarantined" in err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["complete"] is True and summary["quarantined"] == 1
    assert sorted(written(out)) == sorted(i for i in ids if i != "b7")
    (entry,) = [json.loads(x) for x in (out / "quarantine.jsonl").read_text().splitlines()]
    assert entry["line"] == 8
    assert entry["reason"] == {
        "code": "PD000",
        "message": "its worker process died (failed twice the same way)",
    }


@pytest.mark.slow
def test_records_that_kill_workers_in_several_units_are_all_quarantined(tmp_path):
    """Deaths in several units are each charged to the record the dead worker had in hand
    (not pooled as one fault of the surroundings)."""
    src, out = tmp_path / "in", tmp_path / "out"
    ids = inputs(src)
    proc = run_hooked(tmp_path, src, out, 2, id="a3,a40,b55", fault="crash")
    err = proc.stderr.decode()
    assert proc.returncode == 1, err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["complete"] is True and summary["quarantined"] == 3
    assert sorted(written(out)) == sorted(i for i in ids if i not in {"a3", "a40", "b55"})
    entries = [json.loads(x) for x in (out / "quarantine.jsonl").read_text().splitlines()]
    assert [(e["source"], e["line"]) for e in entries] == [
        ("a.jsonl", 4),
        ("a.jsonl", 41),
        ("b.jsonl", 56),
    ]


@pytest.mark.slow
def test_a_worker_that_dies_once_costs_nothing(tmp_path):
    src, out = tmp_path / "in", tmp_path / "out"
    ids = inputs(src)
    proc = run_hooked(tmp_path, src, out, 2, id="b7", fault="crash", once=str(tmp_path / "x"))
    err = proc.stderr.decode()
    assert proc.returncode == 0, err
    assert "b.jsonl (unit 1): a record failed its unit: trying the unit once more" in err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["complete"] is True and summary["quarantined"] == 0
    assert sorted(written(out)) == sorted(ids)


@pytest.mark.slow
def test_a_failure_counted_before_a_kill_is_recognised_by_the_next_run(tmp_path):
    """The run is SIGKILLed after a record failed its unit once (before its retry): the next
    run, seeing it fail the same way, quarantines it at once, and the outputs equal those of
    one uninterrupted run."""
    src, out, clean = tmp_path / "in", tmp_path / "out", tmp_path / "clean"
    inputs(src)
    proc = run_hooked(tmp_path, src, out, 1, id="b30", fault="raise", kill_id="b50")
    assert proc.returncode == -9, proc.stderr.decode()
    assert "[PD000] b.jsonl (unit 2): unexpected OperationalError" in proc.stderr.decode()
    proc = run_hooked(tmp_path, src, out, 1, id="b30", fault="raise")
    err = proc.stderr.decode()
    assert proc.returncode == 1, err
    assert "trying the unit once more" not in err
    assert "b.jsonl (unit 2): a record failed twice the same way: quarantined" in err
    assert run_hooked(tmp_path, src, clean, 1, id="b30", fault="raise").returncode == 1
    for name in ("a.jsonl", "b.jsonl", "quarantine.jsonl"):
        assert (out / name).read_bytes() == (clean / name).read_bytes(), name


@pytest.mark.slow
def test_a_worker_that_dies_detecting_a_group_charges_no_record(tmp_path):
    """Records are detected together on a unit's first try; a worker that dies then has no
    single record in hand: none is charged, and the unit's retry detects each record by
    itself (here without dying: the death was the group's), so everything is written."""
    src, out = tmp_path / "in", tmp_path / "out"
    ids = inputs(src)
    calls = tmp_path / "calls"
    proc = run_hooked(tmp_path, src, out, 2, group_kill_text="0772 000040.", group_calls=str(calls))
    err = proc.stderr.decode()
    assert proc.returncode == 0, err
    assert "Traceback" not in err and "PD000" not in err  # no record's failure
    summary = json.loads((out / "summary.json").read_text())
    assert summary["complete"] is True and summary["quarantined"] == 0
    assert "a.jsonl (unit 2): its worker process died detecting records together" in err
    assert sorted(written(out)) == sorted(ids)
    sizes = [int(n) for n in calls.read_text().split()]
    assert CHUNK in sizes  # a unit's records were detected together
    failures = sqlite3_failures(out)
    assert failures == []  # the manifest charges no record


def sqlite3_failures(out: Path) -> list[tuple]:
    import sqlite3

    from polydeid.batch.sources import MANIFEST_NAME

    with sqlite3.connect(out / MANIFEST_NAME) as db:
        return db.execute("SELECT * FROM failures").fetchall()


def test_a_record_that_fails_its_group_is_found_and_quarantined_alone(tmp_path, monkeypatch):
    """Detection fails on a poison record wherever it is read (together with others or by
    itself): its group's other records are detected one by one and written, and the poison
    record is quarantined with its own error, as when every record was detected alone."""
    from polydeid.core.errors import DetectionError
    from polydeid.detect.pipeline import Pipeline

    src, out = tmp_path / "in", tmp_path / "out"
    poison_input(src)
    real = Pipeline._candidates_many
    groups: list[int] = []

    def candidates(self, segments):
        groups.append(len(segments))
        if any("Quartermain" in s.text for s in segments):
            raise DetectionError("a detector failed")
        return real(self, segments)

    monkeypatch.setattr(Pipeline, "_candidates_many", candidates)
    assert main(args(src, out)) == 1
    assert CHUNK in groups  # read together first
    ids = [json.loads(x)["id"] for x in (out / "a.jsonl").read_text().splitlines()]
    assert ids == [f"r{i}" for i in range(60) if i != 40]
    (entry,) = [json.loads(x) for x in (out / "quarantine.jsonl").read_text().splitlines()]
    assert entry["line"] == 41 and entry["reason"]["code"] == "PD300"
