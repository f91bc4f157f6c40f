"""The names of a language (``names.toml``): pools for surrogates and synthetic notes, and
lookups of a name word's role and gender.

``locales/languages/<code>/names.toml``::

    [meta]      sources, licence
    [format]    order = "given_first" | "family_first"; joiner = " " ("" for Chinese);
                family_words = how many final words are surnames in a 3+ word name (2 for Spanish);
                titles = titles and particles written with names ("Dr", "Bw", "Frau"; "van");
                honorifics = titles of running text before a name ("Migosi", "Rais");
                greetings = words a message opens with before the name it addresses ("Dear");
                pronouns = the first-person pronoun a writer puts before their own name;
                possessive_suffixes ("'s"); titles_in_names = whether a title written
                before a name belongs to the name span (English, as ASQ-PHI annotates)
    [default]   given_male, given_female, family; optional family_male/family_female
                (gendered surnames), middle_male/middle_female (Vietnamese), clans
    [countries.<CC>]  the same lists for names as written in that country (optional)
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from polydeid.core.cache import fingerprint, load_table, store_table
from polydeid.locales import canonical_language, language_data, language_info, languages
from polydeid.text.normalise import normalise

_NAME_LISTS = (
    "given_male",
    "given_female",
    "family",
    "family_male",
    "family_female",
    "middle_male",
    "middle_female",
    "clans",
)

#: Language whose names stand in when a name is written in another script than the segment's.
SCRIPT_LANGUAGE: Mapping[str, str] = {
    "Latin": "en",
    "Cyrillic": "ru",
    "Arabic": "ar",
    "Devanagari": "hi",
    "Ethiopic": "am",
    "Han": "zh",
}

_UNICODE_SCRIPT = {"CJK": "Han", **{s.upper(): s for s in SCRIPT_LANGUAGE}}


@dataclass(frozen=True, slots=True)
class NameFormat:
    """How a language writes names: ``[format]`` of its ``names.toml`` (see the module
    docstring; every field empty or default without one)."""

    family_first: bool = False
    family_words: int = 1
    joiner: str = " "
    titles: tuple[str, ...] = ()
    honorifics: tuple[str, ...] = ()
    greetings: tuple[str, ...] = ()
    pronouns: tuple[str, ...] = ()
    possessive_suffixes: tuple[str, ...] = ()
    titles_in_names: bool = False


@cache
def name_format(lang: str) -> NameFormat:
    """The :class:`NameFormat` of language ``lang`` (a canonical code)."""
    fmt = language_data(lang, "names").get("format", {})
    return NameFormat(
        family_first=fmt.get("order", "given_first") == "family_first",
        family_words=int(fmt.get("family_words", 1)),
        joiner=fmt.get("joiner", " "),
        titles=tuple(fmt.get("titles", ())),
        honorifics=tuple(fmt.get("honorifics", ())),
        greetings=tuple(fmt.get("greetings", ())),
        pronouns=tuple(fmt.get("pronouns", ())),
        possessive_suffixes=tuple(fmt.get("possessive_suffixes", ())),
        titles_in_names=bool(fmt.get("titles_in_names", False)),
    )


@cache
def name_titles(lang: str) -> tuple[str, ...]:
    """The capitalised titles of ``lang`` (lower-case particles such as ``zu``, ``dos`` belong
    to names and are left out)."""
    return tuple(t for t in name_format(lang).titles if not t[:1].islower())


@cache
def name_particles() -> frozenset[str]:
    """Every language's titles, casefolded: the titles ("mrs", "dr") and particles ("van",
    "de", "zu", "dos") written with names, which are no name on their own."""
    return frozenset(t.casefold() for lang in languages() for t in name_format(lang).titles)


@cache
def folded_titles(*langs: str) -> frozenset[str]:
    """The titles (:func:`name_titles`) of ``langs``, casefolded."""
    return frozenset(t.casefold() for lang in langs for t in name_titles(lang))


def titles_in_names(lang: str) -> bool:
    """Whether a title written before a name belongs to the name span in ``lang``."""
    return name_format(lang).titles_in_names


def is_title(word: str, *langs: str) -> bool:
    """Whether ``word`` is a title of one of ``langs`` (casefolded; "Dr", "Mrs", "Bw")."""
    return word.casefold() in folded_titles(*langs)


@dataclass(frozen=True, slots=True)
class NameWords:
    """The words written around names in a language, casefolded, for reading name spans."""

    #: capitalised titles (:func:`folded_titles`)
    titles: frozenset[str] = frozenset()
    #: titles of running text before a name ("migosi", "rais"): they mark a person
    honorifics: frozenset[str] = frozenset()
    #: words trimmed from the start of a name: honorifics, greetings ("habari", "dear") and
    #: first-person pronouns (Dholuo "an")
    openers: frozenset[str] = frozenset()
    #: possessive endings of a name's last word ("'s")
    possessive_suffixes: tuple[str, ...] = ()
    #: whether a title written right before a name belongs to the name span
    titles_in_names: bool = False
    #: words a span of nothing else is no name of: the titles and the openers
    bare: frozenset[str] = frozenset()


@cache
def name_words(lang: str) -> NameWords:
    """The :class:`NameWords` of language ``lang`` (a canonical code), from its
    :class:`NameFormat`; empty without a ``names.toml``."""
    fmt = name_format(lang)
    titles = folded_titles(lang)
    openers = frozenset(t.casefold() for t in (*fmt.honorifics, *fmt.greetings, *fmt.pronouns))
    return NameWords(
        titles=titles,
        honorifics=frozenset(t.casefold() for t in fmt.honorifics),
        openers=openers,
        possessive_suffixes=fmt.possessive_suffixes,
        titles_in_names=fmt.titles_in_names,
        bare=titles | openers,
    )


@dataclass(frozen=True, slots=True)
class NameLookup:
    """Normalised name sets that tell a word's role and gender."""

    female: frozenset[str]
    male: frozenset[str]
    surnames: frozenset[str]
    given_names: frozenset[str]

    @classmethod
    def of(cls, pools: Sequence[NamePool]) -> NameLookup:
        def keys(*lists: str) -> set[str]:
            return {normalise(n) for p in pools for attr in lists for n in getattr(p, attr)}

        female = keys("given_female", "family_female")
        male = keys("given_male", "family_male")
        surnames = keys("family", "family_male", "family_female")
        given = keys("given_female", "given_male")
        only_female, only_male = frozenset(female - male), frozenset(male - female)
        return cls(only_female, only_male, frozenset(surnames), frozenset(given))

    def role(self, word: str) -> str | None:
        """``family`` or ``given`` when the word is known as only one of them."""
        key = normalise(word)
        if key in self.surnames and key not in self.given_names:
            return "family"
        if key in self.given_names and key not in self.surnames:
            return "given"
        return None

    def gender(self, word: str) -> bool | None:
        """True for female, False for male, None when unknown or ambiguous."""
        key = normalise(word)
        return True if key in self.female else False if key in self.male else None


@dataclass(frozen=True, slots=True)
class NamePool:
    """Given, middle and family names of one language (optionally as used in one country)."""

    given_male: tuple[str, ...]
    given_female: tuple[str, ...]
    family: tuple[str, ...]
    family_male: tuple[str, ...]
    family_female: tuple[str, ...]
    middle_male: tuple[str, ...]
    middle_female: tuple[str, ...]
    clans: tuple[str, ...]

    def given(self, female: bool) -> tuple[str, ...]:
        own = self.given_female if female else self.given_male
        return own or self.given_male or self.given_female

    def surname(self, female: bool) -> tuple[str, ...]:
        gendered = self.family_female if female else self.family_male
        return gendered or self.family or self.given(female)

    def middle(self, female: bool) -> tuple[str, ...]:
        return (self.middle_female if female else self.middle_male) or self.given(female)


@dataclass(frozen=True, slots=True)
class NameData:
    """The names of one language: format, pools, and lookup sets for role and gender."""

    lang: str
    script: str
    family_first: bool
    family_words: int
    joiner: str
    titles: frozenset[str]
    default: NamePool
    by_country: Mapping[str, NamePool]
    lookups: Mapping[str, NameLookup]

    def pool_key(self, countries: Sequence[str]) -> str:
        """The country pool to use for ``countries`` (``"default"`` when none has one)."""
        for cc in countries:
            if cc.upper() in self.by_country:
                return cc.upper()
        return "default"

    def pool(self, countries: Sequence[str]) -> NamePool:
        key = self.pool_key(countries)
        return self.default if key == "default" else self.by_country[key]

    def lookup_chain(self, countries: Sequence[str]) -> tuple[NameLookup, ...]:
        """The pool's own lookup first, then the lookup over every pool of the language."""
        return (self.lookups[self.pool_key(countries)], self.lookups["*"])


def script_of(text: str) -> str | None:
    """The script of the first letter of ``text`` (``"Latin"``, ``"Han"``, …), if known."""
    for ch in text:
        if ch.isalpha():
            word = unicodedata.name(ch, "").split(" ", 1)[0]
            return _UNICODE_SCRIPT.get(word)
    return None


@cache
def name_data(lang: str) -> NameData | None:
    """Names of language ``lang``, or None when its pack ships no ``names.toml``."""
    code = canonical_language(lang)
    raw = language_data(code, "names")
    if not raw:
        return None
    fmt = name_format(code)
    default = _pool(raw.get("default", {}))
    by_country = {cc.upper(): _pool(t) for cc, t in raw.get("countries", {}).items()}
    lookups = {
        "default": NameLookup.of([default]),
        "*": NameLookup.of([default, *by_country.values()]),
    }
    lookups.update({cc: NameLookup.of([pool]) for cc, pool in by_country.items()})
    return NameData(
        lang=code,
        script=language_info(code).script,
        family_first=fmt.family_first,
        family_words=fmt.family_words,
        joiner=fmt.joiner,
        titles=frozenset(normalise(t).rstrip(".") for t in fmt.titles),
        default=default,
        by_country=by_country,
        lookups=lookups,
    )


@cache
def pool_names(lang: str) -> frozenset[str]:
    """Every given and family name of the name pools of ``lang`` (all its countries),
    normalised; empty without a ``names.toml``."""
    data = name_data(lang)
    if data is None:
        return frozenset()
    lookup = data.lookups["*"]
    return lookup.given_names | lookup.surnames


@cache
def _every_pool_name() -> frozenset[str]:
    """The names of every shipped pack's pools: kept in polydeid's cache
    (:mod:`polydeid.core.cache`) once built, read from there while the package is unchanged
    (reading every pack takes a few tenths of a second)."""
    stamp = fingerprint("polydeid")
    kept = load_table("names", "pools", stamp)
    if isinstance(kept, list) and all(isinstance(name, str) for name in kept):
        return frozenset(kept)
    names = _build_every_pool_name()
    store_table("names", "pools", stamp, sorted(names))
    return names


def _build_every_pool_name() -> frozenset[str]:
    return frozenset().union(*(pool_names(lang) for lang in languages()))


def is_pool_name(word: str, *langs: str) -> bool:
    """Whether ``word`` is a given or family name in a name pool of one of ``langs``, or of
    any shipped pack when no language is given (normalised: any case)."""
    key = normalise(word)
    if not langs:
        return key in _every_pool_name()
    return any(key in pool_names(canonical_language(lang)) for lang in langs)


def _pool(table: Mapping[str, Any]) -> NamePool:
    return NamePool(**{k: names_of(table.get(k, ())) for k in _NAME_LISTS})


def names_of(values: Any) -> tuple[str, ...]:
    """The non-empty strings of ``values``, stripped, first occurrence kept."""
    return tuple(dict.fromkeys(str(v).strip() for v in values if str(v).strip()))
