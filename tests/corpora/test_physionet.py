from pathlib import Path

import pytest

from polydeid.corpora.physionet import read_physionet

FIXTURES = Path(__file__).parent / "fixtures" / "physionet"


def labelled(doc):
    return [(s.label.value, doc.text[s.start : s.end], s.source) for s in doc.spans]


def test_typed_phrase_file_is_found_and_mapped():
    corpus = read_physionet(FIXTURES / "id.text")
    assert not corpus.failures
    assert [d.id for d in corpus.documents] == ["1-1", "1-2", "2-1"]
    first, quiet, third = corpus.documents
    assert first.text.startswith("\nPt ") and first.lang == "en"
    assert labelled(first) == [
        ("PERSON", "John Smith", "gold:PTName"),
        ("DATE", "2/5/2005", "gold:Date"),
        ("CONTACT_PHONE", "555-1234", "gold:Phone"),
        ("AGE", "92", "gold:Age"),
    ]
    assert quiet.spans == () and first.meta["text_mismatches"] == 0
    assert labelled(third) == [
        ("PERSON_THIRD_PARTY", "Rivera", "gold:HCPName"),
        ("LOCATION_VILLAGE", "Boston", "gold:Location"),
    ]


def test_untyped_file_uses_the_configured_category():
    corpus = read_physionet(
        FIXTURES / "id.text", phi=FIXTURES / "untyped.phi", untyped_category="PERSON"
    )
    assert [len(d.spans) for d in corpus.documents] == [4, 0, 2]
    assert {s.label.value for d in corpus.documents for s in d.spans} == {"PERSON"}
    assert corpus.documents[0].spans[0].source == "gold:PHI"


def test_untyped_file_without_a_category_fails_per_note():
    corpus = read_physionet(FIXTURES / "id.text", phi=FIXTURES / "untyped.phi")
    assert [d.id for d in corpus.documents] == ["1-2"]
    assert all("untyped_category" in str(f.error) for f in corpus.failures)
    assert "untyped.phi:1" in str(corpus.failures[0].error)


@pytest.mark.parametrize(
    ("line", "message"),
    [("1 1 40 900 Date 2/5/2005", "outside the note"), ("1 1 4 14 Alien John Smith", "unknown")],
    ids=["past-end", "unknown-type"],
)
def test_bad_phi_line_drops_its_note_only(tmp_path, line, message):
    phi = tmp_path / "bad.phi"
    phi.write_text("2 1 5 11 HCPName Rivera\n" + line + "\n", "utf-8")
    corpus = read_physionet(FIXTURES / "id.text", phi=phi)
    assert [d.id for d in corpus.documents] == ["1-2", "2-1"]
    (failure,) = corpus.failures
    assert "bad.phi:2" in str(failure.error) and message in str(failure.error)
    assert "John" not in str(failure.error)


def test_unparsable_and_orphan_phi_lines_are_reported(tmp_path):
    phi = tmp_path / "odd.phi"
    phi.write_text("garbage here\n9 9 1 2 Date x\n", "utf-8")
    corpus = read_physionet(FIXTURES / "id.text", phi=phi)
    assert len(corpus.documents) == 3
    messages = sorted(str(f.error) for f in corpus.failures)
    assert "odd.phi:1" in messages[0] and "odd.phi:2" in messages[1]


def test_unterminated_record_is_located(tmp_path):
    notes = tmp_path / "n.text"
    notes.write_text("START_OF_RECORD=1||||1||||\nno end\n", "utf-8")
    (tmp_path / "n.phi").write_text("", "utf-8")
    corpus = read_physionet(notes)
    assert not corpus.documents and "n.text:1" in str(corpus.failures[0].error)
