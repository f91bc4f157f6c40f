"""Which modules may run compiled, and the guard that keeps a stale build from running.

The modules of :data:`MODULES` are plain Python. ``scripts/compile.py`` (run by ``make setup``)
compiles them ahead of time with mypyc into extension modules beside their sources and writes
:data:`MANIFEST`: for each module, the polydeid modules it imports and one SHA-256 of its
source and theirs (:func:`build_digest`). Python imports an extension module before the
source of the same name, so :func:`install` (called as ``polydeid`` is imported, before any
of them) makes every one of them load from its source instead where

- the manifest does not give the current digest of any one of them (a source it was built
  from changed, or the manifest is missing or unreadable): compiled modules call one another's
  native classes, so a build runs whole or not at all; or
- the environment sets :data:`PURE_ENV` to ``1``.

A compiled module behaves as its source does (the same spans; tested); it only runs faster.
Nothing here imports polydeid's other modules.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import json
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import ModuleType
from typing import Any

#: The modules compiled ahead of time (scripts/compile.py reads this tuple).
MODULES = (
    "polydeid.detect.rules.phone_reading",
    "polydeid.detect.rules.phones",
    "polydeid.detect.rules.ids",
    "polydeid.detect.rules.dates",
    "polydeid.detect.rules.clinical_facts",
)

#: The build's record, beside this file: ``{"modules": {name: {"digest": …, "imports": […]}}}``.
MANIFEST = Path(__file__).with_name("_compiled.json")

#: Set to ``1`` to run every module of :data:`MODULES` from its source.
PURE_ENV = "POLYDEID_PURE_PYTHON"

_ROOT = Path(__file__).resolve().parent.parent  # the directory that holds the package


def source_path(module: str, root: Path = _ROOT) -> Path:
    """The source file of ``module``: ``module.py``, or a package's ``__init__.py``."""
    base = root.joinpath(*module.split("."))
    package = base / "__init__.py"
    return package if package.is_file() else base.with_suffix(".py")


def extension_path(module: str) -> Path | None:
    """The compiled extension module of ``module``, if one is built beside its source."""
    source = _ROOT.joinpath(*module.split(".")).with_suffix(".py")
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        candidate = source.with_suffix(suffix)
        if candidate.is_file():
            return candidate
    return None


def imported_modules(module: str, root: Path = _ROOT) -> list[str]:
    """The polydeid modules ``module``'s source imports (anywhere in it), sorted: what its
    build read the types of."""
    import ast  # only a build reads imports

    tree = ast.parse(source_path(module, root).read_bytes())
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "polydeid")
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.split(".")[0] != "polydeid":
                continue
            found.add(node.module)
            for alias in node.names:  # ``from polydeid.x import y``: y may be a module
                name = f"{node.module}.{alias.name}"
                if source_path(name, root).is_file():
                    found.add(name)
    found.discard(module)
    return sorted(m for m in found if source_path(m, root).is_file())


def build_digest(module: str, imports: Iterable[str], root: Path = _ROOT) -> str:
    """SHA-256 of ``module``'s source and of each of ``imports``, each with its name."""
    digest = hashlib.sha256()
    for name in (module, *sorted(imports)):
        digest.update(name.encode() + b"\0")
        digest.update(source_path(name, root).read_bytes())
    return digest.hexdigest()


def read_manifest(path: Path = MANIFEST) -> Mapping[str, Any]:
    """The build's entry by module; empty where the manifest is missing or unreadable."""
    try:
        modules = json.loads(path.read_text(encoding="utf-8")).get("modules", {})
    except (OSError, ValueError, AttributeError):
        return {}
    return modules if isinstance(modules, dict) else {}


def _current(entry: object, module: str) -> bool:
    """Whether a manifest entry gives the digest of ``module`` and its imports as they are."""
    if not isinstance(entry, dict):
        return False
    imports = entry.get("imports")
    if not isinstance(imports, list) or not all(isinstance(m, str) for m in imports):
        return False
    try:
        return entry.get("digest") == build_digest(module, imports)
    except OSError:  # an import the build read is gone
        return False


def status(modules: Sequence[str] = MODULES, manifest: Path = MANIFEST) -> dict[str, str]:
    """How each of ``modules`` runs in this process: ``compiled``; ``source`` (no build);
    ``stale`` (a build exists, but the manifest does not match the sources of every built
    module and their imports, so none is used); or ``pure`` (:data:`PURE_ENV`)."""
    pure = os.environ.get(PURE_ENV) == "1"
    built = [m for m in modules if extension_path(m) is not None]
    entries = read_manifest(manifest) if built and not pure else {}
    whole = all(_current(entries.get(m), m) for m in built)
    found = {}
    for module in modules:
        if module not in built:
            found[module] = "source"
        elif pure:
            found[module] = "pure"
        else:
            found[module] = "compiled" if whole else "stale"
    return found


class _FromSource:
    """A meta path finder (``sys.meta_path``) of the named modules as their source files, ahead
    of the extension modules."""

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
    """Load every built module from its source where the build is stale, or under
    :data:`PURE_ENV`. Idempotent; a no-op where nothing is compiled."""
    if any(isinstance(finder, _FromSource) for finder in sys.meta_path):
        return
    finder = source_finder(status())
    if finder is not None:
        sys.meta_path.insert(0, finder)


install()  # on import: ``polydeid/__init__`` imports this module before any other
