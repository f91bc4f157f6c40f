import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from polydeid.cli import main

NOTE_SW = (
    "Mgonjwa alipiga simu +254 712 345 678 tarehe 5 Machi 2024; barua pepe wanjiru.k@example.org."
)
CANARY = "wanjiru.k@example.org"


def run(argv, stdin: bytes | None = None, monkeypatch=None):
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin)))
    return main(argv)


@pytest.mark.torch
def test_detect_jsonl_file(tmp_path, capsys):
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps({"id": "a1", "lang": "sw", "text": NOTE_SW}) + "\n", "utf-8")
    out = tmp_path / "out.jsonl"
    assert main(["detect", str(src), "--output", str(out)]) == 0
    record = json.loads(out.read_text("utf-8"))
    assert record["id"] == "a1"
    labels = {s["label"] for s in record["spans"]}
    assert {"CONTACT_PHONE", "DATE", "CONTACT_OTHER"} <= labels
    for s in record["spans"]:
        extra = {"granularity"} if s["label"] == "DATE" else set()
        assert set(s) == {"start", "end", "label", "score", "source"} | extra
        assert 0 <= s["start"] < s["end"] <= len(NOTE_SW)
    assert CANARY not in capsys.readouterr().err


@pytest.mark.torch
def test_redact_stdin_to_stdout(monkeypatch, capsysbinary):
    line = json.dumps({"id": 7, "lang": "sw", "text": NOTE_SW}).encode() + b"\n"
    assert run(["redact", "-", "--policy", "tag"], stdin=line, monkeypatch=monkeypatch) == 0
    captured = capsysbinary.readouterr()
    record = json.loads(captured.out)
    assert record["id"] == 7 and record["lang"] == "sw"
    assert "[CONTACT_PHONE]" in record["text"] and "[CONTACT_OTHER]" in record["text"]
    assert "712" not in record["text"] and CANARY.encode() not in captured.err


@pytest.mark.torch
def test_plain_text_file_roundtrip(tmp_path):
    src = tmp_path / "note.txt"
    src.write_text(NOTE_SW, "utf-8")
    out = tmp_path / "note.out.txt"
    assert main(["redact", str(src), "--lang", "swa", "-o", str(out)]) == 0
    text = out.read_text("utf-8")
    assert text.startswith("Mgonjwa alipiga simu [CONTACT_PHONE] tarehe [DATE]")


@pytest.mark.torch
def test_bad_records_reported_and_others_processed(tmp_path, capsys):
    src = tmp_path / "mixed.jsonl"
    src.write_bytes(
        json.dumps({"id": 1, "text": NOTE_SW, "lang": "sw"}).encode()
        + b"\n"
        + b'{"id": 2, "text": "Secret Person'
        + b"\n"
        + b'{"id": 3, "text": "\xff\xfe"}\n'
        + json.dumps({"id": 4, "text": NOTE_SW, "lang": "xx"}).encode()
        + b"\n"
        + json.dumps({"id": 5, "text": NOTE_SW, "lang": "sw"}).encode()
        + b"\n"
    )
    out = tmp_path / "out.jsonl"
    assert main(["redact", str(src), "-o", str(out)]) == 1
    records = [json.loads(x) for x in out.read_text("utf-8").splitlines()]
    assert len(records) == 5
    assert [r.get("id") for r in records] == [1, None, None, 4, 5]
    assert "text" in records[0] and "text" in records[4]
    assert records[1]["error"]["code"] == "PD202" and records[1]["line"] == 2
    assert records[2]["error"]["code"] == "PD201" and records[2]["line"] == 3
    assert records[3]["error"]["code"] == "PD104"
    err = capsys.readouterr().err
    assert f"{src}:2" in err and f"{src}:3" in err and f"{src}:4" in err
    assert "Secret" not in err and CANARY not in err
    assert "3 failed" in err


@pytest.mark.torch
def test_invalid_utf8_text_file_names_file_and_line(tmp_path, capsys):
    src = tmp_path / "broken.txt"
    src.write_bytes(b"first line\nsecond \xc3( line\n")
    out = tmp_path / "broken.out.txt"
    out.write_text("previous content", "utf-8")
    assert main(["redact", str(src), "-o", str(out)]) == 1
    assert f"{src}:2" in capsys.readouterr().err
    assert out.read_text("utf-8") == "previous content"  # nothing partial replaced it


@pytest.mark.torch
def test_unknown_language_is_a_usage_error(tmp_path, capsys):
    src = tmp_path / "n.txt"
    src.write_text("x", "utf-8")
    assert main(["detect", str(src), "--lang", "klingon"]) == 2
    assert "PD104" in capsys.readouterr().err


@pytest.mark.torch
def test_malformed_policy_names_the_file(tmp_path, capsys):
    policy = tmp_path / "bad.toml"
    policy.write_text("[default\noperator = 'tag'", "utf-8")
    src = tmp_path / "n.txt"
    src.write_text("x", "utf-8")
    assert main(["redact", str(src), "--policy", str(policy)]) == 2
    assert "bad.toml" in capsys.readouterr().err


@pytest.mark.torch
def test_directory_in_directory_out(tmp_path):
    indir, outdir = tmp_path / "in", tmp_path / "out"
    (indir / "sub").mkdir(parents=True)
    (indir / "a.txt").write_text(NOTE_SW, "utf-8")
    (indir / "sub" / "b.jsonl").write_text(
        json.dumps({"text": NOTE_SW, "lang": "sw"}) + "\n", "utf-8"
    )
    assert main(["detect", str(indir), "-o", str(outdir), "--lang", "sw"]) == 0
    assert json.loads((outdir / "a.txt.spans.json").read_text("utf-8"))["spans"]
    assert json.loads((outdir / "sub" / "b.jsonl").read_text("utf-8"))["spans"]
    assert main(["redact", str(indir), "-o", str(tmp_path / "red"), "--lang", "sw"]) == 0
    assert "[DATE]" in (tmp_path / "red" / "a.txt").read_text("utf-8")


@pytest.mark.torch
def test_directory_needs_output(tmp_path, capsys):
    (tmp_path / "a.txt").write_text("x", "utf-8")
    assert main(["detect", str(tmp_path)]) == 2


@pytest.mark.torch
def test_keygen_hash_and_encrypt_roundtrip(tmp_path):
    key = tmp_path / "k.key"
    assert main(["keygen", str(key)]) == 0
    assert main(["keygen", str(key)]) == 2  # never overwrites
    src = tmp_path / "n.txt"
    src.write_text(NOTE_SW, "utf-8")
    enc = tmp_path / "n.enc.txt"
    assert (
        main(
            [
                "redact",
                str(src),
                "--lang",
                "sw",
                "--policy",
                "encrypt",
                "--key-file",
                str(key),
                "-o",
                str(enc),
            ]
        )
        == 0
    )
    assert CANARY not in enc.read_text("utf-8")
    dec = tmp_path / "n.dec.txt"
    assert main(["decrypt", str(enc), "--key-file", str(key), "-o", str(dec)]) == 0
    assert dec.read_text("utf-8") == NOTE_SW
    assert (
        main(
            ["redact", str(src), "--lang", "sw", "--policy", "hash", "-o", str(tmp_path / "h.txt")]
        )
        == 2
    )


def test_listing_commands(capsys):
    assert main(["languages"]) == 0
    assert "lg\tlug\tLuganda" in capsys.readouterr().out
    assert main(["categories"]) == 0
    assert "PERSON_THIRD_PARTY" in capsys.readouterr().out
    assert main(["policies"]) == 0
    assert "surrogate" in capsys.readouterr().out


@pytest.mark.torch
def test_console_script_entry_point():
    exe = Path(sys.executable).parent / "polydeid"
    if not exe.exists():
        pytest.skip("console script not installed in this environment")
    proc = subprocess.run(
        [str(exe), "detect", "-", "--lang", "sw"],
        input=NOTE_SW.encode(),
        capture_output=True,
        check=False,
    )
    assert proc.returncode == 0
    assert json.loads(proc.stdout)["spans"]


def test_validate_rejects_a_corrupted_corpus_with_file_and_line(capsys):
    fixtures = Path(__file__).parent / "synth" / "fixtures"
    assert main(["validate", str(fixtures / "validate_clean.jsonl")]) == 0
    capsys.readouterr()
    assert main(["validate", str(fixtures / "validate_corrupt.jsonl"), "--json"]) == 1
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert report["ok"] is False
    assert "validate_corrupt.jsonl:3: [OFFSET_OUT_OF_RANGE]" in captured.err


# --- language identification: --lang auto and polydeid langid ------------------------------

NOTE_LUO = (
    "Jatuo nobiro e osiptal ka en gi liet kod wich bar kuom ndalo adek, kendo ne ok ochamo maber."
)
NOTE_LG = "Omulwadde yazze mu ddwaliro ng'alina omusujja n'okulumwa omutwe okumala ennaku ssatu."


def _auto_input(tmp_path):
    src = tmp_path / "auto.jsonl"
    records = [
        {"id": 1, "text": NOTE_SW},
        {"id": 2, "text": "Nakato Sarah"},  # too short to judge
        {"id": 3, "text": NOTE_LUO},
        {"id": 4, "lang": "en", "text": "Nakato Sarah"},  # declared: never identified
        {"id": 5, "text": NOTE_LG},
    ]
    src.write_text("".join(json.dumps(r) + "\n" for r in records), "utf-8")
    return src


@pytest.mark.parametrize("command", ["detect", "redact"])
def test_lang_auto_identifies_records_and_reports_undetermined(tmp_path, capsys, command):
    src = _auto_input(tmp_path)
    out = tmp_path / "out.jsonl"
    argv = [command, str(src), "-o", str(out), "--lang", "auto", "--profile", "rules"]
    assert main(argv) == 1
    records = [json.loads(x) for x in out.read_text("utf-8").splitlines()]
    assert [r.get("id") for r in records] == [1, 2, 3, 4, 5]
    assert [r.get("lang") for r in records] == ["sw", None, "luo", "en", "lg"]
    assert records[1]["line"] == 2 and records[1]["error"]["code"] == "PD202"
    assert "error" not in records[3]  # the declared language is used, even for short text
    if command == "redact":
        assert "[CONTACT_PHONE]" in records[0]["text"]
    err = capsys.readouterr().err
    assert f"{src}:2: language undetermined" in err and "--lang" in err
    assert "Nakato" not in err and CANARY not in err
    assert "1 failed" in err


def test_lang_auto_text_file_and_explicit_language(tmp_path, capsys):
    src = tmp_path / "note.txt"
    src.write_text(NOTE_LUO, "utf-8")
    out = tmp_path / "note.spans.json"
    assert main(["detect", str(src), "-o", str(out), "--lang", "auto", "--profile", "rules"]) == 0
    assert json.loads(out.read_text("utf-8"))["lang"] == "luo"
    # an explicit language is taken as given; without --lang nothing is identified
    assert main(["detect", str(src), "-o", str(out), "--lang", "sw", "--profile", "rules"]) == 0
    assert "lang" not in json.loads(out.read_text("utf-8"))
    short = tmp_path / "short.txt"
    short.write_text("Sarah 12/03/2024", "utf-8")
    target = tmp_path / "short.out.txt"
    argv = ["redact", str(short), "-o", str(target), "--lang", "auto", "--profile", "rules"]
    assert main(argv) == 1
    assert not target.exists()
    err = capsys.readouterr().err
    assert f"{short}: language undetermined" in err and "Sarah" not in err


def test_lang_auto_fails_closed_when_the_model_cannot_load(tmp_path, capsys, monkeypatch):
    import polydeid.detect.langid as langid
    from polydeid.core.errors import DetectorUnavailableError

    def broken():
        raise DetectorUnavailableError("language identifier weights fail their checksum")

    monkeypatch.setattr(langid, "default_identifier", broken)
    src = _auto_input(tmp_path)
    out = tmp_path / "out.jsonl"
    argv = ["detect", str(src), "-o", str(out), "--lang", "auto", "--profile", "rules"]
    assert main(argv) == 1
    assert not out.exists()
    assert "PD302" in capsys.readouterr().err
    assert main(["langid", str(src)]) == 1


def test_langid_command_per_record_and_per_line(tmp_path, capsys, monkeypatch):
    src = _auto_input(tmp_path)
    with src.open("a", encoding="utf-8") as handle:
        handle.write('{"id": 6, "text": "broken\n')
    assert main(["langid", str(src)]) == 1
    captured = capsys.readouterr()
    rows = [json.loads(x) for x in captured.out.splitlines()]
    assert [r.get("id") for r in rows] == [1, 2, 3, 4, 5, None]
    assert [r.get("lang") for r in rows[:5]] == ["sw", None, "luo", None, "lg"]
    assert rows[0]["confidence"] > 0.9 and rows[1]["reason"] == "too_short"
    assert rows[5]["line"] == 6 and rows[5]["error"]["code"] == "PD202"
    assert "Nakato" not in captured.err
    text = f"{NOTE_SW}\n\n{NOTE_LG}\nok\n".encode()
    assert run(["langid", "-"], stdin=text, monkeypatch=monkeypatch) == 0
    rows = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [(r["line"], r["lang"]) for r in rows] == [(1, "sw"), (3, "lg"), (4, None)]


def test_redact_with_a_vault_then_reidentify(tmp_path, capsys):
    key = tmp_path / "k.key"
    assert main(["keygen", str(key)]) == 0
    src = tmp_path / "in.jsonl"
    src.write_text('{"id": 1, "lang": "en", "text": "Tel 0772 123456"}\n')
    vault = tmp_path / "v.sqlite"
    out = tmp_path / "out.jsonl"
    args = ["redact", str(src), "-o", str(out), "--profile", "rules", "--policy", "surrogate"]
    assert main([*args, "--key-file", str(key), "--vault", str(vault)]) == 0
    surrogate = json.loads(out.read_text())["text"].removeprefix("Tel ")
    assert surrogate != "0772 123456"
    # a second run with the same vault and key gives the same surrogate
    out2 = tmp_path / "out2.jsonl"
    keyed = ["--key-file", str(key), "--vault", str(vault)]
    assert main([*args[:3], str(out2), *args[4:], *keyed]) == 0
    assert out2.read_text() == out.read_text()
    capsys.readouterr()
    assert main(["reidentify", "--vault", str(vault), "--key-file", str(key), surrogate]) == 0
    assert "0772 123456" in capsys.readouterr().out
