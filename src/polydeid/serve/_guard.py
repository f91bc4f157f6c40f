"""The outermost ASGI middleware: API key, request rate, body size and body time limits,
security headers, and a clean 500 problem for anything unexpected."""

from __future__ import annotations

import asyncio
import hmac
import logging
import math
import traceback
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

from polydeid.serve._limits import RateLimiter, client_key
from polydeid.serve._problems import API_KEY_HEADER, Problem, too_large, unauthorized

logger = logging.getLogger("polydeid.serve")

#: Paths served without an API key: the health check and the web page (its files hold no data).
PUBLIC_PATHS = frozenset({"/", "/health", "/favicon.ico"})
PUBLIC_PREFIXES = ("/static/",)

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

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


class Guard:
    """Outermost middleware: API key (constant-time), request rate per client (429), body size
    (413) and the time its body may take (408), security headers, and a 500 problem for
    anything unexpected (logged by type and code location, never message)."""

    def __init__(
        self,
        app: Any,
        *,
        api_key: str | None,
        max_bytes: int,
        rate_limit: float | None = None,
        rate_burst: int = 10,
        body_timeout: float = 30.0,
    ) -> None:
        self.app = app
        self.api_key = api_key.encode("utf-8") if api_key else None
        self.max_bytes = max_bytes
        self.limiter = RateLimiter(rate_limit, rate_burst) if rate_limit else None
        self.body_timeout = body_timeout

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
        if self.limiter is not None and not _public(scope.get("path", "")):
            key = client_key(headers.get(API_KEY_HEADER.lower()), scope.get("client"))
            wait = self.limiter.take(key)
            if wait > 0:
                problem = rate_limited(math.ceil(wait))
                await _send_problem(problem, scope, receive, send_with_headers)
                return
        length = headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > self.max_bytes):
            await _send_problem(too_large(self.max_bytes), scope, receive, send_with_headers)
            return
        received = 0
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.body_timeout
        body_done = False

        async def limited_receive() -> Message:
            nonlocal received, body_done
            if body_done:
                return await receive()
            try:
                message = await asyncio.wait_for(receive(), max(0.0, deadline - loop.time()))
            except TimeoutError:
                raise body_too_slow(self.body_timeout) from None
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    raise too_large(self.max_bytes)
                body_done = not message.get("more_body", False)
            else:
                body_done = True
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


def rate_limited(retry_after: int) -> Problem:
    return Problem(
        429,
        "PD909",
        "rate-limited",
        "Too many requests",
        "this client sent more requests than the service's rate limit allows",
        headers={"Retry-After": str(max(1, retry_after))},
    )


def body_too_slow(limit: float) -> Problem:
    return Problem(
        408,
        "PD910",
        "body-timeout",
        "Request body too slow",
        f"the request body did not arrive within {limit:g} s",
        headers={"Connection": "close"},
    )


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
