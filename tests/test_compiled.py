"""The modules compiled ahead of time (scripts/compile.py, polydeid._compiled): a build runs
only while it matches its source, and it finds what its source finds."""

from __future__ import annotations

import hashlib
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest

from polydeid import _compiled
from polydeid.core.segments import Segment
from polydeid.detect.rules.clinical_facts import ClinicalFactRule
from polydeid.detect.rules.dates import DateRule
from polydeid.detect.rules.ids import IdentifierRule
from polydeid.detect.rules.phones import PhoneRule

ROOT = Path(__file__).resolve().parent.parent


def _entry(module: str) -> dict[str, object]:
    imports = _compiled.imported_modules(module)
    return {"digest": _compiled.build_digest(module, imports), "imports": imports}


def _manifest(tmp_path: Path, entries: dict[str, object]) -> Path:
    path = tmp_path / "_compiled.json"
    path.write_text(json.dumps({"modules": entries}))
    return path


def test_every_listed_module_has_a_source() -> None:
    for module in _compiled.MODULES:
        assert _compiled.source_path(module).is_file(), module


def test_a_build_records_the_polydeid_modules_it_read() -> None:
    imports = _compiled.imported_modules("polydeid.detect.rules.phones")
    assert "polydeid.detect.rules.phone_reading" in imports
    assert "polydeid.core.spans" in imports
    assert "polydeid.locales.contacts" in imports  # ``from polydeid.locales import contacts``
    assert all(_compiled.source_path(m).is_file() for m in imports)
    assert "phonenumbers" not in imports and "polydeid.detect.rules.phones" not in imports


def test_a_build_runs_whole_and_only_while_it_matches_every_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(_compiled.PURE_ENV, raising=False)
    built = [m for m in _compiled.MODULES if _compiled.extension_path(m) is not None]
    if len(built) < 2:
        pytest.skip("the modules are not compiled here (scripts/compile.py)")
    current = {m: _entry(m) for m in built}
    assert set(_compiled.status(built, _manifest(tmp_path, current)).values()) == {"compiled"}
    first, *_ = built
    changed: list[dict[str, object]] = [
        {**current, first: {**current[first], "digest": "0" * 64}},  # a source changed
        {m: e for m, e in current.items() if m != first},  # a module not in the manifest
        {**current, first: {**current[first], "imports": ["polydeid.no_such_module"]}},
        {**current, first: {**current[first], "imports": "polydeid.core.spans"}},
        {**current, first: "0" * 64},
    ]
    for entries in changed:  # one module's build does not match: none runs compiled
        states = _compiled.status(built, _manifest(tmp_path, entries))
        assert set(states.values()) == {"stale"}, entries
    unreadable = tmp_path / "bad.json"
    unreadable.write_text("{not json")
    assert set(_compiled.status(built, unreadable).values()) == {"stale"}
    assert set(_compiled.status(built, tmp_path / "missing.json").values()) == {"stale"}
    monkeypatch.setenv(_compiled.PURE_ENV, "1")
    assert set(_compiled.status(built, _manifest(tmp_path, current)).values()) == {"pure"}


def test_a_module_without_a_build_runs_from_its_source(tmp_path: Path) -> None:
    assert _compiled.status(["polydeid.core.spans"], tmp_path / "none.json") == {
        "polydeid.core.spans": "source"
    }


def test_stale_and_pure_modules_are_found_as_their_sources() -> None:
    module = _compiled.MODULES[0]
    states = {module: "stale", "polydeid.core.spans": "compiled", "polydeid.api": "source"}
    finder = _compiled.source_finder(states)
    assert finder is not None
    spec = finder.find_spec(module, None)
    assert spec is not None and spec.origin == str(_compiled.source_path(module))
    assert finder.find_spec("polydeid.core.spans", None) is None
    assert finder.find_spec("polydeid.api", None) is None
    assert _compiled.source_finder({module: "compiled"}) is None


def test_the_build_is_current_where_make_requires_it() -> None:
    """``make test`` sets POLYDEID_REQUIRE_COMPILED: there every listed module must run its
    build (scripts/compile.py ran, and no source changed since)."""
    if os.environ.get("POLYDEID_REQUIRE_COMPILED") != "1":
        pytest.skip("POLYDEID_REQUIRE_COMPILED is not set (make test sets it)")
    assert set(_compiled.status().values()) == {"compiled"}
    import polydeid.detect.rules.phones as phones

    assert not phones.__file__.endswith(".py")


def _texts() -> list[str]:
    """Seeded text dense in phone numbers, identifiers and dates of many shapes."""
    rng = random.Random(4242)
    pieces = [
        lambda: f"{rng.randrange(100, 999)} {rng.randrange(100, 999)} {rng.randrange(1000, 9999)}",
        lambda: f"0{rng.randrange(700, 799)} {rng.randrange(100000, 999999)}",
        lambda: f"+{rng.choice(['44', '254', '49', '33', '1'])} {rng.randrange(10**8, 10**9)}",
        lambda: "06 " + " ".join(f"{rng.randrange(100):02d}" for _ in range(4)),
        lambda: (
            f"({rng.randrange(200, 999)}) {rng.randrange(200, 999)}-{rng.randrange(1000, 9999)}"
        ),
        lambda: f"{rng.randrange(100, 899)}-{rng.randrange(10, 99)}-{rng.randrange(1000, 9999)}",
        lambda: f"tel. 0{rng.randrange(10**9, 10**10)}",
        lambda: f"{rng.randrange(1, 28)}.{rng.randrange(1, 12)}.20{rng.randrange(10, 30)}",
        lambda: (
            f"NHS {rng.randrange(100, 999)} {rng.randrange(100, 999)} {rng.randrange(10**3, 10**4)}"
        ),
        lambda: f"ID {rng.randrange(10**7, 10**8)}",
        lambda: f"MRN {rng.randrange(10**5, 10**7)}",
        lambda: f"IBAN DE{rng.randrange(10, 99)} 3704 0044 {rng.randrange(10**3, 10**4)}",
        lambda: f"on {rng.randrange(1, 28)} March {rng.randrange(1990, 2030)}",
        lambda: (
            f"{rng.randrange(1990, 2030)}-{rng.randrange(1, 12):02d}-{rng.randrange(1, 28):02d}"
        ),
        lambda: f"Hb {rng.randrange(6, 17)}.{rng.randrange(10)} g/dL",
        lambda: f"BP {rng.randrange(90, 180)}/{rng.randrange(50, 110)} mmHg",
        lambda: f"paracetamol {rng.choice(['500 mg', '1 g', '2x500mg'])} x{rng.randrange(2, 9)}",
        lambda: f"for {rng.randrange(2, 14)} days, T {rng.randrange(35, 41)}.{rng.randrange(10)}",
        lambda: f"K-{rng.randrange(3, 6)}.{rng.randrange(10)}, PT-{rng.randrange(10**5, 10**6)}",
    ]
    return [
        ", ".join(rng.choice(pieces)() for _ in range(300)) + f" ({lang})"
        for lang in ("en", "de", "fr", "sw", "lg")
    ]


def sample_digest() -> str:
    """SHA-256 of the compiled rules' spans over :func:`_texts` in several languages."""
    digest = hashlib.sha256()
    for rule in (PhoneRule(), IdentifierRule(), DateRule(), ClinicalFactRule()):
        for text in _texts():
            lang = text.rsplit("(", 1)[1].rstrip(")")
            for span in rule.find(Segment(text, lang=lang)):
                found = (rule.id, span.start, span.end, span.label.name, span.source, span.score)
                digest.update(repr(found).encode())
    return digest.hexdigest()


def test_the_compiled_rules_find_what_their_sources_find() -> None:
    """The same spans from the modules as this process runs them (their builds, where
    current) and from their sources (POLYDEID_PURE_PYTHON=1, in a subprocess)."""
    env = {**os.environ, _compiled.PURE_ENV: "1"}
    script = (
        "import sys\n"
        f"sys.path.insert(0, {str(ROOT)!r})\n"
        "import polydeid.detect.rules.phones as phones\n"
        "assert phones.__file__.endswith('.py'), phones.__file__\n"
        "from tests.test_compiled import sample_digest\n"
        "print(sample_digest())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == sample_digest()
