"""CPython's cyclic garbage collector, paused while a long text is read or rewritten.

Reading a long segment creates one span per identifier, and rewriting it one replacement per
span; all of them live until the call returns. While they accumulate, the collector's full
collections traverse them again and again, yet the rules, resolution and the transform create
no reference cycles (tested), so those collections free nothing (their cost is in
``benchmarks/results/adversarial.md``). :func:`collector_paused` turns automatic collection
off for the call and back on after it; cycles that anything else creates meanwhile are
collected after it.

Overlapping callers (threads of the service) share one pause: the collector is enabled again
when the last of them leaves, and only if it was enabled when the first came (a process that
turned it off keeps it off). A pause that overlapping callers hold longer than
:data:`MAX_PAUSE_S` runs one collection of the young generations as a caller leaves, so that
other threads' cyclic garbage cannot pile up without bound.

:func:`freeze_loaded` is for the processes polydeid owns: their loaded state stays out of
every later full collection.
"""

from __future__ import annotations

import gc
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

#: Seconds a pause shared by overlapping callers lasts before a leaving caller collects.
MAX_PAUSE_S = 10.0

_lock = threading.Lock()
_depth = 0  # callers inside the pause
_owned = False  # whether the pause turned the collector off (and turns it back on)
_since = 0.0  # when the pause began, or when it last collected


@contextmanager
def collector_paused(active: bool = True) -> Iterator[None]:
    """Automatic cyclic collection off inside the block (nothing changes if not ``active``)."""
    global _depth, _owned, _since
    if not active:
        yield
        return
    with _lock:
        if _depth == 0:
            _owned = gc.isenabled()
            if _owned:
                gc.disable()
            _since = time.monotonic()
        _depth += 1
    try:
        yield
    finally:
        collect = False
        with _lock:
            _depth -= 1
            if _depth == 0:
                if _owned:
                    gc.enable()
                _owned = False
            elif _owned and time.monotonic() - _since > MAX_PAUSE_S:
                collect = True
                _since = time.monotonic()
        if collect:
            gc.collect(1)


def freeze_loaded() -> None:
    """Collect once, then move everything alive into the collector's permanent generation:
    for a process polydeid owns (a batch worker, the service) once its de-identifier is
    built. The loaded model, tables and patterns live as long as the process, and every
    later full collection no longer traverses them (`benchmarks/results/speed_profile.md`
    times a full collection before and after). The library never calls it: what a caller's
    process keeps is its own."""
    gc.collect()
    gc.freeze()
