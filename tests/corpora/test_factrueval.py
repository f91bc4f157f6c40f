"""factRuEval-2016 standoff: objects' name spans become gold spans, descriptors do not."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from polydeid.core.errors import InputError
from polydeid.corpora import read_corpus
from polydeid.corpora.factrueval import read_factrueval

FIXTURE = Path(__file__).parent / "fixtures" / "factrueval"


def _labelled(doc):
    return [(doc.text[s.start : s.end], s.label.value, s.source) for s in doc.spans]


def test_names_of_objects_are_the_spans_and_descriptors_stay_out():
    (doc,) = read_factrueval(FIXTURE).documents
    assert doc.lang == "ru" and doc.id == "invented_a"
    assert _labelled(doc) == [
        ("Зарина Кубатова", "PERSON", "gold:Person"),  # name and surname: one span
        ("Ромашка", "ORGANIZATION", "gold:Org"),  # not "компании"
        ("Бельск", "LOCATION_VILLAGE", "gold:Location"),  # once, though a LocOrg shares it
    ]  # a Project names no person
    assert doc.meta["annotations"] == 5 and doc.meta["text_mismatches"] == 0


def test_the_registry_reads_the_format_with_its_scheme():
    corpus = read_corpus(FIXTURE, "factrueval2016")
    assert corpus.scheme == "factrueval2016" and len(corpus.documents) == 1


def _copy(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    shutil.copytree(FIXTURE, folder)
    shutil.copy(folder / "invented_a.txt", folder / "invented_b.txt")
    shutil.copy(folder / "invented_a.spans", folder / "invented_b.spans")
    return folder


@pytest.mark.parametrize(
    ("objects", "message", "line"),
    [
        ("10 Person 1 2\n11 Planet 5\n", "unknown category", 2),
        ("10 Person 1 99\n", "lacks", 1),
        ("10 Person\n", "malformed object line", 1),
    ],
    ids=["unknown-type", "missing-span", "malformed"],
)
def test_a_bad_document_is_located_and_the_others_read(tmp_path, objects, message, line):
    folder = _copy(tmp_path)
    (folder / "invented_b.objects").write_text(objects, encoding="utf-8")
    corpus = read_factrueval(folder)
    assert [d.id for d in corpus.documents] == ["invented_a"]
    (failure,) = corpus.failures
    assert message in str(failure.error) and f"invented_b.objects:{line}" in str(failure.error)
    assert "Кубатова" not in str(failure.error)


def test_a_span_past_the_text_or_a_missing_file_is_refused(tmp_path):
    folder = _copy(tmp_path)
    (folder / "invented_b.spans").write_text("1 name 500 6 101 1  # 101 x\n", encoding="utf-8")
    (folder / "invented_b.objects").write_text("10 Person 1\n", encoding="utf-8")
    (failure,) = read_factrueval(folder).failures
    assert "past the end" in str(failure.error) and "invented_b.spans:1" in str(failure.error)
    (folder / "invented_b.spans").write_text("1 name 6 6 x 1  # 101 Зарина\n", encoding="utf-8")
    (failure,) = read_factrueval(folder).failures
    message = str(failure.error)
    assert "malformed span line" in message and "invented_b.spans:1" in message
    (folder / "invented_b.spans").unlink()
    (failure,) = read_factrueval(folder).failures
    assert "missing file" in str(failure.error)
    with pytest.raises(InputError):
        read_factrueval(tmp_path / "nothing")
