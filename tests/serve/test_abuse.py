"""The service under load and abuse: work that stops when its request is given up, a CPU budget,
a bounded queue, a rate limit, a regex guard that counts work and not waiting, bounded JSON
bodies, header and body deadlines, and logs and errors without the request's values."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from polydeid.cli import main
from polydeid.core.budget import WorkBudget, checkpoint, current, limited
from polydeid.core.errors import RuleTimeoutError, WorkLimitError
from polydeid.core.segments import Origin, Segment
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category, Fact
from polydeid.detect.pipeline import Pipeline
from polydeid.serve._limits import RateLimiter
from polydeid.serve._problems import PROBLEM_JSON
from polydeid.serve._server import PathOnly, is_loopback, log_config, server_config
from polydeid.serve.app import Settings, create_app
from polydeid.text import patterns
from polydeid.text.patterns import compile_pattern, guarded_finditer

NOTE = "Seen on 17 March 2023 by the team; call +256 772 918273 with the results."


def problem(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status
    assert response.headers["content-type"].startswith(PROBLEM_JSON)
    body = response.json()
    assert body["code"] == code and body["status"] == status
    return body


class BurningDetector:
    """Burns CPU for up to ``seconds`` (wall clock), stopping at the work budget's
    checkpoints as a rule scanning a long segment does; records how its work ended."""

    id = "test.burning.v1"
    languages: frozenset[str] = frozenset()
    labels: frozenset[Category | Fact] = frozenset({Category.PERSON})

    def __init__(self, seconds: float = 20.0) -> None:
        self.seconds = seconds
        self.ended = threading.Event()
        self.outcome: str | None = None
        self.ran_for = 0.0

    def detect(self, segment: Segment) -> list[Span]:
        started = time.perf_counter()
        try:
            while time.perf_counter() - started < self.seconds:
                sum(range(2000))
                checkpoint()
            self.outcome = "finished"
        except WorkLimitError as exc:
            self.outcome = exc.message
            raise
        finally:
            self.ran_for = time.perf_counter() - started
            self.ended.set()
        return []


class BlockingDetector:
    """Holds its worker until released."""

    id = "test.blocking.v1"
    languages: frozenset[str] = frozenset()
    labels: frozenset[Category | Fact] = frozenset({Category.PERSON})

    def __init__(self) -> None:
        self.release = threading.Event()
        self.entered = threading.Semaphore(0)

    def detect(self, segment: Segment) -> list[Span]:
        self.entered.release()
        self.release.wait(20)
        return []


# --- bounded work ---------------------------------------------------------------------------


def test_a_timed_out_request_stops_its_work() -> None:
    burning = BurningDetector(seconds=20.0)
    app = create_app(Settings(detectors=[burning], timeout=0.3, workers=1))
    with TestClient(app) as c:
        problem(c.post("/detect", json={"text": NOTE}), 503, "PD903")
        assert burning.ended.wait(5), "the work went on after its request was given up"
    assert burning.outcome is not None and "cancelled" in burning.outcome
    assert burning.ran_for < 5


def test_a_request_past_its_cpu_budget_stops() -> None:
    burning = BurningDetector(seconds=20.0)
    app = create_app(Settings(detectors=[burning], timeout=30, cpu_budget=0.2, workers=1))
    with TestClient(app) as c:
        started = time.perf_counter()
        body = problem(c.post("/detect", json={"text": NOTE}), 503, "PD306")
        assert time.perf_counter() - started < 10
    assert "CPU budget of 0.2 s" in body["detail"]
    assert burning.outcome is not None and "CPU budget" in burning.outcome


def test_the_pipeline_stops_between_detectors() -> None:
    class Cancelling:
        id = "test.cancelling.v1"
        languages: frozenset[str] = frozenset()
        labels: frozenset[Category | Fact] = frozenset({Category.PERSON})

        def detect(self, segment: Segment) -> list[Span]:
            budget = current()
            assert budget is not None
            budget.cancel()
            return []

    class Never(Cancelling):
        id = "test.never.v1"

        def detect(self, segment: Segment) -> list[Span]:
            raise AssertionError("ran after its work was cancelled")

    pipeline = Pipeline([Cancelling(), Never()])
    segment = Segment(NOTE, "en", Origin(file="<t>"))
    with pytest.raises(WorkLimitError), limited(WorkBudget()):
        pipeline.detect(segment)
    assert current() is None  # the budget ends with its block


def test_the_pipeline_without_a_budget_runs_every_detector() -> None:
    ran: list[str] = []

    class Recording:
        languages: frozenset[str] = frozenset()
        labels: frozenset[Category | Fact] = frozenset({Category.PERSON})

        def __init__(self, name: str) -> None:
            self.id = name

        def detect(self, segment: Segment) -> list[Span]:
            ran.append(self.id)
            return []

    Pipeline([Recording("a"), Recording("b")]).detect(Segment(NOTE, "en", Origin(file="<t>")))
    assert ran == ["a", "b"]


def test_a_guarded_scan_stops_at_a_checkpoint() -> None:
    segment = Segment("a1 " * 20_000, "en", Origin(file="<t>"))
    seen = 0
    budget = WorkBudget()
    with pytest.raises(WorkLimitError), limited(budget):
        for _ in guarded_finditer(compile_pattern(r"a\d"), segment, "test.rule"):
            seen += 1
            budget.cancel()
    assert 1 <= seen <= 64


def test_a_work_budget_counts_cpu_not_sleep() -> None:
    budget = WorkBudget(cpu_seconds=0.05)
    with limited(budget):
        time.sleep(0.2)
        checkpoint()  # slept, did not work: within budget
        started = time.thread_time()
        while time.thread_time() - started < 0.1:
            pass
        with pytest.raises(WorkLimitError, match="CPU budget"):
            checkpoint()


# --- the regex guard under load ---------------------------------------------------------------


@pytest.fixture
def short_pattern_limit(monkeypatch: pytest.MonkeyPatch) -> float:
    monkeypatch.setattr(patterns, "PATTERN_TIMEOUT_S", 0.3)
    return 0.3


@contextlib.contextmanager
def hogging() -> Iterator[None]:
    """A Python thread that competes for the interpreter (as other requests' work does)."""
    stop = threading.Event()

    def spin() -> None:
        while not stop.is_set():
            sum(range(1000))

    thread = threading.Thread(target=spin, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


SCAN = compile_pattern(r"(?<![\w])(?:\w+\s){3}\d")


class _WaitedScans:
    """A pattern whose first scans hit the regex module's wall-clock limit at once, as a
    scan does whose thread waited for the processor instead of working."""

    def __init__(self, waits: int) -> None:
        self.waits = waits
        self.scans = 0

    def finditer(self, text: str, pos: int = 0, **kwargs: object) -> Iterator[object]:
        self.scans += 1
        waited = self.scans <= self.waits

        def scan() -> Iterator[object]:
            if waited:
                raise TimeoutError
            yield from SCAN.finditer(text, pos)

        return scan()


def test_the_regex_guard_resumes_a_scan_that_waited_instead_of_working(
    short_pattern_limit: float,
) -> None:
    segment = Segment("abc def ghi 4 " * 100, "en", Origin(file="<t>"))
    pattern = _WaitedScans(waits=2)
    found = list(guarded_finditer(pattern, segment, "test.rule"))  # type: ignore[arg-type]
    assert len(found) == len(list(SCAN.finditer(segment.text))) > 0
    assert pattern.scans == 3


def test_concurrent_scans_with_a_busy_interpreter_pass(short_pattern_limit: float) -> None:
    # Small enough that a scan passes alone with a wide margin: contention for the
    # interpreter inflates a thread's CPU time a few times over (its wall time far more).
    segment = Segment("abc def ghi " * 8_000, "en", Origin(file="<t>"))
    assert list(guarded_finditer(SCAN, segment, "test.rule")) == []  # warm
    alone = time.thread_time()
    assert list(guarded_finditer(SCAN, segment, "test.rule")) == []
    assert time.thread_time() - alone < short_pattern_limit / 5  # passes alone, with margin
    errors: list[BaseException] = []

    def scan() -> None:
        try:
            list(guarded_finditer(SCAN, segment, "test.rule"))
        except BaseException as exc:
            errors.append(exc)

    with hogging():
        for _ in range(3):  # the scans hold the interpreter: no convoy behind the busy thread
            threads = [threading.Thread(target=scan) for _ in range(4)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
    assert errors == []


def test_the_regex_guard_still_stops_a_runaway_pattern(short_pattern_limit: float) -> None:
    runaway = compile_pattern(r"(a|aa)+b")
    segment = Segment("a" * 60, "en", Origin(file="<t>"))
    started = time.thread_time()
    with pytest.raises(RuleTimeoutError, match=r"test\.rule"):
        list(guarded_finditer(runaway, segment, "test.rule"))
    assert time.thread_time() - started >= short_pattern_limit * 0.9


class ScanningDetector:
    """A rule-like detector: one guarded scan over the whole segment."""

    id = "test.scanning.v1"
    languages: frozenset[str] = frozenset()
    labels: frozenset[Category | Fact] = frozenset({Category.PERSON})

    def detect(self, segment: Segment) -> list[Span]:
        return [
            Span(m.start(), m.end(), Category.PERSON, self.id)
            for m in guarded_finditer(SCAN, segment, self.id)
        ]


def test_concurrent_large_requests_that_pass_alone_pass_together(
    short_pattern_limit: float,
) -> None:
    text = "abc def ghi " * 80_000  # 960 kB
    app = create_app(Settings(detectors=[ScanningDetector()], workers=4, max_bytes=2_000_000))

    async def send_all() -> list[httpx.Response]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            requests = [client.post("/detect", json={"text": text}) for _ in range(4)]
            return await asyncio.gather(*requests)

    started = time.perf_counter()
    responses = asyncio.run(send_all())
    assert [r.status_code for r in responses] == [200] * 4
    assert time.perf_counter() - started > short_pattern_limit


# --- queue and rate -------------------------------------------------------------------------


def test_the_queue_is_bounded() -> None:
    blocking = BlockingDetector()
    app = create_app(Settings(detectors=[blocking], workers=1, max_queue=1, timeout=30))

    async def send() -> list[httpx.Response]:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            first = asyncio.create_task(client.post("/detect", json={"text": NOTE}))
            await asyncio.to_thread(blocking.entered.acquire, True, 10)  # running
            second = asyncio.create_task(client.post("/detect", json={"text": NOTE}))
            while app.state.serve.service.pending < 2:  # queued
                await asyncio.sleep(0.01)
            third = await client.post("/detect", json={"text": NOTE})
            blocking.release.set()
            return [await first, await second, third]

    try:
        first, second, third = asyncio.run(send())
    finally:
        blocking.release.set()
    assert first.status_code == second.status_code == 200
    problem(third, 503, "PD908")
    assert int(third.headers["retry-after"]) >= 1
    assert app.state.serve.service.pending == 0


def test_the_rate_limit_per_client() -> None:
    app = create_app(Settings(profile="rules", rate_limit=0.5, rate_burst=2))
    with TestClient(app) as c:
        assert c.get("/languages").status_code == 200
        assert c.post("/detect", json={"text": NOTE}).status_code == 200
        body = problem(c.get("/policies"), 429, "PD909")
        assert "rate limit" in body["detail"]
        r = c.get("/policies")
        assert r.status_code == 429 and 1 <= int(r.headers["retry-after"]) <= 2
        assert c.get("/health").status_code == 200  # the health check is not limited


def test_the_rate_limit_is_per_api_key() -> None:
    settings = Settings(profile="rules", api_key="key-0123456789", rate_limit=0.5, rate_burst=1)
    with TestClient(create_app(settings)) as c:
        ok = {"X-API-Key": "key-0123456789"}
        assert c.get("/languages", headers=ok).status_code == 200
        assert c.get("/languages", headers=ok).status_code == 429
        assert c.get("/languages").status_code == 401  # no key: refused before the limit


def test_token_bucket_refills() -> None:
    now = [0.0]
    limiter = RateLimiter(2.0, 3, clock=lambda: now[0])
    assert [limiter.take("a") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert limiter.take("a") == pytest.approx(0.5)
    assert limiter.take("b") == 0.0  # another client has its own bucket
    now[0] = 0.5
    assert limiter.take("a") == 0.0
    assert limiter.take("a") == pytest.approx(0.5)
    now[0] = 100.0
    assert [limiter.take("a") for _ in range(4)][-1] > 0  # refills up to the burst only


# --- JSON bodies ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    with TestClient(create_app(Settings(profile="rules"))) as c:
        yield c


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ('{"document": ' + "[" * 10_000 + "]" * 10_000 + "}", "deeper"),
        ('{"document": ' + "[" * 150 + "]" * 150 + "}", "deeper"),
        ('{"document": ' + '{"a": ' * 150 + "1" + "}" * 150 + "}", "deeper"),
        ('{"document": {"n": ' + "7" * 100_000 + "}}", "number"),
        ('{"document": {"n": 0.' + "7" * 100_000 + "}}", "number"),
        ('{"text": "x", "lang": "en", "n": -' + "7" * 5000 + "}", "number"),
    ],
    ids=["deep-10000", "deep-150", "deep-objects", "int-100000", "float-100000", "int-5000"],
)
def test_hostile_json_bodies_are_coded_400(client: TestClient, body: str, words: str) -> None:
    r = client.post("/redact", content=body, headers={"content-type": "application/json"})
    assert words in problem(r, 400, "PD904")["detail"]


def test_ordinary_nesting_and_numbers_pass(client: TestClient) -> None:
    document: Any = {"value": 12.5, "code": 123456789012345}
    for _ in range(40):
        document = {"item": [document]}
    r = client.post("/detect", json={"document": document, "format": "json", "lang": "en"})
    assert r.status_code == 200


# --- user values stay out of errors and logs --------------------------------------------------


def test_an_unknown_language_is_not_echoed(client: TestClient) -> None:
    value = "Zebedee Quartermain 0772"
    body = problem(client.post("/detect", json={"text": NOTE, "lang": value}), 422, "PD104")
    assert "Zebedee" not in str(body)
    from polydeid.core.errors import UnknownLanguageError

    assert "Zebedee" not in str(UnknownLanguageError(value, known=["en"]))


def test_batch_quarantine_does_not_echo_the_language(tmp_path) -> None:
    from polydeid.batch.record import JobConfig, record_language
    from polydeid.core.errors import RecordError

    with pytest.raises(RecordError) as caught:
        record_language({"text": "x", "lang": "Zebedee Q"}, JobConfig(), "notes.jsonl:3")
    assert "Zebedee" not in str(caught.value) and caught.value.location == "notes.jsonl:3"


def test_the_access_log_writes_the_path_only() -> None:
    record = logging.LogRecord(
        "uvicorn.access",
        logging.INFO,
        __file__,
        1,
        '%s - "%s %s HTTP/%s" %d',
        ("127.0.0.1:5000", "POST", "/redact?lang=Zebedee&policy=tag", "1.1", 200),
        None,
    )
    assert PathOnly().filter(record)
    line = record.getMessage()
    assert "/redact" in line and "Zebedee" not in line and "?" not in line
    config = log_config("info")
    assert config["handlers"]["access"]["filters"] == ["path_only"]


def test_a_warning_when_listening_beyond_localhost_without_a_key(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    import uvicorn

    monkeypatch.setattr(uvicorn.Config, "configure_logging", lambda self: None)
    monkeypatch.setattr(
        uvicorn.Server, "run", lambda self, sockets=None: setattr(self, "started", True)
    )
    monkeypatch.delenv("POLYDEID_API_KEY", raising=False)
    caplog.set_level(logging.INFO, logger="polydeid.serve")
    assert main(["serve", "--profile", "rules", "--host", "0.0.0.0"]) == 0
    warned = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert any("without an API key" in r.getMessage() for r in warned)
    caplog.clear()
    assert main(["serve", "--profile", "rules", "--host", "127.0.0.1"]) == 0
    assert not [r for r in caplog.records if r.levelno == logging.WARNING]
    assert is_loopback("::1") and is_loopback("127.0.0.2") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("10.1.2.3")


# --- slow clients (a real server on a local port) --------------------------------------------


@pytest.fixture(scope="module")
def live_server() -> Iterator[tuple[str, int]]:
    import uvicorn

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    app = create_app(Settings(profile="rules", body_timeout=0.6))
    config = server_config(
        app,
        host="127.0.0.1",
        port=port,
        log_level="warning",
        header_timeout=0.6,
        configure_logging=False,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)
    yield "127.0.0.1", port
    server.should_exit = True
    thread.join(10)


def _closed_within(sock: socket.socket, seconds: float) -> bytes | None:
    """What the server sent before closing, or None if it is still open after ``seconds``."""
    sock.settimeout(seconds)
    data = b""
    try:
        while chunk := sock.recv(4096):
            data += chunk
    except TimeoutError:
        return None
    return data


def test_slow_headers_are_cut_off(live_server: tuple[str, int]) -> None:
    request = b"GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 200 + b"\r\n\r\n"
    with socket.create_connection(live_server) as sock:
        started = time.monotonic()
        sent = 0
        try:
            for byte in request:
                sock.sendall(bytes([byte]))
                sent += 1
                time.sleep(0.05)
                if time.monotonic() - started > 5:
                    break
        except OSError:
            pass  # closed by the server while sending
        assert _closed_within(sock, 3) is not None, "the connection stayed open"
        assert time.monotonic() - started < 5
    assert sent < len(request)


def test_an_idle_connection_is_cut_off(live_server: tuple[str, int]) -> None:
    with socket.create_connection(live_server) as sock:
        started = time.monotonic()
        assert _closed_within(sock, 5) == b""
        assert time.monotonic() - started < 3


def test_a_slow_body_gets_408(live_server: tuple[str, int]) -> None:
    head = (
        b"POST /detect HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: 100\r\n\r\n"
    )
    with socket.create_connection(live_server) as sock:
        sock.sendall(head + b'{"text": ')
        answer = _closed_within(sock, 5)
    assert answer is not None and answer.startswith(b"HTTP/1.1 408")
    assert b"PD910" in answer


def test_a_prompt_client_is_served(live_server: tuple[str, int]) -> None:
    host, port = live_server
    for _ in range(2):  # two requests on one connection: the deadline is re-armed between
        with httpx.Client(base_url=f"http://{host}:{port}") as http:
            assert http.get("/health").status_code == 200
            assert http.post("/detect", json={"text": NOTE, "lang": "en"}).status_code == 200


def test_the_command_configures_the_server(monkeypatch: pytest.MonkeyPatch) -> None:
    import uvicorn

    seen: dict[str, Any] = {}

    def fake_run(self: Any, sockets: Any = None) -> None:
        seen["config"] = self.config
        self.started = True

    monkeypatch.setattr(uvicorn.Server, "run", fake_run)
    monkeypatch.setattr(uvicorn.Config, "configure_logging", lambda self: None)
    argv = ["serve", "--profile", "rules", "--header-timeout", "4", "--body-timeout", "7"]
    argv += ["--rate-limit", "3", "--max-queue", "5", "--cpu-budget", "9"]
    assert main(argv) == 0
    config = seen["config"]
    assert config.h11_max_incomplete_event_size > 0 and config.timeout_keep_alive > 0
    assert config.http.__name__ == "HeaderDeadlineProtocol"
    settings = config.app.state.serve.service.settings
    assert (settings.header_timeout, settings.body_timeout) == (4.0, 7.0)
    assert (settings.rate_limit, settings.max_queue, settings.cpu_budget) == (3.0, 5, 9.0)


def test_a_server_that_cannot_start_is_a_configuration_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import uvicorn

    monkeypatch.setattr(uvicorn.Server, "run", lambda self, sockets=None: None)
    monkeypatch.setattr(uvicorn.Config, "configure_logging", lambda self: None)
    assert main(["serve", "--profile", "rules"]) == 2
    assert "could not start" in capsys.readouterr().err
