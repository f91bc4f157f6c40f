"""What a field name says about its value: ``role_for_name("patientFirstName")`` → PERSON.

The vocabulary is data (``lexicon/data/fields.toml``) plus the localised form labels of every
language pack (``locales/languages/*/field_labels.toml``), so CSV headers and JSON keys in
any supported language are understood. Matching is on word suffixes of the normalised name:
the longest listed phrase that ends the name wins, so ``postal_code`` is an address while
``drug_code`` is a code, and ``mother.name`` (a parent key joined to the leaf) names a
third party while ``drug.name`` is only scanned as text.
"""

from __future__ import annotations

import re
import tomllib
import unicodedata
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from importlib import resources
from typing import Generic, TypeVar

import regex

from polydeid.core.taxonomy import Category
from polydeid.locales import check_data, languages
from polydeid.locales.field_labels import field_labels


class RoleKind(StrEnum):
    TEXT = "text"
    VALUE = "value"
    SKIP = "skip"


@dataclass(frozen=True, slots=True)
class Role:
    """How a field is judged. ``context`` is label text (a key, a header) put before the value
    when it is scanned, so context-gated rules ("MRN: 12345678") work on bare values;
    ``hints`` are passed to the detectors as segment hints (``field:phone``)."""

    kind: RoleKind
    category: Category | None = None
    context: str = ""
    hints: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        if (self.kind is RoleKind.VALUE) != (self.category is not None):
            raise ValueError("a value role needs a category, and only a value role has one")

    def __repr__(self) -> str:
        cat = f" {self.category.name}" if self.category else ""
        return f"Role({self.kind.value}{cat})"

    def with_context(self, context: str) -> Role:
        return Role(self.kind, self.category, context, self.hints)


TEXT = Role(RoleKind.TEXT)
SKIP = Role(RoleKind.SKIP)


def value_role(category: Category, *, context: str = "") -> Role:
    return Role(RoleKind.VALUE, category, context)


def text_role(context: str = "", *, hints: frozenset[str] = frozenset()) -> Role:
    return Role(RoleKind.TEXT, None, context, hints)


#: Values under an identifying field name that are placeholders, not identifiers.
NULL_VALUES = frozenset(
    {"", "-", "--", "—", "n/a", "na", "none", "null", "nil", "unknown", "not known", "?"}
)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
#: What words of field names and labels are made of: letters, combining marks (Devanagari
#: vowel signs, a nukta) and digits.
WORD_CHARS = r"\p{L}\p{M}\p{N}"
_NON_WORD = regex.compile(rf"[^{WORD_CHARS}]+")
#: Rank on equal phrase length: a value role beats text beats skip (fail closed).
_RANK = {RoleKind.VALUE: 0, RoleKind.TEXT: 1, RoleKind.SKIP: 2}
T = TypeVar("T")


def normalise_name(name: str) -> tuple[str, ...]:
    """The words of a field name: camelCase and snake_case split, lower case, NFC."""
    spaced = _CAMEL.sub(" ", unicodedata.normalize("NFC", name))
    return tuple(w for w in _NON_WORD.split(spaced.casefold()) if w)


@cache
def _raw() -> dict:
    return check_data(
        tomllib.loads(
            resources.files("polydeid.lexicon").joinpath("data/fields.toml").read_text("utf-8")
        ),
        "lexicon/data/fields.toml",
    )


def _form_labels(keys: Collection[str] | None = None) -> Iterator[tuple[str, str]]:
    """(key, label) of every language's ``field_labels.toml`` whose key is in ``keys`` (every
    key when None)."""
    for lang in languages():
        for key, label in field_labels(lang).labels.items():
            if keys is None or key in keys:
                yield key, label


class _Phrases(Generic[T]):
    """Phrases (as words) → a value; :meth:`ending` finds the longest phrase ending some words."""

    def __init__(self, table: dict[tuple[str, ...], T]) -> None:
        self.table = table
        self.longest = max((len(words) for words in table), default=0)

    def ending(self, words: Sequence[str]) -> T | None:
        for k in range(min(len(words), self.longest), 0, -1):
            value = self.table.get(tuple(words[-k:]))
            if value is not None:
                return value
        return None


@cache
def _table() -> _Phrases[Role]:
    """Phrase (as words) → role, from the data file and every language's form labels."""
    raw = _raw()
    table: dict[tuple[str, ...], Role] = {}

    def put(phrase: str, role: Role) -> None:
        words = normalise_name(phrase)
        if not words:
            return
        old = table.get(words)
        if old is None or _RANK[role.kind] < _RANK[old.kind]:
            table[words] = role

    for name, entry in raw.get("value", {}).items():
        category = Category.parse(name)
        for phrase in entry["names"]:
            put(phrase, value_role(category))
    for phrase in raw.get("text", {}).get("names", []):
        put(phrase, text_role())
    for phrase in raw.get("skip", {}).get("names", []):
        put(phrase, SKIP)
    label_map = {k: Category.parse(v) for k, v in raw.get("labels", {}).items()}
    for key, label in _form_labels(label_map):
        put(label, value_role(label_map[key]))
    return _Phrases(table)


def role_for_words(words: Sequence[str]) -> Role | None:
    """The role of the longest known phrase that ends ``words``, or None."""
    return _table().ending(words)


@cache
def _name_roles(section: str) -> _Phrases[Category]:
    """Phrase (as words) → the role of a name written after it (``[name_roles]``: labels
    with a colon; ``[noun_roles]``: nouns right before the name; ``[name_labels]``: labels
    that say a name follows)."""
    table: dict[tuple[str, ...], Category] = {}
    for name, entry in _raw().get(section, {}).items():
        category = Category.parse(name)
        phrases = [*entry.get("names", ()), *(v for _, v in _form_labels(entry.get("keys", ())))]
        for phrase in phrases:
            if words := normalise_name(phrase):
                table[words] = category
    return _Phrases(table)


def name_role_for_words(words: Sequence[str]) -> Category | None:
    """The role (``PERSON`` or ``PERSON_THIRD_PARTY``) a label ending in ``words`` gives the
    name written after it in running text ("Patient:", "Лечащий врач:"), or None."""
    return _name_roles("name_roles").ending(words)


def noun_role_for_words(words: Sequence[str]) -> Category | None:
    """The role a noun ending ``words`` gives the name written right after it, with no colon
    between ("the patient Okello", "BN Giang", "bác sĩ Học"), or None."""
    return _name_roles("noun_roles").ending(words)


def name_label_for_words(words: Sequence[str]) -> Category | None:
    """The name category (``PERSON`` or ``PERSON_THIRD_PARTY``) of a label ending in
    ``words`` that says a name follows ("Patient name:", "Izina rya nyina:", "姓名："), or
    None (``[name_labels]``)."""
    return _name_roles("name_labels").ending(words)


def name_label_phrases() -> frozenset[tuple[str, ...]]:
    """Every name label of ``[name_labels]`` (as words)."""
    return frozenset(_name_roles("name_labels").table)


#: The categories whose whole value a label in running text gives
#: (:mod:`polydeid.detect.rules.demographics`): short values of a closed or nearly closed
#: vocabulary that a model reads poorly out of a sentence ("Occupation: boda boda rider",
#: "Kabila: Luo", "Eddiini: Seventh-day Adventist", "Ekika: Ngonge").
DEMOGRAPHIC_CATEGORIES = frozenset(
    {Category.PROFESSION, Category.TRIBE, Category.RELIGION, Category.PERSON_CLAN}
)


def demographic_label_for_words(words: Sequence[str]) -> Category | None:
    """The category (one of :data:`DEMOGRAPHIC_CATEGORIES`) of a label ending in ``words``
    ("Occupation:", "Kabila:", "职业：", "religion="), read like a field name
    (:func:`role_for_words`: the longest known phrase ending the words decides, so
    "Religion code" is a code), or None."""
    role = role_for_words(words)
    if role is None or role.kind is not RoleKind.VALUE:
        return None
    return role.category if role.category in DEMOGRAPHIC_CATEGORIES else None


@cache
def demographic_label_phrases() -> frozenset[tuple[str, ...]]:
    """Every field name and form label (as words) whose value is of a demographic category."""
    return frozenset(
        words
        for words, role in _table().table.items()
        if role.kind is RoleKind.VALUE and role.category in DEMOGRAPHIC_CATEGORIES
    )


@cache
def demographic_nouns() -> dict[str, Category]:
    """``[value_nouns]``: phrase → the category of the clan or tribe it names right after it in
    running text ("ekika kya", "kabila la"); phrases in :func:`noun_key` form."""
    return {
        noun_key(phrase): Category.parse(name)
        for name, entry in _raw().get("value_nouns", {}).items()
        for phrase in entry.get("names", ())
    }


def noun_key(phrase: str) -> str:
    """A ``[value_nouns]`` phrase as looked up: lower case, single spaces, straight
    apostrophes ("Ekika  ky’" → "ekika ky'")."""
    return " ".join(phrase.replace("’", "'").casefold().split())


@cache
def _no_name_values() -> frozenset[tuple[str, ...]]:
    values = _raw().get("no_name", {}).get("values", ())
    return frozenset(w for v in values if (w := normalise_name(v)))


@cache
def _all_labels() -> frozenset[tuple[str, ...]]:
    """Every known field name and form label (of any key of any language), as words."""
    labels = {words for _, label in _form_labels() if (words := normalise_name(label))}
    for phrases in (_table(), _name_roles("name_labels"), _name_roles("name_roles")):
        labels.update(phrases.table)
    return frozenset(labels)


def is_label(words: Sequence[str]) -> bool:
    """Whether ``words`` are exactly a known field name or form label (of any kind)."""
    return tuple(words) in _all_labels()


def is_no_name(value: str) -> bool:
    """Whether a label's value says no name is known: a placeholder (:data:`NULL_VALUES`:
    "unknown", "N/A") or a ``[no_name]`` phrase ("no consta", "haijulikani")."""
    return value.strip().casefold() in NULL_VALUES or normalise_name(value) in _no_name_values()


def role_for_name(*names: str) -> Role:
    """The role of a value under the field ``names`` (outermost first, e.g. a parent key and
    the leaf key): the longest known phrase ending the joined words decides, so the parent
    counts only where it makes a longer phrase. An unknown name is text, scanned with the
    name as context."""
    all_words: tuple[str, ...] = ()
    for name in names:
        all_words += normalise_name(name)
    role = role_for_words(all_words)
    context = " ".join(all_words[-4:])
    if role is None:
        return text_role(context)
    return role.with_context(context)
