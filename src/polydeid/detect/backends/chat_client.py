"""An OpenAI-compatible ``/chat/completions`` client (llama.cpp server, vLLM, Ollama, …).

Shared by the synthetic-document generator (:mod:`polydeid.synth.llm`) and the LLM extractor
(:mod:`polydeid.detect.backends.llm`). Only the standard library is used.

* The API key is read from the environment (``POLYDEID_LLM_API_KEY``) at each request, so that
  it never lands in a command line, a config file or a log line.
* Failures raise :class:`ChatEndpointError`, naming the endpoint's host and the kind of
  failure (timeout, connection, HTTP status, malformed reply) — never the prompt, the reply or
  the server's error body, any of which can hold the document being processed.
* :class:`RetryPolicy` bounds the retries: timeouts, connection errors and 5xx answers are
  retried with exponential backoff; any 4xx answer (bad request, 401/403 authentication, 404
  unknown model) and a malformed 200 answer are not, since sending the same request again
  cannot change them.
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.client import HTTPException
from urllib.parse import urlsplit

from polydeid.core.errors import ChatEndpointError, ConfigError

API_KEY_ENV = "POLYDEID_LLM_API_KEY"
CHAT_PATH = "/chat/completions"


def auth_headers() -> dict[str, str]:
    """The ``Authorization`` header for the key in ``POLYDEID_LLM_API_KEY`` (none if unset)."""
    key = os.environ.get(API_KEY_ENV, "").strip()
    return {"Authorization": f"Bearer {key}"} if key else {}


def chat_url(base_url: str) -> str:
    """The chat-completions URL of an OpenAI-style base URL (``http://host:8080/v1``).

    A URL that already ends in ``/chat/completions`` is returned as it is.
    """
    url = base_url.strip()
    if url.rstrip("/").endswith(CHAT_PATH):
        return url.rstrip("/")
    return url.rstrip("/") + CHAT_PATH


def endpoint_host(url: str) -> str:
    """``host[:port]`` of ``url``, without any user name or password it may carry."""
    parts = urlsplit(url)
    host = parts.hostname or "unknown-host"
    return f"{host}:{parts.port}" if parts.port else host


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """At most ``attempts`` requests; before retry *n* (1-based) wait
    ``min(max_delay, backoff * factor ** (n - 1))`` seconds."""

    attempts: int = 3
    backoff: float = 1.0
    factor: float = 2.0
    max_delay: float = 30.0

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise ConfigError("a retry policy needs at least one attempt")
        if self.backoff < 0 or self.factor < 1 or self.max_delay < 0:
            raise ConfigError("retry backoff must be >= 0 and its factor >= 1")

    def delay(self, retry: int) -> float:
        return min(self.max_delay, self.backoff * self.factor ** (retry - 1))


#: One request, no retry: what the synthetic generator has always done (it counts failures).
NO_RETRY = RetryPolicy(attempts=1, backoff=0.0)


@dataclass(frozen=True, slots=True)
class ChatEndpoint:
    """An OpenAI-compatible chat-completions endpoint.

    ``url`` is the full ``…/chat/completions`` URL (see :func:`chat_url` for a base URL).
    ``max_tokens`` caps the reply when set. ``sleep`` is how retries wait (tests pass a fake).
    """

    url: str
    model: str
    timeout: float = 120.0
    temperature: float = 0.8
    retry: RetryPolicy = NO_RETRY
    max_tokens: int | None = None
    sleep: Callable[[float], None] = field(default=time.sleep, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.url.startswith(("http://", "https://")):
            raise ConfigError("the LLM endpoint must be an http(s) URL")
        if not self.model:
            raise ConfigError("the LLM endpoint needs a model name")
        if self.timeout <= 0:
            raise ConfigError("the LLM endpoint timeout must be positive")

    @classmethod
    def from_base_url(cls, base_url: str, model: str, **options: object) -> ChatEndpoint:
        """The endpoint at ``base_url`` (``http://localhost:11434/v1`` for Ollama)."""
        return cls(chat_url(base_url), model, **options)  # type: ignore[arg-type]

    @property
    def host(self) -> str:
        return endpoint_host(self.url)

    def complete(self, messages: Sequence[dict[str, str]], *, seed: int | None = None) -> str:
        """The assistant's reply to ``messages``; retried as :attr:`retry` says."""
        body: dict[str, object] = {
            "model": self.model,
            "messages": list(messages),
            "temperature": self.temperature,
        }
        if seed is not None:
            body["seed"] = seed
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        data = json.dumps(body).encode("utf-8")
        attempt = 0
        while True:
            attempt += 1
            try:
                return self._post(data)
            except ChatEndpointError as exc:
                exc.attempts = attempt
                if not exc.retryable or attempt >= self.retry.attempts:
                    if attempt > 1:
                        exc.message = f"{exc.message} (after {attempt} attempts)"
                        exc.args = (str(exc),)
                    raise
            self.sleep(self.retry.delay(attempt))

    def _post(self, data: bytes) -> str:
        request = urllib.request.Request(
            self.url,
            data=data,
            headers={"Content-Type": "application/json", **auth_headers()},
            method="POST",
        )
        where = f"LLM endpoint {self.host}"
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                raw = response.read()
        except urllib.error.HTTPError as exc:
            exc.close()
            hint = " (check POLYDEID_LLM_API_KEY)" if exc.code in (401, 403) else ""
            raise ChatEndpointError(
                f"{where} answered HTTP {exc.code}{hint}", kind="http", status=exc.code
            ) from None
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, TimeoutError):
                raise ChatEndpointError(
                    f"{where} timed out after {self.timeout:g} s", kind="timeout"
                ) from None
            raise ChatEndpointError(
                f"{where} unreachable ({type(exc.reason).__name__})", kind="connection"
            ) from None
        except TimeoutError:
            raise ChatEndpointError(
                f"{where} timed out after {self.timeout:g} s", kind="timeout"
            ) from None
        except (OSError, HTTPException) as exc:
            raise ChatEndpointError(
                f"{where} connection failed ({type(exc).__name__})", kind="connection"
            ) from None
        try:
            reply = json.loads(raw.decode("utf-8"))
            content = reply["choices"][0]["message"]["content"]
        except (UnicodeDecodeError, ValueError, KeyError, IndexError, TypeError) as exc:
            raise ChatEndpointError(
                f"{where} sent a reply that is not a chat completion ({type(exc).__name__})",
                kind="reply",
            ) from None
        if content is None:
            return ""
        if not isinstance(content, str):
            raise ChatEndpointError(
                f"{where} sent a reply whose content is not text", kind="reply"
            ) from None
        return content
