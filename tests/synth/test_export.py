import json
import logging
import unicodedata
from types import MappingProxyType

import pytest

from polydeid.core.errors import RecordError
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category, Fact, scheme
from polydeid.corpora.conll import read_conll
from polydeid.corpora.document import AnnotatedDocument
from polydeid.corpora.jsonl import read_jsonl_corpus
from polydeid.synth.export import (
    ExportReport,
    export_bio,
    export_hf,
    export_jsonl,
    export_sft,
    family_names,
    label_names,
    tag_names,
)
from polydeid.text.wordgrid import align, bio_tags, words

C = Category


def _doc(doc_id, lang, text, marks, facts=(), meta=None):
    """A document whose spans are given as (substring, label, occurrence)."""
    spans = []
    for part, label, *nth in marks:
        start = -1
        for _ in range((nth[0] if nth else 0) + 1):
            start = text.index(part, start + 1)
        spans.append(Span(start, start + len(part), label, f"gold:{label.value}"))
    fact_spans = []
    for part, kind in facts:
        start = text.index(part)
        fact_spans.append(Span(start, start + len(part), kind, f"gold:{kind.value}"))
    return AnnotatedDocument(
        id=doc_id,
        text=text,
        lang=lang,
        spans=tuple(sorted(spans, key=lambda s: (s.start, s.end))),
        facts=tuple(fact_spans),
        meta=MappingProxyType(meta or {}),
    )


SW_TEXT = (
    "Mgonjwa Ng'ang'a Wanjiru (miaka 34), simu 0712-345678, alilazwa Nairobi tarehe "
    "03/03/2024.\nMama yake Mary-Jane Otieno alimtembelea. Ng'ang'a Wanjiru aliruhusiwa."
)
VI_TEXT = unicodedata.normalize(
    "NFD",
    "Bệnh nhân Nguyễn Văn An, CCCD 001203004567, email an.nguyen@example.vn, "
    "trang web https://example.vn/an, nhập viện Bạch Mai. Amoxicillin 500 mg.",
)
DE_TEXT = (
    "Patient Jürgen O’Brien, geb. 12.03.1980, KVNR A123456780, wohnhaft Hauptstraße 5, "
    "10115 Berlin, Arbeitgeber Siemens AG. Befund an Dr. Müllers Praxis."
)

DOCS = (
    _doc(
        "sw-1",
        "sw",
        SW_TEXT,
        [
            ("Ng'ang'a Wanjiru", C.PERSON),
            ("miaka 34", C.AGE),
            ("0712-345678", C.CONTACT_PHONE),
            ("Nairobi", C.LOCATION_VILLAGE),
            ("03/03/2024", C.DATE),
            ("Mary-Jane Otieno", C.PERSON_THIRD_PARTY),
            ("Ng'ang'a Wanjiru", C.PERSON, 1),
        ],
        meta={"document_type": "ward_note", "edge_cases": ("apostrophe_name",)},
    ),
    _doc(
        "vi-1",
        "vi",
        VI_TEXT,
        [
            (unicodedata.normalize("NFD", "Nguyễn Văn An"), C.PERSON),
            ("001203004567", C.ID_NATIONAL),
            ("an.nguyen@example.vn", C.CONTACT_OTHER),
            ("https://example.vn/an", C.CONTACT_OTHER),
            (unicodedata.normalize("NFD", "Bạch Mai"), C.LOCATION_FACILITY),
        ],
        facts=[("500 mg", Fact.DOSE)],
        meta={"text_format": "plain", "nested": MappingProxyType({"k": (1, 2)})},
    ),
    _doc(
        "de-1",
        "de",
        DE_TEXT,
        [
            ("Jürgen O’Brien", C.PERSON),
            ("12.03.1980", C.DATE),
            ("A123456780", C.ID_OTHER),
            ("Hauptstraße 5, 10115 Berlin", C.LOCATION_ADDRESS),
            ("Siemens AG", C.ORGANIZATION),
            ("Müller", C.PERSON_THIRD_PARTY),  # ends inside the word "Müllers"
        ],
    ),
)
SPAN_COUNT = sum(len(d.spans) for d in DOCS)


def _joined_words(text, start, end):
    return " ".join(text[s:e] for s, e in words(text) if start <= s and e <= end)


def test_label_sets():
    assert len(tag_names(label_names())) == 1 + 2 * len(Category)
    east_africa = label_names("east_africa")
    assert len(east_africa) == 14
    assert len(tag_names(east_africa)) == 29
    assert C.ID_OTHER not in east_africa and C.ORGANIZATION not in east_africa
    assert set(family_names().values()) == set(scheme("pii_families7").mapping)
    assert family_names()[C.ID_RECORD] == "id_number"
    assert C.PERSON_CLAN not in family_names() and C.LOCATION_VILLAGE not in family_names()


def test_jsonl_round_trip(tmp_path):
    path = tmp_path / "out" / "corpus.jsonl"
    report = export_jsonl(iter(DOCS), path)
    assert report == ExportReport(path, 3, SPAN_COUNT, facts=1)
    corpus = read_jsonl_corpus(path)
    assert not corpus.failures
    for got, want in zip(corpus.documents, DOCS, strict=True):
        assert (got.id, got.text, got.lang) == (want.id, want.text, want.lang)
        assert [(s.start, s.end, s.label) for s in got.spans] == [
            (s.start, s.end, s.label) for s in want.spans
        ]
    records = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
    assert records[1]["facts"] == [
        {"start": VI_TEXT.index("500 mg"), "end": VI_TEXT.index("500 mg") + 6, "kind": "DOSE"}
    ]
    assert records[0]["meta"] == {"document_type": "ward_note", "edge_cases": ["apostrophe_name"]}
    assert records[1]["meta"]["nested"] == {"k": [1, 2]}
    assert VI_TEXT in path.read_text("utf-8")  # UTF-8 as written, combining marks unescaped


def test_jsonl_meta_that_is_not_json_names_only_the_key(tmp_path):
    doc = _doc("x", "en", "Okello", [("Okello", C.PERSON)], meta={"when": object()})
    with pytest.raises(RecordError, match="'when'") as info:
        export_jsonl([doc], tmp_path / "x.jsonl")
    assert "Okello" not in str(info.value)
    assert not list(tmp_path.iterdir())


def _aligned_expectations(doc, names):
    """(label, joined words) of each mapped span, the unaligned ones widened to whole words."""
    grid = words(doc.text)
    out = []
    for s in doc.spans:
        if s.label not in names:
            continue
        where = align(grid, s)
        start, end = grid[where.first][0], grid[where.last][1]
        out.append((s.label, _joined_words(doc.text, start, end)))
    return out


def test_bio_round_trip_canonical(tmp_path):
    path = tmp_path / "corpus.conll"
    report = export_bio(DOCS, path)
    assert (report.documents, report.spans, report.unaligned, report.unmapped) == (
        3,
        SPAN_COUNT,
        1,
        0,
    )
    corpus = read_conll(path, scheme="polydeid", lang="en")
    assert not corpus.failures
    assert len(corpus.documents) == 3
    for got, want in zip(corpus.documents, DOCS, strict=True):
        assert got.text.split() == [want.text[s:e] for s, e in words(want.text)]
        spans = [(s.label, got.text[s.start : s.end]) for s in got.spans]
        assert spans == _aligned_expectations(want, label_names())


def test_bio_lines_are_word_and_tag(tmp_path):
    path = tmp_path / "c.conll"
    export_bio(DOCS[:1], path, docstart=False)
    lines = path.read_text("utf-8").split("\n")
    rows = [line.split(" ") for line in lines if line]
    grid = words(SW_TEXT)
    assert [r[0] for r in rows] == [SW_TEXT[s:e] for s, e in grid]
    assert [r[1] for r in rows] == bio_tags(grid, DOCS[0].spans)
    assert rows[1] == ["Ng'ang'a", "B-PERSON"]
    assert lines[-2:] == ["", ""]


def test_bio_east_africa_scheme(tmp_path):
    path = tmp_path / "ea.conll"
    report = export_bio(DOCS, path, scheme="east_africa")
    # ID_OTHER, LOCATION_ADDRESS and ORGANIZATION have no East African label
    assert report.unmapped == 3
    assert report.spans == SPAN_COUNT - 3
    allowed = {*tag_names(label_names("east_africa")), "O"}
    tags = {line.split(" ")[1] for line in path.read_text("utf-8").splitlines() if line}
    assert tags - {"O"} <= allowed and "B-PERSON" in tags
    corpus = read_conll(path, scheme="east_africa", lang="de")
    assert not corpus.failures
    names = label_names("east_africa")
    for got, want in zip(corpus.documents, DOCS, strict=True):
        spans = [(s.label, got.text[s.start : s.end]) for s in got.spans]
        assert spans == _aligned_expectations(want, names)


def test_bio_sentences_never_split_a_span(tmp_path):
    path = tmp_path / "s.conll"
    export_bio(DOCS, path, sentences=True)
    blocks = [b for b in path.read_text("utf-8").split("\n\n") if b.strip()]
    starts = [b.split("\n")[0].split(" ")[0] for b in blocks if "-DOCSTART-" not in b]
    # line break, ". M", ". A", ". N", ". B", "Dr. M"; not "geb. 12" (a digit follows)
    assert starts == [
        "Mgonjwa",
        "Mama",
        "Ng'ang'a",
        unicodedata.normalize("NFD", "Bệnh"),
        "Amoxicillin",
        "Patient",
        "Befund",
        "Müllers",
    ]
    for block in blocks:
        first = block.strip().split("\n")[0]
        assert not first.endswith(tuple(f"I-{c.value}" for c in Category))
    corpus = read_conll(path, scheme="polydeid", lang="sw")
    for got, want in zip(corpus.documents, DOCS, strict=True):
        spans = [(s.label, got.text[s.start : s.end]) for s in got.spans]
        assert spans == _aligned_expectations(want, label_names())


def test_bio_sentence_break_inside_a_span_is_not_taken(tmp_path):
    text = "Anaishi Plot 12.\nKampala Road. Alikuja jana."
    doc = _doc("lg-1", "lg", text, [("Plot 12.\nKampala Road", C.LOCATION_ADDRESS)])
    path = tmp_path / "s.conll"
    export_bio([doc], path, sentences=True, docstart=False)
    blocks = [b.split("\n") for b in path.read_text("utf-8").split("\n\n") if b.strip()]
    assert [b[0] for b in blocks] == ["Anaishi O", "Alikuja O"]


def test_bio_skips_documents_without_words(tmp_path):
    blank = AnnotatedDocument(id="blank", text=" \n ", lang="en", spans=())
    report = export_bio([blank, DOCS[2]], tmp_path / "b.conll")
    assert (report.documents, report.skipped) == (1, 1)


def test_hf_jsonl_backend(tmp_path):
    path = tmp_path / "hf"
    report = export_hf(DOCS, path, backend="jsonl", scheme="east_africa")
    assert (report.documents, report.unaligned, report.unmapped) == (3, 1, 3)
    assert sorted(p.name for p in path.iterdir()) == [
        "data.jsonl",
        "dataset_info.json",
        "label_names.json",
    ]
    labels = json.loads((path / "label_names.json").read_text("utf-8"))
    assert len(labels) == 29 and labels[0] == "O"
    info = json.loads((path / "dataset_info.json").read_text("utf-8"))
    assert info["features"]["ner_tags"]["feature"]["names"] == labels
    rows = [json.loads(line) for line in (path / "data.jsonl").read_text("utf-8").splitlines()]
    assert [r["id"] for r in rows] == ["sw-1", "vi-1", "de-1"]
    assert [r["lang"] for r in rows] == ["sw", "vi", "de"]
    names = label_names("east_africa")
    for row, doc in zip(rows, DOCS, strict=True):
        grid = words(doc.text)
        assert row["tokens"] == [doc.text[s:e] for s, e in grid]
        assert [labels[i] for i in row["ner_tags"]] == bio_tags(grid, doc.spans, names=names)
    # NFD Vietnamese: combining marks stay inside their words
    assert unicodedata.normalize("NFD", "Nguyễn") in rows[1]["tokens"]


def test_hf_replaces_an_existing_directory(tmp_path):
    path = tmp_path / "hf"
    export_hf(DOCS, path, backend="jsonl")
    export_hf(DOCS[:1], path, backend="jsonl")
    assert len((path / "data.jsonl").read_text("utf-8").splitlines()) == 1
    assert [p.name for p in tmp_path.iterdir()] == ["hf"]


def test_hf_jsonl_loads_with_datasets(tmp_path):
    datasets = pytest.importorskip("datasets")
    path = tmp_path / "hf"
    export_hf(DOCS, path, backend="jsonl")
    info = json.loads((path / "dataset_info.json").read_text("utf-8"))
    loaded = datasets.load_dataset(
        "json",
        data_files=str(path / "data.jsonl"),
        features=datasets.Features.from_dict(info["features"]),
        split="train",
    )
    assert loaded.features["ner_tags"].feature.names[1] == "B-PERSON"
    assert loaded[0]["tokens"][1] == "Ng'ang'a"


def test_hf_datasets_backend(tmp_path):
    datasets = pytest.importorskip("datasets")
    path = tmp_path / "hf"
    report = export_hf(DOCS, path, backend="datasets")
    assert report.documents == 3
    loaded = datasets.load_from_disk(str(path))
    names = loaded.features["ner_tags"].feature.names
    assert names == tag_names(label_names())
    assert [names[i] for i in loaded[0]["ner_tags"]][1] == "B-PERSON"


def _sft(path):
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def test_sft_pii7(tmp_path):
    path = tmp_path / "sft.jsonl"
    report = export_sft(DOCS, path)
    records = _sft(path)
    assert len(records) == report.documents == 3
    families = set(scheme("pii_families7").mapping)
    answers = []
    for record, doc in zip(records, DOCS, strict=True):
        roles = [m["role"] for m in record["messages"]]
        assert roles == ["system", "user", "assistant"]
        assert record["messages"][1]["content"].endswith("\n\n" + doc.text)
        answer = json.loads(record["messages"][2]["content"])
        assert all(item["value"] in doc.text for item in answer)
        assert {item["label"] for item in answer} <= families
        answers.append([(item["label"], item["value"]) for item in answer])
    assert answers[0] == [
        ("human_name", "Ng'ang'a Wanjiru"),
        ("phone_number", "0712-345678"),
        ("date", "03/03/2024"),
        ("human_name", "Mary-Jane Otieno"),
    ]
    assert [label for label, _ in answers[1]] == ["human_name", "id_number", "email_address"]
    assert [label for label, _ in answers[2]] == [
        "human_name",
        "date",
        "id_number",
        "address",
        "company_name",
        "human_name",
    ]
    # left out: sw age and village; vi URL and facility; the repeated name is a duplicate
    assert (report.unmapped, report.spans) == (4, SPAN_COUNT - 4)


def test_sft_canonical_keeps_every_category(tmp_path):
    path = tmp_path / "sft.jsonl"
    report = export_sft(DOCS, path, families="canonical")
    assert report.unmapped == 0
    answer = json.loads(_sft(path)[1]["messages"][2]["content"])
    assert [a["label"] for a in answer] == [
        "PERSON",
        "ID_NATIONAL",
        "CONTACT_OTHER",
        "CONTACT_OTHER",
        "LOCATION_FACILITY",
    ]
    assert "LOCATION_FACILITY" in _sft(path)[1]["messages"][1]["content"].split("\n\n")[0]


def test_sft_rejects_unknown_families(tmp_path):
    with pytest.raises(Exception, match="families"):
        export_sft(DOCS, tmp_path / "x.jsonl", families="pii9")  # type: ignore[arg-type]


def test_failed_export_keeps_the_previous_file(tmp_path):
    path = tmp_path / "c.jsonl"
    export_jsonl(DOCS, path)
    before = path.read_bytes()

    def broken():
        yield DOCS[0]
        raise RuntimeError("reader failed")

    for export in (export_jsonl, export_bio, export_sft):
        with pytest.raises(RuntimeError):
            export(broken(), path)
        assert path.read_bytes() == before
    with pytest.raises(RuntimeError):
        export_hf(broken(), tmp_path / "hf", backend="jsonl")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.jsonl"]


def test_logs_carry_no_identifier(tmp_path, caplog):
    caplog.set_level(logging.DEBUG, logger="polydeid")
    export_jsonl(DOCS, tmp_path / "a.jsonl")
    export_bio(DOCS, tmp_path / "a.conll", scheme="east_africa")
    export_hf(DOCS, tmp_path / "hf", backend="jsonl")
    export_sft(DOCS, tmp_path / "a.sft.jsonl")
    assert len(caplog.records) == 4
    logged = "\n".join(r.getMessage() for r in caplog.records)
    for doc in DOCS:
        for span in doc.spans:
            assert span.text_of(doc.text) not in logged
