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


def test_facts_and_meta_round_trip_through_the_exporter(tmp_path):
    from polydeid import Category, Fact, Span
    from polydeid.corpora.document import AnnotatedDocument
    from polydeid.corpora.jsonl import read_jsonl_corpus
    from polydeid.synth.export import export_jsonl

    text = "Simu 0772 123456; Hb 11.2 g/dL."
    doc = AnnotatedDocument(
        id="d1",
        text=text,
        lang="sw",
        spans=(Span(5, 16, Category.CONTACT_PHONE, "gold:CONTACT_PHONE"),),
        facts=(Span(18, 30, Fact.LAB_VALUE, "gold:LAB_VALUE"),),
        meta={"document_type": "nursing_note", "edge_cases": ["spaced_phone"]},
    )
    export_jsonl([doc], tmp_path / "out.jsonl")
    (back,) = read_jsonl_corpus(tmp_path / "out.jsonl").documents
    assert [(s.start, s.end, s.label) for s in back.spans] == [(5, 16, Category.CONTACT_PHONE)]
    assert [(s.start, s.end, s.label) for s in back.facts] == [(18, 30, Fact.LAB_VALUE)]
    assert back.meta["document_type"] == "nursing_note"
    assert list(back.meta["edge_cases"]) == ["spaced_phone"]


def test_unknown_fact_kind_is_a_located_error(tmp_path):
    from polydeid.corpora.jsonl import read_jsonl_corpus

    path = tmp_path / "bad.jsonl"
    path.write_text(
        '{"id": 1, "lang": "en", "text": "abc def", "spans": [],'
        ' "facts": [{"start": 0, "end": 3, "kind": "NOPE"}]}\n',
        "utf-8",
    )
    corpus = read_jsonl_corpus(path)
    assert not corpus.documents
    assert "bad.jsonl:1:facts[0]" in str(corpus.failures[0].error)
