"""Giving freed heap memory back to the system.

The C allocator of glibc keeps the memory of freed large buffers (the tagger's activations:
tens of MB a batch) in the process and reuses it for later ones, so a long-running process's
resident set climbs with the largest batches it has seen and stays there even while it is
idle. :func:`release` asks the allocator to return the free pages it holds
(``malloc_trim``); :class:`Releaser` does so once enough work has passed since the last time,
so that the call costs nothing next to the work that freed the memory. Where the C library is
not glibc, both do nothing.
"""

from __future__ import annotations

import ctypes
from functools import cache
from typing import Any


@cache
def _malloc_trim() -> Any:
    """glibc's ``malloc_trim``, or ``None`` where the C library has none."""
    try:  # the symbols the process has loaded, the C library's among them
        return ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None


def release() -> bool:
    """Return the allocator's free pages to the system; whether any were returned (False
    where the C library cannot)."""
    trim = _malloc_trim()
    return bool(trim(0)) if trim is not None else False


class Releaser:
    """Calls :func:`release` once ``every`` units of work (tokens, bytes…) have been
    :meth:`done` since the last call."""

    def __init__(self, every: int) -> None:
        if every <= 0:
            raise ValueError("every must be positive")
        self.every = every
        self._pending = 0

    def done(self, work: int) -> bool:
        """Count ``work`` units; release when they reach ``every``. Whether it released."""
        self._pending += work
        if self._pending < self.every:
            return False
        self._pending = 0
        release()
        return True
