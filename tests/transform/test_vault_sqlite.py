"""The SQLite vault: atomic first-writer-wins, many processes and threads, sealing, schema.

The concurrency helpers here (``run_workers``, ``check_shared_vault`` …) are shared with the
PostgreSQL tests. Worker processes are spawned: they import this module by name, so the
repository root is put on ``sys.path`` first.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import random
import sqlite3
import sys
import threading
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from polydeid.core.errors import ConfigError, DecryptionError, TransformError, VaultKeyError
from polydeid.core.segments import Segment
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category
from polydeid.transform.crypto import KeyRing
from polydeid.transform.operators import UNIQUE_SURROGATES
from polydeid.transform.vault import (
    META_TABLE,
    SCHEMA_VERSION,
    TABLE,
    MemoryVault,
    SqliteVault,
    Vault,
    identity_key,
    open_vault,
    reidentify,
    seal_original,
)

ROOT = Path(__file__).resolve().parents[2]
KEY = bytes(range(32))
OTHER_KEY = bytes(range(1, 33))

#: Synthetic originals (category, text); every one normalises differently.
ORIGINALS: tuple[tuple[Category, str], ...] = (
    *(
        (Category.PERSON, name)
        for name in (
            "Nakato Sarah",
            "Okello James",
            "Achieng Mary",
            "Mugisha Peter",
            "Wanjiru Grace",
            "Kato Brian",
            "Auma Esther",
            "Ssempala David",
            "Nabirye Ruth",
            "Opio Samuel",
            "Atim Florence",
            "Byaruhanga Moses",
        )
    ),
    *(
        (Category.CONTACT_PHONE, phone)
        for phone in (
            "0772 123456",
            "0701 998877",
            "0753 441122",
            "0782 665544",
            "0712 303030",
        )
    ),
    *((Category.ID_RECORD, mrn) for mrn in ("MRN 4459812", "MRN 7781230", "MRN 1029384")),
    *((Category.AGE, age) for age in ("45", "62", "7")),
)
_PREFIX, _SUFFIX = "Seen: ", " today."


def redact_all(redactor: Any, order: list[int]) -> list[tuple[int, str]]:
    """(original index, replacement) for each original, in ``order``."""
    out = []
    for i in order:
        category, text = ORIGINALS[i]
        segment = Segment(f"{_PREFIX}{text}{_SUFFIX}", lang="en")
        span = Span(len(_PREFIX), len(_PREFIX) + len(text), category, "test.v1")
        result = redactor.redact(segment, [span]).text
        assert result.startswith(_PREFIX) and result.endswith(_SUFFIX)
        out.append((i, result[len(_PREFIX) : -len(_SUFFIX)]))
    return out


def _redact_job(spec: str, key: bytes, seed: int, threads: int) -> Any:
    from polydeid.transform.policy import load_policy
    from polydeid.transform.redactor import Redactor

    redactor = Redactor(load_policy("surrogate"), key=key, vault=open_vault(spec))

    def run(n: int) -> list[tuple[int, str]]:
        order = list(range(len(ORIGINALS))) * 2
        random.Random(seed * 100 + n).shuffle(order)
        return redact_all(redactor, order)

    return run


PUT_KEYS = 40
PUT_VALUES = 60


def _put_job(spec: str, key: bytes, seed: int, threads: int) -> Any:
    """Raw puts racing on purpose: every thread offers its own surrogate for every key, with
    value keys from a small shared pool, so both constraints are fought over."""
    vault = open_vault(spec)

    def run(n: int) -> list[tuple[int, str, int, bool]]:
        rng = random.Random(seed * 100 + n)
        order = list(range(PUT_KEYS))
        rng.shuffle(order)
        out = []
        for k in order:
            v = rng.randrange(PUT_VALUES)
            surrogate = f"s-{seed}-{n}-{k}"
            won = vault.put(bytes([k]) * 32, surrogate, value_key=bytes([200, v]) * 16)
            out.append((k, surrogate, v, won))
        return out

    return run


def worker_process(
    job: str, spec: str, key: bytes, seed: int, threads: int, barrier: Any, results: Any
) -> None:
    """One worker process: ``threads`` threads run ``job`` on the vault at ``spec`` together
    (one redactor and one vault object per process, a connection per thread)."""
    try:
        make = {"redact": _redact_job, "put": _put_job}[job]
        run = make(spec, key, seed, threads)
        start = threading.Barrier(threads)
        found: list[Any] = []
        lock = threading.Lock()

        def thread(n: int) -> None:
            start.wait()
            pairs = run(n)
            with lock:
                found.extend(pairs)

        if barrier is not None:
            barrier.wait(timeout=60)
        pool = [threading.Thread(target=thread, args=(n,)) for n in range(threads)]
        for t in pool:
            t.start()
        for t in pool:
            t.join()
        results.put(("ok", found))
    except BaseException as exc:  # report to the parent instead of dying silently
        results.put(("error", f"{type(exc).__name__}: {exc}"))


def run_workers(
    spec: str, key: bytes, *, processes: int, threads: int, seed: int = 1, job: str = "redact"
) -> list[Any]:
    """Spawn ``processes`` workers × ``threads`` threads running ``job`` on the vault
    ``spec``; everything they return."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))  # so spawned children can import this module
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(processes) if processes > 1 else None
    results = ctx.Queue()
    procs = [
        ctx.Process(
            target=worker_process,
            args=(job, spec, key, seed + p, threads, barrier, results),
        )
        for p in range(processes)
    ]
    for p in procs:
        p.start()
    gathered: list[Any] = []
    try:
        for _ in procs:
            status, payload = results.get(timeout=120)
            assert status == "ok", payload
            gathered.extend(payload)
    finally:
        for p in procs:
            p.join(timeout=30)
            if p.is_alive():
                p.kill()
    assert all(p.exitcode == 0 for p in procs)
    return gathered


def check_puts(attempts: list[tuple[int, str, int, bool]], vault: Any) -> None:
    """Exactly one winning put per key, each value key won at most once, and the vault holds
    exactly the winners."""
    winners: dict[int, list[tuple[str, int]]] = defaultdict(list)
    for k, surrogate, v, won in attempts:
        if won:
            winners[k].append((surrogate, v))
    assert all(len(w) == 1 for w in winners.values()), "two puts won the same key"
    values = [w[0][1] for w in winners.values()]
    assert len(values) == len(set(values)), "two puts won the same value key"
    assert len(vault) == len(winners)
    for k in range(PUT_KEYS):
        stored = vault.get(bytes([k]) * 32)
        assert stored == (winners[k][0][0] if k in winners else None)


def check_outputs(pairs: list[tuple[int, str]]) -> dict[int, str]:
    """Every original got exactly one surrogate, never a tag and never itself; every
    unique-category surrogate belongs to exactly one original. Returns index → surrogate."""
    by_original: dict[int, set[str]] = defaultdict(set)
    for i, surrogate in pairs:
        by_original[i].add(surrogate)
    assert set(by_original) == set(range(len(ORIGINALS)))
    assert all(len(s) == 1 for s in by_original.values()), "an original got two surrogates"
    chosen = {i: next(iter(s)) for i, s in by_original.items()}
    owners: dict[tuple[Category, str], set[int]] = defaultdict(set)
    for i, surrogate in chosen.items():
        category, original = ORIGINALS[i]
        assert surrogate != original and not surrogate.startswith("[")
        if category in UNIQUE_SURROGATES:
            owners[(category, surrogate)].add(i)
    assert all(len(o) == 1 for o in owners.values()), "a unique surrogate got two originals"
    return chosen


def check_table(rows: list[tuple[bytes, bytes | None, str]], chosen: dict[int, str]) -> None:
    """The vault table (key, value_key, surrogate) agrees with the outputs."""
    ring = KeyRing.from_master(KEY)
    table = {bytes(k): (None if v is None else bytes(v), s) for k, v, s in rows}
    assert len(table) == len(rows) == len(ORIGINALS)
    for i, (category, original) in enumerate(ORIGINALS):
        value_key, surrogate = table[identity_key(ring.vault, category, original)]
        assert surrogate == chosen[i]
        if category in UNIQUE_SURROGATES:
            assert value_key == identity_key(ring.vault, category, surrogate)
        else:
            assert value_key is None
    unique = [s for v, s in table.values() if v is not None]
    assert len(unique) == len(set(unique))


def check_reidentify(vault: Any, chosen: dict[int, str]) -> None:
    for i, surrogate in chosen.items():
        assert ORIGINALS[i] in reidentify(vault, surrogate, KEY)


def sqlite_rows(path: Path) -> list[tuple[bytes, bytes | None, str]]:
    with sqlite3.connect(path) as conn:
        return conn.execute(f"SELECT key, value_key, surrogate FROM {TABLE}").fetchall()


def sqlite_keys(path: Path) -> set[bytes]:
    return {bytes(k) for k, _, _ in sqlite_rows(path)}


# --- the basics -------------------------------------------------------------------------------


@pytest.fixture
def vault_path(tmp_path: Path) -> Path:
    return tmp_path / "vault.sqlite"


def test_put_is_first_writer_wins_on_both_keys(vault_path):
    vault = SqliteVault(vault_path)
    assert isinstance(vault, Vault)
    k1, k2, k3, v1, v2 = (bytes([i]) * 32 for i in range(1, 6))
    assert vault.get(k1) is None
    assert vault.put(k1, "Alpha", value_key=v1)
    assert not vault.put(k1, "Beta", value_key=v2)  # the original already has one
    assert not vault.put(k2, "Alpha", value_key=v1)  # the surrogate is another's
    assert vault.put(k2, "Shared", value_key=None)
    assert vault.put(k3, "Shared", value_key=None)  # shared on purpose
    assert vault.get(k1) == "Alpha" and vault.get(k2) == "Shared" and len(vault) == 3
    vault.close()
    again = SqliteVault(vault_path)  # persisted
    assert again.get(k1) == "Alpha" and len(again) == 3


def _written(vault_path):
    """A vault file with one entry (a vault is created by its first write)."""
    vault = SqliteVault(vault_path)
    vault.put(bytes(32), "Alpha", value_key=None)
    vault.close()


def test_schema_is_versioned_indexed_and_in_wal_mode(vault_path):
    _written(vault_path)
    with sqlite3.connect(vault_path) as conn:
        version = conn.execute(
            f"SELECT value FROM {META_TABLE} WHERE name = 'schema_version'"
        ).fetchone()
        indexes = {r[1] for r in conn.execute(f"PRAGMA index_list({TABLE})")}
        unique = {r[1] for r in conn.execute(f"PRAGMA index_list({TABLE})") if r[2]}
        mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
    assert version == (str(SCHEMA_VERSION),)
    assert f"{TABLE}_value_key" in unique and f"{TABLE}_surrogate" in indexes
    assert mode == "wal"


def test_newer_schema_is_refused(vault_path):
    _written(vault_path)
    with sqlite3.connect(vault_path) as conn:
        conn.execute(f"UPDATE {META_TABLE} SET value = '99' WHERE name = 'schema_version'")
    with pytest.raises(ConfigError, match="schema version 99"):
        SqliteVault(vault_path)


def test_open_vault_paths_and_errors(tmp_path):
    vault = open_vault(str(tmp_path / "v.db"))
    assert isinstance(vault, SqliteVault) and not (tmp_path / "v.db").exists()  # not yet written
    with pytest.raises(ConfigError, match="directory does not exist") as missing:
        open_vault(tmp_path / "nowhere" / "v.db")
    assert "nowhere" in str(missing.value)  # located
    assert not (tmp_path / "nowhere").exists()
    with pytest.raises(ConfigError, match="is a directory"):
        open_vault(tmp_path)
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not a database, just some bytes " * 50)
    with pytest.raises(ConfigError, match="SQLite vault"):
        open_vault(junk)
    with pytest.raises(ConfigError):
        open_vault("  ")


def test_vault_is_picklable_and_reopens(vault_path):
    vault = SqliteVault(vault_path)
    vault.put(bytes(32), "Alpha", value_key=None)
    copy = pickle.loads(pickle.dumps(vault))
    assert copy.get(bytes(32)) == "Alpha" and copy.path == vault.path


def test_threads_racing_for_one_key_store_one(vault_path):
    vault = SqliteVault(vault_path)
    wins: list[bool] = []
    start = threading.Barrier(8)

    def put(i: int) -> None:
        start.wait()
        wins.append(vault.put(bytes(32), f"s{i}", value_key=bytes([i + 1]) * 32))

    pool = [threading.Thread(target=put, args=(i,)) for i in range(8)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    assert wins.count(True) == 1 and len(vault) == 1


def test_connections_of_ended_threads_are_closed(vault_path):
    vault = SqliteVault(vault_path)
    for i in range(6):
        t = threading.Thread(
            target=vault.put, args=(bytes([i]) * 32, f"s{i}"), kwargs={"value_key": None}
        )
        t.start()
        t.join()
    assert len(vault) == 6 and len(vault._all) <= 2  # this thread's and the last one's
    vault.close()
    assert vault._all == [] and vault.get(bytes(32)) == "s0"  # re-opens on use


def _forked_put(vault: SqliteVault) -> None:
    assert vault.put(bytes([7]) * 32, "FromChild", value_key=None)


@pytest.mark.skipif(sys.platform == "win32", reason="fork is POSIX only")
def test_connections_are_reopened_after_fork(vault_path):
    vault = SqliteVault(vault_path)
    assert vault.put(bytes(32), "FromParent", value_key=None)  # the parent's connection
    child = multiprocessing.get_context("fork").Process(target=_forked_put, args=(vault,))
    child.start()
    child.join(timeout=30)
    assert child.exitcode == 0
    assert vault.get(bytes([7]) * 32) == "FromChild" and vault.get(bytes(32)) == "FromParent"


# --- sealing and re-identification ------------------------------------------------------------


_KEYLESS_POLICY = """
[default]
operator = "tag"
[categories.PERSON]
operator = "surrogate"
"""


def _redactor(vault: Any, key: bytes | None = KEY) -> Any:
    from polydeid.transform.policy import load_policy, parse_policy
    from polydeid.transform.redactor import Redactor

    policy = load_policy("surrogate") if key else parse_policy(_KEYLESS_POLICY)
    return Redactor(policy, key=key, vault=vault)


def test_file_holds_no_raw_identifier(vault_path):
    vault = SqliteVault(vault_path)
    chosen = dict(redact_all(_redactor(vault), list(range(len(ORIGINALS)))))
    vault.close()
    data = b"".join(p.read_bytes() for p in vault_path.parent.glob("vault.sqlite*"))
    for category, original in ORIGINALS:
        if category is not Category.AGE:  # two digits occur in any binary file
            assert original.encode() not in data
            assert original.lower().encode() not in data
    assert chosen[0].encode() in data  # surrogates are fake text, stored in clear


def test_reidentify_returns_the_original_with_the_key_only(vault_path):
    vault = SqliteVault(vault_path)
    chosen = dict(redact_all(_redactor(vault), list(range(len(ORIGINALS)))))
    check_reidentify(vault, chosen)
    person = chosen[0]
    assert vault.reveal(person, KEY) == [ORIGINALS[0]]
    assert vault.reveal(person, KEY, Category.PERSON) == [ORIGINALS[0]]
    assert vault.reveal(person, KEY, Category.CONTACT_PHONE) == []
    assert reidentify(vault, "Nobody Atall", KEY) == []
    with pytest.raises(DecryptionError) as wrong:
        reidentify(vault, person, OTHER_KEY)
    assert ORIGINALS[0][1] not in str(wrong.value) and person not in str(wrong.value)


def test_tampered_or_moved_seal_is_a_decryption_error(vault_path):
    vault = SqliteVault(vault_path)
    chosen = dict(redact_all(_redactor(vault), [0, 1]))
    with sqlite3.connect(vault_path) as conn:
        (sealed,) = conn.execute(
            f"SELECT sealed FROM {TABLE} WHERE surrogate = ?", (chosen[0],)
        ).fetchone()
        flipped = bytes(sealed[:-1]) + bytes([sealed[-1] ^ 1])
        conn.execute(f"UPDATE {TABLE} SET sealed = ? WHERE surrogate = ?", (flipped, chosen[0]))
        # a valid seal copied onto another entry does not open there (bound to its key)
        conn.execute(f"UPDATE {TABLE} SET sealed = ? WHERE surrogate = ?", (sealed, chosen[1]))
    for i in (0, 1):
        with pytest.raises(DecryptionError):
            reidentify(vault, chosen[i], KEY)


def test_entries_without_a_key_are_not_revealable(vault_path):
    vault = SqliteVault(vault_path)
    chosen = dict(redact_all(_redactor(vault, key=None), [0]))
    with pytest.raises(TransformError, match="without a key"):
        reidentify(vault, chosen[0], KEY)


def test_seal_needs_a_user_key_and_memory_vault_reveals_too():
    ring = KeyRing.from_master(KEY)
    key = identity_key(ring.vault, Category.PERSON, "Nakato Sarah")
    assert seal_original(KeyRing.from_master(None), Category.PERSON, "Nakato Sarah", key) is None
    sealed = seal_original(ring, Category.PERSON, "Nakato Sarah", key)
    assert sealed is not None and b"Nakato" not in sealed
    vault = MemoryVault()
    vault.put(key, "Apio Doreen", value_key=None, sealed=sealed)
    assert reidentify(vault, "Apio Doreen", KEY) == [(Category.PERSON, "Nakato Sarah")]
    assert vault.put(bytes(32), "Other", value_key=None)  # old callers: no sealed argument


def test_batch_job_opens_the_vault_from_its_config(vault_path, tmp_path):
    from polydeid.batch.record import JobConfig, build_deidentifier

    key_file = tmp_path / "key"
    key_file.write_text(KEY.hex())
    config = JobConfig(
        profile="rules", policy="surrogate", key_file=str(key_file), vault=str(vault_path)
    )
    deid = build_deidentifier(config)
    assert isinstance(deid.redactor.vault, SqliteVault)


# --- many processes × threads -----------------------------------------------------------------


@pytest.mark.slow
def test_processes_and_threads_share_one_mapping(vault_path):
    SqliteVault(vault_path).close()  # create it once, as a job runner would
    pairs = run_workers(str(vault_path), KEY, processes=3, threads=4)
    assert len(pairs) == 3 * 4 * 2 * len(ORIGINALS)
    chosen = check_outputs(pairs)
    check_table(sqlite_rows(vault_path), chosen)
    check_reidentify(SqliteVault(vault_path), chosen)


@pytest.mark.slow
def test_racing_puts_from_processes_and_threads_keep_both_constraints(vault_path):
    SqliteVault(vault_path).close()
    attempts = run_workers(str(vault_path), KEY, processes=3, threads=4, job="put")
    assert len(attempts) == 3 * 4 * PUT_KEYS
    check_puts(attempts, SqliteVault(vault_path))


@pytest.mark.slow
def test_runs_are_consistent_and_keys_do_not_cross(vault_path):
    first = check_outputs(run_workers(str(vault_path), KEY, processes=1, threads=1))
    keys_first = sqlite_keys(vault_path)
    second = check_outputs(run_workers(str(vault_path), KEY, processes=1, threads=2, seed=9))
    assert second == first and sqlite_keys(vault_path) == keys_first
    # another key is refused before it writes anything (the vault holds the key's fingerprint)
    with pytest.raises(VaultKeyError) as refused:
        _redact_job(str(vault_path), OTHER_KEY, seed=1, threads=1)
    assert refused.value.code == "PD111" and OTHER_KEY.hex() not in str(refused.value)
    assert sqlite_keys(vault_path) == keys_first
    vault = SqliteVault(vault_path)
    for i, surrogate in first.items():
        if ORIGINALS[i][0] in UNIQUE_SURROGATES:
            with pytest.raises(DecryptionError):
                reidentify(vault, surrogate, OTHER_KEY)
    assert os.path.getsize(vault_path) > 0
