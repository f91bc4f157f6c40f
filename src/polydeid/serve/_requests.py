"""Parsing a request into a :class:`Job` (a JSON text or document request, a raw document
body with options as query parameters, or a multipart upload) and answering its result."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from fastapi import Request
from fastapi.responses import JSONResponse, Response
from pydantic import ValidationError
from starlette.datastructures import UploadFile

from polydeid.core.errors import InputLimitError, UnknownCountryError
from polydeid.formats import limits
from polydeid.formats.registry import detect_format
from polydeid.locales import canonical_country
from polydeid.serve._models import RAW_MEDIA_TYPES, REQUEST_FORMATS, DocumentRequest, TextRequest
from polydeid.serve._problems import Problem, invalid, malformed, validation_problem
from polydeid.serve._service import Job, decode

_COUNTRY = re.compile(r"[A-Za-z]{2}")

#: Deepest nesting of arrays and objects a JSON request body may have.
MAX_JSON_DEPTH = 100
#: Longest number, in characters, a JSON request body may hold.
MAX_JSON_NUMBER = 100


def load_json(body: bytes) -> Any:
    """A JSON request body, its nesting depth and number lengths bounded
    (:func:`polydeid.formats.limits.loads` with the service's stricter limits); problem 400
    (PD904) for a malformed body or one past :data:`MAX_JSON_DEPTH` or
    :data:`MAX_JSON_NUMBER`."""
    try:
        return limits.loads(body, max_depth=MAX_JSON_DEPTH, max_number_chars=MAX_JSON_NUMBER)
    except UnicodeDecodeError:
        raise malformed("the body is not valid UTF-8 JSON") from None
    except json.JSONDecodeError as exc:
        raise malformed(
            f"malformed JSON at line {exc.lineno}, column {exc.colno} ({exc.msg})"
        ) from None
    except InputLimitError as exc:
        raise malformed(f"the JSON body is past a limit: {exc.message}") from None


def _media_type(request: Request) -> str:
    return request.headers.get("content-type", "").split(";")[0].strip().lower()


def _countries(values: Sequence[Any]) -> tuple[str, ...]:
    out = []
    for value in values:
        if not isinstance(value, str) or not _COUNTRY.fullmatch(value.strip()):
            raise invalid("countries must be ISO 3166 alpha-2 codes such as KE or UG")
        try:
            out.append(canonical_country(value))
        except UnknownCountryError as exc:
            raise invalid(
                "unknown country code; countries must be ISO 3166 alpha-2 codes", code=exc.code
            ) from None
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
    request: Request,
    action: Literal["detect", "redact"],
    query: Mapping[str, str | None],
    *,
    max_bytes: int,
) -> Job:
    """The request as a :class:`Job`, by its media type; problems 400, 413, 415 or 422."""
    media = _media_type(request)
    if media in ("", "application/json") or (
        media.endswith("+json") and media not in RAW_MEDIA_TYPES
    ):
        return _json_job(await request.body(), action, query)
    if media == "multipart/form-data":
        return await _upload_job(request, action, query, max_bytes)
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
        job.text = decode(body)
    else:
        job.document = body
    return job


def _json_job(body: bytes, action: Literal["detect", "redact"], query: Mapping[str, Any]) -> Job:
    value = load_json(body)
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
    request: Request, action: Literal["detect", "redact"], query: Mapping[str, Any], limit: int
) -> Job:
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
        job.text = decode(data)
    else:
        job.document = data
    return job


def respond(job: Job, out: dict[str, Any]) -> Response:
    """JSON, or a raw /redact body in its own media type (``X-Polydeid-*`` headers)."""
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
