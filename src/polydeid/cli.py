"""Command-line interface: ``polydeid detect|redact|eval|validate|decrypt|keygen``, listings.

Exit codes: 0 success; 1 some records or files failed (each reported on stderr with its
location, the rest processed); 2 usage or configuration error (nothing processed).
Only this module and the service read environment variables (``POLYDEID_KEY_FILE``).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Any

from polydeid.api import BATCH_RECORDS, Deidentifier, field_span_json, span_json
from polydeid.core.errors import (
    ConfigError,
    CoverageError,
    DataFileError,
    InputError,
    InputLimitError,
    PolydeidError,
    VaultKeyError,
)
from polydeid.core.segments import Origin, Segment
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category
from polydeid.formats import limits
from polydeid.formats.jsonl import JsonlFailure, JsonlRecord, looks_like_jsonl, read_jsonl
from polydeid.formats.registry import FORMATS, RECORD_FORMATS, SUFFIXES, detect_format
from polydeid.formats.text import decode_utf8
from polydeid.locales import canonical_country, canonical_language, language_info, languages

TEXT_SUFFIXES = {".txt", ".text", ".md", ".note"}
JSONL_SUFFIXES = {".jsonl", ".ndjson"}
#: Every suffix a directory walk picks up.
KNOWN_SUFFIXES = set(SUFFIXES) | TEXT_SUFFIXES | JSONL_SUFFIXES


#: Errors met while reading records that are no record's fault (a data file, a model's router,
#: the vault's key): they stop the run as configuration errors instead of failing each record.
FATAL_ERRORS = (DataFileError, CoverageError, VaultKeyError)


@dataclass
class RunReport:
    """Counts for the closing summary; never holds identifier text."""

    records: int = 0
    failures: list[str] = field(default_factory=list)
    spans: dict[str, int] = field(default_factory=dict)

    def count(self, labels: Sequence[str]) -> None:
        for label in labels:
            self.spans[label] = self.spans.get(label, 0) + 1

    def fail(self, error: PolydeidError) -> None:
        if isinstance(error, FATAL_ERRORS):  # no record's fault: the run stops (exit 2)
            raise error
        self.failures.append(str(error))
        print(f"polydeid: error: {error}", file=sys.stderr)


def _add_common(p: argparse.ArgumentParser) -> None:
    p.add_argument("input", help="file, directory, or - for standard input")
    p.add_argument("-o", "--output", default="-", help="file, directory, or - (default)")
    p.add_argument(
        "--lang",
        default=None,
        help="language code, or auto to identify it where a record has none "
        "(default: per record, else en)",
    )
    p.add_argument("--country", action="append", default=[], help="ISO country code (repeatable)")
    p.add_argument(
        "--profile",
        default="default",
        help="detector profile: default (rules + tagger) or rules (default: default)",
    )
    p.add_argument(
        "--format",
        choices=("auto", *FORMATS),
        default="auto",
        help="input format (default: by extension and content)",
    )
    p.add_argument(
        "--columns",
        default=None,
        help="CSV/TSV column policy: 'Header=CATEGORY|text|skip,…' "
        "(a header or a 1-based column number)",
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="polydeid", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("detect", help="find identifiers; write spans as JSON/JSONL")
    _add_common(p)
    p.set_defaults(func=cmd_detect)

    p = sub.add_parser("redact", help="replace identifiers according to a policy")
    _add_common(p)
    p.add_argument("--policy", default="tag", help="policy name or TOML file (default: tag)")
    p.add_argument("--key-file", default=None, help="secret key file (or POLYDEID_KEY_FILE)")
    p.add_argument("--patient-id", default=None, help="patient id for date shifting")
    p.add_argument(
        "--vault",
        default=None,
        help="surrogate vault shared across runs: a SQLite file or a postgresql:// URL "
        "(with --key-file: originals are sealed for `polydeid reidentify`)",
    )
    p.set_defaults(func=cmd_redact)

    p = sub.add_parser("eval", help="score systems side by side on an annotated corpus")
    p.add_argument("--gold", required=True, help="annotated corpus: file or directory")
    p.add_argument("--format", required=True, help="corpus format (brat, conll, jsonl, …)")
    p.add_argument("--scheme", default=None, help="label scheme of the corpus (e.g. meddocan)")
    p.add_argument("--lang", default=None, help="language of the corpus, where it has none")
    p.add_argument(
        "--system",
        action="append",
        default=[],
        help="system to run (repeatable): a profile (rules, default), presidio, "
        "or detector names joined by '+' (default: rules)",
    )
    p.add_argument("--out", required=True, help="folder for report.json, report.md, report.html")
    p.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples (0: none)")
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser("validate", help="check a corpus: offsets, labels, language, duplicates")
    p.add_argument("path", help="JSONL corpus file or directory (or any --format corpus)")
    p.add_argument("--format", default="jsonl", help="corpus format (default: jsonl)")
    p.add_argument("--scheme", default=None, help="label scheme for non-JSONL corpora")
    p.add_argument("--lang", default=None, help="language for corpora without one")
    p.add_argument("--no-language-check", action="store_true", help="skip language ID")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=cmd_validate)

    p = sub.add_parser("synth", help="generate a synthetic annotated clinical corpus")
    size = p.add_mutually_exclusive_group()
    size.add_argument("--n", type=int, default=None, help="documents in all (default 1000)")
    size.add_argument("--per-language", type=int, default=None, help="documents per language")
    p.add_argument("--seed", type=int, default=13, help="random seed (default 13)")
    p.add_argument("--out", required=True, help="output folder (synth.jsonl, manifest.json)")
    p.add_argument("--langs", default=None, help="comma-separated codes (default: all)")
    p.add_argument("--split", choices=("train", "dev", "test"), default="train", help="name split")
    p.add_argument("--formats", default=None, help="comma-separated text formats (default: all)")
    p.add_argument(
        "--export",
        default="",
        help="also write these exports: comma-separated bio, hf, sft",
    )
    p.add_argument("--scheme", default=None, help="label scheme of the bio/hf exports")
    p.add_argument(
        "--validate", action="store_true", help="validate the output; write validation.md"
    )
    p.add_argument(
        "--llm-url",
        default=None,
        help="write documents with an OpenAI-compatible chat endpoint (.../chat/completions); "
        "API key from POLYDEID_LLM_API_KEY",
    )
    p.add_argument("--llm-model", default="local", help="model name sent to the endpoint")
    p.set_defaults(func=cmd_synth)

    for name in _EXTENSIONS:
        importlib.import_module(name).register(sub)

    p = sub.add_parser("langid", help="identify the language of each line or record")
    p.add_argument("input", help="file, or - for standard input")
    p.add_argument("-o", "--output", default="-", help="file or - (default)")
    p.add_argument(
        "--format", choices=("auto", "text", "jsonl"), default="auto", help="input format"
    )
    p.set_defaults(func=cmd_langid)

    p = sub.add_parser(
        "models", help="list detector kinds, whether each is installed, and what it covers"
    )
    p.set_defaults(func=cmd_models)

    p = sub.add_parser("languages", help="list supported languages")
    p.set_defaults(func=cmd_languages)
    p = sub.add_parser("categories", help="list canonical categories")
    p.set_defaults(func=cmd_categories)
    p = sub.add_parser("policies", help="list shipped policies")
    p.set_defaults(func=cmd_policies)
    p = sub.add_parser("keygen", help="write a new random secret key")
    p.add_argument("output", help="key file to create (refuses to overwrite)")
    p.set_defaults(func=cmd_keygen)
    p = sub.add_parser("decrypt", help="decrypt tokens written by the encrypt operator")
    p.add_argument("input", help="file with encrypted tokens, or - for standard input")
    p.add_argument("-o", "--output", default="-")
    p.add_argument("--key-file", default=None)
    p.set_defaults(func=cmd_decrypt)
    return parser


#: Modules that add subcommands (``register(sub)``); they import heavy dependencies
#: (FastAPI, rich, pyspark …) only when their command runs.
_EXTENSIONS = (
    "polydeid.batch.cli",
    "polydeid.serve.cli",
    "polydeid.transform.vault_cli",
    "polydeid.detect.tagger.export",
    "polydeid.train.gliner",
)


# --- input and output -------------------------------------------------------------------


def _read_bytes(path: str) -> bytes:
    if path == "-":
        return sys.stdin.buffer.read()
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read input ({exc.strerror})", location=path) from None


def _write_atomic(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` via a temporary file, so nothing partial replaces a file."""
    if path == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as exc:
        raise output_error(exc, path) from None
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, target)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise output_error(exc, path) from None
        raise


def output_error(exc: OSError, location: str) -> ConfigError:
    """An output that cannot be written, as a configuration error (its reason, not its text)."""
    reason = exc.strerror or type(exc).__name__
    return ConfigError(f"cannot write the output ({reason})", location=location)


def check_output(path: str, *, folder: bool) -> None:
    """Refuse an output that cannot be written before any record is read, creating nothing:
    the nearest existing folder of ``path`` (``path`` itself when ``folder``, else its parent)
    must be a writable folder, and ``path`` no folder when it names a file."""
    if path == "-":
        return
    target = Path(path)
    if not folder and target.is_dir():
        raise ConfigError("the output names a folder; give a file", location=path)
    if folder and target.exists() and not target.is_dir():
        raise ConfigError("the output must be a folder", location=path)
    existing = target if folder else target.parent
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise ConfigError("a part of the output's path is a file, not a folder", location=path)
    if not os.access(existing, os.W_OK | os.X_OK):
        raise ConfigError("cannot write the output (permission denied or read-only)", location=path)


def _input_format(path: str, data: bytes, requested: str) -> str:
    if requested != "auto":
        return requested
    suffix = Path(path).suffix.lower() if path != "-" else ""
    if suffix in JSONL_SUFFIXES:
        return detect_format(path, data)
    if suffix in TEXT_SUFFIXES:
        return "text"
    fmt = detect_format(path, data)
    if fmt in ("text", "json") and looks_like_jsonl(data) and _first_record_has_text(data):
        return "jsonl"
    return fmt


def _first_record_has_text(data: bytes) -> bool:
    """Whether the first line is a JSON object with a string "text" (a JSONL record)."""
    first = data.lstrip().split(b"\n", 1)[0]
    try:
        record = limits.loads(first)
    except (ValueError, InputLimitError):
        return False
    return isinstance(record, dict) and isinstance(record.get("text"), str)


def _iter_inputs(path: str) -> Iterator[tuple[str, Path | None]]:
    """(source name, relative path under a directory or None) for every input file."""
    if path != "-" and Path(path).is_dir():
        root = Path(path)
        files = sorted(
            p for p in root.rglob("*") if p.is_file() and p.suffix.lower() in KNOWN_SUFFIXES
        )
        if not files:
            raise InputError("no input files of a known format found", location=path)
        for f in files:
            yield str(f), f.relative_to(root)
    else:
        yield path, None


# --- processing ---------------------------------------------------------------------------

#: (segment, record, its spans if already detected) -> the record's output
Handler = Callable[[Segment, dict[str, Any], Sequence[Span] | None], dict[str, Any]]
#: Spans of several segments detected together, or None: detect each by itself
#: (:meth:`Deidentifier.detect_together`)
DetectTogether = Callable[[list[Segment]], list[tuple[Span, ...]] | None]
#: (document, language, source) -> output bytes, for structured formats
DocumentHandler = Callable[[Any, str, str], bytes]


def _process_document(
    source: str,
    data: bytes,
    fmt: str,
    default_lang: str | None,
    handle_document: DocumentHandler,
    report: RunReport,
    options: dict[str, Any],
) -> bytes | None:
    """Read a structured document and de-identify it; a malformed one is reported (with
    its location) and nothing is written for it."""
    from polydeid.engine import read_document
    from polydeid.formats.base import sample_text

    try:
        reader_options = options if fmt in ("csv", "tsv") else {}
        doc = read_document(data, fmt, source=source, **reader_options)
        # the text sample (another pass over the fields) only when the language is identified
        sample = sample_text(doc) if default_lang == AUTO else ""
        lang = _record_language(sample, None, default_lang, source)
        out = handle_document(doc, lang, source)
    except PolydeidError as exc:
        report.fail(exc.at(source) if exc.location is None else exc)
        return None
    report.records += 1
    return out


def _process_file(
    source: str,
    fmt_requested: str,
    default_lang: str | None,
    handle: Handler,
    render_text: Callable[[dict[str, Any]], bytes],
    report: RunReport,
    countries: tuple[str, ...],
    handle_document: DocumentHandler,
    options: dict[str, Any],
    detect_together: DetectTogether | None = None,
) -> tuple[bytes, str] | None:
    """Process one input into (output bytes, format); errors are reported, records keep
    their order. The records of a JSONL file are detected :data:`BATCH_RECORDS` at a time
    with ``detect_together``, if given."""
    try:
        data = _read_bytes(source)
    except PolydeidError as exc:
        report.fail(exc)
        return None
    fmt = _input_format(source, data, fmt_requested)
    if fmt not in RECORD_FORMATS:
        out = _process_document(source, data, fmt, default_lang, handle_document, report, options)
        return None if out is None else (out, fmt)
    if fmt == "text":
        try:
            text = decode_utf8(data, source=source)
            segment = _record_segment(
                text, None, default_lang, source, Origin(file=source), countries
            )
            lang = segment.lang
            result = _with_language(handle(segment, {}, None), lang, None, default_lang)
        except PolydeidError as exc:
            report.fail(exc.at(source) if exc.location is None else exc)
            return None
        report.records += 1
        return render_text(result), fmt
    lines: list[bytes] = []
    items = iter(read_jsonl(data, source=source))
    while group := list(islice(items, BATCH_RECORDS)):
        ready: list[tuple[JsonlRecord, Segment | PolydeidError]] = []
        for item in group:
            if isinstance(item, JsonlFailure):
                continue
            try:
                segment = _record_segment(
                    item.text,
                    item.lang,
                    default_lang,
                    f"{source}:{item.line}",
                    Origin(file=source, line=item.line),
                    countries,
                )
                ready.append((item, segment))
            except PolydeidError as exc:
                ready.append((item, exc))
        ready_segments = [got for _, got in ready if isinstance(got, Segment)]
        together = detect_together(ready_segments) if detect_together is not None else None
        found = iter(together) if together is not None else None
        readied = iter(ready)
        for each in group:
            if isinstance(each, JsonlFailure):
                report.fail(each.error)
                lines.append(_error_line(each.line, each.error))
                continue
            item, got = next(readied)
            try:
                if not isinstance(got, Segment):
                    raise got
                segment = got
                spans = next(found) if found is not None else None
                out = _with_language(
                    handle(segment, item.data, spans), segment.lang, item.lang, default_lang
                )
            except PolydeidError as exc:
                err = exc if exc.location else exc.at(f"{source}:{item.line}")
                report.fail(err)
                lines.append(_error_line(item.line, err, record_id=item.id))
                continue
            report.records += 1
            lines.append(json.dumps(out, ensure_ascii=False).encode("utf-8"))
    return b"".join(line + b"\n" for line in lines), fmt


# --- language: explicit, per record, or identified (--lang auto) -------------------------

AUTO = "auto"


def _default_language(value: str | None) -> str | None:
    """``--lang``: None, ``auto`` (the identifier is loaded now: fail before any output) or a
    canonical code."""
    if value is None:
        return None
    if value.strip().lower() == AUTO:
        from polydeid.detect.langid import default_identifier

        default_identifier()
        return AUTO
    return canonical_language(value)


def _record_language(
    text: str, declared: str | None, default_lang: str | None, location: str
) -> str:
    """The record's own language, else ``--lang``, else en; with ``--lang auto`` the identified
    language, or a :class:`RecordError` at ``location`` when it is undetermined."""
    if declared:
        return canonical_language(declared)
    if default_lang == AUTO:
        from polydeid.detect.langid import resolve_language

        return resolve_language(text, location=location)
    return default_lang or "en"


def _record_segment(
    text: str,
    declared: str | None,
    default_lang: str | None,
    location: str,
    origin: Origin,
    countries: tuple[str, ...],
) -> Segment:
    """The record as a segment in its language (:func:`_record_language`); with ``--lang auto``
    and no language of its own, each part in another language carries that language (a
    record mixing English and Kiswahili is read sentence by sentence)."""
    if declared or default_lang != AUTO:
        lang = _record_language(text, declared, default_lang, location)
        return Segment(text, lang=lang, origin=origin, countries=countries)
    from polydeid.detect.langid.stretches import mixed_segment

    return mixed_segment(text, origin=origin, countries=countries, location=location)


def _mixed(args: argparse.Namespace) -> bool:
    """Whether ``--lang auto`` asks for a document's parts to be read in their own
    languages."""
    return str(args.lang or "").strip().lower() == AUTO


def _with_language(
    out: dict[str, Any], lang: str, declared: str | None, default_lang: str | None
) -> dict[str, Any]:
    """An output record with the identified language, where ``--lang auto`` supplied it."""
    if default_lang == AUTO and not declared:
        return {**out, "lang": lang}
    return out


def _error_line(line: int, error: PolydeidError, record_id: Any = None) -> bytes:
    record: dict[str, Any] = {"line": line, "error": {"code": error.code, "message": str(error)}}
    if record_id is not None:
        record = {"id": record_id, **record}
    return json.dumps(record, ensure_ascii=False).encode("utf-8")


def _column_policy(spec: str | None) -> dict[str, Any]:
    """``--columns 'Name=PERSON,Notes=text,3=skip'`` as reader options."""
    if not spec:
        return {}
    columns: dict[str | int, str] = {}
    for item in spec.split(","):
        if not item.strip():
            continue
        name, sep, role = item.rpartition("=")
        if not sep or not name.strip() or not role.strip():
            raise ConfigError(f"--columns: expected HEADER=ROLE, got {item.strip()!r}")
        key: str | int = int(name) if name.strip().isdigit() else name.strip()
        columns[key] = role.strip()
    return {"columns": columns}


def _run(
    args: argparse.Namespace,
    handle: Handler,
    render_text: Callable[[dict[str, Any]], bytes],
    text_suffix: str,
    report: RunReport,
    handle_document: DocumentHandler,
    document_suffix: str,
    detect_together: DetectTogether | None = None,
) -> int:
    default_lang = _default_language(args.lang)
    countries = _countries(args)
    options = _column_policy(args.columns)
    inputs = list(_iter_inputs(args.input))
    is_dir = inputs[0][1] is not None
    if is_dir and args.output == "-":
        raise ConfigError("a directory input needs --output DIR")
    check_output(args.output, folder=is_dir)
    for source, rel in inputs:
        result = _process_file(
            source,
            args.format,
            default_lang,
            handle,
            render_text,
            report,
            countries,
            handle_document,
            options,
            detect_together,
        )
        if result is None:
            continue
        out, fmt = result
        if rel is None:
            _write_atomic(args.output, out)
        else:
            if fmt == "jsonl":
                name = rel
            elif fmt == "text":
                name = rel.with_name(rel.name + text_suffix)
            else:
                name = rel.with_name(rel.name + document_suffix)
            _write_atomic(str(Path(args.output) / name), out)
    summary = ", ".join(f"{k}={v}" for k, v in sorted(report.spans.items())) or "none"
    print(
        f"polydeid: {report.records} record(s) processed, {len(report.failures)} failed; "
        f"spans: {summary}",
        file=sys.stderr,
    )
    return 1 if report.failures else 0


def _countries(args: argparse.Namespace) -> tuple[str, ...]:
    """``--country`` codes, checked: an unknown one is a configuration error (exit 2)."""
    return tuple(canonical_country(c) for c in args.country)


def cmd_detect(args: argparse.Namespace) -> int:
    countries = _countries(args)
    deid = Deidentifier(profile=args.profile)
    report = RunReport()

    def handle(
        segment: Segment, record: dict[str, Any], found: Sequence[Span] | None
    ) -> dict[str, Any]:
        spans = deid.detect_segment(segment) if found is None else found
        report.count([s.label.value for s in spans])
        return {**record, "spans": [span_json(s, segment) for s in spans]}

    def render(result: dict[str, Any]) -> bytes:
        return (json.dumps(result, ensure_ascii=False, indent=2) + "\n").encode("utf-8")

    def handle_document(doc: Any, lang: str, source: str) -> bytes:
        found = deid.processor().detect(
            doc, lang=lang, countries=countries, source=source, mixed=_mixed(args)
        )
        report.count([fs.span.label.value for fs in found])
        spans = [field_span_json(fs, lang, countries) for fs in found]
        return render({"format": doc.format, "spans": spans})

    return _run(
        args,
        handle,
        render,
        ".spans.json",
        report,
        handle_document,
        ".spans.json",
        deid.detect_together,
    )


def _key_file(args: argparse.Namespace) -> str | None:
    return args.key_file or os.environ.get("POLYDEID_KEY_FILE") or None


def cmd_redact(args: argparse.Namespace) -> int:
    countries = _countries(args)
    vault = None
    if args.vault:
        from polydeid.transform.vault import open_vault

        vault = open_vault(args.vault)
    deid = Deidentifier(
        profile=args.profile, policy=args.policy, key_file=_key_file(args), vault=vault
    )
    report = RunReport()

    def handle(
        segment: Segment, record: dict[str, Any], found: Sequence[Span] | None
    ) -> dict[str, Any]:
        patient = record.get("patient_id", args.patient_id)
        result = deid.redact_segment(
            segment,
            document_id=None if record.get("id") is None else str(record["id"]),
            patient_id=None if patient is None else str(patient),
            spans=found,
        )
        report.count([r.label.value for r in result.replacements])
        out: dict[str, Any] = {}
        for key in ("id", "lang"):
            if key in record:
                out[key] = record[key]
        out["text"] = result.text
        return out

    def render(result: dict[str, Any]) -> bytes:
        return str(result["text"]).encode("utf-8")

    def handle_document(doc: Any, lang: str, source: str) -> bytes:
        from polydeid.formats.registry import encode_document

        result = deid.processor().redact(
            doc,
            lang=lang,
            countries=countries,
            source=source,
            patient_id=args.patient_id,
            mixed=_mixed(args),
        )
        report.count(list(result.labels))
        return encode_document(result.text, doc)

    return _run(args, handle, render, "", report, handle_document, "", deid.detect_together)


def cmd_eval(args: argparse.Namespace) -> int:
    from polydeid.corpora import read_corpus
    from polydeid.evaluate.harness import evaluate
    from polydeid.evaluate.report import write_report

    lang = canonical_language(args.lang) if args.lang else None
    corpus = read_corpus(args.gold, args.format, scheme=args.scheme, lang=lang)
    for failure in corpus.failures:
        print(f"polydeid: error: {failure.error}", file=sys.stderr)
    run = evaluate(
        corpus,
        args.system or ["rules"],
        corpus_format=args.format,
        bootstrap=args.bootstrap,
        seed=args.seed,
    )
    paths = write_report(run, Path(args.out))
    for result in run.systems:
        micro = result.scores.strict.micro
        print(
            f"polydeid: {result.name}: strict P/R/F1 "
            + "/".join(
                "–" if v is None else f"{v:.3f}" for v in (micro.precision, micro.recall, micro.f1)
            ),
            file=sys.stderr,
        )
        print(f"polydeid: {result.name}: {result.leaks.summary()}", file=sys.stderr)
    print(
        f"polydeid: {run.documents} document(s), {len(run.failures)} unreadable; "
        f"report: {', '.join(str(p) for p in paths.values())}",
        file=sys.stderr,
    )
    return 1 if run.failures else 0


def cmd_validate(args: argparse.Namespace) -> int:
    from polydeid.synth.validate import validate_corpus, validate_jsonl

    check = not args.no_language_check
    if args.format == "jsonl":
        report = validate_jsonl(args.path, check_language=check)
    else:
        from polydeid.corpora import read_corpus

        lang = canonical_language(args.lang) if args.lang else None
        corpus = read_corpus(args.path, args.format, scheme=args.scheme, lang=lang)
        report = validate_corpus(corpus, check_language=check)
    if args.json:
        print(json.dumps(report.to_dict(), ensure_ascii=False, indent=2))
    else:
        print(report.to_markdown())
    return _report_validation(report)


def _report_validation(report: Any) -> int:
    """Errors (located, never quoting text) and counts on stderr; exit 0 when valid."""
    for issue in report.errors:
        print(f"polydeid: error: {issue.location}: [{issue.code}] {issue.message}", file=sys.stderr)
    print(
        f"polydeid: {report.documents} document(s), {len(report.errors)} error(s), "
        f"{len(report.warnings)} warning(s)",
        file=sys.stderr,
    )
    return 0 if report.ok else 1


def _split_list(value: str | None) -> list[str] | None:
    if value is None:
        return None
    return [v.strip() for v in value.split(",") if v.strip()]


def cmd_synth(args: argparse.Namespace) -> int:
    import itertools
    import time

    from polydeid.synth import export
    from polydeid.synth.generate import generate, synth_languages

    exports = _split_list(args.export) or []
    unknown = sorted(set(exports) - {"bio", "hf", "sft"})
    if unknown:
        raise ConfigError(f"unknown export(s): {', '.join(unknown)}; known: bio, hf, sft")
    langs = _split_list(args.langs)
    codes = [canonical_language(c) for c in langs] if langs else list(synth_languages())
    if args.per_language is not None:
        per_language, total = args.per_language, args.per_language * len(codes)
    else:
        total = 1000 if args.n is None else args.n
        per_language = -(-total // max(1, len(codes)))
    if total < 0 or per_language < 0:
        raise ConfigError("the number of documents must not be negative")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    llm_report = None
    if args.llm_url:
        from polydeid.synth.llm import ChatEndpoint, LlmReport, generate_llm

        llm_report = LlmReport()
        stream = generate_llm(
            ChatEndpoint(args.llm_url, args.llm_model),
            per_language=per_language,
            seed=args.seed,
            langs=[canonical_language(c) for c in codes],
            name_split=args.split,
            report=llm_report,
        )
    else:
        stream = generate(
            per_language=per_language,
            seed=args.seed,
            langs=codes,
            name_split=args.split,
            formats=_split_list(args.formats),
        )
    docs = []
    for doc in itertools.islice(stream, total):
        docs.append(doc)
        if len(docs) % 500 == 0:
            print(f"polydeid: synth: {len(docs)}/{total} documents", file=sys.stderr)
    elapsed = time.perf_counter() - started
    report = export.export_jsonl(docs, out / "synth.jsonl")
    if "bio" in exports:
        export.export_bio(docs, out / "synth.bio", scheme=args.scheme)
    if "hf" in exports:
        export.export_hf(docs, out / "hf", scheme=args.scheme)
    if "sft" in exports:
        export.export_sft(docs, out / "sft.jsonl")
    manifest = {
        "generator": "polydeid.synth.generate",
        "version": _version(),
        "seed": args.seed,
        "split": args.split,
        "languages": codes,
        "documents": report.documents,
        "spans": report.spans,
        "facts": report.facts,
        "seconds": round(elapsed, 2),
    }
    if llm_report is not None:
        manifest["llm"] = {
            "requested": llm_report.requested,
            "accepted": llm_report.accepted,
            "rejected": dict(llm_report.rejected),
        }
        print(
            f"polydeid: synth: LLM mode: {llm_report.accepted}/{llm_report.requested} accepted; "
            f"rejected {dict(llm_report.rejected)}",
            file=sys.stderr,
        )
    _write_atomic(
        str(out / "manifest.json"),
        (json.dumps(manifest, ensure_ascii=False, indent=2) + "\n").encode("utf-8"),
    )
    print(
        f"polydeid: synth: {report.documents} document(s), {report.spans} span(s), "
        f"{report.facts} fact(s) in {elapsed:.1f} s -> {out / 'synth.jsonl'}",
        file=sys.stderr,
    )
    if args.validate:
        from polydeid.synth.validate import validate_jsonl

        checked = validate_jsonl(out / "synth.jsonl")
        _write_atomic(str(out / "validation.md"), checked.to_markdown().encode("utf-8"))
        return _report_validation(checked)
    return 0


def _version() -> str:
    from polydeid.core.version import __version__

    return __version__


def cmd_models(args: argparse.Namespace) -> int:
    from polydeid.detect.compose import KINDS, installed

    print("Detector kinds (use them in a composition file: --profile my.toml, eval --system):")
    for kind in KINDS.values():
        ok, missing = installed(kind)
        state = "installed" if ok else f"not installed (needs {missing})"
        print(f"  {kind.name:<12} {state}")
        print(f"  {'':<12} {kind.covers}")
    print("Profiles: rules (the rule layer), default (rules + tagger)")
    return 0


def cmd_languages(args: argparse.Namespace) -> int:
    for code in languages():
        info = language_info(code)
        print(f"{code}\t{info.iso639_3}\t{info.name}\t{info.script}\t{','.join(info.countries)}")
    return 0


def cmd_categories(args: argparse.Namespace) -> int:
    for category in Category:
        print(category.value)
    return 0


def cmd_policies(args: argparse.Namespace) -> int:
    from polydeid.transform.policy import shipped_policies

    for name in shipped_policies():
        print(name)
    return 0


def cmd_keygen(args: argparse.Namespace) -> int:
    from polydeid.transform.crypto import generate_key

    target = Path(args.output)
    if target.exists():
        raise ConfigError("refusing to overwrite an existing key file", location=str(target))
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(generate_key() + "\n")
    print(f"polydeid: wrote a new key to {target}", file=sys.stderr)
    return 0


def cmd_decrypt(args: argparse.Namespace) -> int:
    from polydeid.transform.crypto import load_key
    from polydeid.transform.operators import decrypt_tokens

    key_file = _key_file(args)
    if not key_file:
        raise ConfigError("decrypt needs --key-file (or POLYDEID_KEY_FILE)")
    key = load_key(key_file)
    text = decode_utf8(_read_bytes(args.input), source=args.input)
    _write_atomic(args.output, decrypt_tokens(text, key).encode("utf-8"))
    return 0


def cmd_langid(args: argparse.Namespace) -> int:
    """One JSON object per non-blank line (text) or record (JSONL), in order: the language, its
    confidence, why it is undetermined where it is; unreadable records are reported as errors."""
    from polydeid.detect.langid import default_identifier

    identifier = default_identifier()
    data = _read_bytes(args.input)
    source = args.input
    items: list[tuple[int, Any, str] | JsonlFailure] = []
    if _input_format(source, data, args.format) == "text":
        text = decode_utf8(data, source=source)
        for number, line in enumerate(text.split("\n"), start=1):
            if line.strip():
                items.append((number, None, line))
    else:
        for item in read_jsonl(data, source=source):
            items.append(
                item if isinstance(item, JsonlFailure) else (item.line, item.id, item.text)
            )
    lines: list[bytes] = []
    failures = undetermined = 0
    for item in items:
        if isinstance(item, JsonlFailure):
            failures += 1
            print(f"polydeid: error: {item.error}", file=sys.stderr)
            lines.append(_error_line(item.line, item.error))
            continue
        number, record_id, text = item
        guess = identifier.identify(text)
        undetermined += guess.lang is None
        head = {"line": number} if record_id is None else {"id": record_id, "line": number}
        lines.append(json.dumps({**head, **guess.to_dict()}, ensure_ascii=False).encode("utf-8"))
    _write_atomic(args.output, b"".join(line + b"\n" for line in lines))
    print(
        f"polydeid: langid: {len(items) - failures} line(s) or record(s), "
        f"{undetermined} undetermined, {failures} failed",
        file=sys.stderr,
    )
    return 1 if failures else 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except ConfigError as exc:
        print(f"polydeid: error: {exc}", file=sys.stderr)
        return 2
    except PolydeidError as exc:
        print(f"polydeid: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
