"""Canary: unique fake identifiers pushed through every entry point never reach a log record,
a warning, an exception message, or the CLI's progress and error output."""

from __future__ import annotations

import json
import logging
import warnings

import pytest

from polydeid import Deidentifier, PolydeidError, Segment
from polydeid.cli import main

CANARIES = {
    "email": "zq.canary.7731@example.org",
    "phone": "+256 772 918273",
    "nin": "CM9203410ZQXKV",
    "mrn": "ZQX/2024/77310",
    "date": "17 Septemba 2023",
}
TEXT = (
    f"Mgonjwa: barua pepe {CANARIES['email']}, simu {CANARIES['phone']}, NIN {CANARIES['nin']}, "
    f"namba ya usajili {CANARIES['mrn']}, alilazwa tarehe {CANARIES['date']}."
)
FRAGMENTS = [*CANARIES.values(), "zq.canary", "918273", "ZQX", "77310"]


def assert_clean(*outputs: str) -> None:
    for output in outputs:
        for fragment in FRAGMENTS:
            assert fragment not in output, "a canary fragment leaked"


@pytest.fixture
def logs(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.DEBUG)
    return caplog


@pytest.mark.torch
@pytest.mark.parametrize("policy", ["tag", "numbered", "mask", "surrogate", "hash", "encrypt"])
def test_api_redaction_leaks_nothing(policy: str, logs: pytest.LogCaptureFixture) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        deid = Deidentifier(policy=policy, key=b"k" * 32)
        spans = deid.detect(TEXT, lang="sw")
        out = deid.redact(TEXT, lang="sw", patient_id="p1")
        result = deid.redact_segment(Segment(TEXT, lang="sw"))
    # every canary is detected (a label word such as "NIN" may be redacted too)
    for canary in CANARIES.values():
        start = TEXT.index(canary)
        assert any(s.start <= start and start + len(canary) <= s.end for s in spans)
    assert_clean(out, repr(spans), repr(result.replacements), repr(deid))
    assert_clean(*(r.getMessage() for r in logs.records), *(str(w.message) for w in caught))


@pytest.mark.torch
def test_cli_success_and_failure_output_is_clean(tmp_path, capsys, logs) -> None:
    good = json.dumps({"id": "r1", "lang": "sw", "text": TEXT})
    malformed = '{"id": "r2", "text": "' + TEXT + '"'  # truncated JSON holding the canaries
    bad_lang = json.dumps({"id": "r3", "lang": "qq", "text": TEXT})
    src = tmp_path / "in.jsonl"
    src.write_text("\n".join([good, malformed, bad_lang]) + "\n", "utf-8")
    for command in (["detect"], ["redact", "--policy", "numbered"]):
        out = tmp_path / f"{command[0]}.jsonl"
        assert main([*command[:1], str(src), "-o", str(out), *command[1:]]) == 1
        written = out.read_text("utf-8").splitlines()
        assert len(written) == 3
        assert_clean(*written[1:])  # error records carry location and code only
        if command[0] == "redact":
            assert_clean(written[0])
    captured = capsys.readouterr()
    assert_clean(captured.err, *(r.getMessage() for r in logs.records))


@pytest.mark.torch
def test_exceptions_carry_no_text() -> None:
    deid = Deidentifier(policy="tag")
    with pytest.raises(PolydeidError) as info:
        deid.detect(TEXT, lang="not-a-language")
    assert_clean(str(info.value), repr(info.value))
    with pytest.raises(PolydeidError) as info:
        Deidentifier(policy="hash").redact(TEXT, lang="sw")  # no key: fails closed
    assert_clean(str(info.value))


def test_value_types_holding_text_do_not_show_it_in_repr() -> None:
    from polydeid.corpora.document import AnnotatedDocument
    from polydeid.formats.jsonl import JsonlRecord

    values = [
        Segment(TEXT, lang="sw"),
        JsonlRecord(1, {"text": TEXT}),
        AnnotatedDocument(id="d", text=TEXT, lang="sw", spans=()),
    ]
    assert_clean(*(repr(v) for v in values), *(str(v) for v in values))
