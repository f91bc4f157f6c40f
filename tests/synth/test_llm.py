"""LLM mode against a local OpenAI-compatible server the test starts: prompts, annotation,
rejection of replies that miss a value or invent an identifier, validation, CLI."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest

from polydeid.cli import main
from polydeid.core.errors import ConfigError
from polydeid.corpora.document import Corpus
from polydeid.synth.generate import plan_document
from polydeid.synth.llm import API_KEY_ENV, ChatEndpoint, LlmReport, build_messages, generate_llm
from polydeid.synth.validate import validate_corpus

_VALUE_LINE = re.compile(r"^- (\w+) \((\w+)\): (.*)$", re.MULTILINE)


class _Handler(BaseHTTPRequestHandler):
    """Writes a document from the values in the prompt; the model name picks a behaviour."""

    seen_auth: ClassVar[list[str]] = []
    prompts: ClassVar[list[str]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).seen_auth.append(self.headers.get("Authorization", ""))
        prompt = body["messages"][-1]["content"]
        type(self).prompts.append(prompt)
        mode = body["model"]
        if mode == "broken":
            self.send_response(500)
            self.end_headers()
            return
        values = [m.group(3) for m in _VALUE_LINE.finditer(prompt)]
        if mode == "forgetful":
            values = values[:-1]
        lines = [f"Entry {i + 1}: {value}." for i, value in enumerate(values)]
        if mode == "inventive":
            lines.append("Contact: someone.else@example.com.")
        reply = {"choices": [{"message": {"role": "assistant", "content": "\n".join(lines)}}]}
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1/chat/completions"
    httpd.shutdown()


def test_prompt_is_built_from_the_axes_and_values() -> None:
    plan = plan_document("sw", 2, seed=4)
    messages = build_messages(plan)
    user = messages[-1]["content"]
    assert "Swahili" in user or "Kiswahili" in user
    assert plan.document_type.replace("_", " ") in user
    assert all(value.text in user for value in plan.values)
    assert "Do not write any other" in user


def test_accepted_documents_are_annotated_and_valid(server: str, monkeypatch) -> None:
    monkeypatch.setenv(API_KEY_ENV, "test-key-123")
    report = LlmReport()
    docs = list(
        generate_llm(
            ChatEndpoint(server, "good"),
            per_language=3,
            seed=2,
            langs=["en", "sw", "lg"],
            report=report,
        )
    )
    assert report.requested == 9 and report.accepted == len(docs) >= 7, report.rejected
    assert "Bearer test-key-123" in _Handler.seen_auth
    for doc in docs:
        plan = plan_document(doc.lang, int(doc.id.rsplit("-", 1)[1]), seed=2)
        for value in plan.values:
            if value.label is not None:
                covered = {doc.text[s.start : s.end] for s in (*doc.spans, *doc.facts)}
                assert value.text in covered
        assert doc.meta["document_type"] == plan.document_type
    result = validate_corpus(Corpus("llm", tuple(docs)), check_language=False)
    assert result.ok, result.codes()


@pytest.mark.parametrize(
    ("model", "reason"),
    [
        ("forgetful", "missing_value"),
        ("inventive", "extra_identifier"),
        ("broken", "endpoint_error"),
    ],
)
def test_bad_replies_are_rejected(server: str, model: str, reason: str) -> None:
    report = LlmReport()
    docs = list(
        generate_llm(
            ChatEndpoint(server, model), per_language=2, seed=3, langs=["en"], report=report
        )
    )
    assert docs == []
    assert report.rejected[reason] >= 1
    assert report.accepted == 0


def test_endpoint_must_be_http() -> None:
    with pytest.raises(ConfigError):
        ChatEndpoint("file:///etc/passwd", "x")


def test_cli_llm_mode(server: str, tmp_path: Path, capsys) -> None:
    out = tmp_path / "llm"
    argv = ["synth", "--n", "4", "--seed", "1", "--out", str(out), "--langs", "en,de"]
    assert main([*argv, "--llm-url", server, "--llm-model", "good", "--validate"]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["llm"]["requested"] == 4
    assert manifest["documents"] == manifest["llm"]["accepted"]
    assert "LLM mode" in capsys.readouterr().err
