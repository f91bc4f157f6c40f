from pathlib import Path

import pytest

from polydeid import ConfigError
from polydeid.corpora.registry import READERS, corpus_counts, formats, read_corpus

FIXTURES = Path(__file__).parent / "fixtures"

CASES = [
    ("brat", FIXTURES / "brat", {"scheme": "meddocan", "lang": "es"}, 2, 11),
    ("conll", FIXTURES / "conll" / "luganda.conll", {"lang": "lg"}, 2, 8),
    ("germeval2014", FIXTURES / "conll" / "germeval.tsv", {}, 1, 5),
    ("hipe2022", FIXTURES / "conll" / "hipe.tsv", {"lang": "fr"}, 1, 3),
    ("factrueval2016", FIXTURES / "factrueval", {}, 1, 3),
    ("jsonl", FIXTURES / "jsonl", {"lang": "en"}, 2, 2),
    ("uima_cas_json", FIXTURES / "uima" / "utf16.json", {}, 1, 3),
    ("physionet", FIXTURES / "physionet" / "id.text", {}, 3, 6),
    ("valuetags", FIXTURES / "valuetags" / "queries.txt", {}, 3, 6),
    ("presidio_research", FIXTURES / "presidio", {}, 3, 8),
]

#: the default scheme of each format (registry table)
SCHEMES = {
    "conll": "conll",
    "germeval2014": "germeval2014",
    "hipe2022": "hipe2022",
    "factrueval2016": "factrueval2016",
    "jsonl": "polydeid",
    "uima_cas_json": "polydeid",
    "physionet": "physionet_deid",
    "valuetags": "asq_phi",
    "presidio_research": "presidio_research",
}


def test_every_format_is_covered_here():
    assert sorted(c[0] for c in CASES) == list(formats()) == sorted(READERS)


@pytest.mark.parametrize(
    ("fmt", "path", "kwargs", "docs", "spans"), CASES, ids=[c[0] for c in CASES]
)
def test_read_corpus_dispatches(fmt, path, kwargs, docs, spans):
    corpus = read_corpus(path, fmt, **kwargs)
    # the scheme the gold was mapped from: the one given, else the format's default
    assert corpus.scheme == (kwargs["scheme"] if "scheme" in kwargs else SCHEMES[fmt])
    counts = corpus_counts(corpus)
    assert (counts["documents"], counts["spans"], counts["failures"]) == (docs, spans, 0)
    for doc in corpus.documents:
        assert all(s.source.startswith("gold:") for s in doc.spans)
        assert list(doc.spans) == sorted(doc.spans, key=lambda s: (s.start, s.end, s.label.value))


def test_counts_add_up_meta_counters():
    counts = corpus_counts(read_corpus(FIXTURES / "brat", "brat", scheme="meddocan", lang="es"))
    assert counts["annotations"] == 11 and counts["dropped"] == 1 and counts["text_mismatches"] == 1
    counts = corpus_counts(read_corpus(FIXTURES / "valuetags" / "queries.txt", "valuetags"))
    assert counts["unlocated_count"] == 1


def test_unknown_format_lists_known_ones():
    with pytest.raises(ConfigError) as info:
        read_corpus(FIXTURES, "xml-of-doom")
    assert all(name in str(info.value) for name in formats())


def test_options_pass_through():
    corpus = read_corpus(FIXTURES / "brat", "brat", scheme="meddocan", lang="es", fragments="hull")
    assert corpus_counts(corpus)["spans"] == 10


def test_unknown_option_is_a_config_error_naming_the_accepted_ones():
    with pytest.raises(ConfigError) as info:
        read_corpus(FIXTURES / "presidio", "presidio_research", fragments="hull")
    assert "fragments" in str(info.value) and "scheme" in str(info.value)
