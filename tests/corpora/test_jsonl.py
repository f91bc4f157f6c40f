import json
from pathlib import Path

from polydeid.corpora.jsonl import read_jsonl_corpus

FIXTURES = Path(__file__).parent / "fixtures" / "jsonl"


def test_records_become_documents_with_spans_and_facts():
    corpus = read_jsonl_corpus(FIXTURES / "gold.jsonl", lang="en")
    assert not corpus.failures
    first, second = corpus.documents
    assert (first.id, first.lang, second.id, second.lang) == ("sw-1", "sw", "2", "en")
    assert [(s.label.value, first.text[s.start : s.end], s.source) for s in first.spans] == [
        ("PERSON", "Juma Hassan", "gold:PERSON"),
        ("CONTACT_PHONE", "0712 345 678", "gold:CONTACT_PHONE"),
    ]
    assert [(f.label.value, first.text[f.start : f.end]) for f in first.facts] == [
        ("DOSE", "500 mg")
    ]
    assert second.spans == ()


def test_other_scheme_and_dropped_labels(tmp_path):
    text = "Okello seen at Lacor, Gulu."
    record = {
        "id": "a",
        "lang": "luo",
        "text": text,
        "spans": [
            {"start": 0, "end": 6, "label": "PER"},
            {"start": 15, "end": 20, "label": "MISC"},
            {"start": 22, "end": 26, "label": "LOC"},
        ],
    }
    (tmp_path / "g.jsonl").write_text(json.dumps(record) + "\n", "utf-8")
    doc = read_jsonl_corpus(tmp_path, scheme="conll").documents[0]
    assert [(s.label.value, text[s.start : s.end]) for s in doc.spans] == [
        ("PERSON", "Okello"),
        ("LOCATION_VILLAGE", "Gulu"),
    ]


def test_malformed_lines_are_located_and_the_rest_read(tmp_path):
    good = {
        "id": "ok",
        "text": "Wanjiru",
        "lang": "sw",
        "spans": [{"start": 0, "end": 7, "label": "PERSON"}],
    }
    lines = [
        json.dumps(good),
        '{"text": "Wanjiru", "spans": [',  # bad JSON
        json.dumps(
            {"text": "Wanjiru", "lang": "sw", "spans": [{"start": 0, "end": 70, "label": "PERSON"}]}
        ),  # past the end
        json.dumps(
            {"text": "Wanjiru", "lang": "sw", "spans": [{"start": 0, "end": 7, "label": "NOPE"}]}
        ),  # unknown label
        json.dumps({"text": "Wanjiru", "spans": []}),  # no language anywhere
        json.dumps({"line": 9, "error": {"code": "PD202"}}),  # an error line from `detect`
    ]
    (tmp_path / "g.jsonl").write_text("\n".join(lines) + "\n", "utf-8")
    corpus = read_jsonl_corpus(tmp_path / "g.jsonl")
    assert [d.id for d in corpus.documents] == ["ok"]
    located = [str(f.error) for f in corpus.failures]
    assert [any(f"g.jsonl:{n}" in m for m in located) for n in range(2, 7)] == [True] * 5
    assert "spans[0]" in located[1] and "outside the text" in located[1]
    assert all("Wanjiru" not in m for m in located)
