import json
from pathlib import Path

import pytest

from polydeid.corpora.uima import read_uima_json

FIXTURES = Path(__file__).parent / "fixtures" / "uima"


def labelled(doc):
    return [(s.label.value, doc.text[s.start : s.end], s.source) for s in doc.spans]


def test_utf16_offsets_are_converted_past_non_bmp_characters():
    corpus = read_uima_json(FIXTURES / "utf16.json")
    (doc,) = corpus.documents
    assert not corpus.failures and doc.lang == "en" and doc.id == "utf16"
    # the emoji before each entity is two UTF-16 units but one code point
    assert labelled(doc) == [
        ("PERSON", "Anna Müller", "gold:PERSON"),
        ("LOCATION_FACILITY", "Mulago", "gold:LOCATION_FACILITY"),
        ("DATE", "3 May", "gold:DATE"),
    ]  # the NamedEntity outside the view's members is not read


def test_raw_offsets_would_be_wrong_without_conversion():
    corpus = read_uima_json(FIXTURES / "utf16.json", offsets="code-points")
    assert not corpus.documents and "outside the text" in str(corpus.failures[0].error)


def test_header_encoding_custom_layer_and_object_form():
    corpus = read_uima_json(
        FIXTURES / "codepoints_custom_layer.json",
        scheme="conll",
        lang="sw",
        types=("webanno.custom.PHI",),
        label_feature="kind",
    )
    (doc,) = corpus.documents
    assert doc.lang == "sw"
    assert labelled(doc) == [
        ("PERSON", "Wanjiru Kamau", "gold:PER"),
        ("LOCATION_VILLAGE", "Nairobi", "gold:LOC"),
    ]


def _cas(text, begin, end, header=None, value="PERSON"):
    cas = {
        "%FEATURE_STRUCTURES": [
            {"%ID": 1, "%TYPE": "uima.cas.Sofa", "sofaID": "_InitialView", "sofaString": text},
            {
                "%ID": 2,
                "%TYPE": "de.tudarmstadt.ukp.dkpro.core.api.ner.type.NamedEntity",
                "@sofa": 1,
                "begin": begin,
                "end": end,
                "value": value,
            },
        ],
        "%VIEWS": {"_InitialView": {"%SOFA": 1, "%MEMBERS": [2]}},
    }
    if header:
        cas["%HEADER"] = header
    return json.dumps(cas, ensure_ascii=False)


def test_utf8_header_offsets(tmp_path):
    text = "Ñandú 😀 Zoë Li"
    start = len(text[: text.index("Z")].encode())
    path = tmp_path / "u8.json"
    path.write_text(_cas(text, start, len(text.encode()), {"%OFFSET_ENCODING": "UTF-8"}), "utf-8")
    doc = read_uima_json(path, lang="es").documents[0]
    assert doc.text[doc.spans[0].start : doc.spans[0].end] == "Zoë Li"


BAD = [
    ("{not json", "malformed JSON"),
    ('["a list"]', "JSON object"),
    (_cas("Hi 😀 Bo", 4, 7), "surrogate pair"),
    (_cas("Hi Bo", 3, 50), "outside the text"),
    (_cas("Hi Bo", 3, 5, value="NOPE"), "unknown category"),
    (_cas("Hi Bo", 3, 5, value=None), "label"),
    (_cas("Hi Bo", 3, 5, {"%OFFSET_ENCODING": "EBCDIC"}), "offset encoding"),
    ('{"%FEATURE_STRUCTURES": []}', "no sofa"),
]


@pytest.mark.parametrize(("content", "message"), BAD, ids=[f"bad{i}" for i in range(len(BAD))])
def test_bad_files_are_located_failures_and_others_read(tmp_path, content, message):
    (tmp_path / "a_bad.json").write_text(content, "utf-8")
    (tmp_path / "b_good.json").write_text(_cas("Hi Bo", 3, 5), "utf-8")
    corpus = read_uima_json(tmp_path, lang="en")
    assert [d.id for d in corpus.documents] == ["b_good"]
    (failure,) = corpus.failures
    assert "a_bad.json" in str(failure.error) and message in str(failure.error)
    assert "Bo'" not in str(failure.error)
