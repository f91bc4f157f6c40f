"""Text-format renderers for synthetic documents, tracking every span's offsets exactly.

A document is an ordered tuple of :class:`Field` values; :func:`render` lays them out in one
text format (prose, SOAP, bullets, form lines, CSV, JSON, FHIR R4, CDA-like XML, HL7 v2,
chat transcript, log, Python snippet) and returns the text with the fields' spans moved to
their place in it. Where a format escapes values (CSV, JSON, FHIR, XML, HL7, string literals
in code) spans cover the *escaped* form, computed character by character after escaping, so
``text[span.start:span.end]`` is always the escaped span text and never overlaps syntax.

Choices worth knowing:

- System metadata the renderer invents (log timestamps, HL7 message time and control id,
  FHIR/CDA ids) is not annotated: it describes the record system, not the patient.
- Field labels come from ``locales/languages/<lang>/field_labels.toml`` (``[labels]`` table,
  key → label) when a pack has one, over the English defaults below; unknown keys are
  humanised (``next_of_kin`` → "Next of kin").
- XML 1.0 cannot carry most C0 control characters; a field holding one raises
  :class:`InputError` (fail closed) instead of being altered.
"""

from __future__ import annotations

import csv
import io
import json
import random
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from types import MappingProxyType
from typing import Final

from polydeid.core.errors import ConfigError, InputError
from polydeid.core.spans import Span
from polydeid.locales.field_labels import field_labels


@dataclass(frozen=True, slots=True)
class Field:
    """One field of a synthetic document: its key, its text and spans over that text."""

    key: str
    text: str
    spans: tuple[Span, ...] = ()
    facts: tuple[Span, ...] = ()

    def __post_init__(self) -> None:
        for span in (*self.spans, *self.facts):
            if span.end > len(self.text):
                raise ValueError(f"span {span!r} past the end of field {self.key!r}")

    def __repr__(self) -> str:
        return f"Field({self.key!r}, chars={len(self.text)}, spans={len(self.spans)})"


@dataclass(frozen=True, slots=True)
class Rendered:
    """A rendered document text with its identifier spans and fact spans, sorted by start."""

    text: str
    spans: tuple[Span, ...]
    facts: tuple[Span, ...]

    def __repr__(self) -> str:
        return f"Rendered(chars={len(self.text)}, spans={len(self.spans)}, facts={len(self.facts)})"


# --- Field keys: roles per format (data about the layout, not about any language) -----------


@dataclass(frozen=True, slots=True)
class KeyRole:
    """Where a field key goes: SOAP section, narrative or not, FHIR and HL7 slots."""

    soap: str = ""  # "S", "O", "A", "P" or "" (header)
    narrative: bool = False
    fhir: str = ""  # "name", "phone", "email", "identifier", "birthDate", "address", "gender"
    hl7: str = ""  # "PID-3", "PID-5", "PID-7", "PID-8", "PID-11", "PID-13", "NK1-2", …
    id_type: str = ""  # HL7 table 0203 identifier type code


KEY_ROLES: Final[Mapping[str, KeyRole]] = MappingProxyType(
    {
        "patient_name": KeyRole(fhir="name", hl7="PID-5"),
        "name": KeyRole(fhir="name", hl7="PID-5"),
        "sex": KeyRole(fhir="gender", hl7="PID-8"),
        "age": KeyRole(),
        "date_of_birth": KeyRole(fhir="birthDate", hl7="PID-7"),
        "dob": KeyRole(fhir="birthDate", hl7="PID-7"),
        "mrn": KeyRole(fhir="identifier", hl7="PID-3", id_type="MR"),
        "record_number": KeyRole(fhir="identifier", hl7="PID-3", id_type="MR"),
        "national_id": KeyRole(fhir="identifier", hl7="PID-3", id_type="NI"),
        "insurance_number": KeyRole(fhir="identifier", hl7="PID-3", id_type="MB"),
        "phone": KeyRole(fhir="phone", hl7="PID-13"),
        "email": KeyRole(fhir="email", hl7="PID-13"),
        "address": KeyRole(fhir="address", hl7="PID-11"),
        "village": KeyRole(fhir="address", hl7="PID-11"),
        "district": KeyRole(fhir="address", hl7="PID-11"),
        "next_of_kin": KeyRole(hl7="NK1-2"),
        "next_of_kin_phone": KeyRole(hl7="NK1-5"),
        "facility": KeyRole(hl7="PV1-3"),
        "clinician": KeyRole(soap="P", hl7="PV1-7"),
        "admission_date": KeyRole(hl7="PV1-44"),
        "complaint": KeyRole(soap="S", narrative=True),
        "presenting_complaint": KeyRole(soap="S", narrative=True),
        "history": KeyRole(soap="S", narrative=True),
        "social_history": KeyRole(soap="S", narrative=True),
        "examination": KeyRole(soap="O", narrative=True),
        "vitals": KeyRole(soap="O"),
        "labs": KeyRole(soap="O"),
        "assessment": KeyRole(soap="A", narrative=True),
        "diagnosis": KeyRole(soap="A"),
        "plan": KeyRole(soap="P", narrative=True),
        "medications": KeyRole(soap="P"),
        "follow_up": KeyRole(soap="P", narrative=True),
        "notes": KeyRole(soap="A", narrative=True),
    }
)

#: English field labels; a language pack's ``field_labels.toml`` overrides them per key.
DEFAULT_LABELS: Final[Mapping[str, str]] = MappingProxyType(
    {
        "patient_name": "Patient name",
        "dob": "Date of birth",
        "mrn": "MRN",
        "national_id": "National ID",
        "next_of_kin": "Next of kin",
        "next_of_kin_phone": "Next of kin phone",
        "phone": "Phone",
        "email": "E-mail",
        "follow_up": "Follow-up",
        "admission_date": "Date of admission",
        "admission_note": "Admission note",
        "discharge_summary": "Discharge summary",
        "_patient": "patient",
        "_clinician": "clinician",
    }
)

_SOAP_TITLES: Final = (("S", "S:"), ("O", "O:"), ("A", "A:"), ("P", "P:"))


def label_for(key: str, lang: str) -> str:
    """The human label of field key (or document type) ``key`` in language ``lang``."""
    table = field_labels(lang).labels
    if key in table:
        return table[key]
    if key in DEFAULT_LABELS:
        return DEFAULT_LABELS[key]
    words = key.replace("_", " ").replace("-", " ").strip()
    return words[:1].upper() + words[1:]


def _role(key: str) -> KeyRole:
    return KEY_ROLES.get(key, KeyRole())


# --- Escaping with offset maps --------------------------------------------------------------

EscapeTable = Mapping[str, str]  # char → replacement; chars not in it are kept


def _json_table() -> dict[str, str]:
    chars = [chr(c) for c in range(0x20)] + ['"', "\\"]
    return {c: json.dumps(c, ensure_ascii=False)[1:-1] for c in chars}


def _compose(inner: EscapeTable, outer: EscapeTable) -> dict[str, str]:
    """The table of ``outer(inner(c))`` for every char either table changes."""
    trans = str.maketrans(dict(outer))
    return {c: inner.get(c, c).translate(trans) for c in {*inner, *outer}}


JSON_ESCAPES: Final[EscapeTable] = MappingProxyType(_json_table())
XML_ESCAPES: Final[EscapeTable] = MappingProxyType(
    {"&": "&amp;", "<": "&lt;", ">": "&gt;", "\r": "&#13;"}
)
XHTML_IN_JSON_ESCAPES: Final[EscapeTable] = MappingProxyType(_compose(XML_ESCAPES, JSON_ESCAPES))
HL7_ESCAPES: Final[EscapeTable] = MappingProxyType(
    {
        "\\": "\\E\\",
        "|": "\\F\\",
        "^": "\\S\\",
        "&": "\\T\\",
        "~": "\\R\\",
        "\r": "\\X0D\\",
        "\n": "\\X0A\\",
    }
)
CSV_ESCAPES: Final[EscapeTable] = MappingProxyType({'"': '""'})
NO_ESCAPES: Final[EscapeTable] = MappingProxyType({})

_XML_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


def escape(text: str, table: EscapeTable) -> str:
    """``text`` with every char in ``table`` replaced."""
    return text.translate(str.maketrans(dict(table))) if table else text


def _offset_map(text: str, table: EscapeTable) -> tuple[str, list[int] | None]:
    """Escaped text and, when it differs, the escaped offset of every original offset."""
    escaped = escape(text, table)
    if escaped == text:
        return text, None
    offsets = [0]
    for char in text:
        offsets.append(offsets[-1] + len(table.get(char, char)))
    return escaped, offsets


# --- Building text with spans ---------------------------------------------------------------


class _Builder:
    """Accumulates literal syntax and escaped field values, moving the values' spans."""

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._length = 0
        self._spans: list[Span] = []
        self._facts: list[Span] = []

    def lit(self, text: str) -> None:
        self._parts.append(text)
        self._length += len(text)

    def value(self, field: Field, table: EscapeTable = NO_ESCAPES) -> None:
        escaped, offsets = _offset_map(field.text, table)
        base = self._length
        for source, target in ((field.spans, self._spans), (field.facts, self._facts)):
            for span in source:
                start = offsets[span.start] if offsets else span.start
                end = offsets[span.end] if offsets else span.end
                target.append(Span(base + start, base + end, span.label, span.source, span.score))
        self.lit(escaped)

    def result(self) -> Rendered:
        def order(spans: list[Span]) -> tuple[Span, ...]:
            return tuple(sorted(spans, key=lambda s: (s.start, s.end)))

        return Rendered("".join(self._parts), order(self._spans), order(self._facts))


@dataclass(frozen=True, slots=True)
class _Context:
    """What every renderer gets besides the fields."""

    document_type: str
    lang: str
    rng: random.Random
    #: who writes the narrative fields: "clinician" or "patient" (a chat puts them in that turn)
    narrator: str = "clinician"

    def label(self, key: str) -> str:
        return label_for(key, self.lang)


Renderer = Callable[[_Builder, Sequence[Field], _Context], None]


def _sentence(field: Field, ctx: _Context) -> tuple[str, str]:
    """Literal text around a field for prose: ``(before, after)``."""
    before = "" if _role(field.key).narrative else f"{ctx.label(field.key)}: "
    after = "" if field.text.rstrip().endswith((".", "!", "?")) else "."
    return before, after


# --- Plain-text formats (no escaping: spans are the original text) --------------------------


def _render_prose(b: _Builder, fields: Sequence[Field], ctx: _Context) -> None:
    b.lit(f"{ctx.label(ctx.document_type)}\n\n")
    in_paragraph = 0
    paragraph_size = ctx.rng.randint(2, 4)
    for i, field in enumerate(fields):
        if in_paragraph == paragraph_size:
            b.lit("\n\n")
            in_paragraph, paragraph_size = 0, ctx.rng.randint(2, 4)
        elif i:
            b.lit(" ")
        before, after = _sentence(field, ctx)
        b.lit(before)
        b.value(field)
        b.lit(after)
        in_paragraph += 1
    b.lit("\n")


def _key_value_line(b: _Builder, field: Field, ctx: _Context, prefix: str = "") -> None:
    b.lit(f"{prefix}{ctx.label(field.key)}: ")
    b.value(field)
    b.lit("\n")


def _render_soap(b: _Builder, fields: Sequence[Field], ctx: _Context) -> None:
    b.lit(f"{ctx.label(ctx.document_type)}\n")
    for field in fields:
        if not _role(field.key).soap:
            _key_value_line(b, field, ctx)
    for section, title in _SOAP_TITLES:
        members = [f for f in fields if _role(f.key).soap == section]
        if not members:
            continue
        b.lit(f"\n{title}\n")
        for field in members:
            if _role(field.key).narrative:
                b.value(field)
                b.lit("\n")
            else:
                _key_value_line(b, field, ctx)


def _render_bullets(b: _Builder, fields: Sequence[Field], ctx: _Context) -> None:
    marker = ctx.rng.choice(("-", "*", "•"))
    b.lit(f"{ctx.label(ctx.document_type)}\n")
    for field in fields:
        _key_value_line(b, field, ctx, prefix=f"{marker} ")


def _render_key_value(b: _Builder, fields: Sequence[Field], ctx: _Context) -> None:
    b.lit(f"{ctx.label(ctx.document_type).upper()}\n")
    for field in fields:
        _key_value_line(b, field, ctx)


def _render_chat(b: _Builder, fields: Sequence[Field], ctx: _Context) -> None:
    patient, clinician = ctx.label("_patient"), ctx.label("_clinician")
    narrator = patient if ctx.narrator == "patient" else clinician
    for field in fields:
        if _role(field.key).narrative:  # a patient's message in the patient's turn
            b.lit(f"{narrator}: ")
        else:
            b.lit(f"{clinician}: {ctx.label(field.key)}?\n{patient}: ")
        b.value(field)
        b.lit("\n")


def _render_log(b: _Builder, fields: Sequence[Field], ctx: _Context) -> None:
    # Log timestamps are system metadata (when a service wrote the line), not patient dates,
    # so they are deliberately not annotated as DATE.
    moment = datetime(2020, 1, 1, tzinfo=UTC) + timedelta(seconds=ctx.rng.randrange(10**8))
    for field in fields:
        moment += timedelta(milliseconds=ctx.rng.randrange(1, 5000))
        level = ctx.rng.choice(("INFO", "INFO", "DEBUG", "WARN"))
        stamp = moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"
        b.lit(f"{stamp} {level:<5} {ctx.document_type}: {field.key}=")
        b.value(field)
        b.lit("\n")


# --- Escaped formats ------------------------------------------------------------------------


def _render_csv(b: _Builder, fields: Sequence[Field], ctx: _Context) -> None:
    header = [ctx.label(f.key) for f in fields]
    buffer = io.StringIO()
    writer = csv.writer(buffer, quoting=csv.QUOTE_ALL, lineterminator="\n")
    writer.writerow(header)
    writer.writerow([f.text for f in fields])
    b.lit(",".join(f'"{escape(h, CSV_ESCAPES)}"' for h in header) + "\n")
    for i, field in enumerate(fields):
        b.lit("," if i else "")
        b.lit('"')
        b.value(field, CSV_ESCAPES)
        b.lit('"')
    b.lit("\n")
    # QUOTE_ALL quotes every cell and doubles quote chars; the builder must agree with csv.
    if b.result().text != buffer.getvalue():
        raise RuntimeError("CSV layout disagrees with the csv module")


@dataclass(frozen=True, slots=True)
class _JsonValue:
    """A JSON string holding one field's text between literal ``prefix`` and ``suffix``."""

    field: Field
    prefix: str = ""
    suffix: str = ""
    table: EscapeTable | None = None  # None: plain JSON string escaping


JsonNode = dict[str, "JsonNode"] | list["JsonNode"] | str | int | bool | None | _JsonValue


def _emit_json(b: _Builder, node: JsonNode, depth: int = 0) -> None:
    pad, inner = "  " * depth, "  " * (depth + 1)
    if isinstance(node, _JsonValue):
        b.lit('"' + escape(node.prefix, JSON_ESCAPES))
        b.value(node.field, JSON_ESCAPES if node.table is None else node.table)
        b.lit(escape(node.suffix, JSON_ESCAPES) + '"')
    elif isinstance(node, dict) and node:
        b.lit("{\n")
        for i, (key, child) in enumerate(node.items()):
            b.lit(("," + "\n" if i else "") + inner + json.dumps(key, ensure_ascii=False) + ": ")
            _emit_json(b, child, depth + 1)
        b.lit(f"\n{pad}}}")
    elif isinstance(node, list) and node:
        b.lit("[\n")
        for i, child in enumerate(node):
            b.lit(("," + "\n" if i else "") + inner)
            _emit_json(b, child, depth + 1)
        b.lit(f"\n{pad}]")
    else:
        b.lit(json.dumps(node, ensure_ascii=False))


def _render_json(b: _Builder, fields: Sequence[Field], ctx: _Context) -> None:
    body: dict[str, JsonNode] = {"document_type": ctx.document_type, "language": ctx.lang}
    for field in fields:
        key = field.key if field.key not in body else f"{field.key}_{len(body)}"
        body[key] = _JsonValue(field)
    _emit_json(b, body)
    b.lit("\n")


_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_XHTML_OPEN = '<div xmlns="http://www.w3.org/1999/xhtml">'


def _fhir_patient(fields: Sequence[Field], used: set[int]) -> dict[str, JsonNode]:
    patient: dict[str, JsonNode] = {"resourceType": "Patient", "id": "patient-1"}
    lists: dict[str, list[JsonNode]] = {"identifier": [], "name": [], "telecom": [], "address": []}
    for i, field in enumerate(fields):
        role = _role(field.key).fhir
        if role == "identifier":
            system = f"urn:polydeid:{field.key}"
            lists["identifier"].append({"system": system, "value": _JsonValue(field)})
        elif role == "name":
            lists["name"].append({"text": _JsonValue(field)})
        elif role in ("phone", "email"):
            lists["telecom"].append({"system": role, "value": _JsonValue(field)})
        elif role == "address":
            lists["address"].append({"text": _JsonValue(field)})
        elif role == "birthDate" and _ISO_DATE.fullmatch(field.text) and "birthDate" not in patient:
            patient["birthDate"] = _JsonValue(field)
        else:
            continue
        used.add(i)
    patient.update({k: v for k, v in lists.items() if v})
    return patient


def _render_fhir(b: _Builder, fields: Sequence[Field], ctx: _Context) -> None:
    used: set[int] = set()
    patient = _fhir_patient(fields, used)
    sections: list[JsonNode] = []
    observations: list[JsonNode] = []
    for i, field in enumerate(fields):
        if i in used:
            continue
        if _role(field.key).narrative:
            div = _JsonValue(field, _XHTML_OPEN, "</div>", XHTML_IN_JSON_ESCAPES)
            text: JsonNode = {"status": "generated", "div": div}
            sections.append({"title": ctx.label(field.key), "text": text})
        else:
            observations.append(
                {
                    "resourceType": "Observation",
                    "id": f"obs-{len(observations) + 1}",
                    "status": "final",
                    "code": {"text": ctx.label(field.key)},
                    "subject": {"reference": "Patient/patient-1"},
                    "valueString": _JsonValue(field),
                }
            )
    composition: dict[str, JsonNode] = {
        "resourceType": "Composition",
        "id": "composition-1",
        "status": "final",
        "language": ctx.lang,
        "type": {"text": ctx.label(ctx.document_type)},
        "subject": {"reference": "Patient/patient-1"},
        "title": ctx.label(ctx.document_type),
    }
    if sections:
        composition["section"] = sections
    resources: list[JsonNode] = [composition, patient, *observations]
    bundle: dict[str, JsonNode] = {
        "resourceType": "Bundle",
        "type": "document",
        "entry": [{"resource": r} for r in resources],
    }
    _emit_json(b, bundle)
    b.lit("\n")


def _check_xml_safe(fields: Sequence[Field]) -> None:
    for field in fields:
        bad = _XML_ILLEGAL.search(field.text)
        if bad:
            raise InputError(
                f"field {field.key!r} has a character XML 1.0 cannot carry at offset {bad.start()}"
            )


def _xml_tag(key: str) -> str:
    tag = re.sub(r"[^A-Za-z0-9_.-]", "_", key)
    return tag if re.match(r"[A-Za-z_]", tag) else f"f_{tag}"


def _render_xml(b: _Builder, fields: Sequence[Field], ctx: _Context) -> None:
    _check_xml_safe(fields)
    title = escape(ctx.label(ctx.document_type), XML_ESCAPES)
    b.lit('<?xml version="1.0" encoding="UTF-8"?>\n')
    b.lit('<ClinicalDocument xmlns="urn:hl7-org:v3">\n')
    b.lit(f'  <languageCode code="{escape(ctx.lang, XML_ESCAPES)}"/>\n  <title>{title}</title>\n')
    header = [f for f in fields if not _role(f.key).narrative]
    narrative = [f for f in fields if _role(f.key).narrative]
    b.lit("  <recordTarget>\n    <patientRole>\n")
    for field in header:
        tag = _xml_tag(field.key)
        b.lit(f"      <{tag}>")
        b.value(field, XML_ESCAPES)
        b.lit(f"</{tag}>\n")
    b.lit("    </patientRole>\n  </recordTarget>\n  <component>\n    <structuredBody>\n")
    for field in narrative:
        label = escape(ctx.label(field.key), XML_ESCAPES)
        b.lit(f'      <section code="{_xml_tag(field.key)}">\n        <title>{label}</title>\n')
        b.lit("        <text>")
        b.value(field, XML_ESCAPES)
        b.lit("</text>\n      </section>\n")
    b.lit("    </structuredBody>\n  </component>\n</ClinicalDocument>\n")


_HL7_EVENTS: Final[Mapping[str, str]] = MappingProxyType(
    {"admission_note": "ADT^A01^ADT_A01", "discharge_summary": "ADT^A03^ADT_A03"}
)
_HL7_SEGMENT_SIZES: Final[Mapping[str, int]] = MappingProxyType({"PID": 19, "NK1": 5, "PV1": 44})


def _hl7_segment(
    b: _Builder, head: str, slots: Mapping[int, list[Field]], size: int, first: int
) -> None:
    """Segment ``head`` then fields ``first..size`` (1-based), escaped, repeats joined by ``~``."""
    b.lit(head)
    for position in range(first, size + 1):
        b.lit("|")
        for i, field in enumerate(slots.get(position, [])):
            b.lit("~" if i else "")
            b.value(field, HL7_ESCAPES)
            id_type = _role(field.key).id_type
            if position == 3 and head.startswith("PID") and id_type:
                b.lit(f"^^^POLYDEID^{id_type}")
    b.lit("\r")


def _render_hl7v2(b: _Builder, fields: Sequence[Field], ctx: _Context) -> None:
    stamp = (datetime(2020, 1, 1) + timedelta(minutes=ctx.rng.randrange(10**6))).strftime(
        "%Y%m%d%H%M"
    )
    event = _HL7_EVENTS.get(ctx.document_type, "ORU^R01^ORU_R01")
    control = f"MSG{ctx.rng.randrange(10**8):08d}"
    b.lit(f"MSH|^~\\&|POLYDEID|SYNTH|RECEIVER|SYNTH|{stamp}||{event}|{control}|P|2.5\r")
    slots: dict[str, dict[int, list[Field]]] = {"PID": {1: []}, "NK1": {}, "PV1": {}}
    rest: list[Field] = []
    for field in fields:
        segment, _, position = _role(field.key).hl7.partition("-")
        if segment in slots:
            slots[segment].setdefault(int(position), []).append(field)
        else:
            rest.append(field)
    _hl7_segment(b, "PID|1", slots["PID"], _HL7_SEGMENT_SIZES["PID"], first=2)
    if slots["NK1"]:
        _hl7_segment(b, "NK1|1", slots["NK1"], _HL7_SEGMENT_SIZES["NK1"], first=2)
    _hl7_segment(b, "PV1|1|I", slots["PV1"], _HL7_SEGMENT_SIZES["PV1"], first=3)
    _hl7_results(b, rest, ctx)


def _hl7_results(b: _Builder, fields: Sequence[Field], ctx: _Context) -> None:
    obx = nte = 0
    for field in fields:
        label = escape(ctx.label(field.key), HL7_ESCAPES)
        if _role(field.key).narrative:
            nte += 1
            b.lit(f"NTE|{nte}|L|")
        else:
            obx += 1
            b.lit(f"OBX|{obx}|ST|^{label}||")
        b.value(field, HL7_ESCAPES)
        b.lit("||||||F\r" if not _role(field.key).narrative else "\r")


def _python_name(key: str) -> str:
    name = re.sub(r"\W", "_", key)
    return name if name.isidentifier() else f"field_{name}"


def _render_code(b: _Builder, fields: Sequence[Field], ctx: _Context) -> None:
    b.lit(f'"""Export job for {ctx.document_type} records ({ctx.lang})."""\n\n')
    comments = [f for f in fields if f.text.isprintable() and not _role(f.key).narrative]
    commented = {id(f) for f in comments[: max(1, len(comments) // 3)]}
    for field in fields:
        if id(field) in commented:
            b.lit(f"# {field.key}: ")
            b.value(field)
            b.lit("\n")
    b.lit("RECORD = {\n")
    for field in fields:
        if id(field) not in commented:
            b.lit(f'    {json.dumps(_python_name(field.key))}: "')
            b.value(field, JSON_ESCAPES)
            b.lit('",\n')
    b.lit("}\n")


# --- Registry -------------------------------------------------------------------------------

FORMATS: Final[Mapping[str, Renderer]] = MappingProxyType(
    {
        "prose": _render_prose,
        "soap": _render_soap,
        "bullets": _render_bullets,
        "key_value": _render_key_value,
        "table_csv": _render_csv,
        "json": _render_json,
        "fhir": _render_fhir,
        "xml": _render_xml,
        "hl7v2": _render_hl7v2,
        "chat": _render_chat,
        "log": _render_log,
        "code": _render_code,
    }
)

#: The file suffix a document rendered in each format is saved under, so that polydeid's
#: format detection (``polydeid.formats.registry.detect_format``) reads it as intended.
FILE_SUFFIXES: Final[Mapping[str, str]] = MappingProxyType(
    {
        "prose": ".txt",
        "soap": ".txt",
        "bullets": ".txt",
        "key_value": ".txt",
        "table_csv": ".csv",
        "json": ".json",
        "fhir": ".json",
        "xml": ".xml",
        "hl7v2": ".hl7",
        "chat": ".txt",
        "log": ".log",
        "code": ".py",
    }
)

#: The escaping each format applies to field values (``code`` also writes raw comments).
FORMAT_ESCAPES: Final[Mapping[str, tuple[EscapeTable, ...]]] = MappingProxyType(
    {
        "prose": (NO_ESCAPES,),
        "soap": (NO_ESCAPES,),
        "bullets": (NO_ESCAPES,),
        "key_value": (NO_ESCAPES,),
        "table_csv": (CSV_ESCAPES,),
        "json": (JSON_ESCAPES,),
        "fhir": (JSON_ESCAPES, XHTML_IN_JSON_ESCAPES),
        "xml": (XML_ESCAPES,),
        "hl7v2": (HL7_ESCAPES,),
        "chat": (NO_ESCAPES,),
        "log": (NO_ESCAPES,),
        "code": (NO_ESCAPES, JSON_ESCAPES),
    }
)


def format_names() -> tuple[str, ...]:
    """Names of every registered text format."""
    return tuple(FORMATS)


def render(
    fields: Iterable[Field],
    *,
    text_format: str,
    document_type: str,
    lang: str,
    rng: random.Random,
    narrator: str = "clinician",
) -> Rendered:
    """Lay ``fields`` out as one document in ``text_format``, spans moved to their place;
    ``narrator`` ("clinician" or "patient") writes the narrative fields."""
    renderer = FORMATS.get(text_format)
    if renderer is None:
        raise ConfigError(f"unknown text format {text_format[:40]!r}; known: {', '.join(FORMATS)}")
    builder = _Builder()
    renderer(builder, tuple(fields), _Context(document_type, lang, rng, narrator))
    return builder.result()
