"""False positives and recall of code-aware reading (``format="code"``) on code and logs.

A fixed list of real open-source files with no patient data (Python standard library modules
and documentation, and licence texts that installed packages carry) plus a synthetic log file
generated from a seed, read

(a) by the rules profile as plain text,
(b) by the rules profile through :class:`polydeid.formats.code.CodeReader`,
(c) by the default profile (rules + tagger) as text and through the reader, on a ~60 kB
    subset only (the tagger is slow on a 2-core machine), once, at the end,
(d) by Microsoft Presidio (its English pipeline, as ``benchmarks/quality.py`` runs it) as
    text, and through the reader,

reporting spans per 100 kB (every span on these files is a false positive, apart from the
authors' names in attribution comments, counted separately). Then invented names, phone
numbers and e-mail addresses are inserted (seeded) into comments, strings, docstrings, log
messages and commit-author lines of copies of some of the files, and each system's recall
(inserted values fully covered by its spans / inserted) is reported.

    .venv/bin/python benchmarks/code_fp.py [--no-tagger] [--no-presidio] [--threads 1]

Writes ``benchmarks/results/code_fp.md``.
"""

from __future__ import annotations

import argparse
import ast
import os
import platform
import random
import re
import sys
import sysconfig
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pygments

from polydeid.api import Deidentifier
from polydeid.core.taxonomy import Category

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
SEED = 20240305

STDLIB = Path(sysconfig.get_paths()["stdlib"])
PURELIB = Path(sysconfig.get_paths()["purelib"])

#: (root, relative path): the false-positive corpus, in this order.
CORPUS: tuple[tuple[str, str], ...] = (
    ("stdlib", "json/__init__.py"),
    ("stdlib", "json/decoder.py"),
    ("stdlib", "json/encoder.py"),
    ("stdlib", "json/scanner.py"),
    ("stdlib", "json/tool.py"),
    ("stdlib", "email/message.py"),
    ("stdlib", "email/utils.py"),
    ("stdlib", "email/_parseaddr.py"),
    ("stdlib", "logging/__init__.py"),
    ("stdlib", "http/__init__.py"),
    ("stdlib", "http/cookies.py"),
    ("stdlib", "email/architecture.rst"),
    ("purelib", "cryptography-48.0.0.dist-info/licenses/LICENSE.APACHE"),
    ("purelib", "click-8.5.1.dist-info/licenses/LICENSE.txt"),
    ("purelib", "httpx-0.28.1.dist-info/licenses/LICENSE.md"),
    ("purelib", "pip-23.2.1.dist-info/LICENSE.txt"),
    ("purelib", "markdown_it_py-4.3.0.dist-info/licenses/LICENSE"),
)
LOG_NAME = "synthetic/service.log"
#: The default profile's subset (about 60 kB with the recall corpus).
TAGGER_SUBSET = ("json/decoder.py", "json/encoder.py", "email/utils.py", "email/architecture.rst")
TAGGER_LOG_CHARS = 9_000
#: Files that receive inserted identifiers (copies; the corpus itself stays clean).
RECALL_FILES = ("json/scanner.py", "json/tool.py", "http/__init__.py")


@dataclass
class Doc:
    name: str  # a file name with its extension (the reader's mode follows it)
    text: str
    kind: str  # python / docs / log


def _root(which: str) -> Path:
    return STDLIB if which == "stdlib" else PURELIB


def load_corpus() -> tuple[list[Doc], list[str]]:
    docs: list[Doc] = []
    missing: list[str] = []
    for which, rel in CORPUS:
        path = _root(which) / rel
        if not path.is_file():
            missing.append(f"{which}:{rel}")
            continue
        text = path.read_text("utf-8")
        kind = "python" if rel.endswith(".py") else "docs"
        docs.append(Doc(rel, text, kind))
    docs.append(Doc(LOG_NAME, synthetic_log(random.Random(SEED), 40_000), "log"))
    return docs, missing


# --- synthetic log -------------------------------------------------------------------------

_LOGGERS = (
    "org.clinic.App",
    "org.clinic.db.Pool",
    "org.clinic.web.ItemController",
    "org.clinic.jobs.Scheduler",
    "org.clinic.cache.RedisCache",
    "app.api",
    "app.worker",
    "uvicorn.access",
)
_THREADS = ("main", "http-nio-8080-exec-3", "scheduler-1", "pool-2-thread-4", "worker-7")
_LEVELS = ("INFO", "INFO", "INFO", "DEBUG", "WARN", "ERROR")


def _message(rng: random.Random) -> str:
    n = rng.randint
    uuid = "-".join(
        "".join(rng.choice("0123456789abcdef") for _ in range(k)) for k in (8, 4, 4, 4, 12)
    )
    sha = "".join(rng.choice("0123456789abcdef") for _ in range(rng.choice((7, 12, 40))))
    version = f"{n(1, 9)}.{n(0, 30)}.{n(0, 40)}"
    templates = (
        f"Connected to db-{n(1, 3)}:5432 in {n(3, 900)} ms",
        f"GET /api/v1/items?page={n(1, 90)}&size=50 returned 200 in {n(2, 400)} ms",
        f"POST /api/v1/jobs returned 202 in {n(2, 400)} ms (request {sha})",
        f"Cache miss for key item:{uuid}",
        f"Retrying job {uuid} (attempt {n(1, 5)}/5) after {n(100, 5000)} ms",
        f"Loaded configuration from /etc/clinic/app-{n(1, 4)}.yaml (schema {version})",
        f"Deployed build {sha} of clinic-service {version}",
        f"GC pause {n(1, 300)} ms, heap {n(100, 4000)} MB of {n(4000, 8000)} MB",
        f"Worker {n(1, 16)} started with {n(1, 64)} slots",
        f"Scheduled task cleanup-{n(1, 99)} finished in {n(1, 600)}.{n(0, 999):03d} s",
        f"Pool size {n(1, 50)}, active {n(0, 50)}, idle {n(0, 50)}, waiting {n(0, 9)}",
        f"Migrating schema from {version} to {n(1, 9)}.{n(0, 30)}.{n(0, 40)}",
        f"Processed batch {n(1, 9999)} of {n(10000, 99999)} records in {n(1, 90)} s",
        f"Timeout after {n(1000, 60000)} ms waiting for lock queue-{n(1, 8)}",
        f"Feature flag new-ui={rng.choice(('on', 'off'))} for tenant t{n(1, 40)}",
        f"Rate limit reached: {n(100, 1000)} requests per {n(1, 60)} s",
    )
    return rng.choice(templates)


def _timestamp(rng: random.Random, i: int) -> tuple[int, int, int, int]:
    seconds = 8 * 3600 + i * 7 + rng.randint(0, 6)
    return seconds // 3600 % 24, seconds // 60 % 60, seconds % 60, rng.randint(0, 999)


def _java_trace(rng: random.Random) -> list[str]:
    lines = [
        "java.lang.IllegalStateException: pool exhausted after "
        f"{rng.randint(1, 60)} s (max {rng.randint(8, 64)})"
    ]
    for cls, method in (
        ("org.clinic.db.Pool", "acquire"),
        ("org.clinic.db.Repository", "find"),
        ("org.clinic.web.ItemController", "list"),
    ):
        file = cls.rsplit(".", 1)[1] + ".java"
        lines.append(f"\tat {cls}.{method}({file}:{rng.randint(10, 400)})")
    lines.append("\tat java.base/java.lang.Thread.run(Thread.java:833)")
    lines.append(f"\t... {rng.randint(2, 30)} more")
    return lines


def _python_trace(rng: random.Random) -> list[str]:
    return [
        "Traceback (most recent call last):",
        f'  File "/srv/clinic/app/worker.py", line {rng.randint(10, 500)}, in run',
        "    result = handler(job)",
        f'  File "/srv/clinic/app/handlers.py", line {rng.randint(10, 500)}, in handle',
        '    raise TimeoutError(f"job {job.id} timed out")',
        f"TimeoutError: job {rng.randint(1000, 9999)} timed out",
    ]


def synthetic_log(rng: random.Random, size: int) -> str:
    """A deterministic log of about ``size`` characters in several common layouts."""
    out: list[str] = []
    total = 0
    i = 0
    while total < size:
        i += 1
        h, m, s, ms = _timestamp(rng, i)
        level = rng.choice(_LEVELS)
        logger = rng.choice(_LOGGERS)
        msg = _message(rng)
        layout = rng.randrange(8)
        if layout == 0:
            line = f"2024-03-05 {h:02d}:{m:02d}:{s:02d},{ms:03d} {level} [{rng.choice(_THREADS)}] "
            line += f"{logger} - {msg}"
        elif layout == 1:
            line = f"2024-03-05T{h:02d}:{m:02d}:{s:02d}.{ms:03d}Z {level:<5} {logger}: {msg}"
        elif layout == 2:
            line = f"2024-03-05 {h:02d}:{m:02d}:{s:02d},{ms:03d} - {logger} - {level} - {msg}"
        elif layout == 3:
            line = f"Mar  5 {h:02d}:{m:02d}:{s:02d} node-{rng.randint(1, 9)} "
            line += f"clinic[{rng.randint(100, 40000)}]: {msg}"
        elif layout == 4:
            line = f"2024/03/05 {h:02d}:{m:02d}:{s:02d} [{level.lower()}] "
            line += f"{rng.randint(1, 99)}#0: {msg}"
        elif layout == 5:
            line = f"{level}:{logger}:{msg}"
        elif layout == 6:
            line = f'{{"ts": "2024-03-05T{h:02d}:{m:02d}:{s:02d}Z", "level": "{level.lower()}", '
            line += f'"logger": "{logger}", "msg": "{msg}"}}'
        else:
            line = f"[2024-03-05 {h:02d}:{m:02d}:{s:02d}] {level}: {msg}"
        out.append(line)
        if level == "ERROR":
            out.extend(_java_trace(rng) if rng.random() < 0.5 else _python_trace(rng))
        total = sum(len(x) + 1 for x in out)
    return "\n".join(out) + "\n"


# --- inserted identifiers ------------------------------------------------------------------

_FIRST = (
    "Wairimu",
    "Baraka",
    "Halima",
    "Zawadi",
    "Neema",
    "Amani",
    "Maren",
    "Ilse",
    "Tomasz",
    "Odile",
    "Ravindra",
    "Siosaia",
    "Emeka",
    "Yusra",
    "Kaveh",
    "Liesel",
    "Paulo",
    "Nkechi",
)
_LAST = (
    "Gathoni",
    "Mwangi",
    "Odhiambo",
    "Njoroge",
    "Chebet",
    "Kiprop",
    "Holtby",
    "Vantongeren",
    "Wierzbicki",
    "Marchetti",
    "Raghunathan",
    "Tupou",
    "Okonkwo",
    "Haddad",
    "Farahani",
    "Brenneke",
    "Figueira",
    "Eze",
)


def _name(rng: random.Random) -> str:
    return f"{rng.choice(_FIRST)} {rng.choice(_LAST)}"


def _phone(rng: random.Random) -> str:
    style = rng.randrange(3)
    if style == 0:
        return f"+254 7{rng.randint(10, 99)} {rng.randint(100, 999)} {rng.randint(100, 999)}"
    if style == 1:
        return f"(415) 555-01{rng.randint(10, 99)}"
    return f"020 7946 0{rng.randint(100, 999)}"


def _email(rng: random.Random) -> str:
    return f"{rng.choice(_FIRST).lower()}.{rng.choice(_LAST).lower()}@example.org"


_VALUE_MAKERS: dict[str, Callable[[random.Random], str]] = {
    "name": _name,
    "phone": _phone,
    "email": _email,
}
_PY_TEMPLATES = {
    "comment": ("# Reviewed with {x} before the release", "# ask {x} about this branch"),
    "string": ('_note = "Contact {x} before changing this"', "_owner = 'maintained by {x}'"),
    "docstring": ('def _probe_{n}():\n{i}    """Written for {x}."""',),
}
_LOG_TEMPLATES = (
    "2024-03-05 09:{m:02d}:{s:02d},120 INFO [main] org.clinic.App - Callback requested by {x}",
    "2024-03-05T09:{m:02d}:{s:02d}.500Z WARN app.api: escalation sent to {x}",
    "2024-03-05 09:{m:02d}:{s:02d},000 - app.worker - ERROR - could not notify {x}",
)


@dataclass
class Inserted:
    doc: str
    kind: str  # comment / string / docstring / log message / commit author
    value_type: str  # name / phone / email
    start: int
    end: int


@dataclass
class RecallCorpus:
    docs: list[Doc] = field(default_factory=list)
    items: list[Inserted] = field(default_factory=list)


def _insert_python(
    text: str, rng: random.Random, plan: list[tuple[str, str]]
) -> tuple[str, list[tuple[str, str, str]]]:
    """Insert one line per (kind, value type) of ``plan`` before statements; the new text and
    (kind, value type, value) in insertion order (values are located afterwards)."""
    lines = text.split("\n")
    anchors = [
        i
        for i, ln in enumerate(lines)
        if re.match(r"\s*(return |def |class |import |if |for )", ln)
    ]
    done: list[tuple[str, str, str]] = []
    for n, (kind, vtype) in enumerate(plan):
        for _attempt in range(50):
            at = rng.choice(anchors)
            indent = re.match(r"\s*", lines[at]).group(0)  # type: ignore[union-attr]
            if kind == "docstring" and indent:
                continue
            value = _VALUE_MAKERS[vtype](rng)
            template = rng.choice(_PY_TEMPLATES[kind])
            new = indent + template.format(x=value, n=n, i=indent)
            trial = [*lines[:at], *new.split("\n"), *lines[at:]]
            try:
                ast.parse("\n".join(trial))
            except SyntaxError:
                continue
            lines = trial
            anchors = [
                i
                for i, ln in enumerate(lines)
                if re.match(r"\s*(return |def |class |import |if |for )", ln)
            ]
            done.append((kind, vtype, value))
            break
    return "\n".join(lines), done


def recall_corpus(docs: Sequence[Doc], rng: random.Random) -> RecallCorpus:
    corpus = RecallCorpus()
    by_name = {d.name: d for d in docs}
    kinds = ("comment", "string", "docstring")
    for rel in RECALL_FILES:
        if rel not in by_name:
            continue
        plan = [(k, v) for k in kinds for v in ("name", "phone", "email")] * 2
        text, done = _insert_python(by_name[rel].text, rng, plan)
        name = "recall/" + rel
        corpus.docs.append(Doc(name, text, "python"))
        _locate(corpus, name, text, done)
    # log messages
    lines: list[str] = []
    done_log: list[tuple[str, str, str]] = []
    base = synthetic_log(random.Random(SEED + 1), 3_000).splitlines()
    for vtype in ("name", "phone", "email") * 6:
        value = _VALUE_MAKERS[vtype](rng)
        template = rng.choice(_LOG_TEMPLATES)
        lines.append(template.format(x=value, m=rng.randint(0, 59), s=rng.randint(0, 59)))
        lines.extend(base[: rng.randint(1, 4)])
        done_log.append(("log message", vtype, value))
    text = "\n".join(lines) + "\n"
    corpus.docs.append(Doc("recall/service.log", text, "log"))
    _locate(corpus, "recall/service.log", text, done_log)
    # commit-author lines (git log pasted into a ticket)
    parts = ["Regression in the exporter since the last merge; log below.\n"]
    done_git: list[tuple[str, str, str]] = []
    for k in range(8):
        who, mail = _name(rng), _email(rng)
        sha = "".join(rng.choice("0123456789abcdef") for _ in range(40))
        parts.append(
            f"commit {sha}\nAuthor: {who} <{mail}>\nDate:   Tue Mar {k + 1} 10:1{k}:00 2024 "
            f"+0300\n\n    Fix exporter edge case {k}\n"
        )
        done_git += [("commit author", "name", who), ("commit author", "email", mail)]
    text = "\n".join(parts)
    corpus.docs.append(Doc("recall/ticket.md", text, "docs"))
    _locate(corpus, "recall/ticket.md", text, done_git)
    return corpus


def _locate(corpus: RecallCorpus, name: str, text: str, done: list[tuple[str, str, str]]) -> None:
    """Record where each inserted value is (the first occurrence not already claimed)."""
    claimed: set[int] = set()
    for kind, vtype, value in done:
        at = text.find(value)
        while at in claimed:
            at = text.find(value, at + 1)
        if at == -1:
            raise AssertionError("an inserted value is missing from its document")
        claimed.add(at)
        corpus.items.append(Inserted(name, kind, vtype, at, at + len(value)))


# --- the rule layer on code-like strings ----------------------------------------------------

#: Strings that code, logs and their comments are full of and that identify nobody. Each is
#: put into a Python comment (``# see <probe> here``) and read with ``format="code"`` by the
#: rules profile; any span is a rule-layer false positive the reader cannot prevent.
PROBES: tuple[str, ...] = (
    "/usr/lib/python3.11/site-packages/pkg/__init__.py",
    "C:\\Program Files\\App\\app.exe",
    "./build/2024-03-05/output.log",
    "1.2.3",
    "2.0.10",
    "3.28.36",
    "5.7.19",
    "10.4.12",
    "v4.8.19",
    "~=1.4.46",
    "lodash@4.17.21",
    "1.12.1-rc2",
    "9fceb02",
    "9fceb02d0ae598e95dc970b74767f19372d61af8",
    "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "123e4567-e89b-12d3-a456-426614174000",
    "0x7ffd5e8c",
    "git+https://github.com/pypa/pip.git@23.2.1#egg=pip",
    "git@github.com:pypa/pip.git",
    "@types/node@18.11.9",
    "https://registry.npmjs.org/lodash/-/lodash-4.17.21.tgz",
    "@manager.setter",
    "@pytest.mark.parametrize",
    "2147483647",
    "4294967295",
    "9223372036854775807",
    "1000000007",
    "127.0.0.1:8080",
    "localhost:5432",
    "Thread.java:833",
    "line 1234, column 56",
    "1709625600",
    "20240305T101500Z",
    "Mon Mar  4 10:15:00 2024",
)


def probe_rules(deid: Deidentifier) -> list[str]:
    rows = []
    for probe in PROBES:
        text = f"# see {probe} here\n"
        spans = deid.detect_document(text.encode("utf-8"), format="code", source="probe.py")
        found = "; ".join(
            f"`{text[slice(*fs.raw())]}` → {fs.span.label} ({fs.span.source})" for fs in spans
        )
        rows.append(f"| `{probe}` | {found or 'nothing'} |")
    return rows


# --- systems -------------------------------------------------------------------------------


@dataclass
class Run:
    system: str
    mode: str  # text / code
    kb: float
    spans: list[tuple[str, int, int, Category | str]]  # doc, start, end, label
    seconds: float


def run_system(deid: Deidentifier, system: str, mode: str, docs: Sequence[Doc]) -> Run:
    spans: list[tuple[str, int, int, Category | str]] = []
    started = time.perf_counter()
    for d in docs:
        if mode == "text":
            for s in deid.detect(d.text):
                spans.append((d.name, s.start, s.end, s.label))
        else:
            source = Path(d.name).name
            for fs in deid.detect_document(d.text.encode("utf-8"), format="code", source=source):
                start, end = fs.raw()
                spans.append((d.name, start, end, fs.span.label))
    seconds = time.perf_counter() - started
    kb = sum(len(d.text.encode("utf-8")) for d in docs) / 1000
    return Run(system, mode, kb, spans, seconds)


def recall(run: Run, items: Sequence[Inserted]) -> dict[tuple[str, str], tuple[int, int]]:
    """(kind, value type) → (found, inserted); found = every character covered by a span."""
    covered: dict[str, list[tuple[int, int]]] = {}
    for doc, start, end, _ in run.spans:
        covered.setdefault(doc, []).append((start, end))
    out: dict[tuple[str, str], tuple[int, int]] = {}
    for it in items:
        ranges = covered.get(it.doc, [])
        ok = all(any(s <= p < e for s, e in ranges) for p in range(it.start, it.end))
        found, total = out.get((it.kind, it.value_type), (0, 0))
        out[(it.kind, it.value_type)] = (found + ok, total + 1)
    return out


# --- report --------------------------------------------------------------------------------


def _per100(n: int, kb: float) -> str:
    return f"{100 * n / kb:.1f}" if kb else "-"


def _categories(run: Run, docs: Sequence[Doc]) -> str:
    count = Counter(str(label) for _, _, _, label in run.spans)
    return ", ".join(f"{k} {v}" for k, v in count.most_common()) or "none"


def _attribution_names(run: Run, docs: Sequence[Doc]) -> int:
    """PERSON spans on a comment line that credits an author (real names, not errors)."""
    texts = {d.name: d.text for d in docs}
    n = 0
    for doc, start, _end, label in run.spans:
        if label is not Category.PERSON:
            continue
        text = texts[doc]
        line = text[text.rfind("\n", 0, start) + 1 : start]
        if re.search(r"(Author|Authors|Copyright|\(c\)|©|Written by|Contributed by)", line, re.I):
            n += 1
    return n


_NAMEISH = (Category.PERSON, Category.PERSON_THIRD_PARTY, Category.PERSON_CLAN)


def _shape(text: str) -> str:
    """``3.28.36`` → ``9.99.99``: digits, lower- and upper-case letters by class."""
    out = re.sub(r"[0-9]", "9", text)
    out = re.sub(r"[a-z]", "a", out)
    out = re.sub(r"[A-Z]", "A", out)
    return re.sub(r"([aA])\1{2,}", r"\1\1\1", out)


def _examples(run: Run, docs: Sequence[Doc], limit: int = 15) -> list[str]:
    """The most frequent span shapes of a run, with one example where it is no contact
    detail or name (those are the files' real authors: shape only)."""
    texts = {d.name: d.text for d in docs}
    count: Counter[tuple[str, str]] = Counter()
    example: dict[tuple[str, str], str] = {}
    for doc, start, end, label in run.spans:
        text = texts[doc][start:end].replace("\n", " ")
        key = (str(label), _shape(text)[:40])
        count[key] += 1
        if label not in _NAMEISH and label is not Category.CONTACT_OTHER:
            example.setdefault(key, text[:40])
    rows = []
    for (label, shape), n in count.most_common(limit):
        sample = example.get((label, shape), "")
        cell = f"`{sample}`".replace("|", "\\|") if sample else "(not shown)"
        rows.append(f"| {label} | `{shape}` | {cell} | {n} |")
    return rows


def report(
    docs: Sequence[Doc],
    missing: Sequence[str],
    fp_runs: Sequence[Run],
    recall_runs: Sequence[tuple[Run, dict[tuple[str, str], tuple[int, int]]]],
    recall_items: Sequence[Inserted],
    command: str,
    elapsed: float,
    tagger_docs: Sequence[Doc],
    probe_rows: Sequence[str],
    threads: int,
) -> str:
    kinds = Counter()
    for d in docs:
        kinds[d.kind] += len(d.text.encode("utf-8"))
    lines = [
        "# Code-aware reading: false positives and recall on code, docs and logs",
        "",
        f"Command: `{command}`. Machine: {platform.machine()}, {os.cpu_count()} cores "
        f"(the project's shared 2-core development machine), Python "
        f"{platform.python_version()}, Pygments {pygments.__version__}. "
        f"Total run time {elapsed:.0f} s; the tagger ran with {threads} torch thread(s).",
        "",
        "Corpus (real open-source files with no patient data, read from this machine's Python "
        f"installation, `{STDLIB}` and `{PURELIB}`): "
        + ", ".join(f"`{d.name}`" for d in docs)
        + f". {sum(kinds.values()) / 1000:.0f} kB in all: Python "
        f"{kinds['python'] / 1000:.0f} kB, docs/licences {kinds['docs'] / 1000:.0f} kB, "
        f"synthetic log {kinds['log'] / 1000:.0f} kB (seed {SEED}: log4j, Python logging, "
        "ISO, syslog, nginx and JSON layouts with Java and Python stack traces; no names, "
        "addresses or e-mails).",
        "",
    ]
    if missing:
        lines += [f"Missing here, skipped: {', '.join(missing)}.", ""]
    lines += [
        "Every span on this corpus is a false positive, except PERSON spans on attribution "
        "lines (`# Author: …`, copyright lines), which name the files' real authors; they are "
        "counted in the last column and included in the totals.",
        "",
        "## Spans per 100 kB",
        "",
        '`text`: the file read as plain text. `code`: read with `format="code"` (the file '
        "name picks the mode: Python lexed by Pygments, .rst/.md/.txt as prose with code "
        "blocks, .log line by line).",
        "",
        "| system | mode | corpus | kB | spans | spans / 100 kB | of which author names | "
        "by category | s |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for run in fp_runs:
        corpus = "subset" if run.system.startswith("default") else "all"
        subset = tagger_docs if corpus == "subset" else docs
        lines.append(
            f"| {run.system} | {run.mode} | {corpus} | {run.kb:.0f} | {len(run.spans)} | "
            f"{_per100(len(run.spans), run.kb)} | {_attribution_names(run, subset)} | "
            f"{_categories(run, subset)} | {run.seconds:.1f} |"
        )
    if any(r.system.startswith("default") for r in fp_runs):
        lines += [
            "",
            "The default profile ran on a subset only: "
            + ", ".join(f"`{d.name}`" for d in tagger_docs)
            + f" ({sum(len(d.text.encode()) for d in tagger_docs) / 1000:.0f} kB); "
            "compare it with the rules rows on the same subset:",
            "",
            "| system | mode | spans on the subset | spans / 100 kB |",
            "|---|---|---|---|",
        ]
        names = {d.name for d in tagger_docs}
        kb = sum(len(d.text.encode()) for d in tagger_docs) / 1000
        for run in fp_runs:
            n = sum(1 for doc, *_ in run.spans if doc in names)
            lines.append(f"| {run.system} | {run.mode} | {n} | {_per100(n, kb)} |")
    lines += ["", "## What is flagged (most frequent span shapes per run)", ""]
    lines += [
        "Shapes: digits as 9, letters as a/A. Examples are shown except for names and contact "
        "details (on this corpus those are the real authors named in the files).",
        "",
    ]
    for run in fp_runs:
        if run.system == "default (rules + tagger)" or run.system == "rules":
            subset = tagger_docs if run.system.startswith("default") else docs
            lines += [
                f"### {run.system}, {run.mode}",
                "",
                "| category | shape | example | count |",
                "|---|---|---|---|",
                *_examples(run, subset),
                "",
            ]
    lines += [
        "## Recall of inserted identifiers",
        "",
        f"{len(recall_items)} invented values (seed {SEED}) inserted into copies of "
        + ", ".join(f"`{f}`" for f in RECALL_FILES)
        + " (a comment line, a string assignment and a function with a docstring, each "
        "holding a name, a phone number or an e-mail address, before a statement chosen at "
        "random, kept only where the file still parses), into log messages of a synthetic "
        "log, and into `Author:` lines of a git log pasted in a ticket. Found = every "
        "character of the value inside a span of any identifier category.",
        "",
    ]
    keys = sorted({k for _, r in recall_runs for k in r})
    header = "| inserted into | value | " + " | ".join(
        f"{run.system} ({run.mode})" for run, _ in recall_runs
    )
    lines += [header + " |", "|---|---|" + "---|" * len(recall_runs)]
    for k in keys:
        cells = []
        for _, table in recall_runs:
            found, total = table.get(k, (0, 0))
            cells.append(f"{found}/{total}")
        lines.append(f"| {k[0]} | {k[1]} | " + " | ".join(cells) + " |")
    totals = []
    for _, table in recall_runs:
        found = sum(f for f, _ in table.values())
        total = sum(t for _, t in table.values())
        totals.append(f"**{found}/{total} ({100 * found / max(total, 1):.0f} %)**")
    lines.append("| **all** | | " + " | ".join(totals) + " |")
    lines += [
        "",
        "## The rule layer on code-like strings inside comments and strings",
        "",
        'Each string in a Python comment (`# see … here`), read with `format="code"` by '
        "the rules profile. The reader scans comments and strings, so these spans are "
        "rule-layer false positives that only the rules can avoid.",
        "",
        "| string | spans |",
        "|---|---|",
        *probe_rows,
    ]
    lines += [
        "",
        "The rules profile has no name detector: names are found in `code` mode only where "
        "the reader knows a person is named (`Author:` lines, trailers, `@author`) and where "
        "such a name recurs in the same document. The tagger (default profile) and Presidio "
        "find names in free text.",
        "",
    ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--no-tagger", action="store_true")
    parser.add_argument("--no-presidio", action="store_true")
    parser.add_argument("--threads", type=int, default=1, help="torch threads for the tagger")
    args = parser.parse_args()
    command = " ".join([".venv/bin/python", "benchmarks/code_fp.py", *sys.argv[1:]])
    started = time.perf_counter()
    docs, missing = load_corpus()
    rng = random.Random(SEED)
    rc = recall_corpus(docs, rng)
    tagger_docs = [d for d in docs if d.name in TAGGER_SUBSET]
    log = next(d for d in docs if d.name == LOG_NAME)
    cut = log.text.rfind("\n", 0, TAGGER_LOG_CHARS) + 1
    tagger_docs.append(Doc(LOG_NAME, log.text[:cut], "log"))

    probe_rows = probe_rules(Deidentifier(profile="rules", policy="tag"))
    fp_runs: list[Run] = []
    recall_runs: list[tuple[Run, dict[tuple[str, str], tuple[int, int]]]] = []
    systems: list[tuple[str, Callable[[], Deidentifier], Sequence[Doc]]] = [
        ("rules", lambda: Deidentifier(profile="rules", policy="tag"), docs),
    ]
    if not args.no_presidio:

        def presidio() -> Deidentifier:
            from polydeid.evaluate.baselines import PresidioDetector

            return Deidentifier(
                detectors=[PresidioDetector(allow_any_language=True)],
                policy="tag",
                segment_steps=False,
            )

        systems.append(("presidio", presidio, docs))
    if not args.no_tagger:

        def default() -> Deidentifier:
            import torch

            torch.set_num_threads(args.threads)
            return Deidentifier(profile="default", policy="tag")

        systems.append(("default (rules + tagger)", default, tagger_docs))
    for system, build, corpus in systems:
        deid = build()
        for mode in ("text", "code"):
            print(f"{system} {mode} ...", file=sys.stderr, flush=True)
            fp_runs.append(run_system(deid, system, mode, corpus))
            r = run_system(deid, system, mode, rc.docs)
            recall_runs.append((r, recall(r, rc.items)))
    elapsed = time.perf_counter() - started
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / "code_fp.md"
    out.write_text(
        report(
            docs,
            missing,
            fp_runs,
            recall_runs,
            rc.items,
            command,
            elapsed,
            tagger_docs,
            probe_rows,
            args.threads,
        ),
        "utf-8",
    )
    print(f"wrote {out.relative_to(ROOT)} in {elapsed:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
