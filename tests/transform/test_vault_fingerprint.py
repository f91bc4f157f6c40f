"""The vault's key fingerprint and file creation: another key (or none) is refused with a
coded error before anything is written; a vault file appears only when something is written,
mode 0600."""

from __future__ import annotations

import json
import sqlite3
import stat
from pathlib import Path

import pytest

from polydeid.cli import main
from polydeid.core.errors import VaultKeyError
from polydeid.core.segments import Segment
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category
from polydeid.transform.crypto import KeyRing, derive_key
from polydeid.transform.policy import load_policy, parse_policy
from polydeid.transform.redactor import Redactor
from polydeid.transform.vault import (
    FINGERPRINT_ROW,
    META_TABLE,
    TABLE,
    MemoryVault,
    SqliteVault,
    key_fingerprint,
)

KEY = bytes(range(32))
OTHER_KEY = bytes(range(1, 33))
NAME = "Zebedee Quartermain"  # invented
TEXT = f"Seen: {NAME}."


#: Surrogates for names, tags elsewhere: needs no key (``surrogate`` shifts dates with one).
NAMES_ONLY = parse_policy(
    '[default]\noperator = "tag"\n[categories.PERSON]\noperator = "surrogate"'
)


def _redact(vault: object, key: bytes | None) -> str:
    redactor = Redactor(NAMES_ONLY, key=key, vault=vault)  # type: ignore[arg-type]
    span = Span(6, 6 + len(NAME), Category.PERSON, "test.v1")
    return redactor.redact(Segment(TEXT, lang="en"), [span]).text


def _rows(path: Path, sql: str) -> list[tuple[object, ...]]:
    with sqlite3.connect(path) as conn:
        return list(conn.execute(sql).fetchall())


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_fingerprint_is_derived_and_reveals_no_key() -> None:
    keys = KeyRing.from_master(KEY)
    fingerprint = key_fingerprint(keys)
    assert fingerprint == key_fingerprint(KeyRing.from_master(KEY))  # stable
    assert fingerprint != key_fingerprint(KeyRing.from_master(OTHER_KEY))
    secrets = {KEY.hex(), keys.vault.hex(), keys.hash.hex(), keys.surrogate.hex()}
    secrets.add(derive_key(keys.vault, "vault-fingerprint.v1").hex())
    assert len(fingerprint) == 64 and not any(fingerprint in s or s in fingerprint for s in secrets)


def test_vault_file_is_created_by_the_first_write_with_mode_0600(tmp_path: Path) -> None:
    path = tmp_path / "vault.sqlite"
    vault = SqliteVault(path)
    redactor = Redactor(load_policy("surrogate"), key=KEY, vault=vault)
    assert not path.exists()  # opening and binding the key write nothing
    span = Span(6, 6 + len(NAME), Category.PERSON, "test.v1")
    redactor.redact(Segment(TEXT, lang="en"), [span])
    assert path.is_file() and _mode(path) == 0o600
    for extra in tmp_path.glob("vault.sqlite-*"):  # WAL and shared-memory files
        assert _mode(extra) & 0o077 == 0, extra.name
    stored = _rows(path, f"SELECT value FROM {META_TABLE} WHERE name = '{FINGERPRINT_ROW}'")
    assert stored == [(key_fingerprint(KeyRing.from_master(KEY)),)]
    vault.close()


def test_a_vault_that_is_only_read_is_never_created(tmp_path: Path) -> None:
    path = tmp_path / "vault.sqlite"
    vault = SqliteVault(path)
    Redactor(load_policy("tag"), key=KEY, vault=vault)
    assert vault.get(bytes(32)) is None and len(vault) == 0 and vault.sealed_entries("x") == []
    assert not path.exists()


def test_another_key_is_refused_before_it_writes(tmp_path: Path) -> None:
    path = tmp_path / "vault.sqlite"
    first = _redact(SqliteVault(path), KEY)
    before = _rows(path, f"SELECT key, surrogate FROM {TABLE} ORDER BY key")
    with pytest.raises(VaultKeyError) as refused:
        _redact(SqliteVault(path), OTHER_KEY)
    assert refused.value.code == "PD111" and str(path) in str(refused.value)
    with pytest.raises(VaultKeyError):
        _redact(SqliteVault(path), None)  # no key for a vault written with one
    assert _rows(path, f"SELECT key, surrogate FROM {TABLE} ORDER BY key") == before
    assert _redact(SqliteVault(path), KEY) == first  # the right key still works


def test_a_vault_without_fingerprint_adopts_the_first_key(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    _redact(SqliteVault(path), None)  # keyless: nothing sealed, no fingerprint
    assert not _rows(path, f"SELECT * FROM {META_TABLE} WHERE name = '{FINGERPRINT_ROW}'")
    first = _redact(SqliteVault(path), KEY)  # adopted
    assert len(_rows(path, f"SELECT * FROM {META_TABLE} WHERE name = '{FINGERPRINT_ROW}'")) == 1
    with pytest.raises(VaultKeyError):
        _redact(SqliteVault(path), OTHER_KEY)
    assert _redact(SqliteVault(path), KEY) == first


def test_adoption_is_refused_for_a_key_that_cannot_unseal_the_vault(tmp_path: Path) -> None:
    """A vault written with a key before fingerprints existed: its sealed originals tell a
    wrong key apart even without a fingerprint."""
    path = tmp_path / "old.sqlite"
    _redact(SqliteVault(path), KEY)
    with sqlite3.connect(path) as conn:  # as written by a polydeid without fingerprints
        conn.execute(f"DELETE FROM {META_TABLE} WHERE name = ?", (FINGERPRINT_ROW,))
    with pytest.raises(VaultKeyError):
        _redact(SqliteVault(path), OTHER_KEY)
    assert not _rows(path, f"SELECT * FROM {META_TABLE} WHERE name = '{FINGERPRINT_ROW}'")
    _redact(SqliteVault(path), KEY)  # the right key adopts it
    assert len(_rows(path, f"SELECT * FROM {META_TABLE} WHERE name = '{FINGERPRINT_ROW}'")) == 1


def test_a_memory_vault_shared_by_two_keys_is_refused() -> None:
    vault = MemoryVault()
    _redact(vault, KEY)
    with pytest.raises(VaultKeyError):
        _redact(vault, OTHER_KEY)


# --- the command line ------------------------------------------------------------------------


@pytest.fixture
def job(tmp_path: Path) -> dict[str, Path]:
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps({"id": 1, "text": "Tel 0772 123456"}) + "\n", "utf-8")
    key, other = tmp_path / "key", tmp_path / "other"
    key.write_text(KEY.hex())
    other.write_text(OTHER_KEY.hex())
    return {"src": src, "key": key, "other": other, "dir": tmp_path}


def _redact_cli(job: dict[str, Path], out: Path, vault: Path, *extra: str) -> int:
    args = ["redact", str(job["src"]), "-o", str(out), "--profile", "rules"]
    return main([*args, "--vault", str(vault), *extra])


def test_cli_configuration_failure_creates_no_vault(job: dict[str, Path], capsys) -> None:
    vault, out = job["dir"] / "v.sqlite", job["dir"] / "out.jsonl"
    for extra in (
        ["--policy", "no-such-policy", "--key-file", str(job["key"])],
        ["--policy", "surrogate", "--key-file", str(job["dir"] / "missing-key")],
        ["--policy", "surrogate", "--key-file", str(job["key"]), "--country", "QQ"],
        ["--policy", "hash"],  # needs a key
    ):
        assert _redact_cli(job, out, vault, *extra) == 2, extra
        assert not vault.exists() and not out.exists(), extra
    assert "Traceback" not in capsys.readouterr().err


def test_cli_wrong_key_exits_2_and_writes_nothing(job: dict[str, Path], capsys) -> None:
    vault, out = job["dir"] / "v.sqlite", job["dir"] / "out.jsonl"
    assert _redact_cli(job, out, vault, "--policy", "surrogate", "--key-file", str(job["key"])) == 0
    assert _mode(vault) == 0o600
    written, entries = out.read_bytes(), _rows(vault, f"SELECT * FROM {TABLE}")
    out.unlink()
    capsys.readouterr()
    assert (
        _redact_cli(job, out, vault, "--policy", "surrogate", "--key-file", str(job["other"])) == 2
    )
    err = capsys.readouterr().err
    assert "PD111" in err and "0772" not in err and OTHER_KEY.hex() not in err
    assert not out.exists() and _rows(vault, f"SELECT * FROM {TABLE}") == entries
    assert _redact_cli(job, out, vault, "--policy", "surrogate", "--key-file", str(job["key"])) == 0
    assert out.read_bytes() == written


def test_batch_wrong_key_exits_2_before_any_output(job: dict[str, Path], capsys) -> None:
    vault, first, second = job["dir"] / "v.sqlite", job["dir"] / "out1", job["dir"] / "out2"
    args = ["batch", str(job["src"]), "--profile", "rules", "--no-progress", "--workers", "1"]
    keyed = ["--policy", "surrogate", "--vault", str(vault)]
    assert main([*args[:2], str(first), *args[2:], *keyed, "--key-file", str(job["key"])]) == 0
    assert _mode(vault) == 0o600
    entries = _rows(vault, f"SELECT * FROM {TABLE}")
    capsys.readouterr()
    assert main([*args[:2], str(second), *args[2:], *keyed, "--key-file", str(job["other"])]) == 2
    assert "PD111" in capsys.readouterr().err
    assert not second.exists() and _rows(vault, f"SELECT * FROM {TABLE}") == entries


def test_batch_configuration_failure_creates_no_vault(job: dict[str, Path]) -> None:
    vault, out = job["dir"] / "v.sqlite", job["dir"] / "out"
    args = ["batch", str(job["src"]), str(out), "--profile", "rules", "--no-progress"]
    assert main([*args, "--policy", "hash", "--vault", str(vault)]) == 2  # needs a key
    assert main([*args, "--policy", "nope", "--vault", str(vault)]) == 2
    assert not vault.exists() and not out.exists()
