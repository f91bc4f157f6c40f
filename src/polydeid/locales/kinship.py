"""The ``kinship.toml`` locale data kind: kinship and role words, and forms of address, which
name a person by their relation or their part in care instead of by name ("his wife", "the
patient", "Sehr geehrte Frau Kollegin", "Mheshimiwa").

``locales/languages/<code>/kinship.toml`` (every table optional; the full schema is described at
the top of ``languages/en/kinship.toml``)::

    [meta]      sources, licence
    [kinship]   words = nouns naming a relative or the family; modifiers = words qualifying one
    [role]      words = nouns naming a person by their part in care
    [address]   forms = forms of address standing for a person; salutations = words opening one
    [grammar]   words = articles, possessives, numerals, conjunctions; elisions = pieces an
                apostrophe glues to a word ("s" of "patient's", "l" of "l'épouse")

:func:`kinship_words` reads one pack into a :class:`KinshipWords` (words as written);
:func:`kinship_vocabulary` folds the packs of a segment's languages, with their names'
titles, particles and greetings (``names.toml``), into a :class:`KinshipVocabulary`, whose
:meth:`~KinshipVocabulary.is_mention` tells whether a stretch of text is made only of such
words: a kinship or role mention, never a name.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import regex

from polydeid.locales import _schema as schema
from polydeid.locales import language_data
from polydeid.locales.names import is_pool_name, name_format, name_words

#: A word: letters, marks and digits; everything else (spaces, hyphens, dots, apostrophes)
#: parts words.
_WORD = regex.compile(r"[\p{L}\p{M}\p{N}]+")
_APOSTROPHES = frozenset("'’ʼ`´")
#: A count written in digits ("2 sobrinos"): a filler like a numeral word.
_COUNT = regex.compile(r"\d{1,2}")


@dataclass(frozen=True, slots=True)
class KinshipWords:
    """The kinship vocabulary of one language pack; empty without a ``kinship.toml``."""

    code: str
    # [kinship]
    kinship: tuple[str, ...] = ()
    modifiers: tuple[str, ...] = ()
    # [role]
    roles: tuple[str, ...] = ()
    # [address]
    forms: tuple[str, ...] = ()
    salutations: tuple[str, ...] = ()
    # [grammar]
    grammar: tuple[str, ...] = ()
    elisions: tuple[str, ...] = ()


@cache
def kinship_words(lang: str) -> KinshipWords:
    """The :class:`KinshipWords` of language ``lang`` (a canonical code)."""
    raw = language_data(lang, "kinship")
    file = f"languages/{lang}/kinship.toml"
    kinship = schema.table(raw, "kinship", file)
    role = schema.table(raw, "role", file)
    address = schema.table(raw, "address", file)
    grammar = schema.table(raw, "grammar", file)
    return KinshipWords(
        code=lang,
        kinship=schema.strings(kinship, "words", file, "kinship."),
        modifiers=schema.strings(kinship, "modifiers", file, "kinship."),
        roles=schema.strings(role, "words", file, "role."),
        forms=schema.strings(address, "forms", file, "address."),
        salutations=schema.strings(address, "salutations", file, "address."),
        grammar=schema.strings(grammar, "words", file, "grammar."),
        elisions=schema.strings(grammar, "elisions", file, "grammar."),
    )


Words = tuple[str, ...]


@dataclass(frozen=True, slots=True)
class KinshipVocabulary:
    """The casefolded word sequences of some languages' kinship packs, by what they may do in
    a mention.

    ``relations`` (kinship and role words) and ``forms`` (forms of address) make a mention;
    ``fillers`` (modifiers, salutations, grammar words, the names' titles, particles and
    greetings, and a count of one or two digits) may stand in one but never make one alone. A
    relation written with a capital right after one of ``titles`` (titles, particles and
    honorifics of names) is read as a surname ("Mr Son", "Herr Vater", "De Neef") and makes
    nothing; a form always does ("Herr Kollege"). A relation or form that is also a name of
    the languages' name pools (``names``: Spanish "Nieto", "Caballero") makes one only written
    in lower case."""

    relations: frozenset[Words] = frozenset()
    forms: frozenset[Words] = frozenset()
    fillers: frozenset[Words] = frozenset()
    titles: frozenset[str] = frozenset()
    names: frozenset[Words] = frozenset()
    elisions: frozenset[str] = frozenset()
    longest: int = 1

    def words(self, text: str) -> list[tuple[str, bool]]:
        """The words of ``text``, casefolded, each with whether it is written with a capital;
        an elision glued to an apostrophe ("s" of "patient's") is left out."""
        out: list[tuple[str, bool]] = []
        for m in _WORD.finditer(text):
            word = m.group().casefold()
            glued = (m.start() > 0 and text[m.start() - 1] in _APOSTROPHES) or (
                m.end() < len(text) and text[m.end()] in _APOSTROPHES
            )
            if glued and word in self.elisions:
                continue
            out.append((word, m.group()[:1].isupper()))
        return out

    def is_mention(self, text: str) -> bool:
        """Whether ``text`` is made only of this vocabulary's words, at least one of them a
        relation or a form of address that counts (see the class docstring)."""
        words = self.words(text)
        if not words:
            return False
        folded = [w for w, _ in words]
        # best[i]: whether words[:i] can be read as entries, and whether a counting one is among
        # them (None: no reading)
        best: list[bool | None] = [None] * (len(words) + 1)
        best[0] = False
        for i in range(len(words)):
            if best[i] is None:
                continue
            for k in range(1, min(self.longest, len(words) - i) + 1):
                entry = tuple(folded[i : i + k])
                counts: bool | None = None
                capital = words[i][1]
                if entry in self.forms:
                    counts = not (capital and entry in self.names)
                elif entry in self.relations:
                    after_title = i > 0 and folded[i - 1] in self.titles
                    counts = not (capital and (after_title or entry in self.names))
                elif entry in self.fillers or (k == 1 and _COUNT.fullmatch(entry[0])):
                    counts = False
                if counts is None:
                    continue
                reached = bool(best[i]) or counts
                if best[i + k] is None or (reached and not best[i + k]):
                    best[i + k] = reached
        return bool(best[len(words)])


def _is_name(word: str, langs: tuple[str, ...]) -> bool:
    """Whether ``word`` is a given name or surname in a name pool of one of ``langs``."""
    return bool(langs) and is_pool_name(word, *langs)


def _entries(vocabulary: KinshipVocabulary, phrases: tuple[str, ...]) -> frozenset[Words]:
    out = set()
    for phrase in phrases:
        words = tuple(w for w, _ in vocabulary.words(phrase))
        if words:
            out.add(words)
    return frozenset(out)


@cache
def kinship_vocabulary(*langs: str) -> KinshipVocabulary:
    """The :class:`KinshipVocabulary` of ``langs`` (canonical codes; a segment's language and
    English, as the rules read them)."""
    packs = [kinship_words(lang) for lang in langs]
    elisions = frozenset(e.casefold() for p in packs for e in p.elisions)
    titles = frozenset(
        t.casefold()
        for lang in langs
        for t in (*name_format(lang).titles, *name_format(lang).honorifics)
    )
    base = KinshipVocabulary(elisions=elisions)

    def entries(*lists: tuple[str, ...]) -> frozenset[Words]:
        return _entries(base, tuple(w for words in lists for w in words))

    relations = entries(*(p.kinship for p in packs), *(p.roles for p in packs))
    forms = entries(*(p.forms for p in packs))
    fillers = entries(
        *(p.modifiers for p in packs),
        *(p.salutations for p in packs),
        *(p.grammar for p in packs),
        *(tuple(name_words(lang).bare) for lang in langs),
        *(name_format(lang).titles for lang in langs),
    )
    every = relations | forms | fillers
    return KinshipVocabulary(
        relations=relations,
        forms=forms,
        fillers=fillers,
        titles=titles,
        names=frozenset(e for e in relations | forms if _is_name(" ".join(e), langs)),
        elisions=elisions,
        longest=max((len(e) for e in every), default=1),
    )
