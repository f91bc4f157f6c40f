"""Apache Spark: de-identify (or detect identifiers in) a text column of a DataFrame.

:func:`deidentify_column` replaces a text column with its de-identified text (or adds it as a
new column) and adds an error column; :func:`detect_column` adds the detected spans as
``array<struct<start, end, label, score, source>>``. Both run each row through the same
record-level code as ``polydeid batch`` (:func:`polydeid.batch.record.redact_record` and
:func:`~polydeid.batch.record.record_language`), so a row comes out exactly as the batch
runner writes the same record.

How it runs: ``DataFrame.mapInArrow`` hands each Python worker Arrow record batches. Arrow
rather than pandas batches: only the text column is read and rewritten, so every other column
goes through as it came (no pandas round trip turning a nullable integer into a float, nested
types untouched), and ids arrive as Python ``int``/``str`` as the batch runner sees them. The
:class:`~polydeid.api.Deidentifier` is built once per executor Python worker and cached in
this module by its :class:`~polydeid.batch.record.JobConfig` (Spark reuses Python workers
across tasks by default, ``spark.python.worker.reuse``), so the detector models load once per
worker, not once per partition or row.

Rows that fail (no text, an unknown language, a detector's time limit) get null in the text
(or output) column and, in the error column, the error's code, the row's location (``id=…``,
or the partition and row number when there is no id) and the message —
never the text. The original text is never passed through. A configuration error met on a
row (a missing key, a broken policy) fails the job instead, as it stops ``polydeid batch``.

Files on executors: a ``key_file`` or a policy file that does not exist at the given path on
an executor is looked up by its file name among the files shipped with
``spark-submit --files`` (:meth:`pyspark.SparkFiles.get`).

Surrogates across partitions: a policy that makes surrogates needs a ``key_file``
(:class:`ConfigError` otherwise), because the key, not the worker, chooses them: the same
original gets the same surrogate in every partition and matches what ``polydeid batch``
writes with that key. Each worker keeps its own in-memory vault, though, so what a vault
decides by order holds only within one worker: if two different originals draw the same
surrogate (or a surrogate equals an original the worker saw earlier), the later one draws
again, and which one is "later" depends on how rows met in that worker. Then the outputs can
differ from a single batch process, and two workers can give one surrogate to two originals.
A ``vault`` shared by all executors (a ``postgresql://`` URL; SQLite only on a shared file
system) makes the job's surrogates consistent and unique across workers (first claim wins).

pyspark and pyarrow are imported by the functions, never when this module is imported.
"""

from __future__ import annotations

import functools
import os
import sys
import threading
from collections.abc import Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from polydeid.api import BATCH_RECORDS
from polydeid.batch.record import (
    JobConfig,
    build_deidentifier,
    record_language,
    redact_records,
)
from polydeid.core.errors import ConfigError, PolydeidError, UnknownLanguageError
from polydeid.core.segments import Origin, Segment

if TYPE_CHECKING:
    import pyarrow as pa
    from pyspark.sql import DataFrame

    from polydeid.api import Deidentifier
    from polydeid.transform.policy import Policy

__all__ = [
    "SPAN_SCHEMA",
    "deidentify_column",
    "detect_column",
    "worker_import_error",
    "worker_python",
]

#: The Spark SQL type of :func:`detect_column`'s output column.
SPAN_SCHEMA = "array<struct<start:int,end:int,label:string,score:double,source:string>>"

# --- the workers' Python ---------------------------------------------------------------------


def worker_python(master: str | None, configured: str | None) -> str | None:
    """The Python for Spark's workers to start, where the caller should set it: the running
    interpreter (which has polydeid and pyarrow) for a ``local`` master when none is
    ``configured`` (``PYSPARK_PYTHON``); None otherwise (a cluster's executors need their
    own environment, see examples/spark_cluster.py)."""
    if configured or not master or not master.strip().startswith("local"):
        return None
    return sys.executable


def worker_import_error(error: BaseException) -> ConfigError | None:
    """A :class:`ConfigError` that says what to do when ``error`` is Spark reporting that its
    Python workers could not import polydeid or pyarrow (None for any other error)."""
    text = str(error)
    missing = [name for name in ("polydeid", "pyarrow") if f"No module named '{name}'" in text]
    if not missing:
        return None
    return ConfigError(
        f"Spark's Python workers cannot import {' and '.join(missing)}: they run "
        "PYSPARK_PYTHON (spark.pyspark.python), not this interpreter; point it at a Python "
        "with polydeid installed (on a cluster: a packed environment shipped with --archives)"
    )


# --- per-worker cache ------------------------------------------------------------------------

_DEIDENTIFIERS: dict[JobConfig, Deidentifier] = {}
_BUILDS: dict[JobConfig, int] = {}
_LOCK = threading.Lock()


def _deidentifier(config: JobConfig) -> Deidentifier:
    """The de-identifier for ``config`` in this Python process (built on first use)."""
    with _LOCK:
        deid = _DEIDENTIFIERS.get(config)
        if deid is None:
            deid = build_deidentifier(_executor_config(config))
            _DEIDENTIFIERS[config] = deid
            _BUILDS[config] = _BUILDS.get(config, 0) + 1
        return deid


def worker_builds(config: JobConfig) -> int:
    """How many times this process built the de-identifier for ``config`` (0 or 1; for tests
    and diagnostics)."""
    return _BUILDS.get(config, 0)


def _shipped(path: str) -> str:
    """``path`` if it exists here, else the file of that name shipped with ``--files``."""
    if os.path.exists(path):
        return path
    try:
        from pyspark import SparkFiles

        candidate = SparkFiles.get(os.path.basename(path))
    except Exception:  # no SparkContext / SparkFiles root in this process
        return path
    return candidate if os.path.exists(candidate) else path


def _executor_config(config: JobConfig) -> JobConfig:
    changes: dict[str, Any] = {}
    if config.key_file:
        changes["key_file"] = _shipped(config.key_file)
    from polydeid.transform.policy import shipped_policies

    if config.policy not in shipped_policies():
        changes["policy"] = _shipped(config.policy)
    return replace(config, **changes) if changes else config


# --- the public functions --------------------------------------------------------------------


def deidentify_column(
    df: DataFrame,
    config: JobConfig,
    *,
    text_col: str = "text",
    id_col: str | None = "id",
    lang_col: str | None = None,
    patient_col: str | None = None,
    output_col: str | None = None,
    error_col: str = "deid_error",
) -> DataFrame:
    """``df`` with ``text_col`` de-identified and an ``error_col`` (null where the row
    succeeded).

    With ``output_col`` the de-identified text goes to that new column and ``text_col`` is
    kept; otherwise ``text_col`` is replaced. ``id_col`` (None: rows have no id) numbers
    surrogates per document and names failing rows; ``lang_col`` (None: every row is in
    ``config.lang``, which may be ``auto``) and ``patient_col`` (date shifting) are optional.
    A row that fails gets null text and the error's code and message in ``error_col``.
    Raises :class:`ConfigError` at once for a missing or mistyped column.
    """
    from pyspark.sql.types import StringType, StructField, StructType

    _check_columns(df, text_col, id_col, lang_col, patient_col)
    _check_config(config)
    names = df.columns
    target = output_col or text_col
    _check_new(names, error_col, *([output_col] if output_col else []))
    fields = [
        StructField(text_col, StringType(), True) if f.name == text_col and not output_col else f
        for f in df.schema.fields
    ]
    if output_col:
        fields.append(StructField(output_col, StringType(), True))
    fields.append(StructField(error_col, StringType(), True))
    job = _Job(config, text_col, id_col, lang_col, patient_col, target, error_col)
    return df.mapInArrow(functools.partial(_redact_batches, job), StructType(fields))


def detect_column(
    df: DataFrame,
    config: JobConfig,
    *,
    text_col: str = "text",
    id_col: str | None = "id",
    lang_col: str | None = None,
    output_col: str = "spans",
    error_col: str = "deid_error",
) -> DataFrame:
    """``df`` with ``output_col`` (:data:`SPAN_SCHEMA`: the resolved spans of ``text_col``,
    as :meth:`polydeid.api.Deidentifier.detect` finds them) and ``error_col``.

    The text column is kept as it is. Languages are resolved as :func:`deidentify_column`
    does; a row that fails gets null spans and the error in ``error_col``.
    """
    from pyspark.sql.types import StringType, StructField, StructType, _parse_datatype_string

    _check_columns(df, text_col, id_col, lang_col, None)
    _check_config(config)
    _check_new(df.columns, output_col, error_col)
    fields = [
        *df.schema.fields,
        StructField(output_col, _parse_datatype_string(SPAN_SCHEMA), True),
        StructField(error_col, StringType(), True),
    ]
    job = _Job(config, text_col, id_col, lang_col, None, output_col, error_col)
    return df.mapInArrow(functools.partial(_detect_batches, job), StructType(fields))


# --- driver-side checks ----------------------------------------------------------------------


def _check_columns(
    df: DataFrame,
    text_col: str,
    id_col: str | None,
    lang_col: str | None,
    patient_col: str | None,
) -> None:
    from pyspark.sql.types import (
        ByteType,
        IntegerType,
        LongType,
        ShortType,
        StringType,
    )

    types = {f.name: f.dataType for f in df.schema.fields}
    if len(types) != len(df.columns):
        raise ConfigError("the DataFrame has duplicate column names")
    wanted: list[tuple[str, str | None, tuple[type, ...]]] = [
        ("text", text_col, (StringType,)),
        ("id", id_col, (StringType, LongType, IntegerType, ShortType, ByteType)),
        ("language", lang_col, (StringType,)),
        ("patient", patient_col, ()),
    ]
    for role, name, allowed in wanted:
        if name is None:
            continue
        if name not in types:
            raise ConfigError(f"the DataFrame has no {role} column {name!r}")
        if allowed and not isinstance(types[name], allowed):
            kinds = "a string" if allowed == (StringType,) else "a string or integer"
            raise ConfigError(
                f"the {role} column {name!r} must be {kinds} column, "
                f"not {types[name].simpleString()}"
            )


def _check_new(existing: list[str], *names: str) -> None:
    if len(set(names)) != len(names):
        raise ConfigError("the output and error columns must have different names")
    for name in names:
        if not name:
            raise ConfigError("an output column needs a name")
        if name in existing:
            raise ConfigError(f"the DataFrame already has a column {name!r}")


def _check_config(config: JobConfig) -> None:
    from polydeid.locales import canonical_language

    if not isinstance(config, JobConfig):
        raise ConfigError("config must be a polydeid.batch.record.JobConfig")
    if config.lang.strip().lower() != "auto":
        canonical_language(config.lang)
    if config.key_file:
        return
    policy = _driver_policy(config.policy)
    if policy is None:
        return
    if any(spec.name == "surrogate" for spec in policy.specs()):
        # Without a key each Python worker makes an ephemeral one: the same original would
        # get different surrogates in different partitions of one job.
        raise ConfigError(
            f"policy {policy.name!r} makes surrogates: Spark jobs need a key_file so that "
            "every executor chooses the same surrogates"
        )
    if policy.needs_key:
        raise ConfigError(f"policy {policy.name!r} needs a key_file (hash, encrypt, dateshift)")


def _driver_policy(policy: str) -> Policy | None:
    """The policy, where the driver can read it (a file shipped only to executors: None)."""
    from polydeid.transform.policy import load_policy, shipped_policies

    if policy not in shipped_policies() and not os.path.isfile(_shipped(policy)):
        return None
    return load_policy(policy if policy in shipped_policies() else _shipped(policy))


# --- executor side ---------------------------------------------------------------------------


class _Job:
    """What the executors need (picklable); ``record`` names the fields as the columns."""

    __slots__ = ("config", "error_col", "id_col", "lang_col", "patient_col", "record",
                 "target", "text_col")  # fmt: skip

    def __init__(
        self,
        config: JobConfig,
        text_col: str,
        id_col: str | None,
        lang_col: str | None,
        patient_col: str | None,
        target: str,
        error_col: str,
    ) -> None:
        self.config = config
        self.text_col = text_col
        self.id_col = id_col
        self.lang_col = lang_col
        self.patient_col = patient_col
        self.target = target
        self.error_col = error_col
        # Field names as the DataFrame's columns, so messages name the real column; a role
        # without a column gets a name no column has (records never hold it).
        self.record = replace(
            config,
            text_field=text_col,
            id_field=id_col or "\x00id",
            lang_field=lang_col or "\x00lang",
            patient_field=patient_col or "\x00patient",
            keep=(),
        )

    def __getstate__(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__slots__}

    def __setstate__(self, state: dict[str, Any]) -> None:
        for name, value in state.items():
            setattr(self, name, value)

    def rows(self, batch: pa.RecordBatch, first: int) -> Iterator[tuple[dict[str, Any], str]]:
        """Each row as a batch-runner record (only the named columns) and its location."""
        columns = {
            self.record.text_field: self.text_col,
            self.record.id_field: self.id_col,
            self.record.lang_field: self.lang_col,
            self.record.patient_field: self.patient_col,
        }
        values = {field: batch.column(name).to_pylist() for field, name in columns.items() if name}
        ids = values.get(self.record.id_field)
        partition = _partition()
        for row in range(batch.num_rows):
            record = {field: column[row] for field, column in values.items()}
            record_id = None if ids is None else ids[row]
            if record_id is not None and isinstance(record_id, str | int):
                location = f"{self.id_col}={record_id}"
            else:
                location = f"partition {partition} row {first + row}"
            yield record, location


def _partition() -> int | str:
    from pyspark import TaskContext

    context = TaskContext.get()
    return "?" if context is None else context.partitionId()


def _message(error: Exception, location: str) -> str:
    """The error column's value: code, location and message — never the text.

    A configuration error (a missing key, a broken policy) would fail every row: it is
    raised, failing the job, as it stops ``polydeid batch``; a row's unknown language is not
    one (:func:`~polydeid.batch.record.record_language` makes it a record error)."""
    if isinstance(error, ConfigError) and not isinstance(error, UnknownLanguageError):
        raise error
    if isinstance(error, PolydeidError):
        if not error.location:
            error.at(location)
        return str(error)
    # Not one of ours: its message might quote the input, so only its type is kept.
    return f"[{PolydeidError.code}] {location}: unexpected {type(error).__name__}"


def _output(
    batch: pa.RecordBatch, job: _Job, values: pa.Array, errors: list[str | None]
) -> pa.RecordBatch:
    import pyarrow as pa

    text_type = batch.schema.field(job.text_col).type
    names = list(batch.schema.names)
    arrays = list(batch.columns)
    if job.target in names:
        arrays[names.index(job.target)] = values
    else:
        names.append(job.target)
        arrays.append(values)
    names.append(job.error_col)
    arrays.append(pa.array(errors, type=text_type))
    return pa.RecordBatch.from_arrays(arrays, names=names)


def _redact_batches(job: _Job, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    import pyarrow as pa

    deid = _deidentifier(job.config)
    seen = 0
    for batch in batches:
        texts: list[str | None] = []
        errors: list[str | None] = []
        rows = list(job.rows(batch, seen))
        for k in range(0, len(rows), BATCH_RECORDS):  # detected together (redact_records)
            group = rows[k : k + BATCH_RECORDS]
            for (_, location), got in zip(
                group, redact_records(deid, group, job.record), strict=True
            ):
                if isinstance(got, Exception):
                    texts.append(None)
                    errors.append(_message(got, location))
                else:
                    texts.append(got[0][job.record.text_field])
                    errors.append(None)
        seen += batch.num_rows
        values = pa.array(texts, type=batch.schema.field(job.text_col).type)
        yield _output(batch, job, values, errors)


def _detect_batches(job: _Job, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    import pyarrow as pa

    span_type = pa.list_(
        pa.struct(
            [
                ("start", pa.int32()),
                ("end", pa.int32()),
                ("label", pa.string()),
                ("score", pa.float64()),
                ("source", pa.string()),
            ]
        )
    )
    deid = _deidentifier(job.config)
    config = job.record
    seen = 0
    for batch in batches:
        spans: list[list[dict[str, Any]] | None] = []
        errors: list[str | None] = []
        rows = list(job.rows(batch, seen))
        for k in range(0, len(rows), BATCH_RECORDS):  # detected together
            group = rows[k : k + BATCH_RECORDS]
            for (_, location), got in zip(group, _detect_records(deid, group, config), strict=True):
                if isinstance(got, Exception):
                    spans.append(None)
                    errors.append(_message(got, location))
                else:
                    spans.append(got)
                    errors.append(None)
        seen += batch.num_rows
        yield _output(batch, job, pa.array(spans, type=span_type), errors)


def _detect_records(
    deid: Deidentifier, rows: list[tuple[dict[str, Any], str]], config: JobConfig
) -> list[list[dict[str, Any]] | Exception]:
    """Each row's spans (as the output column holds them) or the exception its record
    raised; the rows detected together (:meth:`Deidentifier.detect_together`)."""
    segments: list[Segment | Exception] = []
    for record, location in rows:
        try:
            segments.append(_detect_segment(record, config, location))
        except Exception as exc:
            segments.append(exc)
    found = deid.detect_together([s for s in segments if isinstance(s, Segment)])
    together = iter(found) if found is not None else None
    out: list[list[dict[str, Any]] | Exception] = []
    for segment in segments:
        if not isinstance(segment, Segment):
            out.append(segment)
            continue
        try:
            spans = next(together) if together is not None else deid.detect_segment(segment)
        except Exception as exc:
            out.append(exc)
            continue
        out.append(
            [
                {
                    "start": s.start,
                    "end": s.end,
                    "label": s.label.value,
                    "score": s.score,
                    "source": s.source,
                }
                for s in spans
            ]
        )
    return out


def _detect_segment(record: dict[str, Any], config: JobConfig, location: str) -> Segment:
    text = record.get(config.text_field)
    if not isinstance(text, str):
        from polydeid.core.errors import RecordError

        raise RecordError(f"a record needs a string field {config.text_field!r}", location=location)
    lang = record_language(record, config, location)
    return Segment(text, lang=lang, origin=Origin(path=location), countries=config.countries)
