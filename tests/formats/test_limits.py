"""Parse limits: deep nesting and huge numbers give a coded error in every JSON reader."""

import json

import pytest

from polydeid.core.errors import InputLimitError
from polydeid.formats import limits
from polydeid.formats.fhir import FhirReader
from polydeid.formats.json import JsonReader, validate
from polydeid.formats.jsonl import JsonlFailure, parse_object, read_jsonl

DEEP = "[" * 10_000 + "]" * 10_000
BIG = "9" * 100_000


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def test_limits_loads_within_and_past_the_depth():
    assert limits.loads(nested(limits.MAX_DEPTH)) is not None
    with pytest.raises(InputLimitError) as caught:
        limits.loads(nested(limits.MAX_DEPTH + 1), location="f:3")
    assert caught.value.code == "PD203"
    assert caught.value.location == "f:3"


def test_brackets_inside_strings_do_not_count():
    text = json.dumps({"text": "[" * 5000 + "{" * 5000})
    assert limits.loads(text)["text"].startswith("[[")


def test_limits_loads_refuses_long_numbers_keeps_short_ones():
    assert limits.loads("[" + "9" * limits.MAX_NUMBER_CHARS + "]")[0] > 0
    assert limits.loads('{"x": 1.5e3}') == {"x": 1500.0}
    for token in (BIG, "1." + BIG, "-" + BIG):
        with pytest.raises(InputLimitError):
            limits.loads('{"n": ' + token + "}")


def test_limits_loads_bytes_and_malformed_json():
    assert limits.loads(b'{"a": 1}') == {"a": 1}
    with pytest.raises(json.JSONDecodeError):
        limits.loads("{")


@pytest.mark.parametrize("value", [DEEP, BIG])
def test_jsonl_line_past_a_limit_is_a_coded_failure_among_good_ones(value):
    good = json.dumps({"text": "a note"}).encode()
    bad = ('{"text": "x", "v": ' + value + "}").encode()
    items = list(read_jsonl(b"\n".join([good, bad, good]), source="in.jsonl"))
    assert [type(i).__name__ for i in items] == ["JsonlRecord", "JsonlFailure", "JsonlRecord"]
    failure = items[1]
    assert isinstance(failure, JsonlFailure)
    assert failure.error.code == "PD203"
    assert failure.error.location == "in.jsonl:2"
    with pytest.raises(InputLimitError):
        parse_object(bad, source="in.jsonl", line=2)


@pytest.mark.parametrize("value", [DEEP, BIG])
def test_json_scanner_refuses_past_the_limits(value):
    text = '{"name": "x", "v": ' + value + "}"
    with pytest.raises(InputLimitError) as caught:
        JsonReader().read(text, source="doc.json")
    assert caught.value.location.startswith("doc.json:1:")
    with pytest.raises(InputLimitError):
        validate(text + "\n" + text, source="doc.jsonl", lines=True)


def test_json_scanner_reads_up_to_the_depth():
    text = '{"a": ' + nested(limits.MAX_DEPTH - 1) + "}"
    JsonReader().read(text, source="doc.json")


@pytest.mark.parametrize("value", [DEEP, BIG])
def test_fhir_refuses_past_the_limits(value):
    text = '{"resourceType": "Patient", "v": ' + value + "}"
    with pytest.raises(InputLimitError):
        FhirReader().read(text, source="p.json")


def test_an_unterminated_string_hides_the_brackets_after_it():
    text = "[" * 150 + '"' + '\\"' * 1000 + "[" * 100
    limits.check_depth(text)  # the last brackets are inside the (unterminated) string
    with pytest.raises(json.JSONDecodeError):
        limits.loads(text)
