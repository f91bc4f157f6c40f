"""The HTTP service: ``create_app(Settings(...))`` returns a FastAPI application.

Endpoints (JSON unless said otherwise)::

    POST /detect, POST /redact   text:      {"text", "lang"?, "policy"?, "countries"?, …}
                                 document:  {"document": <JSON value or string>, "format"?, …}
                                 raw body:  application/fhir+json, text/csv, text/tab-separated-
                                            values, application/hl7-v2, application/xml, text/plain
                                            (options as query parameters; /redact answers in the
                                            body's own media type unless Accept asks for JSON)
                                 upload:    multipart/form-data with a "file" part (the web page)
    GET /health, /categories, /languages, /policies, /openapi.json;  GET / (the web page)

The detectors are built once, when the application is created; a :class:`Deidentifier` per
policy shares them and is cached on first use (a request chooses a policy from ``GET
/policies``). Detection runs in a worker thread under a time limit.

Errors are RFC 9457 problem documents (``application/problem+json``: type, title, status,
detail, code) that never quote the request's text: polydeid's own errors keep their codes
(``PD104`` unknown language …) and the service adds

    PD900 internal error (500)          PD904 malformed request body (400)
    PD901 missing or wrong API key (401) PD905 invalid request (422)
    PD902 request body too large (413)   PD906 unsupported media type (415)
    PD903 processing time limit (503)    PD907 no such resource or method (404, 405)

Nothing here logs text: log lines carry the endpoint, the kind of input, the language, span
counts and timings. An unexpected exception is logged by its type and code locations only.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import re
import threading
import time
import traceback
from collections.abc import Awaitable, Callable, Mapping, MutableMapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.datastructures import UploadFile
from starlette.exceptions import HTTPException as StarletteHTTPException

from polydeid.api import Deidentifier
from polydeid.core.errors import (
    ConfigError,
    DetectionError,
    InputError,
    KeyMaterialError,
    PolydeidError,
    RecordError,
    UnknownLanguageError,
)
from polydeid.core.segments import Origin, Segment
from polydeid.core.taxonomy import Category
from polydeid.detect.base import Detector
from polydeid.detect.registry import partial_categories
from polydeid.formats.registry import FORMATS, READERS, detect_format
from polydeid.locales import canonical_language, language_info, languages
from polydeid.transform.policy import Policy, load_policy, shipped_policies

logger = logging.getLogger("polydeid.serve")

STATIC_DIR = Path(__file__).parent / "static"
PROBLEM_JSON = "application/problem+json"
API_KEY_HEADER = "X-API-Key"
AUTO = "auto"

#: Paths served without an API key: the health check and the web page (its files hold no data).
PUBLIC_PATHS = frozenset({"/", "/health", "/favicon.ico"})
PUBLIC_PREFIXES = ("/static/",)

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

_COUNTRY = re.compile(r"[A-Za-z]{2}")
_API_KEY = re.compile(r"[\x21-\x7e]{8,256}")

SECURITY_HEADERS: tuple[tuple[bytes, bytes], ...] = (
    (
        b"content-security-policy",
        b"default-src 'self'; img-src 'self' data: blob:; object-src 'none'; base-uri 'none'; "
        b"frame-ancestors 'none'; form-action 'self'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
)


@dataclass
class Settings:
    """How the service runs. ``detectors`` replaces the profile's detectors (tests inject
    fakes); ``policy`` is the default policy: a shipped name or a TOML file."""

    profile: str = "default"
    policy: str = "tag"
    key_file: str | None = None
    api_key: str | None = None
    max_bytes: int = 1_000_000
    timeout: float = 30.0
    workers: int = 2
    default_lang: str = "en"
    #: A SQLite path or postgresql:// URL: surrogates shared with batch runs and other
    #: service instances (with a key, originals are sealed for ``polydeid reidentify``).
    vault: str | None = None
    detectors: Sequence[Detector] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if self.max_bytes < 1:
            raise ConfigError("--max-bytes must be at least 1")
        if not self.timeout > 0:
            raise ConfigError("--timeout must be a positive number of seconds")
        if self.workers < 1:
            raise ConfigError("the worker count must be at least 1")
        if self.api_key is not None and not _API_KEY.fullmatch(self.api_key):
            raise ConfigError("the API key must be 8 to 256 printable ASCII characters")

    def __repr__(self) -> str:  # never show the API key
        return (
            f"Settings(profile={self.profile!r}, policy={self.policy!r}, "
            f"auth={self.api_key is not None}, max_bytes={self.max_bytes}, "
            f"timeout={self.timeout})"
        )


# --- problems ---------------------------------------------------------------------------------


class Problem(Exception):
    """An error answered as RFC 9457 problem JSON; ``detail`` never quotes input."""

    def __init__(
        self,
        status: int,
        code: str,
        slug: str,
        title: str,
        detail: str,
        *,
        headers: Mapping[str, str] | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(f"[{code}] {title}")
        self.status = status
        self.code = code
        self.slug = slug
        self.title = title
        self.detail = detail
        self.headers = dict(headers or {})
        self.extra = dict(extra or {})

    def body(self) -> dict[str, Any]:
        return {
            "type": f"urn:polydeid:problem:{self.slug}",
            "title": self.title,
            "status": self.status,
            "detail": self.detail,
            "code": self.code,
            **self.extra,
        }

    def response(self) -> JSONResponse:
        return JSONResponse(
            self.body(),
            status_code=self.status,
            media_type=PROBLEM_JSON,
            headers={"Cache-Control": "no-store", **self.headers},
        )


def invalid(detail: str, code: str = "PD905", **extra: Any) -> Problem:
    return Problem(422, code, "invalid-request", "Invalid request", detail, extra=extra)


def malformed(detail: str) -> Problem:
    return Problem(400, "PD904", "malformed-body", "Malformed request body", detail)


def too_large(limit: int) -> Problem:
    return Problem(
        413,
        "PD902",
        "body-too-large",
        "Request body too large",
        f"the request body exceeds the limit of {limit} bytes",
    )


def unauthorized() -> Problem:
    return Problem(
        401,
        "PD901",
        "unauthorized",
        "Missing or wrong API key",
        f"send the service's API key in the {API_KEY_HEADER} header",
        headers={"WWW-Authenticate": f'ApiKey header="{API_KEY_HEADER}"'},
    )


_SLUGS: tuple[tuple[type[PolydeidError], int, str, str], ...] = (
    (UnknownLanguageError, 422, "unknown-language", "Unknown language"),
    (KeyMaterialError, 422, "key-required", "Policy needs a key"),
    (ConfigError, 422, "invalid-configuration", "Invalid request configuration"),
    (RecordError, 422, "unprocessable-input", "Unprocessable input"),
    (InputError, 422, "unprocessable-input", "Unprocessable input"),
    (DetectionError, 503, "detection-unavailable", "Detection failed"),
)


def from_error(exc: PolydeidError) -> Problem:
    """A problem for one of polydeid's errors (their messages never quote text)."""
    status, slug, title = next(
        ((st, sl, ti) for cls, st, sl, ti in _SLUGS if isinstance(exc, cls)),
        (500, "processing-error", "Processing failed"),
    )
    extra = {"location": exc.location} if exc.location else {}
    return Problem(status, exc.code, slug, title, exc.message, extra=extra)


def _safe_loc(loc: Sequence[Any], known: frozenset[str]) -> list[str | int]:
    """A validation error's location with any name the schema does not define masked (a
    stray key of a request body could be text)."""
    out: list[str | int] = []
    for part in loc:
        if isinstance(part, int) or part in known:
            out.append(part)
        else:
            out.append("…")
    return out


_KNOWN_FIELDS = frozenset(
    {
        "body",
        "query",
        "path",
        "header",
        "text",
        "document",
        "format",
        "lang",
        "policy",
        "countries",
        "patient_id",
        "columns",
        "file",
    }
)


def validation_problem(errors: Sequence[Mapping[str, Any]]) -> Problem:
    """422 for pydantic/FastAPI validation errors: locations and error types, never inputs."""
    shown = [
        {"loc": _safe_loc(e.get("loc", ()), _KNOWN_FIELDS), "type": str(e.get("type", ""))}
        for e in errors[:20]
    ]
    where = ", ".join(".".join(str(p) for p in e["loc"]) + f" ({e['type']})" for e in shown)
    return invalid(f"the request does not match the schema: {where}", errors=shown)


# --- request and response models (validation and the OpenAPI schema) -------------------------


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


_PROBLEMS: dict[int | str, dict[str, Any]] = {
    status: {"model": ProblemOut, "content": {PROBLEM_JSON: {}}, "description": text}
    for status, text in (
        (400, "malformed request body"),
        (401, "missing or wrong API key"),
        (413, "request body too large"),
        (415, "unsupported media type"),
        (422, "invalid request, unknown language or policy, unprocessable document"),
        (503, "processing time limit reached"),
    )
}


def _request_body_schema(action: str) -> dict[str, Any]:
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


# --- the service ------------------------------------------------------------------------------


@dataclass
class Job:
    """One parsed request (holds the text: never log it)."""

    action: Literal["detect", "redact"]
    kind: Literal["text", "document"]
    text: str | None = None
    document: bytes | str | dict[str, Any] | list[Any] | None = None
    fmt: str = "auto"
    lang: str | None = None
    policy: str | None = None
    countries: tuple[str, ...] = ()
    patient_id: str | None = None
    columns: dict[str, str] | None = None
    raw_media: str | None = None
    wants_json: bool = True

    def __repr__(self) -> str:
        return f"Job({self.action}, {self.kind}, format={self.fmt}, lang={self.lang})"


class Service:
    """The detectors (built once) and a cached :class:`Deidentifier` per policy."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        key = None
        if settings.key_file:
            from polydeid.transform.crypto import load_key

            key = load_key(settings.key_file)
        self.key = key
        self.vault = None
        if settings.vault:
            from polydeid.transform.vault import open_vault

            self.vault = open_vault(settings.vault)
        base = Deidentifier(
            profile=settings.profile,
            detectors=settings.detectors,
            policy=settings.policy,
            key=key,
            vault=self.vault,
        )
        self.base = base
        self.default_policy = base.policy.name
        self.detectors = base.pipeline.detectors
        self.policies: dict[str, Policy] = {name: load_policy(name) for name in shipped_policies()}
        self.policies[base.policy.name] = base.policy
        self._deids: dict[str, Deidentifier] = {base.policy.name: base}
        self._lock = threading.Lock()
        self.executor = ThreadPoolExecutor(
            max_workers=settings.workers, thread_name_prefix="polydeid-serve"
        )
        self.profile = "custom" if settings.detectors else settings.profile
        if settings.detectors is None:
            # Load lazily built models and locale data now, not in the first request.
            lang = settings.default_lang if settings.default_lang != AUTO else "en"
            base.detect("Warm-up note, seen on 1 March 2024.", lang=canonical_language(lang))
        labels = {label for d in self.detectors for label in d.labels}
        partial = partial_categories(self.detectors)
        self.categories = [
            {"name": c.value, "detected": c in labels, "partial": c in partial} for c in Category
        ]

    # policies -------------------------------------------------------------------------------

    def available(self, policy: Policy) -> bool:
        return self.key is not None or not policy.needs_key

    def policy_list(self) -> list[dict[str, Any]]:
        return [
            {
                "name": name,
                "description": policy.description,
                "needs_key": policy.needs_key,
                "available": self.available(policy),
                "default": name == self.default_policy,
            }
            for name, policy in sorted(self.policies.items())
        ]

    def deidentifier(self, name: str | None) -> Deidentifier:
        name = name or self.default_policy
        policy = self.policies.get(name)
        if policy is None:
            raise invalid("unknown policy; GET /policies lists them", code="PD101")
        if not self.available(policy):
            raise from_error(
                KeyMaterialError(
                    "this policy needs a secret key and the service has none "
                    "(start it with --key-file)"
                )
            )
        with self._lock:
            deid = self._deids.get(name)
            if deid is None:
                deid = Deidentifier(
                    detectors=self.detectors, policy=policy, key=self.key, vault=self.vault
                )
                self._deids[name] = deid
            return deid

    # languages ------------------------------------------------------------------------------

    def language(self, requested: str | None, sample: str) -> str:
        """The request's language: its code, or the identified one for ``auto``."""
        value = requested if requested is not None else self.settings.default_lang
        if value.strip().lower() != AUTO:
            try:
                return canonical_language(value)
            except UnknownLanguageError:
                raise Problem(
                    422,
                    "PD104",
                    "unknown-language",
                    "Unknown language",
                    "unknown or unsupported language; GET /languages lists them",
                ) from None
        from polydeid.detect.langid import resolve_language

        try:
            return resolve_language(sample, AUTO, location="lang")
        except RecordError as exc:
            detail = exc.message.replace("pass --lang", 'name the language in "lang"')
            raise Problem(
                422, exc.code, "language-undetermined", "Language undetermined", detail
            ) from None

    # work (runs in a worker thread) ---------------------------------------------------------

    def execute(self, job: Job) -> dict[str, Any]:
        deid = self.deidentifier(job.policy) if job.action == "redact" else self.base
        if job.kind == "text":
            assert job.text is not None
            return self._text(job, deid, job.text)
        return self._document(job, deid)

    def _text(self, job: Job, deid: Deidentifier, text: str) -> dict[str, Any]:
        lang = self.language(job.lang, text)
        segment = Segment(text, lang=lang, origin=Origin(file="<text>"), countries=job.countries)
        spans = deid.detect_segment(segment)
        out: dict[str, Any] = {
            "kind": "text",
            "lang": lang,
            "format": "text",
            "spans": [s.to_dict() for s in spans],
        }
        if job.action == "redact":
            result = deid.redact_segment(segment, spans=spans, patient_id=job.patient_id)
            out["policy"] = deid.policy.name
            out["text"] = result.text
            out["replacements"] = [r.to_dict() for r in result.replacements]
        return out

    def _document(self, job: Job, deid: Deidentifier) -> dict[str, Any]:
        from polydeid.formats.engine import DocumentProcessor, sample_text
        from polydeid.formats.registry import read_document, read_text_document

        data, fmt, parsed = job.document, job.fmt, False
        options: dict[str, Any] = {}
        if job.columns and fmt in ("csv", "tsv", "auto"):
            options["columns"] = dict(job.columns)
        if isinstance(data, dict | list):
            if fmt not in ("auto", "json", "fhir", "chat"):
                raise invalid(f"a {fmt} document must be sent as a string")
            data, parsed = json.dumps(data, ensure_ascii=False).encode("utf-8"), True
        if fmt == "auto":
            head = data[:4096].encode("utf-8") if isinstance(data, str) else data
            assert isinstance(head, bytes)
            fmt = detect_format(None, head)
        if fmt == "jsonl":
            raise invalid("JSON Lines is not a document: send one record at a time")
        if fmt == "text":
            text = data if isinstance(data, str) else _decode(data)
            return self._text(job, deid, text)
        if fmt not in READERS:
            raise invalid("unknown format; known: " + ", ".join(REQUEST_FORMATS))
        if fmt not in ("csv", "tsv"):
            options.pop("columns", None)
        if isinstance(data, str):
            doc = read_text_document(data, fmt, source="<document>", **options)
        else:
            assert isinstance(data, bytes)
            doc = read_document(data, fmt, source="<document>", **options)
        lang = self.language(job.lang, sample_text(doc))
        processor = DocumentProcessor(deid)
        out: dict[str, Any] = {"kind": "document", "lang": lang, "format": doc.format}
        if job.action == "detect":
            found = processor.detect(doc, lang=lang, countries=job.countries, source="<document>")
            out["spans"] = [fs.to_dict() for fs in found]
            return out
        result = processor.redact(
            doc,
            lang=lang,
            countries=job.countries,
            source="<document>",
            patient_id=job.patient_id,
        )
        out["spans"] = [fs.to_dict() for fs in result.spans]
        out["policy"] = deid.policy.name
        out["labels"] = list(result.labels)
        if parsed:
            out["document"] = json.loads(result.text)
        elif isinstance(job.document, bytes):
            out["document"] = result.text
            out["_bytes"] = result.text.encode(doc.encoding)
        else:
            out["document"] = result.text
        return out

    async def run(self, job: Job) -> dict[str, Any]:
        """:meth:`execute` in a worker thread, within the time limit."""
        future = self.executor.submit(self.execute, job)
        try:
            return await asyncio.wait_for(asyncio.wrap_future(future), self.settings.timeout)
        except TimeoutError:
            future.cancel()
            raise Problem(
                503,
                "PD903",
                "timeout",
                "Processing time limit reached",
                f"the request took longer than {self.settings.timeout:g} s; "
                "send less text per request",
                headers={"Retry-After": "5"},
            ) from None
        except PolydeidError as exc:
            raise from_error(exc) from None

    def close(self) -> None:
        self.executor.shutdown(wait=False, cancel_futures=True)


def _decode(data: bytes) -> str:
    from polydeid.formats.text import decode_utf8

    return decode_utf8(data, source="<document>")


# --- parsing requests ---------------------------------------------------------------------


def _media_type(request: Request) -> str:
    return request.headers.get("content-type", "").split(";")[0].strip().lower()


def _countries(values: Sequence[Any]) -> tuple[str, ...]:
    out = []
    for value in values:
        if not isinstance(value, str) or not _COUNTRY.fullmatch(value.strip()):
            raise invalid("countries must be ISO 3166 alpha-2 codes such as KE or UG")
        out.append(value.strip().upper())
    return tuple(out)


def _split(value: str | None) -> list[str]:
    return [v.strip() for v in (value or "").split(",") if v.strip()]


def _format(value: str | None) -> str:
    fmt = (value or "auto").strip().lower()
    if fmt not in REQUEST_FORMATS:
        raise invalid("unknown format; known: " + ", ".join(REQUEST_FORMATS))
    return fmt


def _short(value: Any, what: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > 200:
        raise invalid(f"{what} must be a short string")
    return value


async def parse_job(
    request: Request, action: Literal["detect", "redact"], query: Mapping[str, str | None]
) -> Job:
    media = _media_type(request)
    if media in ("", "application/json") or (
        media.endswith("+json") and media not in RAW_MEDIA_TYPES
    ):
        return _json_job(await request.body(), action, query)
    if media == "multipart/form-data":
        return await _upload_job(request, action, query)
    fmt = RAW_MEDIA_TYPES.get(media)
    if fmt is None:
        raise Problem(
            415,
            "PD906",
            "unsupported-media-type",
            "Unsupported media type",
            "send application/json, multipart/form-data or one of: " + ", ".join(RAW_MEDIA_TYPES),
        )
    if query.get("format") and _format(query["format"]) != "auto":
        fmt = _format(query["format"])
    body = await request.body()
    accept = request.headers.get("accept", "")
    accepted = {a.split(";")[0].strip().lower() for a in accept.split(",")}
    job = Job(
        action,
        "text" if fmt == "text" else "document",
        fmt=fmt,
        lang=_short(query.get("lang"), "lang"),
        policy=_short(query.get("policy"), "policy"),
        countries=_countries(_split(query.get("countries"))),
        patient_id=_short(query.get("patient_id"), "patient_id"),
        raw_media=request.headers.get("content-type"),
        wants_json=action == "detect" or ("application/json" in accepted and media not in accepted),
    )
    if fmt == "text":
        job.text = _decode(body)
    else:
        job.document = body
    return job


def _json_job(body: bytes, action: Literal["detect", "redact"], query: Mapping[str, Any]) -> Job:
    try:
        value = json.loads(body)
    except UnicodeDecodeError:
        raise malformed("the body is not valid UTF-8 JSON") from None
    except json.JSONDecodeError as exc:
        raise malformed(
            f"malformed JSON at line {exc.lineno}, column {exc.colno} ({exc.msg})"
        ) from None
    if not isinstance(value, dict):
        raise invalid('the body must be a JSON object with "text" or "document"')
    for name in ("lang", "policy"):
        if name not in value and query.get(name) is not None:
            value[name] = query[name]
    try:
        if "text" in value:
            text_req = TextRequest.model_validate(value)
            return Job(
                action,
                "text",
                text=text_req.text,
                lang=text_req.lang,
                policy=text_req.policy,
                countries=_countries(text_req.countries),
                patient_id=text_req.patient_id,
            )
        if "document" in value:
            doc_req = DocumentRequest.model_validate(value)
            return Job(
                action,
                "document",
                document=doc_req.document,
                fmt=_format(doc_req.format),
                lang=doc_req.lang,
                policy=doc_req.policy,
                countries=_countries(doc_req.countries),
                patient_id=doc_req.patient_id,
                columns=doc_req.columns,
            )
    except ValidationError as exc:
        raise validation_problem(exc.errors(include_input=False, include_url=False)) from None
    raise invalid('the body must be a JSON object with "text" or "document"')


async def _upload_job(
    request: Request, action: Literal["detect", "redact"], query: Mapping[str, Any]
) -> Job:
    limit = request.app.state.service.settings.max_bytes
    form = await request.form(max_files=1, max_fields=10, max_part_size=limit)
    try:
        upload = form.get("file")
        if not isinstance(upload, UploadFile):
            raise invalid('a multipart request needs a "file" part')
        data = await upload.read()
        fields = {
            name: form.get(name) if isinstance(form.get(name), str) else query.get(name)
            for name in ("lang", "policy", "format", "countries", "patient_id")
        }
        # The file name may itself be an identifier: only its suffix is used, never logged.
        suffix = Path(upload.filename or "").suffix.lower()[:12]
    finally:
        await form.close()
    fmt = _format(fields["format"])
    if fmt == "auto":
        fmt = detect_format(f"upload{suffix}", data)
        if fmt == "jsonl":
            raise invalid("JSON Lines is not a document: send one record at a time")
    job = Job(
        action,
        "text" if fmt == "text" else "document",
        fmt=fmt,
        lang=_short(fields["lang"], "lang"),
        policy=_short(fields["policy"], "policy"),
        countries=_countries(_split(fields["countries"])),
        patient_id=_short(fields["patient_id"], "patient_id"),
    )
    if fmt == "text":
        job.text = _decode(data)
    else:
        job.document = data
    return job


def respond(job: Job, out: dict[str, Any]) -> Response:
    raw = out.pop("_bytes", None)
    if job.action == "redact" and not job.wants_json and job.raw_media:
        content = raw if raw is not None else str(out.get("text", "")).encode("utf-8")
        return Response(
            content,
            media_type=job.raw_media,
            headers={
                "Cache-Control": "no-store",
                "X-Polydeid-Format": str(out["format"]),
                "X-Polydeid-Language": str(out["lang"]),
                "X-Polydeid-Replacements": str(
                    len(out.get("labels") or out.get("replacements") or [])
                ),
            },
        )
    return JSONResponse(out, headers={"Cache-Control": "no-store"})


# --- ASGI guard: auth, body limit, security headers, last-resort errors -----------------------

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


class Guard:
    """Outermost middleware: API key (constant-time), body size, security headers, and a
    500 problem for anything unexpected (logged by type and code location, never message)."""

    def __init__(self, app: Any, *, api_key: str | None, max_bytes: int) -> None:
        self.app = app
        self.api_key = api_key.encode("utf-8") if api_key else None
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def send_with_headers(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                headers = list(message.get("headers", []))
                names = {name.lower() for name, _ in headers}
                headers.extend(h for h in SECURITY_HEADERS if h[0] not in names)
                message["headers"] = headers
            await send(message)

        headers = {k.decode("latin-1").lower(): v for k, v in scope.get("headers", [])}
        if self.api_key is not None and not _public(scope.get("path", "")):
            given = headers.get(API_KEY_HEADER.lower(), b"")
            if not hmac.compare_digest(given, self.api_key):
                await _send_problem(unauthorized(), scope, receive, send_with_headers)
                return
        length = headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > self.max_bytes):
            await _send_problem(too_large(self.max_bytes), scope, receive, send_with_headers)
            return
        received = 0

        async def limited_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    raise too_large(self.max_bytes)
            return message

        try:
            await self.app(scope, limited_receive, send_with_headers)
        except Exception as exc:
            _log_unexpected(exc, scope)
            if not started:
                problem = Problem(
                    500,
                    "PD900",
                    "internal-error",
                    "Internal error",
                    "the service failed to process the request",
                )
                await _send_problem(problem, scope, receive, send_with_headers)


def _public(path: str) -> bool:
    return path in PUBLIC_PATHS or path.startswith(PUBLIC_PREFIXES)


async def _send_problem(problem: Problem, scope: Scope, receive: Receive, send: Send) -> None:
    await problem.response()(scope, receive, send)


def _log_unexpected(exc: BaseException, scope: Scope) -> None:
    """An unexpected exception, by type and code locations (its message could hold text)."""
    frames = traceback.extract_tb(exc.__traceback__)
    where = "; ".join(f"{Path(f.filename).name}:{f.lineno} in {f.name}" for f in frames[-6:])
    logger.error(
        "unexpected %s while serving %s %s (at %s)",
        type(exc).__name__,
        scope.get("method", "?"),
        scope.get("path", "?"),
        where or "?",
    )


# --- the application ----------------------------------------------------------------------


def create_app(settings: Settings | None = None) -> FastAPI:
    """The service's FastAPI application; the detectors are built now (once)."""
    settings = settings or Settings()
    service = Service(settings)
    version = _version()

    from contextlib import asynccontextmanager

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> Any:
        yield
        service.close()

    app = FastAPI(
        title="polydeid",
        version=version,
        description="De-identify clinical text and structured records. Errors are RFC 9457 "
        "problem documents; with an API key configured, send it in the X-API-Key header.",
        docs_url=None,  # the Swagger page loads assets from a CDN: not served
        redoc_url=None,
        lifespan=lifespan,
    )
    app.state.service = service
    app.add_middleware(Guard, api_key=settings.api_key, max_bytes=settings.max_bytes)

    @app.exception_handler(Problem)
    async def on_problem(request: Request, exc: Problem) -> Response:
        logger.info("%s %s -> %d %s", request.method, request.url.path, exc.status, exc.code)
        return exc.response()

    @app.exception_handler(PolydeidError)
    async def on_polydeid(request: Request, exc: PolydeidError) -> Response:
        problem = from_error(exc)
        logger.info("%s %s -> %d %s", request.method, request.url.path, problem.status, exc.code)
        return problem.response()

    @app.exception_handler(RequestValidationError)
    async def on_validation(request: Request, exc: RequestValidationError) -> Response:
        return validation_problem(list(exc.errors())).response()

    @app.exception_handler(StarletteHTTPException)
    async def on_http(request: Request, exc: StarletteHTTPException) -> Response:
        if exc.status_code in (404, 405):
            code, slug = "PD907", "not-found" if exc.status_code == 404 else "method-not-allowed"
        elif exc.status_code == 413:
            code, slug = "PD902", "body-too-large"
        elif exc.status_code == 400:
            code, slug = "PD904", "malformed-body"
        else:
            code, slug = "PD905", "http-error"
        title = {404: "Not found", 405: "Method not allowed"}.get(exc.status_code, "Request error")
        detail = exc.detail if isinstance(exc.detail, str) and len(exc.detail) < 200 else title
        problem = Problem(
            exc.status_code, code, slug, title, detail, headers=dict(exc.headers or {})
        )
        return problem.response()

    # --- endpoints --------------------------------------------------------------------------

    @app.get("/", include_in_schema=False)
    async def page() -> FileResponse:
        return FileResponse(STATIC_DIR / "index.html", headers={"Cache-Control": "no-cache"})

    @app.get("/favicon.ico", include_in_schema=False)
    async def favicon() -> Response:
        return Response(status_code=204)

    @app.get("/health", summary="liveness and configuration (no key needed)")
    async def health() -> dict[str, Any]:
        return {
            "status": "ok",
            "version": version,
            "profile": service.profile,
            "policy": service.default_policy,
            "auth_required": settings.api_key is not None,
            "max_bytes": settings.max_bytes,
            "timeout_s": settings.timeout,
        }

    @app.get("/categories", summary="canonical identifier categories")
    async def categories() -> dict[str, Any]:
        return {"categories": service.categories}

    @app.get("/languages", summary="supported languages (lang may also be auto)")
    async def list_languages() -> dict[str, Any]:
        out = []
        for code in languages():
            info = language_info(code)
            out.append(
                {
                    "code": code,
                    "name": info.name,
                    "iso639_3": info.iso639_3,
                    "script": info.script,
                    "countries": list(info.countries),
                }
            )
        return {"languages": out, "auto": True, "default": settings.default_lang}

    @app.get("/policies", summary="policies a redact request may name")
    async def list_policies() -> dict[str, Any]:
        return {"policies": service.policy_list(), "default": service.default_policy}

    def _query(
        lang: str | None, policy: str | None, format: str | None, countries: str | None
    ) -> dict[str, str | None]:
        return {"lang": lang, "policy": policy, "format": format, "countries": countries}

    @app.post(
        "/detect",
        summary="find identifiers: spans with offsets, label, score and source",
        response_model=DetectResponse,
        responses=_PROBLEMS,
        openapi_extra=_request_body_schema("detect"),
    )
    async def detect(
        request: Request,
        lang: str | None = Query(None, description="raw bodies: language code or auto"),
        format: str | None = Query(None, description="raw bodies: override the format"),
        countries: str | None = Query(None, description="raw bodies: comma-separated codes"),
    ) -> Response:
        started = time.perf_counter()
        job = await parse_job(request, "detect", _query(lang, None, format, countries))
        out = await service.run(job)
        _log_done(job, out, started)
        return respond(job, out)

    @app.post(
        "/redact",
        summary="replace identifiers according to a policy",
        response_model=RedactResponse,
        responses=_PROBLEMS,
        openapi_extra=_request_body_schema("redact"),
    )
    async def redact(
        request: Request,
        lang: str | None = Query(None, description="raw bodies: language code or auto"),
        policy: str | None = Query(None, description="raw bodies: a policy from /policies"),
        format: str | None = Query(None, description="raw bodies: override the format"),
        countries: str | None = Query(None, description="raw bodies: comma-separated codes"),
    ) -> Response:
        started = time.perf_counter()
        job = await parse_job(request, "redact", _query(lang, policy, format, countries))
        out = await service.run(job)
        _log_done(job, out, started)
        return respond(job, out)

    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    return app


def _log_done(job: Job, out: Mapping[str, Any], started: float) -> None:
    logger.info(
        "%s %s (%s, lang %s): %d span(s) in %.1f ms",
        job.action,
        job.kind,
        out.get("format"),
        out.get("lang"),
        len(out.get("spans", ())),
        # rounded here, so the record's args hold no long run of digits either
        round((time.perf_counter() - started) * 1000, 1),
    )


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("polydeid")
    except PackageNotFoundError:
        return "unknown"
