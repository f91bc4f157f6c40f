"""Micro-batching: text requests that wait for a worker are detected together.

Each text request joins a queue and asks the thread pool for one drain; a drain takes the
requests waiting at that moment (at most ``batch_max``, and :data:`BATCH_CHARS` of text) and
reads them with one :meth:`~polydeid.api.Deidentifier.detect_together` call, so the tagger's
windows of every request share its batches. Nothing waits for a batch to fill: a request that
finds a worker free runs at once, alone; batches form only while every worker is busy. Off by
default (``batch_max`` 1: the service then runs each job alone, without this queue): on a
2-core CPU the encoder reads a batch of windows no faster than the same windows one by one,
and batches lengthened the tail (``serve_load.md``); where the tagger runs on a GPU, batches
are what keep it busy.

A batch never makes a request weaker or another request's problem:

- each request keeps its own language, policy, output and errors (the work before and after
  detection runs per request, under the request's own :class:`~polydeid.core.budget.WorkBudget`);
- the batch's detection runs under a budget of its own (the CPU seconds of one request,
  cancelled once every request in it is given up); where it fails for any reason, each
  request is detected again alone under its own budget, so a poison request fails alone;
- a request given up while it waits is never started.
"""

from __future__ import annotations

import threading
from collections import Counter, deque
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, Future
from dataclasses import dataclass
from typing import Any

from polydeid.api import Deidentifier
from polydeid.core.budget import WorkBudget, limited
from polydeid.core.errors import WorkLimitError
from polydeid.core.segments import Segment
from polydeid.core.spans import Span

#: Characters of text one batch holds at most (a longer request is read alone).
BATCH_CHARS = 64_000


class BatchBudget(WorkBudget):
    """The budget of one batch's detection: ``cpu_seconds`` for the whole batch, cancelled
    once every member's own budget is cancelled (its requests were all given up)."""

    __slots__ = ("members",)

    def __init__(self, members: Sequence[WorkBudget], *, cpu_seconds: float | None) -> None:
        super().__init__(cpu_seconds=cpu_seconds)
        self.members = tuple(members)

    def check(self) -> None:
        if self.members and all(member.cancelled for member in self.members):
            self.cancel()
        super().check()


@dataclass(frozen=True, slots=True)
class TextWork:
    """How the service reads one text request, step by step (each may raise)."""

    #: The request's Deidentifier (its policy) and its segment (language, countries).
    prepare: Callable[[], tuple[Deidentifier, Segment]]
    #: The response, from the segment's spans.
    finish: Callable[[Deidentifier, Segment, tuple[Span, ...]], dict[str, Any]]
    chars: int


@dataclass(frozen=True, slots=True)
class _Waiting:
    work: TextWork
    budget: WorkBudget
    future: Future[dict[str, Any]]


class Batcher:
    """The queue of text requests and the drains that detect them together."""

    def __init__(self, executor: Executor, *, batch_max: int, cpu_budget: float) -> None:
        self.executor = executor
        self.batch_max = batch_max
        self.cpu_budget = cpu_budget
        self._queue: deque[_Waiting] = deque()
        self._lock = threading.Lock()
        #: How many batches of each size were detected together (a request alone is not
        #: counted); bounded by ``batch_max`` keys however long the service runs.
        self.sizes: Counter[int] = Counter()

    def submit(self, work: TextWork, budget: WorkBudget) -> Future[dict[str, Any]]:
        """Queue one request; its future holds the response or the request's error. The
        future is cancelled (and the request never started) if it is cancelled while it
        waits."""
        future: Future[dict[str, Any]] = Future()
        with self._lock:
            self._queue.append(_Waiting(work, budget, future))
        self.executor.submit(self._drain)
        return future

    def cancel_waiting(self) -> int:
        """Cancel every request still waiting (the service is closing); how many there were."""
        with self._lock:
            waiting = list(self._queue)
            self._queue.clear()
        return sum(w.future.cancel() for w in waiting)

    def _take(self) -> list[_Waiting]:
        """The requests waiting now, up to the bounds, each marked running (a cancelled one
        is dropped)."""
        taken: list[_Waiting] = []
        chars = 0
        with self._lock:
            while self._queue and len(taken) < self.batch_max:
                nxt = self._queue[0]
                if taken and chars + nxt.work.chars > BATCH_CHARS:
                    break
                self._queue.popleft()
                if nxt.future.set_running_or_notify_cancel():
                    taken.append(nxt)
                    chars += nxt.work.chars
        return taken

    def _drain(self) -> None:
        taken = self._take()
        if not taken:
            return  # an earlier drain took this request
        prepared: list[tuple[_Waiting, Deidentifier, Segment]] = []
        for waiting in taken:
            try:
                with limited(waiting.budget):
                    deid, segment = waiting.work.prepare()
            except Exception as exc:  # the request's own error, answered to it alone
                waiting.future.set_exception(exc)
                continue
            prepared.append((waiting, deid, segment))
        groups: dict[int, list[tuple[_Waiting, Deidentifier, Segment]]] = {}
        for item in prepared:
            groups.setdefault(id(item[1]), []).append(item)
        for group in groups.values():
            self._detect_group(group)

    def _detect_group(self, group: list[tuple[_Waiting, Deidentifier, Segment]]) -> None:
        """Detect the requests of one Deidentifier together, then finish each; where the
        shared detection fails, detect each alone."""
        deid = group[0][1]
        found: Sequence[tuple[Span, ...]] | None = None
        if len(group) > 1:
            budget = BatchBudget([w.budget for w, _, _ in group], cpu_seconds=self.cpu_budget)
            try:
                with limited(budget):  # None where reading them together fails
                    found = deid.detect_together([segment for _, _, segment in group])
            except WorkLimitError:  # every request was given up before the batch began
                found = None
            if found is not None:
                with self._lock:
                    self.sizes[len(group)] += 1
        for k, (waiting, _, segment) in enumerate(group):
            try:
                with limited(waiting.budget):
                    spans = deid.detect_segment(segment) if found is None else found[k]
                    result = waiting.work.finish(deid, segment, spans)
            except Exception as exc:
                waiting.future.set_exception(exc)
                continue
            waiting.future.set_result(result)
