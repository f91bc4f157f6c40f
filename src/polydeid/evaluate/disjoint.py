"""Unseen-name evaluation: rewrite gold names with held-out names, or reshuffle them.

A detector that learnt its names by heart scores well on the names it has seen and badly on
the ones it has not. Three views of the same corpus tell the two apart:

* the **original** documents;
* the **reshuffled** control (:func:`reshuffle_names`): every gold name moved to another
  document of the same language and category, so the names stay familiar but no longer fit
  their document;
* the **unseen** rewrite (:func:`rewrite_unseen`): every gold name replaced by a well-formed
  name from a held-out pool (``locales/languages/<code>/names_heldout.toml``) that shares no
  token with the training vocabulary.

:func:`familiar_vs_unseen` reports person recall (strict and relaxed) on all three and the
differences. Reshuffled minus unseen is the familiarity gap; original minus reshuffled is what
moving names out of their context costs by itself.

Shape kept by the rewrite: number of words, separators (hyphens, commas, apostrophes between
words), initials (``J.`` stays one letter), ALL CAPS / lower case, titles (``Dr``) and
lower-case particles in a capitalised name (``van``, ``bin``) as written, family-first order,
and the gender when the original's given name reveals it. Within one document the same
original word always gets the same new word (so ``John Okello`` … ``Mr Okello`` stay one
person), and an initial takes the first letter of the new word for a name of that letter.

Disjointness policy: pool names with any token in the vocabulary (or equal to a word of any
gold name of the corpus) are **skipped** before drawing; a language whose pool is left without
given or family names raises :class:`~polydeid.core.errors.ConfigError`. The result is then
checked again with :func:`verify_unseen`, which raises on any replaced word found in the
vocabulary.

Offsets: every span and fact is realigned. A span endpoint inside a replaced name snaps
outward to the new name's boundary; a span containing a name grows or shrinks with it. Name
spans with identical offsets are replaced once; name spans that otherwise overlap raise
:class:`~polydeid.core.errors.InputError`.
"""

from __future__ import annotations

import bisect
import itertools
import logging
import random
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields
from functools import cache
from types import MappingProxyType
from typing import Any

import regex

from polydeid.core.errors import ConfigError, InputError
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category
from polydeid.corpora.document import AnnotatedDocument
from polydeid.locales import canonical_language, languages
from polydeid.locales.names import SCRIPT_LANGUAGE, NameData, name_data, script_of
from polydeid.locales.names_heldout import heldout_pool
from polydeid.text.normalise import normalise

logger = logging.getLogger(__name__)

#: Categories whose gold spans are names (the default of every function here).
NAME_CATEGORIES: tuple[Category, ...] = (
    Category.PERSON,
    Category.PERSON_THIRD_PARTY,
    Category.PERSON_CLAN,
)

_WORD = regex.compile(r"[\p{L}\p{M}]+(?:['’][\p{L}\p{M}]+)*")
_ATTEMPTS = 200
_DRAWN = frozenset({"given", "family", "clan", "han"})

Predict = Callable[[AnnotatedDocument], Iterable[Span]]
PoolSpec = Mapping[str, "HeldOutNames"]


# --- held-out pools ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class HeldOutNames:
    """Given, family and clan names of one language kept out of training."""

    lang: str
    given_male: tuple[str, ...]
    given_female: tuple[str, ...]
    family: tuple[str, ...]
    family_female: tuple[str, ...] = ()
    clans: tuple[str, ...] = ()

    def __repr__(self) -> str:
        sizes = f"given={len(self.given_male)}+{len(self.given_female)}, family={len(self.family)}"
        return f"HeldOutNames({self.lang}, {sizes}, clans={len(self.clans)})"

    def without(self, vocabulary: Collection[str]) -> HeldOutNames:
        """The same pool minus every name that has a word in ``vocabulary`` (case-folded)."""
        return self._without(_vocabulary(vocabulary))

    def _without(self, seen: frozenset[str]) -> HeldOutNames:
        def keep(names: tuple[str, ...]) -> tuple[str, ...]:
            return tuple(n for n in names if not name_tokens(n) & seen and normalise(n) not in seen)

        return HeldOutNames(
            self.lang,
            keep(self.given_male),
            keep(self.given_female),
            keep(self.family),
            keep(self.family_female),
            keep(self.clans),
        )

    def given(self, female: bool) -> tuple[str, ...]:
        own = self.given_female if female else self.given_male
        return own or self.given_male or self.given_female

    def for_role(self, role: str, female: bool) -> tuple[str, ...]:
        """Names for ``given``, ``family`` or ``clan`` words (clans fall back to family)."""
        if role == "clan":
            return self.clans or self.family
        if role == "family":
            return (self.family_female if female else ()) or self.family
        return self.given(female)


@cache
def heldout_names(lang: str) -> HeldOutNames | None:
    """The held-out pool of ``lang`` from ``names_heldout.toml``; None when it ships none."""
    code = canonical_language(lang)
    pool = heldout_pool(code)
    if pool is None:
        return None
    return HeldOutNames(
        lang=code,
        given_male=pool.given_male,
        given_female=pool.given_female,
        family=pool.family,
        family_female=pool.family_female,
        clans=pool.clans,
    )


def heldout_pools(langs: Iterable[str] | None = None) -> dict[str, HeldOutNames]:
    """Held-out pools of ``langs`` (every language that ships one by default)."""
    found = {code: heldout_names(code) for code in (langs or languages())}
    return {code: pool for code, pool in found.items() if pool is not None}


def name_tokens(text: str) -> frozenset[str]:
    """The case-folded words of a name (``"Ng'ang'a Mary-Jane"`` → 3 words)."""
    return frozenset(normalise(w) for w in _WORD.findall(text))


def name_vocabulary(langs: Iterable[str] | None = None) -> frozenset[str]:
    """Case-folded words of every ``names.toml`` (what the generator and the tagger train on)."""
    words: set[str] = set()
    for code in langs or languages():
        data = name_data(canonical_language(code))
        if data is not None:
            words.update(_vocabulary_of(data))
    return frozenset(words)


def _vocabulary_of(data: NameData) -> set[str]:
    """Every word and name of every pool (default and by country) of ``data``."""
    words: set[str] = set()
    for pool in (data.default, *data.by_country.values()):
        for name in (n for f in fields(pool) for n in getattr(pool, f.name)):
            words.update(name_tokens(name))
            words.add(normalise(name))
    return words


# --- shape of one name --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Word:
    """One word of an original name: offsets within the name and its role."""

    start: int
    end: int
    text: str = field(repr=False)  # may hold identifier text
    role: str  # "keep", "initial", "given", "family", "clan" or "han"


def _titles(lang: str) -> frozenset[str]:
    own, english = name_data(lang), name_data("en")
    return frozenset(t for data in (own, english) if data for t in data.titles)


def _kept(words: Sequence[str], titles: frozenset[str]) -> list[bool]:
    """Titles, and lower-case particles in a name that has a capitalised word, stay as written."""
    capitalised = any(w[:1].isupper() for w in words)
    return [
        normalise(w).rstrip(".") in titles or (capitalised and w.islower() and len(words) > 1)
        for w in words
    ]


def _shape(original: str, category: Category, lang: str) -> list[_Word]:
    """The words of ``original`` with the role each one's replacement is drawn for."""
    matches = list(_WORD.finditer(original))
    kept = _kept([m[0] for m in matches], _titles(lang))
    names = [i for i, k in enumerate(kept) if not k]
    data = name_data(lang)
    family_first = bool(data and data.family_first)
    if len(names) > 1 and "," in original[matches[names[0]].end() : matches[names[1]].start()]:
        family_first = True
    family_at = names[0] if family_first else names[-1] if names else -1
    words = []
    for i, m in enumerate(matches):
        if kept[i]:
            role = "keep"
        elif len(m[0]) == 1 and script_of(m[0]) != "Han":
            role = "initial"
        elif script_of(m[0]) == "Han" and len(names) == 1:
            role = "han"
        elif category is Category.PERSON_CLAN:
            role = "clan"
        else:
            role = "family" if i == family_at and len(names) > 1 else "given"
        words.append(_Word(m.start(), m.end(), m[0], role))
    if len(names) == 1 and category is not Category.PERSON_CLAN:
        words = [_single(w, data) for w in words]
    return words


def _single(word: _Word, data: NameData | None) -> _Word:
    """A lone name word is a family name (``Mr Okello``) unless known only as a given name."""
    if word.role != "given" or (data and data.lookups["*"].role(word.text) == "given"):
        return word
    return _Word(word.start, word.end, word.text, "family")


def _female(words: Sequence[_Word], lang: str, rng: random.Random) -> bool:
    genders = set()
    for data in (name_data(lang), name_data("en")):
        if data is None:
            continue
        lookup = data.lookups["*"]
        genders |= {g for w in words if (g := lookup.gender(w.text)) is not None}
        if genders:
            break
    return genders.pop() if len(genders) == 1 else rng.random() < 0.5


def _cased(new: str, like: str) -> str:
    if like.isupper() and len(like) > 1:
        return new.upper()
    if like.islower():
        return new.lower()
    return new


# --- the per-document name table ---------------------------------------------------------------


@dataclass
class _Renamer:
    """Draws one new word per original word of a document, never twice the same new word."""

    pool: HeldOutNames
    rng: random.Random
    forbidden: frozenset[str]
    table: dict[str, str] = field(default_factory=dict)
    used: set[str] = field(default_factory=set)

    def word(self, word: _Word, female: bool) -> str:
        key = normalise(word.text)
        if key not in self.table:
            self.table[key] = self._draw(word, female)
        return _cased(self.table[key], word.text)

    def initial(self, word: _Word, female: bool) -> str:
        """The first letter of the new word for a name with this initial, else of a new name."""
        letter = normalise(word.text)
        source = next((new for old, new in self.table.items() if old.startswith(letter)), None)
        return _cased((source or self.rng.choice(self.pool.given(female)))[0], word.text)

    def _draw(self, word: _Word, female: bool) -> str:
        if word.role == "han":
            make = lambda: _han_name(len(word.text), self.pool, female, self.rng)  # noqa: E731
        else:
            choices = self.pool.for_role(word.role, female)
            make = lambda: self.rng.choice(choices)  # noqa: E731
        new = make()
        for _ in range(_ATTEMPTS):
            if normalise(new) not in self.used and normalise(new) not in self.forbidden:
                break
            new = make()
        self.used.add(normalise(new))
        return new


def _han_name(length: int, pool: HeldOutNames, female: bool, rng: random.Random) -> str:
    family = rng.choice(pool.family)
    want = max(1, length - len(family))
    given = [g for g in pool.given(female) if len(g) == want]
    if given:
        return family + rng.choice(given)
    singles = [g for g in pool.given(female) if len(g) == 1] or [g[0] for g in pool.given(female)]
    return family + "".join(rng.choice(singles) for _ in range(want))


def _rename(original: str, category: Category, lang: str, renamer: _Renamer) -> str:
    words = _shape(original, category, lang)
    female = _female([w for w in words if w.role in _DRAWN], lang, renamer.rng)
    for w in words:  # full words first, so that initials can follow them
        if w.role in _DRAWN:
            renamer.word(w, female)
    out, pos = [], 0
    for w in words:
        out.append(original[pos : w.start])
        pos = w.end
        if w.role == "keep":
            out.append(w.text)
        elif w.role == "initial":
            out.append(renamer.initial(w, female))
        else:
            out.append(renamer.word(w, female))
    out.append(original[pos:])
    return "".join(out)


# --- offsets ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Edit:
    """Replace ``text[start:end]`` with ``new``."""

    start: int
    end: int
    new: str


def _regions(doc: AnnotatedDocument, categories: Collection[Category]) -> list[tuple[Span, ...]]:
    """Name spans grouped by offsets, in order; overlapping distinct ranges raise."""
    groups: dict[tuple[int, int], list[Span]] = defaultdict(list)
    for span in doc.spans:
        if span.label in categories:
            groups[(span.start, span.end)].append(span)
    keys = sorted(groups)
    for (_, end), (start, _) in itertools.pairwise(keys):
        if start < end:
            raise InputError(
                f"overlapping name spans at {start}:{end}; cannot replace them", location=doc.id
            )
    return [tuple(groups[k]) for k in keys]


def _apply(doc: AnnotatedDocument, edits: Sequence[_Edit], meta: str) -> AnnotatedDocument:
    """The document with ``edits`` (sorted, disjoint) applied and every offset realigned."""
    pieces, pos = [], 0
    old_starts, old_ends, new_starts, new_ends = [], [], [], []
    delta = 0
    for e in edits:
        pieces += [doc.text[pos : e.start], e.new]
        pos = e.end
        old_starts.append(e.start)
        old_ends.append(e.end)
        new_starts.append(e.start + delta)
        delta += len(e.new) - (e.end - e.start)
        new_ends.append(e.end + delta)
    pieces.append(doc.text[pos:])

    def moved(offset: int, is_end: bool) -> int:
        i = bisect.bisect_right(old_ends, offset) - 1  # last edit ending at or before offset
        shift = new_ends[i] - old_ends[i] if i >= 0 else 0
        j = i + 1  # the next edit may contain the offset
        if j < len(edits) and old_starts[j] < offset < old_ends[j]:
            return new_ends[j] if is_end else new_starts[j]
        return offset + shift

    def realign(span: Span) -> Span:
        start, end = moved(span.start, False), moved(span.end, True)
        return Span(start, end, span.label, span.source, span.score)

    return AnnotatedDocument(
        id=doc.id,
        text="".join(pieces),
        lang=doc.lang,
        spans=tuple(realign(s) for s in doc.spans),
        facts=tuple(realign(s) for s in doc.facts),
        source=doc.source,
        meta=MappingProxyType({**doc.meta, "names": meta}),
    )


# --- the unseen rewrite -----------------------------------------------------------------------


def rewrite_unseen(
    documents: Iterable[AnnotatedDocument],
    *,
    pool: HeldOutNames | PoolSpec,
    seed: int | str,
    vocabulary: Collection[str],
    categories: Collection[Category] = NAME_CATEGORIES,
) -> list[AnnotatedDocument]:
    """Every gold name replaced by a held-out name that shares no word with ``vocabulary``.

    ``pool`` is one pool for every document or pools by language code (see
    :func:`heldout_pools`). ``vocabulary`` holds names or words (compared case-folded), e.g.
    :func:`name_vocabulary` plus the names of the training corpus.
    """
    docs = list(documents)
    vocab = _vocabulary(vocabulary)
    forbidden = vocab | _corpus_words(docs, categories)
    pools: dict[str, HeldOutNames] = {}
    out = []
    for index, doc in enumerate(docs):
        regions = _regions(doc, categories)
        if not regions:
            out.append(_apply(doc, (), "unseen"))
            continue
        lang = canonical_language(doc.lang)
        rng = random.Random(f"unseen|{seed}|{index}|{doc.id}")
        renamers: dict[str, _Renamer] = {}
        edits = []
        for spans in regions:
            start, end = spans[0].start, spans[0].end
            original = doc.text[start:end]
            name_lang = _name_language(original, lang)
            if name_lang not in renamers:
                usable = _usable_pool(pool, name_lang, forbidden, pools, doc.id)
                renamers[name_lang] = _Renamer(usable, rng, forbidden)
            new = _rename(original, spans[0].label, name_lang, renamers[name_lang])  # type: ignore[arg-type]
            edits.append(_Edit(start, end, new))
        out.append(_apply(doc, edits, "unseen"))
    _verify(out, vocab, categories)
    return out


def _vocabulary(vocabulary: Collection[str]) -> frozenset[str]:
    words: set[str] = set()
    for entry in vocabulary:
        words.add(normalise(entry))
        words.update(name_tokens(entry))
    return frozenset(words)


def _corpus_words(docs: Sequence[AnnotatedDocument], categories: Collection[Category]) -> set[str]:
    words: set[str] = set()
    for doc in docs:
        for span in doc.spans:
            if span.label in categories:
                words.update(name_tokens(span.text_of(doc.text)))
    return words


def _name_language(original: str, lang: str) -> str:
    """The document's language, or the language of the name's script when it differs."""
    script = script_of(original)
    data: NameData | None = name_data(lang)
    own = data.script if data else None
    if script and own and script != own and script in SCRIPT_LANGUAGE:
        return SCRIPT_LANGUAGE[script]
    return lang


def _usable_pool(
    pool: HeldOutNames | PoolSpec,
    lang: str,
    forbidden: frozenset[str],
    cache: dict[str, HeldOutNames],
    doc_id: str,
) -> HeldOutNames:
    if lang in cache:
        return cache[lang]
    raw = pool if isinstance(pool, HeldOutNames) else pool.get(lang)
    if raw is None:
        raise ConfigError(f"no held-out name pool for language {lang!r}", location=doc_id)
    usable = raw._without(forbidden)
    dropped = _size(raw) - _size(usable)
    if dropped:
        logger.debug("held-out pool %s: %d names skipped as seen", lang, dropped)
    if not usable.family or not (usable.given_male or usable.given_female):
        raise ConfigError(
            f"held-out pool for language {lang!r} has no given or no family names left "
            "after removing the vocabulary and the corpus names",
            location=doc_id,
        )
    cache[lang] = usable
    return usable


def _size(pool: HeldOutNames) -> int:
    lists = (pool.given_male, pool.given_female, pool.family, pool.family_female, pool.clans)
    return sum(len(names) for names in lists)


def verify_unseen(
    documents: Iterable[AnnotatedDocument],
    *,
    vocabulary: Collection[str],
    categories: Collection[Category] = NAME_CATEGORIES,
) -> None:
    """Raise :class:`ConfigError` when a name word (not a title) is in the vocabulary."""
    _verify(documents, _vocabulary(vocabulary), categories)


def _verify(
    documents: Iterable[AnnotatedDocument], vocab: frozenset[str], categories: Collection[Category]
) -> None:
    for doc in documents:
        titles = _titles(canonical_language(doc.lang))
        for span in doc.spans:
            if span.label not in categories:
                continue
            words = _WORD.findall(span.text_of(doc.text))
            for word, kept in zip(words, _kept(words, titles), strict=True):
                if not kept and len(word) > 1 and normalise(word) in vocab:
                    raise ConfigError(
                        f"name span {span.start}:{span.end} {span.label.name} has a word of "
                        "the training vocabulary",
                        location=doc.id,
                    )


# --- the reshuffled control --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Entity:
    """One distinct name of one document (all its mentions share the entity's new name)."""

    doc: int
    key: str
    category: Category
    text: str = field(repr=False)  # may hold identifier text


def reshuffle_names(
    documents: Iterable[AnnotatedDocument],
    *,
    seed: int | str,
    categories: Collection[Category] = NAME_CATEGORIES,
) -> list[AnnotatedDocument]:
    """Gold names permuted across documents of the same language and category.

    Each distinct name of a document (case-folded) moves as one, so repeated mentions stay
    alike; as far as the group sizes allow, no name stays in its own document. ALL CAPS and
    lower-case mentions take the case of the mention they replace.
    """
    docs = list(documents)
    rng = random.Random(f"reshuffle|{seed}")
    entities = _entities(docs, categories)
    groups: dict[tuple[str, Category], list[_Entity]] = defaultdict(list)
    for entity in entities.values():
        groups[(canonical_language(docs[entity.doc].lang), entity.category)].append(entity)
    assigned: dict[tuple[int, str], str] = {}
    for key in sorted(groups, key=lambda k: (k[0], k[1].value)):
        for target, source in _permutation(groups[key], rng):
            assigned[(target.doc, target.key)] = source.text
    out = []
    for index, doc in enumerate(docs):
        edits = []
        for spans in _regions(doc, categories):
            original = spans[0].text_of(doc.text)
            new = assigned[(index, normalise(original))]
            edits.append(_Edit(spans[0].start, spans[0].end, _recased(new, original)))
        out.append(_apply(doc, edits, "reshuffled"))
    return out


def _entities(
    docs: Sequence[AnnotatedDocument], categories: Collection[Category]
) -> dict[tuple[int, str], _Entity]:
    """Distinct names per document, their text taken from a mixed-case mention when there is one."""
    found: dict[tuple[int, str], _Entity] = {}
    for index, doc in enumerate(docs):
        for spans in _regions(doc, categories):
            text = spans[0].text_of(doc.text)
            key = (index, normalise(text))
            known = found.get(key)
            if known is None or (_plain_case(known.text) and not _plain_case(text)):
                category = known.category if known else spans[0].label
                found[key] = _Entity(index, key[1], category, text)  # type: ignore[arg-type]
    return found


def _recased(new: str, like: str) -> str:
    """``new`` in the case of ``like``; ALL CAPS put in a mixed-case mention gets capitals."""
    if _plain_case(new) and not _plain_case(like):
        return _WORD.sub(lambda m: m[0][:1].upper() + m[0][1:].lower(), new)
    return _cased(new, like)


def _plain_case(text: str) -> bool:
    return text.isupper() or text.islower()


def _permutation(
    entities: Sequence[_Entity], rng: random.Random
) -> Iterator[tuple[_Entity, _Entity]]:
    """(target, source) pairs: documents in random order, then a shift by the largest group.

    The shift moves every name out of its document when no document holds more than half of
    the group's names; within one document it is a rotation (no name keeps its place).
    """
    by_doc: dict[int, list[_Entity]] = defaultdict(list)
    for entity in entities:
        by_doc[entity.doc].append(entity)
    order = sorted(by_doc)
    rng.shuffle(order)
    ring = []
    for doc in order:
        members = sorted(by_doc[doc], key=lambda e: e.key)
        rng.shuffle(members)
        ring += members
    shift = max(len(m) for m in by_doc.values()) % len(ring) or 1
    for k, target in enumerate(ring):
        yield target, ring[(k + shift) % len(ring)]


# --- familiar versus unseen --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class NameRecall:
    """Recall of gold name spans: strict (same offsets) and relaxed (any overlap)."""

    gold: int
    strict_found: int
    relaxed_found: int

    @property
    def strict(self) -> float:
        return self.strict_found / self.gold if self.gold else 0.0

    @property
    def relaxed(self) -> float:
        return self.relaxed_found / self.gold if self.gold else 0.0

    def to_dict(self) -> dict[str, float | int]:
        return {
            "gold": self.gold,
            "strict": round(self.strict, 4),
            "relaxed": round(self.relaxed, 4),
        }


@dataclass(frozen=True, slots=True)
class UnseenNameReport:
    """Person recall on the original, reshuffled and unseen-name documents, and the gaps."""

    original: NameRecall
    reshuffled: NameRecall
    unseen: NameRecall

    def differences(self) -> dict[str, float]:
        """``original - reshuffled`` (context), ``reshuffled - unseen`` (familiarity), total."""
        out = {}
        for kind in ("strict", "relaxed"):
            o, r, u = (getattr(x, kind) for x in (self.original, self.reshuffled, self.unseen))
            out[f"context_{kind}"] = round(o - r, 4)
            out[f"familiarity_{kind}"] = round(r - u, 4)
            out[f"total_{kind}"] = round(o - u, 4)
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "original": self.original.to_dict(),
            "reshuffled": self.reshuffled.to_dict(),
            "unseen": self.unseen.to_dict(),
            "differences": self.differences(),
        }


def name_recall(
    documents: Iterable[AnnotatedDocument],
    predict: Predict,
    *,
    categories: Collection[Category] = NAME_CATEGORIES,
) -> NameRecall:
    """Recall of gold name spans by predicted spans of any of ``categories``.

    Gold spans with identical offsets count once. Strict: a predicted name span with the same
    offsets; relaxed: one that overlaps. The name categories are not told apart. Gold name
    spans that overlap without matching raise :class:`InputError`, as in the rewrite.
    """
    gold = strict = relaxed = 0
    for doc in documents:
        predicted = [s for s in predict(doc) if s.label in categories]
        exact = {(s.start, s.end) for s in predicted}
        for spans in _regions(doc, categories):
            target = spans[0]
            gold += 1
            strict += (target.start, target.end) in exact
            relaxed += any(target.overlaps(p) for p in predicted)
    return NameRecall(gold, strict, relaxed)


def familiar_vs_unseen(
    documents: Iterable[AnnotatedDocument],
    predict: Predict,
    *,
    pool: HeldOutNames | PoolSpec,
    vocabulary: Collection[str],
    seed: int | str = 0,
    categories: Collection[Category] = NAME_CATEGORIES,
) -> UnseenNameReport:
    """Person recall of ``predict`` on the original, reshuffled and unseen-name documents."""
    docs = list(documents)
    reshuffled = reshuffle_names(docs, seed=seed, categories=categories)
    unseen = rewrite_unseen(
        docs, pool=pool, seed=seed, vocabulary=vocabulary, categories=categories
    )
    return UnseenNameReport(
        original=name_recall(docs, predict, categories=categories),
        reshuffled=name_recall(reshuffled, predict, categories=categories),
        unseen=name_recall(unseen, predict, categories=categories),
    )
