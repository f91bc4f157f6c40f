"""Request and response models (validation and the OpenAPI schema) and the OpenAPI extras of
the detect and redact endpoints: their request bodies and problem responses."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from polydeid.formats.registry import FORMATS
from polydeid.serve._problems import PROBLEM_JSON

#: Raw request bodies by media type → format (the options come as query parameters).
RAW_MEDIA_TYPES: dict[str, str] = {
    "application/fhir+json": "fhir",
    "text/csv": "csv",
    "text/tab-separated-values": "tsv",
    "application/hl7-v2": "hl7",
    "x-application/hl7-v2+er7": "hl7",
    "application/xml": "xml",
    "text/xml": "xml",
    "text/plain": "text",
}
#: ``format`` values a request may name.
REQUEST_FORMATS = tuple(f for f in ("auto", *FORMATS) if f != "jsonl")


class _Options(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    lang: str | None = Field(
        None, description="language code, or auto to identify it (default: the server's)"
    )
    policy: str | None = Field(None, description="a policy from GET /policies (redact only)")
    countries: list[str] = Field(
        default_factory=list, max_length=50, description="ISO 3166 alpha-2 country codes"
    )
    patient_id: str | None = Field(None, description="patient id for date shifting")


class TextRequest(_Options):
    text: str = Field(description="the clinical text")


class DocumentRequest(_Options):
    document: dict[str, Any] | list[Any] | str = Field(
        description="a structured record: a JSON value (FHIR resource, chat messages, any JSON)"
        " or the document's text (CSV, HL7 v2, XML, …)"
    )
    format: str = Field("auto", description=f"one of {', '.join(REQUEST_FORMATS)}")
    columns: dict[str, str] | None = Field(
        None, description="CSV/TSV column policy: header → CATEGORY, text or skip"
    )


class SpanOut(BaseModel):
    start: int = Field(description="offset in code points of the input (or raw document)")
    end: int
    label: str
    score: float
    source: str
    path: str | None = Field(None, description="field path (structured documents)")
    line: int | None = None


class ReplacementOut(BaseModel):
    start: int
    end: int
    new_start: int
    new_end: int
    label: str
    operator: str


class DetectResponse(BaseModel):
    kind: Literal["text", "document"]
    lang: str
    format: str
    spans: list[SpanOut]


class RedactResponse(DetectResponse):
    policy: str
    text: str | None = Field(None, description="the de-identified text (text input)")
    replacements: list[ReplacementOut] | None = None
    document: Any = Field(
        None, description="the de-identified document, in the shape it was sent (document input)"
    )
    labels: list[str] | None = Field(None, description="categories replaced (document input)")


class ProblemOut(BaseModel):
    type: str
    title: str
    status: int
    detail: str
    code: str


PROBLEM_RESPONSES: dict[int | str, dict[str, Any]] = {
    status: {"model": ProblemOut, "content": {PROBLEM_JSON: {}}, "description": text}
    for status, text in (
        (400, "malformed request body"),
        (401, "missing or wrong API key"),
        (408, "request body not received in time"),
        (413, "request body too large"),
        (415, "unsupported media type"),
        (422, "invalid request, unknown language or policy, unprocessable document"),
        (429, "request rate limit reached (Retry-After)"),
        (503, "processing time limit or CPU budget reached, or queue full (Retry-After)"),
    )
}


def request_body_schema(action: str) -> dict[str, Any]:
    raw = {"schema": {"type": "string"}}
    content: dict[str, Any] = {
        "application/json": {
            "schema": {
                "oneOf": [TextRequest.model_json_schema(), DocumentRequest.model_json_schema()]
            }
        },
        "multipart/form-data": {
            "schema": {
                "type": "object",
                "required": ["file"],
                "properties": {
                    "file": {"type": "string", "format": "binary"},
                    "lang": {"type": "string"},
                    "policy": {"type": "string"},
                    "format": {"type": "string"},
                    "countries": {"type": "string", "description": "comma-separated"},
                },
            }
        },
    }
    for media in RAW_MEDIA_TYPES:
        content[media] = raw
    return {
        "requestBody": {
            "required": True,
            "content": content,
            "description": f"what to {action}: JSON text or document request, a raw document "
            "(options as query parameters) or a file upload",
        }
    }
