"""JSON Lines gold spans: ``{"id", "text", "lang", "spans": [{"start", "end", "label"}]}`` a line.

The format ``polydeid detect`` writes for JSONL input (its extra ``score``/``source`` keys are
ignored) and ``polydeid synth`` will write. Offsets are code points into ``text``, end
exclusive. Labels go through the scheme (default ``polydeid``, the canonical names); a label
naming a clinical fact (``DOSE``, ``LAB_VALUE``, …) goes to the document's ``facts``. ``lang``
comes from the record, else from the reader's ``lang=``. ``id`` defaults to ``<file stem>:<line>``.
A malformed line (bad JSON, a span past the end, an unknown label) is reported at ``file:line``
and the other lines are still read.
"""

from __future__ import annotations

from pathlib import Path
from types import MappingProxyType
from typing import Any

from polydeid.core import taxonomy
from polydeid.core.errors import PolydeidError, RecordError
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Fact, Scheme
from polydeid.corpora._files import corpus_files
from polydeid.corpora.document import AnnotatedDocument, Corpus, ReadFailure
from polydeid.formats.jsonl import JsonlFailure, JsonlRecord, read_jsonl
from polydeid.locales import canonical_language

SUFFIXES = frozenset({".jsonl", ".ndjson"})
_FACTS = {f.value: f for f in Fact}


def read_jsonl_corpus(
    path: str | Path,
    *,
    scheme: str | None = "polydeid",
    lang: str | None = None,
    name: str | None = None,
) -> Corpus:
    """Read one JSONL file, or every ``.jsonl``/``.ndjson`` file of a directory (sorted)."""
    mapping = taxonomy.scheme(scheme or "polydeid")
    default_lang = canonical_language(lang) if lang else None
    root = Path(path)
    documents: list[AnnotatedDocument] = []
    failures: list[ReadFailure] = []
    for file in corpus_files(root, suffixes=SUFFIXES):
        source = str(file)
        for item in read_jsonl(file.read_bytes(), source=source):
            if isinstance(item, JsonlFailure):
                failures.append(ReadFailure(source, item.error))
                continue
            try:
                documents.append(record_document(item, mapping, default_lang, file=file))
            except PolydeidError as exc:
                failures.append(ReadFailure(source, exc.at(f"{source}:{item.line}")))
    return Corpus(name or root.name, tuple(documents), tuple(failures))


def record_document(
    record: JsonlRecord, mapping: Scheme, default_lang: str | None, *, file: Path
) -> AnnotatedDocument:
    """One record as a document; raises a located error when a span is malformed."""
    location = f"{file}:{record.line}"
    lang = record.lang or default_lang
    if lang is None:
        raise RecordError('no "lang" in the record and no lang= given', location=location)
    raw_spans = record.data.get("spans", [])
    if not isinstance(raw_spans, list):
        raise RecordError('"spans" must be a list', location=location)
    spans: list[Span] = []
    facts: list[Span] = []
    for index, raw in enumerate(raw_spans):
        where = f"{location}:spans[{index}]"
        start, end, label = _span_fields(raw, len(record.text), location=where)
        if label in _FACTS:
            facts.append(Span(start, end, _FACTS[label], f"gold:{label}"))
            continue
        category = mapping.map(label)
        if category is not None:
            spans.append(Span(start, end, category, f"gold:{label}"))
    raw_facts = record.data.get("facts", [])
    if not isinstance(raw_facts, list):
        raise RecordError('"facts" must be a list', location=location)
    for index, raw in enumerate(raw_facts):
        where = f"{location}:facts[{index}]"
        if isinstance(raw, dict) and "kind" in raw and "label" not in raw:
            raw = {**raw, "label": raw["kind"]}
        start, end, kind = _span_fields(raw, len(record.text), location=where)
        if kind not in _FACTS:
            raise RecordError(f"unknown fact kind; known: {', '.join(_FACTS)}", location=where)
        facts.append(Span(start, end, _FACTS[kind], f"gold:{kind}"))
    meta = record.data.get("meta", {})
    if not isinstance(meta, dict):
        raise RecordError('"meta" must be an object', location=location)
    record_id = record.id if record.id is not None else f"{file.stem}:{record.line}"
    return AnnotatedDocument(
        id=str(record_id),
        text=record.text,
        lang=canonical_language(lang),
        spans=tuple(sorted(spans, key=lambda s: (s.start, s.end, s.label.value))),
        facts=tuple(sorted(set(facts), key=lambda s: (s.start, s.end, s.label.value))),
        source=location,
        meta=MappingProxyType(dict(meta)),
    )


def _span_fields(raw: Any, length: int, *, location: str) -> tuple[int, int, str]:
    if not isinstance(raw, dict):
        raise RecordError("a span must be a JSON object", location=location)
    start, end, label = raw.get("start"), raw.get("end"), raw.get("label")
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (start, end)):
        raise RecordError('a span needs integer "start" and "end"', location=location)
    if not isinstance(label, str):
        raise RecordError('a span needs a string "label"', location=location)
    if not 0 <= start < end <= length:  # type: ignore[operator]
        raise RecordError(
            f"span {start}:{end} outside the text (length {length})", location=location
        )
    return start, end, label  # type: ignore[return-value]
