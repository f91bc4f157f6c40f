"""Latin anatomy written with its abbreviated head ("A. brachialis", "N. suralis", "V. cava",
"M. deltoideus", "Lig. collaterale") and organisms ("E. coli", "S. aureus", "Escherichia
coli", "Candida spp.") as protected clinical terms.

A capital and a dot before a word read like a name's initial, and a tagger that redacts "A.
brachialis" or "E. coli" changes the finding. This rule marks the whole term as a
:attr:`~polydeid.core.taxonomy.Fact.CLINICAL_TERM` span, which the resolver protects from
every identifier candidate.

Anatomy: a head of ``[anatomy] heads`` (case as written, with its dot) and one to four Latin
words in lower case, each of four letters or more with an ending of ``[anatomy] endings`` and
none a name particle ("A. della Rosa" stays a name; "N. Smith" has a capital). Organisms: a
genus of ``[organisms] genera`` or a capital's initial and dot, then a species epithet of
``[organisms] species``. Language-independent; data in ``locales/clinical_terms.toml``.
"""

from __future__ import annotations

from functools import cache

import regex

from polydeid.core.taxonomy import Fact
from polydeid.detect.rules._base import PhraseFactRule
from polydeid.locales.clinical_terms import ClinicalTerms, clinical_terms
from polydeid.locales.names import name_particles
from polydeid.text.patterns import Pattern, compile_pattern, phrase_alternation

SOURCE = "facts.latin_terms.v1"

_SPACE = r"[ \t\u00a0]"


@cache
def _latin_pattern() -> Pattern | None:
    terms = clinical_terms()
    forms = []
    if terms.anatomy_heads and terms.anatomy_endings:
        heads = phrase_alternation(terms.anatomy_heads, fold_case=False)
        endings = "|".join(regex.escape(e) for e in sorted(terms.anatomy_endings, key=len)[::-1])
        particles = phrase_alternation(name_particles(), fold_case=True)
        word = (
            rf"(?!(?:{particles})(?![\p{{L}}]))(?=\p{{Ll}}{{4}})"
            rf"\p{{Ll}}+(?:{endings})(?![\p{{L}}\p{{N}}])"
        )
        forms.append(rf"(?:{heads}){_SPACE}?{word}(?:{_SPACE}+{word}){{0,3}}")
    if terms.species:
        genera = phrase_alternation(terms.genera, fold_case=False) if terms.genera else "(?!)"
        species = phrase_alternation(terms.species, fold_case=False)
        forms.append(
            rf"(?:(?:{genera}){_SPACE}+|\p{{Lu}}\.{_SPACE}?)(?:{species})"
            rf"(?:(?<=\.)|(?![\p{{L}}\p{{N}}]))"
        )
    if not forms:
        return None
    # every form opens with a capital: the look-ahead rejects other positions fast
    capital = "(?=\\p{Lu})" if _all_capitalised(terms) else ""
    return compile_pattern(rf"{capital}(?<![\p{{L}}\p{{N}}.])(?:{'|'.join(forms)})")


def _all_capitalised(terms: ClinicalTerms) -> bool:
    """Whether every anatomy head and genus opens with a capital (the organisms' initial
    form does: ``\\p{Lu}\\.``)."""
    return all(w[:1].isupper() for w in (*terms.anatomy_heads, *terms.genera))


class LatinTermRule(PhraseFactRule):
    """Marks Latin anatomy with an abbreviated head and organisms as clinical terms."""

    id = SOURCE
    kind = Fact.CLINICAL_TERM

    def pattern(self, langs: tuple[str, ...]) -> Pattern | None:
        return _latin_pattern()
