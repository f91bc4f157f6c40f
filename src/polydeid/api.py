"""The Python API: ``Deidentifier(...).detect(text, lang=...)`` and ``.redact(...)``."""

from __future__ import annotations

import json
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from polydeid.core.errors import InputError
from polydeid.core.segments import Origin, Segment
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category
from polydeid.dates import date_granularity, date_order
from polydeid.detect.base import Detector
from polydeid.detect.pipeline import Pipeline
from polydeid.detect.profiles import profile_detectors
from polydeid.locales import segment_languages
from polydeid.transform.crypto import load_key
from polydeid.transform.policy import Policy, load_policy
from polydeid.transform.redactor import RedactionResult, Redactor
from polydeid.transform.vault import Vault

if TYPE_CHECKING:
    from polydeid.engine import DocumentProcessor, FieldSpan
    from polydeid.formats.base import Document
    from polydeid.formats.csv import Sampler


def span_json(span: Span, segment: Segment) -> dict[str, Any]:
    """A span of ``segment`` as JSON (``Span.to_dict``); a date span also says which fields it
    shows: ``granularity`` is ``full``, ``day_month``, ``month_year``, ``year``, ``day``, or
    null when its text is not read as a date (see :func:`polydeid.dates.date_granularity`)."""
    record: dict[str, Any] = span.to_dict()
    if span.label is Category.DATE:
        found = date_granularity(
            span.text_of(segment.text), segment_languages(segment), order=date_order(segment)
        )
        record["granularity"] = None if found is None else found.value
    return record


def field_span_json(found: FieldSpan, lang: str, countries: Sequence[str] = ()) -> dict[str, Any]:
    """A document's span as JSON (``FieldSpan.to_dict``: path, line, document offsets), with
    a date span's ``granularity`` read from its field in ``lang`` as :func:`span_json` reads
    it."""
    record = found.to_dict()
    if found.span.label is Category.DATE:
        segment = Segment(found.field.value, lang, countries=tuple(countries))
        record["granularity"] = span_json(found.span, segment)["granularity"]
    return record


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


#: Records the CLI (a JSONL file's), the batch runner and Spark detect together
#: (:meth:`Deidentifier.detect_many`): short records share the tagger's batches.
BATCH_RECORDS = 64


class Deidentifier:
    """Detect and replace identifiers in clinical text.

    ``profile`` names a detector set (``"rules"``); ``detectors`` replaces it with explicit
    detectors. ``policy`` is a shipped policy name (``"tag"``, ``"surrogate"``, …), a path to a
    TOML policy file, or a :class:`Policy`. ``key`` (bytes) or ``key_file`` enables keyed
    operators (hash, encrypt, date shift) and cross-document consistent surrogates.
    ``segment_steps=False`` leaves out polydeid's steps after resolution (names carried through
    a segment, label roles): for running another system's detector as it is;
    ``disabled_passes`` switches single passes off by id (:mod:`polydeid.detect.passes`).
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
        disabled_passes: Collection[str] = (),
    ) -> None:
        self.pipeline = Pipeline(
            list(detectors) if detectors else profile_detectors(profile),
            segment_steps=segment_steps,
            disabled_passes=disabled_passes,
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
        """A segment of ``text`` in ``lang``; ``lang="auto"`` identifies the record's language
        and the language of each of its parts (a record mixing English and Kiswahili is read
        sentence by sentence with each one's rules and tagger), and raises
        :class:`~polydeid.core.errors.RecordError` when the record's language is undetermined."""
        if lang.strip().lower() == "auto":
            from polydeid.detect.langid.stretches import mixed_segment

            return mixed_segment(text, origin=origin, countries=countries)
        return Segment(text, lang=lang, origin=origin or Origin(), countries=tuple(countries))

    def detect(self, text: str, *, lang: str = "en", countries: Sequence[str] = ()) -> list[Span]:
        """Resolved identifier spans in ``text``, sorted by start."""
        return list(self.pipeline.detect(self.segment(text, lang=lang, countries=countries)))

    def detect_segment(self, segment: Segment) -> tuple[Span, ...]:
        return self.pipeline.detect(segment)

    def detect_many(self, segments: Sequence[Segment]) -> list[tuple[Span, ...]]:
        """:meth:`detect_segment` of each of ``segments``, the tagger reading the windows of
        all of them in shared batches (:meth:`Pipeline.detect_many`): many short records
        are read faster together than one by one. A segment that :meth:`detect_segment`
        would refuse makes the call raise that error."""
        return self.pipeline.detect_many(segments)

    def detect_together(self, segments: Sequence[Segment]) -> list[tuple[Span, ...]] | None:
        """:meth:`detect_many` of ``segments``, or None for fewer than two or where reading
        them together fails: the caller then detects each by itself, so that an error is its
        own segment's (how the CLI, the batch runner and Spark read records in groups of
        :data:`BATCH_RECORDS`)."""
        if len(segments) < 2:
            return None
        try:
            return self.detect_many(segments)
        except Exception:
            return None

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

    def redact_many(
        self,
        segments: Sequence[Segment],
        *,
        document_ids: Sequence[str | None] | None = None,
        patient_ids: Sequence[str | None] | None = None,
    ) -> list[RedactionResult]:
        """:meth:`redact_segment` of each of ``segments`` (with its entries of
        ``document_ids`` and ``patient_ids``, if given), detected together
        (:meth:`detect_many`) and replaced in order."""
        none: list[str | None] = [None] * len(segments)
        documents = none if document_ids is None else list(document_ids)
        patients = none if patient_ids is None else list(patient_ids)
        if len(documents) != len(segments) or len(patients) != len(segments):
            raise ValueError("one document id and one patient id (or None) per segment")
        found = self.detect_many(segments)
        return [
            self.redactor.redact(segment, spans, document_id=document, patient_id=patient)
            for segment, spans, document, patient in zip(
                segments, found, documents, patients, strict=True
            )
        ]

    def processor(self) -> DocumentProcessor:
        """A document engine running this de-identifier's detectors and redactor."""
        from polydeid.engine import DocumentProcessor

        return DocumentProcessor(
            self.detect_segment, self.redactor, resolve_policy=self.pipeline.resolve_policy
        )

    def column_sampler(self, *, lang: str = "en", countries: Sequence[str] = ()) -> Sampler:
        """A CSV column sampler using this de-identifier's detectors (with a tagger, columns of
        bare names are found): pass it as the CSV reader's ``sampler`` option."""
        from polydeid.engine import pipeline_sampler

        return pipeline_sampler(self.pipeline, lang=lang, countries=countries)

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
        from polydeid.engine import read_document, read_text_document
        from polydeid.formats.registry import detect_format

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
        range in the document text. ``lang="auto"`` identifies the document's language from
        its text and reads each sentence or line in another language with its own."""
        doc = self._document(data, format, source, options)
        lang, mixed = _document_language(doc, lang, source)
        return self.processor().detect(
            doc, lang=lang, countries=countries, source=source, mixed=mixed
        )

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
    ) -> RedactedDocument:
        """A structured document de-identified in its own format (:class:`RedactedDocument`:
        ``output`` is bytes for bytes in, in the input's encoding; str for str; the same shape
        for a parsed dict or list).

        ``format`` is a name from :data:`polydeid.formats.registry.FORMATS` or ``auto``;
        ``options`` go to the format's reader (e.g. ``columns={"Name": "PERSON"}`` for CSV).
        Malformed input raises :class:`~polydeid.core.errors.InputError` naming the line,
        column or field. ``lang="auto"`` as for :meth:`detect_document`.
        """
        doc = self._document(data, format, source, options)
        lang, mixed = _document_language(doc, lang, source)
        result = self.processor().redact(
            doc,
            lang=lang,
            countries=countries,
            source=source,
            document_id=document_id,
            patient_id=patient_id,
            mixed=mixed,
        )
        output: Any
        if isinstance(data, bytes):
            output = result.text.encode(doc.encoding)
        elif isinstance(data, str):
            output = result.text
        else:
            output = _parse_back(result.text, data, format)
        return RedactedDocument(
            output, result.text, doc.encoding, doc.format, result.spans, result.labels
        )


@dataclass(frozen=True, slots=True)
class RedactedDocument:
    """A structured document de-identified: ``output`` in the input's kind (bytes in its
    encoding, str, or a parsed dict or list), its ``text`` and ``encoding``, the ``format`` it
    was read as, and the spans replaced (field paths and raw ranges, never text) with their
    labels."""

    output: Any = field(repr=False)
    text: str = field(repr=False)
    encoding: str
    format: str
    spans: tuple[FieldSpan, ...] = field(repr=False)
    labels: tuple[str, ...]


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


def _document_language(doc: Document, lang: str, source: str) -> tuple[str, bool]:
    """The document's language and whether its parts may be in others: ``auto`` identifies
    it from a sample of its text (a :class:`~polydeid.core.errors.RecordError` when
    undetermined) and reads mixed text part by part; a named language holds for all of it."""
    if lang.strip().lower() != "auto":
        return lang, False
    from polydeid.detect.langid import resolve_language
    from polydeid.formats.base import sample_text

    return resolve_language(sample_text(doc), None, location=source), True


def _serialise_parsed(data: dict[str, Any] | list[Any], fmt: str) -> bytes:
    """A parsed document as the bytes its reader takes; a value no reader can take (an
    integer past Python's digit limit, a lone surrogate, one nested past the recursion
    limit) is an :class:`~polydeid.core.errors.InputError`, never an uncoded exception."""
    try:
        return _serialised(data, fmt)
    except (ValueError, UnicodeEncodeError, RecursionError) as exc:
        raise InputError(
            f"the parsed document cannot be serialised ({type(exc).__name__})"
        ) from None


def _serialised(data: dict[str, Any] | list[Any], fmt: str) -> bytes:
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
