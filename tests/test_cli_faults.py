"""One bad record costs only itself; an output that cannot be written is a coded usage error."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import polydeid
from polydeid.cli import main

SRC = str(Path(polydeid.__file__).resolve().parents[1])
DEEP = "[" * 10_000 + "]" * 10_000
BIG = "9" * 100_000


def cli(*argv: str) -> subprocess.CompletedProcess[bytes]:
    """``polydeid ARGV`` in a fresh interpreter (this checkout's sources first)."""
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    code = "import sys; from polydeid.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run(
        [sys.executable, "-c", code, *argv], capture_output=True, env=env, check=False, timeout=300
    )


def good(n: int) -> str:
    return json.dumps({"id": n, "text": f"Call Zebedee Quartermain on 0772 123 456 (visit {n})."})


@pytest.fixture
def hostile_jsonl(tmp_path: Path) -> Path:
    path = tmp_path / "in.jsonl"
    lines = [
        good(1),
        '{"id": 2, "text": "x", "v": ' + DEEP + "}",
        good(3),
        '{"id": 4, "text": "x", "v": ' + BIG + "}",
        good(5),
    ]
    path.write_text("\n".join(lines) + "\n", "utf-8")
    return path


@pytest.mark.parametrize("command", ["redact", "detect"])
def test_deep_and_huge_records_fail_alone(hostile_jsonl, tmp_path, command):
    out = tmp_path / "out.jsonl"
    proc = cli(command, str(hostile_jsonl), "--profile", "rules", "-o", str(out))
    assert proc.returncode == 1
    assert b"Traceback" not in proc.stderr
    records = [json.loads(line) for line in out.read_text("utf-8").splitlines()]
    assert [r.get("id") for r in records if "error" not in r] == [1, 3, 5]
    errors = [r for r in records if "error" in r]
    assert [(e["line"], e["error"]["code"]) for e in errors] == [(2, "PD203"), (4, "PD203")]
    text = out.read_text("utf-8")
    assert "0772 123 456" not in text or command == "detect"


@pytest.mark.parametrize("value", [DEEP, BIG])
@pytest.mark.parametrize("fmt", ["json", "fhir"])
def test_deep_and_huge_documents_are_coded_errors(tmp_path, value, fmt):
    path = tmp_path / "doc.json"
    path.write_text('{"resourceType": "Patient", "v": ' + value + "}", "utf-8")
    proc = cli("redact", str(path), "--profile", "rules", "--format", fmt)
    assert proc.returncode == 1
    assert b"Traceback" not in proc.stderr
    assert b"[PD203]" in proc.stderr
    assert proc.stdout == b""


@pytest.mark.parametrize("command", ["redact", "detect", "batch"])
def test_output_under_a_file_is_a_usage_error(tmp_path, command, capsys):
    src = tmp_path / "in.jsonl"
    src.write_text(good(1) + "\n", "utf-8")
    blocker = tmp_path / "file"
    blocker.write_text("", "utf-8")
    target = blocker / "out"
    argv = (
        [command, str(src), str(target)]
        if command == "batch"
        else [command, str(src), "-o", str(target)]
    )
    assert main([*argv, "--profile", "rules"]) == 2
    err = capsys.readouterr().err
    assert "[PD100]" in err
    assert not target.exists()


@pytest.mark.parametrize("command", ["redact", "batch"])
def test_read_only_output_folder_is_a_usage_error(tmp_path, command, capsys, monkeypatch):
    src = tmp_path / "in.jsonl"
    src.write_text(good(1) + "\n", "utf-8")
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    if os.access(folder, os.W_OK):  # root writes anyway: stand in for a read-only mount
        real = os.access
        monkeypatch.setattr(
            os, "access", lambda p, mode, **kw: False if Path(p) == folder else real(p, mode, **kw)
        )
    target = folder / "out"
    argv = (
        [command, str(src), str(target)]
        if command == "batch"
        else [command, str(src), "-o", str(target)]
    )
    try:
        assert main([*argv, "--profile", "rules"]) == 2
    finally:
        folder.chmod(0o755)
    assert "[PD100]" in capsys.readouterr().err
    assert list(folder.iterdir()) == []


def test_write_failure_after_the_check_is_coded(tmp_path, capsys, monkeypatch):
    import tempfile

    src = tmp_path / "in.jsonl"
    src.write_text(good(1) + "\n", "utf-8")

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    assert main(["redact", str(src), "-o", str(tmp_path / "out.jsonl"), "--profile", "rules"]) == 2
    assert "[PD100]" in capsys.readouterr().err
