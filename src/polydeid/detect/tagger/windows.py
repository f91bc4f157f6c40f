"""From text to model windows and back: word grid, sub-token alignment, windows, span decoding.

Pure Python (no torch), shared by training and inference so that both see the same inputs.

* A document is tokenised whole (offsets in the original text); each word of
  :func:`polydeid.text.wordgrid.words` is read at the token holding its first character,
  which carries the word's tag; other tokens are ignored in the loss and in decoding.
* Long documents are cut into overlapping windows of at most ``max_tokens`` content tokens
  (``stride`` tokens apart). Each word is decided by exactly one window: the one in which its
  first token sits farthest from a window edge, so a name cut by one window's edge is read
  whole in the next, and found once.
* :func:`decode` turns per-word tag probabilities into spans: the extent at the level of coarse
  groups (BIO with repair; outside the name group a confident change of category between two
  words is a boundary), the category by the probability the span's words — and every
  other span of the document with the same text — give it; a span's score is the lowest
  group probability of its words, and spans are kept at or above their category's threshold.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from polydeid.core.spans import Span
from polydeid.core.taxonomy import COARSE_GROUP, Category
from polydeid.detect.roles import longer_names_by_word
from polydeid.locales import folded_titles, language_data, titles_in_names
from polydeid.text.wordgrid import words

OUTSIDE = "O"
#: Categories the tagger is trained on, in tag order (every canonical category).
CATEGORIES: tuple[Category, ...] = tuple(Category)
TAGS: tuple[str, ...] = (
    OUTSIDE,
    *(f"{prefix}-{c.value}" for c in CATEGORIES for prefix in ("B", "I")),
)
TAG_INDEX: Mapping[str, int] = {tag: i for i, tag in enumerate(TAGS)}
IGNORE = -100
#: Changes whenever :func:`decode` reads the same probabilities differently (score caches).
#: 3: slashes, bars and "M's" trimmed; 4: titles_in_names; 5: a change of kind is a boundary;
#: 6: a place's final dot and a spaced dash are edges; 7: a dropped bare title frees its words;
#: 8: a line break ends a span outside addresses, an honorific makes a place a person;
#: 9: capitalised names one space apart join; 10: a full stop ends a name; 11: a name ending
#: in an initial takes the initial's dot; 12: a confidently read village or facility ends at a
#: line break (only an address runs over lines); 13: a greeting or pronoun opening a name is
#: trimmed; 14: a one-word name votes its role with the one longer name it is a word of, and a
#: dash at a name's edge is trimmed; 15: spans a hyphen glues into one word are one span; 16: a
#: self-introduction ("an Akong'o Opondo") does not vote a name's role where other mentions do;
#: 17: a one-word name joins the longer name's role votes whenever the decoder calls it a name
#: (its role votes alone may lean to another group); 18: a place or organisation of nothing
#: but titles is dropped as a name is ("Gavana", governor, read as a place)
DECODER_VERSION = 18


@dataclass(frozen=True, slots=True)
class Aligned:
    """A tokenised document aligned with its word grid."""

    grid: tuple[tuple[int, int], ...]  # words: (start, end) in the text
    token_ids: tuple[int, ...]  # content tokens only (no bos/eos)
    word_token: tuple[int, ...]  # per word: the token holding its first character (-1: none)

    def __repr__(self) -> str:
        return f"Aligned(words={len(self.grid)}, tokens={len(self.token_ids)})"


def align_tokens(
    text: str, token_ids: Sequence[int], offsets: Sequence[tuple[int, int]]
) -> Aligned:
    """Align content tokens (ids and original offsets, specials removed) with the word grid.

    Each word is read at the token that holds its first character. A token may hold the
    start of several words (``y-`` of ``Mary-Jane`` in some vocabularies): it is trained on
    the first of them and all of them take its prediction, so no word is ever left without
    one and a name is never cut in two by the tokenizer.
    """
    grid = tuple(words(text))
    starts = [s for s, e in offsets]
    word_token: list[int] = []
    for start, _ in grid:
        t = bisect.bisect_right(starts, start) - 1
        while t >= 0 and offsets[t][1] <= start:  # the token ends before the word: none holds it
            t = -1
        word_token.append(t if t >= 0 and offsets[t][0] <= start < offsets[t][1] else -1)
    return Aligned(grid, tuple(token_ids), tuple(word_token))


def windows(length: int, max_tokens: int, stride: int) -> list[tuple[int, int]]:
    """``[start, end)`` token ranges covering ``length`` tokens, overlapping when longer."""
    if max_tokens <= 0 or stride <= 0 or stride > max_tokens:
        raise ValueError("need 0 < stride <= max_tokens")
    if length <= max_tokens:
        return [(0, length)]
    out = []
    start = 0
    while True:
        end = min(start + max_tokens, length)
        out.append((start, end))
        if end == length:
            return out
        start = min(start + stride, length - max_tokens)


def even_windows(length: int, max_tokens: int, min_overlap: int) -> list[tuple[int, int]]:
    """The fewest equal ``[start, end)`` windows of at most ``max_tokens`` tokens covering
    ``length`` tokens, neighbours sharing at least ``min_overlap`` tokens.

    Inference uses these rather than :func:`windows`: a document's windows are all the same
    length, so they batch without padding, and no window is mostly overlap (``windows`` ends
    with a full window reaching back over its neighbour).
    """
    if max_tokens <= 0 or not 0 <= min_overlap < max_tokens:
        raise ValueError("need 0 <= min_overlap < max_tokens")
    if length <= max_tokens:
        return [(0, length)]
    count = -(-(length - min_overlap) // (max_tokens - min_overlap))
    size = -(-(length + (count - 1) * min_overlap) // count)
    step = (length - size) / (count - 1)
    return [(s, s + size) for s in (round(i * step) for i in range(count))]


def owner_windows(aligned: Aligned, spans: Sequence[tuple[int, int]]) -> list[int]:
    """For each word, the window that decides it: the one where its token is farthest from an
    edge (-1 for words without a token)."""
    owners = []
    for t in aligned.word_token:
        best, margin = -1, -1
        if t >= 0:
            for w, (start, end) in enumerate(spans):
                if start <= t < end and min(t - start, end - 1 - t) > margin:
                    best, margin = w, min(t - start, end - 1 - t)
        owners.append(best)
    return owners


def word_tags(grid: Sequence[tuple[int, int]], spans: Sequence[Span]) -> list[str]:
    """BIO tags of the words, from gold spans (words overlapping a span take its category)."""
    tags = [OUTSIDE] * len(grid)
    starts = [s for s, _ in grid]
    for span in sorted(spans, key=lambda s: (s.start, -s.end)):
        if not isinstance(span.label, Category):
            continue
        i = max(0, bisect.bisect_right(starts, span.start) - 1)
        begun = False
        while i < len(grid) and grid[i][0] < span.end:
            if grid[i][1] > span.start and tags[i] == OUTSIDE:
                tags[i] = f"{'I' if begun else 'B'}-{span.label.value}"
                begun = True
            i += 1
    return tags


def token_labels(aligned: Aligned, tags: Sequence[str]) -> list[int]:
    """Per content token: the tag of the first word it starts, :data:`IGNORE` for the others."""
    labels = [IGNORE] * len(aligned.token_ids)
    for word, t in enumerate(aligned.word_token):
        if t >= 0 and labels[t] == IGNORE:
            labels[t] = TAG_INDEX[tags[word]]
    return labels


#: Brackets end a span: an opener starts a new phrase, so a closer is never inside one.
_BRACKETS = frozenset("()[]{}«»“”„")
#: Characters that end a line: a span never runs from one line into the next ("Daktari:
#: Timothy Ssewankambo" / "Alazwe OPD"; "Marisa Alves" / "Legistorm"), except in the groups of
#: :data:`_MULTILINE_GROUPS` while not read as one of :data:`_ONE_LINE_KINDS`. No gold name
#: of MEDDOCAN, MasakhaNER, presidio-research or the synthetic notes crosses a line.
#: Hyphens that join the parts of one word ("Wandayi-Odede", "Jean-Pierre").
_WORD_HYPHENS = frozenset("-\u2010\u2011")
_LINE_BREAKS = frozenset("\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029")
#: Groups whose spans may cross lines: a postal address is written over several
#: ("28245 Puruntie 82 Apt. 595" / "LAPPEENRANTA" in presidio-research).
_MULTILINE_GROUPS = frozenset({"LOCATION"})
#: Kinds in a multi-line group that still end at a line break once a word is confidently read
#: as one of them: a village, town or facility is a name on one line ("Siaya gi Kisumu" /
#: "Jotelo mawuok …" in sentences one per line).
_ONE_LINE_KINDS = frozenset({Category.LOCATION_VILLAGE, Category.LOCATION_FACILITY})
#: Punctuation words a span never starts or ends with ("Rocío (" , "imyaka 29 ,", "/ Dr. Emily").
_EDGE_PUNCT = frozenset(",;:!?\"'«»“”„()[]{}/\\|")
#: Groups whose spans end with an abbreviation's dot ("J.", "Dr.", "Co.", "Ltd."); others end
#: before a final dot unless it closes a dotted abbreviation ("S.A.", "EE.UU.").
_ABBREVIATING_GROUPS = frozenset({"NAME", "ORGANIZATION"})
#: Groups whose spans a person's title before (or opening) them makes a name: the model reads
#: "Ker Kenyatta" (President Kenyatta) or "Migosi Kenyatta" (Mr Kenyatta) as a place.
_CUED_GROUPS = frozenset({"LOCATION", "ORGANIZATION"})
#: Dashes: a span edge where a space stands between them and the span's outside.
_DASHES = frozenset("-–—")
#: Per coarse group (:data:`polydeid.core.taxonomy.COARSE_GROUP`): its categories with the
#: indices of their B- and I- tags. The decoder finds a span's extent at this level.
_GROUPS: dict[str, tuple[tuple[Category, int, int], ...]] = {}
for _category in CATEGORIES:
    _GROUPS.setdefault(COARSE_GROUP[_category], ())
    _GROUPS[COARSE_GROUP[_category]] += (
        (_category, TAG_INDEX[f"B-{_category.value}"], TAG_INDEX[f"I-{_category.value}"]),
    )


#: Groups whose categories are roles of one thing (a patient or a third party named the same
#: way): a change of category inside a span is the model's doubt, not a boundary. In every
#: other group the categories are different things, so a confident change of category between
#: two words is a boundary ("Hospital Santiago Apóstol" | "Ctra. de Orón, s/n").
_ROLE_GROUPS = frozenset({"NAME"})
#: Share of its group's probability a word's likeliest category needs to count as confident.
KIND_SHARE = 0.9


@dataclass(slots=True)
class _Open:
    """A span being read: its group, first and last word, score, per-category mass, and the
    category its last word was confidently read as (None: not confident, or a role group)."""

    group: str
    first: int
    last: int
    score: float
    mass: dict[Category, float]
    kind: Category | None = None


def _kind(probs: Sequence[float], group: str, total: float) -> Category | None:
    """The category a word of ``group`` (whose probability is ``total``) is confidently read
    as, or None (see :data:`KIND_SHARE`; always None in a role group)."""
    if group in _ROLE_GROUPS:
        return None
    value, category = max(
        ((probs[bi] + probs[ii], c) for c, bi, ii in _GROUPS[group]), key=lambda x: x[0]
    )
    return category if total > 0 and value >= KIND_SHARE * total else None


def _word_tag(probs: Sequence[float]) -> tuple[str, str, float]:
    """(prefix ``O``/``B``/``I``, coarse group, the word's probability of being in the group)
    of the likeliest tag once each group's categories are added up."""
    outside = probs[TAG_INDEX[OUTSIDE]]
    if outside > 0.5:  # no group can outweigh it
        return OUTSIDE, "", 0.0
    best, prefix, group = outside, OUTSIDE, ""
    total = 0.0
    for name, members in _GROUPS.items():
        b = sum(probs[bi] for _, bi, _ in members)
        i = sum(probs[ii] for _, _, ii in members)
        if b > best:
            best, prefix, group, total = b, "B", name, b + i
        if i > best:
            best, prefix, group, total = i, "I", name, b + i
    return prefix, group, total


def decode(
    text: str,
    grid: Sequence[tuple[int, int]],
    probabilities: Sequence[Sequence[float] | None],
    thresholds: Mapping[Category, float],
    *,
    default_threshold: float = 0.5,
    source: str = "tagger",
    names: NameForm | None = None,
) -> list[Span]:
    """Spans from per-word tag probabilities (``None`` for words no window decided).

    Two levels, so that a name whose words the model splits between patient and third party
    ("Sam"/PERSON "Bentley"/PERSON_THIRD_PARTY) is still one span:

    * **extent** — each word takes the likeliest of O, B-group, I-group, where a coarse
      group's probability is the sum over its categories (BIO with repair: an ``I-`` after
      ``O`` or after another group starts a span); a span's score is the lowest group
      probability of its words. Outside the name group (whose categories are roles of one
      person) a word read confidently as another category than the span's last confident
      word starts a new span: "Hospital Santiago Apóstol" (a facility) and "Ctra. de Orón,
      s/n" (its street) are two (:data:`KIND_SHARE`; on MEDDOCAN dev, where it was chosen
      among 0.6-0.98, label-agnostic strict F1 0.956 → 0.959);
    * **category** — the group's category with the most probability summed over the span's
      words, summed again over every span of the document with the same text (one name,
      one label: "Patient: Okello" and "Okello was seen" cannot part ways). A one-word name
      that is a word of exactly one longer name of the document is a mention of that person:
      its role is chosen with that name's votes ("Julius" and "Julius Hess"; not "Perez" of
      both "Anna Perez" and "Juan Perez", relatives), :func:`_role_votes`, whenever the
      decoder calls it a name, even where the mentions that vote on its role alone lean to
      another group. A mention that a
      first-person pronoun opens ("an Akong'o Opondo", I am …; the language's ``pronouns``)
      votes on the role only where the name is written nowhere else: a self-introduction
      says who writes, not whose record it is, and the model reads a writer who introduces
      themselves as a relative more often than not ("An {relative}, andiknu kuom {patient}").

    A span is kept at or above its final category's threshold. A line break ends a span, except
    a postal address's, and a full stop (a dot after a word that is no initial or abbreviation,
    then a space) ends a name ("father: Ester." "Yusuf Sayi said"), while a name that ends in an
    initial takes the initial's dot even where the model left it out ("Маслова Н."). A bracket
    ends a span (``Hospital Virgen del Rocío (Sevilla)`` is a facility and, after the bracket, a
    new span); punctuation words are trimmed from both ends, a trailing dot staying only after
    an initial or abbreviation (``J.``). With the language's ``names`` (:func:`name_form`), a
    name loses leading honorifics and openers (``Migosi Raila Odinga`` → ``Raila Odinga``,
    ``Habari Juma`` → ``Juma``, ``An Atieno`` → ``Atieno``) and a possessive ending of its last
    word (``Bentley's`` → ``Bentley``), and a name, place or organisation that is nothing but
    titles, honorifics and openers (``Musawo``; ``Gavana``, governor, read as a place) is
    dropped (a sex or profession word may be a title: "omukyala", "Musawo"); a place or
    organisation that one of its honorifics opens or, capitalised, precedes is a name (``Ker
    Kenyatta``: President Kenyatta; see :func:`_after_title`), and votes for the name group with
    its whole weight. Two spans a hyphen glues into one word are one span, their votes pooled
    ("Wandayi" a facility and "Odede" a name: "Wandayi-Odede", :func:`_join_hyphenated`). Names
    that end up one space apart, both capitalised, are one name ("Stephen" "Sang", read as two
    when the votes made persons of a place and an organisation), labelled by the first;
    MEDDOCAN's lower-case kinship words ("hermano" "Juan") stay apart.
    """
    found: list[tuple[int, int, float, dict[Category, float], bool]] = []
    introduced: set[int] = set()  # starts of names a first-person pronoun opens
    current: _Open | None = None

    floor = 0  # words before it belong to an earlier span

    def close() -> None:
        nonlocal current, floor
        if current is None:
            return
        span, current = current, None
        floor, previous_floor = span.last + 1, floor
        first, last = span.first, span.last
        group, mass, cued = span.group, span.mass, False
        if names is not None and group in _CUED_GROUPS and names.honorifics:
            named = _after_title(text, grid, first, last, names, previous_floor)
            if named is not None:  # "Ker Uhuru Kenyatta", "Migosi Kenyatta": a person
                group, first, cued = "NAME", named, True
                mass = _name_mass(probabilities, span, sum(span.mass.values()))
        named = group == "NAME"
        openers = names.openers if names is not None and named else ()
        while first <= last and (
            _edge_word(text, grid, first, leading=True, name=named)
            or text[grid[first][0] : grid[first][1]].casefold() in openers
        ):
            first += 1
        dotted = group in _ABBREVIATING_GROUPS
        while last >= first and _edge_word(
            text, grid, last, leading=False, abbreviates=dotted, name=named
        ):
            last -= 1
        if first > last:
            floor = previous_floor
            return
        end = grid[last][1]
        if group == "NAME" and _initial_dot(text, grid, last):
            end += 1  # an initial's dot is the initial's ("Маслова Н.")
            floor = max(floor, last + 2)
        if names is not None and named and names.lead_titles:
            first = _lead_title(text, grid, first, names.lead_titles, previous_floor)
        if (
            names is not None
            and (named or group in _CUED_GROUPS)
            and all(
                _edge_word(text, grid, i, leading=True)
                or text[grid[i][0] : grid[i][1]].casefold() in names.titles
                for i in range(first, last + 1)
            )
        ):  # nothing left, or only titles ("Musawo", "Dr.", "Gavana" read as a place): no name,
            floor = previous_floor  # place or organisation; its words stay free for the name
            return  # after it ("Dr" "." "Smith"). A title may be a sex or a profession word.
        if names is not None and named:
            word = text[grid[last][0] : end]
            for suffix in names.suffixes:
                if word.endswith(suffix) and len(word) > len(suffix):  # "Paul M's" too
                    end -= len(suffix)
                    break
        if (
            named
            and names is not None
            and first > 0
            and text[grid[first - 1][0] : grid[first - 1][1]].casefold() in names.pronouns
            and text[grid[first - 1][1] : grid[first][0]].isspace()
        ):
            introduced.add(grid[first][0])  # "an Akong'o Opondo": I am …
        found.append((grid[first][0], end, span.score, mass, cued))

    for i, probs in enumerate(probabilities):
        word = text[grid[i][0] : grid[i][1]]
        if (
            current is not None
            and (current.group not in _MULTILINE_GROUPS or current.kind in _ONE_LINE_KINDS)
            and _LINE_BREAKS.intersection(text[grid[i - 1][1] : grid[i][0]])
        ):
            close()  # a line is a field or a sentence: no name runs into the next line's label
        if probs is None or word in _BRACKETS:
            close()
            continue
        if (
            current is not None
            and current.group == "NAME"
            and word == "."
            and text[grid[i][1] : grid[i][1] + 1].isspace()
            and _edge_word(text, grid, i, leading=False)
        ):
            close()  # a full stop ends a name ("father: Ester." "Yusuf Sayi anasema")
            continue
        prefix, group, total = _word_tag(probs)
        if prefix == OUTSIDE:
            close()
            continue
        kind = _kind(probs, group, total)
        if not (
            prefix == "I"
            and current is not None
            and current.group == group
            and (kind is None or current.kind is None or kind == current.kind)
        ):
            close()
            current = _Open(group, i, i, total, {c: 0.0 for c, _, _ in _GROUPS[group]})
        current.last, current.score = i, min(current.score, total)
        if kind is not None:
            current.kind = kind
        for category, bi, ii in _GROUPS[group]:
            current.mass[category] += probs[bi] + probs[ii]
    close()
    found = _join_hyphenated(text, found)

    votes: dict[str, dict[Category, float]] = {}
    told: dict[str, dict[Category, float]] = {}  # the same, self-introductions left out
    for start, end, _, mass, _ in found:
        for table in (votes,) if start in introduced else (votes, told):
            _pool(table.setdefault(text[start:end], {}), mass)
    # a self-introduction says who writes, not whose record it is: where the name is also
    # written elsewhere, those mentions choose its role
    # (where those mentions read it as a name at all: a told tally without name categories
    # has no role to give)
    role_tallies = {
        written: told[written]
        if any(COARSE_GROUP[c] == "NAME" for c in told.get(written, ()))
        else tally
        for written, tally in votes.items()
    }
    # the texts that are names: by all their mentions' votes, or after an honorific; the role
    # votes alone (a self-introduction left out) may lean to another group, and the name must
    # still be pooled with the longer name it is a word of
    groups = {t: COARSE_GROUP[max(v, key=v.__getitem__)] for t, v in votes.items()}
    named = {text[start:end] for start, end, _, _, cued in found if cued}
    named.update(t for t, group in groups.items() if group == "NAME")
    roles = _role_votes({t: role_tallies[t] for t in named})
    spans = []
    for start, end, score, _, cued in found:
        tally = votes[text[start:end]]
        # an honorific said person: the votes choose only the role
        group = "NAME" if cued else groups[text[start:end]]
        if group == "NAME":
            tally = roles.get(text[start:end], role_tallies[text[start:end]])
        category = max((c for c in tally if COARSE_GROUP[c] == group), key=tally.__getitem__)
        if score >= thresholds.get(category, default_threshold):
            previous = spans[-1] if spans else None
            if (  # two capitalised names one space apart are one ("Stephen" "Sang")
                previous is not None
                and COARSE_GROUP[previous.label] == "NAME" == group
                and text[previous.end : start] == " "
                and text[start : start + 1].isupper()
                and text[previous.start : previous.start + 1].isupper()
            ):
                spans[-1] = Span(
                    previous.start,
                    end,
                    previous.label,
                    source,
                    min(previous.score, round(score, 4)),
                )
                continue
            spans.append(Span(start, end, category, source, round(score, 4)))
    return spans


def _pool(into: dict[Category, float], votes: Mapping[Category, float]) -> dict[Category, float]:
    """``into`` with ``votes`` added to it, category by category (``into`` is changed)."""
    for category, value in votes.items():
        into[category] = into.get(category, 0.0) + value
    return into


def _join_hyphenated(
    text: str, found: list[tuple[int, int, float, dict[Category, float], bool]]
) -> list[tuple[int, int, float, dict[Category, float], bool]]:
    """Spans that a hyphen glues into one word are one span, its words' votes pooled: a
    double surname read in two kinds ("Wandayi" as a facility, "Odede" as a name, of
    "Purity Wandayi-Odede") is one identifier, whose category the pooled votes choose; its
    score is the lower of the two."""
    out: list[tuple[int, int, float, dict[Category, float], bool]] = []
    for item in found:
        if out:
            start, end, score, mass, cued = out[-1]
            if (
                item[0] == end + 1
                and text[end] in _WORD_HYPHENS
                and text[end - 1].isalpha()
                and text[item[0]].isalpha()
            ):
                pooled = _pool(dict(mass), item[3])
                out[-1] = (start, item[1], min(score, item[2]), pooled, cued or item[4])
                continue
        out.append(item)
    return out


def _role_votes(names: Mapping[str, Mapping[Category, float]]) -> dict[str, dict[Category, float]]:
    """Pooled name-role votes of a name and the one-word mentions of its parts; ``names``:
    the role votes of each text the decoder calls a name.

    A one-word name that is a word of exactly one longer name of the text ("Julius" of
    "Julius Hess") is a mention of that person: both take the role their mentions give
    together. A word shared by two longer names ("Perez" of "Maria Perez" and "Juan Perez",
    relatives) stays on its own votes."""
    longer = longer_names_by_word(names)  # casefolded word -> the longer names holding it
    pooled: dict[str, dict[Category, float]] = {}
    for name in (n for n in names if len(n.split()) == 1):
        owners = longer.get(name.casefold(), set())
        if len(owners) != 1:
            continue
        (owner,) = owners
        tally = _pool(pooled.setdefault(owner, dict(names[owner])), names[name])
        pooled[name] = tally
    return pooled


@dataclass(frozen=True, slots=True)
class NameForm:
    """How names are written in a language, for trimming decoded name spans."""

    #: casefolded titles and honorifics: a span of nothing else is not a name ("musawo")
    titles: frozenset[str] = frozenset()
    #: casefolded honorifics of running text, trimmed from the start of a name ("migosi")
    honorifics: frozenset[str] = frozenset()
    #: casefolded words trimmed from the start of a name: the honorifics, greetings
    #: ("habari" of "Habari Juma,") and first-person pronouns (Dholuo "an" of "An Atieno
    #: Ominde, ayie", I … agree)
    openers: frozenset[str] = frozenset()
    #: casefolded first-person pronouns a writer puts before their own name (Dholuo "an")
    pronouns: frozenset[str] = frozenset()
    #: possessive endings of a name's last word ("'s")
    suffixes: tuple[str, ...] = ()
    #: casefolded titles that belong inside a name span when written right before it
    #: (``titles_in_names``: English, as ASQ-PHI annotates "Dr. Smith"); empty: as read
    lead_titles: frozenset[str] = frozenset()


@cache
def name_form(lang: str) -> NameForm:
    """The language's :class:`NameForm`, from ``[format]`` of its ``names.toml``: ``titles``
    (capitalised ones; lower-case particles such as ``de``, ``von`` belong to names),
    ``honorifics`` (titles of running text, e.g. "Migosi"), ``greetings`` (words a message
    opens with before the name it addresses, e.g. "Habari", "Dear"), ``pronouns`` (the
    first-person pronoun a writer puts before their own name, e.g. Dholuo "An", Luganda "Nze")
    and ``possessive_suffixes``.

    Honorifics, greetings and pronouns are trimmed from the start of a name, and a span of
    nothing but those and titles is no name; only honorifics mark the words after them as a
    person (:func:`_after_title`).

    Whether "Dr." belongs to a name is a convention: where the
    table sets ``titles_in_names`` (English, following ASQ-PHI, the English clinical corpus:
    61 of its 86 names written after a title include it) a title right before a name is
    taken into the span, so the convention does not depend on what the model happened to
    learn; elsewhere the span stays as the model read it. Empty without a table."""
    fmt = language_data(lang, "names").get("format", {})
    honorifics = frozenset(t.casefold() for t in fmt.get("honorifics", ()))
    openers = frozenset(
        t.casefold() for key in ("honorifics", "greetings", "pronouns") for t in fmt.get(key, ())
    )
    titles = folded_titles(lang)
    return NameForm(
        titles=titles | openers,
        honorifics=honorifics,
        openers=openers,
        pronouns=frozenset(t.casefold() for t in fmt.get("pronouns", ())),
        suffixes=tuple(fmt.get("possessive_suffixes", ())),
        lead_titles=titles if titles_in_names(lang) else frozenset(),
    )


def _after_title(
    text: str, grid: Sequence[tuple[int, int]], first: int, last: int, names: NameForm, floor: int
) -> int | None:
    """Where the person an honorific marks starts in the span of words ``first``-``last`` read
    as a place or organisation, or None.

    An honorific (a word written before a person's name and not part of it: a title of office
    such as "Ker", "Migosi", "Rais", or Vietnamese "BN", patient) opening the span marks the
    words after it and its other titles ("Ker Uhuru Kenyatta"); one written right before the
    span marks it only when capitalised ("Migosi" "Kenyatta", not "rais" "Marekani": a
    lower-case office word is also the noun of "the president of America"). The marked words
    must start with a capital where the script has case, and hold no number (streets are
    named after people: "Dr Esquerdo 46")."""

    def word(i: int) -> str:
        return text[grid[i][0] : grid[i][1]]

    i = first
    if word(i).casefold() in names.honorifics:
        while i <= last and (
            word(i).casefold() in names.titles or (word(i) == "." and grid[i - 1][1] == grid[i][0])
        ):
            i += 1
    elif not (
        (k := _lead_title(text, grid, first, names.honorifics, floor)) < first
        and not word(k)[:1].islower()
    ):
        return None
    if i > last or word(i)[:1].islower():
        return None
    return None if any(c.isdigit() for c in text[grid[i][0] : grid[last][1]]) else i


def _initial_dot(text: str, grid: Sequence[tuple[int, int]], last: int) -> bool:
    """Whether word ``last`` is an initial (one capital letter) with a dot glued after it that
    ends the word ("Н." but not "N.Smith")."""
    if last + 1 >= len(grid):
        return False
    start, end = grid[last]
    return (
        grid[last + 1][0] == end
        and text[end : end + 1] == "."
        and end - start == 1
        and text[start].isupper()
        and not text[end + 1 : end + 2].isalnum()
    )


def _name_mass(
    probabilities: Sequence[Sequence[float] | None], span: _Open, strength: float
) -> dict[Category, float]:
    """A vote of ``strength`` for the name role the span's words lean to most (the patient
    where they give the name group nothing)."""
    mass = {c: 0.0 for c, _, _ in _GROUPS["NAME"]}
    for probs in probabilities[span.first : span.last + 1]:
        if probs is not None:
            for category, bi, ii in _GROUPS["NAME"]:
                mass[category] += probs[bi] + probs[ii]
    role = max(mass, key=mass.__getitem__)  # ties: the first, the patient
    return {c: (strength if c is role else 0.0) for c in mass}


def _lead_title(
    text: str, grid: Sequence[tuple[int, int]], first: int, titles: frozenset[str], floor: int
) -> int:
    """Index of the title word written right before word ``first`` ("Dr" of "Dr. Smith",
    "Mrs" of "Mrs Okello"; only spaces between, no line break), else ``first``. Words before
    ``floor`` belong to an earlier span and are never taken."""
    k = first - 1
    if k < floor:
        return first
    gap = text[grid[k][1] : grid[first][0]]
    if not gap or gap.strip(" \t") or len(gap) > 2:
        return first
    if text[grid[k][0] : grid[k][1]] == ".":  # "Dr." : the dot glued to the title
        if k - 1 < floor or grid[k - 1][1] != grid[k][0]:
            return first
        k -= 1
    return k if text[grid[k][0] : grid[k][1]].casefold() in titles else first


def _edge_word(
    text: str,
    grid: Sequence[tuple[int, int]],
    index: int,
    *,
    leading: bool,
    abbreviates: bool = True,
    name: bool = False,
) -> bool:
    """Whether word ``index`` is punctuation a span should not start (or end) with.

    A span that ``abbreviates`` (a name, an organisation) keeps a dot after an initial or
    abbreviation ("J.", "Dr.", "Co."); other spans only after a dotted abbreviation ("S.A.",
    "EE.UU."), and otherwise end before it ("4 izq." is a street and a full stop). A dash is
    an edge where a space parts it from the span's outside ("Av. Pío XII, 36 -"), not in
    "E-18012"; at a ``name``'s edge it always is, the compound's and not the name's ("Zobel" of
    "Zobel-Klasse")."""
    word = text[grid[index][0] : grid[index][1]]
    if word == ".":
        if leading or not index:
            return True
        a, b = grid[index - 1]
        if not (text[a:b].isalpha() and b - a <= 3):
            return True
        # "J.", "Dr.", "St." keep the dot in a name; elsewhere only a dotted abbreviation does
        return not (abbreviates or (a > 0 and text[a - 1] == "."))  # "S.A.", "EE.UU."
    if word in _DASHES:
        if name:
            return True
        outside = grid[index][0] - 1 if leading else grid[index][1]
        return not (0 <= outside < len(text)) or text[outside].isspace()
    return len(word) == 1 and word in _EDGE_PUNCT


def word_rows(
    docs: Sequence[Aligned],
    plans: Sequence[tuple[Sequence[tuple[int, int]], Sequence[int]]],
    results: Mapping[tuple[int, int], Any],
) -> list[tuple[Aligned, list[list[float] | None]]]:
    """Each document's per-word label probabilities: the row of the word's first token in
    the window that owns the word (``plans[d]`` = (window spans, owner window per word);
    ``results[(d, window start)]`` = the window's token rows). Words without a token (or
    owner) get None."""
    out = []
    for d, aligned in enumerate(docs):
        spans, owners = plans[d]
        per_word: list[list[float] | None] = [None] * len(aligned.grid)
        rows: dict[int, list[list[float]]] = {}  # window start -> its rows, converted once
        for word, t in enumerate(aligned.word_token):
            if t >= 0 and owners[word] >= 0:
                start = spans[owners[word]][0]
                if start not in rows:
                    rows[start] = results[(d, start)].tolist()
                per_word[word] = rows[start][t - start]
        out.append((aligned, per_word))
    return out
