"""The surrogate vault: original → surrogate, keyed by HMAC so no identifier is ever stored.

A vault maps an *identity key* — ``HMAC(vault subkey, category ␟ normalised original)``, see
:func:`identity_key` — to the surrogate chosen for it. The surrogate itself is fake text and is
stored in clear. Each surrogate is also registered under its own identity key (the *value
key*), so one surrogate is not given to two different originals of the same category — unless
the category's value space is small (ages, dates, clans, villages) or its unique surrogates
run out, when sharing one is safer than falling back to a tag.

Consistency follows the key: with a user key (and a persistent vault) the same original gets
the same surrogate in every document and run; without one, the
:class:`~polydeid.transform.redactor.Redactor` makes an ephemeral key and surrogates are
consistent within that instance only.

Vaults:

- :class:`MemoryVault` lives in memory (lost when the process ends);
- :class:`SqliteVault` is a SQLite file (WAL mode, a busy timeout, a connection per thread and
  per process), for one machine;
- :class:`PostgresVault` is a PostgreSQL database (psycopg 3), for many machines.

:func:`open_vault` picks one from a path or a ``postgresql://`` URL. The persistent vaults hold
one table with a primary key on ``key`` and a unique index on ``value_key``; ``put`` is a
single ``INSERT … ON CONFLICT DO NOTHING``, so the database enforces both rules atomically,
whichever process or thread writes first: an original never gets two surrogates, a unique
surrogate never two originals. The schema is versioned (a meta table) and created on first
use.

Key fingerprint: a persistent vault remembers which key wrote it — not the key, but
:func:`key_fingerprint`, an HMAC under a subkey derived for that purpose alone — in its meta
table. A :class:`~polydeid.transform.redactor.Redactor` binds its key to the vault
(:meth:`SqliteVault.bind_key`): another key, or no key for a vault written with one, is a
:class:`~polydeid.core.errors.VaultKeyError`, so one patient never gets a second surrogate
under a second key. A vault written before fingerprints adopts the first key bound to it
(refused when that key cannot unseal an original the vault already holds).

Files: a SQLite vault is created only when the first entry (or fingerprint) is written, with
mode 0600; a run that never writes (or fails on its configuration) leaves no file.

Re-identification: with a user key, the surrogate operator also stores the original *sealed*
beside its surrogate — AES-256-GCM under a subkey for the purpose ``"vault-seal"`` (see
:func:`seal_key`), bound to the entry's identity key. Only the key holder can unseal it, and
only through :func:`reidentify` / :meth:`SqliteVault.reveal` (the ``polydeid reidentify``
command). A wrong key is a :class:`~polydeid.core.errors.DecryptionError`, never garbage.
Without a user key nothing is sealed and nothing can be re-identified.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol, TypeVar, runtime_checkable
from urllib.parse import urlsplit

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from polydeid.core.errors import ConfigError, DecryptionError, TransformError, VaultKeyError
from polydeid.core.taxonomy import Category
from polydeid.text.normalise import normalise
from polydeid.transform.crypto import KeyRing, derive_key, keyed_digest

#: Version of the persistent vaults' tables (kept in their meta table).
SCHEMA_VERSION = 1
#: HKDF purpose of the subkey that seals originals for re-identification.
PURPOSE_VAULT_SEAL = "vault-seal"
#: HKDF purpose of the subkey whose HMAC is the vault's key fingerprint.
PURPOSE_VAULT_FINGERPRINT = "vault-fingerprint.v1"
#: The meta table's row that holds the key fingerprint.
FINGERPRINT_ROW = "key_fingerprint"
#: Mode of a vault file polydeid creates (owner read and write only).
FILE_MODE = 0o600

TABLE = "polydeid_vault"
META_TABLE = "polydeid_vault_meta"

_SEAL_FORMAT = b"\x01"  # format byte, then a 12-byte nonce, then AES-GCM ciphertext and tag
_SEAL_AD = b"polydeid.vault-seal.v1\x1f"
_NONCE_BYTES = 12
_SEP = b"\x1f"

T = TypeVar("T")


@runtime_checkable
class Vault(Protocol):
    """Storage of surrogates by identity key (32-byte HMAC digests, never raw text)."""

    def get(self, key: bytes) -> str | None:
        """The surrogate stored under ``key``, or None."""
        ...

    def put(
        self, key: bytes, surrogate: str, *, value_key: bytes | None, sealed: bytes | None = None
    ) -> bool:
        """Store ``surrogate`` under ``key``; False (nothing stored) when either key is taken.

        ``value_key`` reserves the surrogate for this original; None shares it (used for
        small value spaces such as ages, and when a category's unique surrogates run out).
        ``sealed`` is the original sealed with :func:`seal_original` (None: not revealable).
        """
        ...


@runtime_checkable
class KeyBoundVault(Protocol):
    """A vault that remembers the fingerprint of the key that writes it."""

    def bind_key(self, keys: KeyRing) -> None:
        """Refuse ``keys`` (VaultKeyError) unless they are the vault's; a vault without a
        fingerprint adopts theirs (an ephemeral key binds nothing)."""
        ...


@runtime_checkable
class RevealableVault(Protocol):
    """A vault that can list the sealed originals stored beside a surrogate."""

    def sealed_entries(self, surrogate: str) -> list[tuple[bytes, bytes | None]]:
        """(identity key, sealed original or None) of every entry holding ``surrogate``."""
        ...


def identity_key(vault_key: bytes, category: Category, text: str) -> bytes:
    """The vault key of ``text`` in ``category`` (HMAC of the normalised text)."""
    return keyed_digest(vault_key, "vault", category.value, normalise(text))


# --- sealing ---------------------------------------------------------------------------------


@lru_cache(maxsize=32)
def _seal_subkey(vault_subkey: bytes) -> bytes:
    return derive_key(vault_subkey, PURPOSE_VAULT_SEAL)


def seal_key(keys: KeyRing) -> bytes:
    """The AES-256-GCM key that seals originals: HKDF-SHA256 of the key ring's vault subkey
    (itself HKDF of the master key) for the purpose ``"vault-seal"``."""
    return _seal_subkey(keys.vault)


def seal_original(keys: KeyRing, category: Category, original: str, key: bytes) -> bytes | None:
    """``original`` sealed for the vault entry ``key`` — None without a user key (an ephemeral
    key could never unseal it)."""
    if not keys.user_supplied:
        return None
    nonce = secrets.token_bytes(_NONCE_BYTES)
    plain = category.value.encode("ascii") + _SEP + original.encode("utf-8", "surrogatepass")
    return _SEAL_FORMAT + nonce + AESGCM(seal_key(keys)).encrypt(nonce, plain, _SEAL_AD + key)


def unseal_original(keys: KeyRing, key: bytes, sealed: bytes) -> tuple[Category, str]:
    """(category, original) sealed for the entry ``key``; DecryptionError when the key is
    wrong or the entry was altered (the message never holds either)."""
    failure = DecryptionError(
        "cannot unseal the vault entry with this key (wrong key, or the vault was altered)"
    )
    if len(sealed) < 1 + _NONCE_BYTES + 16 or sealed[:1] != _SEAL_FORMAT:
        raise failure
    nonce, body = sealed[1 : 1 + _NONCE_BYTES], sealed[1 + _NONCE_BYTES :]
    try:
        plain = AESGCM(seal_key(keys)).decrypt(nonce, body, _SEAL_AD + key)
    except InvalidTag:
        raise failure from None
    label, _, raw = plain.partition(_SEP)
    try:
        category = Category(label.decode("ascii"))
        original = raw.decode("utf-8", "surrogatepass")
    except (UnicodeDecodeError, ValueError):
        raise failure from None
    if identity_key(keys.vault, category, original) != key:
        raise failure
    return category, original


# --- key fingerprint -------------------------------------------------------------------------


def key_fingerprint(keys: KeyRing) -> str:
    """The vault's record of ``keys``: hex HMAC-SHA256 of a fixed label under a subkey of the
    vault subkey derived for this purpose alone (it reveals nothing of any key in use)."""
    return keyed_digest(
        derive_key(keys.vault, PURPOSE_VAULT_FINGERPRINT), "polydeid.vault.key-fingerprint"
    ).hex()


def _mismatch(location: str | None = None) -> VaultKeyError:
    return VaultKeyError(
        "the key does not match the key this vault was written with (its fingerprint "
        "differs): use the vault's own key, or another vault",
        location=location,
    )


def _keyless(location: str | None = None) -> VaultKeyError:
    return VaultKeyError(
        "this vault was written with a secret key: give that key (--key-file)",
        location=location,
    )


def check_fingerprint(
    stored: str | None,
    keys: KeyRing,
    *,
    location: str | None,
    sample: tuple[bytes, bytes] | None = None,
) -> str | None:
    """The fingerprint to adopt (None: nothing to write) for ``keys`` against a vault's
    ``stored`` one; VaultKeyError on a mismatch. ``sample`` (identity key, sealed original)
    from a vault without a fingerprint must unseal with ``keys`` before they are adopted."""
    if not keys.user_supplied:
        if stored is not None:
            raise _keyless(location)
        return None
    mine = key_fingerprint(keys)
    if stored is not None:
        if not secrets.compare_digest(stored, mine):
            raise _mismatch(location)
        return None
    if sample is not None:
        try:
            unseal_original(keys, sample[0], sample[1])
        except DecryptionError:
            raise _mismatch(location) from None
    return mine


def _key_ring(key: bytes | KeyRing) -> KeyRing:
    ring = key if isinstance(key, KeyRing) else KeyRing.from_master(key)
    if not ring.user_supplied:
        raise DecryptionError("re-identification needs the secret key the vault was written with")
    return ring


def reveal_entries(
    entries: Iterable[tuple[bytes, bytes | None]],
    keys: bytes | KeyRing,
    *,
    category: Category | None = None,
) -> list[tuple[Category, str]]:
    """Unseal ``entries`` (see :meth:`RevealableVault.sealed_entries`): the (category,
    original) pairs this key opens, optionally of one ``category``.

    Empty when there is no entry. DecryptionError when there are entries but the key opens
    none of them; TransformError when they hold no sealed original (written without a key).
    """
    ring = _key_ring(keys)
    found: list[tuple[Category, str]] = []
    failed = unsealed = 0
    for key, sealed in entries:
        if sealed is None:
            unsealed += 1
            continue
        try:
            pair = unseal_original(ring, bytes(key), bytes(sealed))
        except DecryptionError:
            failed += 1
            continue
        if (category is None or pair[0] == category) and pair not in found:
            found.append(pair)
    if found:
        return sorted(found, key=lambda pair: (pair[0].value, pair[1]))
    if failed:
        raise DecryptionError(
            "cannot unseal the vault entries with this key (wrong key, or the vault was altered)"
        )
    if unsealed:
        raise TransformError(
            "the vault entry holds no sealed original (it was written without a key), "
            "so it cannot be re-identified"
        )
    return []


def reidentify(
    vault: Any, surrogate_text: str, key: bytes | KeyRing, *, category: Category | None = None
) -> list[tuple[Category, str]]:
    """The (category, original) pairs behind ``surrogate_text`` in ``vault``, with the master
    ``key`` (bytes, or its :class:`KeyRing`). Several pairs when a surrogate is shared (ages,
    dates) or appears in several categories; empty when the vault does not hold it."""
    if not isinstance(vault, RevealableVault):
        raise ConfigError(f"{type(vault).__name__} cannot re-identify (no sealed originals)")
    return reveal_entries(vault.sealed_entries(surrogate_text.strip()), key, category=category)


class _Revealing:
    """``reveal`` for vaults that implement ``sealed_entries``."""

    def sealed_entries(self, surrogate: str) -> list[tuple[bytes, bytes | None]]:
        raise NotImplementedError

    def reveal(
        self, surrogate: str, keys: bytes | KeyRing, category: Category | None = None
    ) -> list[tuple[Category, str]]:
        """The (category, original) pairs behind ``surrogate`` (see :func:`reidentify`)."""
        return reveal_entries(self.sealed_entries(surrogate.strip()), keys, category=category)


# --- in memory -------------------------------------------------------------------------------


class MemoryVault(_Revealing):
    """A thread-safe in-memory vault (lost when the process ends)."""

    def __init__(self) -> None:
        self._by_key: dict[bytes, str] = {}
        self._values: set[bytes] = set()
        self._sealed: dict[str, list[tuple[bytes, bytes | None]]] = {}
        self._fingerprint: str | None = None
        self._lock = threading.Lock()

    def bind_key(self, keys: KeyRing) -> None:
        with self._lock:
            adopt = check_fingerprint(self._fingerprint, keys, location=None)
            if adopt is not None:
                self._fingerprint = adopt

    def get(self, key: bytes) -> str | None:
        return self._by_key.get(key)

    def put(
        self, key: bytes, surrogate: str, *, value_key: bytes | None, sealed: bytes | None = None
    ) -> bool:
        with self._lock:
            if key in self._by_key or (value_key is not None and value_key in self._values):
                return False
            self._by_key[key] = surrogate
            if value_key is not None:
                self._values.add(value_key)
            self._sealed.setdefault(surrogate, []).append((key, sealed))
            return True

    def sealed_entries(self, surrogate: str) -> list[tuple[bytes, bytes | None]]:
        with self._lock:
            return list(self._sealed.get(surrogate, ()))

    def __len__(self) -> int:
        return len(self._by_key)

    def __repr__(self) -> str:
        return f"MemoryVault(entries={len(self._by_key)})"


def _check_put(key: bytes, surrogate: str, value_key: bytes | None, sealed: bytes | None) -> None:
    if not isinstance(key, bytes) or (value_key is not None and not isinstance(value_key, bytes)):
        raise TypeError("vault keys must be bytes")
    if not isinstance(surrogate, str) or (sealed is not None and not isinstance(sealed, bytes)):
        raise TypeError("a surrogate must be str and a sealed original bytes")


class _PerThread:
    """One database connection per thread and per process (re-opened after a fork).

    A connection whose thread has ended is closed when the next one is opened. Connections
    inherited through ``fork`` stay referenced and are never closed in the child: closing
    them there could disturb the parent's session.
    """

    def __init__(self) -> None:
        self._local = threading.local()
        self._all: list[tuple[int, threading.Thread, Any]] = []
        self._all_lock = threading.Lock()

    def _open(self) -> Any:
        raise NotImplementedError

    def _connection(self) -> Any:
        local, pid = self._local, os.getpid()
        conn = getattr(local, "conn", None)
        if conn is None or getattr(local, "pid", None) != pid:
            conn = self._open()
            local.conn, local.pid = conn, pid
            with self._all_lock:
                ended = [c for p, t, c in self._all if p == pid and not t.is_alive()]
                self._all = [(p, t, c) for p, t, c in self._all if p != pid or t.is_alive()]
                self._all.append((pid, threading.current_thread(), conn))
            for old in ended:
                with contextlib.suppress(Exception):  # its thread has ended
                    old.close()
        return conn

    def _drop_connection(self) -> None:
        """Forget this thread's connection (after it broke); the next call opens a new one."""
        conn = getattr(self._local, "conn", None)
        self._local.conn = None
        if conn is not None and getattr(self._local, "pid", None) == os.getpid():
            with self._all_lock:
                self._all = [(p, t, c) for p, t, c in self._all if c is not conn]
            with contextlib.suppress(Exception):  # already broken
                conn.close()

    def close(self) -> None:
        """Close every connection this process opened (the vault re-opens on next use)."""
        pid = os.getpid()
        with self._all_lock:
            mine = [c for p, _, c in self._all if p == pid]
            self._all = [(p, t, c) for p, t, c in self._all if p != pid]
        for conn in mine:
            with contextlib.suppress(Exception):  # closing is best effort
                conn.close()
        self._local = threading.local()

    def __enter__(self: T) -> T:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _stored_fingerprint(conn: Any, mark: str) -> tuple[str | None, tuple[bytes, bytes] | None]:
    """The key fingerprint a vault holds, else (None, one sealed entry to try a first key on,
    if any); ``mark`` is the driver's parameter placeholder (``?`` or ``%s``)."""
    row = conn.execute(
        f"SELECT value FROM {META_TABLE} WHERE name = {mark}", (FINGERPRINT_ROW,)
    ).fetchone()
    if row is not None:
        return str(row[0]), None
    entry = conn.execute(
        f"SELECT key, sealed FROM {TABLE} WHERE sealed IS NOT NULL LIMIT 1"
    ).fetchone()
    return None, None if entry is None else (bytes(entry[0]), bytes(entry[1]))


def _adopt_fingerprint(conn: Any, mark: str, fingerprint: str) -> str:
    """Store ``fingerprint`` unless the vault holds one already; the one it holds now."""
    conn.execute(
        f"INSERT INTO {META_TABLE} (name, value) VALUES ({mark}, {mark}) ON CONFLICT DO NOTHING",
        (FINGERPRINT_ROW, fingerprint),
    )
    row = conn.execute(
        f"SELECT value FROM {META_TABLE} WHERE name = {mark}", (FINGERPRINT_ROW,)
    ).fetchone()
    return str(row[0])


# --- SQLite ----------------------------------------------------------------------------------

_SQLITE_SCHEMA = (
    f"""CREATE TABLE IF NOT EXISTS {TABLE} (
        key BLOB PRIMARY KEY NOT NULL,
        value_key BLOB,
        surrogate TEXT NOT NULL,
        sealed BLOB
    ) WITHOUT ROWID""",
    f"CREATE UNIQUE INDEX IF NOT EXISTS {TABLE}_value_key ON {TABLE} (value_key)",
    f"CREATE INDEX IF NOT EXISTS {TABLE}_surrogate ON {TABLE} (surrogate)",
)


def _sqlite_busy(exc: sqlite3.OperationalError) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text


class SqliteVault(_PerThread, _Revealing):
    """A vault in a SQLite file, shared safely by threads and processes on one machine.

    WAL mode lets readers run beside the one writer; writers wait up to ``timeout`` seconds
    for each other (and then retry a few times). An existing file is opened (and checked) at
    once; a missing one is created, mode 0600, by the first write. Picklable: a copy re-opens
    the file.
    """

    def __init__(self, path: str | os.PathLike[str], *, timeout: float = 30.0) -> None:
        super().__init__()
        self.path = Path(path).expanduser().absolute()
        self.timeout = timeout
        self._schema_ready = False
        self._exists = False
        self._pending: str | None = None  # a fingerprint bound before the file exists
        self._bind_lock = threading.Lock()
        if not self.path.parent.is_dir():
            raise ConfigError("the vault's directory does not exist", location=str(self.path))
        if self.path.is_dir():
            raise ConfigError("the vault path is a directory", location=str(self.path))
        if self.path.exists():
            self._exists = True
            self._connection()  # check the schema now: errors surface before any work
        elif not os.access(self.path.parent, os.W_OK | os.X_OK):
            raise ConfigError("the vault's directory is not writable", location=str(self.path))

    def __getstate__(self) -> dict[str, Any]:
        return {"path": str(self.path), "timeout": self.timeout}

    def __setstate__(self, state: dict[str, Any]) -> None:
        type(self).__init__(self, state["path"], timeout=state["timeout"])

    def __repr__(self) -> str:
        return f"SqliteVault({str(self.path)!r})"

    def _open(self) -> sqlite3.Connection:
        try:
            conn = sqlite3.connect(
                self.path, timeout=self.timeout, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error as exc:
            raise ConfigError(
                f"cannot open the SQLite vault ({exc})", location=str(self.path)
            ) from None
        try:
            conn.execute(f"PRAGMA busy_timeout = {int(self.timeout * 1000)}")
            self._retry(lambda: conn.execute("PRAGMA journal_mode = WAL").fetchone())
            conn.execute("PRAGMA synchronous = NORMAL")
            if not self._schema_ready:
                self._retry(lambda: self._create_schema(conn))
                self._schema_ready = True
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise ConfigError(
                f"cannot use the SQLite vault ({exc})", location=str(self.path)
            ) from None
        except BaseException:
            conn.close()
            raise
        return conn

    def _create_schema(self, conn: sqlite3.Connection) -> None:
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.execute(
                f"CREATE TABLE IF NOT EXISTS {META_TABLE} "
                "(name TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL)"
            )
            row = conn.execute(
                f"SELECT value FROM {META_TABLE} WHERE name = 'schema_version'"
            ).fetchone()
            _check_version(None if row is None else row[0], str(self.path))
            for statement in _SQLITE_SCHEMA:
                conn.execute(statement)
            if row is None:
                conn.execute(
                    f"INSERT INTO {META_TABLE} (name, value) VALUES ('schema_version', ?)",
                    (str(SCHEMA_VERSION),),
                )
            if self._pending is not None:  # bound before the file existed
                stored = _adopt_fingerprint(conn, "?", self._pending)
                if not secrets.compare_digest(stored, self._pending):
                    raise _mismatch(str(self.path))
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    def _retry(self, action: Callable[[], T]) -> T:
        deadline = time.monotonic() + self.timeout
        delay = 0.005
        while True:
            try:
                return action()
            except sqlite3.OperationalError as exc:
                if not _sqlite_busy(exc) or time.monotonic() > deadline:
                    raise
            time.sleep(delay * (1 + secrets.randbelow(100) / 100))
            delay = min(delay * 2, 0.25)

    def _create_file(self) -> None:
        """Create the vault file (mode 0600) if it is missing; the first write calls this.

        The file is built aside, schema and all, and linked into place in one step, so no
        process ever opens a vault file another one is still setting up (two processes that
        set up one empty file at once can fail with a disk I/O error); the loser of a race
        drops its copy and uses the winner's."""
        if self._present():
            return
        aside = self.path.with_name(f".{self.path.name}.{os.getpid()}.{secrets.token_hex(6)}")
        try:
            os.close(os.open(aside, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE))
            conn = sqlite3.connect(aside, timeout=self.timeout, isolation_level=None)
            try:
                conn.execute("PRAGMA journal_mode = WAL").fetchone()
                self._create_schema(conn)
            finally:
                conn.close()
            with contextlib.suppress(FileExistsError):
                os.link(aside, self.path)
        except OSError as exc:
            raise ConfigError(
                f"cannot create the vault ({exc.strerror})", location=str(self.path)
            ) from None
        except sqlite3.DatabaseError as exc:
            raise ConfigError(f"cannot create the vault ({exc})", location=str(self.path)) from None
        finally:
            for leftover in (aside, *(Path(f"{aside}{end}") for end in ("-wal", "-shm"))):
                with contextlib.suppress(FileNotFoundError):
                    leftover.unlink()
        self._exists = True

    def _present(self) -> bool:
        """Whether the file exists (another process may have created it meanwhile)."""
        if not self._exists and self.path.exists():
            self._exists = True
        return self._exists

    def bind_key(self, keys: KeyRing) -> None:
        """See :class:`KeyBoundVault`. Before the file exists the fingerprint is kept and
        written with the schema; nothing is created here."""
        with self._bind_lock:
            if not self._present():
                if self._pending is not None:
                    check_fingerprint(self._pending, keys, location=str(self.path))
                else:
                    self._pending = check_fingerprint(None, keys, location=str(self.path))
                return
            stored, sample = self._run(lambda c: _stored_fingerprint(c, "?"))
            mine = check_fingerprint(stored, keys, location=str(self.path), sample=sample)
            if mine is not None and not secrets.compare_digest(
                self._run(lambda c: _adopt_fingerprint(c, "?", mine)), mine
            ):
                raise _mismatch(str(self.path))  # another key adopted first

    def _run(self, action: Callable[[sqlite3.Connection], T]) -> T:
        try:
            return self._retry(lambda: action(self._connection()))
        except sqlite3.Error as exc:
            raise TransformError(
                f"the SQLite vault failed ({type(exc).__name__}: {exc})", location=str(self.path)
            ) from None

    def get(self, key: bytes) -> str | None:
        if not self._present():
            return None
        row = self._run(
            lambda c: c.execute(f"SELECT surrogate FROM {TABLE} WHERE key = ?", (key,)).fetchone()
        )
        return None if row is None else str(row[0])

    def put(
        self, key: bytes, surrogate: str, *, value_key: bytes | None, sealed: bytes | None = None
    ) -> bool:
        _check_put(key, surrogate, value_key, sealed)
        self._create_file()
        cursor = self._run(
            lambda c: c.execute(
                f"INSERT INTO {TABLE} (key, value_key, surrogate, sealed) VALUES (?, ?, ?, ?) "
                "ON CONFLICT DO NOTHING",
                (key, value_key, surrogate, sealed),
            )
        )
        return cursor.rowcount == 1

    def sealed_entries(self, surrogate: str) -> list[tuple[bytes, bytes | None]]:
        if not self._present():
            return []
        rows = self._run(
            lambda c: c.execute(
                f"SELECT key, sealed FROM {TABLE} WHERE surrogate = ? ORDER BY key", (surrogate,)
            ).fetchall()
        )
        return [(bytes(k), None if s is None else bytes(s)) for k, s in rows]

    def __len__(self) -> int:
        if not self._present():
            return 0
        return int(self._run(lambda c: c.execute(f"SELECT count(*) FROM {TABLE}").fetchone())[0])


def _check_version(found: str | None, location: str) -> None:
    if found is None:
        return
    try:
        version = int(found)
    except ValueError:
        raise ConfigError("the vault's schema version is unreadable", location=location) from None
    if version > SCHEMA_VERSION:
        raise ConfigError(
            f"the vault has schema version {version}; this polydeid reads up to "
            f"{SCHEMA_VERSION} (upgrade polydeid)",
            location=location,
        )


# --- PostgreSQL ------------------------------------------------------------------------------

_PG_SCHEMA = (
    f"""CREATE TABLE IF NOT EXISTS {TABLE} (
        key bytea PRIMARY KEY,
        value_key bytea,
        surrogate text NOT NULL,
        sealed bytea,
        CONSTRAINT {TABLE}_value_key UNIQUE (value_key)
    )""",
    f"CREATE INDEX IF NOT EXISTS {TABLE}_surrogate ON {TABLE} (surrogate)",
)
#: pg_advisory_xact_lock id that serialises schema creation ("polydeid" in ASCII, truncated).
_PG_LOCK_ID = 0x706F6C7964656964 & 0x7FFFFFFFFFFFFFFF


def safe_url(url: str) -> str:
    """``url`` without its password or query (for messages)."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port else ""
        user = f"{parts.username}@" if parts.username else ""
    except ValueError:
        return "postgresql://…"
    return f"{parts.scheme}://{user}{host}{port}{parts.path}"


class PostgresVault(_PerThread, _Revealing):
    """A vault in a PostgreSQL database, shared by any number of processes and machines.

    Unique constraints do the work: ``put`` is one autocommitted ``INSERT … ON CONFLICT DO
    NOTHING``. Serialization failures, deadlocks and lost connections are retried
    (``retries`` times, with back-off; a lost connection is re-opened). Picklable.
    """

    def __init__(self, url: str, *, retries: int = 6, connect_timeout: int = 10) -> None:
        super().__init__()
        self.url = url
        self.retries = retries
        self.connect_timeout = connect_timeout
        self.location = safe_url(url)
        try:
            import psycopg  # noqa: F401
        except ImportError:
            raise ConfigError(
                "a PostgreSQL vault needs psycopg (pip install 'polydeid[postgres]')"
            ) from None
        self._connection()

    def __getstate__(self) -> dict[str, Any]:
        return {"url": self.url, "retries": self.retries, "connect_timeout": self.connect_timeout}

    def __setstate__(self, state: dict[str, Any]) -> None:
        type(self).__init__(
            self, state["url"], retries=state["retries"], connect_timeout=state["connect_timeout"]
        )

    def __repr__(self) -> str:
        return f"PostgresVault({self.location!r})"

    def _open(self) -> Any:
        import psycopg

        last: Exception | None = None
        for attempt in range(self.retries):
            try:
                conn = psycopg.connect(
                    self.url, autocommit=True, connect_timeout=self.connect_timeout
                )
            except psycopg.OperationalError as exc:
                last = exc
                if attempt + 1 < self.retries:
                    time.sleep(min(0.05 * 2**attempt, 0.5))
                continue
            except psycopg.Error:  # e.g. a malformed URL: its text might echo the password
                raise ConfigError("not a usable PostgreSQL URL", location=self.location) from None
            try:
                self._create_schema(conn)
            except BaseException:
                conn.close()
                raise
            return conn
        reason = str(last).strip().splitlines()[0] if last is not None else "unknown"
        raise ConfigError(
            f"cannot connect to the PostgreSQL vault ({type(last).__name__}: {reason})",
            location=self.location,
        )

    def _create_schema(self, conn: Any) -> None:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_PG_LOCK_ID,))
            conn.execute(
                f"CREATE TABLE IF NOT EXISTS {META_TABLE} "
                "(name text PRIMARY KEY, value text NOT NULL)"
            )
            row = conn.execute(
                f"SELECT value FROM {META_TABLE} WHERE name = 'schema_version'"
            ).fetchone()
            _check_version(None if row is None else row[0], self.location)
            for statement in _PG_SCHEMA:
                conn.execute(statement)
            if row is None:
                conn.execute(
                    f"INSERT INTO {META_TABLE} (name, value) VALUES ('schema_version', %s)",
                    (str(SCHEMA_VERSION),),
                )

    def _run(self, action: Callable[[Any], T]) -> T:
        import psycopg

        last: Exception | None = None
        for attempt in range(self.retries):
            conn = self._connection()
            try:
                return action(conn)
            except psycopg.OperationalError as exc:  # serialization, deadlock, connection
                last = exc
                if conn.broken or conn.closed:
                    self._drop_connection()
            except psycopg.InterfaceError as exc:  # used after it closed
                last = exc
                self._drop_connection()
            except psycopg.Error as exc:
                raise TransformError(
                    f"the PostgreSQL vault failed ({type(exc).__name__})", location=self.location
                ) from None
            time.sleep(min(0.02 * 2**attempt, 1.0) * (1 + secrets.randbelow(100) / 100))
        raise TransformError(
            f"the PostgreSQL vault is unavailable ({type(last).__name__}) after "
            f"{self.retries} tries",
            location=self.location,
        )

    def bind_key(self, keys: KeyRing) -> None:
        """See :class:`KeyBoundVault` (a concurrent adoption by another key is refused)."""
        stored, sample = self._run(lambda c: _stored_fingerprint(c, "%s"))
        mine = check_fingerprint(stored, keys, location=self.location, sample=sample)
        if mine is not None and not secrets.compare_digest(
            self._run(lambda c: _adopt_fingerprint(c, "%s", mine)), mine
        ):
            raise _mismatch(self.location)

    def get(self, key: bytes) -> str | None:
        row = self._run(
            lambda c: c.execute(f"SELECT surrogate FROM {TABLE} WHERE key = %s", (key,)).fetchone()
        )
        return None if row is None else str(row[0])

    def put(
        self, key: bytes, surrogate: str, *, value_key: bytes | None, sealed: bytes | None = None
    ) -> bool:
        _check_put(key, surrogate, value_key, sealed)
        rowcount: int = self._run(
            lambda c: (
                c.execute(
                    f"INSERT INTO {TABLE} (key, value_key, surrogate, sealed) "
                    "VALUES (%s, %s, %s, %s) ON CONFLICT DO NOTHING",
                    (key, value_key, surrogate, sealed),
                ).rowcount
            )
        )
        return rowcount == 1

    def sealed_entries(self, surrogate: str) -> list[tuple[bytes, bytes | None]]:
        rows = self._run(
            lambda c: c.execute(
                f"SELECT key, sealed FROM {TABLE} WHERE surrogate = %s ORDER BY key",
                (surrogate,),
            ).fetchall()
        )
        return [(bytes(k), None if s is None else bytes(s)) for k, s in rows]

    def __len__(self) -> int:
        return int(self._run(lambda c: c.execute(f"SELECT count(*) FROM {TABLE}").fetchone())[0])


# --- opening ---------------------------------------------------------------------------------


def is_postgres_url(spec: str) -> bool:
    return spec.strip().lower().startswith(("postgresql://", "postgres://"))


def open_vault(spec: str | os.PathLike[str]) -> SqliteVault | PostgresVault:
    """A ``postgresql://`` (or ``postgres://``) URL → :class:`PostgresVault`; otherwise a
    file path → :class:`SqliteVault` (created if missing; its directory must exist)."""
    text = os.fspath(spec).strip()
    if not text:
        raise ConfigError("the vault is empty: give a file path or a postgresql:// URL")
    if is_postgres_url(text):
        return PostgresVault(text)
    return SqliteVault(Path(text).expanduser())
