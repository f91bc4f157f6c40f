"""A unit of work's limits, checked where the work can stop.

:func:`limited` makes a :class:`WorkBudget` current for the calling thread (a context variable):
the CPU seconds that thread may spend from now on, and a flag another thread may set with
:meth:`WorkBudget.cancel`. :func:`checkpoint` raises :class:`WorkLimitError` once either is
reached; the detection pipeline calls it between detectors and passes, and the guarded regex
scanner every few matches, so a cancelled or over-budget request stops within one such step.
Without a current budget :func:`checkpoint` does nothing.

CPU time is the thread's own (:func:`time.thread_time`): waiting for the processor or the GIL
under load does not count, only the work done.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from polydeid.core.errors import WorkLimitError

_CURRENT: ContextVar[WorkBudget | None] = ContextVar("polydeid_work_budget", default=None)


class WorkBudget:
    """CPU seconds for one unit of work (``None``: no CPU limit) and a cancellation flag."""

    __slots__ = ("_cancelled", "_started", "cpu_seconds")

    def __init__(self, *, cpu_seconds: float | None = None) -> None:
        if cpu_seconds is not None and not cpu_seconds > 0:
            raise ValueError("a CPU budget must be a positive number of seconds")
        self.cpu_seconds = cpu_seconds
        self._cancelled = threading.Event()
        self._started: float | None = None

    def __repr__(self) -> str:
        return f"WorkBudget(cpu_seconds={self.cpu_seconds}, cancelled={self.cancelled})"

    @property
    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    def cancel(self) -> None:
        """Ask the work to stop at its next checkpoint (any thread may call this)."""
        self._cancelled.set()

    def used(self) -> float:
        """CPU seconds the working thread has spent since :func:`limited` began (0 before)."""
        return 0.0 if self._started is None else time.thread_time() - self._started

    def check(self) -> None:
        """Raise :class:`WorkLimitError` when cancelled or past the CPU budget."""
        if self._cancelled.is_set():
            raise WorkLimitError("the work was cancelled (its time limit was reached)")
        if self.cpu_seconds is not None and self.used() > self.cpu_seconds:
            raise WorkLimitError(f"the work ran past its CPU budget of {self.cpu_seconds:g} s")


@contextmanager
def limited(budget: WorkBudget) -> Iterator[WorkBudget]:
    """Make ``budget`` current in this thread for the block; its CPU clock starts now."""
    budget._started = time.thread_time()
    token = _CURRENT.set(budget)
    try:
        budget.check()  # cancelled before the work began
        yield budget
    finally:
        _CURRENT.reset(token)


def current() -> WorkBudget | None:
    """The budget of the work running in this thread, if any."""
    return _CURRENT.get()


def checkpoint() -> None:
    """Stop here (raise :class:`WorkLimitError`) if the current work is cancelled or over its
    CPU budget; a no-op outside :func:`limited`."""
    budget = _CURRENT.get()
    if budget is not None:
        budget.check()
