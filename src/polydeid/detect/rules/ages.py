"""Ages: a number with its unit word, in either word order, told apart from durations.

What the span covers: the number and its unit word — ``46 years``, ``46 emyaka``, ``emyaka 46``,
``46-year-old`` and ``46-jährige`` (the whole token), ``46 yo``, ``46岁``. Words that only announce
or qualify the age stay outside: ``aged [46]``, ``Age: [46]``, ``[46 years] old``,
``[46 años] de edad``. Ages written in words are found for the languages whose ``ages.toml`` has a
``[numbers]`` table (``forty-six years``, ``sechsundvierzig Jahre``, ``miaka arobaini na sita``).

How "N years" is told apart from a duration (each candidate gets a score; those under
``min_score``, 0.5 by default, are dropped):

=====================================================================  =====
evidence                                                               score
=====================================================================  =====
a form that only states an age (``46-year-old``, ``46 yo``, ``46 tuổi``,  1.00
``46岁``) or an age word after the unit (``old``, ``de edad``, ``alt``)
an age label right before (``aged``, ``Age:``, ``umri wa``, ``Edad:``)   0.95
an age-at-event word right before a year unit (``at``, ``a los``, ``mit``) 0.85
a person word shortly before, in the same clause (``woman``, ``mtoto``)  0.80
nothing: year unit / month unit / week or day unit                      0.60 / 0.40 / 0.30
=====================================================================  =====

A candidate is rejected outright — unless it has one of the first two kinds of evidence — when
a duration marker of ``facts.toml`` ("for", "since", "x", "kwa", "seit", "desde", "trong") or a
time word of ``ages.toml`` ("in", "after", "every") comes right before it, or a time word right
after it ("ago", "later", "history", "de evolución"). The duration markers are the ones
:class:`~polydeid.detect.rules.clinical_facts.ClinicalFactRule` uses, so text it protects as a
duration is never an age. Values above 120 years (or the same in months, weeks, days) are not ages.

Remaining ambiguity, by design: a bare "N years" with no evidence either way ("smoker 30 years",
"emyaka 3") is still emitted at 0.6, because a missed age is a leak and a redacted duration is not;
raise ``min_score`` to 0.65 to drop them. Bare months, weeks and days are not emitted by default
("6 months" is far more often a time span than an infant's age).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cache

import regex

from polydeid.core.errors import ConfigError
from polydeid.core.segments import Segment
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category
from polydeid.detect.rules._base import RuleDetector
from polydeid.detect.rules.clinical_facts import (
    SP,
    duration_lead_pattern,
    fact_vocabulary,
    normalise_word,
    parse_number,
    word_alternation,
)
from polydeid.locales import segment_languages
from polydeid.locales.ages import (
    AGE_UNITS,
    AgeWords,
    NumberWordTables,
    age_languages,
    age_words,
    read_numbers,
)
from polydeid.text.patterns import ContextLexicon, Match, Pattern, compile_pattern, guarded_finditer

SOURCE_UNIT = "rule.age.unit.v1"
SOURCE_LABEL = "rule.age.label.v1"
SOURCE_WORDS = "rule.age.words.v1"

#: Oldest plausible age, in years.
MAX_AGE_YEARS = 120.0

#: How many of each unit make a year.
UNITS_PER_YEAR: Mapping[str, float] = dict(zip(AGE_UNITS, (1.0, 12.0, 52.0, 365.0), strict=True))

SCORE_AGE_FORM = 1.0
SCORE_LABEL = 0.95
SCORE_AT_EVENT = 0.85
SCORE_NEARBY = 0.8
#: Score of a unit with no evidence either way.
SCORE_BARE: Mapping[str, float] = {"year": 0.6, "month": 0.4, "week": 0.3, "day": 0.3}

#: How far before the number person words are looked for.
NEARBY_CHARS = 32

_START = r"(?<=(?<![\p{N}\p{Latin}\p{Cyrillic}\p{Greek}_#№])(?<!\p{N}[.,٫/:\-–])\d)"
_TAIL = r"(?>\d*(?:[.,٫]\d+)?)"
_NO_MORE_DIGITS = r"(?!\d)(?![.,٫/:]\d)"
_SEP_UNIT = rf"(?:{SP}{{0,2}}|{SP}?[-–]{SP}?)"
_SEP_LABEL = rf"(?>{SP}*(?:[:：=\-–]{SP}*)?)"
#: Characters that end the clause in which person words are looked for.
_CLAUSE_ENDS = "\n;!?"


@dataclass(frozen=True, slots=True)
class UnitWord:
    """What a unit word means: its unit, and whether the form by itself states an age."""

    unit: str
    age_only: bool = False


@dataclass(frozen=True, slots=True)
class NumberWords:
    """Number words of one language and how they combine (``[numbers]`` of ``ages.toml``)."""

    lang: str
    tens_first: bool
    joiners: tuple[str, ...]
    words: Mapping[str, int]
    tens: Mapping[str, int]
    hundreds: Mapping[str, int]
    units: tuple[str, ...] = ()
    parser: Pattern | None = None

    def pattern(self, *, groups: bool = False, backward: bool = False) -> str:
        """Regex for a number written in words (groups ``h``, ``t``, ``w``, ``s`` when asked).

        Without word boundaries (compounds such as "sechsundvierzig"); ``backward`` builds the
        tries for use inside a look-behind.
        """

        def grp(name: str, table: Mapping[str, int]) -> str:
            body = word_alternation(table, backward=backward, bounded=False)
            return f"(?P<{name}>{body})" if groups else f"(?:{body})"

        joins = [j for j in self.joiners if j]
        join = "(?:" + "|".join(_joiner(j) for j in joins) + ")" if joins else ""
        if "" in self.joiners:
            join = f"{join}?" if join else ""
        hundreds = grp("h", self.hundreds)
        tens = grp("t", self.tens)
        words = grp("w", self.words)
        single = grp("s", self.words)
        compound = f"{tens}(?:{join}{words})?" if self.tens_first else f"(?:{words}{join})?{tens}"
        return (
            f"(?:{hundreds}{join})?(?:{compound}|{single})"
            if self.hundreds
            else f"(?:{compound}|{single})"
        )

    def value(self, text: str) -> int | None:
        """Value of ``text`` written in words, or None when it does not parse."""
        parser = self.parser or compile_pattern(self.pattern(groups=True))
        m = parser.fullmatch(text)
        if m is None:
            return None
        total = 0
        for name, table in (
            ("h", self.hundreds),
            ("t", self.tens),
            ("w", self.words),
            ("s", self.words),
        ):
            if table and m.group(name):
                total += table[normalise_word(m.group(name))]
        return total


def _joiner(joiner: str) -> str:
    parts = [regex.escape(p) for p in joiner.split(" ")]
    return f"{SP}+".join(parts) if joiner.strip() else f"{SP}+"


def _number_words(lang: str, raw: Mapping[str, object], where: str) -> NumberWords:
    """The number words of a ``[numbers]`` table as written (checked by
    :func:`polydeid.locales.ages.read_numbers`)."""
    return _numbers_of(lang, read_numbers(raw, where))


def _numbers_of(lang: str, tables: NumberWordTables) -> NumberWords:
    words = NumberWords(
        lang=lang,
        tens_first=tables.order == "tens_first",
        joiners=tables.joiners,
        words={normalise_word(k): v for k, v in tables.words.items()},
        tens={normalise_word(k): v for k, v in tables.tens.items()},
        hundreds={normalise_word(k): v for k, v in tables.hundreds.items()},
        units=tables.units,
    )
    return replace(words, parser=compile_pattern(words.pattern(groups=True)))


@dataclass(frozen=True, slots=True)
class AgeVocabulary:
    """Merged ``ages.toml`` tables of a set of languages."""

    after_words: tuple[str, ...]
    before_words: tuple[str, ...]
    units: Mapping[str, UnitWord]
    units_before: Mapping[str, UnitWord]
    labels: tuple[str, ...]
    at_event: tuple[str, ...]
    after: tuple[str, ...]
    nearby: tuple[str, ...]
    not_before: tuple[str, ...]
    not_after: tuple[str, ...]
    numbers: tuple[NumberWords, ...] = field(default=())
    #: labels of another thing's age ("gestational age"): what follows is not the person's age
    not_labels: tuple[str, ...] = field(default=())


@cache
def age_vocabulary(langs: tuple[str, ...]) -> AgeVocabulary:
    """Merged age vocabulary of ``langs`` (canonical codes); raises on malformed data."""
    units: dict[str, UnitWord] = {}
    units_before: dict[str, UnitWord] = {}
    after_words: list[str] = []
    before_words: list[str] = []
    datas = [age_words(lang) for lang in langs]
    for data in datas:
        for unit, table in data.units.items():
            for words, age_only, before in (
                (table.after, False, False),
                (table.age_only, True, False),
                (table.before, False, True),
            ):
                for word in words:
                    units.setdefault(normalise_word(word), UnitWord(unit, age_only))
                    if before:
                        units_before.setdefault(normalise_word(word), UnitWord(unit))
                    (before_words if before else after_words).append(word)

    def merged(pick: Callable[[AgeWords], tuple[str, ...]]) -> tuple[str, ...]:
        return tuple(w for data in datas for w in pick(data))

    return AgeVocabulary(
        after_words=tuple(after_words),
        before_words=tuple(before_words),
        units=units,
        units_before=units_before,
        labels=merged(lambda d: d.labels),
        at_event=merged(lambda d: d.at_event),
        after=merged(lambda d: d.after),
        nearby=merged(lambda d: d.nearby),
        not_before=merged(lambda d: d.not_before),
        not_after=merged(lambda d: d.not_after),
        numbers=tuple(
            _numbers_of(lang, data.numbers)
            for lang, data in zip(langs, datas, strict=True)
            if data.numbers is not None
        ),
        not_labels=merged(lambda d: d.not_labels),
    )


# --------------------------------------------------------------------------------------------
# Patterns


@dataclass(frozen=True, slots=True)
class _AgePatterns:
    """Compiled patterns of one set of languages."""

    digits: Pattern
    label_before: Pattern
    not_label_before: Pattern | None
    at_event_before: Pattern
    time_before: Pattern
    age_after: Pattern
    time_after: Pattern
    words_before: Pattern | None
    words_after: Pattern | None
    unit_at: Pattern
    unit_before_at: Pattern
    unit_before: Pattern | None
    nearby: ContextLexicon
    stems: tuple[str, ...]


def _lookbehind(body: str) -> Pattern:
    return compile_pattern(f"(?<={body})")


@cache
def _patterns(langs: tuple[str, ...]) -> _AgePatterns:
    vocab = age_vocabulary(langs)
    after_units = word_alternation(vocab.after_words)
    labels = word_alternation(vocab.labels, backward=True)
    context = word_alternation((*vocab.before_words, *vocab.labels), backward=True)
    digits = (
        rf"\d{_START}(?:"
        # number, unit: "46 years", "46-year-old", "46岁"
        rf"(?P<nt>{_TAIL}){_SEP_UNIT}(?P<u>{after_units})"
        # unit or age label, number: "emyaka 46", "Age: 46"
        rf"|(?<=(?P<ctx>{context}){_SEP_LABEL}\d)(?P<nt>{_TAIL}){_NO_MORE_DIGITS}"
        ")"
    )
    facts = fact_vocabulary(langs)
    # Count and frequency words of facts.toml ("mara 3 kwa siku") also make a number no age.
    not_before = word_alternation((*vocab.not_before, *facts.before_words), backward=True)
    lead = duration_lead_pattern(facts)
    words_before, words_after = _number_word_patterns(vocab)
    return _AgePatterns(
        digits=compile_pattern(digits),
        label_before=_lookbehind(f"{labels}{_SEP_LABEL}"),
        not_label_before=(
            _lookbehind(f"{word_alternation(vocab.not_labels, backward=True)}{_SEP_LABEL}")
            if vocab.not_labels
            else None
        ),
        at_event_before=_lookbehind(f"{word_alternation(vocab.at_event, backward=True)}{SP}*"),
        time_before=_lookbehind(f"(?:{lead}|(?:{not_before}){SP}*)"),
        age_after=compile_pattern(rf"{SP}*[-–]?{SP}*(?:{word_alternation(vocab.after)})"),
        time_after=compile_pattern(rf"{SP}*[-–]?{SP}*(?:{word_alternation(vocab.not_after)})"),
        words_before=words_before,
        words_after=words_after,
        unit_at=compile_pattern(
            rf"(?P<after>{after_units})"
            rf"|(?<![\p{{L}}\p{{N}}\p{{M}}])(?P<before>{word_alternation(vocab.before_words)})"
        ),
        unit_before=(
            _lookbehind(
                rf"(?P<ub>{word_alternation(vocab.before_words, backward=True)}){_SEP_LABEL}"
            )
            if vocab.before_words
            else None
        ),
        unit_before_at=compile_pattern(
            rf"(?<![\p{{L}}\p{{N}}\p{{M}}]){word_alternation(vocab.before_words)}"
        ),
        nearby=ContextLexicon(vocab.nearby),
        stems=_stems(vocab),
    )


def _number_word_patterns(vocab: AgeVocabulary) -> tuple[Pattern | None, Pattern | None]:
    """Number words right before a position (look-behind), and right after one (unit first)."""
    if not vocab.numbers:
        return None, None
    backward = "(?:" + "|".join(g.pattern(backward=True) for g in vocab.numbers) + ")"
    forward = "(?:" + "|".join(g.pattern() for g in vocab.numbers) + ")"
    # Number words must not continue a word — except in scripts written without spaces
    # (Han): "患者年龄四十五岁" has the age right after the letter of "年龄".
    before = _lookbehind(
        rf"(?<!(?!\p{{Han}})[\p{{L}}\p{{N}}\p{{M}}\-])(?P<nw>{backward}){_SEP_UNIT}"
    )
    after = (
        compile_pattern(rf"{_SEP_LABEL}(?P<nw>{forward})(?![\p{{L}}\p{{N}}\p{{M}}])")
        if vocab.before_words
        else None
    )
    return before, after


def _stems(vocab: AgeVocabulary) -> tuple[str, ...]:
    """Lower-cased unit words next to which ages written in words are looked for."""
    words = {w.lower() for g in vocab.numbers for w in g.units}
    return tuple(sorted(w for w in words if not any(o != w and o in w for o in words)))


# --------------------------------------------------------------------------------------------
# The rule


@dataclass(frozen=True, slots=True)
class _Candidate:
    start: int
    end: int
    value: float
    unit: UnitWord | None
    label: bool
    source: str


class AgeRule(RuleDetector):
    """Finds ages with their unit word, in either word order, and not durations."""

    id = "rules.ages.v1"
    labels = frozenset({Category.AGE})

    def __init__(self, *, min_score: float = 0.5) -> None:
        if not 0.0 <= min_score <= 1.0:
            raise ConfigError(f"min_score {min_score} outside [0, 1]")
        self.min_score = min_score
        self.languages = age_languages()

    def find(self, segment: Segment) -> Iterable[Span]:
        langs = tuple(segment_languages(segment))
        pats = _patterns(langs)
        vocab = age_vocabulary(langs)
        text = segment.text
        spans: list[Span] = []
        for cand in self._candidates(segment, pats, vocab):
            score = _score(cand, text, pats)
            if score is not None and score >= self.min_score:
                spans.append(Span(cand.start, cand.end, Category.AGE, cand.source, score))
        spans.sort(key=lambda s: (s.start, -s.end))
        return _without_overlaps(spans)

    def _candidates(
        self, segment: Segment, pats: _AgePatterns, vocab: AgeVocabulary
    ) -> Iterator[_Candidate]:
        for m in guarded_finditer(pats.digits, segment, self.id):
            cand = _digit_candidate(m, segment.text, vocab, pats)
            if cand is not None:
                yield cand
        if pats.stems:
            yield from _word_candidates(segment, pats, vocab, self.id)


def _without_overlaps(spans: Sequence[Span]) -> list[Span]:
    kept: list[Span] = []
    for span in spans:
        if not kept or span.start >= kept[-1].end:
            kept.append(span)
    return kept


def _digit_candidate(
    m: Match, text: str, vocab: AgeVocabulary, pats: _AgePatterns
) -> _Candidate | None:
    number = text[m.start() : m.end("nt")]
    if m.start("u") != -1:
        # "myaka 65 imyaka 3": a unit right before the number claims it first
        ub = pats.unit_before.match(text, m.start()) if pats.unit_before else None
        if ub is not None:
            unit = vocab.units_before[normalise_word(ub.group("ub"))]
            return _make(ub.start("ub"), m.end("nt"), number, unit, False, SOURCE_UNIT)
        unit = vocab.units[normalise_word(m.group("u"))]
        return _make(m.start(), m.end(), number, unit, False, SOURCE_UNIT)
    before = vocab.units_before.get(normalise_word(m.group("ctx")))
    if before is not None:  # a unit written before the number
        return _make(m.start("ctx"), m.end(), number, before, False, SOURCE_UNIT)
    return _make(m.start(), m.end(), number, None, True, SOURCE_LABEL)


def _make(
    start: int, end: int, number: str, unit: UnitWord | None, label: bool, source: str
) -> _Candidate | None:
    value = parse_number(number)
    if value is None:
        return None
    per_year = UNITS_PER_YEAR[unit.unit] if unit else 1.0
    if value / per_year > MAX_AGE_YEARS:
        return None
    return _Candidate(start, end, value, unit, label, source)


def _word_candidates(
    segment: Segment, pats: _AgePatterns, vocab: AgeVocabulary, rule_id: str
) -> Iterator[_Candidate]:
    """Ages written in words, found from the unit words next to them."""
    text = segment.text
    low = text.lower()
    if len(low) != len(text):  # a rare character changed length when lower-cased
        hits: Iterable[int] = (m.start() for m in guarded_finditer(pats.unit_at, segment, rule_id))
    else:
        after_only = pats.words_after is None  # number words can only come before the unit
        hits = sorted({i for stem in pats.stems for i in _find_all(low, stem, text, after_only)})
    for i in hits:
        span = _words_around(text, i, pats)
        if span is None:
            continue
        start, end, words, unit_word = span
        unit = vocab.units[normalise_word(unit_word)]
        value = _words_value(words, vocab)
        if value is not None and value / UNITS_PER_YEAR[unit.unit] <= MAX_AGE_YEARS:
            yield _Candidate(start, end, float(value), unit, False, SOURCE_WORDS)


def _words_around(text: str, i: int, pats: _AgePatterns) -> tuple[int, int, str, str] | None:
    """Number words before a unit word at ``i`` (or after it): span, number words, unit word."""
    letter_before = i >= 1 and (
        text[i - 1].isalpha() or (i >= 2 and text[i - 1] in " \t\u00a0-" and text[i - 2].isalpha())
    )
    if not letter_before and pats.words_after is None:
        return None  # "46 años": digits, not words, before the unit
    m = pats.unit_at.match(text, i)
    if m is None:
        return None
    if letter_before and m.group("after") and pats.words_before is not None:
        nw = pats.words_before.match(text, i)
        if nw is not None:
            return nw.start("nw"), m.end("after"), nw.group("nw"), m.group("after")
    if pats.words_after is not None:
        before = pats.unit_before_at.match(text, i)
        if before is not None:
            nw = pats.words_after.match(text, before.end())
            if nw is not None:
                return i, nw.end("nw"), nw.group("nw"), before.group()
    return None


def _find_all(low: str, needle: str, text: str, after_word: bool) -> Iterator[int]:
    """Where ``needle`` occurs in ``low`` (when ``after_word``, only right after a word)."""
    i = low.find(needle)
    while i != -1:
        if not after_word or (
            i
            and (
                text[i - 1].isalpha()
                or (i > 1 and text[i - 1] in " -\u00a0" and text[i - 2].isalpha())
            )
        ):
            yield i
        i = low.find(needle, i + 1)


def _words_value(words: str, vocab: AgeVocabulary) -> int | None:
    for grammar in vocab.numbers:
        value = grammar.value(words)
        if value is not None:
            return value
    return None


def _score(cand: _Candidate, text: str, pats: _AgePatterns) -> float | None:
    """Confidence that the candidate is an age; None when it is a point or span of time."""
    unit = cand.unit
    if unit is not None and (unit.age_only or pats.age_after.match(text, cand.end)):
        return SCORE_AGE_FORM
    if pats.not_label_before is not None and pats.not_label_before.match(text, cand.start):
        return None  # "gestational age 12 weeks": the fetus's, not the patient's
    if cand.label or pats.label_before.match(text, cand.start):
        return SCORE_LABEL
    if unit is None:
        return None
    if pats.time_before.match(text, cand.start) or pats.time_after.match(text, cand.end):
        return None
    if unit.unit == "year" and pats.at_event_before.match(text, cand.start):
        return SCORE_AT_EVENT
    if _person_nearby(cand.start, text, pats):
        return SCORE_NEARBY
    return SCORE_BARE[unit.unit]


def _person_nearby(start: int, text: str, pats: _AgePatterns) -> bool:
    """Whether a person word occurs shortly before ``start``, in the same clause."""
    window_start = max(0, start - NEARBY_CHARS)
    window_start = max(
        window_start, *(text.rfind(c, window_start, start) + 1 for c in _CLAUSE_ENDS)
    )
    return pats.nearby.search(text, window_start, start)
