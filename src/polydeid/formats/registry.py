"""Format names, their readers, and format detection by extension and content.

``text`` and ``jsonl`` (records with a ``text`` field) are handled by the CLI directly; every
other name maps to a reader class (imported on first use) that turns bytes into a
:class:`~polydeid.formats.base.Document`.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from typing import Any

from polydeid.core.errors import ConfigError
from polydeid.formats.base import Document, FormatReader

#: format name → "module:Class" of its reader
READERS: dict[str, str] = {
    "json": "polydeid.formats.json:JsonReader",
    "fhir": "polydeid.formats.fhir:FhirReader",
    "chat": "polydeid.formats.chat:ChatReader",
    "xml": "polydeid.formats.xml:XmlReader",
    "cda": "polydeid.formats.xml:CdaReader",
    "csv": "polydeid.formats.csv:CsvReader",
    "tsv": "polydeid.formats.csv:TsvReader",
    "hl7": "polydeid.formats.hl7v2:Hl7Reader",
    "code": "polydeid.formats.code:CodeReader",
}
#: Formats the CLI reads itself (records of plain text).
RECORD_FORMATS = ("text", "jsonl")
FORMATS = RECORD_FORMATS + tuple(READERS)

SUFFIXES: dict[str, str] = {
    ".txt": "text",
    ".text": "text",
    ".md": "text",
    ".note": "text",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "json",
    ".fhir": "fhir",
    ".xml": "xml",
    ".cda": "cda",
    ".ccd": "cda",
    ".csv": "csv",
    ".tsv": "tsv",
    ".tab": "tsv",
    ".hl7": "hl7",
    ".hl7v2": "hl7",
    ".log": "code",
    ".py": "code",
    ".js": "code",
    ".ts": "code",
    ".java": "code",
    ".kt": "code",
    ".go": "code",
    ".rs": "code",
    ".c": "code",
    ".h": "code",
    ".cpp": "code",
    ".cs": "code",
    ".rb": "code",
    ".php": "code",
    ".sh": "code",
    ".sql": "code",
    ".r": "code",
    ".scala": "code",
    ".yaml": "code",
    ".yml": "code",
    ".toml": "code",
    ".ini": "code",
    ".cfg": "code",
    ".properties": "code",
}

_HEAD = 4096
_CHAT_KEYS = re.compile(rb'"role"\s*:\s*"[^"]*"')
_CONTENT_KEY = re.compile(rb'"content"\s*:')
_FHIR_KEY = re.compile(rb'"resourceType"\s*:')
_CDA_NS = b"urn:hl7-org:v3"


def reader(name: str, **options: Any) -> FormatReader:
    """A reader for format ``name`` (options such as a CSV column policy go to its class)."""
    try:
        target = READERS[name]
    except KeyError:
        raise ConfigError(f"unknown format {name!r}; known: {', '.join(FORMATS)}") from None
    module, cls = target.split(":")
    instance: FormatReader = getattr(importlib.import_module(module), cls)(**options)
    return instance


def _refine_json(data: bytes) -> str:
    head = data[:_HEAD]
    if _FHIR_KEY.search(head):
        return "fhir"
    if _CHAT_KEYS.search(head) and _CONTENT_KEY.search(head):
        return "chat"
    return "json"


def _is_jsonl(data: bytes) -> bool:
    lines = [ln.strip() for ln in data[: _HEAD * 4].split(b"\n") if ln.strip()]
    return len(lines) > 1 and all(ln.startswith(b"{") and ln.endswith(b"}") for ln in lines[:-1])


def detect_format(path: str | None, data: bytes) -> str:
    """The format of ``data``: by the file extension, refined or replaced by its content."""
    suffix = Path(path).suffix.lower() if path and path != "-" else ""
    by_suffix = SUFFIXES.get(suffix)
    head = data[:_HEAD].lstrip(b"\xef\xbb\xbf \t\r\n")
    if by_suffix == "jsonl":
        return "chat" if _CHAT_KEYS.search(head) and _CONTENT_KEY.search(head) else "jsonl"
    if by_suffix == "json":
        return _refine_json(data)
    if by_suffix == "xml":
        return "cda" if _CDA_NS in data[:_HEAD] else "xml"
    if by_suffix is not None and by_suffix != "text":
        return by_suffix
    # No telling extension (or .txt): the content decides, plain text when in doubt.
    if head.startswith(b"MSH") and len(head) > 3 and not head[3:4].isalnum():
        return "hl7"
    if head.startswith(b"<"):
        return "cda" if _CDA_NS in data[:_HEAD] else "xml"
    if head.startswith((b"{", b"[")):
        if head.startswith(b"{") and _is_jsonl(head):
            return "chat" if _CHAT_KEYS.search(head) and _CONTENT_KEY.search(head) else "jsonl"
        return _refine_json(head)
    return by_suffix or "text"


def read_document(data: bytes, fmt: str, *, source: str, **options: Any) -> Document:
    """Decode and read ``data`` as format ``fmt``; raises located :class:`InputError`."""
    r = reader(fmt, **options)
    text, encoding = r.decode(data, source=source)
    doc = r.read(text, source=source)
    doc.encoding = encoding
    return doc


def read_text_document(text: str, fmt: str, *, source: str, **options: Any) -> Document:
    """Read already decoded ``text`` as format ``fmt`` (written back as UTF-8)."""
    doc = reader(fmt, **options).read(text, source=source)
    doc.encoding = "utf-8"
    return doc


def encode_document(text: str, doc: Document) -> bytes:
    """A de-identified document text in the encoding its input had."""
    return text.encode(doc.encoding)
