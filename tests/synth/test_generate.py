"""The synthetic corpus generator: axes, determinism, validity, facts, name splits, data."""

from __future__ import annotations

import re
import tomllib
from collections import Counter
from functools import cache
from pathlib import Path

import pytest
import regex

from polydeid.core.errors import ConfigError
from polydeid.core.taxonomy import Category, Fact
from polydeid.corpora.document import Corpus
from polydeid.locales import language_data, language_info, languages
from polydeid.locales import synth as synth_pack
from polydeid.synth import generate as gen
from polydeid.synth.export import export_jsonl
from polydeid.synth.fillers import NAME_PARTICLES, name_titles
from polydeid.synth.formats import format_names
from polydeid.synth.generate import (
    EDGE_CASES,
    SECTIONS,
    SLOTS,
    document_types,
    generate,
    language_templates,
    plan_document,
    synth_languages,
)
from polydeid.synth.validate import validate_corpus, validate_jsonl

NAMES = {Category.PERSON, Category.PERSON_THIRD_PARTY}


def _untitled(name: str, lang: str) -> str:
    """A name span without the title English writes inside it ("Dr john" -> "john")."""
    head, _, rest = name.partition(" ")
    titles = {t.casefold() for t in name_titles(lang)}
    return rest if rest and head.rstrip(".").casefold() in titles else name


@cache
def corpus(per_language: int = 40, seed: int = 5, split: str = "train") -> tuple:
    return tuple(generate(per_language=per_language, seed=seed, name_split=split))


# --- data ---------------------------------------------------------------------------------------


def test_every_language_ships_generator_data() -> None:
    assert set(synth_languages()) == set(languages())
    assert len(synth_languages()) >= 17
    scripts = {language_info(code).script for code in synth_languages()}
    assert len(scripts - {"Latin"}) >= 3, scripts


@pytest.mark.parametrize("lang", languages())
def test_templates_meet_section_minimums(lang: str) -> None:
    data = language_templates(lang)
    short = {s: len(data.sections[s]) for s, least in SECTIONS.items()}
    assert all(short[s] >= least for s, least in SECTIONS.items()), short
    used = {slot for templates in data.sections.values() for t in templates for slot in t.slots}
    assert {"patient", "date", "phone", "diagnosis", "vital"} <= used


@pytest.mark.parametrize("lang", languages())
def test_vocabulary_lists_are_present(lang: str) -> None:
    data = language_templates(lang)
    for key in ("diagnoses", "eponym_diagnoses", "drugs", "departments", "professions"):
        assert len(data.words(key)) >= 8, key
    for key in ("religions", "relations", "relative_dates", "word_names", "age_words"):
        assert len(data.words(key)) >= 5, key
    assert data.vocab.get("sex_female") and data.vocab.get("sex_male")
    assert language_data(lang, "synth")["meta"]["sources"]


@pytest.mark.parametrize("lang", languages())
def test_field_labels_cover_every_key(lang: str) -> None:
    labels = language_data(lang, "field_labels")["labels"]
    keys = set(gen.doctype_data()["fields"]) | set(document_types()) | {"_patient", "_clinician"}
    assert keys <= set(labels), sorted(keys - set(labels))


def test_template_errors_name_file_and_sentence(monkeypatch: pytest.MonkeyPatch) -> None:
    bad = {"sentence": [{"section": "plan", "text": "Give {drug} to {nobody}."}]}
    monkeypatch.setattr(synth_pack, "language_data", lambda code, kind: bad)
    gen.language_templates.cache_clear()
    synth_pack.synth_data.cache_clear()
    try:
        with pytest.raises(ConfigError, match=r"synth.toml sentence 1: unknown slot\(s\) nobody"):
            gen.language_templates("en")
    finally:
        gen.language_templates.cache_clear()
        synth_pack.synth_data.cache_clear()


def test_unknown_language_and_bad_arguments_fail_closed() -> None:
    with pytest.raises(ConfigError):
        list(generate(per_language=1, seed=1, langs=["tlh"]))
    with pytest.raises(ConfigError):
        list(generate(per_language=1, seed=1, name_split="holdout"))
    with pytest.raises(ConfigError):
        list(generate(per_language=1, seed=1, formats=["pdf"]))


def test_doctypes_data_is_consistent() -> None:
    types = document_types()
    assert len(types) >= 16
    for doctype in types.values():
        assert set(doctype.formats) <= set(format_names())
        assert doctype.required <= set(doctype.header) | {doctype.fact_field}
        assert doctype.fact_field in gen.doctype_data()["fields"]
    assert set(gen.doctype_data()["fields"].values()) <= set(SLOTS)
    assert {d.narrator for d in types.values()} == {"clinician", "patient"}


@pytest.mark.slow
def test_a_patients_messages_are_the_patients_turns_of_a_chat() -> None:
    """A chat message's narrative is written on the patient's side (the patient or a relative),
    so the chat layout puts it in the patient's turn; other types' narrative is the clinician's."""
    from polydeid.synth.formats import label_for

    assert document_types()["chat_message"].narrator == "patient"
    assert document_types()["admission_note"].narrator == "clinician"
    docs = [d for d in corpus() if d.meta["text_format"] == "chat"]
    seen = set()
    for doc in docs:
        narrator = document_types()[doc.meta["document_type"]].narrator
        turn = label_for(f"_{narrator}", doc.lang) + ": "
        for span in doc.spans:  # a narrative's name: its line opens with the narrator's turn
            line = doc.text[doc.text.rfind("\n", 0, span.start) + 1 : span.start]
            if span.label in NAMES and not line.endswith("?\n") and line.startswith(turn):
                seen.add(narrator)
    assert seen == {"clinician", "patient"}


def test_a_birth_notifications_patient_is_the_mother() -> None:
    """The birth sentences name the patient as the mother, so the patient's names are women's,
    the record's sex is hers, and no separate mother's-name field names someone else."""
    from polydeid.locales import default_countries
    from polydeid.synth.fillers import _split_pool, name_data

    spec = document_types()["birth_notification"]
    assert spec.patient_sex == "female" and "mother_name" not in spec.header
    checked = women = 0
    for doc in corpus():
        if doc.meta["document_type"] != "birth_notification":
            continue
        pool = _split_pool(doc.lang, default_countries(doc.lang), "train")
        female, male = set(pool.given_female), set(pool.given_male)
        names = [doc.text[s.start : s.end] for s in doc.spans if s.label is Category.PERSON]
        words = max(names, key=len).split() if names else []
        data = name_data(doc.lang)
        given = (words[-1] if data.family_first else words[0]) if words else ""
        if given in female | male:  # the given name's word (not a father's name after it)
            assert given in female, doc.id
            checked += 1
        vocab = language_data(doc.lang, "synth")["vocab"]
        sexes = {doc.text[s.start : s.end] for s in doc.spans if s.label is Category.SEX}
        assert vocab["sex_male"] not in sexes, doc.id
        women += vocab["sex_female"] in sexes
    assert checked >= 10 and women >= 10


# --- axes ---------------------------------------------------------------------------------------


def test_every_axis_is_covered() -> None:
    docs = corpus()
    assert {d.lang for d in docs} == set(languages())
    metas = [d.meta for d in docs]
    assert {m["document_type"] for m in metas} == set(document_types())
    assert len({m["text_format"] for m in metas}) >= 10
    assert {m["length"] for m in metas} == {"short", "medium", "long"}
    edges = Counter(e for m in metas for e in m["edge_cases"])
    assert len(edges) >= 30, sorted(EDGE_CASES.keys() - edges.keys())
    assert set(edges) <= set(EDGE_CASES)


def test_long_documents_exceed_one_model_window() -> None:
    spec = gen.doctype_data()["lengths"]["long"]
    for doc in corpus():
        if doc.meta["length"] == "long":
            cjk = gen._CJK.search(doc.text)
            assert len(doc.text) >= (spec["min_chars_cjk"] if cjk else spec["min_chars"]), doc


def test_every_document_carries_clinical_facts() -> None:
    docs = corpus()
    assert all(doc.facts for doc in docs)
    kinds = Counter(f.label for d in docs for f in d.facts)
    wanted = (Fact.DOSE, Fact.LAB_VALUE, Fact.VITAL, Fact.DURATION, Fact.DRUG, Fact.DIAGNOSIS)
    assert all(kinds[k] >= 20 for k in wanted), kinds


def test_edge_cases_recorded_are_in_the_text() -> None:
    for doc in corpus():
        edges = set(doc.meta["edge_cases"])
        names = [
            _untitled(doc.text[s.start : s.end], doc.lang) for s in doc.spans if s.label in NAMES
        ]
        if "name_allcaps" in edges:
            assert any(n.isupper() for n in names), doc
        if "name_lowercase" in edges:
            assert any(n.islower() for n in names), doc
        if "id_in_url" in edges:
            assert "?mrn=" in doc.text, doc
        if "eponym_disease" in edges:
            assert any(f.label is Fact.DIAGNOSIS for f in doc.facts), doc
        if "initials" in edges:
            assert any(re.search(r"\b\w\.", n) for n in names), doc


def test_eponyms_and_drugs_are_never_names() -> None:
    for doc in corpus():
        for fact in doc.facts:
            assert not any(s.start < fact.end and fact.start < s.end for s in doc.spans), doc


def test_a_person_keeps_one_name_within_a_document() -> None:
    for doc in corpus():
        patients = {doc.text[s.start : s.end] for s in doc.spans if s.label is Category.PERSON}
        if len(patients) > 1 and "repeated_name_forms" not in doc.meta["edge_cases"]:
            pytest.fail(f"{doc!r}: {len(patients)} patient names without repeated_name_forms")


# --- validity -----------------------------------------------------------------------------------


@pytest.mark.slow
def test_generated_corpus_passes_the_validator(tmp_path: Path) -> None:
    path = tmp_path / "synth.jsonl"
    export_jsonl(corpus(), path)
    report = validate_jsonl(path)
    assert report.ok, report.codes()
    assert not [i for i in report.errors if i.code == "SPAN_TEXT_MISMATCH"]
    assert all(d.templates >= 30 for d in report.diversity.values())


def test_rule_layer_finds_the_fixed_format_identifiers() -> None:
    """Values come from the rule layer's own conventions: it must find nearly all of them."""
    from polydeid.api import Deidentifier

    deid = Deidentifier(profile="rules")
    wanted = {Category.CONTACT_PHONE, Category.CONTACT_OTHER, Category.ID_NATIONAL}
    found = total = 0
    for doc in corpus():
        if doc.meta["text_format"] not in ("prose", "key_value", "bullets"):
            continue
        detected = deid.detect(doc.text, lang=doc.lang)
        for span in doc.spans:
            if span.label in wanted:
                total += 1
                found += any(d.start < span.end and span.start < d.end for d in detected)
    assert total > 100
    assert found / total >= 0.9, (found, total)


# --- determinism and splits ---------------------------------------------------------------------


def test_generation_is_deterministic_for_a_seed() -> None:
    a = list(generate(per_language=3, seed=11, langs=["lg", "zh"]))
    b = list(generate(per_language=3, seed=11, langs=["lg", "zh"]))
    c = list(generate(per_language=3, seed=12, langs=["lg", "zh"]))
    assert [(d.id, d.text, d.spans, d.facts, dict(d.meta)) for d in a] == [
        (d.id, d.text, d.spans, d.facts, dict(d.meta)) for d in b
    ]
    assert [d.text for d in a] != [d.text for d in c]
    assert [d.lang for d in a] == ["lg", "zh"] * 3  # interleaved, balanced


def test_document_i_does_not_depend_on_the_languages_alongside() -> None:
    alone = list(generate(per_language=2, seed=4, langs=["sw"]))
    mixed = [d for d in generate(per_language=2, seed=4, langs=["en", "sw"]) if d.lang == "sw"]
    assert [d.text for d in alone] == [d.text for d in mixed]


def _name_tokens(docs: tuple) -> set[str]:
    tokens = set()
    for doc in docs:
        for span in doc.spans:
            if span.label in NAMES:
                # initials ("डी.") and elided particles ("D’Souza", "डी’कोस्टा") are not names
                text = _untitled(doc.text[span.start : span.end], doc.lang)
                words = regex.findall(r"[\p{L}\p{M}]{2,}(?![\p{L}\p{M}.'’])", text)
                tokens.update(w.lower() for w in words if w.lower() not in NAME_PARTICLES)
    return tokens


@pytest.mark.slow
def test_name_splits_are_disjoint() -> None:
    train = _name_tokens(corpus(20, 5, "train"))
    test = _name_tokens(corpus(20, 5, "test"))
    assert len(train) > 300 and len(test) > 300
    assert not train & test, sorted(train & test)[:10]


# --- plans (LLM mode) ---------------------------------------------------------------------------


def test_plans_are_deterministic_and_carry_values() -> None:
    a = plan_document("sw", 3, seed=1)
    assert a == plan_document("sw", 3, seed=1)
    assert a.text_format in gen.PLAIN_FORMATS
    assert any(v.label in NAMES or v.label is Category.CONTACT_PHONE for v in a.values)
    assert "PlannedValue(" in repr(a.values[0]) and a.values[0].text not in repr(a.values[0])


def test_validator_accepts_corpus_objects() -> None:
    report = validate_corpus(Corpus("synth", corpus(3, 2)), check_language=False)
    assert report.ok, report.codes()


def test_synth_toml_files_parse() -> None:
    root = Path(gen.__file__).parent.parent / "locales" / "languages"
    for path in root.glob("*/synth.toml"):
        with path.open("rb") as handle:
            assert tomllib.load(handle)["sentence"], path


def test_reported_speech_opens_sentences_with_one_word_of_a_known_persons_name() -> None:
    """The "reported" sentences open with the speaker's name, and a ``*_word`` slot writes one
    word of the same person's name: the gold span covers exactly that word, labelled with the
    person's role, and the word belongs to the name the document gives that person."""
    docs = list(generate(per_language=2, seed=5, doctypes=["home_visit"]))
    assert {d.meta["document_type"] for d in docs} == {"home_visit"}
    assert {d.lang for d in docs} == set(languages())
    opened = words = 0
    for doc in docs:
        names = [s for s in doc.spans if s.label in NAMES]
        texts = {doc.text[s.start : s.end] for s in names}
        for span in names:
            before = doc.text[max(0, span.start - 2) : span.start]
            after = doc.text[span.end : span.end + 2].lstrip(" (")
            opens = span.start == 0 or before.endswith(("\n", ". ", ": ", "- ", "。", "। ", "። "))
            opened += opens and after[:1].isalpha()  # a sentence goes on: not a field's value
            word = doc.text[span.start : span.end]
            longer = [t for t in texts if t != word and word in t.split()]
            words += bool(longer)
        if "name_word" in doc.meta["edge_cases"]:
            assert any(" " not in doc.text[s.start : s.end] for s in names), doc.id
    assert opened >= len(docs) and words >= len(docs) // 2, (opened, words)


def test_doctypes_restrict_the_draw_and_unknown_ones_fail_closed() -> None:
    docs = list(generate(per_language=3, seed=2, langs=["sw"], doctypes=["nursing_note"]))
    assert [d.meta["document_type"] for d in docs] == ["nursing_note"] * 3
    with pytest.raises(ConfigError, match="unknown document type"):
        list(generate(per_language=1, seed=1, doctypes=["memo"]))
    with pytest.raises(ConfigError):
        list(generate(per_language=1, seed=1, doctypes=[]))
