"""LLM extractors as detectors: an OpenAI-compatible endpoint (a local threaded HTTP server the
tests start) and a tiny local causal LM (random weights, a tokenizer trained here), chunking,
retries, re-asks and fail-closed errors, and the extractor inside a Deidentifier."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from itertools import pairwise
from pathlib import Path
from typing import Any, ClassVar

import pytest

from polydeid.api import Deidentifier
from polydeid.core.errors import (
    ChatEndpointError,
    ConfigError,
    DetectionError,
    DetectorUnavailableError,
    UnknownLanguageError,
)
from polydeid.core.segments import Origin, Segment
from polydeid.core.taxonomy import Category
from polydeid.detect.backends.chat_client import (
    API_KEY_ENV,
    ChatEndpoint,
    RetryPolicy,
    chat_url,
    endpoint_host,
)
from polydeid.detect.backends.llm import (
    REASK_PROMPT,
    EndpointTransport,
    LabelSet,
    LlmExtractor,
    chunk_ranges,
)
from polydeid.detect.base import Detector
from polydeid.detect.profiles import profile_detectors

NAMES = ("Amina Njeri", "Otieno Ouma", "Wanjiru Kamau", "Baraka Mwangi")
DATE = "12 March 2024"
_DOCUMENT = re.compile(r"<<<DOCUMENT\n(.*)\nDOCUMENT>>>", re.DOTALL)


def _found(document: str) -> list[dict[str, str]]:
    items = [{"label": "human_name", "value": n} for n in NAMES if n in document]
    if DATE in document:
        items.append({"label": "date", "value": DATE})
    return items


class _Handler(BaseHTTPRequestHandler):
    """A chat endpoint whose behaviour the model name picks (see ``_reply``)."""

    seen: ClassVar[list[dict[str, Any]]] = []
    lock = threading.Lock()

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with self.lock:
            type(self).seen.append({**body, "auth": self.headers.get("Authorization", "")})
            count = sum(1 for s in type(self).seen if s["model"] == body["model"])
        try:
            status, content = self._reply(body, count)
            self._send(status, content)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout tests)

    def _reply(self, body: dict[str, Any], count: int) -> tuple[int, str]:
        mode = body["model"]
        messages = body["messages"]
        match = _DOCUMENT.search(messages[min(1, len(messages) - 1)]["content"])
        document = match.group(1) if match else ""
        good = json.dumps(_found(document))
        if mode == "slow":
            time.sleep(1.0)
        if mode == "flaky" and count == 1:
            return 503, ""
        if mode == "auth":
            return 401, "invalid api key for user Amina Njeri"  # a body that must not leak
        if mode == "garbage":
            return 200, f"I think {NAMES[0]} is the patient."
        if mode == "reask" and len(messages) == 2:
            return 200, "Let me think about the document first."
        if mode == "fenced":
            extra = [
                {"label": "human_name", "value": "Ghost Person"},  # not in the document
                {"label": "favourite_colour", "value": "blue"},  # not a label (not reportable)
                {"label": "ORGANIZATION", "value": "Kenyatta"},  # not asked for (reportable)
            ]
            return 200, f"Here you go:\n```json\n{json.dumps(_found(document) + extra)}\n```\n"
        if mode == "truncate":
            items = _found(document)
            if len(items) > 2:  # more than the token limit allows
                cut = json.dumps(items)
                return 200, cut[: cut.index("}, {") + 4] + '"label": "human_'
        if mode == "custom":
            items = [{"type": "Patient", "text": NAMES[0]}, {"type": "ward", "text": "Ward 4"}]
            return 200, json.dumps({"entities": items})
        return 200, good

    def _send(self, status: int, content: str) -> None:
        if status == 200:
            data = json.dumps({"choices": [{"message": {"content": content}}]}).encode()
        else:
            data = content.encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(autouse=True)
def _fresh_log() -> None:
    _Handler.seen.clear()


def _extractor(server: str, model: str, **options: Any) -> LlmExtractor:
    options.setdefault("backoff", 0.01)
    return LlmExtractor.from_endpoint(server, model, **options)


NOTE = (
    f"Patient {NAMES[0]} was admitted on {DATE} with fever.\n"
    f"Seen by Dr {NAMES[1]}. {NAMES[0]}'s mother {NAMES[2]} stayed.\n"
)


def _texts(text: str, spans: list[Any]) -> list[tuple[str, str]]:
    return [(text[s.start : s.end], s.label.value) for s in spans]


# --- endpoint transport ---------------------------------------------------------------------


def test_good_reply_gives_spans_at_every_occurrence(server: str, monkeypatch) -> None:
    monkeypatch.setenv(API_KEY_ENV, "k-123")
    extractor = _extractor(server, "good")
    assert isinstance(extractor, Detector)
    spans = extractor.detect(Segment(NOTE))
    assert _texts(NOTE, spans) == [
        (NAMES[0], "PERSON"),
        (DATE, "DATE"),
        (NAMES[1], "PERSON"),
        (NAMES[0], "PERSON"),
        (NAMES[2], "PERSON"),
    ]
    assert {s.source for s in spans} == {extractor.id}
    assert extractor.id == f"backend.llm.good@{endpoint_host(server)}"
    assert extractor.labels == frozenset(
        {
            Category.PERSON,
            Category.DATE,
            Category.ID_OTHER,
            Category.CONTACT_PHONE,
            Category.CONTACT_OTHER,
            Category.LOCATION_ADDRESS,
            Category.ORGANIZATION,
        }
    )
    (request,) = _Handler.seen
    assert request["temperature"] == 0 and request["max_tokens"] == 2048
    assert request["auth"] == "Bearer k-123"
    user = request["messages"][1]["content"]
    assert NOTE.strip() in user and "human_name" in user and "company_name" in user


def test_copied_values_and_unknown_labels_are_counted_not_spans(server: str) -> None:
    extractor = _extractor(server, "fenced")
    spans = extractor.detect(Segment(NOTE))
    assert len(spans) == 5
    report = extractor.report
    assert report.copied_value_errors == 1
    assert report.unknown_labels == {"other": 1, "organization": 1}
    assert report.extractions == 7 and report.spans == 5
    assert "Ghost" not in json.dumps(report.to_dict()) and "blue" not in str(report.to_dict())


def test_non_json_then_good_on_reask(server: str) -> None:
    extractor = _extractor(server, "reask")
    spans = extractor.detect(Segment(NOTE))
    assert len(spans) == 5
    assert extractor.report.reasks == 1 and extractor.report.requests == 2
    second = _Handler.seen[1]["messages"]
    assert [m["role"] for m in second] == ["system", "user", "assistant", "user"]
    assert second[-1]["content"] == REASK_PROMPT


def test_non_json_twice_fails_closed(server: str) -> None:
    extractor = _extractor(server, "garbage")
    segment = Segment(NOTE, origin=Origin(file="notes.jsonl", line=7))
    with pytest.raises(DetectionError) as caught:
        extractor.detect(segment)
    message = str(caught.value)
    assert "re-ask" in message and "notes.jsonl:7" in message and "chunk 1 of 1" in message
    assert not any(name in message for name in NAMES)
    assert len(_Handler.seen) == 2


def test_server_error_is_retried(server: str) -> None:
    extractor = _extractor(server, "flaky", retries=2)
    assert len(extractor.detect(Segment(NOTE))) == 5
    assert len(_Handler.seen) == 2


def test_timeouts_fail_closed_after_the_retries(server: str) -> None:
    extractor = _extractor(server, "slow", timeout=0.25, retries=1)
    started = time.monotonic()
    with pytest.raises(ChatEndpointError) as caught:
        extractor.detect(Segment(NOTE))
    assert time.monotonic() - started < 5
    error = caught.value
    assert isinstance(error, DetectionError)
    assert error.kind == "timeout" and error.attempts == 2
    assert "timed out" in str(error) and "after 2 attempts" in str(error)
    assert len(_Handler.seen) == 2


def test_unauthorised_is_not_retried_and_says_why(server: str) -> None:
    extractor = _extractor(server, "auth", retries=3)
    with pytest.raises(DetectionError) as caught:
        extractor.detect(Segment(NOTE))
    message = str(caught.value)
    assert "HTTP 401" in message and API_KEY_ENV in message and extractor.id in message
    assert "Amina" not in message  # neither the document nor the server's body
    assert len(_Handler.seen) == 1


def test_unreachable_endpoint_fails_closed() -> None:
    extractor = LlmExtractor.from_endpoint(
        "http://127.0.0.1:9/v1", "x", timeout=2, retries=1, backoff=0.0
    )
    with pytest.raises(ChatEndpointError) as caught:
        extractor.detect(Segment(NOTE))
    assert caught.value.kind == "connection" and caught.value.attempts == 2


def test_retry_policy_backs_off_exponentially_within_bounds(server: str) -> None:
    waits: list[float] = []
    endpoint = ChatEndpoint(
        chat_url(server),
        "auth",
        retry=RetryPolicy(attempts=4, backoff=0.5, factor=2.0, max_delay=1.5),
        sleep=waits.append,
    )
    with pytest.raises(ChatEndpointError):
        endpoint.complete([{"role": "user", "content": "x"}])
    assert waits == []  # 4xx: no retry
    slow = ChatEndpoint(
        chat_url(server),
        "flaky",
        retry=RetryPolicy(attempts=4, backoff=0.5, factor=2.0, max_delay=1.5),
        sleep=waits.append,
    )
    assert slow.complete([{"role": "user", "content": "x"}]) == "[]"
    assert waits == [0.5]
    assert [RetryPolicy(backoff=0.5, max_delay=1.5).delay(n) for n in (1, 2, 3)] == [
        0.5,
        1.0,
        1.5,
    ]


def test_endpoint_configuration() -> None:
    assert chat_url("http://h:8080/v1/") == "http://h:8080/v1/chat/completions"
    assert chat_url("http://h/v1/chat/completions") == "http://h/v1/chat/completions"
    assert endpoint_host("http://user:secret@h.example:8080/v1") == "h.example:8080"
    with pytest.raises(ConfigError):
        EndpointTransport.connect("ftp://h/v1", "m")
    with pytest.raises(ConfigError):
        EndpointTransport.connect("http://h/v1", "m", retries=-1)
    transport = EndpointTransport.connect("http://h:1/v1", "m")
    with pytest.raises(ConfigError, match="on_error"):
        LlmExtractor(transport, on_error="skip")
    with pytest.raises(ConfigError):
        LlmExtractor(transport, chunk_chars=100, chunk_overlap=80)
    named = EndpointTransport.connect("http://h:1/v1", "meta-llama/Llama 3.1:8b")
    assert LlmExtractor(named).id == "backend.llm.meta-llama-Llama-3.1:8b@h:1"


def test_declared_label_set_with_its_mapping(server: str) -> None:
    labels = {"patient": "PERSON", "clinician": Category.PERSON_THIRD_PARTY, "ward": "O"}
    extractor = _extractor(server, "custom", labels=labels)
    assert extractor.labels == {Category.PERSON, Category.PERSON_THIRD_PARTY}
    text = f"{NAMES[0]} in Ward 4."
    spans = extractor.detect(Segment(text))
    assert _texts(text, spans) == [(NAMES[0], "PERSON")]
    assert extractor.report.outside_labels == 1 and not extractor.report.unknown_labels
    user = _Handler.seen[0]["messages"][1]["content"]
    assert "- patient" in user and "- clinician" in user and "ward" not in user.split("<<<")[0]
    with pytest.raises(ConfigError):
        LabelSet.of({"x": "O"})


def test_languages_limit_and_blank_text(server: str) -> None:
    extractor = _extractor(server, "good", languages=["en", "sw"])
    assert extractor.detect(Segment("   \n")) == []
    assert _Handler.seen == []
    with pytest.raises(UnknownLanguageError):
        extractor.detect(Segment(NOTE, lang="de"))
    extractor.detect(Segment(NOTE, lang="sw"))
    assert "written in Kiswahili" in _Handler.seen[0]["messages"][1]["content"]


# --- chunking -------------------------------------------------------------------------------


def _long_note() -> str:
    filler = "The ward round found the patient comfortable and eating well. "
    parts = []
    for index, name in enumerate(NAMES):
        parts.append(filler * 4 + f"Visitor {index}: {name}.\n")
    return "".join(parts) + filler * 2 + f"Discharged on {DATE}.\n"


def test_long_documents_are_chunked_and_merged(server: str) -> None:
    text = _long_note()
    extractor = _extractor(server, "good", chunk_chars=400, chunk_overlap=100)
    spans = extractor.detect(Segment(text))
    assert _texts(text, spans) == [*((n, "PERSON") for n in NAMES), (DATE, "DATE")]
    ranges = chunk_ranges(text, 400, 100)
    assert len(ranges) > 3 and extractor.report.chunks == len(ranges)
    assert len(_Handler.seen) == len(ranges)


def test_chunks_end_on_boundaries_cover_the_text_and_overlap() -> None:
    text = _long_note() * 3
    ranges = chunk_ranges(text, 500, 120)
    assert ranges[0][0] == 0 and ranges[-1][1] == len(text)
    for (a, b), (c, d) in pairwise(ranges):
        assert b - a <= 500 and a < c < b < d  # progress, with overlap
        assert text[b - 1] in "\n " or text[b - 2] == "."  # a line, sentence or word end
        assert text[c - 1].isspace()  # the next chunk starts a word
    for start in range(0, len(text) - 60, 37):  # every 60-character window is whole somewhere
        assert any(a <= start and start + 60 <= b for a, b in ranges)
    assert chunk_ranges("short", 500, 120) == [(0, 5)]
    assert chunk_ranges("x" * 250, 100, 20) == [(0, 100), (80, 180), (160, 250)]


def test_truncated_replies_are_salvaged_and_their_chunk_split(server: str) -> None:
    text = _long_note()
    extractor = _extractor(server, "truncate", chunk_chars=4000, chunk_overlap=200)
    spans = extractor.detect(Segment(text))
    assert _texts(text, spans) == [*((n, "PERSON") for n in NAMES), (DATE, "DATE")]
    assert extractor.report.truncated_replies >= 1 and extractor.report.split_chunks >= 1
    without = _extractor(server, "truncate", split_truncated=False)
    assert _texts(text, without.detect(Segment(text))) == [(NAMES[0], "PERSON")]
    assert without.report.truncated_replies == 1 and without.report.split_chunks == 0


# --- in the pipeline ------------------------------------------------------------------------


def test_deidentifier_with_rules_and_the_llm(server: str) -> None:
    extractor = _extractor(server, "good")
    deid = Deidentifier(detectors=[*profile_detectors("rules"), extractor], policy="tag")
    text = f"{NAMES[0]}, tel +254 712 345678, admitted {DATE}. Mother: {NAMES[2]}."
    out = deid.redact(text, lang="en")
    assert out == "[PERSON], tel [CONTACT_PHONE], admitted [DATE]. Mother: [PERSON]."
    failing = Deidentifier(
        detectors=[*profile_detectors("rules"), _extractor(server, "garbage")], policy="tag"
    )
    with pytest.raises(DetectionError):
        failing.redact(text, lang="en")


# --- local transformers model ---------------------------------------------------------------

_CHAT_TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory) -> dict[str, Path]:
    """A GPT-2 style model (2 layers, hidden 32, seeded random weights) and a byte-level BPE
    tokenizer trained here, saved twice: without and with a chat template."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    corpus = [NOTE, _long_note(), json.dumps(_found(NOTE)), '[{"label": "date", "value": ""}]']
    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        special_tokens=["<|endoftext|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    tokenizer.train_from_iterator(corpus * 5, trainer)
    torch.manual_seed(0)
    config = GPT2Config(
        vocab_size=tokenizer.get_vocab_size(),
        n_positions=2048,
        n_embd=32,
        n_layer=2,
        n_head=2,
        bos_token_id=0,
        eos_token_id=0,
    )
    model = GPT2LMHeadModel(config)
    folders = {}
    for name, template in (("plain", None), ("chat", _CHAT_TEMPLATE)):
        folder = tmp_path_factory.mktemp(f"tiny-{name}")
        wrapped = PreTrainedTokenizerFast(tokenizer_object=tokenizer, eos_token="<|endoftext|>")
        if template:
            wrapped.chat_template = template
        wrapped.save_pretrained(folder)
        model.save_pretrained(folder)
        folders[name] = folder
    return folders


def test_local_model_noise_is_never_a_silent_pass(tiny_lm: dict[str, Path]) -> None:
    extractor = LlmExtractor.from_pretrained(tiny_lm["plain"], max_new_tokens=8)
    assert extractor.id.startswith(f"backend.llm.{tiny_lm['plain'].name}@")
    try:
        spans = extractor.detect(Segment(NOTE))
    except DetectionError as error:
        assert "re-ask" in str(error) and not any(n in str(error) for n in NAMES)
        assert extractor.report.requests == 2
    else:  # random weights that happened to write JSON: only located values become spans
        assert all(NOTE[s.start : s.end].strip() for s in spans)
        assert extractor.report.copied_value_errors + len(spans) <= extractor.report.extractions


@pytest.mark.parametrize("kind", ["plain", "chat"])
def test_local_model_prompt_and_decode_path(
    tiny_lm: dict[str, Path], kind: str, monkeypatch
) -> None:
    import torch

    extractor = LlmExtractor.from_pretrained(tiny_lm[kind], max_new_tokens=64, revision="r1")
    assert extractor.id == f"backend.llm.{tiny_lm[kind].name}@r1"
    transport = extractor.transport
    reply = json.dumps(_found(NOTE))
    reply_ids = transport.tokenizer(reply, add_special_tokens=False)["input_ids"]
    calls: list[dict[str, Any]] = []

    def generate(**kwargs: Any) -> Any:
        calls.append(kwargs)
        ids = kwargs["input_ids"]
        return torch.cat([ids, torch.tensor([reply_ids])], dim=1)

    monkeypatch.setattr(transport.model, "generate", generate)
    spans = extractor.detect(Segment(NOTE))
    assert len(spans) == 5 and {s.label for s in spans} == {Category.PERSON, Category.DATE}
    (call,) = calls
    assert call["do_sample"] is False and call["max_new_tokens"] == 64
    prompt = transport.tokenizer.decode(call["input_ids"][0])
    assert NOTE.strip() in prompt and "human_name" in prompt
    marker = "<|assistant|>" if kind == "chat" else "Assistant:"
    assert prompt.rstrip().endswith(marker)


def test_chat_template_without_a_system_role(tiny_lm: dict[str, Path], monkeypatch) -> None:
    extractor = LlmExtractor.from_pretrained(tiny_lm["chat"], max_new_tokens=4)
    tokenizer = extractor.transport.tokenizer
    strict = (
        "{% for m in messages %}{% if m['role'] == 'system' %}"
        "{{ raise_exception('no system role') }}{% endif %}"
        "<|{{ m['role'] }}|>{{ m['content'] }}\n{% endfor %}<|assistant|>"
    )
    monkeypatch.setattr(tokenizer, "chat_template", strict)
    prompt, templated = extractor.transport.render(extractor.messages(NOTE, "en"))
    assert templated and "<|system|>" not in prompt
    assert prompt.startswith("<|user|>You find personal identifiers") and NOTE in prompt
    monkeypatch.setattr(tokenizer, "chat_template", "{{ raise_exception('broken') }}")
    with pytest.raises(DetectionError, match="chat template"):
        extractor.detect(Segment(NOTE))


def test_local_model_context_overflow_fails_closed(tiny_lm: dict[str, Path], monkeypatch) -> None:
    extractor = LlmExtractor.from_pretrained(tiny_lm["plain"], max_new_tokens=8)
    monkeypatch.setattr(extractor.transport.model.config, "n_positions", 32)
    with pytest.raises(DetectionError, match="context"):
        extractor.detect(Segment(NOTE))


def test_local_model_that_cannot_load_is_unavailable(tmp_path: Path) -> None:
    with pytest.raises(DetectorUnavailableError):
        LlmExtractor.from_pretrained(tmp_path / "missing")
    (tmp_path / "config.json").write_text("{not json")
    with pytest.raises(DetectorUnavailableError):
        LlmExtractor.from_pretrained(tmp_path)


def test_a_composition_file_builds_the_endpoint_extractor(server: str, tmp_path: Path) -> None:
    """Rules + an LLM on an OpenAI-compatible endpoint, declared in a composition file."""
    path = tmp_path / "llm.toml"
    path.write_text(
        f"""
[detectors.rules]
kind = "rules"
[detectors.llm]
kind = "llm"
endpoint = "{server}"
model = "good"
categories = ["PERSON"]
[languages]
"*" = ["rules", "llm"]
""",
        "utf-8",
    )
    deid = Deidentifier(profile=str(path), policy="tag")
    out = deid.redact(f"Seen Amina Njeri on {DATE}, tel 0772 123456.", lang="en")
    assert out == "Seen [PERSON] on [DATE], tel [CONTACT_PHONE]."
