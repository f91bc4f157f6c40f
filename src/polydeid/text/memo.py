"""What rules read from a text once and share, kept only while one pipeline call runs.

Several rules read the same thing from a segment's text: its gate words
(:mod:`polydeid.text.gate`), its label ends (:mod:`polydeid.detect.rules.labelled`). Within a
:func:`shared_reading` block (the pipeline opens one around its detectors) the first rule to
ask computes it and the others take it; the block's end drops everything, so no record's text
outlives the call that read it. Outside a block every call computes afresh. The memo is a
context variable: threads and tasks each see their own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

T = TypeVar("T")

_MEMO: ContextVar[dict[tuple[str, str], Any] | None] = ContextVar("polydeid_memo", default=None)


@contextmanager
def shared_reading() -> Iterator[None]:
    """A block within which :func:`remembered` keeps what it computes (nested blocks share
    the outermost one's)."""
    token = _MEMO.set({}) if _MEMO.get() is None else None
    try:
        yield
    finally:
        if token is not None:
            _MEMO.reset(token)


def remembered(kind: str, text: str, compute: Callable[[], T]) -> T:
    """``compute()``, kept by ``kind`` and ``text`` for the rest of the :func:`shared_reading`
    block (computed each time outside one). An exception is raised and nothing is kept."""
    memo = _MEMO.get()
    if memo is None:
        return compute()
    key = (kind, text)
    if key in memo:
        found: T = memo[key]
        return found
    found = memo[key] = compute()
    return found
