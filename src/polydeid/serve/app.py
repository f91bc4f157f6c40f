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
    PD908 queue full (503, Retry-After)  PD909 request rate limit (429, Retry-After)
    PD910 request body too slow (408)    PD306 CPU budget spent (503)

Nothing here logs text: log lines carry the endpoint, the kind of input, the language, span
counts and timings. An unexpected exception is logged by its type and code locations only.

Layout: the routes live on routers by concern in :mod:`._routes` (they reach the service through
:class:`ServeState`, injected); requests are parsed in :mod:`._requests`, run by the
:class:`Service` of :mod:`._service`, answered as problems by :mod:`._problems`, and guarded by
the middleware of :mod:`._guard`; the models and OpenAPI extras are in :mod:`._models`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

from polydeid.core.version import __version__
from polydeid.serve._guard import Guard
from polydeid.serve._problems import add_problem_handlers
from polydeid.serve._routes import ROUTERS, STATIC_DIR, ServeState
from polydeid.serve._service import Service, Settings

__all__ = ["Settings", "create_app"]


def create_app(settings: Settings | None = None) -> FastAPI:
    """The service's FastAPI application; the detectors are built now (once)."""
    settings = settings or Settings()
    service = Service(settings)
    version = __version__
    app = FastAPI(
        title="polydeid",
        version=version,
        description="De-identify clinical text and structured records. Errors are RFC 9457 "
        "problem documents; with an API key configured, send it in the X-API-Key header.",
        docs_url=None,  # the Swagger page loads assets from a CDN: not served
        redoc_url=None,
        lifespan=_lifespan,
    )
    app.state.serve = ServeState(service=service, version=version)
    app.add_middleware(
        Guard,
        api_key=settings.api_key,
        max_bytes=settings.max_bytes,
        rate_limit=settings.rate_limit,
        rate_burst=settings.rate_burst,
        body_timeout=settings.body_timeout,
    )
    add_problem_handlers(app)
    for router in ROUTERS:
        app.include_router(router)
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    return app


@asynccontextmanager
async def _lifespan(app: FastAPI) -> AsyncIterator[None]:
    yield
    app.state.serve.service.close()
