"""``polydeid batch``: every input kind, the quarantine, workers=1 vs workers=2, the summary and
the progress output (never an identifier), configuration errors."""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from polydeid.batch.record import JobConfig
from polydeid.batch.runner import BatchOptions, run_batch
from polydeid.cli import main

GOLDEN = Path(__file__).parents[1] / "formats" / "golden"

CANARIES = {
    "email": "zq.canary.7731@example.org",
    "phone": "+256 772 918273",
    "nin": "CM9203410ZQXKV",
    "mrn": "ZQX/2024/77310",
    "date": "17 September 2023",
}
TEXT = (
    f"Patient email {CANARIES['email']}, phone {CANARIES['phone']}, NIN {CANARIES['nin']}, "
    f"MRN {CANARIES['mrn']}, admitted on {CANARIES['date']}."
)
REDACTED = (
    "Patient email [CONTACT_OTHER], phone [CONTACT_PHONE], NIN [ID_NATIONAL], "
    "MRN [ID_RECORD], admitted on [DATE]."
)
FRAGMENTS = [*CANARIES.values(), "zq.canary", "918273", "ZQX", "77310", "CM9203410"]
#: a value in a column that is not kept
SECRET = "Zqnothere Kanarius"


def assert_clean(*outputs: str) -> None:
    for output in outputs:
        for fragment in [*FRAGMENTS, SECRET]:
            assert fragment not in output, "an identifier fragment leaked"


def make_inputs(root: Path, *, records: int = 30, bad: bool = True) -> None:
    """A folder with every input kind; ``bad`` adds unreadable records and files."""
    (root / "notes").mkdir(parents=True)
    (root / "docs").mkdir()
    lines = [
        json.dumps({"id": f"j{i}", "text": TEXT, "ward": "B", "nok": SECRET})
        for i in range(records)
    ]
    if bad:
        lines.insert(3, '{"id": "jx", "text": "' + TEXT + '"')  # truncated JSON
        lines.insert(5, json.dumps(["not", "an", "object", TEXT]))
        lines.insert(7, json.dumps({"id": "jy", "body": TEXT}))  # no text field
        lines.insert(9, json.dumps({"id": "jz", "lang": "qq", "text": TEXT}))  # unknown lang
    data = ("\n".join(lines) + "\n").encode("utf-8")
    if bad:
        data += b'{"id": "jb", "text": "caf\xe9 ' + TEXT.encode() + b'"}\n'  # not UTF-8
    (root / "records.jsonl").write_bytes(data)
    with (root / "table.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "secret", "text", "ward"])
        for i in range(records):
            writer.writerow([f"c{i}", SECRET, TEXT if i % 2 else f"Line\n{TEXT}", "A"])
        if bad:
            writer.writerow(["c-short", TEXT])  # too few fields
    ids = [f"p{i}" for i in range(records)]
    texts: list[str | None] = [TEXT] * records
    if bad:
        ids.append("p-null")
        texts.append(None)
    pq.write_table(
        pa.table({"id": ids, "text": texts, "secret": [SECRET] * len(ids)}),
        root / "frame.parquet",
        row_group_size=7,
    )
    for i in range(3):
        (root / "notes" / f"n{i}.txt").write_text(TEXT, "utf-8")
    shutil.copy(GOLDEN / "hl7" / "adt_a01.hl7", root / "docs" / "adt_a01.hl7")
    shutil.copy(GOLDEN / "fhir" / "bundle.json", root / "docs" / "bundle.json")
    shutil.copy(GOLDEN / "xml" / "referral.xml", root / "docs" / "referral.xml")
    if bad:
        (root / "notes" / "latin1.txt").write_bytes(b"caf\xe9 " + TEXT.encode())
        (root / "docs" / "broken.json").write_text('{"phone": "' + CANARIES["phone"] + '", ')
        (root / "headerless.csv").write_text(f"1,{TEXT}\n", "utf-8")


def batch(src: Path, out: Path, *extra: str) -> int:
    return main(["batch", str(src), str(out), "--profile", "rules", "--no-progress", *extra])


def output_files(out: Path) -> dict[str, bytes]:
    """Every output file (not the manifest, the lock or the summary, which hold timings)."""
    return {
        p.relative_to(out).as_posix(): p.read_bytes()
        for p in sorted(out.rglob("*"))
        if p.is_file() and not p.name.startswith(".") and p.name != "summary.json"
    }


@pytest.fixture(scope="module")
def clean_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("kinds")
    src, out = root / "in", root / "out"
    make_inputs(src, bad=False)
    rc = batch(src, out, "--workers", "1", "--keep", "ward", "--chunk-size", "8")
    return rc, out


def test_every_input_kind(clean_run):
    rc, out = clean_run
    assert rc == 0
    records = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    assert [r["id"] for r in records] == [f"j{i}" for i in range(30)]
    assert records[0] == {"id": "j0", "lang": "en", "ward": "B", "text": REDACTED}
    with (out / "table.csv").open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    assert rows[0] == ["id", "text", "ward"]  # the secret column is not kept
    assert [r[0] for r in rows[1:]] == [f"c{i}" for i in range(30)]
    assert rows[1][1] == f"Line\n{REDACTED}" and rows[2][1] == REDACTED
    table = pq.read_table(out / "frame.parquet")
    assert table.column_names == ["id", "text"]
    assert table.column("id").to_pylist() == [f"p{i}" for i in range(30)]
    assert set(table.column("text").to_pylist()) == {REDACTED}
    for i in range(3):
        assert (out / "notes" / f"n{i}.txt").read_text("utf-8") == REDACTED
    for fmt, name in (("hl7", "adt_a01.hl7"), ("fhir", "bundle.json"), ("xml", "referral.xml")):
        expected = (GOLDEN / fmt / "expected" / name).read_bytes()
        assert (out / "docs" / name).read_bytes() == expected
    assert (out / "quarantine.jsonl").read_text() == ""
    assert not (out / ".polydeid-parts").exists()
    assert_clean(*(data.decode("utf-8", "replace") for data in output_files(out).values()))


def test_summary_counts_without_identifiers(clean_run):
    _, out = clean_run
    text = (out / "summary.json").read_text("utf-8")
    summary = json.loads(text)
    assert summary["complete"] is True
    assert summary["files"] == 9
    assert summary["records_in"] == summary["written"] == 30 * 3 + 3 + 3
    assert summary["quarantined"] == 0
    assert summary["spans"]["CONTACT_OTHER"] >= 96 and summary["errors"] == {}
    assert summary["units_processed"] == summary["units"]
    assert {"elapsed_s", "records_per_s", "workers"} <= set(summary)
    assert_clean(text)
    assert "/in" not in text and "j0" not in text  # no paths, no record ids


def test_quarantine_holds_where_and_why_never_what(tmp_path, capsys):
    src, out = tmp_path / "in", tmp_path / "out"
    make_inputs(src, records=10)
    assert batch(src, out, "--workers", "1", "--chunk-size", "4") == 1
    err = capsys.readouterr().err
    entries = [json.loads(line) for line in (out / "quarantine.jsonl").read_text().splitlines()]
    found = {
        (e["source"], e.get("line", e.get("row", e.get("record"))), e["reason"]["code"])
        for e in entries
    }
    assert found == {
        ("docs/broken.json", 1, "PD200"),
        ("frame.parquet", 11, "PD202"),
        ("headerless.csv", None, "PD202"),
        ("notes/latin1.txt", 1, "PD201"),
        ("records.jsonl", 4, "PD202"),  # malformed JSON
        ("records.jsonl", 6, "PD202"),  # not an object
        ("records.jsonl", 8, "PD202"),  # no text
        ("records.jsonl", 10, "PD202"),  # unknown language
        ("records.jsonl", 15, "PD201"),  # not UTF-8
        ("table.csv", 11, "PD202"),  # too few fields
    }
    for entry in entries:
        assert set(entry) <= {"source", "line", "row", "record", "reason"}
        assert set(entry["reason"]) == {"code", "message"}
    summary = json.loads((out / "summary.json").read_text())
    assert summary["quarantined"] == 10
    assert summary["records_in"] == summary["written"] + 10
    assert summary["errors"] == {"PD200": 1, "PD201": 2, "PD202": 7}
    # the good records were all written, in order
    ids = [json.loads(x)["id"] for x in (out / "records.jsonl").read_text().splitlines()]
    assert ids == [f"j{i}" for i in range(10)]
    assert not (out / "docs" / "broken.json").exists()
    assert not (out / "headerless.csv").exists()
    assert not (out / "notes" / "latin1.txt").exists()
    assert_clean((out / "quarantine.jsonl").read_text("utf-8"), err)


@pytest.mark.slow
def test_workers_1_and_2_give_identical_outputs(tmp_path):
    src = tmp_path / "in"
    make_inputs(src, records=40)
    outputs = []
    for workers in ("1", "2"):
        out = tmp_path / f"out{workers}"
        assert batch(src, out, "--workers", workers, "--chunk-size", "6", "--keep", "ward") == 1
        outputs.append(output_files(out))
        assert json.loads((out / "summary.json").read_text())["workers"] == int(workers)
    assert outputs[0] == outputs[1]
    assert "records.jsonl" in outputs[0] and "frame.parquet" in outputs[0]


def test_long_records_are_cut_into_units_by_bytes_with_the_same_output(tmp_path, capsys):
    """A file of long records is cut into units of ``--chunk-bytes`` (so that every worker
    has work), with the output of one unit; other chunk bytes are other settings."""
    src = tmp_path / "in"
    src.mkdir()
    lines = [json.dumps({"id": i, "text": f"{TEXT} {i}. " * 20}) for i in range(12)]
    (src / "notes.jsonl").write_text("".join(line + "\n" for line in lines))
    whole, cut = tmp_path / "whole", tmp_path / "cut"
    assert batch(src, whole, "--workers", "1") == 0
    bound = str(3 * min(len(line) for line in lines))
    assert batch(src, cut, "--workers", "2", "--chunk-bytes", bound) == 0
    assert output_files(whole) == output_files(cut)
    units = [json.loads((out / "summary.json").read_text())["units"] for out in (whole, cut)]
    assert units == [1, 4]
    assert batch(src, cut, "--workers", "1", "--chunk-bytes", "1000000") == 2
    assert "different settings" in capsys.readouterr().err


def test_plain_progress_lines_carry_counts_only(tmp_path, capsys):
    src, out = tmp_path / "in", tmp_path / "out"
    make_inputs(src, records=20)
    batch(src, out, "--workers", "1", "--chunk-size", "5", "--progress-interval", "0")
    err = capsys.readouterr().err
    progress = [line for line in err.splitlines() if "records (" in line]
    assert progress, "no progress lines"
    assert progress[-1].startswith("polydeid: batch: ") and "records/s, ETA" in progress[-1]
    total = json.loads((out / "summary.json").read_text())["records_in"]
    assert f"{total}/{total} records (100%)" in progress[-1]
    assert_clean(err)


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_on_a_terminal_carries_counts_only(tmp_path):
    src, out = tmp_path / "in", tmp_path / "out"
    make_inputs(src, records=20)
    stream = _Terminal()
    result = run_batch(
        BatchOptions(input=str(src), output=str(out), workers=1, chunk_size=5),
        JobConfig(profile="rules"),
        stream=stream,
    )
    shown = stream.getvalue()
    assert result.exit_code == 1
    assert "records/s" in shown and "polydeid batch" in shown and "\x1b[" in shown
    assert_clean(shown)


def test_configuration_errors_exit_2(tmp_path, capsys):
    src, out = tmp_path / "in", tmp_path / "out"
    src.mkdir()
    (src / "a.jsonl").write_text(json.dumps({"id": 1, "text": TEXT}) + "\n")
    assert batch(src, out, "--workers", "1", "--profile", "nope") == 2
    assert batch(src, out, "--workers", "0") == 2
    assert batch(src, out, "--workers", "1", "--policy", str(tmp_path / "none.toml")) == 2
    assert batch(src, out, "--workers", "1", "--lang", "qq") == 2
    assert batch(src, out, "--workers", "1") == 0
    # the same folder with other settings is refused, the same settings resume
    assert batch(src, out, "--workers", "1", "--policy", "mask") == 2
    assert "different settings" in capsys.readouterr().err
    assert batch(src, out, "--workers", "2") == 0
    assert_clean(capsys.readouterr().err)


@pytest.mark.slow
def test_a_worker_that_cannot_build_its_deidentifier_stops_the_run(tmp_path, capsys):
    src, out = tmp_path / "in", tmp_path / "out"
    src.mkdir()
    for name in ("a", "b"):
        (src / f"{name}.jsonl").write_text(json.dumps({"id": 1, "text": TEXT}) + "\n")
    # the encrypt policy needs a key: refused when each worker builds its de-identifier
    assert batch(src, out, "--workers", "2", "--policy", "encrypt") == 2
    err = capsys.readouterr().err
    assert "PD106" in err
    assert not (out / "a.jsonl").exists()


def test_fields_named_on_the_command_line(tmp_path):
    src, out = tmp_path / "in", tmp_path / "out"
    src.mkdir()
    (src / "a.jsonl").write_text(
        json.dumps({"key": "r1", "note": TEXT, "ward": "B", "nok": SECRET}) + "\n"
    )
    args = ["--workers", "1", "--text-field", "note", "--id-field", "key", "--keep", "ward,x"]
    assert batch(src, out, *args) == 0
    (record,) = [json.loads(x) for x in (out / "a.jsonl").read_text().splitlines()]
    assert record == {"key": "r1", "lang": "en", "ward": "B", "note": REDACTED}


def test_a_single_record_file_as_input(tmp_path):
    src = tmp_path / "in"
    make_inputs(src, records=12, bad=False)
    for name in ("records.jsonl", "table.csv", "frame.parquet"):
        out = tmp_path / f"out-{name}"
        assert batch(src / name, out, "--workers", "1", "--chunk-size", "5") == 0
        assert sorted(output_files(out)) == sorted(["quarantine.jsonl", name])
        summary = json.loads((out / "summary.json").read_text())
        assert summary["files"] == 1 and summary["written"] == 12


@pytest.mark.slow
def test_workers_share_a_vault_for_consistent_surrogates(tmp_path):
    src, out = tmp_path / "in", tmp_path / "out"
    src.mkdir()
    for name in ("a", "b", "c"):
        lines = [
            json.dumps({"id": f"{name}{i}", "patient_id": "pt-1", "text": TEXT}) for i in range(4)
        ]
        (src / f"{name}.jsonl").write_text("\n".join(lines) + "\n")
    key = tmp_path / "key"
    assert main(["keygen", str(key)]) == 0
    vault = tmp_path / "vault.sqlite"
    extra = ["--policy", "surrogate", "--key-file", str(key), "--vault", str(vault)]
    assert batch(src, out, "--workers", "2", "--chunk-size", "2", *extra) == 0
    texts = {
        json.loads(line)["text"]
        for name in ("a", "b", "c")
        for line in (out / f"{name}.jsonl").read_text().splitlines()
    }
    # one surrogate per value (and one date shift per patient), in every process
    assert len(texts) == 1 and vault.exists()
    (text,) = texts
    # (surrogates keep some of a value's shape: only whole values are checked here)
    assert not [value for value in CANARIES.values() if value in text]


def test_an_unexpected_fault_on_a_record_is_quarantined_by_type_only(tmp_path, monkeypatch):
    from polydeid.batch import runner

    src, out = tmp_path / "in", tmp_path / "out"
    src.mkdir()
    lines = [json.dumps({"id": i, "text": TEXT}) for i in range(3)]
    (src / "a.jsonl").write_text("\n".join(lines) + "\n")
    real = runner.finish_record

    def faulty(deid, prepared, spans=None):
        if prepared.head["id"] == 1:
            raise ValueError(f"cannot handle {prepared.segment.text}")
        return real(deid, prepared, spans)

    monkeypatch.setattr(runner, "finish_record", faulty)
    assert batch(src, out, "--workers", "1") == 1
    (entry,) = [json.loads(x) for x in (out / "quarantine.jsonl").read_text().splitlines()]
    assert entry == {
        "source": "a.jsonl",
        "line": 2,
        "reason": {"code": "PD000", "message": "a.jsonl:2: unexpected ValueError"},
    }
    assert [json.loads(x)["id"] for x in (out / "a.jsonl").read_text().splitlines()] == [0, 2]


def test_a_gpu_asked_for_where_torch_sees_none_is_a_configuration_error(tmp_path, capsys):
    """``--device cuda`` never falls back to the CPU: exit 2 before any record is read."""
    pytest.importorskip("torch")
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    src = tmp_path / "in"
    make_inputs(src, records=4)
    assert batch(src, tmp_path / "out", "--workers", "1", "--device", "cuda") == 2
    assert "torch sees no GPU" in capsys.readouterr().err
    assert not (tmp_path / "out" / "records.jsonl").exists()


def test_the_device_is_a_setting_of_the_run(tmp_path, capsys, monkeypatch):
    """The CPU asked for is the default's output and settings (a run resumes without the
    flag); another device is other settings, refused on resume."""
    src, out = tmp_path / "in", tmp_path / "out"
    make_inputs(src, records=6)
    assert batch(src, out, "--workers", "1", "--device", "cpu") == 1
    first = output_files(out)
    assert batch(src, out, "--workers", "1") == 1  # resumed: the same settings
    assert output_files(out) == first
    from polydeid.batch import runner

    options = runner.BatchOptions(input=str(src), output=str(out), device="cuda")
    config = runner.JobConfig()
    assert runner.config_fingerprint(config, options) != runner.config_fingerprint(
        config, runner.BatchOptions(input=str(src), output=str(out), device="cpu")
    )
