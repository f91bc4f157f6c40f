"""presidio-research generated sentences: a JSON list of ``{full_text, spans: [...]}``.

Each span is ``{entity_type, entity_value, start_position, end_position}`` with code point
offsets into ``full_text``. Types map through the ``presidio_research`` scheme. Each
``entity_value`` is compared with the text slice; mismatches are counted in
``meta["text_mismatches"]`` and the offsets kept.

Honorifics (the scheme file's advice): the generator's ``TITLE`` slot holds job titles in one
data set and honorifics ("Mr.", "Mrs.", "Dr.") in the other. An honorific is not an
identifier, so a ``TITLE`` span is dropped when it is one of the English honorifics of the
locale data (``locales/languages/en/names.toml``, ``format.titles``; a final dot ignored, case
ignored) **and** it is followed on the same line by a word, i.e. it prefixes a name. A job
title such as "nurse" that happens to be in the honorific list but stands alone is kept.
Dropped honorifics are counted in ``meta["honorifics_dropped"]``.

A record with a malformed span (missing keys, offsets past the end, an unknown type) is left
out and reported as ``file:record[i]``; a file that is not a JSON list is one failure.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import Any

from polydeid.core import taxonomy
from polydeid.core.errors import PolydeidError, RecordError
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Scheme
from polydeid.corpora._files import corpus_files, load_json
from polydeid.corpora.document import AnnotatedDocument, Corpus, ReadFailure
from polydeid.locales import canonical_language
from polydeid.locales.names import name_format

_NEXT_WORD = re.compile(r"[ \t]+\w")


def read_presidio_research(
    path: str | Path,
    *,
    scheme: str | None = "presidio_research",
    lang: str | None = "en",
    name: str | None = None,
) -> Corpus:
    """Read one presidio-research JSON file, or every ``.json`` file of a directory."""
    mapping = taxonomy.scheme(scheme or "presidio_research")
    language = canonical_language(lang or "en")
    root = Path(path)
    documents: list[AnnotatedDocument] = []
    failures: list[ReadFailure] = []
    for file in corpus_files(root, suffixes={".json"}):
        try:
            records = _records(file)
        except PolydeidError as exc:
            failures.append(ReadFailure(str(file), exc))
            continue
        for index, record in enumerate(records):
            try:
                documents.append(record_document(record, index, mapping, language, file=file))
            except PolydeidError as exc:
                failures.append(ReadFailure(str(file), exc))
    return Corpus(name or root.name, tuple(documents), tuple(failures))


def _records(file: Path) -> list[Any]:
    source = str(file)
    data = load_json(file)
    if not isinstance(data, list):
        raise RecordError("expected a JSON list of records", location=source)
    return data


@cache
def honorifics() -> frozenset[str]:
    """English honorifics from the locale data, lower case, without a final dot."""
    titles = name_format("en").titles
    return frozenset(str(t).lower().rstrip(".") for t in titles)


def is_honorific(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` is an honorific that prefixes a word on the same line."""
    word = text[start:end].strip().lower().rstrip(".")
    return word in honorifics() and _NEXT_WORD.match(text, end) is not None


def record_document(
    record: Any, index: int, mapping: Scheme, lang: str, *, file: Path
) -> AnnotatedDocument:
    """One record as a document; raises a located error when it is malformed."""
    where = f"{file}:record[{index}]"
    if not isinstance(record, dict) or not isinstance(record.get("full_text"), str):
        raise RecordError('a record needs a string "full_text"', location=where)
    text = record["full_text"]
    raw_spans = record.get("spans", [])
    if not isinstance(raw_spans, list):
        raise RecordError('"spans" must be a list', location=where)
    spans: list[Span] = []
    mismatches = honorific_count = 0
    for k, raw in enumerate(raw_spans):
        start, end, label, value = _span_fields(raw, len(text), where=f"{where}.spans[{k}]")
        mismatches += value is not None and text[start:end] != value
        try:
            category = mapping.map(label)
        except PolydeidError as exc:
            raise exc.at(f"{where}.spans[{k}]") from None
        if label.upper() == "TITLE" and is_honorific(text, start, end):
            honorific_count += 1
            continue
        if category is not None:
            spans.append(Span(start, end, category, f"gold:{label}"))
    meta = {"text_mismatches": mismatches, "honorifics_dropped": honorific_count}
    if "template_id" in record:
        meta["template_id"] = record["template_id"]
    return AnnotatedDocument(
        id=f"{file.stem}:{index}",
        text=text,
        lang=lang,
        spans=tuple(sorted(spans, key=lambda s: (s.start, s.end, s.label.value))),
        source=where,
        meta=MappingProxyType(meta),
    )


def _span_fields(raw: Any, length: int, *, where: str) -> tuple[int, int, str, str | None]:
    if not isinstance(raw, dict):
        raise RecordError("a span must be a JSON object", location=where)
    start, end = raw.get("start_position"), raw.get("end_position")
    label, value = raw.get("entity_type"), raw.get("entity_value")
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (start, end)):
        raise RecordError("a span needs integer start_position and end_position", location=where)
    if not isinstance(label, str):
        raise RecordError("a span needs a string entity_type", location=where)
    if not 0 <= start < end <= length:  # type: ignore[operator]
        raise RecordError(f"span {start}:{end} outside the text (length {length})", location=where)
    return start, end, label, value if isinstance(value, str) else None  # type: ignore[return-value]
