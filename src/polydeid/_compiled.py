"""Which modules may run compiled, and the guard that keeps a stale build from running.

The modules of :data:`MODULES` are plain Python. ``scripts/compile.py`` (run by ``make setup``)
compiles them ahead of time with mypyc into extension modules beside their sources and writes
:data:`MANIFEST`: the SHA-256 of each source it compiled. Python imports an extension module
before the source of the same name, so :func:`install` (called as ``polydeid`` is imported,
before any of them) makes each module load from its source instead where

- its extension module exists but the manifest does not name its current source (the source
  changed after the build, or the manifest is missing or unreadable), or
- the environment sets :data:`PURE_ENV` to ``1`` (every module from source).

A compiled module behaves as its source does (the same spans; tested); it only runs faster.
Nothing here imports the modules themselves.
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import sys
from collections.abc import Mapping, Sequence
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import ModuleType

#: The modules compiled ahead of time (scripts/compile.py reads this tuple).
MODULES = (
    "polydeid.detect.rules.phone_reading",
    "polydeid.detect.rules.phones",
    "polydeid.detect.rules.ids",
    "polydeid.detect.rules.dates",
)

#: The build's record, beside this file: ``{"modules": {name: sha256 of the source}}``.
MANIFEST = Path(__file__).with_name("_compiled.json")

#: Set to ``1`` to run every module of :data:`MODULES` from its source.
PURE_ENV = "POLYDEID_PURE_PYTHON"

_ROOT = Path(__file__).resolve().parent.parent  # the directory that holds the package


def source_path(module: str) -> Path:
    """The source file of ``module`` (one of :data:`MODULES`)."""
    return _ROOT.joinpath(*module.split(".")).with_suffix(".py")


def extension_path(module: str) -> Path | None:
    """The compiled extension module of ``module``, if one is built beside its source."""
    source = source_path(module)
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        candidate = source.with_suffix(suffix)
        if candidate.is_file():
            return candidate
    return None


def source_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def read_manifest(path: Path = MANIFEST) -> Mapping[str, str]:
    """Source digests by module from the build's manifest; empty where it is missing or bad."""
    try:
        modules = json.loads(path.read_text(encoding="utf-8")).get("modules", {})
    except (OSError, ValueError, AttributeError):
        return {}
    return modules if isinstance(modules, dict) else {}


def status(modules: Sequence[str] = MODULES, manifest: Path = MANIFEST) -> dict[str, str]:
    """How each of ``modules`` runs in this process: ``compiled``, ``source`` (no build),
    ``stale`` (a build of another source, not used) or ``pure`` (:data:`PURE_ENV`)."""
    pure = os.environ.get(PURE_ENV) == "1"
    built = read_manifest(manifest)
    found = {}
    for module in modules:
        if extension_path(module) is None:
            found[module] = "source"
        elif pure:
            found[module] = "pure"
        elif built.get(module) != source_digest(source_path(module)):
            found[module] = "stale"
        else:
            found[module] = "compiled"
    return found


class _FromSource(importlib.abc.MetaPathFinder):
    """Finds the named modules as their source files (ahead of the extension modules)."""

    def __init__(self, sources: Mapping[str, Path]) -> None:
        self.sources = dict(sources)

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        source = self.sources.get(fullname)
        if source is None:
            return None
        return importlib.util.spec_from_file_location(fullname, source)


def source_finder(states: Mapping[str, str]) -> _FromSource | None:
    """The finder that loads the ``stale`` and ``pure`` modules of ``states`` (:func:`status`)
    from their sources; ``None`` where there are none."""
    sources = {m: source_path(m) for m, state in states.items() if state in {"stale", "pure"}}
    return _FromSource(sources) if sources else None


def install() -> None:
    """Load every module whose build is stale, or every module under :data:`PURE_ENV`, from
    its source. Idempotent; a no-op where nothing is compiled."""
    if any(isinstance(finder, _FromSource) for finder in sys.meta_path):
        return
    finder = source_finder(status())
    if finder is not None:
        sys.meta_path.insert(0, finder)


install()  # on import: ``polydeid/__init__`` imports this module before any other
