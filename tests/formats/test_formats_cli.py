"""The CLI on structured formats: detection by extension/content, --format, directories,
malformed files reported with their location while the rest are processed."""

from __future__ import annotations

import json
import shutil

from tests.formats.conftest import GOLDEN

from polydeid.cli import main


def test_redact_fhir_file_by_content(tmp_path, capsys):
    src = tmp_path / "bundle.dat"
    shutil.copy(GOLDEN / "fhir" / "bundle.json", src)
    out = tmp_path / "out.json"
    rc = main(["redact", str(src), "-o", str(out), "--profile", "rules", "--format", "fhir"])
    assert rc == 0
    assert out.read_bytes() == (GOLDEN / "fhir" / "expected" / "bundle.json").read_bytes()
    assert "1 record(s) processed, 0 failed" in capsys.readouterr().err


def test_detect_json_reports_paths_and_raw_offsets(tmp_path, capsys):
    src = tmp_path / "p.json"
    text = '{"name": {"family": "Okot"}, "phone": "0772 123456"}'
    src.write_text(text)
    assert main(["detect", str(src), "--profile", "rules"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["format"] == "json"
    spans = {s["path"]: s for s in result["spans"]}
    assert set(spans) == {"name.family", "phone"}
    assert text[spans["phone"]["start"] : spans["phone"]["end"]] == "0772 123456"
    assert spans["name.family"]["label"] == "PERSON"


def test_directory_of_mixed_formats_with_a_broken_file(tmp_path, capsys):
    src = tmp_path / "in"
    (src / "sub").mkdir(parents=True)
    shutil.copy(GOLDEN / "json" / "export.json", src / "export.json")
    shutil.copy(GOLDEN / "chat" / "turns.jsonl", src / "sub" / "turns.jsonl")
    (src / "broken.json").write_text('{"phone": "0772 123456", ')
    (src / "note.txt").write_text("Call 0772 123456.")
    out = tmp_path / "out"
    rc = main(["redact", str(src), "-o", str(out), "--profile", "rules"])
    err = capsys.readouterr().err
    assert rc == 1
    assert "broken.json:1:" in err and "0772" not in err
    assert "3 record(s) processed, 1 failed" in err
    assert not (out / "broken.json").exists()
    assert (out / "export.json").read_bytes() == (
        GOLDEN / "json" / "expected" / "export.json"
    ).read_bytes()
    assert "[CONTACT_PHONE]" in (out / "sub" / "turns.jsonl").read_text()
    assert (out / "note.txt").read_text() == "Call [CONTACT_PHONE]."


def test_failed_file_does_not_replace_existing_output(tmp_path, capsys):
    src = tmp_path / "a.json"
    src.write_text('{"a": [1, 2')
    out = tmp_path / "a.out.json"
    out.write_text("previous")
    assert main(["redact", str(src), "-o", str(out), "--profile", "rules"]) == 1
    assert out.read_text() == "previous"
    assert "a.json:1:" in capsys.readouterr().err


def test_lang_auto_on_a_structured_document(tmp_path, capsys):
    src = tmp_path / "d.json"
    src.write_text(
        json.dumps(
            {
                "notiz": "Der Patient wurde am 03.04.2024 in die Klinik "
                "aufgenommen und klagt seit drei Tagen über starke "
                "Kopfschmerzen und Fieber. Telefon 030 1234567."
            },
            ensure_ascii=False,
        )
    )
    assert main(["redact", str(src), "--profile", "rules", "--lang", "auto"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert "[DATE]" in out["notiz"] and "[CONTACT_PHONE]" in out["notiz"]
