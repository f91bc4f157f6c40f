"""Problem documents (RFC 9457) and the application's exception handlers: every error the
service answers is a :class:`Problem`, whose ``detail`` never quotes the request's text."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from polydeid.core.errors import (
    ConfigError,
    DetectionError,
    InputError,
    KeyMaterialError,
    PolydeidError,
    RecordError,
    UnknownLanguageError,
    WorkLimitError,
)

logger = logging.getLogger("polydeid.serve")

PROBLEM_JSON = "application/problem+json"
API_KEY_HEADER = "X-API-Key"


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
    (WorkLimitError, 503, "work-limit", "Processing limit reached"),
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


# --- exception handlers ------------------------------------------------------------------------


async def on_problem(request: Request, exc: Problem) -> Response:
    logger.info("%s %s -> %d %s", request.method, request.url.path, exc.status, exc.code)
    return exc.response()


async def on_polydeid(request: Request, exc: PolydeidError) -> Response:
    problem = from_error(exc)
    logger.info("%s %s -> %d %s", request.method, request.url.path, problem.status, exc.code)
    return problem.response()


async def on_validation(request: Request, exc: RequestValidationError) -> Response:
    return validation_problem(list(exc.errors())).response()


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
    problem = Problem(exc.status_code, code, slug, title, detail, headers=dict(exc.headers or {}))
    return problem.response()


def add_problem_handlers(app: FastAPI) -> None:
    """Answer every error as a problem document (FastAPI's own 422 would quote the input)."""
    app.add_exception_handler(Problem, on_problem)
    app.add_exception_handler(PolydeidError, on_polydeid)
    app.add_exception_handler(RequestValidationError, on_validation)
    app.add_exception_handler(StarletteHTTPException, on_http)
