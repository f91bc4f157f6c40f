"""The resume manifest: which units of which input files are done (SQLite in the output folder).

``OUT/.polydeid-manifest.sqlite`` holds

* ``meta``: the fingerprint of the job's configuration (a hash: no setting is stored in the
  clear, so neither a vault URL's password nor a key can be read back from it);
* ``files``: per input file, its fingerprint (size, modification time and the configuration
  hash), its number of units and whether its output has been assembled (``committed``);
* ``units``: per finished unit, its counts (records, written, spans per category, errors per
  code) — labels and codes only, never text;
* ``quarantine``: the quarantine entries of finished units (location and reason only);
* ``failures``: per record that failed its unit (not yet finished), how (error code and
  exception type), how many runs in a row it failed that way, and the error's code and
  message (location and reason only).

A unit's row and its quarantine entries are written in one transaction, after its part file
has been renamed into place, so a killed run leaves every unit either done (part file and
row) or not done (at most a part file, overwritten on the re-run). The database is in WAL
mode: durable against a killed process, readable while a run writes it.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from polydeid.core.errors import ConfigError

SCHEMA_VERSION = "1"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (
    source TEXT PRIMARY KEY,
    fingerprint TEXT NOT NULL,
    units INTEGER NOT NULL,
    committed INTEGER NOT NULL DEFAULT 0,
    has_output INTEGER NOT NULL DEFAULT 1
);
CREATE TABLE IF NOT EXISTS units (
    source TEXT NOT NULL,
    unit INTEGER NOT NULL,
    records INTEGER NOT NULL,
    written INTEGER NOT NULL,
    spans TEXT NOT NULL,
    errors TEXT NOT NULL,
    PRIMARY KEY (source, unit)
);
CREATE TABLE IF NOT EXISTS quarantine (
    source TEXT NOT NULL,
    unit INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    entry TEXT NOT NULL,
    PRIMARY KEY (source, unit, seq)
);
CREATE TABLE IF NOT EXISTS failures (
    source TEXT NOT NULL,
    unit INTEGER NOT NULL,
    position INTEGER NOT NULL,
    signature TEXT NOT NULL,
    count INTEGER NOT NULL,
    code TEXT NOT NULL,
    message TEXT NOT NULL,
    PRIMARY KEY (source, unit, position)
);
"""


@dataclass(slots=True)
class UnitCounts:
    """What one unit did: counts by category and by error code, and its quarantine entries
    (each a location and a reason: never the record's content)."""

    records: int = 0
    written: int = 0
    spans: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)
    quarantine: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class FileState:
    """An input file as the manifest knows it; ``done``: finished unit → records written."""

    fingerprint: str | None
    units: int
    committed: bool
    has_output: bool
    done: dict[int, int]


@dataclass(slots=True)
class Totals:
    records: int = 0
    written: int = 0
    quarantined: int = 0
    units: int = 0
    spans: Counter[str] = field(default_factory=Counter)
    errors: Counter[str] = field(default_factory=Counter)


class Manifest:
    """Open (or create) the manifest of ``out_dir`` for a job whose configuration hashes to
    ``config_hash``; a manifest written for another configuration is refused with a
    :class:`ConfigError` (mixing outputs of two configurations in one folder would leave
    records de-identified two ways)."""

    def __init__(self, path: Path, config_hash: str) -> None:
        self.path = path
        self.db = sqlite3.connect(str(path), isolation_level=None, timeout=30)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.executescript(_SCHEMA)
        with self._transaction():
            rows = dict(self.db.execute("SELECT key, value FROM meta").fetchall())
            if not rows:
                self.db.executemany(
                    "INSERT INTO meta (key, value) VALUES (?, ?)",
                    [("version", SCHEMA_VERSION), ("config", config_hash)],
                )
            elif rows.get("version") != SCHEMA_VERSION:
                raise ConfigError(
                    "the output folder holds a manifest of another polydeid version; "
                    "use a new output folder",
                    location=str(path),
                )
            elif rows.get("config") != config_hash:
                raise ConfigError(
                    "the output folder holds a run with different settings (input, profile, "
                    "policy, key, vault, language, fields, format, chunk size or tagger "
                    "device); re-run with "
                    "the same settings to resume, or use a new output folder",
                    location=str(path),
                )

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Manifest:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    class _Tx:
        def __init__(self, db: sqlite3.Connection) -> None:
            self.db = db

        def __enter__(self) -> None:
            self.db.execute("BEGIN IMMEDIATE")

        def __exit__(self, kind: object, value: object, tb: object) -> None:
            self.db.execute("ROLLBACK" if kind is not None else "COMMIT")

    def _transaction(self) -> Manifest._Tx:
        return Manifest._Tx(self.db)

    # --- per file ----------------------------------------------------------------------

    def file_state(self, source: str) -> FileState:
        row = self.db.execute(
            "SELECT fingerprint, units, committed, has_output FROM files WHERE source = ?",
            (source,),
        ).fetchone()
        done = dict(self.db.execute("SELECT unit, written FROM units WHERE source = ?", (source,)))
        if row is None:
            return FileState(None, 0, False, True, done)
        return FileState(row[0], int(row[1]), bool(row[2]), bool(row[3]), done)

    def start_file(self, source: str, fingerprint: str, units: int) -> None:
        """Begin (or begin again) ``source``: forget every unit done for another
        fingerprint."""
        with self._transaction():
            row = self.db.execute(
                "SELECT fingerprint FROM files WHERE source = ?", (source,)
            ).fetchone()
            if row is not None and row[0] != fingerprint:
                self._forget(source)
            self.db.execute(
                "INSERT INTO files (source, fingerprint, units, committed) VALUES (?, ?, ?, 0) "
                "ON CONFLICT (source) DO UPDATE SET fingerprint = excluded.fingerprint, "
                "units = excluded.units, committed = 0",
                (source, fingerprint, units),
            )

    def forget_file(self, source: str) -> None:
        with self._transaction():
            self._forget(source)
            self.db.execute("DELETE FROM files WHERE source = ?", (source,))

    def forget_units(self, source: str, units: Iterable[int]) -> None:
        with self._transaction():
            for unit in units:
                self.db.execute("DELETE FROM units WHERE source = ? AND unit = ?", (source, unit))
                self.db.execute(
                    "DELETE FROM quarantine WHERE source = ? AND unit = ?", (source, unit)
                )
                self.db.execute(
                    "DELETE FROM failures WHERE source = ? AND unit = ?", (source, unit)
                )

    def _forget(self, source: str) -> None:
        self.db.execute("DELETE FROM units WHERE source = ?", (source,))
        self.db.execute("DELETE FROM quarantine WHERE source = ?", (source,))
        self.db.execute("DELETE FROM failures WHERE source = ?", (source,))

    # --- records that fail their unit ----------------------------------------------------

    def note_failure(
        self, source: str, unit: int, position: int, signature: str, code: str, message: str
    ) -> int:
        """Count a failure of the record at ``position``: how many times in a row it has now
        failed as ``signature`` (a failure of another kind starts again at 1)."""
        with self._transaction():
            row = self.db.execute(
                "SELECT signature, count FROM failures "
                "WHERE source = ? AND unit = ? AND position = ?",
                (source, unit, position),
            ).fetchone()
            count = int(row[1]) + 1 if row is not None and row[0] == signature else 1
            self.db.execute(
                "INSERT OR REPLACE INTO failures "
                "(source, unit, position, signature, count, code, message) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (source, unit, position, signature, count, code, message),
            )
        return count

    def failures(self, source: str, unit: int) -> dict[int, tuple[str, int, str, str]]:
        """The noted failures of ``unit``: position → (signature, count, code, message)."""
        rows = self.db.execute(
            "SELECT position, signature, count, code, message FROM failures "
            "WHERE source = ? AND unit = ?",
            (source, unit),
        )
        return {int(p): (sig, int(n), code, msg) for p, sig, n, code, msg in rows}

    def forget_failures(self, source: str, unit: int) -> None:
        with self._transaction():
            self.db.execute("DELETE FROM failures WHERE source = ? AND unit = ?", (source, unit))

    def complete_unit(self, source: str, unit: int, counts: UnitCounts) -> None:
        """Record ``unit`` as done, with its counts and quarantine entries (atomically)."""
        with self._transaction():
            self.db.execute(
                "INSERT OR REPLACE INTO units (source, unit, records, written, spans, errors) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                (
                    source,
                    unit,
                    counts.records,
                    counts.written,
                    json.dumps(dict(counts.spans), sort_keys=True),
                    json.dumps(dict(counts.errors), sort_keys=True),
                ),
            )
            self.db.execute("DELETE FROM quarantine WHERE source = ? AND unit = ?", (source, unit))
            self.db.execute("DELETE FROM failures WHERE source = ? AND unit = ?", (source, unit))
            self.db.executemany(
                "INSERT INTO quarantine (source, unit, seq, entry) VALUES (?, ?, ?, ?)",
                [
                    (source, unit, seq, json.dumps(entry, ensure_ascii=False))
                    for seq, entry in enumerate(counts.quarantine)
                ],
            )

    def commit_file(self, source: str, *, has_output: bool = True) -> None:
        """Mark ``source``'s output as assembled and in place."""
        with self._transaction():
            self.db.execute(
                "UPDATE files SET committed = 1, has_output = ? WHERE source = ?",
                (int(has_output), source),
            )

    # --- reading back --------------------------------------------------------------------

    def done_units(self) -> int:
        return int(self.db.execute("SELECT COUNT(*) FROM units").fetchone()[0])

    def totals(self, sources: Iterable[str]) -> Totals:
        totals = Totals()
        wanted = set(sources)
        rows = self.db.execute("SELECT source, records, written, spans, errors FROM units")
        for source, records, written, spans, errors in rows:
            if source not in wanted:
                continue
            totals.units += 1
            totals.records += records
            totals.written += written
            totals.spans.update(json.loads(spans))
            totals.errors.update(json.loads(errors))
        totals.quarantined = totals.records - totals.written
        return totals

    def unit_records(self, source: str) -> int:
        row = self.db.execute(
            "SELECT COALESCE(SUM(records), 0) FROM units WHERE source = ?", (source,)
        ).fetchone()
        return int(row[0])

    def quarantine(self, sources: Iterable[str]) -> Iterator[dict[str, Any]]:
        """Quarantine entries of ``sources``, in that order, then by unit and position."""
        for source in sources:
            rows = self.db.execute(
                "SELECT entry FROM quarantine WHERE source = ? ORDER BY unit, seq", (source,)
            )
            for (entry,) in rows:
                yield json.loads(entry)
