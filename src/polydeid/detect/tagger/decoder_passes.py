"""The tagger decoder's named passes: where a span ends, how its edges are trimmed, which spans
join, how a name's mentions share a role. Model decoding itself (BIO extent and category votes)
is :mod:`polydeid.detect.tagger.decode`; :data:`DECODER_PASSES` lists these in order.

Each pass is a :class:`~polydeid.detect.passes.SpanPass` of one of the decoder's stages
(:class:`~polydeid.detect.passes.Stage`): ``boundary`` passes cut the words' tags into spans,
``reading`` passes trim or drop each span as read (in text order: a dropped span frees its
words for the next one), the ``readings`` pass joins spans before the votes, the ``votes`` pass
pools name roles, and the ``spans`` pass joins names after the thresholds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from polydeid.core.spans import Span
from polydeid.core.taxonomy import COARSE_GROUP, Category
from polydeid.detect.passes import SpanPass, Stage
from polydeid.detect.roles import longer_name_of
from polydeid.detect.tagger._reading import (
    GROUPS,
    Cut,
    DecodeContext,
    Open,
    Reading,
    Tallies,
    WordTag,
)
from polydeid.locales.names import NameWords

#: Brackets end a span: an opener starts a new phrase, so a closer is never inside one.
_BRACKETS = frozenset("()[]{}«»“”„")
#: Hyphens that join the parts of one word ("Wandayi-Odede", "Jean-Pierre").
_WORD_HYPHENS = frozenset("-\u2010\u2011")
#: Characters that end a line: a span never runs from one line into the next ("Daktari:
#: Timothy Ssewankambo" / "Alazwe OPD"), except in the groups of :data:`_MULTILINE_GROUPS`
#: while not read as one of :data:`_ONE_LINE_KINDS`.
_LINE_BREAKS = frozenset("\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029")
#: Groups whose spans may cross lines: a postal address is written over several.
_MULTILINE_GROUPS = frozenset({"LOCATION"})
#: Kinds in a multi-line group that still end at a line break once a word is confidently read
#: as one of them: a village, town or facility is a name on one line.
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


# --- boundaries: where a span ends while the words' tags are read ------------------------------


def _line_break(
    ctx: DecodeContext, i: int, current: Open | None, tag: WordTag | None
) -> Cut | None:
    if (
        current is not None
        and (current.group not in _MULTILINE_GROUPS or current.kind in _ONE_LINE_KINDS)
        and _LINE_BREAKS.intersection(ctx.text[ctx.grid[i - 1][1] : ctx.grid[i][0]])
    ):
        return Cut.BEFORE
    return None


def _bracket(ctx: DecodeContext, i: int, current: Open | None, tag: WordTag | None) -> Cut | None:
    return Cut.SKIP if ctx.word(i) in _BRACKETS else None


def _kind_change(
    ctx: DecodeContext, i: int, current: Open | None, tag: WordTag | None
) -> Cut | None:
    if (
        tag is not None
        and tag.prefix == "I"
        and current is not None
        and current.group == tag.group
        and tag.kind is not None
        and current.kind is not None
        and tag.kind != current.kind
    ):
        return Cut.BEFORE
    return None


# --- readings: each span as read, in text order ------------------------------------------------


def _honorific_person(ctx: DecodeContext, r: Reading) -> Reading | None:
    names = ctx.names
    if names is None or r.group not in _CUED_GROUPS or not names.honorifics:
        return r
    named = _after_title(ctx.text, ctx.grid, r.first, r.last, names, r.floor)
    if named is not None:  # "Ker Uhuru Kenyatta", "Migosi Kenyatta": a person
        r.mass = _name_mass(ctx.probabilities, r.first, r.last, sum(r.mass.values()))
        r.group, r.first, r.cued = "NAME", named, True
    return r


def _edges(ctx: DecodeContext, r: Reading) -> Reading | None:
    text, grid = ctx.text, ctx.grid
    named = r.group == "NAME"
    while r.first <= r.last and _edge_word(text, grid, r.first, leading=True, name=named):
        r.first += 1
    dotted = r.group in _ABBREVIATING_GROUPS
    while r.last >= r.first and _edge_word(
        text, grid, r.last, leading=False, abbreviates=dotted, name=named
    ):
        r.last -= 1
    return None if r.first > r.last else r


def _openers(ctx: DecodeContext, r: Reading) -> Reading | None:
    names = ctx.names
    if names is None or r.group != "NAME" or not names.openers:
        return r
    while r.first <= r.last and (
        _edge_word(ctx.text, ctx.grid, r.first, leading=True, name=True)
        or ctx.word(r.first).casefold() in names.openers
    ):
        r.first += 1
    return None if r.first > r.last else r


def _initial_dot_pass(ctx: DecodeContext, r: Reading) -> Reading | None:
    if r.group == "NAME" and _initial_dot(ctx.text, ctx.grid, r.last):
        r.end = ctx.grid[r.last][1] + 1  # an initial's dot is the initial's ("Маслова Н.")
        r.floor_after = max(r.floor_after, r.last + 2)
    return r


def _lead_title_pass(ctx: DecodeContext, r: Reading) -> Reading | None:
    names = ctx.names
    if names is not None and r.group == "NAME" and names.titles_in_names and names.titles:
        r.first = _lead_title(ctx.text, ctx.grid, r.first, names.titles, r.floor)
    return r


def _title_only(ctx: DecodeContext, r: Reading) -> Reading | None:
    names = ctx.names
    if names is None or not (r.group == "NAME" or r.group in _CUED_GROUPS):
        return r
    if all(
        _edge_word(ctx.text, ctx.grid, i, leading=True) or ctx.word(i).casefold() in names.bare
        for i in range(r.first, r.last + 1)
    ):
        return None  # "Musawo", "Dr.", "Gavana" read as a place: its words stay free
    return r


def _possessive(ctx: DecodeContext, r: Reading) -> Reading | None:
    names = ctx.names
    if names is None or r.group != "NAME":
        return r
    end = r.end_char(ctx.grid)
    word = ctx.text[ctx.grid[r.last][0] : end]
    for suffix in names.possessive_suffixes:
        if word.endswith(suffix) and len(word) > len(suffix):  # "Paul M's" too
            r.end = end - len(suffix)
            break
    return r


# --- readings, together: before the votes ------------------------------------------------------


def _hyphen_join(ctx: DecodeContext, readings: list[Reading]) -> list[Reading]:
    text, grid = ctx.text, ctx.grid
    out: list[Reading] = []
    for r in readings:
        if out:
            a = out[-1]
            end, start = a.end_char(grid), r.start_char(grid)
            if (
                start == end + 1
                and text[end] in _WORD_HYPHENS
                and text[end - 1].isalpha()
                and text[start].isalpha()
            ):
                out[-1] = Reading(
                    a.group,
                    a.first,
                    r.last,
                    min(a.score, r.score),
                    pool(dict(a.mass), r.mass),
                    a.floor,
                    r.floor_after,
                    end=r.end_char(grid),
                    cued=a.cued or r.cued,
                )
                continue
        out.append(r)
    return out


# --- votes and spans ---------------------------------------------------------------------------


def _longer_name_roles(ctx: DecodeContext, tallies: Tallies) -> Tallies:
    pooled: dict[str, dict[Category, float]] = {}
    mention_of = longer_name_of(tallies)
    for name in (n for n in tallies if len(n.split()) == 1):
        owner = mention_of.get(name.casefold())
        if owner is None:
            continue
        tally = pool(pooled.setdefault(owner, dict(tallies[owner])), tallies[name])
        pooled[name] = tally
    return {**tallies, **pooled}


def _adjacent_names(ctx: DecodeContext, spans: list[Span]) -> list[Span]:
    text = ctx.text
    out: list[Span] = []
    for span in spans:
        previous = out[-1] if out else None
        if (
            previous is not None
            and COARSE_GROUP[previous.label] == "NAME" == COARSE_GROUP[span.label]
            and text[previous.end : span.start] == " "
            and text[span.start : span.start + 1].isupper()
            and text[previous.start : previous.start + 1].isupper()
        ):
            out[-1] = Span(
                previous.start,
                span.end,
                previous.label,
                previous.source,
                min(previous.score, span.score),
            )
            continue
        out.append(span)
    return out


#: The decoder's passes, in the order they run within each stage.
DECODER_PASSES: tuple[SpanPass, ...] = (
    SpanPass(
        "decode.line_break",
        Stage.BOUNDARY,
        _line_break,
        "a line break ends a span (a line is a field or a sentence), except a postal address "
        "not yet confidently read as a village or facility",
        version=2,
    ),
    SpanPass(
        "decode.bracket",
        Stage.BOUNDARY,
        _bracket,
        "a bracket ends a span and belongs to none ('Hospital Virgen del Rocío (Sevilla)')",
    ),
    SpanPass(
        "decode.kind_change",
        Stage.BOUNDARY,
        _kind_change,
        "outside names, a word confidently read as another category than the span's last "
        "confident word starts a new span (a facility, then its street)",
    ),
    SpanPass(
        "decode.honorific_person",
        Stage.READING,
        _honorific_person,
        "a place or organisation that one of the language's honorifics opens or, capitalised, "
        "precedes is a person ('Ker Kenyatta': President Kenyatta)",
    ),
    SpanPass(
        "decode.edges",
        Stage.READING,
        _edges,
        "punctuation words are trimmed from both ends; a trailing dot stays only after an "
        "initial or abbreviation ('J.'), a dash at a name's edge goes",
        version=2,
    ),
    SpanPass(
        "decode.openers",
        Stage.READING,
        _openers,
        "a name loses the honorifics, greetings and first-person pronouns that open it "
        "('Migosi Raila Odinga', 'Habari Juma', 'An Atieno')",
    ),
    SpanPass(
        "decode.initial_dot",
        Stage.READING,
        _initial_dot_pass,
        "a name ending in an initial takes the initial's dot ('Маслова Н.')",
    ),
    SpanPass(
        "decode.lead_title",
        Stage.READING,
        _lead_title_pass,
        "where the language writes titles into names (English, as ASQ-PHI annotates), a "
        "title right before a name joins it ('Dr. Smith')",
    ),
    SpanPass(
        "decode.title_only",
        Stage.READING,
        _title_only,
        "a name, place or organisation of nothing but titles and openers is dropped "
        "('Musawo'; 'Gavana', governor, read as a place), its words free for the next span",
        version=2,
    ),
    SpanPass(
        "decode.possessive",
        Stage.READING,
        _possessive,
        'a name loses a possessive ending of its last word ("Bentley\'s")',
    ),
    SpanPass(
        "decode.hyphen_join",
        Stage.READINGS,
        _hyphen_join,
        "spans a hyphen glues into one word are one span, their votes pooled ('Wandayi-Odede')",
    ),
    SpanPass(
        "decode.longer_name_roles",
        Stage.VOTES,
        _longer_name_roles,
        "a one-word name that is a word of exactly one longer name takes the role their "
        "mentions give together ('Julius' and 'Julius Hess')",
        version=2,
    ),
    SpanPass(
        "decode.adjacent_names",
        Stage.SPANS,
        _adjacent_names,
        "two capitalised names one space apart are one name, labelled by the first "
        "('Stephen' 'Sang')",
    ),
)


# --- helpers -----------------------------------------------------------------------------------


def pool(into: dict[Category, float], votes: Mapping[Category, float]) -> dict[Category, float]:
    """``into`` with ``votes`` added to it, category by category (``into`` is changed)."""
    for category, value in votes.items():
        into[category] = into.get(category, 0.0) + value
    return into


def _after_title(
    text: str,
    grid: Sequence[tuple[int, int]],
    first: int,
    last: int,
    names: NameWords,
    floor: int,
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
            word(i).casefold() in names.bare or (word(i) == "." and grid[i - 1][1] == grid[i][0])
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
    probabilities: Sequence[Sequence[float] | None], first: int, last: int, strength: float
) -> dict[Category, float]:
    """A vote of ``strength`` for the name role words ``first``-``last`` lean to most (the
    patient where they give the name group nothing)."""
    mass = {c: 0.0 for c, _, _ in GROUPS["NAME"]}
    for probs in probabilities[first : last + 1]:
        if probs is not None:
            for category, bi, ii in GROUPS["NAME"]:
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
