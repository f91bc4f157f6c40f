"""A common-word prior for model names: a word of the language's vocabulary is no name unless
the model is sure of it.

A model reads capitalised nouns ("Leber", "Kniegelenk", "Fieber", "Salbe": German writes every
noun with a capital), words in capitals and clinical abbreviations ("aline", "neo", "peep")
as names. :func:`drop_common_words` drops a name span of a model (sources
``tagger.``/``backend.``) whose every word is vocabulary
(:func:`word_prior`) when its score is below :data:`CONFIDENT`, or whatever its score when
every word is a clinical word or drug name. A common word counts only where it is written as
a name is (capitalised or in capitals); lower-case common words such as kinship words
("madre", "wife") are left to the model. It keeps a span with an initial, a span right after
a title or honorific ("Frau Leber"), a span right beside another identifier span (a part of
it: "Fiscal Luis" "Portero" "García"), and a word that a shipped name list has ("Rose",
"Baker", "Weiß", "Kaiser") unless it is a clinical word written in lower case or capitals
("aline", "NEO"). The lexical resources are :mod:`polydeid.locales.common_words`.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import IntEnum

import regex

from polydeid.core.spans import Span
from polydeid.core.taxonomy import COARSE_GROUP, Category
from polydeid.locales import canonical_language
from polydeid.locales.common_words import (
    german_noun,
    is_clinical_word,
    is_listed_name,
    prior_languages,
    zipf,
)
from polydeid.locales.names import name_words

#: Sources whose names are a model's reading, which the prior may overrule.
MODEL_SOURCES = ("tagger.", "backend.")
#: A model name span at or above this score outweighs a common word (not a clinical word).
CONFIDENT = 0.9
#: A word at least this frequent (Zipf: 3 is once per million words) is a common word.
COMMON_ZIPF = 3.0

_WORD = regex.compile(r"[\p{L}\p{M}]+")
_PREVIOUS_WORD = regex.compile(r"([\p{L}]+)\.?[ \t\u00a0]+$")


class Prior(IntEnum):
    """What the prior says of a word: a name (or unknown), a common word, a clinical word."""

    NAME = 0
    COMMON = 1
    CLINICAL = 2


def word_prior(word: str, lang: str) -> Prior:
    """The prior of one word in ``lang`` (a canonical code).

    :attr:`Prior.CLINICAL`: a clinical word or abbreviation or a drug name
    (``clinical_terms.toml``), unless written as a name ("Aline") that a name list has;
    :attr:`Prior.NAME`: any other word a name list has, and any other word in lower case;
    :attr:`Prior.COMMON`: a capitalised (or all-capitals) German common noun (german-nouns) or
    word of at least :data:`COMMON_ZIPF` in ``lang`` (wordfreq)."""
    listed = is_listed_name(word)
    written_as_name = word[:1].isupper() and not word.isupper()
    if is_clinical_word(word, lang) and not (listed and written_as_name):
        return Prior.CLINICAL
    if listed or len(word) < 3 or not word[:1].isupper():
        # a common word in lower case is not written as a name: the prior leaves it to the
        # model and to the passes that know such words (kinship and role words)
        return Prior.NAME
    if lang == "de" and german_noun(word):
        return Prior.COMMON
    if lang in prior_languages() and zipf(word, lang) >= COMMON_ZIPF:
        return Prior.COMMON
    return Prior.NAME


def drop_common_words(text: str, spans: Sequence[Span], lang: str) -> tuple[Span, ...]:
    """``spans`` without the model names the prior overrules (see the module docstring)."""
    code = canonical_language(lang)
    titles = name_words(code).titles | name_words(code).honorifics
    out = []
    for span in spans:
        if (
            isinstance(span.label, Category)
            and COARSE_GROUP[span.label] == "NAME"
            and span.source.startswith(MODEL_SOURCES)
            and not _beside_another(text, span, spans)
            and _overruled(text, span, code, titles)
        ):
            continue
        out.append(span)
    return tuple(out)


def _beside_another(text: str, span: Span, spans: Sequence[Span]) -> bool:
    """Whether another identifier span is written right before or after ``span``, only spaces
    between ("Fiscal Luis" "Portero" "García", a street): the word is part of it."""
    for other in spans:
        if other.end <= span.start:
            gap = text[other.end : span.start]
        elif span.end <= other.start:
            gap = text[span.end : other.start]
        else:
            continue
        if len(gap) <= 2 and not gap.strip(" \t\u00a0"):
            return True
    return False


def _overruled(text: str, span: Span, lang: str, titles: frozenset[str]) -> bool:
    words = _WORD.findall(text, span.start, span.end)
    if not words or any(len(w) == 1 for w in words):
        return False
    previous = _PREVIOUS_WORD.search(text, max(0, span.start - 40), span.start)
    if previous is not None and previous.group(1).casefold() in titles:
        return False
    prior = min(word_prior(w, lang) for w in words)
    return prior is Prior.CLINICAL or (prior is Prior.COMMON and span.score < CONFIDENT)
