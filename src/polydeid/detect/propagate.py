"""A name found once in a segment is the name wherever else the segment writes it (the
``names.carry`` pass).

A model reads each mention of a name from its context and can miss one in a weak context
where it found another. After resolution, every uncovered whole-word occurrence of a word of a
resolved name span (``PERSON``, ``PERSON_THIRD_PARTY``) becomes a name span of the same label
(source :data:`SOURCE`), joined to a name span it stands next to. Fail closed: the cost is the
occasional word a model wrongly took for a name being redacted again. Protected facts and
other spans are never touched.

* **Words** carried alone: three letters or more, capitalised, not a title of the segment's
  language or English, and not written in lower case anywhere in the segment; in a script
  without case, each word of a confident name written wholly in such a script
  (:data:`MIN_CASELESS_LETTERS`).
* **Phrases** carried whole, in any case: a name of two words or more that case cannot tell
  from ordinary words (all lower case, or a script without case) scoring at least
  :data:`PHRASE_SCORE`, with no title among its words; a one-word such name read at least
  :data:`MIN_READINGS` times. Where name spans cover only part of an occurrence, the whole
  name replaces them in the role read there.
* **Scripts without spaces** (Chinese, Japanese, Thai): a name read whole with a score of at
  least :data:`PHRASE_SCORE` completes name spans that cover only part of another occurrence
  of it; an occurrence where no name was read gets nothing.

What each part adds on the development corpora: ``benchmarks/results/passes.md`` and the
model card.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from itertools import groupby

import regex

from polydeid.core.intervals import IntervalIndex
from polydeid.core.resolve import DEFAULT_POLICY, ResolvePolicy, resolve
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category
from polydeid.detect.roles import NAME_CHAR, NAME_ROLES, NAME_WORD
from polydeid.locales.names import folded_titles
from polydeid.text.scripts import UNSPACED

SOURCE = "propagate.name"
#: Shortest word carried.
MIN_LETTERS = 3
#: Fewest words of a name carried as a whole phrase, and the lowest score of its span.
MIN_PHRASE_WORDS = 2
PHRASE_SCORE = 0.9
#: Fewest confident readings of a one-word name, lower case or without case, to carry it.
MIN_READINGS = 2
#: Shortest word of a confident name in a script without case carried on its own.
MIN_CASELESS_LETTERS = 2
#: A name written wholly in a script without spaces between words (Chinese, Japanese, Thai …).
_UNSPACED_NAME = regex.compile(rf"(?:{UNSPACED.pattern}){{{MIN_CASELESS_LETTERS},}}")


def _carried(word: str, titles: frozenset[str]) -> bool:
    first = word[0]
    return (
        len(word) >= MIN_LETTERS
        and first.isupper()
        and word.casefold() not in titles
        and word.lower() != word
    )


def propagate_names(
    text: str,
    spans: Sequence[Span],
    facts: Sequence[Span] = (),
    lang: str | None = None,
    policy: ResolvePolicy = DEFAULT_POLICY,
) -> tuple[Span, ...]:
    """``spans`` (resolved) plus a name span at every uncovered occurrence of a word of one
    of their names (see the module docstring); ``facts`` are protected. Unchanged when there
    is none."""
    names = [s for s in spans if s.label in NAME_ROLES]
    if not names:
        return tuple(spans)
    titles = folded_titles(lang or "en", "en")
    carried: dict[str, Category] = {}
    phrases: dict[str, tuple[str, Category]] = {}  # casefolded name -> (as written, label)
    words_read: dict[str, tuple[str, Category]] = {}  # the same for one-word names
    readings: Counter[str] = Counter()  # how often each was read
    unspaced: set[str] = set()  # confident names written wholly in a script without spaces
    for span in names:
        written = text[span.start : span.end]
        if span.score >= PHRASE_SCORE and _UNSPACED_NAME.fullmatch(written):
            unspaced.add(written)
        words = [w.group() for w in NAME_WORD.finditer(text, span.start, span.end)]
        for word in words:
            if _carried(word, titles):
                carried.setdefault(word, span.label)  # type: ignore[arg-type]
        if not (
            span.score >= PHRASE_SCORE
            and words
            and all(w == w.lower() for w in words)  # lower case, or a script without case
            and not any(w.casefold() in titles for w in words)
        ):
            continue
        if len(words) >= MIN_PHRASE_WORDS:
            phrases.setdefault(written.casefold(), (written, span.label))  # type: ignore[arg-type]
            if all(w[0].lower() == w[0].upper() for w in words):  # a script without case
                for word in words:
                    if len(word) >= MIN_CASELESS_LETTERS:
                        carried.setdefault(word, span.label)  # type: ignore[arg-type]
        elif len(words[0]) >= MIN_LETTERS and written == words[0]:
            words_read.setdefault(written.casefold(), (written, span.label))  # type: ignore[arg-type]
            readings[written.casefold()] += 1
    for folded, first in words_read.items():
        if readings[folded] >= MIN_READINGS:
            phrases.setdefault(folded, first)
    if not carried and not phrases and not unspaced:
        return tuple(spans)
    n = len(text)
    covered = bytearray(n)
    added: dict[tuple[int, int], Span] = {}

    def cover(start: int, end: int) -> None:
        covered[start:end] = b"\x01" * (end - start)

    def in_token(start: int, end: int) -> bool:
        """Whether ``start:end`` is part of a longer token ("Okello2")."""
        return bool(start and text[start - 1].isalnum()) or (end < n and text[end].isalnum())

    def add(start: int, end: int, label: Category) -> None:
        if not in_token(start, end) and covered.find(1, start, end) == -1:
            added.setdefault((start, end), Span(start, end, label, SOURCE, 0.5))

    present = (*spans, *facts)
    for s in present:
        cover(s.start, s.end)
    index = IntervalIndex([(s.start, s.end) for s in present])

    replaced: set[Span] = set()

    def widen(start: int, end: int) -> bool:
        """Where name spans, and nothing else, cover part of ``start:end`` (a name read in
        part: "josee" of "josee batamuliza"), the whole name replaces them, in the role read
        there; whether ``start:end`` is now settled (also when it was found whole already)."""
        inside = [present[i] for i in index.overlapping(start, end)]
        # none inside: only names this step added cover part of it (another carried name)
        if not inside or not all(
            s.label in NAME_ROLES and start <= s.start and s.end <= end for s in inside
        ):
            return False
        if len(inside) == 1 and inside[0].length == end - start:
            return True
        replaced.update(inside)
        score = min(s.score for s in inside)
        added[(start, end)] = Span(start, end, inside[0].label, SOURCE, score)
        cover(start, end)
        return True

    runs = _Runs(text) if len(phrases) > _FEW_PHRASES and _case_stable(text) else None
    for phrase, label in phrases.values():
        for start, end in _occurrences(text, phrase, runs):
            if in_token(start, end):
                continue
            if covered.find(1, start, end) == -1:
                add(start, end, label)
                cover(start, end)
                continue
            if widen(start, end):
                continue
            run: list[tuple[int, int]] = []  # uncovered words in a row: one span
            for word in (*NAME_WORD.finditer(text, start, end), None):
                if word is not None and covered.find(1, *word.span()) == -1:
                    run.append(word.span())
                    continue
                if run:
                    add(run[0][0], run[-1][1], label)
                    run = []
    # Without spaces, a name's neighbours are letters too: an occurrence of a confident name is
    # only taken where the model read a name in part of it ("海玲" of "产妇区海玲", after
    # "母亲姓名：区海玲"), never added where it read none.
    for name in unspaced:
        start = text.find(name)
        while start != -1:
            if covered.find(1, start, start + len(name)) != -1:
                widen(start, start + len(name))
            start = text.find(name, start + 1)
    if len(carried) > _FEW_WORDS:
        words = list(NAME_WORD.finditer(text))
        lower = {w.group() for w in words if w.group().islower()}
        for word in words:
            label = carried.get(word.group())
            if label is not None and word.group().lower() not in lower:
                add(*word.span(), label)
    else:  # a few words: each looked for where it is written, not through every word
        for written, label in carried.items():
            small = written.lower()
            if small.islower() and next(_word_at(text, small), None) is not None:
                continue  # also written in small letters: a word, not a name
            for start, end in _word_at(text, written):
                add(start, end, label)
    if not added:
        return tuple(spans)
    kept = [s for s in spans if s not in replaced]
    # The facts are passed again only to keep protecting them; resolve returns no fact.
    return resolve([*kept, *added.values(), *facts], text, policy)


#: Up to this many phrases each is searched with its own pattern; with more, through the
#: text's runs of letters and digits (:class:`_Runs`), so that a segment of n names is read
#: in O(n), not O(n²).
_FEW_PHRASES = 4
#: Characters whose case-insensitive matching (the ``regex`` module's) is ``str.casefold``
#: equality, one character for one, between characters that are all letters or digits or
#: all not: Latin, Greek and Cyrillic up to U+052F less the Turkish dotted and dotless i
#: (``I`` matches ``ı``) and the combining iota (it matches ``ι``), Latin Extended
#: Additional, fullwidth forms, punctuation and caseless scripts
#: (``tests/detect/test_propagate_linear.py`` checks it character by character).
_CASE_STABLE = regex.compile(
    r"[\x00-\u012f\u0132-\u0344\u0346-\u052f\u1e00-\u1eff\u2000-\u206f\u3000-\u303f"
    r"\uff00-\uffef"
    r"\p{Han}\p{Hiragana}\p{Katakana}\p{Thai}\p{Ethiopic}\p{Arabic}\p{Hebrew}"
    r"\p{Devanagari}\p{Hangul}]*",
    regex.VERSION0,
)


def _case_stable(text: str) -> bool:
    """Whether ``text`` holds only :data:`_CASE_STABLE` characters, none of which folds to
    more than one."""
    return _CASE_STABLE.fullmatch(text) is not None and len(text.casefold()) == len(text)


class _Runs:
    """The maximal runs of letters and digits (``str.isalnum``) of a text, and, for a number
    of words k, where k consecutive runs with only spaces or tabs between them begin, by their
    casefolded text."""

    def __init__(self, text: str) -> None:
        self.folds: list[str] = []
        self.starts: list[int] = []
        self.ends: list[int] = []
        #: whether only spaces or tabs lie between run i and run i + 1
        self.joined: list[bool] = []
        self._at: dict[int, dict[tuple[str, ...], list[int]]] = {}
        pos = 0
        for alnum, group in groupby(text, str.isalnum):
            end = pos + sum(1 for _ in group)
            if alnum:
                self.folds.append(text[pos:end].casefold())
                self.starts.append(pos)
                self.ends.append(end)
            elif self.starts:
                self.joined.append(self.ends[-1] == pos and not text[pos:end].strip(" \t"))
            pos = end
        self.joined.append(False)

    def occurrences(self, parts: list[str]) -> list[tuple[int, int]]:
        """Where consecutive runs read ``parts`` (casefolded), only spaces or tabs between."""
        k = len(parts)
        at = self._at.get(k)
        if at is None:
            at = self._at[k] = {}
            folds, joined, chain = self.folds, self.joined, 0
            for i in range(len(folds)):  # chain: runs joined to run i from before
                if i + 1 >= k and chain + 1 >= k:
                    at.setdefault(tuple(folds[i + 1 - k : i + 1]), []).append(i + 1 - k)
                chain = chain + 1 if joined[i] else 0
        return [(self.starts[i], self.ends[i + k - 1]) for i in at.get(tuple(parts), ())]


#: Up to this many one-word names are each looked for with ``str.find`` (:func:`_word_at`);
#: with more, the text is read word by word once, so that a segment of n names is read in
#: O(n), not O(n²).
_FEW_WORDS = 16
#: A letter: the only character a name word opens with.
_LETTER = regex.compile(r"\p{L}")


def _word_at(text: str, word: str) -> Iterator[tuple[int, int]]:
    """Where the words of ``text`` (:data:`~polydeid.detect.roles.NAME_WORD`, read from its
    start) are ``word``, one itself (a letter, then name characters); in order."""
    n, size = len(word), len(text)
    at = text.find(word)
    while at != -1:
        end = at + n
        if (end == size or NAME_CHAR.match(text, end) is None) and _opens_word(text, at):
            yield at, end
        at = text.find(word, at + 1)


def _opens_word(text: str, at: int) -> bool:
    """Whether a word of ``text`` starts at ``at`` (a letter): no letter stands in the run of
    name characters right before it (a word read from there would run on through ``at``)."""
    k = at - 1
    while k >= 0 and NAME_CHAR.match(text, k) is not None:
        if _LETTER.match(text, k) is not None:
            return False
        k -= 1
    return True


def _occurrences(text: str, phrase: str, runs: _Runs | None) -> Iterator[tuple[int, int]]:
    """The matches of :func:`_phrase_pattern` of ``phrase`` in ``text``, in order; through
    ``runs`` (only those no letter or digit touches, the only ones the caller keeps) where the
    phrase's words are letters and digits and two of its matches can never overlap (no word
    of it but the last begins with its last word: "ana ana", "maria ana mar" can)."""
    words = phrase.split()
    parts = [w.casefold() for w in words]
    if (
        runs is not None
        and all(w.isalnum() for w in words)
        and not any(p.startswith(parts[-1]) for p in parts[:-1])
    ):
        yield from runs.occurrences(parts)
        return
    for match in _phrase_pattern(phrase).finditer(text):
        yield match.span()


def _phrase_pattern(phrase: str) -> regex.Pattern[str]:
    """``phrase`` in any case, its spaces matching any run of spaces or tabs."""
    parts = [regex.escape(p) for p in phrase.split()]
    return regex.compile(r"[ \t]+".join(parts), regex.IGNORECASE | regex.VERSION0)
