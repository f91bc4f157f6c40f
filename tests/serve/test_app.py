"""The HTTP service through FastAPI's TestClient: every endpoint, auth, limits, timeouts,
structured bodies, problem JSON that never quotes input, and logs without identifiers."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from polydeid.cli import main
from polydeid.core.segments import Segment
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category, Fact
from polydeid.serve._problems import PROBLEM_JSON
from polydeid.serve.app import Settings, create_app

PHONE = "+256 772 918273"
EMAIL = "zq.canary.7731@example.org"
DATE = "17 March 2023"
NOTE = f"Seen on {DATE}. Call the family on {PHONE} or write to {EMAIL} with the results."
#: Fragments that must never appear in a problem document or a log line.
CANARIES = (PHONE, EMAIL, DATE, "918273", "zq.canary", "7731")

FHIR_PATIENT: dict[str, Any] = {
    "resourceType": "Patient",
    "id": "p1",
    "telecom": [{"system": "phone", "value": PHONE}],
    "birthDate": "1984-03-12",
    "text": {
        "status": "generated",
        "div": f'<div xmlns="http://www.w3.org/1999/xhtml">Call {PHONE} after review.</div>',
    },
}
CSV = (
    "Patient Name,DOB,Phone,Notes\n"
    f'"Otieno, Amina",1984-03-12,{PHONE},"Reviewed on 14/02/2024; write to {EMAIL}."\n'
)
HL7 = (
    "MSH|^~\\&|LAB|KNH|EMR|KNH|20240214083000||ADT^A01|MSG0001|P|2.5\r"
    "PID|1||KNH-2023-001234^^^KNH^MR||Otieno^Amina||19840312|F|||Kisumu||+254712345678\r"
)


def assert_no_canary(*texts: str) -> None:
    for text in texts:
        for fragment in CANARIES:
            assert fragment not in text, "an identifier fragment leaked"


def assert_problem(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status
    assert response.headers["content-type"].startswith(PROBLEM_JSON)
    body = response.json()
    assert {"type", "title", "status", "detail", "code"} <= set(body)
    assert body["status"] == status
    assert body["code"] == code
    assert body["type"].startswith("urn:polydeid:problem:")
    assert_no_canary(response.text)
    return body


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    with TestClient(create_app(Settings(profile="rules"))) as c:
        yield c


@pytest.fixture
def logs(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.DEBUG)
    return caplog


# --- listings --------------------------------------------------------------------------------


def test_health(client: TestClient) -> None:
    body = client.get("/health").json()
    assert body["status"] == "ok"
    assert body["profile"] == "rules"
    assert body["policy"] == "tag"
    assert body["auth_required"] is False


def test_categories_languages_policies(client: TestClient) -> None:
    categories = {c["name"]: c["detected"] for c in client.get("/categories").json()["categories"]}
    assert set(categories) == {c.value for c in Category}
    assert categories["CONTACT_PHONE"] is True
    assert categories["ORGANIZATION"] is False  # the rules profile finds no organisations
    partial = {c["name"] for c in client.get("/categories").json()["categories"] if c["partial"]}
    # postcodes of addresses, places and facilities the gazetteer lists, names only after name
    # labels ("Patient name: …"), occupations, tribes, religions and clans only after their
    # labels ("Kabila: …")
    assert partial == {
        "LOCATION_ADDRESS",
        "LOCATION_VILLAGE",
        "LOCATION_FACILITY",
        "PERSON",
        "PERSON_THIRD_PARTY",
        "PERSON_CLAN",
        "PROFESSION",
        "TRIBE",
        "RELIGION",
    }
    assert categories["LOCATION_ADDRESS"] is True and categories["PERSON"] is True
    langs = client.get("/languages").json()
    codes = {lang["code"] for lang in langs["languages"]}
    assert {"en", "sw", "lg", "luo"} <= codes
    assert langs["auto"] is True
    policies = {p["name"]: p for p in client.get("/policies").json()["policies"]}
    assert {"tag", "numbered", "mask", "hash", "encrypt", "surrogate"} <= set(policies)
    assert policies["tag"]["default"] is True
    assert policies["hash"]["needs_key"] is True
    assert policies["hash"]["available"] is False  # no key configured


def test_openapi_schema_and_no_cdn_docs(client: TestClient) -> None:
    schema = client.get("/openapi.json").json()
    assert {"/detect", "/redact", "/health", "/policies"} <= set(schema["paths"])
    content = schema["paths"]["/redact"]["post"]["requestBody"]["content"]
    assert {"application/json", "multipart/form-data", "text/csv", "application/fhir+json"} <= set(
        content
    )
    assert client.get("/docs").status_code == 404
    assert client.get("/redoc").status_code == 404


def test_page_and_static_files_are_local(client: TestClient) -> None:
    page = client.get("/")
    assert page.status_code == 200
    assert "text/html" in page.headers["content-type"]
    assert "default-src 'self'" in page.headers["content-security-policy"]
    for asset in ("/static/app.js", "/static/style.css"):
        assert client.get(asset).status_code == 200
    for text in (
        page.text,
        client.get("/static/app.js").text,
        client.get("/static/style.css").text,
    ):
        assert "http://" not in text.replace("http://www.w3.org", "")
        assert "https://" not in text
        assert "@import" not in text and "@font-face" not in text


# --- text ----------------------------------------------------------------------------------------


def test_detect_text(client: TestClient) -> None:
    r = client.post("/detect", json={"text": NOTE, "lang": "en"})
    assert r.status_code == 200
    body = r.json()
    assert body["kind"] == "text" and body["lang"] == "en"
    found = {(s["label"], NOTE[s["start"] : s["end"]]) for s in body["spans"]}
    assert found == {("DATE", DATE), ("CONTACT_PHONE", PHONE), ("CONTACT_OTHER", EMAIL)}
    assert all(0 < s["score"] <= 1 and s["source"].startswith("rule.") for s in body["spans"])
    assert [s["granularity"] for s in body["spans"] if s["label"] == "DATE"] == ["full"]
    assert r.headers["cache-control"] == "no-store"


def test_redact_text_with_policies(client: TestClient) -> None:
    r = client.post("/redact", json={"text": NOTE, "lang": "en"})
    body = r.json()
    assert body["policy"] == "tag"
    assert body["text"] == (
        "Seen on [DATE]. Call the family on [CONTACT_PHONE] or write to [CONTACT_OTHER] "
        "with the results."
    )
    assert [x["label"] for x in body["replacements"]] == ["DATE", "CONTACT_PHONE", "CONTACT_OTHER"]
    first = body["replacements"][0]
    assert body["text"][first["new_start"] : first["new_end"]] == "[DATE]"
    numbered = client.post("/redact", json={"text": NOTE, "lang": "en", "policy": "numbered"})
    assert numbered.json()["policy"] == "numbered"
    assert "[CONTACT_PHONE-1]" in numbered.json()["text"]


def test_auto_language_reads_a_mixed_text_part_by_part(client: TestClient) -> None:
    # An English text with a Kiswahili sentence: its date in Kiswahili words is found.
    text = (
        "The patient was seen in the outpatient clinic today with fever and cough.\n"
        "Mgonjwa atarudi kliniki tarehe 5 Machi 2025 kwa uchunguzi zaidi."
    )
    r = client.post("/redact", json={"text": text, "lang": "auto"})
    assert r.status_code == 200
    assert r.json()["lang"] == "en" and "tarehe [DATE] kwa" in r.json()["text"]


def test_redact_auto_language(client: TestClient) -> None:
    r = client.post("/redact", json={"text": NOTE, "lang": "auto"})
    assert r.status_code == 200
    assert r.json()["lang"] == "en"
    assert_no_canary(r.json()["text"])


def test_keyed_policy_with_server_key(tmp_path) -> None:
    key = tmp_path / "secret.key"
    assert main(["keygen", str(key)]) == 0
    with TestClient(create_app(Settings(profile="rules", key_file=str(key)))) as c:
        policies = {p["name"]: p for p in c.get("/policies").json()["policies"]}
        assert policies["hash"]["available"] is True
        r = c.post("/redact", json={"text": NOTE, "lang": "en", "policy": "hash"})
        assert r.status_code == 200
        assert_no_canary(r.json()["text"])
        assert "[CONTACT_PHONE:" in r.json()["text"]


# --- errors: problem JSON that never quotes the input -----------------------------------------


def test_unknown_language(client: TestClient) -> None:
    r = client.post("/redact", json={"text": NOTE, "lang": "zz-" + EMAIL})
    assert_problem(r, 422, "PD104")


def test_undetermined_language(client: TestClient) -> None:
    r = client.post("/detect", json={"text": PHONE, "lang": "auto"})
    body = assert_problem(r, 422, "PD202")
    assert "undetermined" in body["detail"]


def test_unknown_policy(client: TestClient) -> None:
    r = client.post("/redact", json={"text": NOTE, "lang": "en", "policy": EMAIL})
    assert_problem(r, 422, "PD101")


def test_keyed_policy_without_key(client: TestClient) -> None:
    r = client.post("/redact", json={"text": NOTE, "lang": "en", "policy": "hash"})
    assert_problem(r, 422, "PD106")


def test_malformed_json(client: TestClient) -> None:
    body = '{"text": "' + NOTE + '", "lang": '
    r = client.post("/redact", content=body, headers={"Content-Type": "application/json"})
    problem = assert_problem(r, 400, "PD904")
    assert "line 1" in problem["detail"]


@pytest.mark.parametrize(
    "payload",
    [
        {"text": 42},
        {"text": NOTE, EMAIL: "stray field named like an identifier"},
        {"text": NOTE, "countries": [PHONE]},
        {"text": NOTE, "countries": "KE"},
        [NOTE],
        {"nothing": NOTE},
        {"document": 3.5},
        {"document": NOTE, "format": EMAIL},
    ],
    ids=range(8),
)
def test_invalid_bodies(client: TestClient, payload: Any) -> None:
    r = client.post("/redact", json=payload)
    assert_problem(r, 422, "PD905")


def test_query_options_are_checked_too(client: TestClient) -> None:
    r = client.post("/redact", params=[("lang", NOTE)], json={"text": NOTE})
    assert_problem(r, 422, "PD104")


def test_fastapi_validation_errors_do_not_echo() -> None:
    # FastAPI's default 422 quotes the input; the service's handler must not.
    app = create_app(Settings(profile="rules"))

    @app.get("/typed")
    async def typed(n: int) -> dict[str, int]:
        return {"n": n}

    with TestClient(app) as c:
        body = assert_problem(c.get("/typed", params={"n": NOTE}), 422, "PD905")
    assert body["errors"] == [{"loc": ["query", "…"], "type": "int_parsing"}]


def test_unsupported_media_type(client: TestClient) -> None:
    r = client.post("/redact", content=NOTE, headers={"Content-Type": "application/pdf"})
    assert_problem(r, 415, "PD906")


def test_not_found_and_method(client: TestClient) -> None:
    assert_problem(client.get("/nowhere"), 404, "PD907")
    assert_problem(client.get("/redact"), 405, "PD907")


def test_malformed_document_is_located_not_quoted(client: TestClient) -> None:
    broken = json.dumps(FHIR_PATIENT)[:-20]
    r = client.post("/redact", content=broken, headers={"Content-Type": "application/fhir+json"})
    body = assert_problem(r, 422, r.json()["code"])
    assert body["code"].startswith("PD2")


def test_invalid_utf8_text(client: TestClient) -> None:
    r = client.post(
        "/redact", content=b"Seen \xff\xfe today", headers={"Content-Type": "text/plain"}
    )
    assert_problem(r, 422, "PD201")


# --- API key ---------------------------------------------------------------------------------


def test_api_key() -> None:
    app = create_app(Settings(profile="rules", api_key="s3cret-key-for-tests"))
    with TestClient(app) as c:
        assert c.get("/health").json()["auth_required"] is True
        assert c.get("/").status_code == 200
        assert c.get("/static/app.js").status_code == 200
        for method, path in (
            ("GET", "/languages"),
            ("GET", "/categories"),
            ("GET", "/policies"),
            ("GET", "/openapi.json"),
            ("POST", "/detect"),
            ("POST", "/redact"),
        ):
            r = c.request(method, path, json={"text": NOTE})
            body = assert_problem(r, 401, "PD901")
            assert "X-API-Key" in body["detail"]
            assert "www-authenticate" in r.headers
        wrong = c.post("/redact", json={"text": NOTE}, headers={"X-API-Key": "s3cret-key-for-tesT"})
        assert_problem(wrong, 401, "PD901")
        ok = c.post(
            "/redact",
            json={"text": NOTE, "lang": "en"},
            headers={"X-API-Key": "s3cret-key-for-tests"},
        )
        assert ok.status_code == 200
        assert_no_canary(ok.json()["text"])


def test_no_api_key_means_open(client: TestClient) -> None:
    assert client.get("/policies").status_code == 200


# --- limits ----------------------------------------------------------------------------------


def test_body_too_large_by_length() -> None:
    with TestClient(create_app(Settings(profile="rules", max_bytes=200))) as c:
        r = c.post("/redact", json={"text": NOTE * 5, "lang": "en"})
        assert_problem(r, 413, "PD902")
        assert c.post("/redact", json={"text": NOTE[:60], "lang": "en"}).status_code == 200


def test_body_too_large_streamed() -> None:
    def chunks() -> Iterator[bytes]:
        yield b'{"text": "'
        for _ in range(20):
            yield NOTE.encode()
        yield b'"}'

    with TestClient(create_app(Settings(profile="rules", max_bytes=300))) as c:
        r = c.post("/redact", content=chunks(), headers={"Content-Type": "application/json"})
        assert "content-length" not in r.request.headers
        assert_problem(r, 413, "PD902")


def test_upload_too_large() -> None:
    with TestClient(create_app(Settings(profile="rules", max_bytes=300))) as c:
        r = c.post("/redact", files={"file": ("note.txt", (NOTE * 10).encode(), "text/plain")})
        assert_problem(r, 413, "PD902")


class SlowDetector:
    """Blocks until released (or 10 s), to force the processing time limit."""

    id = "test.slow.v1"
    languages: frozenset[str] = frozenset()
    labels: frozenset[Category | Fact] = frozenset({Category.PERSON})

    def __init__(self) -> None:
        self.release = threading.Event()

    def detect(self, segment: Segment) -> list[Span]:
        self.release.wait(10)
        return []


def test_timeout() -> None:
    slow = SlowDetector()
    app = create_app(Settings(detectors=[slow], timeout=0.3, workers=1))
    try:
        with TestClient(app) as c:
            assert c.get("/health").json()["profile"] == "custom"
            r = c.post("/detect", json={"text": NOTE, "lang": "en"})
            body = assert_problem(r, 503, "PD903")
            assert "0.3 s" in body["detail"]
            assert r.headers["retry-after"]
    finally:
        slow.release.set()


class FailingDetector:
    """Raises an exception whose message holds the text (as careless code might)."""

    id = "test.failing.v1"
    languages: frozenset[str] = frozenset()
    labels: frozenset[Category | Fact] = frozenset({Category.PERSON})

    def detect(self, segment: Segment) -> list[Span]:
        raise RuntimeError(f"cannot handle {segment.text!r}")


def test_internal_error_is_a_clean_problem(logs: pytest.LogCaptureFixture) -> None:
    with TestClient(create_app(Settings(detectors=[FailingDetector()]))) as c:
        r = c.post("/detect", json={"text": NOTE, "lang": "en"})
    assert_problem(r, 500, "PD900")
    messages = [rec.getMessage() for rec in logs.records]
    assert any("RuntimeError" in m for m in messages)
    assert_no_canary(*messages)
    assert all(rec.exc_info is None for rec in logs.records)


# --- structured bodies -----------------------------------------------------------------------


def test_fhir_json_value(client: TestClient) -> None:
    r = client.post("/redact", json={"document": FHIR_PATIENT, "lang": "en"})
    assert r.status_code == 200
    body = r.json()
    assert body["kind"] == "document" and body["format"] == "fhir"
    doc = body["document"]
    assert doc["resourceType"] == "Patient" and doc["id"] == "p1"
    assert doc["telecom"][0]["value"] == "[CONTACT_PHONE]"
    assert doc["birthDate"] == "[DATE]"
    assert "[CONTACT_PHONE]" in doc["text"]["div"]
    assert {s["path"] for s in body["spans"]} >= {"telecom[0].value", "birthDate", "text.div"}
    assert_no_canary(json.dumps(doc))


def test_fhir_raw_body(client: TestClient) -> None:
    raw = json.dumps(FHIR_PATIENT)
    headers = {"Content-Type": "application/fhir+json"}
    r = client.post("/redact", content=raw, headers=headers)
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("application/fhir+json")
    assert r.headers["x-polydeid-format"] == "fhir"
    assert int(r.headers["x-polydeid-replacements"]) == 3
    out = json.loads(r.text)
    assert out["telecom"][0]["value"] == "[CONTACT_PHONE]"
    detected = client.post("/detect", content=raw, headers=headers).json()
    assert detected["format"] == "fhir"
    assert {s["label"] for s in detected["spans"]} == {"CONTACT_PHONE", "DATE"}
    enveloped = client.post(
        "/redact", content=raw, headers={**headers, "Accept": "application/json"}
    )
    assert enveloped.headers["content-type"].startswith("application/json")
    assert enveloped.json()["format"] == "fhir"


def test_csv_string_document(client: TestClient) -> None:
    r = client.post("/redact", json={"document": CSV, "format": "csv", "lang": "en"})
    body = r.json()
    assert body["format"] == "csv"
    assert body["document"].splitlines()[0] == "Patient Name,DOB,Phone,Notes"
    assert_no_canary(body["document"])
    assert "[PERSON]" in body["document"]  # named by its column
    spans = body["spans"]
    assert all(CSV[s["start"] : s["end"]] for s in spans)
    assert {CSV[s["start"] : s["end"]] for s in spans} >= {PHONE, EMAIL}


def test_csv_raw_body_and_accept_json(client: TestClient) -> None:
    r = client.post("/redact", content=CSV, headers={"Content-Type": "text/csv"})
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/csv")
    assert r.text.startswith("Patient Name,DOB,Phone,Notes\n")
    assert_no_canary(r.text)


def test_hl7_raw_body(client: TestClient) -> None:
    r = client.post("/detect", content=HL7, headers={"Content-Type": "application/hl7-v2"})
    body = r.json()
    assert body["format"] == "hl7"
    assert {"PID-3.1", "PID-13.1"} <= {s["path"] for s in body["spans"]}
    redacted = client.post("/redact", content=HL7, headers={"Content-Type": "application/hl7-v2"})
    assert redacted.text.startswith("MSH|")
    assert "+254712345678" not in redacted.text


def test_chat_and_plain_json_documents(client: TestClient) -> None:
    chat = [{"role": "user", "content": f"My number is {PHONE}, please call me back."}]
    body = client.post("/redact", json={"document": chat, "lang": "en"}).json()
    assert body["format"] == "chat"
    assert body["document"][0]["content"] == "My number is [CONTACT_PHONE], please call me back."
    record = {"note": NOTE}
    plain = client.post("/detect", json={"document": record, "format": "json", "lang": "en"})
    assert plain.json()["format"] == "json"
    assert {s["label"] for s in plain.json()["spans"]} == {"DATE", "CONTACT_PHONE", "CONTACT_OTHER"}


def test_plain_text_raw_body(client: TestClient) -> None:
    headers = {"Content-Type": "text/plain; charset=utf-8"}
    r = client.post("/redact", params={"lang": "en"}, content=NOTE.encode(), headers=headers)
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/plain")
    assert r.headers["x-polydeid-replacements"] == "3"
    assert r.text.startswith("Seen on [DATE]. Call the family on [CONTACT_PHONE]")
    detected = client.post("/detect", params={"lang": "en"}, content=NOTE, headers=headers)
    assert len(detected.json()["spans"]) == 3


def test_text_format_document(client: TestClient) -> None:
    r = client.post("/redact", json={"document": NOTE, "format": "text", "lang": "en"})
    assert r.json()["kind"] == "text"
    assert_no_canary(r.json()["text"])


def test_csv_must_be_a_string(client: TestClient) -> None:
    r = client.post("/redact", json={"document": [{"Phone": PHONE}], "format": "csv"})
    assert_problem(r, 422, "PD905")


def test_multipart_uploads(client: TestClient) -> None:
    text = client.post(
        "/redact",
        files={"file": ("patient-note.txt", NOTE.encode(), "text/plain")},
        data={"lang": "en", "policy": "numbered"},
    )
    assert text.status_code == 200
    assert text.json()["kind"] == "text"
    assert text.json()["policy"] == "numbered"
    assert "[DATE-1]" in text.json()["text"]
    table = client.post(
        "/redact", files={"file": ("table.csv", CSV.encode(), "text/csv")}, data={"lang": "en"}
    )
    assert table.json()["format"] == "csv"
    assert_no_canary(table.json()["document"])
    missing = client.post("/redact", files={"other": ("x.txt", b"abc", "text/plain")})
    assert_problem(missing, 422, "PD905")


# --- privacy of logs --------------------------------------------------------------------------


def test_logs_never_hold_the_canary(client: TestClient, logs: pytest.LogCaptureFixture) -> None:
    raw_fhir = {"Content-Type": "application/fhir+json"}
    requests: list[tuple[str, dict[str, Any]]] = [
        ("/detect", {"json": {"text": NOTE, "lang": "en"}}),
        ("/redact", {"json": {"text": NOTE, "lang": "auto", "policy": "numbered"}}),
        ("/redact", {"json": {"text": NOTE, "lang": EMAIL}}),
        ("/redact", {"json": {"text": NOTE, "policy": PHONE}}),
        ("/redact", {"json": {"text": NOTE, "lang": "en", "policy": "hash"}}),
        (
            "/redact",
            {"content": '{"text": "' + NOTE, "headers": {"Content-Type": "application/json"}},
        ),
        ("/redact", {"json": {"document": FHIR_PATIENT}}),
        ("/redact", {"content": json.dumps(FHIR_PATIENT), "headers": raw_fhir}),
        ("/redact", {"content": json.dumps(FHIR_PATIENT)[:-9], "headers": raw_fhir}),
        ("/redact", {"content": CSV, "headers": {"Content-Type": "text/csv"}}),
        ("/detect", {"files": {"file": (f"{EMAIL}.txt", NOTE.encode(), "text/plain")}}),
    ]
    statuses = []
    for path, kwargs in requests:
        r = client.post(path, **kwargs)
        statuses.append(r.status_code)
        if r.status_code >= 400:
            assert_no_canary(r.text)
    assert 200 in statuses and 422 in statuses and 400 in statuses
    assert logs.records, "the service logs its requests"
    for record in logs.records:
        assert_no_canary(record.getMessage(), str(record.args or ""))


# --- the command ------------------------------------------------------------------------------


def fake_server(monkeypatch: pytest.MonkeyPatch, seen: dict[str, Any]) -> None:
    """``uvicorn.Server.run`` records its configuration instead of serving (and building the
    configuration leaves the test session's logging alone)."""
    import uvicorn

    def fake_run(self: Any, sockets: Any = None) -> None:
        seen["app"], seen["config"] = self.config.app, self.config
        self.started = True

    monkeypatch.setattr(uvicorn.Server, "run", fake_run)
    monkeypatch.setattr(uvicorn.Config, "configure_logging", lambda self: None)


def test_serve_command_builds_the_app(monkeypatch, tmp_path, capsys) -> None:
    seen: dict[str, Any] = {}
    fake_server(monkeypatch, seen)
    key_file = tmp_path / "api.key"
    key_file.write_text("from-a-file-0123456789\n", "utf-8")
    code = main(
        [
            "serve",
            "--profile",
            "rules",
            "--port",
            "8123",
            "--api-key-file",
            str(key_file),
            "--max-bytes",
            "5000",
            "--timeout",
            "2.5",
        ]
    )
    assert code == 0
    assert seen["config"].port == 8123 and seen["config"].host == "127.0.0.1"
    err = capsys.readouterr().err
    assert "API key on" in err and "from-a-file" not in err
    with TestClient(seen["app"]) as c:
        assert c.get("/languages").status_code == 401
        ok = c.get("/languages", headers={"X-API-Key": "from-a-file-0123456789"})
        assert ok.status_code == 200
        assert c.get("/health").json()["max_bytes"] == 5000


def test_serve_command_reads_the_environment(monkeypatch) -> None:
    seen: dict[str, Any] = {}
    fake_server(monkeypatch, seen)
    monkeypatch.setenv("POLYDEID_API_KEY", "env-key-0123456789")
    assert main(["serve", "--profile", "rules"]) == 0
    with TestClient(seen["app"]) as c:
        assert c.get("/policies", headers={"X-API-Key": "env-key-0123456789"}).status_code == 200


@pytest.mark.parametrize(
    "argv",
    [
        ["--max-bytes", "0"],
        ["--timeout", "0"],
        ["--profile", "nonesuch"],
        ["--policy", "no-such-policy"],
        ["--api-key-file", "/nonexistent/api.key"],
        ["--key-file", "/nonexistent/secret.key"],
        ["--port", "70000"],
        ["--cpu-budget", "0"],
        ["--max-queue", "-1"],
        ["--rate-limit", "0"],
        ["--rate-burst", "0"],
        ["--header-timeout", "0"],
        ["--body-timeout", "-1"],
    ],
    ids=range(13),
)
def test_serve_command_configuration_errors(monkeypatch, capsys, argv: list[str]) -> None:
    import uvicorn

    monkeypatch.setattr(uvicorn.Server, "run", lambda *a, **k: pytest.fail("must not start"))
    monkeypatch.delenv("POLYDEID_API_KEY", raising=False)
    assert main(["serve", "--profile", "rules", *argv]) == 2
    assert "polydeid: error:" in capsys.readouterr().err


def test_empty_api_key_file(monkeypatch, tmp_path, capsys) -> None:
    empty = tmp_path / "empty.key"
    empty.write_text("\n", "utf-8")
    assert main(["serve", "--profile", "rules", "--api-key-file", str(empty)]) == 2
    assert "empty" in capsys.readouterr().err


def test_short_api_key(monkeypatch, capsys) -> None:
    monkeypatch.setenv("POLYDEID_API_KEY", "k3y!")
    assert main(["serve", "--profile", "rules"]) == 2
    err = capsys.readouterr().err
    assert "8 to 256" in err and "k3y!" not in err


def test_cli_import_stays_light() -> None:
    code = (
        "import sys, polydeid.cli; polydeid.cli.build_parser(); "
        "print(sorted(m for m in ('fastapi', 'uvicorn', 'starlette') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_surrogates_come_from_a_shared_vault(tmp_path):
    from fastapi.testclient import TestClient

    from polydeid.serve.app import Settings, create_app

    key = tmp_path / "k.key"
    key.write_text("ab" * 32)
    vault = tmp_path / "v.sqlite"
    settings = Settings(profile="rules", policy="surrogate", key_file=str(key), vault=str(vault))
    with TestClient(create_app(settings)) as client:
        first = client.post("/redact", json={"text": "Tel 0772 123456"}).json()
    assert vault.stat().st_size > 0
    with TestClient(create_app(settings)) as client:  # a second instance, same vault
        second = client.post("/redact", json={"text": "Tel 0772 123456"}).json()
    assert first["text"] == second["text"] != "Tel 0772 123456"
