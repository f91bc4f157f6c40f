"""How uvicorn runs the service: an HTTP protocol that closes connections whose request headers
do not arrive in time, and an access log that writes paths without their query strings.

uvicorn itself bounds the size of request headers (``h11_max_incomplete_event_size``) and the
idle time between requests (``timeout_keep_alive``), but not the time headers take to arrive:
a client that sends one byte now and then would hold its connection for ever. The body's
time limit is the :class:`~polydeid.serve._guard.Guard`'s.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
from typing import Any

logger = logging.getLogger("polydeid.serve")

#: Largest request line and headers, in bytes (uvicorn's h11 limit).
MAX_HEADER_BYTES = 16 * 1024
#: Seconds an idle keep-alive connection stays open.
KEEP_ALIVE_S = 5


def header_deadline_protocol(header_timeout: float) -> type[asyncio.Protocol]:
    """uvicorn's h11 protocol, closing a connection whose next request's headers are not all
    there ``header_timeout`` seconds after it opened or after its last response."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class HeaderDeadlineProtocol(H11Protocol):
        _header_timer: asyncio.TimerHandle | None = None

        def _arm(self) -> None:
            self._disarm()
            self._header_timer = self.loop.call_later(header_timeout, self._headers_late)

        def _disarm(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _headers_late(self) -> None:
            self._header_timer = None
            if not self.transport.is_closing():
                logger.info("closed a connection: request headers not received in time")
                self.transport.close()

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            cycle = self.cycle
            super().data_received(data)
            if self.cycle is not cycle:  # a request's headers are in: its cycle began
                self._disarm()

        def on_response_complete(self) -> None:
            cycle = self.cycle
            super().on_response_complete()
            if self.cycle is cycle and not self.transport.is_closing():
                self._arm()  # waiting for the next request's headers

    return HeaderDeadlineProtocol


class PathOnly(logging.Filter):
    """uvicorn's access log with the request's path instead of its path and query string
    (query parameters such as ``lang`` are the request's own values)."""

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if isinstance(args, tuple) and len(args) == 5 and isinstance(args[2], str):
            record.args = (args[0], args[1], args[2].split("?", 1)[0], args[3], args[4])
        return True


def is_loopback(host: str) -> bool:
    """Whether ``host`` names this machine only (``localhost``, 127.0.0.0/8, ``::1``)."""
    if host.strip().lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def server_config(
    app: Any,
    *,
    host: str,
    port: int,
    log_level: str,
    header_timeout: float,
    configure_logging: bool = True,
) -> Any:
    """The ``uvicorn.Config`` of ``polydeid serve``; unless ``configure_logging`` is false,
    building it configures logging (:func:`log_config`)."""
    import uvicorn

    return uvicorn.Config(
        app,
        host=host,
        port=port,
        http=header_deadline_protocol(header_timeout),
        h11_max_incomplete_event_size=MAX_HEADER_BYTES,
        timeout_keep_alive=KEEP_ALIVE_S,
        log_level=log_level,
        log_config=log_config(log_level) if configure_logging else None,
        access_log=True,  # method, path and status: never bodies or query strings
        server_header=False,
        proxy_headers=False,
    )


def log_config(level: str) -> dict[str, Any]:
    """uvicorn's logging setup, with polydeid's own loggers on its default handler and the
    access log's query strings left out."""
    import copy

    from uvicorn.config import LOGGING_CONFIG

    config = copy.deepcopy(LOGGING_CONFIG)
    config["loggers"]["polydeid"] = {
        "handlers": ["default"],
        "level": level.upper(),
        "propagate": False,
    }
    config.setdefault("filters", {})["path_only"] = {"()": PathOnly}
    config["handlers"]["access"]["filters"] = ["path_only"]
    return config
