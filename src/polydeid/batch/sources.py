"""Batch inputs and outputs: finding input files, cutting them into units of work, reading a
unit's records, and writing part files and final outputs atomically.

Input kinds (by extension, refined by content; ``--format`` forces one for every file):

``jsonl``
    One record (a JSON object) per line. Output: JSONL records at the same relative path.
``csv`` / ``tsv``
    A header row, then one record per row. Output: the same file name with only the id, the
    language and the text columns plus those named in ``keep`` (other columns may hold
    identifiers), in the input's column order; the text column de-identified.
``parquet``
    One record per row (pyarrow). Output: Parquet with the same column rule as CSV and the
    input's column types.
``text``
    ``.txt``/``.text``/``.md``/``.note``: a whole file is one record whose id is its relative
    path. Output: the de-identified text at the same relative path.
``document``
    Every other known format (FHIR/JSON/chat, XML/CDA, HL7 v2, code …): de-identified whole
    and written in its own format and encoding.

Record files are cut into units of at most ``chunk_size`` records that end once they hold
``chunk_bytes`` bytes of input (by byte range for JSONL and CSV; by row range for Parquet,
its rows weighed by their row groups' uncompressed size), so that a file of long notes keeps
every worker busy; a record is never split. A text file or a document is one unit. Units are
what the manifest records as done, so a killed run resumes unit by unit. Record positions are
1-based: JSONL by physical line, CSV and Parquet by data row (the header is not a row).
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from polydeid.core.errors import (
    ConfigError,
    DecodingError,
    InputError,
    InputLimitError,
    PolydeidError,
    RecordError,
)
from polydeid.formats import limits
from polydeid.formats.jsonl import parse_object
from polydeid.formats.registry import READERS, SUFFIXES, detect_format
from polydeid.formats.text import decode_utf8

#: Names the runner keeps in the output folder (an input may not take them).
MANIFEST_NAME = ".polydeid-manifest.sqlite"
PARTS_DIR = ".polydeid-parts"
QUARANTINE_NAME = "quarantine.jsonl"
SUMMARY_NAME = "summary.json"
RESERVED_NAMES = frozenset({MANIFEST_NAME, PARTS_DIR, QUARANTINE_NAME, SUMMARY_NAME})
#: Suffix of every temporary file the runner writes (swept at the start of a run).
TMP_SUFFIX = ".polydeid-tmp"

RECORD_KINDS = ("jsonl", "csv", "tsv", "parquet")
KINDS = (*RECORD_KINDS, "text", "document")
PARQUET_SUFFIXES = {".parquet"}
#: What ``--format`` accepts: a record kind, ``text``, or a document format.
FORMAT_CHOICES = tuple(dict.fromkeys(("auto", *RECORD_KINDS, "text", *READERS)))
#: The key naming a record's position in quarantine entries.
POSITION_KEY = {
    "jsonl": "line",
    "csv": "row",
    "tsv": "row",
    "parquet": "row",
    "text": "record",
    "document": "record",
}
_DELIMITER = {"csv": ",", "tsv": "\t"}
_HEAD = 1 << 16


def _raise_csv_field_limit() -> None:
    """Clinical notes exceed the csv module's default field limit (128 KiB)."""
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))


# --- finding input files ------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class InputFile:
    """One input file: ``source`` is its path relative to the input folder (POSIX), the
    name used in the manifest, in quarantine entries and for the output."""

    source: str
    path: str
    kind: str
    fmt: str
    size: int
    mtime_ns: int


def _kind_of_format(fmt: str) -> tuple[str, str]:
    if fmt in RECORD_KINDS or fmt == "text":
        return fmt, ""
    return "document", fmt


def kind_of(
    path: Path, requested: str, text_field: str = "text", *, any_suffix: bool = False
) -> tuple[str, str] | None:
    """(kind, document format) of a file; None for a file of no known kind (skipped), unless
    ``any_suffix``: then the content decides (plain text when in doubt)."""
    if requested != "auto":
        return _kind_of_format(requested)
    suffix = path.suffix.lower()
    if suffix in PARQUET_SUFFIXES:
        return "parquet", ""
    by_suffix = SUFFIXES.get(suffix)
    if by_suffix in ("csv", "tsv", "text"):
        return by_suffix, ""
    if by_suffix is None and not any_suffix:
        return None
    head = _read_head(path)
    fmt = detect_format(str(path), head)
    if fmt == "json" and _looks_like_records(head, text_field):
        return "jsonl", ""
    return _kind_of_format(fmt)


def _read_head(path: Path) -> bytes:
    try:
        with path.open("rb") as handle:
            return handle.read(_HEAD)
    except OSError:
        return b""


def _looks_like_records(head: bytes, text_field: str) -> bool:
    """Whether a ``.json`` file is really JSON Lines records (two or more objects, one a
    line, the first with a string text field)."""
    lines = [ln.strip() for ln in head.split(b"\n")]
    if len(head) == _HEAD:
        lines = lines[:-1]  # the last line may be cut short
    lines = [ln for ln in lines if ln]
    if len(lines) < 2 or not all(ln.startswith(b"{") and ln.endswith(b"}") for ln in lines):
        return False
    try:
        first = limits.loads(lines[0])
    except (ValueError, InputLimitError):
        return False
    return isinstance(first, dict) and isinstance(first.get(text_field), str)


def _stat(path: Path) -> tuple[int, int]:
    st = path.stat()
    return st.st_size, st.st_mtime_ns


def discover(
    input_path: str, out_dir: Path, requested: str = "auto", text_field: str = "text"
) -> tuple[list[InputFile], int]:
    """The input files (sorted by relative path) and how many files were skipped as of no
    known kind. A folder is walked recursively, skipping hidden entries (names starting
    with ``.``) and the output folder when it lies inside the input."""
    root = Path(input_path)
    if not root.exists():
        raise ConfigError("no such input file or folder", location=input_path)
    if root.is_file():
        if (out_dir / root.name).resolve() == root.resolve():
            raise ConfigError(
                "the output would replace the input: choose another output folder",
                location=input_path,
            )
        kind = kind_of(root, requested, text_field, any_suffix=True)
        assert kind is not None
        size, mtime = _stat(root)
        return [InputFile(root.name, str(root.resolve()), *kind, size, mtime)], 0
    out_resolved = out_dir.resolve()
    root_resolved = root.resolve()
    if out_resolved == root_resolved:
        raise ConfigError("the output folder must not be the input folder", location=input_path)
    files: list[InputFile] = []
    skipped = 0
    for dirpath, dirnames, filenames in os.walk(root_resolved):
        here = Path(dirpath)
        dirnames[:] = sorted(
            d for d in dirnames if not d.startswith(".") and (here / d) != out_resolved
        )
        for name in sorted(filenames):
            if name.startswith("."):
                continue
            path = here / name
            if not path.is_file():
                continue
            rel = path.relative_to(root_resolved).as_posix()
            kind = kind_of(path, requested, text_field)
            if kind is None:
                skipped += 1
                continue
            if rel in RESERVED_NAMES:
                raise ConfigError(
                    "an input file takes a name the output folder reserves "
                    f"({', '.join(sorted(RESERVED_NAMES))})",
                    location=str(path),
                )
            size, mtime = _stat(path)
            files.append(InputFile(rel, str(path), *kind, size, mtime))
    files.sort(key=lambda f: f.source)
    if not files:
        raise InputError("no input files of a known kind found", location=input_path)
    return files, skipped


# --- units of work ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Unit:
    """A piece of one input file that is processed, written and recorded as done at once.

    ``start``/``end``: a byte range (JSONL, CSV) or a row range (Parquet); ``first``: the
    position of its first record; ``count``: its records as planned; ``output``: the part
    file it writes (record kinds) or the final output (text, document).
    """

    source: str
    path: str
    kind: str
    fmt: str
    index: int
    count: int
    start: int = 0
    end: int = 0
    first: int = 1
    header: tuple[str, ...] = ()
    output: str = ""

    @property
    def location(self) -> str:
        return f"{self.source} (unit {self.index + 1})"


@dataclass(frozen=True, slots=True)
class FileFailure:
    """A whole file that cannot be read (no header, no text column, not Parquet …)."""

    code: str
    message: str


@dataclass(slots=True)
class FilePlan:
    file: InputFile
    output: Path
    units: list[Unit] = field(default_factory=list)
    failure: FileFailure | None = None
    #: CSV header and output columns
    header: tuple[str, ...] = ()
    columns: tuple[str, ...] = ()

    @property
    def records(self) -> int:
        return sum(u.count for u in self.units)


def parts_dir(out_dir: Path, source: str) -> Path:
    """Where the part files of one input file go until it is assembled (a name derived from
    the source, so no input path appears twice)."""
    import hashlib

    return out_dir / PARTS_DIR / hashlib.sha256(source.encode("utf-8")).hexdigest()[:24]


_PART_SUFFIX = {"jsonl": ".jsonl", "csv": ".csv", "tsv": ".tsv", "parquet": ".parquet"}


def output_columns(names: tuple[str, ...] | list[str], config: Any) -> tuple[str, ...]:
    """Columns a CSV or Parquet output keeps: id, language, text and ``keep``, in input
    order."""
    wanted = {config.id_field, config.lang_field, config.text_field, *config.keep}
    seen: set[str] = set()
    out = []
    for name in names:
        if name in wanted and name not in seen:
            seen.add(name)
            out.append(name)
    return tuple(out)


def plan_file(
    f: InputFile, out_dir: Path, chunk_size: int, config: Any, chunk_bytes: int
) -> FilePlan:
    """Cut ``f`` into units (module docstring); a file that cannot be read at all gets a
    :class:`FileFailure`."""
    plan = FilePlan(file=f, output=out_dir / f.source)
    try:
        if f.kind == "jsonl":
            ranges = _plan_jsonl(f.path, chunk_size, chunk_bytes)
        elif f.kind in ("csv", "tsv"):
            header, ranges = _plan_csv(f, chunk_size, config, chunk_bytes)
            plan.header = header
            plan.columns = output_columns(header, config)
        elif f.kind == "parquet":
            ranges = _plan_parquet(f, chunk_size, config, chunk_bytes)
        else:
            plan.units = [Unit(f.source, f.path, f.kind, f.fmt, 0, 1, output=str(plan.output))]
            return plan
    except PolydeidError as exc:
        plan.failure = FileFailure(exc.code, _message(exc))
        return plan
    except OSError as exc:
        plan.failure = FileFailure(InputError.code, f"cannot read input ({exc.strerror})")
        return plan
    part_dir = parts_dir(out_dir, f.source)
    for index, (start, end, first, count) in enumerate(ranges):
        part = part_dir / f"part-{index:06d}{_PART_SUFFIX[f.kind]}"
        plan.units.append(
            Unit(
                f.source,
                f.path,
                f.kind,
                "",
                index,
                count,
                start,
                end,
                first,
                plan.header,
                str(part),
            )
        )
    return plan


def _message(exc: PolydeidError) -> str:
    """The error's text without its code (the code is recorded beside it)."""
    return str(exc).removeprefix(f"[{exc.code}] ")


Range = tuple[int, int, int, int]  # start, end, first position, records


def _plan_jsonl(path: str, chunk_size: int, chunk_bytes: int) -> list[Range]:
    ranges: list[Range] = []
    unit_start, unit_first, count, offset, number = 0, 1, 0, 0, 0
    with open(path, "rb") as handle:
        for raw in handle:
            number += 1
            offset += len(raw)
            if raw.strip():
                count += 1
            if count == chunk_size or (count and offset - unit_start >= chunk_bytes):
                ranges.append((unit_start, offset, unit_first, count))
                unit_start, unit_first, count = offset, number + 1, 0
    if count or not ranges:
        ranges.append((unit_start, offset, unit_first, count))
    return ranges


class _LineFeed:
    """Lines of a binary file from the current position up to byte ``end`` (None: the end),
    decoded as UTF-8 with undecodable bytes escaped (the row is then refused); ``offset``
    is the byte position after the last line handed out. The csv module reads no further
    than the end of the row it returns, so ``offset`` after a row is where the next begins.
    """

    def __init__(self, handle: BinaryIO, start: int, end: int | None) -> None:
        self.handle = handle
        self.offset = start
        self.end = end
        handle.seek(start)

    def __iter__(self) -> _LineFeed:
        return self

    def __next__(self) -> str:
        if self.end is not None and self.offset >= self.end:
            raise StopIteration
        raw = self.handle.readline()
        if not raw:
            raise StopIteration
        self.offset += len(raw)
        return raw.decode("utf-8", "surrogateescape")


def _csv_rows(feed: _LineFeed, kind: str) -> Iterator[tuple[list[str] | None, str | None]]:
    """(fields, None) per row, or (None, reason) for a row the csv module refuses; blank
    lines are not rows."""
    _raise_csv_field_limit()
    reader = csv.reader(feed, delimiter=_DELIMITER[kind])
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            yield None, f"malformed {kind.upper()} row ({exc})"
            continue
        if row:
            yield row, None


def _undecodable(values: list[str]) -> bool:
    try:
        for value in values:
            value.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _plan_csv(
    f: InputFile, chunk_size: int, config: Any, chunk_bytes: int
) -> tuple[tuple[str, ...], list[Range]]:
    ranges: list[Range] = []
    with open(f.path, "rb") as handle:
        feed = _LineFeed(handle, 0, None)
        rows = _csv_rows(feed, f.kind)
        first_row = next(rows, None)
        if first_row is None or first_row[0] is None:
            raise RecordError(f"a {f.kind.upper()} input needs a header row")
        header = list(first_row[0])
        if _undecodable(header):
            raise DecodingError("invalid UTF-8 in the header row")
        if header:
            header[0] = header[0].removeprefix("\ufeff")
        if config.text_field not in header:
            raise RecordError(
                f"no column {config.text_field!r} in the header row "
                f"(a {f.kind.upper()} input needs a header naming its text column)"
            )
        unit_start, unit_first, count = feed.offset, 1, 0
        for number, _row in enumerate(rows, start=1):
            count += 1
            if count == chunk_size or feed.offset - unit_start >= chunk_bytes:
                ranges.append((unit_start, feed.offset, unit_first, count))
                unit_start, unit_first, count = feed.offset, number + 1, 0
        if count or not ranges:
            ranges.append((unit_start, feed.offset, unit_first, count))
    return tuple(header), ranges


def _parquet_file(path: str) -> Any:
    import pyarrow.parquet as pq

    try:
        return pq.ParquetFile(path)
    except OSError as exc:
        if exc.strerror:
            raise
        raise RecordError(f"not a readable Parquet file ({type(exc).__name__})") from None
    except Exception as exc:  # pyarrow raises its own ArrowInvalid and friends
        raise RecordError(f"not a readable Parquet file ({type(exc).__name__})") from None


def _parquet_text_ok(schema: Any, config: Any) -> None:
    import pyarrow as pa

    if config.text_field not in schema.names:
        raise RecordError(f"no column {config.text_field!r} in the Parquet schema")
    kind = schema.field(config.text_field).type
    if pa.types.is_dictionary(kind):
        kind = kind.value_type
    if not (pa.types.is_string(kind) or pa.types.is_large_string(kind)):
        raise RecordError(f"column {config.text_field!r} is not a string column")


def _plan_parquet(f: InputFile, chunk_size: int, config: Any, chunk_bytes: int) -> list[Range]:
    pf = _parquet_file(f.path)
    _parquet_text_ok(pf.schema_arrow, config)
    meta = pf.metadata
    total = meta.num_rows
    size = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
    rows = chunk_size if size <= 0 else max(1, min(chunk_size, chunk_bytes * total // size))
    ranges: list[Range] = []
    for start in range(0, total, rows):
        end = min(total, start + rows)
        ranges.append((start, end, start + 1, end - start))
    return ranges or [(0, 0, 1, 0)]


# --- reading a unit's records -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Item:
    """One record of a unit (``record``) or why it cannot be read (``error``)."""

    position: int
    record: dict[str, Any] | None = field(default=None, repr=False)  # holds identifier text
    error: Exception | None = None


def record_location(unit: Unit, position: int) -> str:
    if unit.kind == "jsonl":
        return f"{unit.source}:{position}"
    if unit.kind in ("csv", "tsv", "parquet"):
        return f"{unit.source}:row {position}"
    return unit.source


def iter_unit(unit: Unit, config: Any) -> Iterator[Item]:
    """The records of ``unit`` in order (located failures in their place)."""
    if unit.kind == "jsonl":
        yield from _iter_jsonl(unit)
    elif unit.kind in ("csv", "tsv"):
        yield from _iter_csv(unit, config)
    elif unit.kind == "parquet":
        yield from _iter_parquet(unit, config)
    elif unit.kind == "text":
        data = Path(unit.path).read_bytes()
        try:
            text = decode_utf8(data, source=unit.source)
        except PolydeidError as exc:
            yield Item(1, error=exc)
            return
        yield Item(1, {config.id_field: unit.source, config.text_field: text})
    else:
        raise ValueError(f"not a record kind: {unit.kind}")


def _iter_jsonl(unit: Unit) -> Iterator[Item]:
    with open(unit.path, "rb") as handle:
        handle.seek(unit.start)
        data = handle.read(unit.end - unit.start)
    for number, raw in enumerate(data.split(b"\n"), start=unit.first):
        if not raw.strip():
            continue
        try:
            record = parse_object(raw.rstrip(b"\r"), source=unit.source, line=number)
        except (PolydeidError, ValueError, RecursionError, MemoryError) as exc:
            yield Item(number, error=exc)
            continue
        yield Item(number, record)


def _blank_to_none(record: dict[str, Any], config: Any) -> dict[str, Any]:
    """An empty id, language or patient cell means none."""
    for name in (config.id_field, config.lang_field, config.patient_field):
        if record.get(name) == "":
            record[name] = None
    return record


def _iter_csv(unit: Unit, config: Any) -> Iterator[Item]:
    header = unit.header
    with open(unit.path, "rb") as handle:
        feed = _LineFeed(handle, unit.start, unit.end)
        for number, (row, problem) in enumerate(_csv_rows(feed, unit.kind), start=unit.first):
            location = f"{unit.source}:row {number}"
            if row is None:
                yield Item(number, error=RecordError(problem or "malformed row", location=location))
            elif _undecodable(row):
                yield Item(number, error=DecodingError("invalid UTF-8", location=location))
            elif len(row) != len(header):
                yield Item(
                    number,
                    error=RecordError(
                        f"the row has {len(row)} field(s), the header {len(header)}",
                        location=location,
                    ),
                )
            else:
                yield Item(number, _blank_to_none(dict(zip(header, row, strict=True)), config))


def _parquet_columns(names: list[str], config: Any) -> list[str]:
    wanted = {
        config.id_field,
        config.text_field,
        config.lang_field,
        config.patient_field,
        *config.keep,
    }
    return [n for n in names if n in wanted]


def _iter_parquet(unit: Unit, config: Any) -> Iterator[Item]:
    pf = _parquet_file(unit.path)
    metadata = pf.metadata
    groups: list[int] = []
    base: int | None = None
    position = 0
    for index in range(metadata.num_row_groups):
        rows = metadata.row_group(index).num_rows
        if position + rows > unit.start and position < unit.end:
            groups.append(index)
            base = position if base is None else base
        position += rows
    if not groups or base is None:
        return
    columns = _parquet_columns(pf.schema_arrow.names, config)
    table = pf.read_row_groups(groups, columns=columns)
    table = table.slice(unit.start - base, unit.end - unit.start)
    for number, record in enumerate(table.to_pylist(), start=unit.first):
        if record.get(config.text_field) is None:
            yield Item(
                number,
                error=RecordError(
                    f"no text (column {config.text_field!r} is null)",
                    location=f"{unit.source}:row {number}",
                ),
            )
            continue
        yield Item(number, record)


# --- writing ------------------------------------------------------------------------------


@contextlib.contextmanager
def atomic_path(target: Path) -> Iterator[Path]:
    """A temporary path beside ``target``, renamed onto it when the block succeeds (a kill
    leaves either the old file or the new one, never a partial one)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=TMP_SUFFIX)
    os.close(fd)
    try:
        yield Path(tmp)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_atomic(target: Path, data: bytes) -> None:
    with atomic_path(target) as tmp:
        tmp.write_bytes(data)


def sweep_temporaries(out_dir: Path) -> int:
    """Remove temporary files a killed run left in the output folder."""
    removed = 0
    for path in out_dir.rglob(f"*{TMP_SUFFIX}"):
        if path.is_file() and path.name.startswith("."):
            path.unlink(missing_ok=True)
            removed += 1
    return removed


def csv_line(values: list[Any], kind: str) -> str:
    buffer = io.StringIO()
    csv.writer(buffer, delimiter=_DELIMITER[kind], lineterminator="\n").writerow(values)
    return buffer.getvalue()


class UnitWriter:
    """Collects a unit's output records and writes its part file (or, for a text file,
    its output) atomically on :meth:`commit`."""

    def __init__(self, unit: Unit, config: Any) -> None:
        self.unit = unit
        self.config = config
        self.records: list[dict[str, Any]] = []

    def add(self, record: dict[str, Any]) -> None:
        self.records.append(record)

    def commit(self) -> None:
        unit, target = self.unit, Path(self.unit.output)
        if unit.kind == "jsonl":
            data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in self.records)
            write_atomic(target, data.encode("utf-8"))
        elif unit.kind in ("csv", "tsv"):
            columns = output_columns(unit.header, self.config)
            data = "".join(
                csv_line([_cell(r.get(c)) for c in columns], unit.kind) for r in self.records
            )
            write_atomic(target, data.encode("utf-8"))
        elif unit.kind == "parquet":
            self._commit_parquet(target)
        elif unit.kind == "text":
            if self.records:
                text = str(self.records[0][self.config.text_field])
                write_atomic(target, text.encode("utf-8"))
            else:  # quarantined: no output, and none left over from an earlier input
                target.unlink(missing_ok=True)

    def _commit_parquet(self, target: Path) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        schema = parquet_output_schema(_parquet_file(self.unit.path).schema_arrow, self.config)
        rows = [{name: r.get(name) for name in schema.names} for r in self.records]
        table = pa.Table.from_pylist(rows, schema=schema)
        with atomic_path(target) as tmp:
            pq.write_table(table, tmp)


def _cell(value: Any) -> Any:
    return "" if value is None else value


def parquet_output_schema(schema: Any, config: Any) -> Any:
    import pyarrow as pa

    names = output_columns(schema.names, config)
    fields = []
    for name in names:
        f = schema.field(name)
        if name in (config.text_field, config.lang_field):
            f = pa.field(name, pa.large_string() if _is_large(f.type) else pa.string())
        fields.append(f)
    return pa.schema(fields)


def _is_large(kind: Any) -> bool:
    import pyarrow as pa

    if pa.types.is_dictionary(kind):
        kind = kind.value_type
    return bool(pa.types.is_large_string(kind))


def assemble(plan: FilePlan, config: Any) -> None:
    """Join a record file's part files, in order, into its output (atomically)."""
    parts = [Path(u.output) for u in plan.units]
    kind = plan.file.kind
    if kind == "parquet":
        import pyarrow.parquet as pq

        with atomic_path(plan.output) as tmp:
            writer = pq.ParquetWriter(tmp, pq.read_schema(parts[0]))
            try:
                for part in parts:
                    writer.write_table(pq.read_table(part))
            finally:
                writer.close()
        return
    with atomic_path(plan.output) as tmp, tmp.open("wb") as out:
        if kind in ("csv", "tsv"):
            out.write(csv_line(list(plan.columns), kind).encode("utf-8"))
        for part in parts:
            with part.open("rb") as handle:
                while chunk := handle.read(1 << 20):
                    out.write(chunk)


def remove_parts(out_dir: Path, source: str) -> None:
    import shutil

    shutil.rmtree(parts_dir(out_dir, source), ignore_errors=True)


def remove_parts_root(out_dir: Path) -> None:
    """Remove the part-file folder once nothing is left in it."""
    with contextlib.suppress(OSError):
        (out_dir / PARTS_DIR).rmdir()
