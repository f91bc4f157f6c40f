"""``polydeid serve``: run the HTTP service and its web page with uvicorn.

FastAPI and uvicorn are imported only when the command runs. The API key comes from
``--api-key-file`` or the ``POLYDEID_API_KEY`` environment variable (never from the command
line, where other users of the machine could read it); the secret key for keyed policies
from ``--key-file`` or ``POLYDEID_KEY_FILE``.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path
from typing import Any

from polydeid.core.collector import freeze_loaded
from polydeid.core.errors import ConfigError

API_KEY_ENV = "POLYDEID_API_KEY"
KEY_FILE_ENV = "POLYDEID_KEY_FILE"

logger = logging.getLogger("polydeid.serve")


def register(sub: Any) -> None:
    p = sub.add_parser("serve", help="run the HTTP service and its web page")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    p.add_argument(
        "--profile",
        default="default",
        help="detector profile: default (rules + tagger) or rules (default: default)",
    )
    p.add_argument(
        "--policy",
        default="tag",
        help="default policy: a shipped name or a TOML file (default: tag); requests may "
        "choose another from GET /policies",
    )
    p.add_argument("--key-file", default=None, help=f"secret key file (or {KEY_FILE_ENV})")
    p.add_argument(
        "--api-key-file",
        default=None,
        help=f"file holding the API key clients send as X-API-Key (or {API_KEY_ENV})",
    )
    p.add_argument(
        "--max-bytes",
        type=int,
        default=1_000_000,
        help="largest request body in bytes (default 1000000)",
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=30.0,
        help="processing time limit per request in seconds (default 30)",
    )
    p.add_argument(
        "--threads", type=int, default=2, help="worker threads for detection (default 2)"
    )
    p.add_argument(
        "--cpu-budget",
        type=float,
        default=30.0,
        help="CPU seconds one request's detection may use; past it, or past --timeout, the "
        "work stops (default 30)",
    )
    p.add_argument(
        "--max-queue",
        type=int,
        default=16,
        help="requests that may wait for a busy worker; more get 503 with Retry-After (default 16)",
    )
    p.add_argument(
        "--batch-max",
        type=int,
        default=1,
        help="text requests that waited for a busy worker and are detected together, at most "
        "(their tagger windows share batches, which pays where the tagger runs on a GPU; "
        "default 1: each alone)",
    )
    p.add_argument(
        "--rate-limit",
        type=float,
        default=None,
        help="requests per second per client (its API key, or its address without one); "
        "more get 429 with Retry-After (default: no limit)",
    )
    p.add_argument(
        "--rate-burst",
        type=int,
        default=10,
        help="requests a client may send at once before --rate-limit applies (default 10)",
    )
    p.add_argument(
        "--header-timeout",
        type=float,
        default=10.0,
        help="seconds a connection may take to send a request's headers (default 10)",
    )
    p.add_argument(
        "--body-timeout",
        type=float,
        default=30.0,
        help="seconds a request may take to send its body; then 408 (default 30)",
    )
    p.add_argument(
        "--vault",
        default=None,
        help="surrogate vault shared with batch runs: a SQLite file or a postgresql:// URL",
    )
    p.add_argument(
        "--log-level",
        choices=("critical", "error", "warning", "info", "debug"),
        default="info",
        help="log level (default info); logs never hold request text",
    )
    p.set_defaults(func=cmd_serve)


def _api_key(args: argparse.Namespace) -> str | None:
    if args.api_key_file:
        path = Path(args.api_key_file)
        try:
            key = path.read_text("utf-8").strip()
        except (OSError, UnicodeDecodeError) as exc:
            reason = getattr(exc, "strerror", None) or "not UTF-8 text"
            raise ConfigError(
                f"cannot read the API key file ({reason})", location=str(path)
            ) from None
        if not key:
            raise ConfigError("the API key file is empty", location=str(path))
        return key
    key = os.environ.get(API_KEY_ENV, "").strip()
    return key or None


def settings_from_args(args: argparse.Namespace) -> Any:
    """The service's :class:`~polydeid.serve.app.Settings` for parsed arguments."""
    try:
        from polydeid.serve.app import Settings
    except ModuleNotFoundError as exc:
        raise ConfigError(
            f"polydeid serve needs the serve extra ({exc.name} is missing): "
            "pip install 'polydeid[serve]'"
        ) from None
    if not 0 < args.port < 65536:
        raise ConfigError("--port must be between 1 and 65535")
    return Settings(
        profile=args.profile,
        policy=args.policy,
        key_file=args.key_file or os.environ.get(KEY_FILE_ENV) or None,
        api_key=_api_key(args),
        max_bytes=args.max_bytes,
        timeout=args.timeout,
        workers=args.threads,
        vault=args.vault,
        cpu_budget=args.cpu_budget,
        max_queue=args.max_queue,
        batch_max=args.batch_max,
        rate_limit=args.rate_limit,
        rate_burst=args.rate_burst,
        header_timeout=args.header_timeout,
        body_timeout=args.body_timeout,
    )


def cmd_serve(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    import uvicorn

    from polydeid.serve._server import is_loopback, server_config
    from polydeid.serve.app import create_app

    app = create_app(settings)  # detectors load now: configuration errors exit 2 here
    freeze_loaded()  # what is loaded now stays out of every later full collection
    auth = "on" if settings.api_key else "off"
    print(
        f"polydeid: serving on http://{_url_host(args.host)}:{args.port}/ "
        f"(profile {settings.profile}, policy {app.state.serve.service.default_policy}, "
        f"API key {auth}, max {settings.max_bytes} bytes, timeout {settings.timeout:g} s)",
        file=sys.stderr,
    )
    config = server_config(
        app,
        host=args.host,
        port=args.port,
        log_level=args.log_level,
        header_timeout=settings.header_timeout,
    )  # logging is configured from here on
    if not is_loopback(args.host) and not settings.api_key:
        logger.warning(
            "listening beyond this machine without an API key: anyone who reaches the port "
            "can use the service (set --api-key-file or %s)",
            API_KEY_ENV,
        )
    server = uvicorn.Server(config)
    server.run()
    if not server.started:  # uvicorn could not bind or start
        raise ConfigError(
            f"the server could not start on {args.host}:{args.port} (see the log above)"
        )
    return 0


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host
