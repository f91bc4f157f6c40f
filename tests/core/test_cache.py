"""The cache of tables built from polydeid's code and data (``polydeid.core.cache``)."""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path

import pytest

from polydeid.core import cache


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("POLYDEID_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_a_kept_table_is_read_back_while_its_stamp_holds(root: Path) -> None:
    table = {"single": {"kampala": ["Kampala", "place", True, ["kampala"]]}, "pairs": []}
    cache.store_table("gazetteer", "UG|Latin", "stamp-1", table)
    assert cache.load_table("gazetteer", "UG|Latin", "stamp-1") == table
    assert cache.load_table("gazetteer", "UG|Latin", "stamp-2") is None  # built from others
    assert cache.load_table("gazetteer", "KE|Latin", "stamp-1") is None  # never kept
    assert [p.parent.name for p in root.rglob("*.json")] == ["gazetteer"]
    assert not list(root.rglob(".tmp-*"))


def test_a_new_table_replaces_the_kept_one(root: Path) -> None:
    cache.store_table("gazetteer", "UG|Latin", "stamp-1", [1])
    cache.store_table("gazetteer", "UG|Latin", "stamp-2", [2])
    assert cache.load_table("gazetteer", "UG|Latin", "stamp-2") == [2]
    assert len(list(root.rglob("*.json"))) == 1


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"{",
        b"[1, 2]",
        b'{"format": 99, "name": "UG|Latin", "stamp": "s", "table": 1}',
        b"[" * 100_000,
        b'{"format": 1, "name": "\xff"}',
    ],
    ids=["empty", "truncated", "a-list", "another-format", "deeply-nested", "not-utf8"],
)
def test_an_unreadable_or_foreign_file_is_not_a_table(root: Path, body: bytes) -> None:
    cache.store_table("gazetteer", "UG|Latin", "s", [1])
    (path,) = root.rglob("*.json")
    path.write_bytes(body)
    assert cache.load_table("gazetteer", "UG|Latin", "s") is None


def test_a_cache_that_cannot_be_written_keeps_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory", encoding="utf-8")
    monkeypatch.setenv("POLYDEID_CACHE", str(blocker / "cache"))
    cache.store_table("gazetteer", "UG|Latin", "s", [1])  # no error
    assert cache.load_table("gazetteer", "UG|Latin", "s") is None


def test_the_fingerprint_changes_with_any_file_of_the_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "invented_pkg"
    (package / "data").mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    data = package / "data" / "words.toml"
    data.write_text("a = 1\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()

    def stamp() -> str:
        cache.fingerprint.cache_clear()
        return cache.fingerprint("invented_pkg")

    first = stamp()
    assert stamp() == first
    (package / "__pycache__").mkdir()
    (package / "__pycache__" / "x.pyc").write_bytes(b"")
    assert stamp() == first  # compiled bytecode is not part of it
    data.write_text("a = 2\n", encoding="utf-8")
    edited = stamp()
    assert edited != first
    os.utime(data, ns=(1, 1))
    assert stamp() != edited
    (package / "data" / "more.toml").write_text("", encoding="utf-8")
    assert len({first, edited, stamp()}) == 3
    sys.modules.pop("invented_pkg", None)
