"""Documents end to end: read a structured document, detect across its fields, replace, write.

The engine sits above the readers (:mod:`polydeid.formats`), the detectors and the redactor:
it takes a detect callable and a :class:`~polydeid.transform.redactor.Redactor`, so that the
readers only read and write. Across the fields of a :class:`Document`:

- ``value`` fields are identifiers as a whole (trimmed; empty and null-like values such as
  ``N/A`` are left alone): no detector has to recognise them, so a bare ``12345678`` under
  ``mrn`` or PID-3 is never missed.
- ``text`` fields are scanned by the pipeline in batches: each field becomes a line
  ``<context>: <value>`` of one synthetic form, so context-gated rules see the field name
  ("MRN: …") and the tagger sees neighbouring fields, while a document with thousands of
  short fields costs a few detector calls instead of thousands. Spans are clipped back to
  the value they fall in.
- ``skip`` fields are never touched.
- Identifiers known from value fields (a FHIR ``Patient.name``, HL7 PID-5, a CSV ``Name``
  column) are also searched for in the text fields of the same record (``Field.group``): the
  patient's name in the header is found in the narrative even where no detector would see
  it. Names match case-sensitively as whole words (each word of three or more letters that
  starts with a capital, or is written in a script without case; every word but a title or a
  particle such as "mrs" or "van" where the field writes the whole name in lower case, as in
  ``patient_name=joseph nuyts``), numbers and other values as whole tokens. Such a match
  outranks a model's span over the same words (``field.known`` in
  :data:`polydeid.core.resolve.DEFAULT_PRIORITIES`): the patient's surname the tagger read as
  a village is the patient's.

Replacements are made per field through the same redactor as plain text (one document id
for the whole document, so numbering and surrogates agree across its fields, and the
document's patient for date shifts), then spliced into the document text at the raw ranges
the reader recorded; every other character of the document is kept as it was.
"""

from __future__ import annotations

import bisect
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import regex

from polydeid.core.resolve import DEFAULT_POLICY, ResolvePolicy, facts_only, resolve
from polydeid.core.segments import Origin, Segment, Stretch
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category, Fact
from polydeid.detect.pipeline import Pipeline
from polydeid.detect.profiles import profile_detectors
from polydeid.formats import registry
from polydeid.formats.base import Document, Field, splice
from polydeid.formats.csv import Sampler
from polydeid.lexicon.fields import NULL_VALUES, RoleKind
from polydeid.locales.names import name_particles
from polydeid.text.reading import reading_of
from polydeid.transform.redactor import Redactor

#: Detection over one segment: resolved identifier spans, sorted by start.
Detect = Callable[[Segment], Sequence[Span]]
#: Formats whose readers judge a column by a sample of its values.
SAMPLED_FORMATS = frozenset({"csv", "tsv"})

#: A batch of text fields is cut after this many characters (a longer field goes alone).
BATCH_CHARS = 12_000
_SEPARATOR = "\n"
#: Categories whose values found in value fields are searched for in text fields.
PROPAGATED = frozenset(
    {
        Category.PERSON,
        Category.PERSON_THIRD_PARTY,
        Category.PERSON_CLAN,
        Category.ID_NATIONAL,
        Category.ID_RECORD,
        Category.ID_OTHER,
        Category.CONTACT_PHONE,
        Category.CONTACT_OTHER,
        Category.LOCATION_ADDRESS,
        Category.LOCATION_VILLAGE,
        Category.LOCATION_FACILITY,
        Category.ORGANIZATION,
    }
)
_NAMES = frozenset({Category.PERSON, Category.PERSON_THIRD_PARTY, Category.PERSON_CLAN})
_MIN_KNOWN = 3
#: A known value of digits only must be this long to be searched for (a postal code "256"
#: must not match a dose "256 mg").
_MIN_DIGITS = 5
#: At most this many known values per record are searched for (bounded cost per field).
_MAX_KNOWN = 200
KNOWN_SOURCE = "field.known"
_CONTEXT_SEPARATOR = ": "


@dataclass(frozen=True, slots=True)
class FieldSpan:
    """A resolved span of one field, in the field's value coordinates."""

    field: Field
    span: Span

    def raw(self) -> tuple[int, int]:
        return self.field.raw(self.span.start, self.span.end)

    def to_dict(self) -> dict[str, object]:
        start, end = self.raw()
        out: dict[str, object] = {"path": self.field.path}
        if self.field.line is not None:
            out["line"] = self.field.line
        out.update(self.span.to_dict())
        out["start"], out["end"] = start, end
        return out


@dataclass(frozen=True, slots=True)
class DocumentResult:
    """The de-identified document text and what was replaced (labels only, no text)."""

    text: str
    spans: tuple[FieldSpan, ...]
    labels: tuple[str, ...]

    def __repr__(self) -> str:
        return f"DocumentResult(len={len(self.text)}, replacements={len(self.labels)})"


def _value_span(f: Field, source: str) -> Span | None:
    value = f.value
    stripped = value.strip()
    if stripped.casefold() in NULL_VALUES:
        return None
    start = len(value) - len(value.lstrip())
    assert f.role.category is not None
    return Span(start, start + len(stripped), f.role.category, source, 1.0)


@dataclass(frozen=True, slots=True)
class _Placed:
    field: Field
    offset: int  # where the field's value starts in the batch text


@dataclass(slots=True)
class _Batch:
    """Text fields collected into one batch text (``context: value`` lines)."""

    parts: list[str]
    placed: list[_Placed]
    size: int = 0

    def add(self, f: Field) -> None:
        prefix = f"{f.role.context}{_CONTEXT_SEPARATOR}" if f.role.context else ""
        self.placed.append(_Placed(f, self.size + len(prefix)))
        self.parts.append(prefix + f.value)
        self.size += len(prefix) + len(f.value) + len(_SEPARATOR)

    @property
    def text(self) -> str:
        return _SEPARATOR.join(self.parts)


def _clip(
    span: Span, placed: Sequence[_Placed], starts: Sequence[int]
) -> Iterator[tuple[Field, Span]]:
    """The parts of a batch span inside field values, in value coordinates (``starts``: the
    placed fields' offsets, for bisection)."""
    first = max(bisect.bisect_right(starts, span.start) - 1, 0)
    for p in placed[first:]:
        lo, hi = p.offset, p.offset + len(p.field.value)
        if lo >= span.end:
            break
        start, end = max(span.start, lo), min(span.end, hi)
        if start >= end:
            continue
        piece = p.field.value[start - lo : end - lo]
        if not any(ch.isalnum() for ch in piece):
            continue
        lead = len(piece) - len(piece.lstrip())
        trail = len(piece) - len(piece.rstrip())
        yield (
            p.field,
            Span(start - lo + lead, end - lo - trail, span.label, span.source, span.score),
        )


def _name_word(word: str) -> bool:
    """A word of a known name that is looked for on its own: capitalised, or in a script
    without case (Ethiopic, Arabic, Devanagari: "ትርሐስ" of "ትርሐስ ገብሩ"), where no capital
    can tell a name from a word."""
    first = word[:1]
    return first.isupper() or (first.isalpha() and first.lower() == first.upper())


def _known_pieces(piece: str) -> tuple[str, ...]:
    """``piece`` without surrounding punctuation; a name ending in an initial is also known
    with the initial's dot ("Đặng T. K.", as the text writes it: the dot is the name's)."""
    core = piece.strip(" ,;:").lstrip(".")
    trimmed = core.rstrip(".")
    last = regex.split(r"[\s.]+", trimmed)[-1] if trimmed else ""
    if core != trimmed and len(last) == 1 and last.isupper():
        return (trimmed + ".", trimmed)
    return (trimmed,)


class _Known:
    """Identifier strings known from the value fields of each record."""

    def __init__(self) -> None:
        self._values: dict[str | None, dict[str, Category]] = {}
        # Only the latest record's pattern is kept: records' fields come in document order,
        # and a 100,000-row CSV must not hold 100,000 compiled patterns.
        self._last: tuple[str | None, regex.Pattern[str] | None] | None = None

    def add(self, f: Field, span: Span) -> None:
        if span.label not in PROPAGATED:
            return
        label: Category = span.label  # type: ignore[assignment]
        value = reading_of(f.value[span.start : span.end]).text
        pieces = [value]
        if label in _NAMES:
            words = [w for w in regex.split(r"[\s,]+", value) if w]
            # a name written all in lower case ("joseph nuyts") is the record's name all the
            # same: its words are looked for too, but for titles and particles ("mrs", "van")
            lower = not any(w[:1].isupper() for w in words)
            pieces += [
                w
                for w in words
                if _name_word(w) or (lower and w.casefold() not in name_particles())
            ]
        table = self._values.setdefault(f.group, {})
        for piece in (k for p in pieces for k in _known_pieces(p)):
            enough = len(piece) >= (_MIN_DIGITS if piece.isdigit() else _MIN_KNOWN) and any(
                ch.isalnum() for ch in piece
            )
            if enough and len(table) < _MAX_KNOWN:
                table.setdefault(piece, label)

    def pattern(self, group: str | None) -> regex.Pattern[str] | None:
        if self._last is None or self._last[0] != group:
            values = {**self._values.get(None, {}), **self._values.get(group, {})}
            compiled = (
                regex.compile(
                    r"(?<![\w@.+-])(?:"
                    + "|".join(regex.escape(v) for v in sorted(values, key=len, reverse=True))
                    + r")(?![\w@])"
                )
                if values
                else None
            )
            self._last = (group, compiled)
        return self._last[1]

    def label(self, group: str | None, value: str) -> Category:
        return self._values.get(group, {}).get(value) or self._values[None][value]

    def spans(self, f: Field) -> list[Span]:
        """The known values in ``f``'s reading, over its original characters."""
        pattern = self.pattern(f.group)
        if pattern is None:
            return []
        reading = reading_of(f.value)
        text = reading.text
        spans: list[Span] = []
        for m in pattern.finditer(text):
            label = self.label(f.group, m.group())
            previous = spans[-1] if spans else None
            if (
                previous is not None
                and previous.label in _NAMES
                and label in _NAMES
                and not text[previous.end : m.start()].strip(" \t")
            ):
                # "Peter Okello": parts of one name known from different people's fields
                # (given name of a relative, surname of the patient) form one name, labelled
                # by its first part.
                spans[-1] = Span(previous.start, m.end(), previous.label, KNOWN_SOURCE, 1.0)
                continue
            spans.append(Span(m.start(), m.end(), label, KNOWN_SOURCE, 1.0))
        if reading.identity:
            return spans
        return [
            Span(*reading.to_original(s.start, s.end), s.label, s.source, s.score) for s in spans
        ]


class DocumentProcessor:
    """Runs ``detect`` over the fields of documents and replaces through ``redactor``;
    ``resolve_policy`` merges detected spans with values known from a record's other fields."""

    def __init__(
        self,
        detect: Detect,
        redactor: Redactor,
        *,
        resolve_policy: ResolvePolicy = DEFAULT_POLICY,
    ) -> None:
        self._detect = detect
        self.redactor = redactor
        self.resolve_policy = resolve_policy

    def detect(
        self,
        doc: Document,
        *,
        lang: str,
        countries: Sequence[str] = (),
        source: str | None = None,
        mixed: bool = False,
    ) -> list[FieldSpan]:
        """Resolved identifier spans of every field, in document order. ``mixed``: the
        document's free text may switch language (``--lang auto``): each sentence or line in
        another language than ``lang`` is read with its own rules and tagger."""
        found: list[FieldSpan] = []
        known = _Known()
        has_text = False
        for f in doc.fields:  # pass 1: value fields (fields may be produced lazily)
            if f.role.kind is RoleKind.VALUE:
                span = _value_span(f, f"field.{doc.format}")
                if span is not None:
                    found.append(FieldSpan(f, span))
                    known.add(f, span)
            elif f.role.kind is RoleKind.TEXT:
                has_text = True
        if not has_text:
            found.sort(key=lambda fs: (fs.field.start, fs.span.start))
            return found
        pending: dict[frozenset[str], _Batch] = {}

        def flush(hints: frozenset[str]) -> None:
            batch = pending.pop(hints)
            segment = Segment(
                batch.text,
                lang=lang,
                origin=Origin(file=source, path=doc.format),
                countries=tuple(countries),
                hints=hints,
                stretches=_stretches(batch.text, lang) if mixed else (),
            )
            starts = [p.offset for p in batch.placed]
            per_field: dict[int, list[Span]] = {}
            for span in self._detect(segment):
                for f, s in _clip(span, batch.placed, starts):
                    per_field.setdefault(id(f), []).append(s)
            for p in batch.placed:
                spans = per_field.get(id(p.field), [])
                extra = known.spans(p.field)
                if extra:
                    spans = list(resolve([*spans, *extra], p.field.value, self.resolve_policy))
                found.extend(FieldSpan(p.field, s) for s in spans)

        for f in doc.fields:  # pass 2: text fields, batches flushed as they fill
            if f.role.kind is RoleKind.TEXT and f.value.strip():
                batch = pending.setdefault(f.role.hints, _Batch([], []))
                if batch.placed and batch.size + len(f.value) > BATCH_CHARS:
                    flush(f.role.hints)
                    batch = pending.setdefault(f.role.hints, _Batch([], []))
                batch.add(f)
        for hints in list(pending):
            flush(hints)
        found.sort(key=lambda fs: (fs.field.start, fs.span.start))
        return found

    def redact(
        self,
        doc: Document,
        *,
        lang: str,
        countries: Sequence[str] = (),
        source: str | None = None,
        document_id: str | None = None,
        patient_id: str | None = None,
        spans: Sequence[FieldSpan] | None = None,
        mixed: bool = False,
    ) -> DocumentResult:
        """The document text with every identifier replaced by the policy's operator
        (``mixed`` as for :meth:`detect`; a field whose dates or ages are rewritten is read
        in the languages it is written in)."""
        found = (
            self.detect(doc, lang=lang, countries=countries, source=source, mixed=mixed)
            if spans is None
            else list(spans)
        )
        owned_id = document_id is None
        doc_id = document_id if document_id is not None else f"document:{uuid.uuid4().hex}"
        patient = patient_id if patient_id is not None else doc.patient
        per_field: dict[int, tuple[Field, list[Span]]] = {}
        for fs in found:
            per_field.setdefault(id(fs.field), (fs.field, []))[1].append(fs.span)
        edits: list[tuple[int, int, str]] = []
        labels: list[str] = []
        try:
            for f, field_spans in per_field.values():
                rewritten = mixed and any(s.label in _READ_AS_WRITTEN for s in field_spans)
                segment = Segment(
                    f.value,
                    lang=lang,
                    origin=Origin(file=source, line=f.line, path=f.path),
                    countries=tuple(countries),
                    hints=f.role.hints,
                    stretches=_stretches(f.value, lang) if rewritten else (),
                )
                result = self.redactor.redact(
                    segment, field_spans, document_id=doc_id, patient_id=patient
                )
                for r in result.replacements:
                    start, end = f.raw(r.start, r.end)
                    new = result.text[r.new_start : r.new_end]
                    edits.append((start, end, f.encode(new)))
                    labels.append(r.label.value)
        finally:
            if owned_id:
                self.redactor.end_document(doc_id)
        return DocumentResult(splice(doc.text, edits), tuple(found), tuple(labels))


#: Categories whose operators read the value in its language (a date shift, a kept year).
_READ_AS_WRITTEN = frozenset({Category.DATE, Category.AGE})


def _stretches(text: str, lang: str) -> tuple[Stretch, ...]:
    """The parts of ``text`` in other languages than ``lang`` (identified on first use)."""
    from polydeid.detect.langid.stretches import language_stretches

    return language_stretches(text, lang)


def categories_of(spans: Sequence[FieldSpan]) -> list[Category]:
    return [fs.span.label for fs in spans if isinstance(fs.span.label, Category)]


# --------------------------------------------------------------------------------------------
# Reading: the CSV reader's value sampler


def read_document(
    data: bytes, fmt: str, *, source: str, sampler: Sampler | None = None, **options: Any
) -> Document:
    """:func:`polydeid.formats.registry.read_document`, a table's columns whose header says
    nothing judged by ``sampler`` (by default the rule layer, :func:`rule_sampler`)."""
    return registry.read_document(data, fmt, source=source, **_sampled(fmt, sampler, options))


def read_text_document(
    text: str, fmt: str, *, source: str, sampler: Sampler | None = None, **options: Any
) -> Document:
    """:func:`polydeid.formats.registry.read_text_document` with the sampler of
    :func:`read_document`."""
    return registry.read_text_document(text, fmt, source=source, **_sampled(fmt, sampler, options))


def _sampled(fmt: str, sampler: Sampler | None, options: dict[str, Any]) -> dict[str, Any]:
    if fmt in SAMPLED_FORMATS:
        return {**options, "sampler": sampler or rule_sampler()}
    return options


@cache
def _rule_pipeline() -> Pipeline:
    return Pipeline(profile_detectors("rules"))


def pipeline_sampler(
    pipeline: Pipeline, *, lang: str = "en", countries: Sequence[str] = ()
) -> Sampler:
    """A sampler running ``pipeline`` on each value alone: the category of an identifier span
    covering the whole value, else the clinical fact covering it, else None."""

    def sample(value: str) -> Category | Fact | None:
        stripped = value.strip()
        lead = len(value) - len(value.lstrip())
        segment = Segment(value, lang=lang, countries=tuple(countries))
        candidates = pipeline.candidates(segment)
        whole = (lead, lead + len(stripped))
        for span in resolve(candidates, value, pipeline.resolve_policy):
            if span.start <= whole[0] and span.end >= whole[1]:
                return span.label
        for span in facts_only(candidates):
            if span.start <= whole[0] and span.end >= whole[1]:
                return span.label
        return None

    return sample


def rule_sampler(lang: str = "en", countries: Sequence[str] = ()) -> Sampler:
    """A sampler using the rule layer (no model) for ``lang``."""
    return pipeline_sampler(_rule_pipeline(), lang=lang, countries=countries)
