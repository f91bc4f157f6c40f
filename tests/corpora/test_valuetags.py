from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from polydeid.corpora.valuetags import first_unused, read_value_tags

FIXTURES = Path(__file__).parent / "fixtures" / "valuetags"


def labelled(doc):
    return [(s.label.value, doc.text[s.start : s.end], s.start) for s in doc.spans]


def test_values_are_placed_at_first_unused_occurrences():
    corpus = read_value_tags(FIXTURES / "queries.txt")
    assert not corpus.failures and len(corpus.documents) == 3
    first, empty, _third = corpus.documents
    text = first.text
    assert text.startswith("Follow-up") and "\n" not in text
    second_mary = text.index("Mary K.", text.index("Mary K.") + 1)
    assert labelled(first) == [
        ("PERSON", "Mary K.", text.index("Mary K.")),
        ("LOCATION_FACILITY", "St. Jude", text.index("St. Jude")),
        ("DATE", "03/04/2022", text.index("03/04/2022")),
        ("PERSON", "Mary K.", second_mary),
    ]
    assert empty.spans == () and empty.meta["tags"] == 0
    assert first.meta["unlocated_count"] == 0


def test_value_not_in_query_is_counted_without_its_value():
    third = read_value_tags(FIXTURES / "queries.txt").documents[2]
    assert [s.label.value for s in third.spans] == ["PERSON", "ID_RECORD"]
    assert third.meta["unlocated_count"] == 1
    (entry,) = third.meta["unlocated"]
    assert dict(entry) == {"line": 18, "label": "PHONE_NUMBER"}
    assert third.meta["query_index"] == 2


def test_malformed_blocks_are_located_and_others_read(tmp_path):
    data = (
        "===QUERY===\nA query about Eve N.\n===PHI_TAGS===\n"
        '{"identifier_type": "NAME", "value": "Eve N."}\n\n'
        "===QUERY===\nno tags marker here\n\n"
        "===QUERY===\nQuery two\n===PHI_TAGS===\n{bad json\n\n"
        "===QUERY===\nQuery three\n===PHI_TAGS===\n"
        '{"identifier_type": "NOPE", "value": "three"}\n'
    )
    path = tmp_path / "q.txt"
    path.write_text(data, "utf-8")
    corpus = read_value_tags(path)
    assert [d.meta["query_index"] for d in corpus.documents] == [0]
    messages = [str(f.error) for f in corpus.failures]
    assert ["q.txt:6:" in messages[0], "q.txt:12:" in messages[1], "q.txt:17:" in messages[2]] == [
        True
    ] * 3
    assert all("Eve" not in m and "three" not in m for m in messages)


def test_text_before_first_query_fails_the_file(tmp_path):
    path = tmp_path / "q.txt"
    path.write_text("preamble\n===QUERY===\nx\n===PHI_TAGS===\n", "utf-8")
    corpus = read_value_tags(path)
    assert not corpus.documents and "q.txt:1" in str(corpus.failures[0].error)


@given(
    st.text(alphabet="ab ", max_size=30),
    st.lists(st.text(alphabet="ab", min_size=1, max_size=3), max_size=5),
)
def test_first_unused_never_overlaps_and_matches_the_value(text, values):
    placed: list[tuple[int, int]] = []
    for value in values:
        where = first_unused(text, value, placed)
        if where is None:
            continue
        assert text[where[0] : where[1]] == value
        assert not any(where[0] < e and s < where[1] for s, e in placed)
        placed.append(where)
