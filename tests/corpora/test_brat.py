import shutil
from pathlib import Path

import pytest

from polydeid import ConfigError
from polydeid.corpora.brat import read_brat

FIXTURES = Path(__file__).parent / "fixtures" / "brat"


def labelled(doc):
    return [(s.label.value, doc.text[s.start : s.end], s.source) for s in doc.spans]


def test_directory_of_pairs_maps_labels_and_keeps_offsets():
    corpus = read_brat(FIXTURES, scheme="meddocan", lang="es")
    assert [d.id for d in corpus.documents] == ["caso1", "caso2"] and not corpus.failures
    first = corpus.documents[0]
    assert first.lang == "es"
    assert labelled(first) == [
        ("PERSON", "Ana Pérez García", "gold:NOMBRE_SUJETO_ASISTENCIA"),
        ("ID_RECORD", "123456", "gold:ID_SUJETO_ASISTENCIA"),
        ("LOCATION_ADDRESS", "Calle Mayor 5", "gold:CALLE"),
        ("LOCATION_ADDRESS", "28016", "gold:TERRITORIO"),  # all-digit TERRITORIO: postal code
        ("LOCATION_VILLAGE", "Madrid", "gold:TERRITORIO"),
        ("LOCATION_VILLAGE", "España", "gold:PAIS"),
        ("PERSON_THIRD_PARTY", "Luis Gómez", "gold:NOMBRE_PERSONAL_SANITARIO"),
        ("LOCATION_FACILITY", "hospital", "gold:HOSPITAL"),
        ("LOCATION_FACILITY", "Clínico San Carlos", "gold:HOSPITAL"),
    ]
    assert first.meta["annotations"] == 9 and first.meta["dropped"] == 1  # OTROS_* maps to O
    assert first.meta["text_mismatches"] == 0


def test_discontinuous_hull_option_spans_first_to_last_fragment():
    corpus = read_brat(FIXTURES / "caso1.txt", scheme="meddocan", lang="es", fragments="hull")
    doc = corpus.documents[0]
    assert ("LOCATION_FACILITY", "hospital Clínico San Carlos", "gold:HOSPITAL") in labelled(doc)
    assert len(doc.spans) == 8


def test_text_mismatch_is_counted_and_offsets_kept():
    doc = read_brat(FIXTURES / "caso2.ann", scheme="meddocan", lang="es").documents[0]
    assert doc.meta["text_mismatches"] == 1 and doc.meta["mismatch_lines"] == (2,)
    assert labelled(doc) == [
        ("DATE", "12/12/2016", "gold:FECHAS"),
        ("AGE", "70 años", "gold:EDAD_SUJETO_ASISTENCIA"),
    ]


def test_reader_needs_scheme_and_language():
    with pytest.raises(ConfigError):
        read_brat(FIXTURES, lang="es")
    with pytest.raises(ConfigError):
        read_brat(FIXTURES, scheme="meddocan")


BAD_ANN = [
    ("T1\tFECHAS 18 999\tx\n", "outside the text"),
    ("T1\tFECHAS eighteen 28\tx\n", "integers"),
    ("T1\tFECHAS\n", "LABEL start end"),
    ("T1 FECHAS 18 28 12/12/2016\n", "tab-separated"),
    ("X1\tsomething\n", "unknown annotation line"),
    ("T1\tNOT_A_LABEL 18 28\t12/12/2016\n", "unknown category"),
    ("T1\tFECHAS 28 18\tx\n", "outside the text"),
]


@pytest.mark.parametrize(("ann", "message"), BAD_ANN, ids=[f"bad{i}" for i in range(len(BAD_ANN))])
def test_malformed_ann_is_a_located_failure_and_other_documents_are_read(tmp_path, ann, message):
    shutil.copy(FIXTURES / "caso1.txt", tmp_path / "good.txt")
    shutil.copy(FIXTURES / "caso1.ann", tmp_path / "good.ann")
    shutil.copy(FIXTURES / "caso2.txt", tmp_path / "bad.txt")
    (tmp_path / "bad.ann").write_text("T0\tFECHAS 18 28\t12/12/2016\n" + ann, encoding="utf-8")
    corpus = read_brat(tmp_path, scheme="meddocan", lang="es")
    assert [d.id for d in corpus.documents] == ["good"]
    (failure,) = corpus.failures
    assert failure.file.endswith("bad.ann")
    assert "bad.ann:2" in str(failure.error) and message in str(failure.error)
    assert "12/12/2016" not in str(failure.error)


def test_missing_half_of_a_pair_is_reported(tmp_path):
    shutil.copy(FIXTURES / "caso2.txt", tmp_path / "alone.txt")
    shutil.copy(FIXTURES / "caso2.txt", tmp_path / "ok.txt")
    (tmp_path / "ok.ann").write_text("", encoding="utf-8")
    corpus = read_brat(tmp_path, scheme="meddocan", lang="es")
    assert [d.id for d in corpus.documents] == ["ok"] and corpus.documents[0].spans == ()
    assert len(corpus.failures) == 1 and "alone.ann" in corpus.failures[0].file


def test_bad_utf8_is_located(tmp_path):
    (tmp_path / "x.txt").write_bytes(b"abc \xff def\n")
    (tmp_path / "x.ann").write_text("", encoding="utf-8")
    corpus = read_brat(tmp_path, scheme="meddocan", lang="es")
    assert not corpus.documents and "x.txt:1" in str(corpus.failures[0].error)


def test_crlf_ann_lines_compare_cleanly(tmp_path):
    (tmp_path / "w.txt").write_text("Edad: 70 años.", "utf-8")
    (tmp_path / "w.ann").write_bytes("T1\tEDAD_SUJETO_ASISTENCIA 6 13\t70 años\r\n".encode())
    doc = read_brat(tmp_path, scheme="meddocan", lang="es").documents[0]
    assert doc.meta["text_mismatches"] == 0 and doc.text[6:13] == "70 años"
