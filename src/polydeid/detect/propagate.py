"""A name found once in a segment is the name wherever else the segment writes it.

A model reads each mention of a name from its context, and a mention in a weaker context
("Koyoo wacho ni …", "Marin est pâle", "Echo ya MATOVU") can be missed where another in a
stronger one ("Jaod bura ma Muhoroni James Onyango Koyoo owacho") was found. After resolution,
every word of a resolved name span (``PERSON``, ``PERSON_THIRD_PARTY``) is therefore looked
for in the rest of the segment, and each whole-word occurrence that no span covers becomes a
name span of the same label (source :data:`SOURCE`), joined to a name span it stands next to
("James Onyango" + "Koyoo"). Fail closed: the cost is the occasional word a model wrongly
took for a name being redacted again.

Only words that look like names on their own are carried: three letters or more, starting
with a capital (in scripts without case a word cannot be told from a name this way: see below
for those), not a title of the segment's language or English ("Dr", "Mrs"), and not written in
lower case anywhere in the segment ("Césarienne" at a sentence's start, "césarienne" later: a
word, not a name). Matching is case-sensitive and on whole words; protected clinical facts
("enfermedad de Parkinson") and every other span are never touched.

A name of two words or more whose words case cannot tell from ordinary words — written all in
lower case ("muhire mukasonga", "g. otiende", as typed notes and chat write names) or in a
script without case ("ተስፋ ፍሬው") — is carried **whole**: each occurrence of the full name, in
any case and on whole words, becomes one name span where no span covers it, and where name
spans cover only part of it ("florence" found alone where "florence murekatete" is written)
it replaces them, in the role they were read in; where another span or a protected fact
covers part of it, each run of its uncovered words becomes a name span.
A name with a capitalised word is left to the word rule: its lower-case words are more often a
model's overreach ("Trần Bích Thụy ký", "signed") than part of the name. A phrase of several
words is far less often an ordinary phrase than one word is a word, but the model must have
been sure of it: only a name span scoring at least :data:`PHRASE_SCORE` is carried this way,
and not when any of its words is a title ("Dr", "Musawo").

In a script without case, each word of such a name, all of whose words are in such a script
(:data:`MIN_CASELESS_LETTERS` letters or more: Ethiopic writes a syllable a letter, "ሊያ"), is
carried on its own too, as a capitalised word is: a record writes its patient's given name
alone again and again ("ታካሚ: ሊያ።", "ሊያ ያልተከፈለ ሂሳብ አለባቸው" after "ሊያ ፀጋዬ"), where no
capital marks it and the model reads the bare word as an ordinary one. On the 60-a-language
synthetic sample (ad hoc) Amharic patient-name recall as text rose from 0.920 to 0.982,
Arabic from 0.974 to 0.987 and Hindi from 0.986 to 0.993, with no span more that no gold span
touches. The cost, fail closed: a name word that is also a common word ("ሰላም", peace and a
greeting) is redacted wherever the segment writes it. Lower-case Latin words are not carried
on their own: there a word of a name is far more often an ordinary word ("grace", "hope").

A name of one such word ("ትርሐስ", "odera") is carried the same way only when the model read it
as a whole name span, scoring at least :data:`PHRASE_SCORE`, at least :data:`MIN_READINGS`
times in the segment: one reading of one word may be a clinical word taken for a name (an
Amharic note's "አስም", asthma, read once as a name at 0.67), while a patient's given name is
written, and read, again and again ("የፈረቃ ርክክብ: ትርሐስ፣ …", a shift handover, missed where the
same note's other mentions were found).

A script that writes no spaces between words (Chinese, Japanese, Thai …) has no whole words to
match: a name's neighbours are letters too ("产妇区海玲", the mother Ou Hailing). There a name
the model read whole with a score of at least :data:`PHRASE_SCORE` ("母亲姓名：区海玲", mother's
name) replaces, in the role read there, the name spans that cover only part of another
occurrence of it ("海玲", the given name alone, in "产妇区海玲"); an occurrence where the model
read no name gets nothing, since the same letters may belong to other words. On four
60-a-language synthetic samples (seeds 29, 31, 37, 41; ad hoc) seven Chinese name spans were
completed this way (two surnames, 区 and 公羊), and no other span changed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import regex

from polydeid.core.resolve import DEFAULT_POLICY, ResolvePolicy, resolve
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category
from polydeid.detect.roles import NAME_ROLES, NAME_WORD
from polydeid.locales import folded_titles
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

    for s in (*spans, *facts):
        cover(s.start, s.end)

    replaced: set[Span] = set()

    def widen(start: int, end: int) -> bool:
        """Where name spans, and nothing else, cover part of ``start:end`` (a name read in
        part: "josee" of "josee batamuliza"), the whole name replaces them, in the role read
        there; whether ``start:end`` is now settled (also when it was found whole already)."""
        inside = [s for s in (*spans, *facts) if s.start < end and start < s.end]
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

    for phrase, label in phrases.values():
        for match in _phrase_pattern(phrase).finditer(text):
            start, end = match.span()
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
    if carried:
        words = list(NAME_WORD.finditer(text))
        lower = {w.group() for w in words if w.group().islower()}
        for word in words:
            label = carried.get(word.group())
            if label is not None and word.group().lower() not in lower:
                add(*word.span(), label)
    if not added:
        return tuple(spans)
    kept = [s for s in spans if s not in replaced]
    # The facts are passed again only to keep protecting them; resolve returns no fact.
    return resolve([*kept, *added.values(), *facts], text, policy)


def _phrase_pattern(phrase: str) -> regex.Pattern[str]:
    """``phrase`` in any case, its spaces matching any run of spaces or tabs."""
    parts = [regex.escape(p) for p in phrase.split()]
    return regex.compile(r"[ \t]+".join(parts), regex.IGNORECASE | regex.VERSION0)
