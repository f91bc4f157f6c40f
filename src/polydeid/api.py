"""The Python API: ``Deidentifier(...).detect(text, lang=...)`` and ``.redact(...)``."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from polydeid.core.segments import Origin, Segment
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category
from polydeid.detect.base import Detector
from polydeid.detect.pipeline import Pipeline
from polydeid.detect.registry import profile_detectors
from polydeid.transform.crypto import load_key
from polydeid.transform.policy import Policy, load_policy
from polydeid.transform.redactor import RedactionResult, Redactor
from polydeid.transform.vault import Vault

if TYPE_CHECKING:
    from polydeid.formats.base import Document
    from polydeid.formats.engine import DocumentResult, FieldSpan

#: What ``redact_document`` accepts: raw bytes or text of a file, or a parsed JSON value
#: (dict or list, e.g. a FHIR resource, chat messages or CSV rows as a list of dicts).
DocumentInput = bytes | str | dict[str, Any] | list[Any]

#: Text placed before a generated surrogate when checking that the rule layer accepts it, so
#: that context-gated formats (e.g. 8-digit Kenyan IDs) are judged as they would be in a note.
_VALIDATION_CONTEXT: dict[Category, str] = {
    Category.ID_NATIONAL: "National ID No: ",
    Category.ID_RECORD: "MRN: ",
    Category.ID_OTHER: "Account No: ",
    Category.CONTACT_PHONE: "Tel: ",
    Category.CONTACT_OTHER: "Contact: ",
    Category.DATE: "Date: ",
    Category.AGE: "Age: ",
}


class Deidentifier:
    """Detect and replace identifiers in clinical text.

    ``profile`` names a detector set (``"rules"``); ``detectors`` replaces it with explicit
    detectors. ``policy`` is a shipped policy name (``"tag"``, ``"surrogate"``, …), a path to a
    TOML policy file, or a :class:`Policy`. ``key`` (bytes) or ``key_file`` enables keyed
    operators (hash, encrypt, date shift) and cross-document consistent surrogates.
    ``segment_steps=False`` leaves out polydeid's steps after resolution (names carried through
    a segment, label roles): for running another system's detector as it is.
    """

    def __init__(
        self,
        *,
        profile: str = "default",
        detectors: Sequence[Detector] | None = None,
        policy: str | Path | Policy = "tag",
        key: bytes | None = None,
        key_file: str | Path | None = None,
        vault: Vault | None = None,
        segment_steps: bool = True,
    ) -> None:
        self.pipeline = Pipeline(
            list(detectors) if detectors else profile_detectors(profile),
            segment_steps=segment_steps,
        )
        self.policy = policy if isinstance(policy, Policy) else load_policy(policy)
        if key is None and key_file is not None:
            key = load_key(key_file)
        self.redactor = Redactor(
            self.policy, key=key, vault=vault, surrogate_validator=self._accepts_surrogate
        )

    def __repr__(self) -> str:
        return f"Deidentifier({self.pipeline!r}, policy={self.policy.name!r})"

    @staticmethod
    def segment(
        text: str, *, lang: str = "en", countries: Sequence[str] = (), origin: Origin | None = None
    ) -> Segment:
        return Segment(text, lang=lang, origin=origin or Origin(), countries=tuple(countries))

    def detect(self, text: str, *, lang: str = "en", countries: Sequence[str] = ()) -> list[Span]:
        """Resolved identifier spans in ``text``, sorted by start."""
        return list(self.pipeline.detect(self.segment(text, lang=lang, countries=countries)))

    def detect_segment(self, segment: Segment) -> tuple[Span, ...]:
        return self.pipeline.detect(segment)

    def redact(
        self,
        text: str,
        *,
        lang: str = "en",
        countries: Sequence[str] = (),
        document_id: str | None = None,
        patient_id: str | None = None,
    ) -> str:
        """``text`` with every detected identifier replaced according to the policy."""
        segment = self.segment(text, lang=lang, countries=countries)
        return self.redact_segment(segment, document_id=document_id, patient_id=patient_id).text

    def redact_segment(
        self,
        segment: Segment,
        *,
        document_id: str | None = None,
        patient_id: str | None = None,
        spans: Sequence[Span] | None = None,
    ) -> RedactionResult:
        found = self.pipeline.detect(segment) if spans is None else spans
        return self.redactor.redact(segment, found, document_id=document_id, patient_id=patient_id)

    def _accepts_surrogate(self, candidate: str, category: Category, segment: Segment) -> bool:
        """Whether the rule layer recognises ``candidate`` as a whole ``category`` value."""
        prefix = _VALIDATION_CONTEXT.get(category, "")
        probe = Segment(prefix + candidate, lang=segment.lang, countries=segment.countries)
        start, end = len(prefix), len(prefix) + len(candidate)
        return any(
            s.start == start and s.end == end and s.label == category
            for s in self.pipeline.detect(probe)
        )

    # --- structured documents (JSON, FHIR, XML/CDA, CSV, HL7 v2, chat, code) -------------

    def _document(
        self, data: DocumentInput, fmt: str, source: str, options: dict[str, Any]
    ) -> Document:
        from polydeid.formats.registry import detect_format, read_document, read_text_document

        if isinstance(data, dict | list):
            raw = _serialise_parsed(data, fmt)
            fmt = _parsed_format(data, fmt)
            return read_document(raw, fmt, source=source, **options)
        if isinstance(data, str):
            if fmt == "auto":
                fmt = detect_format(source, data[:4096].encode("utf-8"))
            return read_text_document(data, fmt, source=source, **options)
        if fmt == "auto":
            fmt = detect_format(source, data)
        return read_document(data, fmt, source=source, **options)

    def detect_document(
        self,
        data: DocumentInput,
        *,
        format: str = "auto",
        lang: str = "en",
        countries: Sequence[str] = (),
        source: str = "<input>",
        **options: Any,
    ) -> list[FieldSpan]:
        """Identifier spans of a structured document, each with its field path and its raw
        range in the document text."""
        from polydeid.formats.engine import DocumentProcessor

        doc = self._document(data, format, source, options)
        return DocumentProcessor(self).detect(doc, lang=lang, countries=countries, source=source)

    def redact_document(
        self,
        data: DocumentInput,
        *,
        format: str = "auto",
        lang: str = "en",
        countries: Sequence[str] = (),
        source: str = "<input>",
        document_id: str | None = None,
        patient_id: str | None = None,
        **options: Any,
    ) -> Any:
        """A structured document de-identified in its own format: bytes in, bytes out (in the
        input's encoding); str in, str out; a parsed dict/list in, the same shape out.

        ``format`` is a name from :data:`polydeid.formats.registry.FORMATS` or ``auto``;
        ``options`` go to the format's reader (e.g. ``columns={"Name": "PERSON"}`` for CSV).
        Malformed input raises :class:`~polydeid.core.errors.InputError` naming the line,
        column or field.
        """
        result = self.redact_document_result(
            data,
            format=format,
            lang=lang,
            countries=countries,
            source=source,
            document_id=document_id,
            patient_id=patient_id,
            **options,
        )
        text, encoding = result
        if isinstance(data, bytes):
            return text.encode(encoding)
        if isinstance(data, str):
            return text
        return _parse_back(text, data, format)

    def redact_document_result(
        self,
        data: DocumentInput,
        *,
        format: str = "auto",
        lang: str = "en",
        countries: Sequence[str] = (),
        source: str = "<input>",
        document_id: str | None = None,
        patient_id: str | None = None,
        **options: Any,
    ) -> tuple[str, str]:
        """(de-identified text, encoding) of a structured document."""
        from polydeid.formats.engine import DocumentProcessor

        doc = self._document(data, format, source, options)
        result: DocumentResult = DocumentProcessor(self).redact(
            doc,
            lang=lang,
            countries=countries,
            source=source,
            document_id=document_id,
            patient_id=patient_id,
        )
        return result.text, doc.encoding


def _parsed_format(data: dict[str, Any] | list[Any], fmt: str) -> str:
    if fmt != "auto":
        return fmt
    if isinstance(data, dict) and "resourceType" in data:
        return "fhir"
    if (
        isinstance(data, list)
        and data
        and all(isinstance(r, dict) and "role" in r and "content" in r for r in data)
    ):
        return "chat"
    return "json"


def _serialise_parsed(data: dict[str, Any] | list[Any], fmt: str) -> bytes:
    if fmt in ("csv", "tsv"):
        import csv
        import io

        rows = list(data) if isinstance(data, list) else [data]
        buffer = io.StringIO()
        if rows and isinstance(rows[0], dict):
            writer = csv.DictWriter(
                buffer, fieldnames=list(rows[0]), delimiter="," if fmt == "csv" else "\t"
            )
            writer.writeheader()
            writer.writerows(rows)
        else:
            csv.writer(buffer, delimiter="," if fmt == "csv" else "\t").writerows(rows)
        return buffer.getvalue().encode("utf-8")
    return json.dumps(data, ensure_ascii=False).encode("utf-8")


def _parse_back(text: str, original: dict[str, Any] | list[Any], fmt: str) -> Any:
    if fmt in ("csv", "tsv"):
        import csv
        import io

        delimiter = "," if fmt == "csv" else "\t"
        rows = list(original) if isinstance(original, list) else [original]
        if rows and isinstance(rows[0], dict):
            return [dict(r) for r in csv.DictReader(io.StringIO(text), delimiter=delimiter)]
        return [list(r) for r in csv.reader(io.StringIO(text), delimiter=delimiter)]
    return json.loads(text)
