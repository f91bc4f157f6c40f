"""Batch inputs: finding files and their kinds, cutting them into units whose records add up
to the whole file, file-level failures, atomic writes."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from polydeid.batch.record import JobConfig
from polydeid.batch.sources import (
    TMP_SUFFIX,
    atomic_path,
    discover,
    iter_unit,
    output_columns,
    plan_file,
    sweep_temporaries,
)
from polydeid.core.errors import ConfigError, InputError

GOLDEN = Path(__file__).parents[1] / "formats" / "golden"
CONFIG = JobConfig(profile="rules", keep=("ward",))
NO_BYTE_BOUND = 1 << 40  # units bounded by their record count alone


def _records(plan, config=CONFIG):
    items = [item for unit in plan.units for item in iter_unit(unit, config)]
    return items


def test_discover_kinds_by_extension_and_content(tmp_path):
    src = tmp_path / "in"
    (src / "sub").mkdir(parents=True)
    (src / "a.jsonl").write_text('{"text": "x"}\n')
    (src / "records.json").write_text('{"id": 1, "text": "a"}\n{"id": 2, "text": "b"}\n')
    (src / "doc.json").write_text('{"name": "x"}')
    (src / "sub" / "b.csv").write_text("id,text\n1,x\n")
    (src / "sub" / "c.tsv").write_text("id\ttext\n1\tx\n")
    (src / "note.txt").write_text("hello")
    (src / "msg.hl7").write_bytes((GOLDEN / "hl7" / "adt_a01.hl7").read_bytes())
    (src / "bundle.json").write_bytes((GOLDEN / "fhir" / "bundle.json").read_bytes())
    pq.write_table(pa.table({"text": ["x"]}), src / "t.parquet")
    (src / "image.png").write_bytes(b"\x89PNG")
    (src / ".hidden.jsonl").write_text('{"text": "x"}\n')
    files, skipped = discover(str(src), tmp_path / "out")
    kinds = {f.source: (f.kind, f.fmt) for f in files}
    assert kinds == {
        "a.jsonl": ("jsonl", ""),
        "bundle.json": ("document", "fhir"),
        "doc.json": ("document", "json"),
        "msg.hl7": ("document", "hl7"),
        "note.txt": ("text", ""),
        "records.json": ("jsonl", ""),
        "sub/b.csv": ("csv", ""),
        "sub/c.tsv": ("tsv", ""),
        "t.parquet": ("parquet", ""),
    }
    assert [f.source for f in files] == sorted(kinds)
    assert skipped == 1


def test_discover_skips_an_output_folder_inside_the_input(tmp_path):
    (tmp_path / "a.jsonl").write_text('{"text": "x"}\n')
    out = tmp_path / "out"
    out.mkdir()
    (out / "a.jsonl").write_text('{"text": "x"}\n')
    files, _ = discover(str(tmp_path), out)
    assert [f.source for f in files] == ["a.jsonl"]
    with pytest.raises(ConfigError):
        discover(str(tmp_path), tmp_path)


def test_discover_refuses_reserved_names_and_empty_folders(tmp_path):
    (tmp_path / "summary.json").write_text("{}")
    with pytest.raises(ConfigError, match="reserves"):
        discover(str(tmp_path), tmp_path / "out")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(InputError):
        discover(str(empty), tmp_path / "out")
    with pytest.raises(ConfigError):
        discover(str(tmp_path / "missing"), tmp_path / "out")


def test_single_file_by_content_and_forced_format(tmp_path):
    src = tmp_path / "export.dat"
    src.write_text('{"text": "x"}\n{"text": "y"}\n')
    for requested in ("auto", "jsonl"):
        files, _ = discover(str(src), tmp_path / "out", requested)
        assert [(f.source, f.kind) for f in files] == [("export.dat", "jsonl")]
    files, _ = discover(str(src), tmp_path / "out", "text")
    assert [(f.kind, f.fmt) for f in files] == [("text", "")]
    files, _ = discover(str(src), tmp_path / "out", "chat")
    assert [(f.kind, f.fmt) for f in files] == [("document", "chat")]
    with pytest.raises(ConfigError, match="replace the input"):
        discover(str(src), tmp_path)


def test_jsonl_units_cover_every_line_once(tmp_path):
    src = tmp_path / "a.jsonl"
    lines = []
    for i in range(23):
        lines.append(json.dumps({"id": i, "text": f"t{i}"}))
        if i % 5 == 0:
            lines.append("")  # blank lines are not records
    src.write_text("\n".join(lines))  # no final newline
    (f,), _ = discover(str(src), tmp_path / "out")
    plan = plan_file(f, tmp_path / "out", 4, CONFIG, NO_BYTE_BOUND)
    assert [u.count for u in plan.units] == [4, 4, 4, 4, 4, 3]
    items = _records(plan)
    assert [i.record["id"] for i in items] == list(range(23))
    # positions are physical line numbers
    numbered = {n: line for n, line in enumerate(lines, start=1)}
    for item in items:
        assert json.loads(numbered[item.position])["id"] == item.record["id"]


def test_csv_units_follow_rows_not_lines(tmp_path):
    src = tmp_path / "a.csv"
    with src.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["\ufeffid", "text", "ward", "secret"])
        for i in range(11):
            writer.writerow([i, f"line one {i}\nline two, with a comma", "B", "s"])
    (f,), _ = discover(str(src), tmp_path / "out")
    plan = plan_file(f, tmp_path / "out", 3, CONFIG, NO_BYTE_BOUND)
    assert plan.header == ("id", "text", "ward", "secret")
    assert plan.columns == ("id", "text", "ward")
    assert [u.count for u in plan.units] == [3, 3, 3, 2]
    items = _records(plan)
    assert [i.position for i in items] == list(range(1, 12))
    assert [i.record["id"] for i in items] == [str(i) for i in range(11)]
    assert all(i.record["text"].endswith("with a comma") for i in items)


def test_csv_rows_that_cannot_be_read(tmp_path):
    src = tmp_path / "a.csv"
    src.write_bytes(b"id,text\n1,fine\n2,bad \xff bytes\n3,too,many\n\n4,fine again\n")
    (f,), _ = discover(str(src), tmp_path / "out")
    plan = plan_file(f, tmp_path / "out", 2, CONFIG, NO_BYTE_BOUND)
    items = _records(plan)
    assert [(i.position, i.error.code if i.error else None) for i in items] == [
        (1, None),
        (2, "PD201"),
        (3, "PD202"),
        (4, None),
    ]
    assert "\xff" not in str(items[1].error) and "many" not in str(items[2].error)


@pytest.mark.parametrize(
    ("content", "code"),
    [(b"", "PD202"), (b"id,body\n1,x\n", "PD202"), (b"id,t\xffxt\n1,x\n", "PD201")],
    ids=["empty", "no-text-column", "undecodable-header"],
)
def test_csv_without_a_usable_header_fails_as_a_file(tmp_path, content, code):
    src = tmp_path / "a.csv"
    src.write_bytes(content)
    (f,), _ = discover(str(src), tmp_path / "out")
    plan = plan_file(f, tmp_path / "out", 10, CONFIG, NO_BYTE_BOUND)
    assert plan.units == []
    assert plan.failure is not None and plan.failure.code == code


def test_parquet_units_across_row_groups(tmp_path):
    src = tmp_path / "a.parquet"
    table = pa.table(
        {
            "id": list(range(25)),
            "text": [None if i == 7 else f"t{i}" for i in range(25)],
            "ward": ["B"] * 25,
            "secret": ["s"] * 25,
        }
    )
    pq.write_table(table, src, row_group_size=6)
    (f,), _ = discover(str(src), tmp_path / "out")
    plan = plan_file(f, tmp_path / "out", 4, CONFIG, NO_BYTE_BOUND)
    assert [u.count for u in plan.units] == [4] * 6 + [1]
    items = _records(plan)
    assert [i.position for i in items] == list(range(1, 26))
    assert items[7].error is not None and items[7].error.code == "PD202"
    good = [i.record for i in items if i.record is not None]
    assert [r["id"] for r in good] == [i for i in range(25) if i != 7]
    assert "secret" not in good[0]  # columns the output does not keep are not even read


def _units_of(plan):
    return [[i.record["id"] for i in iter_unit(unit, CONFIG)] for unit in plan.units]


def test_jsonl_and_csv_units_end_once_they_hold_the_byte_bound(tmp_path):
    """Long notes cut a file into units of about ``chunk_bytes`` (each unit ends with the
    record that reaches the bound, never inside one); short ones are still bounded by the
    record count, and the units cover every record once."""
    notes = [("x" * (300 if i % 3 else 2000)) for i in range(30)]
    jsonl = tmp_path / "a.jsonl"
    jsonl.write_text("".join(json.dumps({"id": i, "text": t}) + "\n" for i, t in enumerate(notes)))
    src_csv = tmp_path / "a.csv"
    with src_csv.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "text"])
        for i, t in enumerate(notes):
            writer.writerow([i, t])
    for src in (jsonl, src_csv):
        (f,), _ = discover(str(src), tmp_path / "out")
        plan = plan_file(f, tmp_path / "out", 1000, CONFIG, 4000)
        units = _units_of(plan)
        ids = [int(i) for unit in units for i in unit]
        assert ids == list(range(30)), src.suffix
        sizes = [u.end - u.start for u in plan.units]
        assert all(size >= 4000 for size in sizes[:-1]), sizes
        # a unit holds less than the bound before its last record
        assert all(size - 2100 < 4000 for size in sizes), sizes
        assert 5 <= len(units) <= 9, len(units)
        by_count = plan_file(f, tmp_path / "out", 4, CONFIG, 4000)
        assert max(u.count for u in by_count.units) == 4


def test_parquet_units_are_weighed_by_their_row_groups_bytes(tmp_path):
    src = tmp_path / "a.parquet"
    pq.write_table(
        pa.table({"id": list(range(40)), "text": [f"{i:04d}" * 250 for i in range(40)]}),
        src,
        row_group_size=10,
        use_dictionary=False,
    )
    (f,), _ = discover(str(src), tmp_path / "out")
    whole = plan_file(f, tmp_path / "out", 1000, CONFIG, NO_BYTE_BOUND)
    assert [u.count for u in whole.units] == [40]
    plan = plan_file(f, tmp_path / "out", 1000, CONFIG, 10_000)
    assert 3 <= len(plan.units) <= 6
    assert [int(i) for unit in _units_of(plan) for i in unit] == list(range(40))


def test_parquet_that_cannot_be_used_fails_as_a_file(tmp_path):
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"not parquet at all")
    numeric = tmp_path / "numeric.parquet"
    pq.write_table(pa.table({"text": [1, 2]}), numeric)
    for path in (bad, numeric):
        (f,), _ = discover(str(path), tmp_path / "out")
        plan = plan_file(f, tmp_path / "out", 10, CONFIG, NO_BYTE_BOUND)
        assert plan.failure is not None and plan.failure.code == "PD202"


def test_output_columns_keep_only_id_language_text_and_named():
    names = ["secret", "text", "lang", "ward", "id", "name"]
    assert output_columns(names, CONFIG) == ("text", "lang", "ward", "id")


def test_atomic_path_leaves_nothing_on_failure_and_sweep_removes_leftovers(tmp_path):
    target = tmp_path / "sub" / "out.jsonl"
    target.parent.mkdir()
    target.write_text("previous")
    with pytest.raises(RuntimeError), atomic_path(target) as tmp:
        tmp.write_text("partial")
        raise RuntimeError("boom")
    assert target.read_text() == "previous"
    assert [p.name for p in target.parent.iterdir()] == ["out.jsonl"]
    leftover = target.parent / f".out.jsonl.abc{TMP_SUFFIX}"
    leftover.write_text("partial")
    assert sweep_temporaries(tmp_path) == 1
    assert not leftover.exists() and target.exists()
