"""A throw-away PostgreSQL server for tests.

Use it from a test module by binding the fixtures in the module (an assignment rather than
an import keeps ruff's F811 quiet where a test takes the fixture as a parameter)::

    from tests import pg

    postgres_url = pg.postgres_url            # session: the server's empty database
    postgres_database = pg.postgres_database  # per test: a fresh database, dropped after

``postgres_url`` starts the server once per process (modules that bind the fixture share it)
and yields the URL of the empty database ``polydeid_test``; ``postgres_database`` needs
``postgres_url`` bound too. :class:`PostgresServer` does the same outside pytest
(``with PostgresServer() as url: …``).

The server runs from a temporary directory owned by user ``postgres`` (via ``runuser -u
postgres --`` when the tests run as root), trusts local connections (socket and 127.0.0.1
only), listens on a free port, and is stopped and removed at the end. fsync is off: this is
for tests only. When the PostgreSQL binaries are missing the fixtures FAIL (``make setup``
installs them) rather than skip.
"""

from __future__ import annotations

import contextlib
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

SERVER_USER = "postgres"
DATABASE = "polydeid_test"
_BIN_GLOBS = ("/usr/lib/postgresql/*/bin", "/usr/local/pgsql/bin", "/opt/homebrew/bin")


class PostgresUnavailable(RuntimeError):
    """The binaries are missing or the server did not start."""


def find_bindir() -> Path:
    """The directory holding ``initdb`` and ``pg_ctl`` (newest Debian version first)."""
    candidates: list[Path] = []
    for pattern in _BIN_GLOBS:
        found = sorted(glob.glob(pattern), key=_version_key, reverse=True)
        candidates.extend(Path(p) for p in found)
    which = shutil.which("pg_ctl")
    if which:
        candidates.append(Path(which).parent)
    for path in candidates:
        if (path / "initdb").is_file() and (path / "pg_ctl").is_file():
            return path
    raise PostgresUnavailable(
        "PostgreSQL server binaries (initdb, pg_ctl) not found in /usr/lib/postgresql/*/bin "
        "or on PATH; install them with `make setup` (Debian package: postgresql)"
    )


def _version_key(path: str) -> tuple[int, ...]:
    parts = Path(path).parent.name.split(".")
    return tuple(int(p) for p in parts if p.isdigit()) or (0,)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class PostgresServer:
    """A PostgreSQL cluster in a temporary directory; ``start()`` then ``stop()``."""

    def __init__(self) -> None:
        self.bindir = find_bindir()
        self.as_root = os.geteuid() == 0
        self.base: Path | None = None
        self.port = 0
        self.running = False

    @property
    def data(self) -> Path:
        assert self.base is not None
        return self.base / "data"

    def _as_server_user(self, argv: list[str]) -> list[str]:
        return ["runuser", "-u", SERVER_USER, "--", *argv] if self.as_root else argv

    def _run(self, argv: list[str], *, what: str, timeout: float = 60) -> None:
        proc = subprocess.run(
            self._as_server_user(argv),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        if proc.returncode != 0:
            raise PostgresUnavailable(
                f"{what} failed (exit {proc.returncode}): {proc.stderr.strip()[-2000:]}"
            )

    def start(self) -> str:
        """Create the cluster and start the server; the URL of an empty database."""
        self.base = Path(tempfile.mkdtemp(prefix="polydeid-pg-"))
        if self.as_root:
            try:
                entry = pwd.getpwnam(SERVER_USER)
            except KeyError:
                raise PostgresUnavailable(
                    f"running as root but there is no {SERVER_USER!r} user to run the server"
                ) from None
            os.chown(self.base, entry.pw_uid, entry.pw_gid)
        self._run(
            [
                str(self.bindir / "initdb"),
                "-D",
                str(self.data),
                "-U",
                "postgres",
                "--auth=trust",
                "--encoding=UTF8",
                "--locale=C",
                "--no-sync",
            ],
            what="initdb",
        )
        with (self.data / "pg_hba.conf").open("w") as hba:  # local socket and loopback only
            hba.write(
                "local all all trust\nhost all all 127.0.0.1/32 trust\nhost all all ::1/128 trust\n"
            )
        if self.as_root:
            entry = pwd.getpwnam(SERVER_USER)
            os.chown(self.data / "pg_hba.conf", entry.pw_uid, entry.pw_gid)
        last: Exception | None = None
        for _ in range(3):  # the free port can be taken between the probe and the start
            self.port = free_port()
            options = (
                f"-p {self.port} -k {self.base} -c listen_addresses=127.0.0.1 "
                "-c fsync=off -c synchronous_commit=off -c full_page_writes=off "
                "-c max_connections=200"
            )
            try:
                self._run(
                    [
                        str(self.bindir / "pg_ctl"),
                        "-D",
                        str(self.data),
                        "-l",
                        str(self.base / "server.log"),
                        "-w",
                        "-t",
                        "60",
                        "-o",
                        options,
                        "start",
                    ],
                    what="pg_ctl start",
                    timeout=90,
                )
            except PostgresUnavailable as exc:
                last = exc
                continue
            self.running = True
            break
        else:
            raise PostgresUnavailable(f"the server did not start: {last}; log: {self.log()}")
        self.create_database(DATABASE)
        return self.url(DATABASE)

    def log(self) -> str:
        if self.base is None:
            return ""
        with contextlib.suppress(OSError):
            return (self.base / "server.log").read_text(errors="replace")[-2000:]
        return ""

    def url(self, database: str) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def _psql(self, sql: str) -> None:
        self._run(
            [
                str(self.bindir / "psql"),
                "-X",
                "-q",
                "-v",
                "ON_ERROR_STOP=1",
                "-h",
                "127.0.0.1",
                "-p",
                str(self.port),
                "-U",
                "postgres",
                "-d",
                "postgres",
                "-c",
                sql,
            ],
            what="psql",
        )

    def create_database(self, name: str) -> str:
        """Create database ``name`` (an identifier of letters, digits and _); its URL."""
        if not name.replace("_", "").isalnum():
            raise ValueError("database names here are letters, digits and _ only")
        self._psql(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def drop_database(self, name: str) -> None:
        if not name.replace("_", "").isalnum():
            raise ValueError("database names here are letters, digits and _ only")
        self._psql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def stop(self) -> None:
        """Stop the server (immediately: it is throw-away) and remove its directory."""
        try:
            if self.running:
                with contextlib.suppress(PostgresUnavailable, subprocess.TimeoutExpired):
                    self._run(
                        [
                            str(self.bindir / "pg_ctl"),
                            "-D",
                            str(self.data),
                            "-m",
                            "immediate",
                            "-w",
                            "stop",
                        ],
                        what="pg_ctl stop",
                    )
                self.running = False
        finally:
            if self.base is not None:
                shutil.rmtree(self.base, ignore_errors=True)
                self.base = None

    def __enter__(self) -> str:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc: object) -> None:
        self.stop()


class _Shared:
    """The process's one test server and how many session fixtures hold it."""

    lock = threading.Lock()
    server: PostgresServer | None = None
    users = 0


def _acquire() -> PostgresServer:
    """The process's test server, started on first use (the fixture imported into several
    modules gives several session fixtures: they share it)."""
    with _Shared.lock:
        if _Shared.server is None:
            server = PostgresServer()
            try:
                server.start()
            except BaseException:
                server.stop()
                raise
            _Shared.server = server
        _Shared.users += 1
        return _Shared.server


def _release() -> None:
    with _Shared.lock:
        _Shared.users -= 1
        if _Shared.server is not None and _Shared.users <= 0:
            server, _Shared.server = _Shared.server, None
            server.stop()


def shared_server() -> PostgresServer:
    """The running test server (inside a test that uses ``postgres_url``)."""
    if _Shared.server is None:
        raise PostgresUnavailable("no test server is running; request the postgres_url fixture")
    return _Shared.server


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    """URL of an empty database ``polydeid_test`` on a throw-away server, for the session.

    FAILS (does not skip) when PostgreSQL cannot run here, saying why.
    """
    try:
        server = _acquire()
    except (PostgresUnavailable, OSError, subprocess.TimeoutExpired) as exc:
        pytest.fail(f"PostgreSQL test server unavailable: {exc}", pytrace=False)
    try:
        yield server.url(DATABASE)
    finally:
        _release()


@pytest.fixture
def postgres_database(postgres_url: str) -> Iterator[str]:
    """URL of a fresh database for one test, dropped after it (import ``postgres_url`` too)."""
    server = shared_server()
    name = f"t_{uuid.uuid4().hex[:12]}"
    url = server.create_database(name)
    try:
        yield url
    finally:
        with contextlib.suppress(PostgresUnavailable, subprocess.TimeoutExpired):
            server.drop_database(name)
