"""Start-up with polydeid's cache kept: this tree against an earlier one, side by side.

Each measurement runs in fresh interpreters, the two trees taking turns (``--runs`` each; the
median), each tree with its own cache directory filled by one unmeasured run first, so both
read what they keep (the converted encoder, the gazetteer's indexes, parsed locale files and,
where the tree keeps them, compiled patterns). Measured:

- the one-line command a user types, ``polydeid redact FILE --lang en --profile P``, wall
  seconds from the shell (one short English record; the ``rules`` and ``default`` profiles);
- in one process, the first record of each of the 17 languages after the ``rules``
  profile's ``Deidentifier`` is built: what a batch worker or the service pays before its
  first document in every language.

    .venv/bin/python benchmarks/startup_cache.py --before /tmp/base [--runs 5]
        [--profiles rules,default]

``--before``: the root of an earlier checkout (``git worktree add /tmp/base <commit>``), run
with this virtual environment. Writes ``benchmarks/results/startup_cache.md``.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from passes import cpu_model

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "startup_cache.md"
#: The short record (invented).
RECORD = "Patient Kalo Mirute, MRN 4482913, seen 12/03/2024; call 0772 123456.\n"

_LANGUAGES = r"""
import sys, time
from polydeid.api import Deidentifier
from polydeid.locales import languages
deid = Deidentifier(profile="rules")
start = time.perf_counter()
for lang in languages():
    deid.redact("Patient Amina Njeri, 12/03/2024, tel 0712 345678, MRN 4482913.", lang=lang)
print(time.perf_counter() - start)
"""


def _environment(tree: Path, cache: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(tree / "src"), "POLYDEID_CACHE": str(cache)}


def _one_line(tree: Path, cache: Path, profile: str, record: Path) -> float:
    argv = [sys.executable, "-m", "polydeid.cli", "redact", str(record), "--lang", "en"]
    start = time.perf_counter()
    subprocess.run(
        [*argv, "--profile", profile],
        env=_environment(tree, cache),
        cwd=tree,
        capture_output=True,
        check=True,
    )
    return time.perf_counter() - start


def _languages(tree: Path, cache: Path) -> float:
    done = subprocess.run(
        [sys.executable, "-c", _LANGUAGES],
        env=_environment(tree, cache),
        cwd=tree,
        capture_output=True,
        text=True,
        check=True,
    )
    return float(done.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="an earlier checkout")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--profiles", default="rules,default")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()
    trees = {"before": args.before.resolve(), "now": ROOT}
    profiles = [p for p in args.profiles.split(",") if p]
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as scratch:
        record = Path(scratch, "record.txt")
        record.write_text(RECORD, encoding="utf-8")
        caches = {name: Path(scratch, name) for name in trees}
        for name, tree in trees.items():  # fill each cache, unmeasured
            for profile in profiles:
                _one_line(tree, caches[name], profile, record)
            _languages(tree, caches[name])
        times: dict[tuple[str, str], list[float]] = {}
        for _ in range(args.runs):
            for name, tree in trees.items():
                for profile in profiles:
                    seconds = _one_line(tree, caches[name], profile, record)
                    times.setdefault((name, profile), []).append(seconds)
                seconds = _languages(tree, caches[name])
                times.setdefault((name, "17 languages"), []).append(seconds)
    rows = [
        *(
            (f"`polydeid redact FILE --lang en --profile {p}` (wall, from the shell)", p)
            for p in profiles
        ),
        ("first record of each of 17 languages, rules profile, one process", "17 languages"),
    ]
    lines = [
        "# Start-up with the cache kept: before and now, side by side",
        "",
        f"Command: `.venv/bin/python benchmarks/startup_cache.py "
        f"{' '.join(sys.argv[1:])}`. Machine: {cpu_model()} ({platform.machine()}, "
        f"{os.cpu_count()} cores, Python {platform.python_version()}). Fresh interpreters, "
        f"the trees taking turns, {args.runs} runs each, the median (and range) in seconds; "
        "each tree with its own cache, filled by an unmeasured run first. "
        f"{time.perf_counter() - started:.0f} s in all.",
        "",
        "| measurement | before | now | now / before |",
        "|---|---:|---:|---:|",
    ]
    for label, key in rows:
        before, now = times["before", key], times["now", key]
        b, n = statistics.median(before), statistics.median(now)
        lines.append(
            f"| {label} | {b:.2f} ({min(before):.2f}–{max(before):.2f}) | "
            f"{n:.2f} ({min(now):.2f}–{max(now):.2f}) | {n / b:.2f} |"
        )
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
