"""``polydeid synth``: deterministic output, exports, validation report, usage errors."""

from __future__ import annotations

import json
from pathlib import Path

from polydeid.cli import main


def _synth(out: Path, *extra: str) -> int:
    return main(
        ["synth", "--n", "24", "--seed", "9", "--out", str(out), "--langs", "lg,swa,zh", *extra]
    )


def test_synth_writes_records_with_axes_and_is_deterministic(tmp_path: Path, capsys) -> None:
    assert _synth(tmp_path / "a", "--validate", "--export", "bio,hf,sft") == 0
    assert _synth(tmp_path / "b") == 0
    a = (tmp_path / "a" / "synth.jsonl").read_bytes()
    assert a == (tmp_path / "b" / "synth.jsonl").read_bytes()
    records = [json.loads(line) for line in a.decode().splitlines()]
    assert len(records) == 24
    assert {r["lang"] for r in records} == {"lg", "sw", "zh"}  # swa is an alias of sw
    for record in records:
        assert set(record) >= {"id", "text", "lang", "spans", "facts", "meta"}
        assert {"document_type", "text_format", "length", "edge_cases"} <= set(record["meta"])
        for span in record["spans"]:
            assert set(span) == {"start", "end", "label"}
    manifest = json.loads((tmp_path / "a" / "manifest.json").read_text())
    assert manifest["documents"] == 24 and manifest["seed"] == 9
    assert (tmp_path / "a" / "synth.bio").stat().st_size > 0
    assert (tmp_path / "a" / "sft.jsonl").stat().st_size > 0
    assert (tmp_path / "a" / "hf").is_dir()
    assert "Diversity per language" in (tmp_path / "a" / "validation.md").read_text()
    err = capsys.readouterr().err
    assert "0 error(s)" in err
    for record in records:  # progress and summaries carry counts, never text
        for span in record["spans"]:
            assert record["text"][span["start"] : span["end"]] not in err


def test_per_language_count(tmp_path: Path) -> None:
    assert main(["synth", "--per-language", "3", "--out", str(tmp_path), "--langs", "en,de"]) == 0
    lines = (tmp_path / "synth.jsonl").read_text().splitlines()
    assert len(lines) == 6


def test_usage_errors_exit_2(tmp_path: Path, capsys) -> None:
    assert main(["synth", "--n", "2", "--out", str(tmp_path), "--langs", "tlh"]) == 2
    assert main(["synth", "--n", "2", "--out", str(tmp_path), "--export", "pdf"]) == 2
    assert main(["synth", "--n", "2", "--out", str(tmp_path), "--formats", "docx"]) == 2
    assert main(["synth", "--n", "-1", "--out", str(tmp_path)]) == 2
    assert "error" in capsys.readouterr().err
