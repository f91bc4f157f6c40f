"""Hostile and dense inputs: how detection time grows with the input.

Times identifier-dense (e-mail lists, phone lists of the text's countries and of others,
random digit groups, IDs and record numbers of several formats), name-dense
(names after labels), whitespace-only, one-giant-token and pathological-regex inputs at
several sizes with one profile (``rules`` by default), in one process, one thread, and reports
the seconds of detection (detectors, resolution, segment passes) and of the transform
(``tag`` policy) per size, and the growth ratio time(largest) / time(smallest): 50× is linear
from 40 k to 2 MB characters; the target is at most 60×, and at most 10 s for every input
at 2 MB. Each text is built from a seeded generator (invented names and numbers) and read as
one English segment, as ``polydeid redact`` reads a plain-text file. Writes
``benchmarks/results/adversarial.md``.

    .venv/bin/python benchmarks/adversarial.py [--sizes 40000,160000,640000,2000000]
        [--profile rules] [--repeat 1] [--budget 60] [--default-sizes 40000]

``--budget S``: an input that takes more than S seconds at one size is not run at the larger
ones (a quadratic step would take hours). ``--long N``: also time one plain text of N
characters without a line break (mixed prose, names, e-mails and phones), which is read in
windows by length (``polydeid.detect.pipeline.SEGMENT_CHARS``). ``--default-sizes``: also
time the ``default`` profile (the tagger) at these sizes (none by default: the tagger reads
40 k characters in tens of seconds on two cores).
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from passes import cpu_model, reference_seconds

from polydeid.api import Deidentifier
from polydeid.core.errors import PolydeidError
from polydeid.core.segments import Segment
from polydeid.detect.registry import PROFILES

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "adversarial.md"
#: Seconds an input may take at 2 MB with the rules profile, and the growth it may show.
TARGET_SECONDS = 10.0
TARGET_GROWTH = 60.0

_SYLLABLES = ("ka", "lo", "mi", "ru", "te", "sa", "no", "bi", "zo", "we", "fu", "da", "ye", "pi")
_DOMAINS = ("ex.org", "mail.example", "clinic.test", "post.invalid")


def _invented(rng: random.Random, syllables: int) -> str:
    """An invented name: syllables that name nobody."""
    return "".join(rng.choice(_SYLLABLES) for _ in range(syllables)).capitalize()


def _fill(size: int, unit: Callable[[], str]) -> str:
    parts: list[str] = []
    total = 0
    while total < size:
        part = unit()
        parts.append(part)
        total += len(part)
    return "".join(parts)[:size]


def emails_repeated(size: int, rng: random.Random) -> str:
    return _fill(size, lambda: "x@ex.org ")


def emails_distinct(size: int, rng: random.Random) -> str:
    def unit() -> str:
        first, last = _invented(rng, 2).lower(), _invented(rng, 3).lower()
        return f"{first}.{last}{rng.randrange(100)}@{rng.choice(_DOMAINS)}, "

    return _fill(size, unit)


def phones_repeated(size: int, rng: random.Random) -> str:
    return _fill(size, lambda: "0772 123456, ")


def phones_distinct(size: int, rng: random.Random) -> str:
    return _fill(size, lambda: f"07{rng.randrange(10, 99)} {rng.randrange(100000, 999999)}, ")


def _one_of(rng: random.Random, *units: Callable[[], str]) -> Callable[[], str]:
    """A unit that is each time one of ``units``, drawn at random."""
    return lambda: rng.choice(units)()


def ids(size: int, rng: random.Random) -> str:
    return _fill(
        size,
        _one_of(
            rng,
            lambda: f"MRN {rng.randrange(1000000, 9999999)}; ",
            lambda: f"IP No. {rng.randrange(1000, 9999)}/{rng.randrange(10, 99)}; ",
            lambda: f"ID {rng.randrange(10000000, 99999999)}; ",
        ),
    )


#: Digit groups of an NHS-like number (3-3-4), as ranges of each group's value.
_NHS_GROUPS = ((100, 999), (100, 999), (1000, 9999))


def ids_formats(size: int, rng: random.Random) -> str:
    """Identifiers of several formats, after labels and bare (a format rule and the labelled
    values both read them, and a phone reading looks at each)."""

    def ssn() -> str:
        return f"{rng.randrange(100, 899)}-{rng.randrange(10, 99)}-{rng.randrange(1000, 9999)}"

    return _fill(
        size,
        _one_of(
            rng,
            lambda: f"SSN {ssn()}; ",
            lambda: f"{ssn()}; ",
            lambda: f"ID {rng.randrange(10000000, 99999999)}; ",
            lambda: "NHS " + " ".join(str(rng.randrange(a, b)) for a, b in _NHS_GROUPS) + "; ",
        ),
    )


def phones_foreign(size: int, rng: random.Random) -> str:
    """Numbers written as other countries than the text's write them (French, German and
    Australian national forms in an English text): each is read in every country's plan."""
    return _fill(
        size,
        _one_of(
            rng,
            lambda: "06 " + " ".join(f"{rng.randrange(100):02d}" for _ in range(4)) + ", ",
            lambda: f"030 {rng.randrange(1000000, 99999999)}, ",
            lambda: f"02 {rng.randrange(1000, 9999)} {rng.randrange(1000, 9999)}, ",
        ),
    )


def digit_groups(size: int, rng: random.Random) -> str:
    """Random digit groups written 3-3-4, as many countries write telephone numbers: most
    are valid in none of the text's countries, so each is read in every country's plan."""
    return _fill(
        size,
        lambda: (
            f"{rng.randrange(100, 999)} {rng.randrange(100, 999)} {rng.randrange(1000, 9999)}, "
        ),
    )


def names_labelled(size: int, rng: random.Random) -> str:
    def unit() -> str:
        return f"Patient name: {_invented(rng, 2)} {_invented(rng, 3)}.\n"

    return _fill(size, unit)


def names_lower(size: int, rng: random.Random) -> str:
    def unit() -> str:
        return f"Patient name: {_invented(rng, 2).lower()} {_invented(rng, 3).lower()}; "

    return _fill(size, unit)


def names_prose(size: int, rng: random.Random) -> str:
    pool = [f"{_invented(rng, 2)} {_invented(rng, 3)}" for _ in range(400)]

    def unit() -> str:
        return f"Seen with {rng.choice(pool)} and Dr {rng.choice(pool).split()[1]} today. "

    return _fill(size, unit)


def place_openers(size: int, rng: random.Random) -> str:
    """Words that open many place names ("New", "San", "Port", "Mount") side by side with
    the words that follow them in some name and words that follow them in none."""
    words = ["New", "San", "Port", "Mount", "Saint", "Los", "Las", "El", "La", "Fort", "the"]
    after = ["York", "Jose", "Louis", "Angeles", "Vegas", "Paso", "Paz", "Kenya", "ward", "and"]
    return _fill(size, lambda: f"{rng.choice(words)} {rng.choice(after)} ")


def name_again(size: int, rng: random.Random) -> str:
    """One patient's name written again and again (every mention is carried)."""
    name = f"{_invented(rng, 2)} {_invented(rng, 3)}"
    first = name.split()[0]
    head = f"Patient name: {name}.\n"
    return head + _fill(max(0, size - len(head)), lambda: f"{first} seen today. ")


def eponym_terms(size: int, rng: random.Random) -> str:
    """Eponymous diagnoses, devices, signs and scales, each a clinical term to protect."""
    terms = [
        "Crohn's disease",
        "Foley catheter",
        "positive Babinski sign",
        "Glasgow 15",
        "Parkinson disease",
        "Swan-Ganz catheter",
        "Kernig sign negative",
    ]
    return _fill(size, lambda: f"{rng.choice(terms)}, ")


def whitespace(size: int, rng: random.Random) -> str:
    return "".join(rng.choice(" \t\n\u00a0") for _ in range(size))


def giant_token(size: int, rng: random.Random) -> str:
    alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
    return "".join(rng.choice(alphabet) for _ in range(size))


def pathological(size: int, rng: random.Random) -> str:
    """Runs that make patterns backtrack: dotted words without an at sign, digit runs split
    by separators, open brackets, plus signs, titles with nothing after them."""
    unit = (
        "a." * 40
        + "a@ "
        + "1-" * 30
        + " "
        + "(" * 12
        + "0 " * 20
        + "+2" * 15
        + " Dr. " * 6
        + "x@" * 10
        + ".\n"
    )
    return _fill(size, lambda: unit)


def mixed_unbroken(size: int, rng: random.Random) -> str:
    """Clinical-looking prose with names, e-mails and phones, no line break anywhere."""
    pool = [f"{_invented(rng, 2)} {_invented(rng, 3)}" for _ in range(400)]

    def unit() -> str:
        name = rng.choice(pool)
        return (
            f"Patient name: {name}. Seen today with fever for 3 days, BP 120/80, "
            f"called {name.split()[0].lower()}@{rng.choice(_DOMAINS)} and "
            f"07{rng.randrange(10, 99)} {rng.randrange(100000, 999999)}. "
        )

    return _fill(size, unit)


@dataclass(frozen=True)
class Input:
    name: str
    build: Callable[[int, random.Random], str]


INPUTS = (
    Input("e-mail list, `x@ex.org ` repeated", emails_repeated),
    Input("e-mail list, distinct addresses", emails_distinct),
    Input("phone list, `0772 123456, ` repeated", phones_repeated),
    Input("phone list, distinct numbers", phones_distinct),
    Input("IDs and record numbers after labels", ids),
    Input("IDs of several formats, labelled and bare", ids_formats),
    Input("phone list, numbers of other countries", phones_foreign),
    Input("phone list, random 3-3-4 digit groups", digit_groups),
    Input("names after labels, a line each", names_labelled),
    Input("names after labels, lower case, one line", names_lower),
    Input("names in prose (400 people)", names_prose),
    Input("one name written again and again", name_again),
    Input("words that open place names, side by side", place_openers),
    Input("eponyms and eponymous terms", eponym_terms),
    Input("whitespace only", whitespace),
    Input("one giant token (letters and digits)", giant_token),
    Input("pathological for regexes", pathological),
)


@dataclass
class Cell:
    detect: float | None = None
    transform: float | None = None
    spans: int = 0
    error: str = ""

    @property
    def total(self) -> float | None:
        if self.detect is None or self.transform is None:
            return None
        return self.detect + self.transform

    def text(self) -> str:
        if self.error:
            return self.error
        return "—" if self.total is None else f"{self.total:.2f}"


def measure(deid: Deidentifier, text: str, repeat: int) -> Cell:
    """Best detection and transform time over ``repeat`` runs, each over a new copy of the
    text (a rule may keep what it read of the text object it saw last)."""
    detect = transform = float("inf")
    found = 0
    for _ in range(repeat):
        segment = Segment(text.encode("utf-8").decode("utf-8"), lang="en")  # a new object
        try:
            start = time.perf_counter()
            spans = deid.detect_segment(segment)
            middle = time.perf_counter()
            deid.redact_segment(segment, spans=spans)
            end = time.perf_counter()
        except PolydeidError as exc:
            return Cell(error=exc.code)
        detect, transform = min(detect, middle - start), min(transform, end - middle)
        found = len(spans)
    return Cell(detect, transform, found)


def run_profile(
    profile: str, sizes: list[int], repeat: int, budget: float, only: str = ""
) -> dict[str, dict[int, Cell]]:
    deid = Deidentifier(profile=profile)
    # One sample of every input first: what is built once per process (patterns, word lists)
    # is not timed as if it grew with the text.
    for item in INPUTS:
        deid.detect(item.build(400, random.Random(0)))
    table: dict[str, dict[int, Cell]] = {}
    for item in INPUTS:
        if only not in item.name:
            continue
        row: dict[int, Cell] = {}
        for size in sizes:
            text = item.build(size, random.Random(f"{item.name}:{size}"))
            cell = measure(deid, text, repeat)
            row[size] = cell
            print(f"{profile} | {item.name} | {size} | {cell.text()} s", flush=True)
            if cell.error or (cell.total or 0.0) > budget:
                break
        table[item.name] = row
    return table


def _size(n: int) -> str:
    return f"{n / 1_000_000:g} M" if n >= 1_000_000 else f"{n / 1000:g} k"


def markdown(profile: str, sizes: list[int], table: dict[str, dict[int, Cell]]) -> list[str]:
    first, last = sizes[0], sizes[-1]
    lines = [
        f"## Profile `{profile}`",
        "",
        "Seconds to detect and transform (`tag` policy) one segment of each size; growth: "
        f"time({_size(last)}) / time({_size(first)}) "
        f"({last / first:g}× the text, so {last / first:g}× is linear). "
        "`PD…`: the run failed with that error code; `—`: not run (a smaller size took "
        "longer than the budget).",
        "",
        "| input | " + " | ".join(_size(s) for s in sizes) + " | growth | detect / transform at "
        f"{_size(last)} | spans at {_size(last)} |",
        "|---|" + "---:|" * (len(sizes) + 3),
    ]
    for item in INPUTS:
        if item.name not in table:
            continue
        row = table[item.name]
        cells = [row.get(s, Cell()) for s in sizes]
        a, b = cells[0].total, cells[-1].total
        growth = f"{b / a:.1f}×" if a and b else "—"
        end = cells[-1]
        split = (
            f"{end.detect:.2f} / {end.transform:.2f}"
            if end.detect is not None and end.transform is not None
            else "—"
        )
        spans = str(end.spans) if end.total is not None else "—"
        lines.append(
            f"| {item.name} | " + " | ".join(c.text() for c in cells) + f" | {growth} | "
            f"{split} | {spans} |"
        )
    return [*lines, ""]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="40000,160000,640000,2000000")
    parser.add_argument("--profile", default="rules")
    parser.add_argument("--repeat", type=int, default=1, help="runs per cell (best is kept)")
    parser.add_argument("--budget", type=float, default=60.0, help="seconds; see the docstring")
    parser.add_argument("--default-sizes", default="", help="sizes for the default profile")
    parser.add_argument("--long", type=int, default=0, help="characters; see the docstring")
    parser.add_argument("--output", type=Path, default=RESULTS)
    parser.add_argument(
        "--only", default="", help="time only the inputs whose name contains this text"
    )
    args = parser.parse_args()
    sizes = sorted(int(s) for s in args.sizes.split(",") if s)
    reference = reference_seconds()
    started = time.perf_counter()
    sections = markdown(
        args.profile, sizes, run_profile(args.profile, sizes, args.repeat, args.budget, args.only)
    )
    default_sizes = sorted(int(s) for s in args.default_sizes.split(",") if s)
    if default_sizes:
        sections += markdown(
            "default",
            default_sizes,
            run_profile("default", default_sizes, args.repeat, args.budget, args.only),
        )
    if args.long:
        deid = Deidentifier(profile=args.profile)
        text = mixed_unbroken(args.long, random.Random(f"long:{args.long}"))
        cell = measure(deid, text, 1)
        print(f"{args.profile} | unbroken | {args.long} | {cell.text()} s", flush=True)
        sections += [
            f"## One plain text of {_size(args.long)} characters without a line break",
            "",
            f"Profile `{args.profile}`, mixed prose with names, e-mails and phones: "
            + (
                f"failed with {cell.error}."
                if cell.error
                else f"{cell.detect:.2f} s to detect, {cell.transform:.2f} s to transform, "
                f"{cell.spans} spans."
            ),
            "",
        ]
    command = "`.venv/bin/python benchmarks/adversarial.py " + " ".join(sys.argv[1:]) + "`"
    lines = [
        "# Hostile and dense inputs: time as the input grows",
        "",
        f"Command: {command}. Machine: {cpu_model()} ({platform.machine()}, {os.cpu_count()} "
        f"cores, Python {platform.python_version()}; the project's shared development "
        f"machine); one process, one thread, best of {args.repeat} run(s) per cell; "
        f"{time.perf_counter() - started:.0f} s in all. Profile `{args.profile}` = "
        f"{', '.join(PROFILES[args.profile])}. Reference workload (`passes.reference_seconds`, "
        f"fixed Python and `re` code, none of polydeid's): {reference:.3f} s; tables of "
        "other days compare through it.",
        "",
        f"Targets (issue 34): every input at most {TARGET_SECONDS:g} s at 2 M characters with "
        f"the rules profile, and time(2 M) at most {TARGET_GROWTH:g}× time(40 k).",
        "",
        *sections,
    ]
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text("\n".join(lines), "utf-8")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
