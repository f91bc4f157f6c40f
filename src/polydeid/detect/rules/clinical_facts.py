"""Protected clinical facts: doses, lab values, vitals, durations and quantities.

The resolver drops every identifier candidate that overlaps a fact span, so a fact span covers
exactly the fact and nothing that could be an identifier:

* a dose: number, unit, route and frequency (``2 x 500 mg PO tds``, ``1 g IV``, ``0.5 mL``),
  a dosing scheme (``1-0-1``), a frequency (``q8h``, ``3 times a day``, ``mara 3 kwa siku``);
* a lab value: test name, comparator, number and unit (``creatinine 86 µmol/L``,
  ``viral load <40 copies/mL``), or a value with a lab unit alone (``12.5 g/dL``);
* a vital: label, reading and unit (``BP: 120/80 mmHg``, ``HR 88``, ``SpO2 97%``, ``GCS 15/15``),
  the reading checked against the vital's plausible range;
* a duration: marker, number and time unit (``for 5 days``, ``x 7/7``, ``kwa siku 3``,
  ``seit 3 Tagen``, ``3 दिन से``) — never a bare "N years", which may be an age;
* a quantity: counts with a count word (``3 tablets``), obstetric counts (``G2P1``), percentages.

A number with neither a unit nor a fact label is never a fact, so ``Tel 0772 123456`` and
``DOB 12/03/1980`` stay free for the identifier rules. A label's value must also be a plain
number (no leading zero, at most 7 digits, not followed by another digit group).

Every fact is found by one digit-anchored pattern: words before a number (labels, duration
markers, count words) are checked by a look-behind built as a suffix trie, units after it by a
prefix trie, so the pattern does real work only where a number starts. Words come from
``locales/languages/<code>/facts.toml`` for the segment's language and English.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache

import regex

from polydeid.core.errors import ConfigError
from polydeid.core.segments import Segment
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Fact
from polydeid.detect.rules._base import RuleDetector
from polydeid.locales import languages, segment_languages
from polydeid.locales.facts import fact_words
from polydeid.text.patterns import Match, Pattern, compile_pattern, guarded_finditer
from polydeid.text.scripts import UNSPACED, UNSPACED_CLASS

#: Horizontal whitespace, including no-break spaces.
SP = r"[ \t\u00a0\u202f]"

_WORDCHAR = compile_pattern(r"[\p{L}\p{N}\p{M}]")

#: Comparators that belong to a lab value ("<40 copies/mL").
_COMPARATORS = "<>≤≥~≈"

#: The fact kinds this rule finds (numbers with units and labels; not drugs or diagnoses).
RULE_KINDS: frozenset[Fact] = frozenset(
    {Fact.DOSE, Fact.LAB_VALUE, Fact.VITAL, Fact.DURATION, Fact.QUANTITY}
)
_KIND_SOURCES: Mapping[Fact, str] = {kind: f"fact.{kind.value.lower()}.v1" for kind in RULE_KINDS}


# --------------------------------------------------------------------------------------------
# Word alternations as tries


def _bounded(ch: str) -> bool:
    """Whether a word starting or ending with ``ch`` needs a word boundary there."""
    return bool(_WORDCHAR.match(ch)) and not UNSPACED.match(ch)


def _case_sensitive(word: str) -> bool:
    """Symbols and short abbreviations match case-sensitively: one-character words (``g`` is not
    ``G``), and two-character words with a capital (``BP``, ``Na``)."""
    core = word.replace(".", "")
    return len(core) <= 1 or (len(core) == 2 and any(c.isupper() for c in core))


def _atoms(word: str) -> list[str]:
    """A word as regex atoms: characters, with whitespace runs as one flexible atom."""
    atoms: list[str] = []
    for ch in word:
        if ch.isspace():
            if atoms and atoms[-1] != f"{SP}+":
                atoms.append(f"{SP}+")
        else:
            atoms.append(regex.escape(ch))
    return atoms


#: Word boundaries; a letter of a script written without spaces does not continue a word.
_LEFT = rf"(?<![\p{{L}}\p{{N}}\p{{M}}](?<![{UNSPACED_CLASS}]))"
_RIGHT = rf"(?!(?![{UNSPACED_CLASS}])[\p{{L}}\p{{N}}\p{{M}}])"


#: A trie of atoms: each atom to the trie of what may follow it ("" ends a sequence).
_Trie = dict[str, "_Trie"]


def _trie_pattern(sequences: Iterable[list[str]], *, backward: bool) -> str:
    """Regex for a set of atom sequences, factored as a trie (suffix trie when ``backward``)."""
    root: _Trie = {}
    for seq in sequences:
        node = root
        for atom in reversed(seq) if backward else seq:
            node = node.setdefault(atom, {})
        node[""] = {}  # end of a sequence
    return _emit(root, backward=backward)


def _emit(node: _Trie, *, backward: bool) -> str:
    optional = "" in node
    branches = []
    for atom in sorted(k for k in node if k):
        rest = _emit(node[atom], backward=backward)
        branches.append(rest + atom if backward else atom + rest)
    if not branches:
        return ""
    body = branches[0] if len(branches) == 1 and not optional else "(?:" + "|".join(branches) + ")"
    return body + "?" if optional else body  # greedy: the longest word is tried first


def word_alternation(words: Iterable[str], *, backward: bool = False, bounded: bool = True) -> str:
    """A regex matching any of ``words`` as a whole word, as a trie (suffix trie when ``backward``).

    One-character words, and two-character words with a capital letter, match case-sensitively,
    all others case-insensitively; whitespace inside a word matches runs of spaces. When
    ``bounded``, words starting (for ``backward``, used in look-behinds) or ending (otherwise)
    with a letter or digit of a spaced script need a word boundary on that side; the longest word
    wins. Returns a never-matching pattern when ``words`` is empty.
    """
    groups: dict[tuple[bool, bool], list[list[str]]] = {}
    for word in {w.strip() for w in words if w.strip()}:
        cs = _case_sensitive(word)
        edge = bounded and _bounded(word[0] if backward else word[-1])
        groups.setdefault((edge, cs), []).append(_atoms(word if cs else word.lower()))
    alternatives = []
    for edge in (False, True):  # words ending in a dot ("Tbl.") before words that need a boundary
        tries = []
        for cs in (False, True):
            trie = _trie_pattern(groups.get((edge, cs), []), backward=backward)
            if trie:
                tries.append(trie if cs else f"(?i:{trie})")
        if not tries:
            continue
        body = tries[0] if len(tries) == 1 else "(?:" + "|".join(tries) + ")"
        if edge:
            body = f"{_LEFT}{body}" if backward else f"{body}{_RIGHT}"
        alternatives.append(body)
    if not alternatives:
        return "(?!)"
    return alternatives[0] if len(alternatives) == 1 else "(?:" + "|".join(alternatives) + ")"


def normalise_word(text: str) -> str:
    """Lookup key of a matched word: lower case, whitespace collapsed."""
    return " ".join(text.lower().split())


# --------------------------------------------------------------------------------------------
# Vocabulary


@dataclass(frozen=True, slots=True)
class VitalSpec:
    """A vital sign: its plausible range, and whether "a/b" readings are allowed."""

    name: str
    low: float
    high: float
    ratio: bool = False
    denominators: tuple[float, ...] = ()

    def accepts(self, value: float, denominator: float | None) -> bool:
        """Whether ``value`` (over ``denominator``, if given) is a plausible reading."""
        if not self.low <= value <= self.high:
            return False
        if denominator is None:
            return True
        if not self.ratio:
            return False
        if self.denominators:
            return denominator in self.denominators and value <= denominator
        return self.low <= denominator <= self.high and value >= denominator


@dataclass(frozen=True, slots=True)
class LabelSense:
    """One meaning of a label: a vital (with its range), a lab test or a count label."""

    kind: Fact
    vital: VitalSpec | None = None


@dataclass(frozen=True, slots=True)
class FactVocabulary:
    """The facts vocabulary of a set of languages (merged ``facts.toml`` tables)."""

    unit_words: tuple[str, ...]
    units: Mapping[str, Fact]
    label_unit_words: tuple[str, ...]
    per: tuple[str, ...]
    before_words: tuple[str, ...]
    before: Mapping[str, Fact]
    routes: tuple[str, ...]
    frequencies: tuple[str, ...]
    duration_markers: tuple[str, ...]
    duration_fillers: tuple[str, ...]
    time_units: tuple[str, ...]
    time_units_before: tuple[str, ...]
    duration_after: tuple[str, ...]
    label_words: tuple[str, ...]
    labels: Mapping[str, tuple[LabelSense, ...]]
    links: tuple[str, ...]


def _strings(table: Mapping[str, object], key: str, where: str) -> list[str]:
    """The list of strings ``key`` of a raw table (the data files are read and checked by
    :mod:`polydeid.locales.facts`; this is the same check, for tables built in code)."""
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"facts data: {key!r} must be a list of strings", location=where)
    return value


def _vital_specs(langs: Sequence[str]) -> dict[str, VitalSpec]:
    """Vital ranges by name: from English, overridden by a language that gives its own."""
    specs: dict[str, VitalSpec] = {}
    for lang in ("en", *langs):
        for name, sign in fact_words(lang).vitals.items():
            if sign.range is not None:
                specs[name] = VitalSpec(
                    name=name,
                    low=sign.range[0],
                    high=sign.range[1],
                    ratio=sign.ratio,
                    denominators=sign.denominators,
                )
    return specs


@cache
def fact_vocabulary(langs: tuple[str, ...]) -> FactVocabulary:
    """Merged facts vocabulary of ``langs`` (canonical codes); raises on malformed data."""
    units: dict[str, Fact] = {}
    before: dict[str, Fact] = {}
    labels: dict[str, list[LabelSense]] = {}
    lists: dict[str, list[str]] = {}
    specs = _vital_specs(langs)

    def extend(name: str, values: Sequence[str]) -> None:
        lists.setdefault(name, []).extend(values)

    for lang in langs:
        data = fact_words(lang)
        where = f"languages/{lang}/facts.toml"
        for words, kind in (
            (data.lab_units, Fact.LAB_VALUE),
            (data.dose_units, Fact.DOSE),
            (data.frequency_units, Fact.DOSE),
            (data.vital_units, Fact.VITAL),
            (data.quantity_units, Fact.QUANTITY),
        ):
            for unit in words:
                units.setdefault(normalise_word(unit), kind)
                extend("unit_words", [unit])
        extend("per", data.per_units)
        for unit in data.label_units:
            units.setdefault(normalise_word(unit), Fact.VITAL)
            extend("label_unit_words", [unit])
        for words, kind in (
            (data.quantity_before, Fact.QUANTITY),
            (data.frequency_before, Fact.DOSE),
        ):
            for word in words:
                before.setdefault(normalise_word(word), kind)
                extend("before_words", [word])
        extend("routes", data.routes)
        extend("frequencies", data.frequencies)
        extend("duration.markers", data.duration_markers)
        extend("duration.fillers", data.duration_fillers)
        extend("duration.units", data.duration_units)
        extend("duration.units_before", data.duration_units_before)
        extend("duration.after_markers", data.duration_after_markers)
        for name, sign in data.vitals.items():
            if name not in specs:
                raise ConfigError(f"facts data: vital {name!r} has no range", location=where)
            for label in sign.labels:
                extend("label_words", [label])
                labels.setdefault(normalise_word(label), []).append(
                    LabelSense(Fact.VITAL, specs[name])
                )
        for label in data.lab_names:
            extend("label_words", [label])
            labels.setdefault(normalise_word(label), []).append(LabelSense(Fact.LAB_VALUE))
        for label in data.quantity_labels:
            extend("label_words", [label])
            labels.setdefault(normalise_word(label), []).append(LabelSense(Fact.QUANTITY))
        extend("links", data.links)
    return FactVocabulary(
        unit_words=tuple(lists.get("unit_words", [])),
        units=units,
        label_unit_words=tuple(lists.get("label_unit_words", [])),
        per=tuple(lists.get("per", [])),
        before_words=tuple(lists.get("before_words", [])),
        before=before,
        routes=tuple(lists.get("routes", [])),
        frequencies=tuple(lists.get("frequencies", [])),
        duration_markers=tuple(lists.get("duration.markers", [])),
        duration_fillers=tuple(lists.get("duration.fillers", [])),
        time_units=tuple(lists.get("duration.units", [])),
        time_units_before=tuple(lists.get("duration.units_before", [])),
        duration_after=tuple(lists.get("duration.after_markers", [])),
        label_words=tuple(lists.get("label_words", [])),
        labels={k: tuple(v) for k, v in labels.items()},
        links=tuple(lists.get("links", [])),
    )


def duration_lead_pattern(vocab: FactVocabulary) -> str:
    """Look-behind body: a duration marker (and fillers) right before a position.

    Shared with the age rule, so that text this rule claims as a duration is never an age.
    """
    markers = word_alternation(vocab.duration_markers, backward=True)
    fillers = word_alternation(vocab.duration_fillers, backward=True)
    return rf"(?P<dm>{markers})(?:{SP}*(?:{fillers}))*{SP}*"


# --------------------------------------------------------------------------------------------
# The pattern

#: Rest of a number after its first digit; atomic so that it never stops inside a number.
_TAIL = r"(?>\d*(?:[.,٫]\d+)*)"
_NUMBER = rf"\d{_TAIL}"
#: After a number's first digit: not inside a number or after another digit group ("0772 123456"),
#: not glued to a Latin, Cyrillic or Greek word.
_START = (
    r"(?<=(?<![\p{N}\p{Latin}\p{Cyrillic}\p{Greek}_])(?<!\p{N}[.,٫/:])"
    r"(?<!(?<![\p{L}\p{N}])\p{N}+[ \u00a0\-–])\d)"
)
#: After a first digit glued to a letter that starts a notation (G2P1, q8h, x7/7, E4V5M6).
_GLUED = r"(?<=(?<![\p{L}\p{N}\p{M}])[GgQqXx×E]\d)"
#: Fractions used as durations: days/7, weeks/52, months/12.
_FRACTION = r"/(?:7|52|12)(?![\d/])"
_NO_MORE_DIGITS = r"(?![\d])(?![.,٫/:]\d)"


_ROLES = ("label", "marker", "before", "time_before")


def _context_roles(vocab: FactVocabulary) -> dict[str, frozenset[str]]:
    """What each word that may stand before a number is: label, duration marker, count word…"""
    roles: dict[str, set[str]] = {}
    for role, words in zip(
        _ROLES,
        (vocab.label_words, vocab.duration_markers, vocab.before_words, vocab.time_units_before),
        strict=True,
    ):
        for word in words:
            roles.setdefault(normalise_word(word), set()).add(role)
    return {k: frozenset(v) for k, v in roles.items()}


def _context_words(vocab: FactVocabulary) -> tuple[str, ...]:
    return (
        *vocab.label_words,
        *vocab.duration_markers,
        *vocab.before_words,
        *vocab.time_units_before,
    )


#: Separator between a word before a number and the number: "BP: 120", "viral load <40".
_CONTEXT_SEP = rf"(?>{SP}*(?:[:：=\-–]{SP}*)?(?:[{_COMPARATORS}]{SP}?)?)"


def _edge_class(words: Iterable[str], *, last: bool) -> str:
    """A class of the first (or ``last``) character of each of ``words``, read
    case-insensitively: a one-character look that every match of their alternation passes, so
    that positions where none can match are left before the alternation is tried."""
    stripped = [w.strip() for w in words]
    chars = {(w[-1] if last else w[0]).lower() for w in stripped if w}
    if not chars:
        return "(?!)"
    return "(?i:[" + "".join(sorted(regex.escape(c) for c in chars)) + "])"


def _context_pattern(vocab: FactVocabulary) -> str:
    """Look-behind body: the word before a number (label, marker, count word), skipping up to
    two link or filler words ("BP was 120/80", "for about 3 days")."""
    context = word_alternation(_context_words(vocab), backward=True)
    between = word_alternation((*vocab.links, *vocab.duration_fillers), backward=True)
    return rf"(?P<ctx>{context})(?:{SP}+(?:{between})){{0,2}}{_CONTEXT_SEP}"


def _build_pattern(vocab: FactVocabulary) -> str:
    context = _context_pattern(vocab)
    fact_units = word_alternation(vocab.unit_words)
    time_units = word_alternation(vocab.time_units)
    units = word_alternation((*vocab.unit_words, *vocab.time_units, *vocab.label_unit_words))
    per = word_alternation(vocab.per)
    routes = word_alternation(vocab.routes)
    freqs = word_alternation(vocab.frequencies)
    after_markers = word_alternation(vocab.duration_after)
    # a unit never continues into a word: "2013 ng'alina" is a year and a Luganda verb
    unit = rf"(?P<u>{units})(?!['’]\p{{L}})(?:/(?:{per}))*"
    # without a word before the number, a time unit is a fact only with a marker after it
    # ("3 दिन से", "3 días de evolución"): "3 years" alone may be an age
    unit_alone = (
        rf"(?:(?P<u>{fact_units})(?!['’]\p{{L}})(?:/(?:{per}))*"
        rf"|(?P<u>{time_units})(?={SP}*(?:{after_markers})))"
    )
    # route and frequency words after a dose ("500 mg PO tds"), not a frequency word that
    # starts the next fact ("mara 3 kwa siku")
    extension = rf"(?:{SP}*+(?:{routes}|(?:{freqs})(?!{SP}*\d))){{0,3}}"
    plus = r"(?:\+{1,3}(?![\d+]))?"
    second = rf"(?:{SP}*+(?P<rsep>[-–/]){SP}*+(?P<n2>{_NUMBER}))?{_NO_MORE_DIGITS}"
    glued = (
        rf"{_GLUED}(?:"
        rf"(?<=(?P<gp>[Gg])\d)(?P<b_gp>)\d?{SP}?[Pp]\d{{1,2}}(?:\+\d{{1,2}})?"
        rf"(?:{SP}?[Aa]\d{{1,2}})?(?![\p{{L}}\p{{N}}])"
        rf"|(?<=(?P<q>[qQ])\d)(?P<b_q>)\d?(?:[-–]\d{{1,2}})?{SP}?(?:hrly|hr|h|H)(?![\p{{L}}\p{{N}}])"
        rf"|(?<=(?P<evm>E)\d)(?P<b_evm>){SP}?[Vv](?:\d|T){SP}?[Mm]\d(?![\p{{L}}\p{{N}}])"
        rf"|(?<=(?P<x>[Xx×])\d)(?P<b_x>)\d?{_NO_MORE_DIGITS}"
        rf"(?:(?P<xf>{_FRACTION})|{SP}?(?P<xu>{time_units}))?"
        ")"
    )
    # What must follow a number for the unit alternative (a sign, a second number's separator
    # or a unit) and precede it for the word-before one (the last letter of a word, then the
    # separators): one look each, so that most numbers of a dense list are left at once.
    unit_first = _edge_class((*vocab.unit_words, *vocab.time_units), last=False)
    unit_next = rf"(?={SP}*+(?:[x×*\-–/]|{unit_first}))"
    word_before = _edge_class(
        (*_context_words(vocab), *vocab.links, *vocab.duration_fillers), last=True
    )
    context_last = rf"(?<={word_before}[ \t\u00a0\u202f:：=\-–{_COMPARATORS}]*\d)"
    plain = (
        rf"{_START}(?:"
        # dosing scheme 1-0-1, 1-1-1-1
        rf"(?P<b_scheme>)(?:[-–][0-4½¼](?:[.,]5)?){{2,3}}(?![\p{{N}}/\-–]|[.,]\d)"
        # number [x number] [-/ number] unit [route] [frequency]: "2 x 500 mg PO tds"
        rf"|(?P<nt>{_TAIL}){plus}{unit_next}"
        rf"(?:{SP}*+[x×*]{SP}*+(?P<mult>{_NUMBER})(?={SP}?+(?:{units})))?"
        rf"{second}{SP}?+{unit_alone}{extension}"
        # word before, number [-/ number] [unit …]: "BP 120/80", "kwa siku 3", "vidonge 2"
        rf"|{context_last}(?<={context}\d)(?P<nt>{_TAIL}){plus}{second}"
        rf"(?:{SP}?+{unit}{extension})?"
        ")"
    )
    return rf"(?<!\p{{N}})\d(?:{glued}|{plain})"


@dataclass(frozen=True, slots=True)
class _Matcher:
    """Compiled patterns and word roles of one set of languages."""

    vocab: FactVocabulary
    pattern: Pattern
    context_before: Pattern
    roles: Mapping[str, frozenset[str]]
    label_units: frozenset[str]
    lead: Pattern
    after_marker: Pattern


@cache
def _matcher(langs: tuple[str, ...]) -> _Matcher:
    vocab = fact_vocabulary(langs)
    return _Matcher(
        vocab=vocab,
        pattern=compile_pattern(_build_pattern(vocab)),
        context_before=compile_pattern(f"(?<={_context_pattern(vocab)})"),
        roles=_context_roles(vocab),
        label_units=frozenset(normalise_word(u) for u in vocab.label_unit_words),
        lead=compile_pattern(f"(?<={duration_lead_pattern(vocab)})"),
        after_marker=compile_pattern(rf"{SP}*(?:{word_alternation(vocab.duration_after)})"),
    )


# --------------------------------------------------------------------------------------------
# Validation


def parse_number(text: str) -> float | None:
    """Value of a written number: ``12.5``, ``12,5``, ``1,250,000``, ``1.250.000``; else None."""
    digits = text.replace("٫", ".")
    if digits.isdigit():
        return float(int(digits))
    seps = digits.count(".") + digits.count(",")
    if seps == 1:
        comma = "," in digits
        head, _, tail = digits.replace(",", ".").partition(".")
        if comma and len(tail) == 3 and head != "0":
            return float(int(head + tail))  # 1,250 (thousands)
        scale: int = 10 ** len(tail)
        return float(int(head)) + float(int(tail)) / scale
    sep = "." if "." in digits else ","
    groups = digits.split(sep)
    if seps == len(groups) - 1 and len(groups[0]) <= 3 and all(len(g) == 3 for g in groups[1:]):
        return float(int("".join(groups)))
    return None


def plain_value(text: str) -> float | None:
    """Value of a label's number, or None when it looks like an identifier fragment."""
    if len(text) > 1 and text[0] == "0" and text[1].isdigit():
        return None  # leading zero: a phone or record number, not a reading
    if sum(c.isdigit() for c in text) > 7:
        return None
    return parse_number(text)


def _continues_with_digits(text: str, end: int) -> bool:
    """Whether another digit group follows (a split phone or ID number): " 123", "-123"."""
    i, n = end, len(text)
    if i < n and text[i] in " \t\u00a0":
        i += 1
    if i < n and text[i] in "-–":
        i += 1
        if i < n and text[i] in " \t":
            i += 1
    return i < n and text[i].isdigit()


def _with_comparator(text: str, start: int) -> int:
    """Start moved left over a comparator right before the number ("<40", "< 40")."""
    i = start - 1
    if i >= 0 and text[i] in " \t":
        i -= 1
    return i if i >= 0 and text[i] in _COMPARATORS else start


def _label_kind(
    senses: Sequence[LabelSense], value: float, denominator: float | None
) -> Fact | None:
    """The fact a label makes of its value, or None when no sense accepts the value."""
    for sense in senses:
        if sense.vital is not None and sense.vital.accepts(value, denominator):
            return Fact.VITAL
    if denominator is not None:
        return None
    kinds = {s.kind for s in senses}
    if Fact.LAB_VALUE in kinds:
        return Fact.LAB_VALUE
    if Fact.QUANTITY in kinds and value == int(value) and value <= 30:
        return Fact.QUANTITY
    return None


@dataclass(frozen=True, slots=True)
class _Found:
    start: int
    end: int
    kind: Fact


def _has(m: Match, group: str) -> bool:
    return m.start(group) != -1


def _judge(m: Match, text: str, mt: _Matcher) -> _Found | None:
    """Turn one candidate into a fact, or reject it."""
    if _has(m, "nt"):
        return _judge_number(m, text, mt)
    end = m.end()
    if _has(m, "b_scheme"):
        return _Found(m.start(), end, Fact.DOSE) if text[m.start()] in "01234" else None
    if _has(m, "b_x"):  # x7/7, x5 days; or a count: vomiting x3
        if _has(m, "xf") or _has(m, "xu"):
            return _Found(m.start("x"), end, Fact.DURATION)
        return (
            None if _continues_with_digits(text, end) else _Found(m.start("x"), end, Fact.QUANTITY)
        )
    if _has(m, "b_gp"):
        return _Found(m.start("gp"), end, Fact.QUANTITY)
    if _has(m, "b_q"):
        return _Found(m.start("q"), end, Fact.DOSE)
    if _has(m, "b_evm"):
        return _Found(m.start("evm"), end, Fact.VITAL)
    return None


def _judge_number(m: Match, text: str, mt: _Matcher) -> _Found | None:
    """A number with a word before it, a unit after it, or both."""
    unit = normalise_word(m.group("u")) if _has(m, "u") else None
    if _has(m, "ctx"):
        ctx_match: Match | None = m
    else:  # the pattern found the unit; look for a word before the number only now
        ctx_match = mt.context_before.match(text, m.start())
    ctx = normalise_word(ctx_match.group("ctx")) if ctx_match else None
    ctx_start = ctx_match.start("ctx") if ctx_match else -1
    roles = mt.roles.get(ctx, frozenset()) if ctx else frozenset()
    if ctx_match is not None and unit is None and _code_like(m, text, ctx_match):
        return None
    label = _label_of(ctx_match, roles)
    if label is not None and (unit is None or unit in mt.vocab.units):
        found = _judge_label(m, text, mt, label)
        if found is not None or unit is None:
            return found
    if unit in mt.label_units:
        return None  # "2ºC" without a label: a floor and a door, not a temperature
    if unit is not None and unit in mt.vocab.units:
        return _judge_unit(m, text, mt, unit, ctx_start if "before" in roles else -1)
    if unit is not None or roles & {"marker", "time_before"}:
        found = _judge_duration(m, ctx_start, text, mt, roles)
        if found is not None or unit is not None:
            return found
    before = mt.vocab.before.get(ctx or "")
    if before is Fact.QUANTITY and not _continues_with_digits(text, m.end()):
        return _Found(ctx_start, m.end(), before)
    return None


def _code_like(m: Match, text: str, ctx_match: Match) -> bool:
    """``PT-656015``, ``ALT-24023``: a label glued by a hyphen to five or more digits and no unit
    is a code (a record number), not a lab value (``K-4.5``, ``Na-135`` stay facts)."""
    gap = text[ctx_match.end("ctx") : m.start()]
    integer = text[m.start() : m.end("nt")].replace(",", ".").split(".")[0]
    return gap in ("-", "–") and sum(c.isdigit() for c in integer) >= 5


def _judge_unit(m: Match, text: str, mt: _Matcher, unit: str, before: int) -> _Found | None:
    """A number and a fact unit; ``before`` is where a count word before it starts, or -1."""
    if plain_value(text[m.start() : m.end("nt")]) is None:
        return None  # 12.03.1980 or 0772-…: a date or a phone, whatever follows it
    if _has(m, "n2") and plain_value(m.group("n2")) is None:
        return None
    if unit in mt.vocab.before and _continues_with_digits(text, m.end()):
        return None  # "63 empeke 2": the count word belongs to the number after it
    if text[m.end() : m.end() + 1] in ("-", "/") and text[m.end() + 1 : m.end() + 2].isdigit():
        return None  # "1g-89": part of an address or a code
    start = before if before >= 0 else _with_comparator(text, m.start())
    return _Found(start, m.end(), mt.vocab.units[unit])


def _label_of(ctx_match: Match | None, roles: frozenset[str]) -> tuple[str, int] | None:
    """The label before the number and where it starts ("BP" in "BP was 120/80")."""
    if ctx_match is None or "label" not in roles:
        return None
    return ctx_match.group("ctx"), ctx_match.start("ctx")


def _judge_label(m: Match, text: str, mt: _Matcher, label: tuple[str, int]) -> _Found | None:
    unit = m.group("u")
    number = text[m.start() : m.end("nt")]
    value = parse_number(number) if unit else plain_value(number)
    denominator = None
    if _has(m, "rsep"):
        if m.group("rsep") != "/":
            return None  # a range after a label: "Hb 10-12" is left to the reader
        denominator = parse_number(m.group("n2"))
        if denominator is None:
            return None
    if value is None or _has(m, "mult"):
        return None
    if unit is None and _continues_with_digits(text, m.end()):
        return None
    senses = mt.vocab.labels.get(normalise_word(label[0]), ())
    kind = _label_kind(senses, value, denominator)
    unit_kind = mt.vocab.units.get(normalise_word(unit)) if unit else None
    if unit_kind is Fact.DOSE and kind is not Fact.VITAL:
        return None  # "Magnesium 4 g": a drug and its dose, not a lab value
    kind = kind or unit_kind
    return None if kind is None else _Found(label[1], m.end(), kind)


def _judge_duration(
    m: Match, ctx_start: int, text: str, mt: _Matcher, roles: frozenset[str]
) -> _Found | None:
    """Marker + number + time unit, marker + time unit + number, or number + unit + marker."""
    has_unit = _has(m, "u")
    fraction = m.group("rsep") == "/" and m.group("n2") in ("7", "52", "12")
    if "time_before" in roles:
        if has_unit or _has(m, "rsep"):
            return None
        anchor = ctx_start
    elif has_unit or fraction:
        if _has(m, "rsep") and not fraction and m.group("rsep") == "/":
            return None
        anchor = m.start()
    else:
        return None
    lead = mt.lead.match(text, anchor)
    after = mt.after_marker.match(text, m.end()) if has_unit else None
    if lead is None and after is None:
        return None
    start = m.start() if lead is None else lead.start("dm")
    return _Found(start, m.end() if after is None else after.end(), Fact.DURATION)


def _find_facts(segment: Segment, langs: tuple[str, ...], rule_id: str) -> Iterator[_Found]:
    """Facts in the segment for the canonical languages ``langs``, left to right, disjoint."""
    mt, text = _matcher(langs), segment.text
    last_end = 0
    for m in guarded_finditer(mt.pattern, segment, rule_id):
        found = _judge(m, text, mt)
        if found is None:
            continue
        start = found.start
        if start < last_end:  # a word shared with the previous fact stays with it
            start = last_end
            while start < found.end and text[start].isspace():
                start += 1
        if start < found.end:
            last_end = found.end
            yield _Found(start, found.end, found.kind)


class ClinicalFactRule(RuleDetector):
    """Finds doses, lab values, vitals, durations and quantities to protect from redaction."""

    id = "facts.clinical.v1"
    labels = RULE_KINDS

    def __init__(self) -> None:
        self.languages = frozenset(languages())

    def find(self, segment: Segment) -> Iterable[Span]:
        langs = tuple(segment_languages(segment))
        return [
            Span(f.start, f.end, f.kind, _KIND_SOURCES[f.kind])
            for f in _find_facts(segment, langs, self.id)
        ]
