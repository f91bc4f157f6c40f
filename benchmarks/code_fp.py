"""False spans and recall of code-aware reading (``format="code"``) on real code.

About 500 kB of the Python standard library (a fixed list of modules, read from this
machine's CPython installation: the ``email`` package, ``http.cookies``, ``http.cookiejar``
and ``smtplib``) is read as code, as ``polydeid detect DIR`` reads it, by

(a) the rules profile, through :class:`polydeid.formats.code.CodeReader` and, for reference,
    as plain text;
(b) the default profile (rules + tagger) through the reader (slow on a 2-core machine: run it
    once, at the end);
(c) Microsoft Presidio (its English pipeline, as ``benchmarks/quality.py`` runs it) through
    the reader.

Each run is scored against ``benchmarks/code_fp_gold.toml``, a hand-checked list of the real
personal data in those files (the authors' names, initials and e-mail addresses): recall of
those, and false spans (spans that touch no listed item) per 100 kB, by category. A synthetic
log (seeded; no personal data: every span is false) is scored beside it, invented names, phone
numbers and e-mail addresses inserted into copies of some files and into logs give each
system's recall of new values, and code-like strings in comments show what the rules alone
make of them.

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
import tomllib
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pygments

from polydeid.api import Deidentifier
from polydeid.core.taxonomy import Category

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
GOLD = ROOT / "benchmarks" / "code_fp_gold.toml"
SEED = 20240305

STDLIB = Path(sysconfig.get_paths()["stdlib"])

#: The corpus: standard-library files, relative to STDLIB, in this order (521 kB in 3.11).
CORPUS: tuple[str, ...] = (
    "email/__init__.py",
    "email/_encoded_words.py",
    "email/_header_value_parser.py",
    "email/_parseaddr.py",
    "email/_policybase.py",
    "email/base64mime.py",
    "email/charset.py",
    "email/contentmanager.py",
    "email/encoders.py",
    "email/errors.py",
    "email/feedparser.py",
    "email/generator.py",
    "email/header.py",
    "email/headerregistry.py",
    "email/iterators.py",
    "email/message.py",
    "email/parser.py",
    "email/policy.py",
    "email/quoprimime.py",
    "email/utils.py",
    "email/mime/__init__.py",
    "email/mime/application.py",
    "email/mime/audio.py",
    "email/mime/base.py",
    "email/mime/image.py",
    "email/mime/message.py",
    "email/mime/multipart.py",
    "email/mime/nonmultipart.py",
    "email/mime/text.py",
    "http/cookies.py",
    "http/cookiejar.py",
    "smtplib.py",
)
LOG_NAME = "synthetic/service.log"
#: Files that receive inserted identifiers (copies; the corpus itself stays as it is).
RECALL_FILES = ("email/iterators.py", "email/encoders.py", "email/mime/text.py")
#: Gold kinds that must be found, and those a span may touch without being false.
REQUIRED = ("name", "email")


@dataclass
class Doc:
    name: str  # a file name with its extension (the reader's mode follows it)
    text: str
    kind: str  # python / log


@dataclass(frozen=True)
class GoldItem:
    doc: str
    kind: str
    start: int
    end: int


def load_corpus() -> tuple[list[Doc], list[str]]:
    docs: list[Doc] = []
    missing: list[str] = []
    for rel in CORPUS:
        path = STDLIB / rel
        if not path.is_file():
            missing.append(rel)
            continue
        docs.append(Doc(rel, path.read_text("utf-8"), "python"))
    return docs, missing


def load_gold(docs: Sequence[Doc]) -> list[GoldItem]:
    """Every occurrence of every listed item in ``docs``: whole words, case-sensitive, longer
    items first (a shorter one never claims characters a longer one holds)."""
    raw = tomllib.loads(GOLD.read_text("utf-8"))
    items = sorted(raw["item"], key=lambda it: -len(it["text"]))
    found: list[GoldItem] = []
    for d in docs:
        claimed = [False] * len(d.text)
        for it in items:
            pattern = re.compile(rf"(?<![\w@.]){re.escape(it['text'])}(?![\w@]|\.\w)")
            for m in pattern.finditer(d.text):
                if any(claimed[m.start() : m.end()]):
                    continue
                claimed[m.start() : m.end()] = [True] * (m.end() - m.start())
                found.append(GoldItem(d.name, it["kind"], m.start(), m.end()))
    return found


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


# --- scoring -------------------------------------------------------------------------------


@dataclass
class Score:
    kb: float
    found: Counter[str]  # required kind -> found
    total: Counter[str]  # required kind -> listed
    false: Counter[str]  # category -> false spans
    tolerated: int  # spans on an address or example item
    missed: list[str]  # shapes of the missed items


def score(run: Run, docs: Sequence[Doc], gold: Sequence[GoldItem]) -> Score:
    names = {d.name for d in docs}
    by_doc: dict[str, list[tuple[int, int, Category | str]]] = {}
    for doc, start, end, label in run.spans:
        if doc in names:
            by_doc.setdefault(doc, []).append((start, end, label))
    found: Counter[str] = Counter()
    total: Counter[str] = Counter()
    missed: list[str] = []
    texts = {d.name: d.text for d in docs}
    for g in gold:
        if g.doc not in names or g.kind not in REQUIRED:
            continue
        total[g.kind] += 1
        spans = by_doc.get(g.doc, [])
        if all(any(s <= p < e for s, e, _ in spans) for p in range(g.start, g.end)):
            found[g.kind] += 1
        else:
            missed.append(f"{g.kind} `{_shape(texts[g.doc][g.start : g.end])}`")
    false: Counter[str] = Counter()
    tolerated = 0
    gold_by_doc: dict[str, list[GoldItem]] = {}
    for g in gold:
        gold_by_doc.setdefault(g.doc, []).append(g)
    for doc, spans in by_doc.items():
        for start, end, label in spans:
            hits = [g for g in gold_by_doc.get(doc, []) if g.start < end and start < g.end]
            if not hits:
                false[str(label)] += 1
            elif all(g.kind not in REQUIRED for g in hits):
                tolerated += 1
    kb = sum(len(d.text.encode("utf-8")) for d in docs) / 1000
    return Score(kb, found, total, false, tolerated, missed)


# --- report --------------------------------------------------------------------------------


def _per100(n: int, kb: float) -> str:
    return f"{100 * n / kb:.1f}" if kb else "-"


def _shape(text: str) -> str:
    """``3.28.36`` → ``9.99.99``: digits, lower- and upper-case letters by class."""
    out = re.sub(r"[0-9]", "9", text)
    out = re.sub(r"[a-z]", "a", out)
    out = re.sub(r"[A-Z]", "A", out)
    return re.sub(r"([aA])\1{2,}", r"\1\1\1", out)


_NAMEISH = (Category.PERSON, Category.PERSON_THIRD_PARTY, Category.PERSON_CLAN)


def _false_examples(
    run: Run, docs: Sequence[Doc], gold: Sequence[GoldItem], limit: int = 15
) -> list[str]:
    """The most frequent shapes of a run's false spans, with an example where it is no name
    or contact detail."""
    texts = {d.name: d.text for d in docs}
    gold_by_doc: dict[str, list[GoldItem]] = {}
    for g in gold:
        gold_by_doc.setdefault(g.doc, []).append(g)
    count: Counter[tuple[str, str]] = Counter()
    example: dict[tuple[str, str], str] = {}
    for doc, start, end, label in run.spans:
        if doc not in texts:
            continue
        if any(g.start < end and start < g.end for g in gold_by_doc.get(doc, [])):
            continue
        text = texts[doc][start:end].replace("\n", " ")
        key = (str(label), _shape(text)[:40])
        count[key] += 1
        if label not in _NAMEISH and label not in (Category.CONTACT_OTHER, Category.CONTACT_PHONE):
            example.setdefault(key, text[:40])
    rows = []
    for (label, shape), n in count.most_common(limit):
        sample = example.get((label, shape), "")
        cell = f"`{sample}`".replace("|", "\\|") if sample else "(not shown)"
        rows.append(f"| {label} | `{shape}` | {cell} | {n} |")
    return rows


def _fraction(found: int, total: int) -> str:
    return f"{found}/{total}" + (f" ({100 * found / total:.0f} %)" if total else "")


def report(
    docs: Sequence[Doc],
    log: Doc,
    missing: Sequence[str],
    gold: Sequence[GoldItem],
    fp_runs: Sequence[tuple[Run, Run]],
    recall_runs: Sequence[tuple[Run, dict[tuple[str, str], tuple[int, int]]]],
    recall_items: Sequence[Inserted],
    command: str,
    elapsed: float,
    probe_rows: Sequence[str],
    threads: int,
) -> str:
    kb = sum(len(d.text.encode("utf-8")) for d in docs) / 1000
    listed = Counter(g.kind for g in gold)
    lines = [
        "# Code-aware reading: false spans and recall on real code",
        "",
        f"Command: `{command}`. Machine: {platform.machine()}, {os.cpu_count()} cores "
        f"(the project's shared 2-core development machine), Python "
        f"{platform.python_version()}, Pygments {pygments.__version__}. "
        f"Total run time {elapsed:.0f} s; the tagger ran with {threads} torch thread(s).",
        "",
        f"Corpus: {len(docs)} files of this machine's CPython standard library (`{STDLIB}`), "
        f"{kb:.0f} kB: " + ", ".join(f"`{d.name}`" for d in docs) + ". "
        "Gold: `benchmarks/code_fp_gold.toml`, the real personal data in these files, checked "
        f"by hand: {listed['name']} names, surnames, initials and user names and "
        f"{listed['email']} personal e-mail addresses (every occurrence), plus "
        f"{listed['address'] + listed['example']} addresses and example names that are no "
        "real person's (a mailing list, example addresses, project URLs): a span on one of "
        "those is neither false nor required.",
        "",
    ]
    if missing:
        lines += [f"Missing here, skipped: {', '.join(missing)}.", ""]
    lines += [
        "## False spans per 100 kB and recall of the real personal data",
        "",
        'A false span touches no listed item. `code`: read with `format="code"` (as '
        "`polydeid detect DIR` reads a `.py` file: comments, docstrings and strings only, "
        "lexed by Pygments); `text`: the file read as plain text. Found: every character of "
        "the item inside a span of any identifier category.",
        "",
        "| system | mode | kB | false spans | false / 100 kB | worst category / 100 kB | "
        "names found | e-mails found | on other addresses | by category (false) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for run, _log_run in fp_runs:
        sc = score(run, docs, gold)
        n_false = sum(sc.false.values())
        worst = max(sc.false.items(), key=lambda kv: kv[1], default=("none", 0))
        lines.append(
            f"| {run.system} | {run.mode} | {sc.kb:.0f} | {n_false} | {_per100(n_false, sc.kb)} "
            f"| {worst[0]} {_per100(worst[1], sc.kb)} | "
            f"{_fraction(sc.found['name'], sc.total['name'])} | "
            f"{_fraction(sc.found['email'], sc.total['email'])} | {sc.tolerated} | "
            + (", ".join(f"{k} {v}" for k, v in sc.false.most_common()) or "none")
            + " |"
        )
    lines += [
        "",
        "Per category, false spans per 100 kB (target: at most 5 in every category):",
        "",
    ]
    cats = sorted({c for run, _ in fp_runs for c in score(run, docs, gold).false})
    lines += [
        "| system | mode | " + " | ".join(cats) + " |",
        "|---|---|" + "---|" * len(cats),
    ]
    for run, _ in fp_runs:
        sc = score(run, docs, gold)
        lines.append(
            f"| {run.system} | {run.mode} | "
            + " | ".join(_per100(sc.false.get(c, 0), sc.kb) for c in cats)
            + " |"
        )
    lines += ["", "Missed real personal data (shapes: digits 9, letters a/A):", ""]
    for run, _ in fp_runs:
        sc = score(run, docs, gold)
        missed = Counter(sc.missed)
        lines.append(
            f"- {run.system}, {run.mode}: "
            + (", ".join(f"{k} ×{v}" for k, v in missed.most_common()) or "none")
        )
    log_kb = len(log.text.encode("utf-8")) / 1000
    lines += [
        "",
        f"## A synthetic log ({log_kb:.0f} kB, seed {SEED})",
        "",
        "log4j, Python logging, ISO, syslog, nginx and JSON layouts with Java and Python stack "
        "traces; no names, addresses or e-mails, so every span is false.",
        "",
        "| system | mode | spans | spans / 100 kB | by category |",
        "|---|---|---|---|---|",
    ]
    for _run, log_run in fp_runs:
        count = Counter(str(label) for *_, label in log_run.spans)
        lines.append(
            f"| {log_run.system} | {log_run.mode} | {len(log_run.spans)} | "
            f"{_per100(len(log_run.spans), log_kb)} | "
            + (", ".join(f"{k} {v}" for k, v in count.most_common()) or "none")
            + " |"
        )
    lines += ["", "## What is flagged falsely (most frequent span shapes per run)", ""]
    lines += [
        "Shapes: digits as 9, letters as a/A. Examples are shown except for names and contact "
        "details.",
        "",
    ]
    for run, _ in fp_runs:
        lines += [
            f"### {run.system}, {run.mode}",
            "",
            "| category | shape | example | count |",
            "|---|---|---|---|",
            *_false_examples(run, docs, gold),
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
        "the rules profile.",
        "",
        "| string | spans |",
        "|---|---|",
        *probe_rows,
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
    gold = load_gold(docs)
    log = Doc(LOG_NAME, synthetic_log(random.Random(SEED), 40_000), "log")
    rc = recall_corpus(docs, random.Random(SEED))

    probe_rows = probe_rules(Deidentifier(profile="rules", policy="tag"))
    fp_runs: list[tuple[Run, Run]] = []
    recall_runs: list[tuple[Run, dict[tuple[str, str], tuple[int, int]]]] = []
    systems: list[tuple[str, Callable[[], Deidentifier], tuple[str, ...]]] = [
        ("rules", lambda: Deidentifier(profile="rules", policy="tag"), ("code", "text")),
    ]
    if not args.no_presidio:

        def presidio() -> Deidentifier:
            from polydeid.evaluate.baselines import PresidioDetector

            return Deidentifier(
                detectors=[PresidioDetector(allow_any_language=True)],
                policy="tag",
                segment_steps=False,
            )

        systems.append(("presidio", presidio, ("code",)))
    if not args.no_tagger:

        def default() -> Deidentifier:
            import torch

            torch.set_num_threads(args.threads)
            return Deidentifier(profile="default", policy="tag")

        systems.append(("default (rules + tagger)", default, ("code",)))
    for system, build, modes in systems:
        deid = build()
        for mode in modes:
            print(f"{system} {mode} ...", file=sys.stderr, flush=True)
            fp_runs.append(
                (run_system(deid, system, mode, docs), run_system(deid, system, mode, [log]))
            )
            r = run_system(deid, system, mode, rc.docs)
            recall_runs.append((r, recall(r, rc.items)))
    elapsed = time.perf_counter() - started
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / "code_fp.md"
    out.write_text(
        report(
            docs,
            log,
            missing,
            gold,
            fp_runs,
            recall_runs,
            rc.items,
            command,
            elapsed,
            probe_rows,
            args.threads,
        ),
        "utf-8",
    )
    print(f"wrote {out.relative_to(ROOT)} in {elapsed:.0f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
