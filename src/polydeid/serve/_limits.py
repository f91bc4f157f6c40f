"""Per-client request rate: a token bucket per key (the API key a request sends, or its client
address when the service has none)."""

from __future__ import annotations

import hashlib
import threading
import time
from collections import OrderedDict
from collections.abc import Callable

#: Clients tracked at once; the least recently seen are forgotten beyond this (a forgotten
#: client starts again with a full bucket).
MAX_CLIENTS = 10_000


class RateLimiter:
    """``rate`` requests per second per key, up to ``burst`` at once."""

    def __init__(
        self, rate: float, burst: int, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if not rate > 0 or burst < 1:
            raise ValueError("a rate limit needs a positive rate and a burst of at least 1")
        self.rate = rate
        self.burst = float(burst)
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()
        self._lock = threading.Lock()
        self._now = clock

    def take(self, key: str) -> float:
        """Spend one token of ``key``'s bucket: 0.0 if it had one, else the seconds until it
        will have one (nothing spent)."""
        now = self._now()
        with self._lock:
            tokens, seen = self._buckets.pop(key, (self.burst, now))
            tokens = min(self.burst, tokens + (now - seen) * self.rate)
            wait = 0.0
            if tokens >= 1.0:
                tokens -= 1.0
            else:
                wait = (1.0 - tokens) / self.rate
            self._buckets[key] = (tokens, now)
            while len(self._buckets) > MAX_CLIENTS:
                self._buckets.popitem(last=False)
            return wait


def client_key(api_key: bytes | None, client: tuple[str, int] | list[object] | None) -> str:
    """The rate limit's key: a digest of the API key sent (never the key itself), or the
    client's address."""
    if api_key:
        return "key:" + hashlib.sha256(api_key).hexdigest()[:32]
    host = client[0] if client else "?"
    return f"addr:{host}"
