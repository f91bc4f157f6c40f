"""A common-word prior for names, from maintained lexical resources.

* ``wordfreq`` (Apache-2.0; data CC BY-SA 4.0): a word's Zipf frequency in a language (how
  often it is written per billion words, on a log scale: 3 is once per million), for the
  languages of ``[prior] languages`` in ``clinical_terms.toml``;
* ``german-nouns`` (CC BY-SA 4.0, from Wiktionary): German nouns with every inflected form,
  apart from the entries Wiktionary marks as surnames, given names, toponyms or proper nouns;
* the shipped name lists (``languages/*/names.toml``, read through
  :func:`polydeid.locales.names.is_pool_name`): a word one of them lists is a name as well as a
  word, whatever its frequency (not the german-nouns marks, which make "Mutter" and "Arzt"
  surnames too);
* ``clinical_terms.toml``: clinical words and abbreviations per language and drug names by
  their INN stems.

Every resource is read lazily, on its first question, and cached.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache

from polydeid.locales import _schema as schema
from polydeid.locales import canonical_language, shared_data
from polydeid.locales.clinical_terms import clinical_terms
from polydeid.locales.names import is_pool_name
from polydeid.text import frequency

#: Wiktionary part-of-speech marks of German entries that are names, not common nouns.
_GERMAN_NAME_MARKS = ("Nachname", "Vorname", "Toponym", "Eigenname", "Straßenname")
#: Where a drug name's stem decides: a word of at least this many letters.
DRUG_MIN_LETTERS = 8


@cache
def prior_languages() -> frozenset[str]:
    """The languages whose word frequencies the prior reads (``[prior] languages``)."""
    raw = shared_data("clinical_terms")
    table = schema.table(raw, "prior", "clinical_terms.toml")
    codes = schema.strings(table, "languages", "clinical_terms.toml", "prior.")
    return frozenset(canonical_language(c) for c in codes)


def zipf(word: str, lang: str) -> float:
    """The Zipf frequency of ``word`` in ``lang`` (0.0 where the prior reads no frequencies of
    ``lang``, or the word is unknown or rarer than :data:`~polydeid.text.frequency.ZIPF_FLOOR`:
    :func:`polydeid.text.frequency.zipf`)."""
    code = canonical_language(lang)
    if code not in prior_languages():
        return 0.0
    return frequency.zipf(word, code)


@dataclass(frozen=True, slots=True)
class GermanNoun:
    """One entry of ``german-nouns`` (CC BY-SA 4.0 data from Wiktionary), as written: its lemma,
    its kinds ("Toponym", "Nachname", ...; comma-separated), its gender (empty when none) and its
    inflected forms."""

    lemma: str
    kinds: str
    gender: str
    forms: tuple[str, ...]


def german_noun_entries() -> Iterator[GermanNoun]:
    """Every entry of the ``german-nouns`` table, read from the package's CSV (without
    building its index). Not kept: :func:`german_noun_sets` keeps what is asked of it."""
    from german_nouns.config import CSV_FILE_PATH  # type: ignore[import-untyped]

    with open(CSV_FILE_PATH, encoding="utf-8", newline="") as handle:
        rows = csv.reader(handle)
        next(rows, None)
        for row in rows:
            if len(row) >= 2:
                gender = row[2] if len(row) > 2 else ""
                yield GermanNoun(row[0], row[1], gender, tuple(row[7:]))


@dataclass(frozen=True, slots=True)
class GermanNounSets:
    """What polydeid reads of ``german-nouns``, case-folded, from one pass over the table.

    ``forms``: every form of a common noun that no entry marks as a name; ``named_forms``: the
    forms of the entries marked as names (:data:`_GERMAN_NAME_MARKS`); ``lemmas``: the lemmas
    of common nouns with a grammatical gender that are no toponym, surname or given name;
    ``toponyms``: the lemmas marked as toponyms."""

    forms: frozenset[str]
    named_forms: frozenset[str]
    lemmas: frozenset[str]
    toponyms: frozenset[str]


@cache
def german_noun_sets() -> GermanNounSets:
    """:class:`GermanNounSets`, built once (the table's entries are not kept: they take ten
    times the memory of these sets)."""
    proper = {"Toponym", "Nachname", "Vorname"}
    nouns: set[str] = set()
    names: set[str] = set()
    lemmas: set[str] = set()
    toponyms: set[str] = set()
    for entry in german_noun_entries():
        forms = {w.casefold() for w in (entry.lemma, *entry.forms) if w}
        marked = any(m in entry.kinds for m in _GERMAN_NAME_MARKS)
        (names if marked else nouns).update(forms)
        if not entry.lemma:
            continue
        kinds = set(entry.kinds.split(","))
        if "Toponym" in kinds:
            toponyms.add(entry.lemma.casefold())
        elif entry.gender and not proper & kinds:
            lemmas.add(entry.lemma.casefold())
    return GermanNounSets(
        frozenset(nouns - names), frozenset(names), frozenset(lemmas), frozenset(toponyms)
    )


def german_noun(word: str) -> bool:
    """Whether ``word`` is a form of a German common noun that no entry marks as a name."""
    return word.casefold() in german_noun_sets().forms


def is_listed_name(word: str) -> bool:
    """Whether a shipped name list has ``word`` (any case)."""
    return is_pool_name(word)


def is_clinical_word(word: str, *langs: str) -> bool:
    """Whether ``word`` is a clinical word or abbreviation of ``langs`` or English, or a drug
    name by its INN stem: a word of :data:`DRUG_MIN_LETTERS` letters or more in lower case,
    or one that no name list has (:func:`is_listed_name`), ending with a stem as written."""
    folded = word.casefold()
    if folded in _clinical_words((*langs, "en")):
        return True
    if len(folded) < DRUG_MIN_LETTERS or not folded.isalpha():
        return False
    if not word.islower() and is_listed_name(word):
        return False
    return folded.endswith(_drug_endings())


@cache
def _clinical_words(langs: tuple[str, ...]) -> frozenset[str]:
    return clinical_terms().words_of(*langs)


@cache
def _drug_endings() -> tuple[str, ...]:
    """The drug stems of ``clinical_terms.toml``, casefolded."""
    return tuple({s.casefold() for s in clinical_terms().drug_stems})
