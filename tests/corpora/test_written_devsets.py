"""The development sets written for polydeid (benchmarks/data): built brat files match their
inline-markup sources, read back with the brat reader, are large enough per category and are
annotated consistently (kinship words, titles in German, clinical vocabulary left out)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from polydeid.core.taxonomy import Category
from polydeid.corpora.registry import corpus_counts, read_corpus

DATA = Path(__file__).resolve().parents[2] / "benchmarks" / "data"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("devsets", DATA / "devsets.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["devsets"] = module
    spec.loader.exec_module(module)
    return module


devsets = _load()
SETS = sorted(devsets.SETS.items())

#: Fewest gold spans per category in each set.
MINIMUM = {
    Category.PERSON: 40,
    Category.PERSON_THIRD_PARTY: 80,
    Category.DATE: 150,
    Category.AGE: 20,
    Category.CONTACT_PHONE: 15,
    Category.ID_RECORD: 10,
    Category.ID_OTHER: 3,
    Category.ID_NATIONAL: 2,
    Category.CONTACT_OTHER: 2,
    Category.LOCATION_ADDRESS: 20,
    Category.LOCATION_VILLAGE: 30,
    Category.LOCATION_FACILITY: 30,
    Category.ORGANIZATION: 20,
    Category.PROFESSION: 15,
}

#: Kinship and role words: never part of a person span (issue 33, part 2).
KINSHIP = {
    "en": {
        "son", "daughter", "wife", "husband", "mother", "father", "mom", "dad", "brother",
        "sister", "niece", "nephew", "grandson", "granddaughter", "grandmother", "grandfather",
        "partner", "girlfriend", "boyfriend", "family", "cousin", "aunt", "uncle", "parents",
        "children", "kids", "colleague", "patient", "pt",
    },
    "de": {
        "mutter", "vater", "ehefrau", "ehemann", "tochter", "sohn", "eltern", "großmutter",
        "großvater", "enkelin", "enkel", "schwester", "bruder", "schwiegertochter", "kinder",
        "angehörige", "kollegin", "kollege", "kolleginnen", "kollegen", "familie", "patientin",
        "patient",
    },
}  # fmt: skip

#: Titles stay outside German name spans (names.toml: titles_in_names is false for German).
GERMAN_TITLES = {"herr", "frau", "hr", "fr", "dr", "prof", "med", "sr", "pd", "dipl"}

#: Clinical vocabulary that is never an identifier (issue 33, part 3).
CLINICAL = {
    "foley", "swan", "ganz", "hickman", "quinton", "babinski", "romberg", "lasègue", "murphy",
    "apgar", "glasgow", "coli", "brachialis", "radialis", "suralis", "cava", "leber",
    "kniegelenk", "fieber", "salbe", "olanzapine", "neo", "peep", "aline", "afebrile",
}  # fmt: skip


def _words(text: str) -> list[str]:
    return [w.casefold() for w in devsets._WORD.findall(text)]


@pytest.fixture(scope="module", params=[name for name, _ in SETS])
def written(request: pytest.FixtureRequest) -> tuple[str, str, list]:
    name = request.param
    return name, devsets.SETS[name], devsets.read_sources(DATA / name)


def test_brat_files_are_built_from_the_sources(written) -> None:
    name, _, _ = written
    assert devsets.stale_files(DATA / name) == []


def test_brat_reader_reads_every_note_with_its_spans(written) -> None:
    name, lang, notes = written
    corpus = read_corpus(DATA / name / "brat", "brat", scheme=devsets.SCHEME, lang=lang)
    counts = corpus_counts(corpus)
    assert counts["failures"] == 0 and counts["text_mismatches"] == 0
    assert counts["documents"] == len(notes) >= 60
    by_id = {d.id: d for d in corpus.documents}
    for note in notes:
        doc = by_id[note.id]
        assert doc.text == note.text and doc.lang == lang
        assert sorted((s.start, s.end, s.label) for s in doc.spans) == sorted(note.spans)


def test_every_category_has_enough_spans(written) -> None:
    _, _, notes = written
    counts = devsets.counts(notes)
    short = {c.value: counts[c.value] for c, n in MINIMUM.items() if counts[c.value] < n}
    assert short == {}


def test_annotations_are_consistent_across_the_set(written) -> None:
    name, _, notes = written
    assert devsets.consistency(notes, devsets.ambiguous_strings(DATA / name)) == []


def test_person_spans_hold_no_kinship_or_role_word(written) -> None:
    _, lang, notes = written
    persons = {Category.PERSON, Category.PERSON_THIRD_PARTY}
    bad = [
        (n.id, s)
        for n in notes
        for s, e, label in n.spans
        if label in persons and set(_words(n.text[s:e])) & KINSHIP[lang]
    ]
    assert bad == []


def test_no_span_is_only_kinship_words(written) -> None:
    _, lang, notes = written
    bad = [
        (n.id, s) for n in notes for s, e, _ in n.spans if set(_words(n.text[s:e])) <= KINSHIP[lang]
    ]
    assert bad == []


def test_clinical_vocabulary_is_never_annotated(written) -> None:
    _, _, notes = written
    bad = [(n.id, s) for n in notes for s, e, _ in n.spans if set(_words(n.text[s:e])) & CLINICAL]
    assert bad == []
    text = " ".join(n.text for n in notes).casefold()
    assert sum(word in text for word in CLINICAL) >= 10  # the sets do contain them


def test_german_titles_stay_outside_name_spans() -> None:
    notes = devsets.read_sources(DATA / "de_letters")
    persons = {Category.PERSON, Category.PERSON_THIRD_PARTY}
    bad = [
        (n.id, s)
        for n in notes
        for s, e, label in n.spans
        if label in persons and set(_words(n.text[s:e])) & GERMAN_TITLES
    ]
    assert bad == []


def test_markup_parses_to_offsets_and_brat_lines() -> None:
    text, spans = devsets.parse_markup("Seen [[D:9/7]] by [[TP:Dr. Ames]].\n", "x")
    assert text == "Seen 9/7 by Dr. Ames.\n"
    assert spans == ((5, 8, Category.DATE), (12, 20, Category.PERSON_THIRD_PARTY))
    note = devsets.Note("n1", "icu-nursing", text, spans, "x")
    assert devsets.brat_ann(note) == ("T1\tDATE 5 8\t9/7\nT2\tPERSON_THIRD_PARTY 12 20\tDr. Ames\n")


@pytest.mark.parametrize(
    "source",
    ["[[Q:word]]", "[[SEX:F]]", "[[D: 9/7]]", "a [[D:9/7] b", "a ]] b", "[[PERSON:x\ny]]"],
    ids=["unknown-code", "not-annotated", "outer-space", "unclosed", "stray-close", "newline"],
)
def test_malformed_markup_raises(source: str) -> None:
    with pytest.raises(devsets.MarkupError):
        devsets.parse_markup(source, "x")


def test_consistency_finds_an_unannotated_repeat() -> None:
    a = devsets.Note("a", "g", "Seen by Ames.", ((8, 12, Category.PERSON_THIRD_PARTY),), "x")
    b = devsets.Note("b", "g", "Ames called.", (), "x")
    assert len(devsets.consistency([a, b])) == 1
    assert devsets.consistency([a, b], {"Ames": "a word too"}) == []
