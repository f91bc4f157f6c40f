"""The PostgreSQL vault against a throw-away server (tests/pg.py): the same guarantees as the
SQLite vault, plus reconnection after a lost connection."""

from __future__ import annotations

import pickle
import socket

import psycopg
import pytest
from tests import pg
from tests.transform.test_vault_sqlite import (
    KEY,
    ORIGINALS,
    OTHER_KEY,
    PUT_KEYS,
    check_outputs,
    check_puts,
    check_reidentify,
    check_table,
    redact_all,
    run_workers,
)

from polydeid.cli import main
from polydeid.core.errors import ConfigError, DecryptionError, VaultKeyError
from polydeid.transform.crypto import KeyRing
from polydeid.transform.operators import UNIQUE_SURROGATES
from polydeid.transform.policy import parse_policy
from polydeid.transform.redactor import Redactor
from polydeid.transform.vault import (
    FINGERPRINT_ROW,
    META_TABLE,
    SCHEMA_VERSION,
    TABLE,
    PostgresVault,
    Vault,
    identity_key,
    key_fingerprint,
    open_vault,
    reidentify,
)

#: Surrogates for names, tags elsewhere: needs no key.
NAMES_ONLY = parse_policy(
    '[default]\noperator = "tag"\n[categories.PERSON]\noperator = "surrogate"'
)

pytestmark = pytest.mark.postgres

# the throw-away server's fixtures (tests/pg.py), made visible to this module
postgres_url = pg.postgres_url
postgres_database = pg.postgres_database


def pg_rows(url: str) -> list[tuple[bytes, bytes | None, str]]:
    with psycopg.connect(url) as conn:
        return conn.execute(f"SELECT key, value_key, surrogate FROM {TABLE}").fetchall()


def test_put_is_first_writer_wins_on_both_keys(postgres_database):
    vault = PostgresVault(postgres_database)
    assert isinstance(vault, Vault)
    k1, k2, k3, v1, v2 = (bytes([i]) * 32 for i in range(1, 6))
    assert vault.get(k1) is None
    assert vault.put(k1, "Alpha", value_key=v1)
    assert not vault.put(k1, "Beta", value_key=v2)
    assert not vault.put(k2, "Alpha", value_key=v1)
    assert vault.put(k2, "Shared", value_key=None)
    assert vault.put(k3, "Shared", value_key=None)
    assert vault.get(k1) == "Alpha" and len(vault) == 3
    vault.close()
    assert pickle.loads(pickle.dumps(vault)).get(k2) == "Shared"


def test_schema_is_versioned_with_unique_constraints(postgres_database):
    assert isinstance(open_vault(postgres_database), PostgresVault)
    open_vault(postgres_database.replace("postgresql://", "postgres://", 1)).close()
    with psycopg.connect(postgres_database) as conn:
        version = conn.execute(
            f"SELECT value FROM {META_TABLE} WHERE name = 'schema_version'"
        ).fetchone()
        indexes = {
            name: unique
            for name, unique in conn.execute(
                "SELECT c.relname, i.indisunique FROM pg_index i "
                "JOIN pg_class c ON c.oid = i.indexrelid "
                "JOIN pg_class t ON t.oid = i.indrelid WHERE t.relname = %s",
                (TABLE,),
            )
        }
    assert version == (str(SCHEMA_VERSION),)
    assert indexes[f"{TABLE}_value_key"] and indexes[f"{TABLE}_pkey"]
    assert f"{TABLE}_surrogate" in indexes
    with psycopg.connect(postgres_database, autocommit=True) as conn:
        conn.execute(f"UPDATE {META_TABLE} SET value = '99' WHERE name = 'schema_version'")
    with pytest.raises(ConfigError, match="schema version 99"):
        PostgresVault(postgres_database)


def test_missing_server_binaries_fail_with_a_clear_message(monkeypatch):
    monkeypatch.setattr(pg, "_BIN_GLOBS", ())
    monkeypatch.setenv("PATH", "")
    with pytest.raises(pg.PostgresUnavailable, match="make setup"):
        pg.find_bindir()


def test_unreachable_server_is_a_clear_error_without_the_password():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"postgresql://someone:hunter2secret@127.0.0.1:{port}/nothing"
    with pytest.raises(ConfigError, match="cannot connect") as error:
        PostgresVault(url, retries=2)
    assert "hunter2secret" not in str(error.value) and str(port) in str(error.value)


def test_lost_connections_are_reopened(postgres_database):
    vault = PostgresVault(postgres_database)
    assert vault.put(bytes(32), "Alpha", value_key=None)
    with psycopg.connect(postgres_database, autocommit=True) as admin:
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
    assert vault.get(bytes(32)) == "Alpha"  # retried on a new connection
    assert vault.put(bytes([1]) * 32, "Beta", value_key=None)


def test_processes_and_threads_share_one_mapping(postgres_database):
    open_vault(postgres_database).close()
    pairs = run_workers(postgres_database, KEY, processes=3, threads=4)
    assert len(pairs) == 3 * 4 * 2 * len(ORIGINALS)
    chosen = check_outputs(pairs)
    check_table(pg_rows(postgres_database), chosen)
    check_reidentify(PostgresVault(postgres_database), chosen)


def test_racing_puts_from_processes_and_threads_keep_both_constraints(postgres_database):
    open_vault(postgres_database).close()
    attempts = run_workers(postgres_database, KEY, processes=3, threads=4, job="put")
    assert len(attempts) == 3 * 4 * PUT_KEYS
    check_puts(attempts, PostgresVault(postgres_database))


def test_runs_are_consistent_and_keys_do_not_cross(postgres_database):
    first = check_outputs(run_workers(postgres_database, KEY, processes=1, threads=1))
    keys_first = {bytes(k) for k, _, _ in pg_rows(postgres_database)}
    second = check_outputs(run_workers(postgres_database, KEY, processes=1, threads=2, seed=9))
    assert second == first
    assert {bytes(k) for k, _, _ in pg_rows(postgres_database)} == keys_first
    # another key (or none) is refused before it writes: the vault holds the key's fingerprint
    for key in (OTHER_KEY, None):
        with pytest.raises(VaultKeyError) as refused:
            Redactor(NAMES_ONLY, key=key, vault=PostgresVault(postgres_database))
        assert refused.value.code == "PD111"
    assert {bytes(k) for k, _, _ in pg_rows(postgres_database)} == keys_first
    with psycopg.connect(postgres_database) as conn:
        stored = conn.execute(
            f"SELECT value FROM {META_TABLE} WHERE name = %s", (FINGERPRINT_ROW,)
        ).fetchone()
    assert stored == (key_fingerprint(KeyRing.from_master(KEY)),)
    vault = PostgresVault(postgres_database)
    for i, surrogate in first.items():
        if ORIGINALS[i][0] in UNIQUE_SURROGATES:
            with pytest.raises(DecryptionError):
                reidentify(vault, surrogate, OTHER_KEY)


def test_a_vault_without_fingerprint_adopts_the_first_key(postgres_database):
    Redactor(NAMES_ONLY, key=None, vault=PostgresVault(postgres_database))  # binds nothing
    with psycopg.connect(postgres_database) as conn:
        assert not conn.execute(
            f"SELECT * FROM {META_TABLE} WHERE name = %s", (FINGERPRINT_ROW,)
        ).fetchall()
    Redactor(NAMES_ONLY, key=KEY, vault=PostgresVault(postgres_database))  # adopted
    Redactor(NAMES_ONLY, key=KEY, vault=PostgresVault(postgres_database))
    with pytest.raises(VaultKeyError):
        Redactor(NAMES_ONLY, key=OTHER_KEY, vault=PostgresVault(postgres_database))


def test_reidentify_command_reads_a_postgres_vault(postgres_database, tmp_path, capsys):
    from polydeid.transform.policy import load_policy
    from polydeid.transform.redactor import Redactor

    vault = PostgresVault(postgres_database)
    chosen = dict(redact_all(Redactor(load_policy("surrogate"), key=KEY, vault=vault), [0, 13]))
    ring = KeyRing.from_master(KEY)
    assert vault.get(identity_key(ring.vault, *ORIGINALS[0])) == chosen[0]
    key_file = tmp_path / "key"
    key_file.write_text(KEY.hex())
    code = main(
        ["reidentify", "--vault", postgres_database, "--key-file", str(key_file), chosen[0]]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert out == f"{chosen[0]}\t{ORIGINALS[0][0].value}\t{ORIGINALS[0][1]}\n"
