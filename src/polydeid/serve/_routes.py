"""The endpoints, on one router per concern, included by ``create_app``. A route gets the
application's :class:`ServeState` by dependency injection (:data:`State`), never a closure."""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import FileResponse, Response

from polydeid.serve._models import (
    PROBLEM_RESPONSES,
    DetectResponse,
    RedactResponse,
    request_body_schema,
)
from polydeid.serve._requests import parse_job, respond
from polydeid.serve._service import Job, Service

logger = logging.getLogger("polydeid.serve")

STATIC_DIR = Path(__file__).parent / "static"


@dataclass(frozen=True)
class ServeState:
    """What the routes share: the service (detectors, a Deidentifier per policy, the worker
    pool, and its settings: limits, auth, default language) and the package version."""

    service: Service
    version: str


async def serve_state(request: Request) -> ServeState:
    """The application's :class:`ServeState` (``app.state.serve``, set by ``create_app``)."""
    state: ServeState = request.app.state.serve
    return state


State = Annotated[ServeState, Depends(serve_state)]

#: Query parameters of raw bodies (a JSON or multipart request carries its options itself).
LangQuery = Annotated[str | None, Query(description="raw bodies: language code or auto")]
PolicyQuery = Annotated[str | None, Query(description="raw bodies: a policy from /policies")]
FormatQuery = Annotated[str | None, Query(description="raw bodies: override the format")]
CountriesQuery = Annotated[str | None, Query(description="raw bodies: comma-separated codes")]

#: The web page; its files are mounted at /static by ``create_app``.
page_router = APIRouter()
#: Liveness, configuration and the category list.
meta_router = APIRouter()
#: What a request may name: languages and policies.
catalogue_router = APIRouter()
#: Detect and redact, of text, documents (JSON or raw bodies) and uploaded files.
deid_router = APIRouter()

ROUTERS = (page_router, meta_router, catalogue_router, deid_router)


# --- the web page ------------------------------------------------------------------------------


@page_router.get("/", include_in_schema=False)
async def page() -> FileResponse:
    return FileResponse(STATIC_DIR / "index.html", headers={"Cache-Control": "no-cache"})


@page_router.get("/favicon.ico", include_in_schema=False)
async def favicon() -> Response:
    return Response(status_code=204)


# --- health and metadata -----------------------------------------------------------------------


@meta_router.get("/health", summary="liveness and configuration (no key needed)")
async def health(state: State) -> dict[str, Any]:
    return {
        "status": "ok",
        "version": state.version,
        "profile": state.service.profile,
        "policy": state.service.default_policy,
        "auth_required": state.service.settings.api_key is not None,
        "max_bytes": state.service.settings.max_bytes,
        "timeout_s": state.service.settings.timeout,
    }


@meta_router.get("/categories", summary="canonical identifier categories")
async def categories(state: State) -> dict[str, Any]:
    return {"categories": state.service.categories}


# --- languages and policies --------------------------------------------------------------------


@catalogue_router.get("/languages", summary="supported languages (lang may also be auto)")
async def list_languages(state: State) -> dict[str, Any]:
    return {
        "languages": state.service.language_list(),
        "auto": True,
        "default": state.service.settings.default_lang,
    }


@catalogue_router.get("/policies", summary="policies a redact request may name")
async def list_policies(state: State) -> dict[str, Any]:
    return {"policies": state.service.policy_list(), "default": state.service.default_policy}


# --- detect and redact -------------------------------------------------------------------------


async def deidentify(
    request: Request,
    state: ServeState,
    action: Literal["detect", "redact"],
    query: Mapping[str, str | None],
) -> Response:
    """Both endpoints: parse the request (any input kind), run it in a worker under the time
    limit (language, policy and checks alike), log counts and timing, answer by ``action``."""
    started = time.perf_counter()
    job = await parse_job(request, action, query, max_bytes=state.service.settings.max_bytes)
    out = await state.service.run(job)
    _log_done(job, out, started)
    return respond(job, out)


@deid_router.post(
    "/detect",
    summary="find identifiers: spans with offsets, label, score and source",
    response_model=DetectResponse,
    responses=PROBLEM_RESPONSES,
    openapi_extra=request_body_schema("detect"),
)
async def detect(
    request: Request,
    state: State,
    lang: LangQuery = None,
    format: FormatQuery = None,
    countries: CountriesQuery = None,
) -> Response:
    query = {"lang": lang, "policy": None, "format": format, "countries": countries}
    return await deidentify(request, state, "detect", query)


@deid_router.post(
    "/redact",
    summary="replace identifiers according to a policy",
    response_model=RedactResponse,
    responses=PROBLEM_RESPONSES,
    openapi_extra=request_body_schema("redact"),
)
async def redact(
    request: Request,
    state: State,
    lang: LangQuery = None,
    policy: PolicyQuery = None,
    format: FormatQuery = None,
    countries: CountriesQuery = None,
) -> Response:
    query = {"lang": lang, "policy": policy, "format": format, "countries": countries}
    return await deidentify(request, state, "redact", query)


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
