"""polydeid's cache directory, and tables built from its own code and data kept there.

A table is worth keeping when building it costs more than reading it (the gazetteer of a set
of countries takes most of a second to build, a tenth to read). Each is a JSON file under
``cache_root() / kind``, stamped with the fingerprint of what it was built from: the files
of the polydeid package and of any package whose data it reads (path, size and modification
time of each). A file whose stamp differs, or that cannot be read or parsed, is built again
and replaced; a cache that cannot be written is left alone. Only public data built from the
package is kept here (place names, never a record's text). Objects JSON cannot hold (compiled
patterns) are kept as bytes (:func:`load_bytes`, :func:`store_bytes`), which their reader
checks.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

#: The layout of a kept table's file; a file of another layout is built again.
_FORMAT = 1


def cache_root() -> Path:
    """``$POLYDEID_CACHE`` if set, else ``~/.cache/polydeid``."""
    env = os.environ.get("POLYDEID_CACHE", "").strip()
    return Path(env).expanduser() if env else Path.home() / ".cache" / "polydeid"


@cache
def fingerprint(*packages: str) -> str:
    """A digest of every file of the importable ``packages`` (path, size and modification
    time): it changes when any of them is edited, added, removed or upgraded."""
    import importlib.util

    digest = hashlib.sha256()
    for name in packages:
        spec = importlib.util.find_spec(name)
        roots = list(spec.submodule_search_locations or ()) if spec is not None else []
        digest.update(name.encode())
        for root in sorted(roots):
            for path, stat in _files(Path(root)):
                digest.update(f"{path}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def _files(root: Path) -> Iterable[tuple[str, os.stat_result]]:
    """Every file under ``root`` but compiled bytecode, by relative path, in path order."""
    found = []
    for directory, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in names:
            full = Path(directory, name)
            found.append((full.relative_to(root).as_posix(), full.stat()))
    return sorted(found, key=lambda item: item[0])


def _path(kind: str, name: str, suffix: str = ".json") -> Path:
    key = hashlib.sha256(name.encode()).hexdigest()[:24]
    return cache_root() / kind / f"{key}{suffix}"


def read_json(path: Path) -> Any | None:
    """The JSON data of ``path``; ``None`` where it is missing, unreadable or no JSON."""
    try:
        with path.open(encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError, RecursionError):
        return None


def write_json(path: Path, data: Any) -> bool:
    """Write ``data`` to ``path`` at once (a reader sees the old file or the new one), mode
    0600; ``False``, with nothing left behind, where it cannot be written."""
    return _write_bytes(path, _json_bytes(data))


def _json_bytes(data: Any) -> bytes:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _write_bytes(path: Path, body: bytes) -> bool:
    """:func:`write_json` for bytes."""
    try:
        handle, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=path.suffix)
    except OSError:
        return False
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(body)
        os.replace(tmp, path)
    except OSError:
        Path(tmp).unlink(missing_ok=True)
        return False
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return True


def load_table(kind: str, name: str, stamp: str) -> Any | None:
    """The table kept as ``name`` of ``kind`` if it was built from what ``stamp`` names, else
    ``None`` (never kept, built from something else, or unreadable)."""
    kept = read_json(_path(kind, name))
    if not isinstance(kept, dict) or kept.get("format") != _FORMAT:
        return None
    if kept.get("name") != name or kept.get("stamp") != stamp:
        return None
    return kept.get("table")


def store_table(kind: str, name: str, stamp: str, table: Any) -> None:
    """Keep ``table`` (JSON data) as ``name`` of ``kind`` (:func:`write_json`); nothing is
    kept where the cache cannot be written."""
    body = {"format": _FORMAT, "name": name, "stamp": stamp, "table": table}
    _store(kind, _path(kind, name), _json_bytes(body))


def load_bytes(kind: str, name: str) -> bytes | None:
    """The bytes kept as ``name`` of ``kind`` (:func:`store_bytes`), or ``None``. The caller
    checks them: they are what a process wrote, or what anyone who can write the cache put
    there."""
    try:
        return _path(kind, name, ".bin").read_bytes()
    except OSError:
        return None


def store_bytes(kind: str, name: str, body: bytes) -> None:
    """Keep ``body`` as ``name`` of ``kind`` (at once, mode 0600); nothing is kept where the
    cache cannot be written."""
    _store(kind, _path(kind, name, ".bin"), body)


def _store(kind: str, path: Path, body: bytes) -> None:
    """Write ``body`` to ``path`` (:func:`_write_bytes`), its folder made if need be; logs
    (the kind only) and keeps nothing where the cache cannot be written."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError:
        log.debug("%s not kept: no cache directory", kind)
        return
    if not _write_bytes(path, body):
        log.debug("%s not kept: the cache cannot be written", kind)
