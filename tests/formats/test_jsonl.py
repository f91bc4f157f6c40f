import pytest

from polydeid import DecodingError, RecordError
from polydeid.formats.jsonl import JsonlFailure, JsonlRecord, looks_like_jsonl, read_jsonl
from polydeid.formats.text import decode_utf8


def test_records_and_failures_keep_order_and_lines():
    data = b'{"text": "a", "id": 1}\n\n{oops\n[1]\n{"id": 2}\n{"text": "b", "lang": "sw"}\n'
    items = list(read_jsonl(data, source="in.jsonl"))
    assert [type(i) for i in items] == [
        JsonlRecord,
        JsonlFailure,
        JsonlFailure,
        JsonlFailure,
        JsonlRecord,
    ]
    assert [i.line for i in items] == [1, 3, 4, 5, 6]
    assert str(items[1].error).startswith("[PD202] in.jsonl:3: malformed JSON")
    assert "object" in str(items[2].error) and '"text"' in str(items[3].error)
    assert items[4].lang == "sw"


def test_bad_utf8_line_is_located():
    items = list(read_jsonl(b'{"text": "ok"}\n{"text": "\xff"}\n', source="x.jsonl"))
    assert isinstance(items[1], JsonlFailure)
    assert isinstance(items[1].error, DecodingError)
    assert "x.jsonl:2" in str(items[1].error)


def test_decode_utf8_locates_line_and_column():
    with pytest.raises(DecodingError) as info:
        decode_utf8(b"line one\nab\xc3(", source="note.txt")
    assert "note.txt:2" in str(info.value) and "column 3" in str(info.value)


def test_error_message_does_not_echo_content():
    items = list(read_jsonl(b'{"text": "Secret Name", oops}\n', source="s.jsonl"))
    assert isinstance(items[0], JsonlFailure) and "Secret" not in str(items[0].error)


def test_type_checks():
    with pytest.raises(RecordError):
        from polydeid.formats.jsonl import parse_record

        parse_record(b'{"text": "a", "lang": 3}', source="s", line=1)


def test_looks_like_jsonl():
    assert looks_like_jsonl(b'{"text": "a"}\n\n{"text": "b"}\n')
    assert not looks_like_jsonl(b"Patient note\n")
