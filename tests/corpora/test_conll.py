from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from polydeid import ConfigError
from polydeid.corpora.conll import read_conll, read_germeval

FIXTURES = Path(__file__).parent / "fixtures" / "conll"


def labelled(doc):
    return [(s.label.value, doc.text[s.start : s.end], s.source) for s in doc.spans]


def test_docstart_splits_documents_and_text_is_rebuilt():
    corpus = read_conll(FIXTURES / "luganda.conll", lang="lug")
    assert [d.id for d in corpus.documents] == ["luganda#0", "luganda#1"] and not corpus.failures
    first, second = corpus.documents
    assert first.lang == "lg"
    assert first.text == (
        "Nakato Aisha yagenze e Kampala ku Mmande 12 .\nMinisitule ya Byobulamu yayogedde ."
    )
    assert labelled(first) == [
        ("PERSON", "Nakato Aisha", "gold:PER"),
        ("LOCATION_VILLAGE", "Kampala", "gold:LOC"),
        ("DATE", "Mmande 12", "gold:DATE"),
        ("ORGANIZATION", "Minisitule ya Byobulamu", "gold:ORG"),
    ]
    assert first.meta["sentences"] == 2 and first.meta["sentence_starts"] == (0, 46)
    assert first.meta["reconstructed"] is True
    # I- after O starts a span; B- after I- of the same type starts a new one; MISC is dropped
    assert labelled(second) == [
        ("PERSON", "Okello", "gold:PER"),
        ("PERSON", "Opio", "gold:PER"),
        ("LOCATION_VILLAGE", "Mukono", "gold:LOC"),
        ("LOCATION_VILLAGE", "Jinja", "gold:LOC"),
    ]
    assert second.meta["dropped"] == 1


def test_sentences_per_document_groups_sentences():
    corpus = read_conll(FIXTURES / "luganda.conll", lang="lg", sentences_per_document=1)
    assert [d.meta["sentences"] for d in corpus.documents] == [1, 1, 1]
    assert corpus.documents[1].text == "Minisitule ya Byobulamu yayogedde ."


def test_germeval_keeps_outer_and_new_inner_spans_and_skips_comments():
    corpus = read_germeval(FIXTURES / "germeval.tsv")
    (doc,) = corpus.documents
    assert doc.lang == "de" and doc.meta["sentences"] == 2
    assert (
        doc.text == "Die Universität Heidelberg und die deutsche Merkel-Regierung .\nBerlin liegt #"
    )
    assert labelled(doc) == [
        ("ORGANIZATION", "Universität Heidelberg", "gold:ORG"),
        ("LOCATION_VILLAGE", "Heidelberg", "gold:LOC"),  # inner layer
        ("ORGANIZATION", "Merkel-Regierung", "gold:ORG"),
        ("PERSON", "Merkel-Regierung", "gold:PERpart"),  # inner, other category: kept
        ("LOCATION_VILLAGE", "Berlin", "gold:LOC"),  # inner duplicate of outer: once
    ]
    assert doc.meta["dropped"] == 1  # LOCderiv


def test_bioes_tags_are_decoded(tmp_path):
    path = tmp_path / "bioes.txt"
    path.write_text("Juma S-PER\nwa O\nDar B-LOC\nes I-LOC\nSalaam E-LOC\nJuma S-PER\n", "utf-8")
    doc = read_conll(path, lang="sw").documents[0]
    assert [doc.text[s.start : s.end] for s in doc.spans] == ["Juma", "Dar es Salaam", "Juma"]


def test_a_file_without_sentence_breaks_is_cut_at_outside_tokens_never_inside_a_span(tmp_path):
    path = tmp_path / "run.bio"
    rows = ["Heute O", "kam O", "Herr O", "Anton B-PER", "Huber I-PER", "Maier I-PER", "aus O"]
    rows += ["Graz B-LOC", "nach O", "Linz B-LOC", "zurück O"]
    path.write_text("\n".join(rows) + "\n", "utf-8")
    whole = read_conll(path, lang="de").documents[0]
    assert whole.meta["sentences"] == 1
    cut = read_conll(path, lang="de", tokens_per_sentence=4, sentences_per_document=1).documents
    # the fourth token is in a name: the sentence ends at the next outside token
    texts = ["Heute kam Herr Anton Huber Maier aus", "Graz nach Linz zurück"]
    assert [d.text for d in cut] == texts
    assert [labelled(d) for d in cut] == [
        [("PERSON", "Anton Huber Maier", "gold:PER")],
        [("LOCATION_VILLAGE", "Graz", "gold:LOC"), ("LOCATION_VILLAGE", "Linz", "gold:LOC")],
    ]
    two = read_conll(path, lang="de", tokens_per_sentence=2, sentences_per_document=2).documents
    assert [d.meta["sentences"] for d in two] == [2, 2]
    with pytest.raises(ConfigError):
        read_conll(path, lang="de", tokens_per_sentence=0)


def test_punctuation_glued_by_ocr_is_split_off_names_where_asked(tmp_path):
    path = tmp_path / "ocr.bio"
    rows = ["(Briand O", "sprach O", "mit O", "(Mussolini, B-PER", "dann O", "J. B-PER"]
    rows += ["van I-PER", "Dijk. I-PER", "und O", "St. B-PER", "Paul I-PER", "Briand. B-PER"]
    path.write_text("\n".join(rows) + "\n", "utf-8")
    glued = read_conll(path, lang="de").documents[0]
    assert [glued.text[s.start : s.end] for s in glued.spans] == [
        "(Mussolini,", "J. van Dijk.", "St. Paul", "Briand.",
    ]  # fmt: skip
    split = read_conll(path, lang="de", split_punctuation=True).documents[0]
    assert [split.text[s.start : s.end] for s in split.spans] == [
        "Mussolini", "J. van Dijk", "St. Paul", "Briand",
    ]  # fmt: skip
    assert split.text.startswith("( Briand sprach mit ( Mussolini , dann J. van Dijk . und")
    assert split.meta["tokens"] == len(rows)  # the file's rows, not the pieces


def test_split_glued_keeps_initials_short_words_and_bare_punctuation() -> None:
    from polydeid.corpora.conll import split_glued

    assert split_glued("«Dupont»,") == [
        ("«", False), ("Dupont", True), ("»", False), (",", False),
    ]  # fmt: skip
    assert split_glued("J.") == [("J.", True)]
    assert split_glued("Dr.") == [("Dr.", True)]
    assert split_glued("Huber.", last_in_span=False) == [("Huber.", True)]
    assert split_glued("Huber.") == [("Huber", True), (".", False)]
    assert split_glued(",") == [(",", True)] and split_glued("--") == [("--", True)]
    assert split_glued("Anton") == [("Anton", True)]


def test_a_header_line_is_skipped_only_where_asked_and_only_first(tmp_path):
    from polydeid.corpora.conll import read_hipe

    path = tmp_path / "hipe.tsv"
    rows = ["TOKEN\tNE-COARSE-LIT\tMISC", "# hipe2022:document_id = d1", "Jean\tB-PER\t_"]
    rows += ["Dupont\tI-PER\t_", "à\tO\t_", "Lyon\tB-LOC\tEndOfSentence", ""]
    rows += ["# hipe2022:document_id = d2", "Le\tO\t_", "Matin\tB-HumanProd\t_", ""]
    path.write_text("\n".join(rows), "utf-8")
    docs = read_hipe(path, lang="fr", sentences_per_document=1).documents
    assert [d.text for d in docs] == ["Jean Dupont à Lyon", "Le Matin"]
    assert [labelled(d) for d in docs] == [
        [("PERSON", "Jean Dupont", "gold:PER"), ("LOCATION_VILLAGE", "Lyon", "gold:LOC")],
        [],
    ]
    with pytest.raises(ConfigError):
        read_hipe(path)  # the language is not in the file
    plain = read_conll(path, lang="fr", separator="\t", tag_columns=(1,), comment_prefix="#")
    assert plain.failures  # without the option the header is a malformed row


def test_titles_a_scheme_puts_in_person_spans_are_moved_out_where_the_language_leaves_them_out(
    tmp_path,
):
    from polydeid.corpora.conll import read_hipe

    rows = ["TOKEN\tNE-COARSE-LIT", "# hipe2022:document_id = d1"]
    tagged = [("M", "B-PER"), (".", "I-PER"), ("de", "I-PER"), ("Lasteyrie", "I-PER")]
    tagged += [("et", "O"), ("Mme", "B-PER"), ("Curie", "I-PER"), ("et", "O")]
    tagged += [("MM", "B-PER"), (".", "I-PER"), ("Mme", "I-PER")]  # only titles: stays
    tagged += [("à", "O"), ("M", "B-LOC"), (".", "I-LOC"), ("Ville", "I-LOC")]  # not a person
    tagged += [("le", "O"), ("président", "B-PER"), ("Doumer", "I-PER")]  # a function stays
    rows += [f"{token}\t{tag}" for token, tag in tagged] + [""]
    path = tmp_path / "hipe.tsv"
    path.write_text("\n".join(rows), "utf-8")
    (doc,) = read_hipe(path, lang="fr", sentences_per_document=1).documents
    assert [text for _, text, _ in labelled(doc)] == [
        "de Lasteyrie", "Curie", "MM . Mme", "M . Ville", "président Doumer",
    ]  # fmt: skip
    # English keeps a title in the name span (titles_in_names): nothing moves
    (english,) = read_hipe(path, lang="en", sentences_per_document=1).documents
    assert labelled(english)[0][1] == "M . de Lasteyrie"


def test_tab_separated_columns_are_chosen_by_option(tmp_path):
    path = tmp_path / "cols.tsv"
    path.write_text("x\tKigali\tNNP\tB-LOC\ny\tni\tVB\tO\n", "utf-8")
    doc = read_conll(path, lang="rw", token_column=1, tag_columns=(3,), separator="\t").documents[0]
    assert doc.text == "Kigali ni" and labelled(doc) == [("LOCATION_VILLAGE", "Kigali", "gold:LOC")]


def test_tokens_of_a_language_written_without_spaces_are_joined_without_them(tmp_path):
    """UNER's Chinese: UD words with a comment line per sentence; the rebuilt text joins the
    words as the language writes them, and spans cover exactly their words."""
    path = tmp_path / "zh.iob2"
    path.write_text(
        "# sent_id = 1\n# text = 李明住在北京。\n"
        "1\t李明\tB-PER\t-\tann\n2\t住在\tO\t-\t-\n3\t北京\tB-LOC\t-\tann\n"
        "4\t。\tO\t-\t-\n\n# sent_id = 2\n# text = 好。\n1\t好\tO\t-\t-\n2\t。\tO\t-\t-\n",
        "utf-8",
    )
    options = {"token_column": 1, "tag_columns": (2,), "separator": "\t", "comment_prefix": "#"}
    (doc,) = read_conll(path, lang="zh", token_joiner="", **options).documents
    assert doc.text == "李明住在北京。\n好。"
    assert [(label, text) for label, text, _ in labelled(doc)] == [
        ("PERSON", "李明"),
        ("LOCATION_VILLAGE", "北京"),
    ]
    (spaced,) = read_conll(path, lang="zh", **options).documents
    assert spaced.text == "李明 住在 北京 。\n好 。"
    with pytest.raises(ConfigError):
        read_conll(path, lang="zh", token_joiner="-", **options)


BAD_FILES = [
    ("Juma B-PER\nlonely\n", "column"),
    ("Juma B-PER\nwa B-NOPE\n", "unknown category"),
]


@pytest.mark.parametrize(("content", "message"), BAD_FILES, ids=["one-column", "unknown-label"])
def test_malformed_document_is_located_and_others_read(tmp_path, content, message):
    good = "-DOCSTART- O\n\nOchieng B-PER\n\n"
    (tmp_path / "a.conll").write_text(good + "-DOCSTART- O\n\n" + content, "utf-8")
    (tmp_path / "b.conll").write_text("Kisumu B-LOC\n", "utf-8")
    corpus = read_conll(tmp_path, lang="luo")
    assert [d.id for d in corpus.documents] == ["a#0", "b"]
    (failure,) = corpus.failures
    assert "a.conll:8" in str(failure.error) and message in str(failure.error)
    assert "Juma" not in str(failure.error)


def test_language_is_required():
    with pytest.raises(ConfigError):
        read_conll(FIXTURES / "luganda.conll")


TOKEN = st.text(alphabet=st.characters(blacklist_categories=("Z", "C")), min_size=1, max_size=6)
TAG = st.sampled_from(["O", "B-PER", "I-PER", "B-LOC", "I-LOC", "B-MISC"])


@given(st.lists(st.lists(st.tuples(TOKEN, TAG), min_size=1, max_size=8), min_size=1, max_size=4))
def test_rebuilt_text_and_span_offsets_agree_with_tokens(tmp_path_factory, sentences):
    path = tmp_path_factory.mktemp("prop") / "p.conll"
    lines = ["\n".join(f"{tok} {tag}" for tok, tag in s) for s in sentences]
    path.write_text("\n\n".join(lines) + "\n", "utf-8")
    corpus = read_conll(path, lang="en")
    assert not corpus.failures
    (doc,) = corpus.documents
    assert doc.text == "\n".join(" ".join(tok for tok, _ in s) for s in sentences)
    tokens = {t for s in sentences for t, _ in s}
    for span in doc.spans:
        covered = doc.text[span.start : span.end]
        assert covered.split(" ")[0] in tokens and "\n" not in covered
    starts = sum(tag.startswith("B-") and tag != "B-MISC" for s in sentences for _, tag in s)
    assert len(doc.spans) >= starts


def test_unicode_spaces_and_separators_stay_inside_tokens(tmp_path):
    path = tmp_path / "u.conll"
    path.write_text("Dar\u00a0es\u2028Salaam B-LOC\r\nni O\r\n", "utf-8")
    doc = read_conll(path, lang="sw").documents[0]
    assert doc.text == "Dar\u00a0es\u2028Salaam ni" and doc.meta["sentences"] == 1
    assert [(s.start, s.end) for s in doc.spans] == [(0, 13)]
