"""Compile polydeid's hot rule modules ahead of time with mypyc (``make setup`` runs it).

Reads the modules to compile from ``polydeid._compiled.MODULES``, builds each into a C extension
module with mypyc (from the pinned ``mypy``) in a temporary directory, puts the extension
modules beside their sources in this checkout (``src/polydeid``, which the editable install
runs) and writes ``polydeid/_compiled.json``: per module, the polydeid modules it imports and
one SHA-256 of their sources and its own. A source of those that changes afterwards makes
every compiled module run from its source again (``polydeid._compiled``) until this script is
run anew. Exits non-zero, having changed nothing, where the build fails.

    .venv/bin/python scripts/compile.py            # build and install
    .venv/bin/python scripts/compile.py --clean    # remove the built modules and manifest
    .venv/bin/python scripts/compile.py --sources  # the sources a build reads (for make)

Needs a C compiler and the Python headers (``gcc``; ``python3-dev`` on Debian's own Python).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import shutil
import sys
import tempfile
import time
from functools import cache
from pathlib import Path
from types import ModuleType

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "polydeid"
GUARD = PACKAGE / "_compiled.py"


@cache
def guard() -> ModuleType:
    """``polydeid/_compiled.py`` loaded by itself (it imports nothing of polydeid, so the
    system Python that make runs can read it): ``MODULES`` and how to read their sources."""
    spec = importlib.util.spec_from_file_location("_polydeid_compiled", GUARD)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def read_sources() -> list[Path]:
    """The compiled modules' sources and those of the polydeid modules they import."""
    compiled, root = guard(), PACKAGE.parent
    names = set(compiled.MODULES)
    for module in compiled.MODULES:
        names.update(compiled.imported_modules(module, root))
    return sorted(compiled.source_path(name, root) for name in names)


def built_files(root: Path) -> list[Path]:
    """Extension modules mypyc built for the package (the modules and their shared library)."""
    return sorted(p for p in (root / "polydeid").rglob("*.so") if p.is_file()) + sorted(
        p for p in (root / "polydeid").rglob("*.pyd") if p.is_file()
    )


def clean() -> None:
    for path in built_files(PACKAGE.parent):
        path.unlink()
    PACKAGE.joinpath("_compiled.json").unlink(missing_ok=True)


def build() -> None:
    from mypyc.build import mypycify
    from setuptools import Distribution

    compiled, root = guard(), PACKAGE.parent
    files = [compiled.source_path(module, root) for module in compiled.MODULES]
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="polydeid-compile-") as tmp:
        work = Path(tmp)
        extensions = mypycify(
            [str(path) for path in files], opt_level="3", separate=True, target_dir=str(work / "c")
        )
        dist = Distribution({"name": "polydeid-compiled", "ext_modules": extensions})
        command = dist.get_command_obj("build_ext")
        command.build_lib = str(work / "lib")  # type: ignore[attr-defined]
        command.build_temp = str(work / "temp")  # type: ignore[attr-defined]
        dist.run_command("build_ext")
        built = built_files(work / "lib")
        if not built:
            raise SystemExit("mypyc built no extension module")
        clean()
        for path in built:
            target = PACKAGE.parent / path.relative_to(work / "lib")
            shutil.copy2(path, target)
    entries = {}
    for module in compiled.MODULES:
        imports = compiled.imported_modules(module, root)
        entries[module] = {
            "digest": compiled.build_digest(module, imports, root),
            "imports": imports,
        }
    manifest = {"python": sys.version.split()[0], "modules": entries}
    PACKAGE.joinpath("_compiled.json").write_text(json.dumps(manifest, indent=1) + "\n")
    print(
        f"compiled {len(files)} modules ({len(built)} extension files) "
        f"in {time.perf_counter() - started:.0f} s",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clean", action="store_true", help="remove the built modules")
    parser.add_argument("--sources", action="store_true", help="print the source files")
    args = parser.parse_args()
    if args.sources:
        root = PACKAGE.parent.parent
        print(" ".join(str(p.relative_to(root)) for p in read_sources()))
    elif args.clean:
        clean()
    else:
        build()


if __name__ == "__main__":
    main()
