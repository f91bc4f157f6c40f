"""The shared ``clinical_terms.toml`` locale data kind: clinical vocabulary that reads like a
name.

``locales/clinical_terms.toml`` (language-independent, at the locales root)::

    [meta]          sources, licence
    [anatomy]       heads = abbreviated Latin heads with their dot ("A.", "N.", "Lig.");
                    endings = endings of the Latin words written after a head
    [organisms]     genera = genera written in full ("Escherichia"); species = epithets
                    written after a genus or its initial ("coli", "aureus", "spp.")
    [drugs]         stems = INN stems a drug name ends with ("apine", "prazole")
    [words.<lang>]  words = clinical words and abbreviations of a language ("aline", "peep")

:func:`clinical_terms` reads it into a :class:`ClinicalTerms`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from types import MappingProxyType

from polydeid.locales import _schema as schema
from polydeid.locales import canonical_language, shared_data


@dataclass(frozen=True, slots=True)
class ClinicalTerms:
    """The clinical vocabulary; empty without a ``clinical_terms.toml``."""

    anatomy_heads: tuple[str, ...] = ()
    anatomy_endings: tuple[str, ...] = ()
    genera: tuple[str, ...] = ()
    species: tuple[str, ...] = ()
    drug_stems: tuple[str, ...] = ()
    #: clinical words by canonical language code, casefolded
    words: Mapping[str, frozenset[str]] = field(default_factory=dict)

    def words_of(self, *langs: str) -> frozenset[str]:
        """The clinical words of ``langs`` (casefolded)."""
        return frozenset().union(*(self.words.get(canonical_language(x), ()) for x in langs))


@cache
def clinical_terms() -> ClinicalTerms:
    """The :class:`ClinicalTerms` of ``locales/clinical_terms.toml``; validated, cached."""
    raw = shared_data("clinical_terms")
    file = "clinical_terms.toml"
    anatomy = schema.table(raw, "anatomy", file)
    organisms = schema.table(raw, "organisms", file)
    words = {
        canonical_language(code): frozenset(
            w.casefold() for w in schema.strings(table, "words", file, f"words.{code}.")
        )
        for code, table in schema.table(raw, "words", file).items()
    }
    return ClinicalTerms(
        anatomy_heads=schema.strings(anatomy, "heads", file, "anatomy."),
        anatomy_endings=schema.strings(anatomy, "endings", file, "anatomy."),
        genera=schema.strings(organisms, "genera", file, "organisms."),
        species=schema.strings(organisms, "species", file, "organisms."),
        drug_stems=schema.strings(schema.table(raw, "drugs", file), "stems", file, "drugs."),
        words=MappingProxyType(words),
    )
