"""File helpers shared by the corpus readers: listing a corpus path, loading JSON."""

from __future__ import annotations

import json
from collections.abc import Collection
from pathlib import Path
from typing import Any

from polydeid.core.errors import InputError, RecordError
from polydeid.formats.text import decode_utf8


def corpus_files(root: Path, *, suffixes: Collection[str] | None = None) -> list[Path]:
    """``[root]`` for a file; a directory's files (with one of ``suffixes``, not hidden), sorted.

    A path that does not exist raises :class:`InputError` located at the path.
    """

    def keep(p: Path) -> bool:
        return p.suffix in suffixes if suffixes is not None else not p.name.startswith(".")

    if root.is_file():
        return [root]
    if root.is_dir():
        return sorted(p for p in root.iterdir() if p.is_file() and keep(p))
    raise InputError("no such file or directory", location=str(root))


def load_json(file: Path) -> Any:
    """The parsed JSON of ``file``; bad UTF-8 or JSON raises located at ``file:line``."""
    source = str(file)
    try:
        return json.loads(decode_utf8(file.read_bytes(), source=source))
    except json.JSONDecodeError as exc:
        raise RecordError(
            f"malformed JSON ({exc.msg})", location=f"{source}:{exc.lineno}"
        ) from None
