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
a title or honorific of any language ("Frau Leber", "Mr Herz"), a common word right after a
name, a kinship or role word ("wife Lucille", "Pat. Engel"), a span right beside another
identifier span (a part of it: "Fiscal Luis" "Portero" "García"), and a word that a name list
has ("Rose", "Baker", "Weiß", "Kaiser", "ABDELHAMID") unless it is a clinical word written in
lower case in mixed-case text ("aline") or in capitals not after a name ("NEO", but "Kevin
FOLEY"). The lexical resources are :mod:`polydeid.locales.common_words`.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from enum import IntEnum
from functools import cache, lru_cache

import regex

from polydeid.core.spans import Span
from polydeid.core.taxonomy import COARSE_GROUP, Category
from polydeid.locales import canonical_language, languages
from polydeid.locales.common_words import (
    german_noun,
    is_clinical_word,
    is_listed_name,
    prior_languages,
    zipf,
)
from polydeid.locales.kinship import kinship_vocabulary
from polydeid.locales.names import folded_titles, name_words

#: Sources whose names are a model's reading, which the prior may overrule.
MODEL_SOURCES = ("tagger.", "backend.")
#: A model name span at or above this score outweighs a common word (not a clinical word).
CONFIDENT = 0.9
#: A word at least this frequent (Zipf: 3 is once per million words) is a common word.
COMMON_ZIPF = 3.0

_WORD = regex.compile(r"[\p{L}\p{M}]+")
#: The word before a span, with a dot or a label's colon ("Mr.", "Patient:").
_PREVIOUS_WORD = regex.compile(r"([\p{L}]+)([.:]?)([ \t\u00a0]+)$")
_LOWER = regex.compile(r"\p{Ll}")
_UPPER = regex.compile(r"\p{Lu}")
#: The most characters (spaces) between a span and the identifier span it is part of.
_GAP = 2


class Prior(IntEnum):
    """What the prior says of a word: a name (or unknown), a common word, a clinical word."""

    NAME = 0
    COMMON = 1
    CLINICAL = 2


@lru_cache(maxsize=1 << 16)
def word_prior(word: str, lang: str, *, mixed_case: bool = True, after_name: bool = False) -> Prior:
    """The prior of one word in ``lang`` (a canonical code).

    ``mixed_case``: the text around writes both cases, so case tells a name from a word;
    ``after_name``: the word follows a name, a kinship or role word ("Kevin FOLEY", "wife
    Lucille"): it is written as a name.

    :attr:`Prior.CLINICAL`: a clinical word or abbreviation or a drug name
    (``clinical_terms.toml``) in lower case ("aline"; a word a name list
    (:func:`is_listed_name`) has only in mixed-case text), or not after a name in capitals
    ("NEO", "BRADY") or capitalised ("Leber"; not a listed name: "Aline");
    :attr:`Prior.NAME`: any other word a name list has, any other word after a name, and any
    other word in lower case; :attr:`Prior.COMMON`: a
    capitalised (or all-capitals) German common noun (german-nouns) or word of at least
    :data:`COMMON_ZIPF` in ``lang`` (wordfreq)."""
    listed = is_listed_name(word)
    lower = word.islower()
    if is_clinical_word(word, lang):
        if lower:
            if mixed_case or not listed:
                return Prior.CLINICAL
        elif not after_name and (word.isupper() or not listed):
            return Prior.CLINICAL
        return Prior.NAME
    if listed or after_name or len(word) < 3 or not word[:1].isupper():
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
    mixed_case = _LOWER.search(text) is not None and _UPPER.search(text) is not None
    neighbours = _Neighbours(text, spans)
    out = []
    for span in spans:
        if (
            isinstance(span.label, Category)
            and COARSE_GROUP[span.label] == "NAME"
            and span.source.startswith(MODEL_SOURCES)
            and not neighbours.beside(span)
            and _overruled(text, span, code, mixed_case)
        ):
            continue
        out.append(span)
    return tuple(out)


def _is_title(word: str, lang: str) -> bool:
    """Whether ``word`` is a title or honorific of ``lang`` (any case) or, written
    capitalised ("Mr", not "hr" nor "HR"), of any language pack: a segment may write a title
    of another language than its own ("Mr" in a German letter)."""
    folded = word.casefold()
    own = name_words(lang)
    if folded in own.titles or folded in own.honorifics:
        return True
    return word[:1].isupper() and not word.isupper() and folded in _titles()


@cache
def _titles() -> frozenset[str]:
    """The titles and honorifics of every language pack, casefolded."""
    packs = languages()
    return folded_titles(*packs).union(*(name_words(lang).honorifics for lang in packs))


class _Neighbours:
    """Whether another identifier span is written right before or after a span, only spaces
    between ("Fiscal Luis" "Portero" "García", a street): the word is part of it. Looks up the
    spans ending or starting within :data:`_GAP` characters by bisection."""

    def __init__(self, text: str, spans: Sequence[Span]) -> None:
        self.text = text
        self.by_end = sorted(spans, key=lambda s: s.end)
        self.ends = [s.end for s in self.by_end]
        self.by_start = sorted(spans, key=lambda s: s.start)
        self.starts = [s.start for s in self.by_start]

    def beside(self, span: Span) -> bool:
        lo = bisect_left(self.ends, span.start - _GAP)
        hi = bisect_right(self.ends, span.start)
        for other in self.by_end[lo:hi]:
            if other is not span and self._blank(other.end, span.start):
                return True
        lo = bisect_left(self.starts, span.end)
        hi = bisect_right(self.starts, span.end + _GAP)
        for other in self.by_start[lo:hi]:
            if other is not span and self._blank(span.end, other.start):
                return True
        return False

    def _blank(self, start: int, end: int) -> bool:
        return not self.text[start:end].strip(" \t\u00a0")


def _overruled(text: str, span: Span, lang: str, mixed_case: bool) -> bool:
    words = _WORD.findall(text, span.start, span.end)
    if not words or any(len(w) == 1 for w in words):
        return False
    previous = _PREVIOUS_WORD.search(text, max(0, span.start - 40), span.start)
    after_name = False
    if previous is not None:
        word, mark, space = previous.groups()
        if _is_title(word, lang):
            return False
        after_name = mixed_case and len(space) == 1 and _names_next(word, mark, lang)
    # the first word after a name ("Kevin FOLEY") or a kinship or role word ("wife Lucille")
    # is read as a name of that person, unless it is a title, kinship or role word itself
    # ("Ehefrau Frau") or, after a kinship or role word, a German noun ("Mutter Auskunft")
    first = words[0]
    if first.casefold() in _titles() or first.casefold() in _kinship_words(lang):
        after_name = False
    elif after_name and previous is not None and not _is_name_word(previous.group(1)):
        after_name = not (lang == "de" and german_noun(first))
    prior = min(
        word_prior(w, lang, mixed_case=mixed_case, after_name=after_name and i == 0)
        for i, w in enumerate(words)
    )
    return prior is Prior.CLINICAL or (prior is Prior.COMMON and span.score < CONFIDENT)


def _names_next(word: str, mark: str, lang: str) -> bool:
    """Whether a word written after ``word`` (followed by ``mark``: "", "." or ":") names a
    person in mixed-case text: ``word`` is a listed name written as one ("Kevin", not "KEVIN"
    nor one ending a sentence) or a kinship or role word or form of address of ``lang`` or
    English ("wife", "Kollegin", "Patient:"), not in capitals, with a dot only as a
    capitalised abbreviation ("Pat.", not "resident.")."""
    if word.isupper():
        return False
    if not mark and _is_name_word(word):
        return True
    if mark == "." and not word[:1].isupper():
        return False
    return word.casefold() in _kinship_words(lang)


def _is_name_word(word: str) -> bool:
    """Whether ``word`` is a listed name written as a name is (capitalised)."""
    return word[:1].isupper() and not word.isupper() and is_listed_name(word)


@cache
def _kinship_words(lang: str) -> frozenset[str]:
    """The one-word kinship and role words and forms of address of ``lang`` and English."""
    vocabulary = kinship_vocabulary(*dict.fromkeys((lang, "en")))
    return frozenset(e[0] for e in vocabulary.relations | vocabulary.forms if len(e) == 1)
