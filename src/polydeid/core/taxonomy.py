"""Canonical categories, clinical-fact kinds, and mappings from external annotation schemes.

The mapping tables are data: ``core/schemes/*.toml``, one file per external scheme, each
mapping the scheme's labels onto canonical category names (or ``"O"`` for labels that are
deliberately not identifiers in polydeid's sense). Unknown labels raise, never pass silently.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from enum import StrEnum
from functools import cache
from importlib import resources

from polydeid.core.errors import UnknownCategoryError, UnknownSchemeError


class Category(StrEnum):
    """A canonical identifier category (see README, "Categories")."""

    PERSON = "PERSON"
    PERSON_THIRD_PARTY = "PERSON_THIRD_PARTY"
    PERSON_CLAN = "PERSON_CLAN"
    ID_NATIONAL = "ID_NATIONAL"
    ID_RECORD = "ID_RECORD"
    ID_OTHER = "ID_OTHER"
    CONTACT_PHONE = "CONTACT_PHONE"
    CONTACT_OTHER = "CONTACT_OTHER"
    LOCATION_ADDRESS = "LOCATION_ADDRESS"
    LOCATION_VILLAGE = "LOCATION_VILLAGE"
    LOCATION_FACILITY = "LOCATION_FACILITY"
    ORGANIZATION = "ORGANIZATION"
    DATE = "DATE"
    AGE = "AGE"
    PROFESSION = "PROFESSION"
    TRIBE = "TRIBE"
    RELIGION = "RELIGION"
    SEX = "SEX"

    @classmethod
    def parse(cls, name: str) -> Category:
        """The category called ``name`` (case-insensitive); raises with the known names."""
        try:
            return cls[name.strip().upper()]
        except KeyError:
            raise UnknownCategoryError(name, known=[c.name for c in cls]) from None


class Fact(StrEnum):
    """A clinical fact that de-identification must leave exactly as written."""

    DOSE = "DOSE"
    LAB_VALUE = "LAB_VALUE"
    VITAL = "VITAL"
    DURATION = "DURATION"
    QUANTITY = "QUANTITY"
    #: Named clinical entities annotated in corpora (the synthetic generator's hard negatives:
    #: a drug that reads like a name, an eponymous disease, a ward). The rule layer does not
    #: find these; a detector or gold annotation that marks them protects them all the same.
    DRUG = "DRUG"
    DIAGNOSIS = "DIAGNOSIS"
    DEPARTMENT = "DEPARTMENT"
    #: A clinician named by a specialty whose name holds a kinship word ("su médico de familia",
    #: the general practitioner; rule ``facts.care_roles.v1``): not a relative.
    CARE_ROLE = "CARE_ROLE"
    #: A person named by their relation or their part in care, not by name ("his wife", "su
    #: madre", "the patient", "Frau Kollegin"; pass ``names.kinship``, and MEDDOCAN's relatives'
    #: annotations made only of kinship words): identifies nobody.
    KINSHIP = "KINSHIP"
    #: A clinical term that reads like a name: an eponymous device, sign, test, manoeuvre or
    #: scale ("Foley catheter", "signe de Lasègue", "Glasgow 15"), Latin anatomy with its
    #: abbreviated head ("N. suralis"), an organism ("E. coli") (rules ``facts.eponym_terms.v1``,
    #: ``facts.latin_terms.v1``).
    CLINICAL_TERM = "CLINICAL_TERM"


Label = Category | Fact

#: Coarse groups used for coarse-category evaluation and by the tagger.
COARSE_GROUP: dict[Category, str] = {
    Category.PERSON: "NAME",
    Category.PERSON_THIRD_PARTY: "NAME",
    Category.PERSON_CLAN: "NAME",
    Category.ID_NATIONAL: "ID",
    Category.ID_RECORD: "ID",
    Category.ID_OTHER: "ID",
    Category.CONTACT_PHONE: "CONTACT",
    Category.CONTACT_OTHER: "CONTACT",
    Category.LOCATION_ADDRESS: "LOCATION",
    Category.LOCATION_VILLAGE: "LOCATION",
    Category.LOCATION_FACILITY: "LOCATION",
    Category.ORGANIZATION: "ORGANIZATION",
    Category.DATE: "DATE",
    Category.AGE: "AGE",
    Category.PROFESSION: "PROFESSION",
    Category.TRIBE: "DEMOGRAPHIC",
    Category.RELIGION: "DEMOGRAPHIC",
    Category.SEX: "DEMOGRAPHIC",
}

OUTSIDE = "O"


@dataclass(frozen=True, slots=True)
class Scheme:
    """An external label scheme and its mapping onto canonical categories."""

    name: str
    description: str
    source: str
    mapping: dict[str, Category | None]
    #: Date granularities (``polydeid.dates.Granularity`` values, e.g. ``"year"``) that the
    #: scheme's guideline does not annotate: HIPAA-based schemes leave a year alone unmarked.
    unmarked_dates: frozenset[str] = frozenset()
    #: Labels whose annotations made only of kinship words are :attr:`Fact.KINSHIP` mentions,
    #: not identifiers (``[kinship] labels``; the corpus readers apply it with the language's
    #: kinship words)
    kinship_labels: frozenset[str] = frozenset()
    #: Titles the scheme's guideline puts at the start of a person span (``M.``, ``Mme``,
    #: ``docteur``: ``[persons] titles``). Where the language's convention leaves a title out
    #: of the name (``titles_in_names`` false), the corpus readers move them out of the span.
    person_titles: frozenset[str] = frozenset()

    @property
    def groups(self) -> frozenset[str]:
        """The coarse groups (:data:`COARSE_GROUP`) of the categories the scheme maps onto."""
        return frozenset(COARSE_GROUP[c] for c in self.mapping.values() if c is not None)

    def map(self, label: str) -> Category | None:
        """Canonical category for ``label``; ``None`` when the scheme marks it as not PHI."""
        key = label.strip()
        if key in self.mapping:
            return self.mapping[key]
        upper = key.upper()
        for k, v in self.mapping.items():
            if k.upper() == upper:
                return v
        raise UnknownCategoryError(label, known=sorted(self.mapping), scheme=self.name)

    def map_bio(self, tag: str) -> tuple[str, Category | None]:
        """Split a BIO/BILOU tag into its prefix and mapped category (``O`` maps to None)."""
        if tag.strip().upper() == OUTSIDE:
            return OUTSIDE, None
        prefix, sep, rest = tag.strip().partition("-")
        if sep and prefix.upper() in {"B", "I", "E", "S", "L", "U"}:
            return prefix.upper(), self.map(rest)
        return "B", self.map(tag)


@cache
def scheme_names() -> tuple[str, ...]:
    """Names of every scheme shipped in ``core/schemes``."""
    folder = resources.files("polydeid.core") / "schemes"
    return tuple(
        sorted(p.name.removesuffix(".toml") for p in folder.iterdir() if p.name.endswith(".toml"))
    )


@cache
def scheme(name: str) -> Scheme:
    """Load the external scheme ``name`` (e.g. ``"meddocan"``, ``"conll"`` for MasakhaNER)."""
    if name not in scheme_names():
        raise UnknownSchemeError(name, known=list(scheme_names()))
    raw = tomllib.loads(
        (resources.files("polydeid.core") / "schemes" / f"{name}.toml").read_text("utf-8")
    )
    mapping: dict[str, Category | None] = {}
    for label, target in raw["labels"].items():
        mapping[label] = None if target == OUTSIDE else Category.parse(target)
    return Scheme(
        name=name,
        description=raw.get("description", ""),
        source=raw.get("source", ""),
        mapping=mapping,
        unmarked_dates=frozenset(raw.get("unmarked_dates", ())),
        kinship_labels=frozenset(raw.get("kinship", {}).get("labels", ())),
        person_titles=frozenset(raw.get("persons", {}).get("titles", ())),
    )
