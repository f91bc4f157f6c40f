"""Micro-batching in the service: text requests that wait for a worker are detected together,
each answered as if it ran alone; a failing request fails alone; a request given up while it
waits never starts."""

from __future__ import annotations

import asyncio
import dataclasses
import threading
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import Executor, Future
from typing import Any

import httpx
import pytest

from polydeid.core.budget import WorkBudget, current
from polydeid.core.errors import ConfigError, RuleTimeoutError, WorkLimitError
from polydeid.core.segments import Segment
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category, Fact
from polydeid.serve._batching import BATCH_CHARS, BatchBudget, Batcher, TextWork
from polydeid.serve._service import Job, Service, Settings
from polydeid.serve.app import create_app


class MarkerDetector:
    """Finds the invented name ``Zed`` as a person; reads several segments at once; holds its
    worker on ``HOLD`` until released and fails on ``POISON`` (as a runaway rule does)."""

    id = "test.marker.v1"
    languages: frozenset[str] = frozenset()
    labels: frozenset[Category | Fact] = frozenset({Category.PERSON})

    def __init__(self) -> None:
        self.batches: list[int] = []  # segments per detect_many call
        self.seen: list[str] = []
        self.release = threading.Event()
        self.entered = threading.Semaphore(0)

    def _find(self, segment: Segment) -> list[Span]:
        self.seen.append(segment.text)
        if "HOLD" in segment.text:
            self.entered.release()
            self.release.wait(20)
        if "POISON" in segment.text:
            raise RuleTimeoutError("rule test.marker.v1 exceeded its time")
        at = segment.text.find("Zed")
        return [] if at < 0 else [Span(at, at + 3, Category.PERSON, "test:marker", 0.9)]

    def detect(self, segment: Segment) -> list[Span]:
        return self._find(segment)

    def detect_many(self, segments: Sequence[Segment]) -> list[list[Span]]:
        self.batches.append(len(segments))
        return [self._find(segment) for segment in segments]


class ManualExecutor(Executor):
    """Keeps what is submitted; :meth:`run_next` runs it (batches formed deterministically)."""

    def __init__(self) -> None:
        self.calls: list[Callable[[], Any]] = []

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        self.calls.append(lambda: fn(*args, **kwargs))
        return Future()

    def run_next(self) -> None:
        self.calls.pop(0)()


def _text(k: int) -> str:
    return "x" * k + " Zed was seen today."


def _manual(service: Service, batch_max: int | None = None) -> ManualExecutor:
    """The service's batcher, with its settings, on a :class:`ManualExecutor`."""
    executor = ManualExecutor()
    settings = service.settings
    service.batcher = Batcher(
        executor,
        batch_max=settings.batch_max if batch_max is None else batch_max,
        cpu_budget=settings.cpu_budget,
    )
    return executor


def _submit(service: Service, job: Job, budget: WorkBudget | None = None) -> Future[Any]:
    return service.batcher.submit(service._text_work(job), budget or WorkBudget())


def test_waiting_requests_are_detected_together_each_with_its_own_answer() -> None:
    marker = MarkerDetector()
    service = Service(Settings(detectors=[marker], batch_max=8))
    executor = _manual(service)
    jobs = [Job("redact" if k % 2 else "detect", "text", text=_text(k)) for k in range(5)]
    futures = [_submit(service, job) for job in jobs]
    executor.run_next()  # the first drain takes all five
    assert marker.batches == [5] and service.batcher.sizes == {5: 1}
    for k, (job, future) in enumerate(zip(jobs, futures, strict=True)):
        assert future.result(timeout=1) == service.execute(job)
        (span,) = future.result()["spans"]
        assert (span["start"], span["end"]) == (k + 1, k + 4)
    executor.run_next()  # the other drains find nothing left
    assert marker.batches == [5] and len(marker.seen) == 5 + 5  # 5 together, 5 by execute()


def test_batch_bounds_requests_and_characters() -> None:
    marker = MarkerDetector()
    service = Service(Settings(detectors=[marker], batch_max=8))
    executor = _manual(service, batch_max=3)
    futures = [_submit(service, Job("detect", "text", text=_text(k))) for k in range(5)]
    executor.run_next()
    executor.run_next()
    assert marker.batches == [3, 2]
    assert all(f.done() for f in futures)
    big = "y" * (BATCH_CHARS - 10) + " Zed"
    futures = [_submit(service, Job("detect", "text", text=t)) for t in (big, _text(1))]
    executor.run_next()  # the long text fills the batch: it is read alone
    assert futures[0].done() and not futures[1].done()
    executor.run_next()
    assert futures[1].result()["spans"][0]["start"] == 2


def test_a_failing_request_fails_alone() -> None:
    marker = MarkerDetector()
    service = Service(Settings(detectors=[marker], batch_max=8))
    executor = _manual(service)
    texts = [_text(1), "POISON " + _text(2), _text(3)]
    futures = [_submit(service, Job("detect", "text", text=t)) for t in texts]
    executor.run_next()
    assert marker.batches == [3]  # tried together, then each alone
    assert futures[0].result()["spans"][0]["start"] == 2
    assert futures[2].result()["spans"][0]["start"] == 4
    with pytest.raises(RuleTimeoutError):
        futures[1].result()
    assert not service.batcher.sizes  # the shared detection did not count as done


def test_a_request_error_before_detection_is_its_own() -> None:
    marker = MarkerDetector()
    service = Service(Settings(detectors=[marker], batch_max=8))
    executor = _manual(service)
    bad = Job("redact", "text", text=_text(1), policy="no-such-policy")
    futures = [_submit(service, job) for job in (bad, Job("redact", "text", text=_text(2)))]
    executor.run_next()
    with pytest.raises(Exception) as caught:
        futures[0].result()
    assert getattr(caught.value, "code", None) == "PD101"
    assert futures[1].result()["spans"][0]["start"] == 3


def test_a_request_given_up_while_waiting_never_starts() -> None:
    marker = MarkerDetector()
    service = Service(Settings(detectors=[marker], batch_max=8))
    executor = _manual(service)
    futures = [_submit(service, Job("detect", "text", text=_text(k))) for k in range(3)]
    assert futures[1].cancel()
    executor.run_next()
    assert marker.batches == [2] and _text(1) not in marker.seen
    assert futures[0].result() and futures[2].result()


def test_requests_given_up_once_taken_are_each_answered() -> None:
    marker = MarkerDetector()
    service = Service(Settings(detectors=[marker], batch_max=8))
    executor = _manual(service)
    futures = []
    for k in range(2):
        budget = WorkBudget()
        work = service._text_work(Job("detect", "text", text=_text(k)))

        def prepare(work: TextWork = work, budget: WorkBudget = budget) -> Any:
            prepared = work.prepare()
            budget.cancel()  # given up (its request timed out) after it was taken
            return prepared

        futures.append(service.batcher.submit(dataclasses.replace(work, prepare=prepare), budget))
    executor.run_next()
    for future in futures:  # each answered, none left pending (the queue's count goes down)
        with pytest.raises(WorkLimitError):
            future.result(timeout=1)
    assert marker.seen == []


def test_closing_the_service_cancels_the_requests_still_waiting() -> None:
    service = Service(Settings(detectors=[MarkerDetector()], batch_max=8))
    executor = _manual(service)
    futures = [_submit(service, Job("detect", "text", text=_text(k))) for k in range(2)]
    service.close()
    assert all(f.cancelled() for f in futures)
    executor.run_next()  # a drain that still runs finds nothing
    assert not service.batcher.sizes


def test_a_batch_stops_once_every_request_in_it_is_given_up() -> None:
    members = [WorkBudget(), WorkBudget()]
    budget = BatchBudget(members, cpu_seconds=None)
    budget.check()
    members[0].cancel()
    budget.check()  # one request still waits for the answer
    members[1].cancel()
    with pytest.raises(WorkLimitError):
        budget.check()


def test_the_shared_detection_runs_under_the_batch_budget() -> None:
    budgets: list[WorkBudget | None] = []

    class Recording(MarkerDetector):
        def detect_many(self, segments: Sequence[Segment]) -> list[list[Span]]:
            budgets.append(current())
            return super().detect_many(segments)

    service = Service(Settings(detectors=[Recording()], cpu_budget=7.0, batch_max=8))
    executor = _manual(service)
    for k in range(2):
        _submit(service, Job("detect", "text", text=_text(k)))
    executor.run_next()
    (budget,) = budgets
    assert isinstance(budget, BatchBudget) and budget.cpu_seconds == 7.0


def test_batch_max_one_reads_each_request_alone() -> None:
    marker = MarkerDetector()
    service = Service(Settings(detectors=[marker]))
    executor = _manual(service)
    futures = [_submit(service, Job("detect", "text", text=_text(k))) for k in range(3)]
    for _ in range(3):
        executor.run_next()
    assert marker.batches == [] and all(f.result()["spans"] for f in futures)
    assert Settings().batch_max == 1  # off by default (serve_load.md: no faster on a CPU)
    with pytest.raises(ConfigError, match="batch-max"):
        Settings(batch_max=0)


def test_rules_answers_are_the_same_together_and_alone() -> None:
    service = Service(Settings(profile="rules", batch_max=8))
    executor = _manual(service)
    jobs = [
        Job("redact", "text", text="Seen on 17 March 2023; call +256 772 918273.", lang="en"),
        Job("detect", "text", text="Paciente de 45 años, DNI 12345678Z.", lang="es"),
        Job("redact", "text", text="Anrufen: 030 12345678, am 3. Mai 2024.", lang="de",
            policy="mask"),
        Job("redact", "text", text="Mgonjwa alionekana 12/03/2024, simu 0712 345678.", lang="sw"),
    ]  # fmt: skip
    futures = [_submit(service, job) for job in jobs]
    executor.run_next()
    assert service.batcher.sizes == {3: 1}  # by policy: tag ×2 with detect; mask alone
    for job, future in zip(jobs, futures, strict=True):
        assert future.result() == service.execute(job)


def _while_held(
    app: Any, marker: MarkerDetector, then: Callable[[httpx.AsyncClient], Awaitable[Any]]
) -> tuple[httpx.Response, Any]:
    """Send a request that holds the one worker (``HOLD``), run ``then`` with the client while
    it is held, release it; the held request's response and what ``then`` returned."""

    async def send() -> tuple[httpx.Response, Any]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            first = asyncio.create_task(client.post("/detect", json={"text": "HOLD"}))
            await asyncio.to_thread(marker.entered.acquire, True, 10)  # the worker is busy
            result = await then(client)
            marker.release.set()
            return await first, result

    try:
        return asyncio.run(send())
    finally:
        marker.release.set()


def test_concurrent_requests_over_http_are_batched_while_the_worker_is_busy() -> None:
    marker = MarkerDetector()
    app = create_app(Settings(detectors=[marker], workers=1, timeout=30, batch_max=8))

    async def queue_four(client: httpx.AsyncClient) -> list[asyncio.Task[httpx.Response]]:
        rest = [
            asyncio.create_task(client.post("/detect", json={"text": _text(k)})) for k in range(4)
        ]
        while app.state.serve.service.pending < 5:  # all four wait
            await asyncio.sleep(0.01)
        return rest

    async def answered(client: httpx.AsyncClient) -> list[httpx.Response]:
        rest = await queue_four(client)
        marker.release.set()
        return [await r for r in rest]

    first, rest = _while_held(app, marker, answered)
    responses = [first, *rest]
    assert [r.status_code for r in responses] == [200] * 5
    assert [r.json()["spans"][0]["start"] for r in responses[1:]] == [1, 2, 3, 4]
    assert marker.batches == [4]
    assert app.state.serve.service.pending == 0


def test_a_request_that_times_out_while_waiting_is_never_read() -> None:
    marker = MarkerDetector()
    app = create_app(Settings(detectors=[marker], workers=1, timeout=0.5, batch_max=8))

    async def waits(client: httpx.AsyncClient) -> httpx.Response:
        return await client.post("/detect", json={"text": "never Zed"})

    first, waiting = _while_held(app, marker, waits)
    assert first.status_code == 503 and waiting.status_code == 503
    assert waiting.json()["code"] == "PD903"
    service = app.state.serve.service
    service.executor.shutdown(wait=True)
    assert "never Zed" not in marker.seen and service.pending == 0
