import json
from pathlib import Path

import pytest

from polydeid.corpora.presidio_research import is_honorific, read_presidio_research

FIXTURES = Path(__file__).parent / "fixtures" / "presidio"


def labelled(doc):
    return [(s.label.value, doc.text[s.start : s.end], s.source) for s in doc.spans]


def test_records_map_and_honorific_titles_are_dropped():
    corpus = read_presidio_research(FIXTURES / "sample.json")
    assert not corpus.failures and [d.id for d in corpus.documents] == [
        "sample:0",
        "sample:1",
        "sample:2",
    ]
    first, second, third = corpus.documents
    assert labelled(first) == [("PERSON", "Tomas Berg", "gold:PERSON")]
    assert first.meta["honorifics_dropped"] == 1
    assert labelled(second) == [
        ("PROFESSION", "nurse", "gold:TITLE"),  # a job title on its own line: kept
        ("PERSON", "Joan Ruiz", "gold:PERSON"),
        ("LOCATION_ADDRESS", "12 Elm St", "gold:STREET_ADDRESS"),
        ("LOCATION_VILLAGE", "Springfield", "gold:GPE"),
    ]
    assert labelled(third) == [  # PREFIX maps to O
        ("PERSON", "Ada Obi", "gold:PERSON"),
        ("CONTACT_OTHER", "ada@example.org", "gold:EMAIL_ADDRESS"),
        ("DATE", "Monday", "gold:DATE_TIME"),
    ]
    assert all(d.meta["text_mismatches"] == 0 for d in corpus.documents)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Mr. Lee", True),
        ("mrs Lee", True),
        ("Miss Lee", True),
        ("Dr.\nLee", False),
        ("Nurse", False),
        ("Engineer Lee", False),
    ],
    ids=range(6),
)
def test_is_honorific(text, expected):
    end = len(text.split()[0])
    assert is_honorific(text, 0, end) is expected


def test_value_mismatch_counted_and_bad_records_located(tmp_path):
    records = [
        {
            "full_text": "Call Ana",
            "spans": [
                {
                    "entity_type": "PERSON",
                    "entity_value": "Ann",
                    "start_position": 5,
                    "end_position": 8,
                }
            ],
        },
        {
            "full_text": "Call Ana",
            "spans": [
                {
                    "entity_type": "PERSON",
                    "entity_value": "Ana",
                    "start_position": 5,
                    "end_position": 80,
                }
            ],
        },
        {
            "full_text": "Call Ana",
            "spans": [
                {
                    "entity_type": "ALIEN",
                    "entity_value": "Ana",
                    "start_position": 5,
                    "end_position": 8,
                }
            ],
        },
        {"spans": []},
    ]
    (tmp_path / "a.json").write_text(json.dumps(records), "utf-8")
    (tmp_path / "b.json").write_text("[{oops", "utf-8")
    corpus = read_presidio_research(tmp_path)
    assert [d.id for d in corpus.documents] == ["a:0"]
    assert corpus.documents[0].meta["text_mismatches"] == 1
    messages = [str(f.error) for f in corpus.failures]
    assert "a.json:record[1].spans[0]" in messages[0] and "outside" in messages[0]
    assert "a.json:record[2].spans[0]" in messages[1] and "unknown category" in messages[1]
    assert "a.json:record[3]" in messages[2] and "b.json:1" in messages[3]
    assert all("Ana" not in m for m in messages)
