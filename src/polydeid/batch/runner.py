"""The batch runner: many files and records, several processes, progress, resume, quarantine.

:func:`run_batch` finds the input files (:mod:`polydeid.batch.sources`), cuts them into units,
skips the units the manifest (:mod:`polydeid.batch.manifest`) records as done, and hands the
rest to worker processes (``spawn``; each builds its de-identifier once, in an initializer).
A worker reads its unit, de-identifies its records in order
(:func:`polydeid.batch.record.prepare_record`, then
:func:`~polydeid.batch.record.finish_record`; structured documents whole, with the document
engine) and writes the unit's part file atomically; the main process then records the unit as
done. The records of a unit's first try are detected together,
:data:`~polydeid.api.BATCH_RECORDS` at a time (the tagger's windows share its
batches); a retry's each by itself, so that a failure is charged to its own record. When every
unit of a file is done its parts are joined, in order, into the
output. A re-run with the same arguments after a kill does exactly the units not yet done.

Records that cannot be read or de-identified go to ``OUT/quarantine.jsonl`` (where and why,
never what) and the run goes on. A unit that fails on one of its records (an error that is not
the record's own kind, or the death of its worker) is tried once more in the same run, after
the other units, in a fresh worker where the failure may have been the worker's; when the same
record fails it the same way again, the record is quarantined and the unit done again without
it, still in that run; a retry that succeeds quarantines nothing. A record gets at most one
such retry per run, so a unit is done at most 1 + 2 × (its failing records) times. The count of
failures in a row is kept in the manifest: a record that failed once before a run was killed
is recognised by the next run. A fault that fails several units in one run (a vault that is
down) is no record's own: its units are left for a re-run. Workers end when the main process
dies (:func:`exit_with_parent`). Progress, messages and the summary (``OUT/summary.json``)
carry counts, categories and error codes only.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Executor, Future, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field, fields, replace
from itertools import islice
from pathlib import Path
from typing import Any, TextIO

from polydeid.api import BATCH_RECORDS
from polydeid.batch.manifest import Manifest, UnitCounts
from polydeid.batch.record import (
    JobConfig,
    PreparedRecord,
    build_deidentifier,
    finish_record,
    prepare_record,
)
from polydeid.batch.sources import (
    MANIFEST_NAME,
    PARTS_DIR,
    POSITION_KEY,
    QUARANTINE_NAME,
    RECORD_KINDS,
    SUMMARY_NAME,
    FilePlan,
    InputFile,
    Unit,
    UnitWriter,
    assemble,
    discover,
    iter_unit,
    plan_file,
    record_location,
    remove_parts,
    remove_parts_root,
    sweep_temporaries,
    write_atomic,
)
from polydeid.cli import check_output, output_error
from polydeid.core.collector import freeze_loaded
from polydeid.core.errors import (
    ChatEndpointError,
    ConfigError,
    DetectorUnavailableError,
    InputError,
    PolydeidError,
    RuleTimeoutError,
    UnknownLanguageError,
)
from polydeid.core.spans import Span
from polydeid.detect.tagger.precision import device_environment, resolve_device

#: Records per unit of work unless asked otherwise (the granularity of resuming).
DEFAULT_CHUNK_SIZE = 1000
#: Bytes of input after which a unit of records ends unless asked otherwise: a file of
#: long notes is cut into units small enough to keep every worker busy.
DEFAULT_CHUNK_BYTES = 64 * 1024
#: Seconds between plain progress lines.
DEFAULT_PROGRESS_INTERVAL = 10.0
#: Seconds between plain progress lines while no unit finishes.
_HEARTBEAT = 60.0


def default_workers() -> int:
    return max(1, min(4, os.cpu_count() or 1))


@dataclass(frozen=True, slots=True)
class BatchOptions:
    """How to run (not what to do to a record: that is the :class:`JobConfig`)."""

    input: str
    output: str
    workers: int = field(default_factory=default_workers)
    chunk_size: int = DEFAULT_CHUNK_SIZE
    chunk_bytes: int = DEFAULT_CHUNK_BYTES
    format: str = "auto"
    #: a progress bar when the stream is a terminal (else, or when False, plain lines)
    progress: bool = True
    progress_interval: float = DEFAULT_PROGRESS_INTERVAL
    #: where the tagger runs (``cpu``, ``cuda``, ``auto``; None: ``POLYDEID_TAGGER_DEVICE``,
    #: else the CPU): every worker loads it there
    device: str | None = None


@dataclass(slots=True)
class BatchResult:
    exit_code: int
    summary: dict[str, Any]


# --- fingerprints -------------------------------------------------------------------------


def _file_digest(path: str) -> str:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return "unreadable"


def config_fingerprint(config: JobConfig, options: BatchOptions) -> str:
    """A hash of everything that decides the output: the job's settings (the key and a policy
    file by content), the input location, the format and the chunk sizes. Only the hash is
    stored."""
    from polydeid.transform.policy import shipped_policies

    settings: dict[str, Any] = {f.name: getattr(config, f.name) for f in fields(config)}
    if config.key_file:
        settings["key_file"] = _file_digest(config.key_file)
    if config.policy not in shipped_policies():
        settings["policy"] = [config.policy, _file_digest(config.policy)]
    settings["input"] = str(Path(options.input).resolve())
    settings["format"] = options.format
    settings["chunk_size"] = options.chunk_size
    settings["chunk_bytes"] = options.chunk_bytes
    if options.device not in (None, "cpu"):  # a GPU's numbers may differ in the last bits
        settings["device"] = options.device
    blob = json.dumps(settings, sort_keys=True, default=list).encode("utf-8")
    return hashlib.sha256(b"polydeid-batch/1\0" + blob).hexdigest()


def file_fingerprint(f: InputFile, config_hash: str) -> str:
    blob = f"{f.size}:{f.mtime_ns}:{config_hash}".encode()
    return hashlib.sha256(blob).hexdigest()[:32]


# --- the worker side ----------------------------------------------------------------------

#: The worker's job and de-identifier, built once per process by :func:`init_worker`.
_STATE: dict[str, Any] = {}


@dataclass(frozen=True, slots=True)
class UnitOutcome:
    """What a worker reports for a unit: its counts, or why it failed. Plain data (an
    exception is not sent between processes: some do not survive pickling)."""

    source: str
    index: int
    counts: UnitCounts | None = None
    #: (code, message) of an error that stops the run (configuration)
    fatal: tuple[str, str] | None = None
    #: (code, message) of an error that failed this unit (tried again in this run, or left for
    #: a re-run)
    failed: tuple[str, str] | None = None
    #: the record that ``failed`` the unit, where known, and how (code and exception type;
    #: None for a fault of the surroundings: I/O, a detector or endpoint that is down)
    position: int | None = None
    signature: str | None = None


#: Records of a unit to quarantine without de-identifying them: position → (code, message).
Skips = dict[int, tuple[str, str]]


def _message(exc: PolydeidError) -> str:
    return str(exc).removeprefix(f"[{exc.code}] ")


#: Seconds between two looks of a worker's watchdog at its parent.
_PARENT_CHECK = 1.0


def exit_with_parent(parent: int) -> None:
    """End this process when ``parent`` (the process that started it) dies, even by SIGKILL:
    on Linux the kernel sends SIGKILL (``prctl(PR_SET_PDEATHSIG)``); everywhere a daemon
    thread checks every :data:`_PARENT_CHECK` seconds that the parent is still this
    process's parent and exits at once when it is not."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes
            import signal

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # 1: PR_SET_PDEATHSIG
        except (OSError, AttributeError):  # pragma: no cover - no prctl: the watchdog only
            pass
    if os.getppid() != parent:  # it died before the signal was asked for
        os._exit(1)

    def watch() -> None:
        while True:
            time.sleep(_PARENT_CHECK)
            if os.getppid() != parent:
                os._exit(1)

    import threading

    threading.Thread(target=watch, name="polydeid-parent-watch", daemon=True).start()


def init_worker(
    config: JobConfig,
    threads: int | None = None,
    parent: int | None = None,
    in_hand: str | None = None,
    device: str | None = None,
) -> None:
    """Build this process's de-identifier (once); a failure is reported by every unit.

    ``threads``: math threads for this worker (the tagger's torch), so that workers share the
    cores instead of each starting one thread per core (measured in benchmarks/batch.py).
    ``parent``: the pid of the run's main process; the worker ends when it dies
    (:func:`exit_with_parent`). ``in_hand``: a folder where the worker keeps, in a file named
    by its pid, the record it is working on (so that a record that kills its worker can be
    named). ``device``: where its tagger runs (:class:`BatchOptions`). A pool's worker
    (``parent`` given) freezes what it has loaded (:func:`~polydeid.core.collector.
    freeze_loaded`); built inline, the caller's process is left as it is."""
    if parent is not None:
        exit_with_parent(parent)
    if threads is not None:
        os.environ["OMP_NUM_THREADS"] = str(threads)
        torch = sys.modules.get("torch")
        if torch is not None:
            torch.set_num_threads(threads)
    _STATE.clear()
    _STATE["config"] = config
    if in_hand is not None:
        path = Path(in_hand) / str(os.getpid())
        _STATE["in_hand"] = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with device_environment(device):
            _STATE["deid"] = build_deidentifier(config)
        if parent is not None:  # a pool's own process (inline, the caller's process is its own)
            freeze_loaded()
    except PolydeidError as exc:
        _STATE["error"] = (exc.code, _message(exc))
    except Exception as exc:
        _STATE["error"] = ("PD000", f"the de-identifier could not be built ({type(exc).__name__})")


class _Fatal(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(code)
        self.code, self.message = code, message


def _is_fatal(exc: PolydeidError) -> bool:
    """A configuration error met while de-identifying a record (a missing key, a broken
    policy) would fail every record: it stops the run. A record's unknown language does not."""
    return isinstance(exc, ConfigError) and not isinstance(exc, UnknownLanguageError)


#: Failures of a unit that are the surroundings' (not one record's): never counted against a
#: record, never tried again in the run: the unit is left for a re-run.
_ENVIRONMENT_FAULTS = (DetectorUnavailableError, ChatEndpointError)


def run_unit(unit: Unit, skips: Skips | None = None, alone: bool = False) -> UnitOutcome:
    """Process one unit in this worker (entry point of the process pool); the records at
    ``skips`` are quarantined with their reason instead of being de-identified. ``alone``:
    each record detected by itself (a unit's retry), not in groups."""
    if "error" in _STATE:
        return UnitOutcome(unit.source, unit.index, fatal=_STATE["error"])
    at: list[int] = []  # the position of the record in hand
    skips = skips or {}
    try:
        if unit.kind == "document":
            counts = _run_document(unit, skips, at)
        else:
            counts = _run_records(unit, skips, at, alone)
    except _Fatal as exc:
        return UnitOutcome(unit.source, unit.index, fatal=(exc.code, exc.message))
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        failed = (InputError.code, f"I/O error ({reason})")
        return UnitOutcome(unit.source, unit.index, failed=failed)
    except Exception as exc:
        if isinstance(exc, PolydeidError):
            failed = (exc.code, _message(exc))
            code = exc.code
        else:
            failed = ("PD000", f"unexpected {type(exc).__name__}")
            code = "PD000"
        own = at and not isinstance(exc, _ENVIRONMENT_FAULTS)
        return UnitOutcome(
            unit.source,
            unit.index,
            failed=failed,
            position=at[-1] if own else None,
            signature=f"{code}:{type(exc).__name__}" if own else None,
        )
    finally:
        _release()
    return UnitOutcome(unit.source, unit.index, counts=counts)


_TWICE = "failed twice the same way"
#: How a record that its worker died under failed its unit.
_WORKER_DIED = "PD000:WorkerDied"
#: The position an in-hand file names while a group of records is detected together.
_GROUP = -1


def _hold(unit: Unit, position: int) -> None:
    """Note in this worker's in-hand file (where there is one) the record it starts on."""
    fd = _STATE.get("in_hand")
    if fd is None:
        return
    data = json.dumps([unit.source, unit.index, position]).encode("utf-8")
    os.pwrite(fd, data, 0)
    os.ftruncate(fd, len(data))


def _release() -> None:
    """Empty this worker's in-hand file: no record in hand."""
    fd = _STATE.get("in_hand")
    if fd is not None:
        os.ftruncate(fd, 0)


def _quarantine(counts: UnitCounts, unit: Unit, position: int, code: str, message: str) -> None:
    counts.errors[code] += 1
    counts.quarantine.append(
        {
            "source": unit.source,
            POSITION_KEY[unit.kind]: position,
            "reason": {"code": code, "message": message},
        }
    )


def _record_failure(
    counts: UnitCounts, unit: Unit, position: int, exc: Exception, location: str
) -> None:
    """Quarantine a record that cannot be read or de-identified; re-raise what is not the
    record's fault: a configuration error stops the run, a failing vault or detector (and
    any I/O error) fails the unit (:func:`_isolate` says whether it is tried again)."""
    if isinstance(exc, PolydeidError):
        if _is_fatal(exc):
            raise _Fatal(exc.code, _message(exc))
        if not isinstance(exc, _RECORD_FAULTS):
            raise exc
        if exc.location is None:
            exc.at(location)
        _quarantine(counts, unit, position, exc.code, _message(exc))
    elif isinstance(exc, OSError | sqlite3.Error):
        raise exc
    else:  # a fault on one record; its type only (an exception's text may quote the input)
        _quarantine(counts, unit, position, "PD000", f"{location}: unexpected {type(exc).__name__}")


#: Errors that are a record's own: it is quarantined and the run goes on.
_RECORD_FAULTS = (InputError, RuleTimeoutError)


def _run_records(unit: Unit, skips: Skips, at: list[int], alone: bool) -> UnitCounts:
    """The unit's records, in order: read, de-identified, written. Unless ``alone``, the
    records are detected together, :data:`~polydeid.api.BATCH_RECORDS` at a time
    (:meth:`Deidentifier.detect_many`); where a group fails, each of its records is detected
    by itself, so that an error is the record's own."""
    config: JobConfig = _STATE["config"]
    deid = _STATE["deid"]
    counts = UnitCounts()
    writer = UnitWriter(unit, config)
    items = iter(iter_unit(unit, config))
    while group := list(islice(items, 1 if alone else BATCH_RECORDS)):
        ready: list[PreparedRecord | Exception | None] = []
        for item in group:
            location = record_location(unit, item.position)
            if item.position in skips or item.error is not None or item.record is None:
                ready.append(None)
                continue
            _hold(unit, item.position)
            try:
                ready.append(prepare_record(item.record, config, location=location))
            except Exception as exc:
                ready.append(exc)
        found = _detected_together(deid, unit, group, ready)
        for item, prepared in zip(group, ready, strict=True):
            counts.records += 1
            at[:] = [item.position]
            _hold(unit, item.position)
            location = record_location(unit, item.position)
            if item.position in skips:
                code, message = skips[item.position]
                _quarantine(counts, unit, item.position, code, f"{message} ({_TWICE})")
                continue
            if item.error is not None or item.record is None:
                error = item.error or InputError("unreadable record")
                _record_failure(counts, unit, item.position, error, location)
                continue
            try:
                if not isinstance(prepared, PreparedRecord):
                    raise prepared or InputError("unreadable record")
                spans = found.get(item.position)
                out, labels = finish_record(deid, prepared, spans)
            except Exception as exc:
                _record_failure(counts, unit, item.position, exc, location)
                continue
            counts.written += 1
            counts.spans.update(labels)
            writer.add(out)
    at.clear()
    writer.commit()
    return counts


def _detected_together(
    deid: Any, unit: Unit, group: list[Any], ready: list[PreparedRecord | Exception | None]
) -> dict[int, tuple[Span, ...]]:
    """The spans of the group's prepared records detected together
    (:meth:`Deidentifier.detect_together`), by position; none where they are detected one
    by one. While they are detected the worker's in-hand file names no record
    (:data:`_GROUP`): a death then is no single record's."""
    records = [
        (item.position, prepared)
        for item, prepared in zip(group, ready, strict=True)
        if isinstance(prepared, PreparedRecord)
    ]
    if len(records) < 2:
        return {}
    _hold(unit, _GROUP)
    found = deid.detect_together([prepared.segment for _, prepared in records])
    if found is None:
        return {}
    return {position: spans for (position, _), spans in zip(records, found, strict=True)}


def _run_document(unit: Unit, skips: Skips, at: list[int]) -> UnitCounts:
    from polydeid.engine import read_document
    from polydeid.formats.base import sample_text
    from polydeid.formats.registry import encode_document
    from polydeid.locales import canonical_language

    config: JobConfig = _STATE["config"]
    deid = _STATE["deid"]
    counts = UnitCounts(records=1)
    target = Path(unit.output)
    if 1 in skips:
        code, message = skips[1]
        _quarantine(counts, unit, 1, code, f"{message} ({_TWICE})")
        target.unlink(missing_ok=True)
        return counts
    data = Path(unit.path).read_bytes()
    at.append(1)
    _hold(unit, 1)
    try:
        doc = read_document(data, unit.fmt, source=unit.source)
        if config.lang.strip().lower() == "auto":
            from polydeid.detect.langid import resolve_language

            lang = resolve_language(sample_text(doc), location=unit.source)
        else:
            lang = canonical_language(config.lang)
        result = deid.processor().redact(
            doc, lang=lang, countries=config.countries, source=unit.source
        )
        out = encode_document(result.text, doc)
    except Exception as exc:
        _record_failure(counts, unit, 1, exc, unit.source)
        target.unlink(missing_ok=True)  # no output left over from an earlier version
        return counts
    at.clear()
    write_atomic(target, out)
    counts.written = 1
    counts.spans.update(result.labels)
    return counts


# --- executors ----------------------------------------------------------------------------


class _InlineExecutor(Executor):
    """One worker: units run in this process, one at a time (same code, no pickling)."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except BaseException as exc:
            future.set_exception(exc)
            if not isinstance(exc, Exception):
                raise
        return future


def _pool(workers: int, config: JobConfig, in_hand: Path, device: str | None) -> Executor:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    threads = max(1, (os.cpu_count() or 1) // workers)
    return ProcessPoolExecutor(
        max_workers=workers,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=init_worker,
        initargs=(config, threads, os.getpid(), str(in_hand), device),
    )


def _in_hand_dir(out_dir: Path) -> Path:
    return out_dir / PARTS_DIR / ".in-hand"


#: How a worker ends when the pool, broken by another worker's death, terminates it.
_TERMINATED = -15


def _start_executor(job: _Job, workers: int) -> Executor:
    """This process for one worker (its de-identifier built here, afresh), else a fresh pool of
    ``workers`` spawned processes with an empty in-hand folder."""
    if workers == 1:
        init_worker(job.config, device=job.options.device)
        if "error" in _STATE:
            code, message = _STATE.pop("error")
            raise ConfigError(f"the de-identifier could not be built: [{code}] {message}")
        return _InlineExecutor()
    in_hand = _in_hand_dir(job.out_dir)
    shutil.rmtree(in_hand, ignore_errors=True)
    in_hand.mkdir(parents=True)
    return _pool(workers, job.config, in_hand, job.options.device)


def _stop_executor(executor: Executor) -> None:
    if isinstance(executor, _InlineExecutor):
        _STATE.clear()
    else:
        executor.shutdown(wait=True, cancel_futures=True)


def _crashed_records(job: _Job, workers: dict[int, Any]) -> dict[tuple[str, int], int]:
    """After a worker died: the record (unit → position) that each worker not ended by the pool
    had in hand (:func:`_hold`)."""
    folder = _in_hand_dir(job.out_dir)
    crashed: dict[tuple[str, int], int] = {}
    for pid, process in workers.items():
        code = getattr(process, "exitcode", None)
        if code is None or code == _TERMINATED:
            continue
        try:
            source, index, position = json.loads((folder / str(pid)).read_text("utf-8"))
        except (OSError, ValueError):
            continue
        crashed[(source, index)] = position
    return crashed


def _replace_broken(
    job: _Job,
    executor: Executor,
    inflight: dict[Future[UnitOutcome], Unit],
    order: dict[tuple[str, int], int],
    progress: PlainProgress | RichProgress,
    workers: int,
) -> Executor | None:
    """A worker died and broke the pool: take the results that came back, charge the record
    each dead worker had in hand with its unit's failure (``PD000:WorkerDied``, see
    :func:`_isolate`), submit the other lost units again, and return a fresh pool. None when
    no lost unit can be charged (the death is no record's): the run stops there."""
    processes = dict(getattr(executor, "_processes", None) or {})
    executor.shutdown(wait=True, cancel_futures=True)
    crashed = _crashed_records(job, processes)
    lost: list[Unit] = []
    for future, unit in sorted(inflight.items(), key=lambda item: order[_key(item[1])]):
        if future.done() and not future.cancelled() and future.exception() is None:
            _take(job, unit, future.result(), progress)
        else:
            lost.append(unit)
    inflight.clear()
    if not any(_key(unit) in crashed for unit in lost):
        return None
    for unit in lost:
        position = crashed.get(_key(unit))
        if position is None or position == _GROUP:
            # its worker was ended by the pool, or died detecting a group of records: no
            # record is charged; the unit comes back with each record by itself
            if position == _GROUP:
                job.say(
                    f"{unit.location}: its worker process died detecting records together: "
                    "trying the unit once more, record by record"
                )
            job.again.append(unit)
            continue
        failed = ("PD000", "its worker process died")
        outcome = UnitOutcome(
            unit.source, unit.index, failed=failed, position=position, signature=_WORKER_DIED
        )
        _take(job, unit, outcome, progress)
    return _start_executor(job, workers)


# --- progress -----------------------------------------------------------------------------


def _duration(seconds: float) -> str:
    seconds = max(0, round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    if minutes:
        return f"{minutes}m{secs:02d}s"
    return f"{secs}s"


class PlainProgress:
    """Progress as a plain line every ``interval`` seconds: records done of all, percentage,
    rate and ETA (counts only)."""

    def __init__(self, stream: TextIO, interval: float) -> None:
        self.stream = stream
        self.interval = interval
        self.total = self.done = self.processed = 0
        self.shown = -1
        self.started = self.last = time.monotonic()

    def start(self, total: int, done: int) -> None:
        self.total, self.done, self.shown = total, done, done
        self.started = self.last = time.monotonic()

    def advance(self, records: int) -> None:
        self.done += records
        self.processed += records
        self.tick()

    def tick(self) -> None:
        """A line when ``interval`` has passed and records were done since the last one (or,
        while nothing finishes, once a minute)."""
        now = time.monotonic()
        since = now - self.last
        if since >= self.interval and (self.done != self.shown or since >= _HEARTBEAT):
            self.last, self.shown = now, self.done
            self.stream.write(self.line(now) + "\n")
            self.stream.flush()

    def line(self, now: float | None = None) -> str:
        elapsed = (now or time.monotonic()) - self.started
        rate = self.processed / elapsed if elapsed > 0 else 0.0
        left = max(0, self.total - self.done)
        eta = _duration(left / rate) if rate > 0 else "?"
        pct = 100.0 * self.done / self.total if self.total else 100.0
        return (
            f"polydeid: batch: {self.done}/{self.total} records ({pct:.0f}%), "
            f"{rate:.1f} records/s, ETA {eta}"
        )

    def close(self) -> None:
        return None


class RichProgress:
    """A progress bar (rich): records done of all, rate, elapsed time and ETA."""

    def __init__(self, stream: TextIO) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            ProgressColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )
        from rich.text import Text

        class RateColumn(ProgressColumn):
            def render(self, task: Any) -> Text:
                speed = task.finished_speed or task.speed
                return Text("? records/s" if speed is None else f"{speed:.1f} records/s")

        self.progress = Progress(
            TextColumn("polydeid batch"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("records"),
            RateColumn(),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=Console(file=stream),
        )
        self.task: Any = None

    def start(self, total: int, done: int) -> None:
        self.progress.start()
        self.task = self.progress.add_task("batch", total=total, completed=done)

    def advance(self, records: int) -> None:
        self.progress.advance(self.task, records)

    def tick(self) -> None:
        return None

    def close(self) -> None:
        self.progress.stop()


def make_progress(stream: TextIO, enabled: bool, interval: float) -> PlainProgress | RichProgress:
    isatty = getattr(stream, "isatty", None)
    if enabled and isatty is not None and isatty():
        return RichProgress(stream)
    return PlainProgress(stream, interval)


# --- the main side ------------------------------------------------------------------------


def validate_config(config: JobConfig) -> None:
    """Check the settings before any work (a :class:`ConfigError` names what is wrong)."""
    from polydeid.detect.registry import PROFILES
    from polydeid.locales import canonical_country, canonical_language
    from polydeid.transform.policy import load_policy

    if config.profile not in PROFILES:
        raise ConfigError(
            f"unknown profile {config.profile!r}; known: {', '.join(sorted(PROFILES))}"
        )
    policy = load_policy(config.policy)
    key = None
    if config.key_file:
        from polydeid.transform.crypto import load_key

        key = load_key(config.key_file)
    vault = None
    if config.vault:
        from polydeid.transform.vault import open_vault

        vault = open_vault(config.vault)
    try:  # a keyed operator needs a key, and the key must be the vault's, before any output
        from polydeid.transform.redactor import Redactor

        Redactor(policy, key=key, vault=vault)
    finally:
        if vault is not None:
            vault.close()
    if config.lang.strip().lower() == "auto":
        from polydeid.detect.langid import default_identifier

        default_identifier()
    else:
        canonical_language(config.lang)
    for country in config.countries:
        canonical_country(country)


class _Lock:
    """One run at a time per output folder."""

    def __init__(self, out_dir: Path) -> None:
        self.handle = (out_dir / ".polydeid-lock").open("a")
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX
            return
        try:
            fcntl.flock(self.handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self.handle.close()
            raise ConfigError(
                "another batch run is writing this output folder", location=str(out_dir)
            ) from None

    def release(self) -> None:
        self.handle.close()


@dataclass(frozen=True, slots=True)
class _Again:
    """A unit that failed on a record and comes back in this run: once more (``quarantine``
    False), or without that record, which failed it twice the same way."""

    unit: Unit
    signature: str
    quarantine: bool


@dataclass(slots=True)
class _Job:
    """The state of one run, on the main side."""

    options: BatchOptions
    config: JobConfig
    out_dir: Path
    manifest: Manifest
    stream: TextIO
    files: list[InputFile] = field(default_factory=list)
    plans: dict[str, FilePlan] = field(default_factory=dict)
    pending: list[Unit] = field(default_factory=list)
    remaining: Counter[str] = field(default_factory=Counter)
    total_units: int = 0
    total_records: int = 0
    done_units: int = 0
    done_records: int = 0
    done_before: int = 0
    changed: int = 0
    processed_units: int = 0
    processed_records: int = 0
    failed_units: int = 0
    #: units to submit (again) in this run, before the rest of the queue
    again: list[Unit] = field(default_factory=list)
    #: failed units that come back after the last unit (see :func:`_isolate`)
    later: list[_Again] = field(default_factory=list)
    #: records (source, unit, position) that had their one retry of this run
    retried: set[tuple[str, int, int]] = field(default_factory=set)
    #: units submitted in this run: submitted again, each of their records is detected alone
    submitted: set[tuple[str, int]] = field(default_factory=set)
    #: per way of failing (code and exception type), the units it failed in this run
    failing: defaultdict[str, set[tuple[str, int]]] = field(
        default_factory=lambda: defaultdict(set)
    )

    def say(self, line: str) -> None:
        self.stream.write(f"polydeid: batch: {line}\n")
        self.stream.flush()


def _prepare(job: _Job, config_hash: str) -> None:
    """Plan every file; record file-level failures; list the units still to do."""
    manifest = job.manifest
    for f in job.files:
        fingerprint = file_fingerprint(f, config_hash)
        state = manifest.file_state(f.source)
        output = job.out_dir / f.source
        if (
            state.fingerprint == fingerprint
            and state.committed
            and (not state.has_output or output.exists())
        ):
            job.total_units += state.units
            job.done_units += state.units
            records = manifest.unit_records(f.source)
            job.total_records += records
            job.done_records += records
            continue
        if state.fingerprint is not None:
            if state.fingerprint != fingerprint:
                job.changed += 1
            if state.fingerprint != fingerprint or state.committed:
                # changed, or its output has gone: everything of it is done again
                manifest.forget_file(f.source)
                remove_parts(job.out_dir, f.source)
        plan = plan_file(
            f, job.out_dir, job.options.chunk_size, job.config, job.options.chunk_bytes
        )
        if plan.failure is not None:
            _file_failure(job, plan, fingerprint)
            continue
        manifest.start_file(f.source, fingerprint, len(plan.units))
        done = manifest.file_state(f.source).done
        stale = [
            i
            for i, written in done.items()
            if i >= len(plan.units)
            or ((f.kind in RECORD_KINDS or written) and not Path(plan.units[i].output).exists())
        ]
        if stale:
            manifest.forget_units(f.source, stale)
            done = {i: w for i, w in done.items() if i not in stale}
        job.plans[f.source] = plan
        job.total_units += len(plan.units)
        job.total_records += plan.records
        for unit in plan.units:
            if unit.index in done:
                job.done_units += 1
                job.done_records += unit.count
            else:
                job.pending.append(unit)
                job.remaining[f.source] += 1
        if not job.remaining[f.source]:
            _finish_file(job, plan)


def _file_failure(job: _Job, plan: FilePlan, fingerprint: str) -> None:
    """A file that cannot be read at all: one quarantine entry, no output."""
    assert plan.failure is not None
    f = plan.file
    counts = UnitCounts(records=1)
    counts.errors[plan.failure.code] += 1
    counts.quarantine.append(
        {"source": f.source, "reason": {"code": plan.failure.code, "message": plan.failure.message}}
    )
    job.manifest.start_file(f.source, fingerprint, 1)
    job.manifest.complete_unit(f.source, 0, counts)
    plan.output.unlink(missing_ok=True)
    job.manifest.commit_file(f.source, has_output=False)
    job.total_units += 1
    job.done_units += 1
    job.total_records += 1
    job.done_records += 1


def _finish_file(job: _Job, plan: FilePlan) -> None:
    """All units of a file are done: join its parts into the output and mark it committed."""
    source = plan.file.source
    if plan.file.kind in RECORD_KINDS:
        assemble(plan, job.config)
        has_output = True
    else:
        has_output = plan.output.exists()
    job.manifest.commit_file(source, has_output=has_output)
    remove_parts(job.out_dir, source)


def _execute(job: _Job, progress: PlainProgress | RichProgress) -> bool:
    """Run the pending units, then those that come back (:func:`_next_round`); False when the
    run stopped early (a worker died under no record it could be charged to)."""
    pending = job.pending
    workers = max(1, min(job.options.workers, len(pending)))
    shutil.rmtree(_in_hand_dir(job.out_dir), ignore_errors=True)  # a killed run's
    executor = _start_executor(job, workers)
    limit = 1 if workers == 1 else workers * 3
    order = {(u.source, u.index): n for n, u in enumerate(pending)}
    queue = iter(pending)
    inflight: dict[Future[UnitOutcome], Unit] = {}
    exhausted = False
    tick = min(1.0, max(0.05, job.options.progress_interval))
    try:
        while True:
            while len(inflight) < limit:
                if job.again:
                    unit = job.again.pop(0)
                else:
                    if exhausted:
                        break
                    following = next(queue, None)
                    if following is None:
                        exhausted = True
                        break
                    unit = following
                skips = _skips(job, unit)
                alone = _key(unit) in job.submitted  # a retry: each record by itself
                job.submitted.add(_key(unit))
                inflight[executor.submit(run_unit, unit, skips, alone)] = unit
            if not inflight and job.later:
                if _next_round(job):
                    _stop_executor(executor)
                    executor = _start_executor(job, workers)
                continue
            if not inflight:
                break
            finished, _ = wait(inflight, timeout=tick, return_when=FIRST_COMPLETED)
            progress.tick()
            if any(isinstance(future.exception(), BrokenProcessPool) for future in finished):
                fresh = _replace_broken(job, executor, inflight, order, progress, workers)
                if fresh is None:
                    job.say(
                        "a worker process died; the units done so far are kept: "
                        "re-run the same command to do the rest"
                    )
                    return False
                executor = fresh
                continue
            for future in sorted(finished, key=lambda fu: order[_key(inflight[fu])]):
                unit = inflight.pop(future)
                _take(job, unit, future.result(), progress)
    finally:
        _stop_executor(executor)
        shutil.rmtree(_in_hand_dir(job.out_dir), ignore_errors=True)
    return True


def _key(unit: Unit) -> tuple[str, int]:
    return unit.source, unit.index


def _skips(job: _Job, unit: Unit) -> Skips:
    """The records of ``unit`` that failed it twice the same way (in this run or in runs in a
    row), to be quarantined."""
    failures = job.manifest.failures(unit.source, unit.index)
    return {pos: (code, msg) for pos, (_, n, code, msg) in failures.items() if n >= 2}


def _isolate(job: _Job, unit: Unit, outcome: UnitOutcome) -> bool:
    """A unit failed on one of its records: count that record's failure in the manifest (the
    times in a row it failed that way, across runs) and say whether the unit comes back in this
    run, after the other units: once more where the record fails it for the first time (at
    most once per record and run), or without the record once it has failed twice the same
    way. False: the unit is left for a re-run. A worker's death is charged to the record it had
    in hand whatever other units died with it (:func:`_next_round` does not pool them)."""
    assert outcome.failed is not None
    if outcome.position is None or outcome.signature is None:
        return False
    if outcome.signature != _WORKER_DIED:
        job.failing[outcome.signature].add(_key(unit))
    code, message = outcome.failed
    count = job.manifest.note_failure(
        unit.source, unit.index, outcome.position, outcome.signature, code, message
    )
    record = (unit.source, unit.index, outcome.position)
    if count >= 2:
        job.later.append(_Again(unit, outcome.signature, quarantine=True))
    elif record not in job.retried:
        job.retried.add(record)
        job.later.append(_Again(unit, outcome.signature, quarantine=False))
    else:  # its retry failed another way: a first failure of that kind
        return False
    return True


def _next_round(job: _Job) -> bool:
    """After the last unit: submit again the units that come back (:func:`_isolate`). A fault
    that failed several units in this run is no record's own (a vault or disk that fails every
    record): its counts are dropped and its units left for a re-run. True when the workers are
    to be replaced first: a unit is tried again after an unexpected error, which may have been
    its worker's (a pool that a worker's death broke is replaced at once)."""
    later, job.later = job.later, []
    fresh = False
    for item in later:
        units = job.failing[item.signature]
        if len(units) > 1:
            for source, index in units:
                job.manifest.forget_failures(source, index)
            job.say(
                f"{item.unit.location}: the same fault failed {len(units)} units: left for a re-run"
            )
            continue
        if item.quarantine:
            job.say(f"{item.unit.location}: a record failed twice the same way: quarantined")
        else:
            job.say(f"{item.unit.location}: a record failed its unit: trying the unit once more")
            unexpected = item.signature.startswith("PD000:")
            fresh = fresh or (unexpected and item.signature != _WORKER_DIED)
        job.failed_units -= 1
        job.again.append(item.unit)
    return fresh


def _take(
    job: _Job, unit: Unit, outcome: UnitOutcome, progress: PlainProgress | RichProgress
) -> None:
    if outcome.fatal is not None:
        code, message = outcome.fatal
        raise ConfigError(f"a worker stopped the run: [{code}] {message}")
    if outcome.failed is not None or outcome.counts is None:
        code, message = outcome.failed or ("PD000", "no result")
        job.failed_units += 1
        comes_back = outcome.failed is not None and _isolate(job, unit, outcome)
        left = "" if comes_back else " (left for a re-run)"
        job.stream.write(f"polydeid: error: [{code}] {unit.location}: {message}{left}\n")
        return
    job.manifest.complete_unit(unit.source, unit.index, outcome.counts)
    job.processed_units += 1
    job.processed_records += outcome.counts.records
    job.done_units += 1
    progress.advance(outcome.counts.records)
    job.remaining[unit.source] -= 1
    if job.remaining[unit.source] == 0:
        _finish_file(job, job.plans[unit.source])


def _write_quarantine(job: _Job) -> None:
    lines = (
        json.dumps(entry, ensure_ascii=False) + "\n"
        for entry in job.manifest.quarantine(f.source for f in job.files)
    )
    write_atomic(job.out_dir / QUARANTINE_NAME, "".join(lines).encode("utf-8"))


def _summary(
    job: _Job, elapsed: float, working: float, skipped: int, complete: bool
) -> dict[str, Any]:
    """Counts, categories and codes of the whole job (this run and earlier ones); timing and
    rate of this run. No identifiers, no paths."""
    totals = job.manifest.totals(f.source for f in job.files)
    return {
        "complete": complete,
        "files": len(job.files),
        "files_skipped": skipped,
        "files_changed": job.changed,
        "units": job.total_units,
        "units_done_before": job.done_before,
        "units_processed": job.processed_units,
        "units_failed": job.failed_units,
        "records_in": totals.records,
        "written": totals.written,
        "quarantined": totals.quarantined,
        "records_processed": job.processed_records,
        "spans": dict(sorted(totals.spans.items())),
        "errors": dict(sorted(totals.errors.items())),
        "elapsed_s": round(elapsed, 3),
        "records_per_s": round(job.processed_records / working, 1) if working > 0 else 0.0,
        "workers": job.options.workers,
        "chunk_size": job.options.chunk_size,
        "chunk_bytes": job.options.chunk_bytes,
    }


def _report(job: _Job, summary: dict[str, Any]) -> None:
    job.say(
        f"{summary['records_in']} record(s) in, {summary['written']} written, "
        f"{summary['quarantined']} quarantined; {summary['files']} file(s); "
        f"{summary['records_processed']} record(s) processed in {summary['elapsed_s']:.1f} s "
        f"({summary['records_per_s']:.1f} records/s)"
    )
    spans = ", ".join(f"{k}={v}" for k, v in summary["spans"].items()) or "none"
    job.say(f"spans: {spans}")
    if summary["errors"]:
        job.say("errors: " + ", ".join(f"{k}={v}" for k, v in summary["errors"].items()))
        job.say(f"quarantined records are listed in {job.out_dir / QUARANTINE_NAME}")
    if not summary["complete"]:
        left = summary["units"] - summary["units_done_before"] - summary["units_processed"]
        job.say(f"{left} unit(s) not done; re-run the same command to finish")


def run_batch(
    options: BatchOptions, config: JobConfig, *, stream: TextIO | None = None
) -> BatchResult:
    """De-identify ``options.input`` into the folder ``options.output`` (see module doc).

    Exit code: 0 every record written; 1 some records quarantined or units left undone;
    130 interrupted. A :class:`ConfigError` (exit 2) is raised for bad settings, a
    manifest of other settings, or a worker that cannot build its de-identifier.
    """
    stream = stream or sys.stderr
    if options.workers < 1:
        raise ConfigError("--workers must be at least 1")
    if options.chunk_size < 1:
        raise ConfigError("--chunk-size must be at least 1")
    if options.chunk_bytes < 1:
        raise ConfigError("--chunk-bytes must be at least 1")
    if options.device is not None:  # cuda without a GPU: a configuration error, never the CPU
        options = replace(options, device=resolve_device(options.device))
    validate_config(config)
    started = time.monotonic()
    out_dir = Path(options.output)
    check_output(options.output, folder=True)
    files, skipped = discover(options.input, out_dir, options.format, config.text_field)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        lock = _Lock(out_dir)
    except OSError as exc:
        raise output_error(exc, options.output) from None
    try:
        config_hash = config_fingerprint(config, options)
        with _open_manifest(out_dir, config_hash) as manifest:
            sweep_temporaries(out_dir)
            job = _Job(options, config, out_dir, manifest, stream, files=files)
            return _run(job, config_hash, skipped, started)
    finally:
        lock.release()


def _open_manifest(out_dir: Path, config_hash: str) -> Manifest:
    """The output folder's manifest; an output folder where it cannot be written is a
    :class:`ConfigError`."""
    try:
        return Manifest(out_dir / MANIFEST_NAME, config_hash)
    except sqlite3.Error as exc:
        raise ConfigError(
            f"cannot write the manifest ({type(exc).__name__})", location=str(out_dir)
        ) from None
    except OSError as exc:
        raise output_error(exc, str(out_dir)) from None


def _run(job: _Job, config_hash: str, skipped: int, started: float) -> BatchResult:
    _prepare(job, config_hash)
    job.done_before = job.done_units
    if skipped:
        job.say(f"skipped {skipped} file(s) of no known kind")
    if job.changed:
        job.say(f"{job.changed} input file(s) changed since the last run: doing them again")
    resumed = f"; {job.done_units} already done" if job.done_units else ""
    job.say(
        f"{len(job.files)} file(s), {job.total_units} unit(s), "
        f"{job.total_records} record(s){resumed}"
    )
    progress = make_progress(job.stream, job.options.progress, job.options.progress_interval)
    progress.start(job.total_records, job.done_records)
    interrupted = False
    completed = True
    run_started = time.monotonic()
    try:
        completed = _execute(job, progress)
    except KeyboardInterrupt:
        interrupted = True
    finally:
        progress.close()
    working = time.monotonic() - run_started
    complete = completed and not interrupted and job.failed_units == 0
    if complete:
        remove_parts_root(job.out_dir)
    _write_quarantine(job)
    summary = _summary(job, time.monotonic() - started, working, skipped, complete)
    write_atomic(
        job.out_dir / SUMMARY_NAME,
        (json.dumps(summary, ensure_ascii=False, indent=2) + "\n").encode("utf-8"),
    )
    _report(job, summary)
    if interrupted:
        job.say("interrupted; re-run the same command to resume")
        return BatchResult(130, summary)
    return BatchResult(0 if complete and summary["quarantined"] == 0 else 1, summary)


def quarantine_entries(out_dir: str | Path) -> Iterable[dict[str, Any]]:
    """The entries of ``OUT/quarantine.jsonl`` (for tools and tests)."""
    path = Path(out_dir) / QUARANTINE_NAME
    for line in path.read_text("utf-8").splitlines():
        if line.strip():
            yield json.loads(line)
