"""A name's role from the field label written before it, in any detector's output.

Forms and headers say whose name follows: "Patient: Okello James", "Ф.И.О. пациента: Суворов
Анисим", "Umurwayi: Irakoze Kayitesi" name the patient; "Mother: Akello", "Лечащий врач:
Денисов" a third party. A model reading running text can still take a patient for a relative
(the synthetic Russian and Kinyarwanda forms showed it), so after resolution a name span —
patient or third party, from whichever detector — that follows such a label on its own line
takes the label's role, and every other span of the segment with the same text (casefolded)
takes it too, unless labels disagree about that text; a one-word name that is a word of exactly
one longer name of the segment ("Irakoze" of "Irakoze Uwambaje") is a mention of that person
and takes that name's role. An HL7 v2 message pasted into text (a note, a log, a ticket)
says whose name a field holds as the HL7 reader does: a name in PID-5 is the patient's, in
NK1-2 or PV1-7 a third party's (``lexicon/data/hl7v2.toml``,
:func:`polydeid.lexicon.hl7.pasted_field_category`), and a CSV or TSV table pasted into
text says it as the CSV reader does, by its column's header ("Amazina y'umurwayi", the
patient's names; "Umuntu wa hafi", the next of kin:
:func:`polydeid.lexicon.tables.pasted_column_categories`).

The labels are patient and clinician labels (``[name_roles]`` of ``lexicon/data/fields.toml``:
English phrases plus every language pack's ``field_labels.toml`` patient-name and clinician
labels, :func:`polydeid.lexicon.fields.name_role_for_words`); kinship labels ("Mother:") are
not, since in a birth record the mother is the patient. The label is the text between the
line's start (or a ``;``, ``|`` or tab) and the colon right before the name, and, as for a CSV
header, the longest listed phrase that ends it decides ("Seen today. Patient:" is a patient
label). A key's equals sign ends a label as a colon does, and the value may open with a quote,
so a log line, a program or a JSON text pasted as text says whose name follows too
("chat_message: patient_name=Triệu Trúc Hải", ``{"patient_name": "Okello"}``,
``WHERE patient_name = 'Okello'``), and so does an XML element's start tag right before the
name (``<patient_name>Jules Mugenzi</patient_name>``). Without a colon, a patient or
clinician noun separated from the name by spaces only gives the role the same way
(``[noun_roles]``, :func:`polydeid.lexicon.fields.noun_role_for_words`): "em trai của BN
Giang" (the younger brother of the patient Giang), "the patient Okello", "bác sĩ Học"; the
words read stop at the line's start or at punctuation, so "the patient's mother Anna" and
"patient, Anna" give nothing. Only the role changes: no span
is added or dropped by the roles, and only names (``PERSON``, ``PERSON_THIRD_PARTY``) are
relabelled, only to one of those two.

A name span inside the value of a name label (``[name_labels]``: "Patient name:", "Amazina
y'umurwayi:", "Mother's name:") also grows to the whole value (:func:`name_value`: one to five
words of letters between the colon and a break — the line's end, a comma, a full stop, a
bracket, the next label), so a model that read only part of a lower-case or unfamiliar name
("Amazina y'umurwayi: josee batamuliza" found as "josee") has it whole; other name spans
inside the value join it, and a value holding a span of another category is left as it is.
Role nouns ("Patient:", "Daktari:") do not grow a span: in a chat their value is a sentence
("Daktari: Mimi ni Lydia Biira, …", "I am Lydia Biira").
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterable, Sequence

import regex

from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category
from polydeid.lexicon.fields import (
    is_label,
    name_label_for_words,
    name_role_for_words,
    normalise_name,
    noun_role_for_words,
)
from polydeid.lexicon.hl7 import pasted_field_category
from polydeid.lexicon.tables import pasted_column_categories
from polydeid.locales.names import is_title, titles_in_names

#: The categories a label may give, and the only ones it may change.
NAME_ROLES = frozenset({Category.PERSON, Category.PERSON_THIRD_PARTY})
#: What ends a label: a colon, or the equals sign of a log's or a program's key and value
#: ("patient_name=Okello", ``name = "Okello"``).
LABEL_END = ":：="
#: Quotes that may open a label's value (``"patient_name": "Okello"``, ``name='Okello'``).
VALUE_QUOTES = "\"'“„«‘"
#: An XML or HTML start tag: its element name labels the value it opens
#: ("<patient_name>Jules Mugenzi</patient_name>" pasted as text).
START_TAG = r"<([^\W\d][\w.\-]*)(?:\s[^<>\n]{0,80})?>"
#: Words of the label read (its end decides; a longer label is a sentence, not a field).
_LABEL_WORDS = 8


#: Where the words read for a noun before a name begin: after a field or phrase break.
_NOUN_STOP = re.compile(r"[;|\t:：,.()\[\]{}\"“”«»!?¡¿]")


#: A word of a name: a letter, then letters (with their combining marks), apostrophes and
#: hyphens ("Nyong'o", "Jo-Asembo").
#: A character of a name word after its first letter.
NAME_CHAR = regex.compile(r"[\p{L}\p{M}'’\-]", regex.VERSION0)
_NAME_WORD = rf"\p{{L}}{NAME_CHAR.pattern}*"
NAME_WORD = regex.compile(_NAME_WORD, regex.VERSION0)
#: Characters that end a label's value: a field or phrase break.
_VALUE_BREAKS = frozenset('\n\r\t,;|()[]{}/<>"“”«»!?。，、；！？፣።،؛')
#: Most words of a name written as a label's value (a title before it not counted).
MAX_NAME_WORDS = 5
#: Most words of a next label read on the value's line ("Okello James Age: 45").
_NEXT_LABEL_WORDS = 4
#: The words between a label's colon and a name span: name words only.
_VALUE_HEAD = regex.compile(
    rf"(?:[{LABEL_END}][ \t]*[{VALUE_QUOTES}]?|>[ \t]*)"
    rf"((?:{_NAME_WORD}\.?[ ]+){{0,{MAX_NAME_WORDS - 1}}})$",
    regex.VERSION0,
)


def _line_start(text: str, lo: int, start: int) -> int:
    return max(lo, max(text.rfind("\n", lo, start), text.rfind("\r", lo, start)) + 1)


def _label(text: str, line_start: int, start: int) -> tuple[str, ...] | None:
    """The words (normalised, the last eight) of the label ending right before ``start`` on
    the line from ``line_start``; None where no label ends there (``()``: one without words)."""
    written = _label_text(text, line_start, start)
    return None if written is None else normalise_name(written)[-_LABEL_WORDS:]


#: Characters a label's text may not hold.
_NOT_IN_LABEL = frozenset(f"\n\r;|\t{LABEL_END}<>")
_START_TAG = re.compile(START_TAG)


def _label_text(text: str, line_start: int, start: int) -> str | None:
    """The text of the label that ends right before ``start`` in ``text[line_start:start]``:
    a label of at most 80 characters (no line or field break, colon, equals sign or angle
    bracket in it) and its colon or equals sign, then only spaces or tabs and one opening
    quote; or the element name of a start tag, then only spaces or tabs. Read backwards from
    ``start``, so the work is bounded by the label, not by the line."""
    end = start
    if end > line_start and text[end - 1] in VALUE_QUOTES:
        end -= 1  # an opening quote: only after the colon
    elif end > line_start:
        while end > line_start and text[end - 1] in " \t":
            end -= 1
        if end > line_start and text[end - 1] == ">":
            opening = text.rfind("<", line_start, end)
            tag = _START_TAG.fullmatch(text, opening, end) if opening >= 0 else None
            return tag.group(1) if tag is not None else None
    while end > line_start and text[end - 1] in " \t":
        end -= 1
    colon = end - 1
    if colon < line_start or text[colon] not in LABEL_END:
        return None
    first = colon
    while first > max(line_start, colon - 80) and text[first - 1] not in _NOT_IN_LABEL:
        first -= 1
    return text[first:colon] if first < colon else None


def name_value(text: str, start: int, lang: str | None = None) -> tuple[int, int] | None:
    """Where the name a label's value holds lies, read from ``start`` (right after the colon
    and its spaces): one to :data:`MAX_NAME_WORDS` words of letters, separated by spaces,
    ending at the end of the text, a break (:data:`_VALUE_BREAKS`), a full stop (followed by a
    space, a break or a closing quote: ``"din: Pentecostal."``), a single quote
    closing the one that opened the value (``'Okello James'``), or the next label on the line
    ("Okello James Age: 45"; the label is a known one, :func:`polydeid.lexicon.fields.
    is_label`). A full stop after an initial or a title goes on ("J. Okello", "Dr. Ana"), or
    ends the value there where what follows is no name. A title first ("Dr", ``names.toml``
    titles of ``lang``) is left out unless the language writes titles into names. None when
    the value is anything else (a digit, more words, a sentence)."""
    words: list[tuple[int, int]] = []
    fallback = 0  # words before the last abbreviation's full stop, if the rest is no name
    pos, n, initial_dot = start, len(text), False
    quoted = start > 0 and text[start - 1] in "'‘"  # name='Okello': its quote closes it
    while True:
        word = NAME_WORD.match(text, pos)
        if word is None or len(words) > MAX_NAME_WORDS + _NEXT_LABEL_WORDS:
            words = words[:fallback]
            break
        if quoted and word.end() - word.start() > 1 and text[word.end() - 1] in "'’":
            words.append((word.start(), word.end() - 1))
            break
        words.append(word.span())
        pos = gap = word.end()
        while gap < n and text[gap] == " ":
            gap += 1
        char = text[gap] if gap < n else ""
        if char == ".":
            after = gap + 1
            glued = gap == pos
            initial = glued and pos - word.start() == 1
            if (
                glued
                and after < n
                and text[after] == " "
                and (
                    initial or (lang is not None and is_title(text[word.start() : pos], lang, "en"))
                )
            ):
                fallback = len(words)
                pos = after
                while pos < n and text[pos] == " ":
                    pos += 1
                continue
            if after < n and not text[after].isspace() and text[after] not in _VALUE_BREAKS:
                words = words[:fallback]  # "Dr.Ana", "a.m": no end of a value
                break
            initial_dot = initial
            break
        if not char or char in _VALUE_BREAKS:
            break
        if char in ":：":
            words = _before_next_label(text, words, fallback)
            break
        if gap == pos:  # a digit or sign glued to the word
            words = words[:fallback]
            break
        pos = gap
    if words and lang is not None and is_title(text[words[0][0] : words[0][1]], lang, "en"):
        words = words if titles_in_names(lang) and len(words) > 1 else words[1:]
    if not words or len(words) > MAX_NAME_WORDS:
        return None
    first = text[words[0][0]]
    if len(words) == 1 and words[0][1] - words[0][0] == 1 and first.lower() != first.upper():
        return None  # one letter of an alphabet ("N/A") is no name; one Han character may be
    return words[0][0], words[-1][1] + initial_dot  # an initial keeps its full stop


def _before_next_label(
    text: str, words: list[tuple[int, int]], fallback: int
) -> list[tuple[int, int]]:
    """``words`` without the next label they end in (the longest known one), else the words
    before the last abbreviation's full stop."""
    for k in range(min(_NEXT_LABEL_WORDS, len(words) - 1), 0, -1):
        if is_label(normalise_name(text[words[-k][0] : words[-1][1]])):
            return words[:-k]
    return words[:fallback]


#: A chat turn's speaker and colon ("doctor: ").
_SPEAKER = r"[^\n\r:：]{1,40}[:：][ \t]*"
#: A chat turn asking for a field ("doctor: Patient name?"), the whole line.
_QUESTION = re.compile(rf"{_SPEAKER}([^\n\r?？:：]{{1,80}})[?？][ \t]*")
#: An answer's turn: a speaker and a colon, nothing else before the value.
_TURN = re.compile(_SPEAKER)


def name_label_before(text: str, start: int) -> Category | None:
    """The name category of the name label whose value starts at ``start`` (``[name_labels]``:
    "Patient name: …"), or None. In a chat that asks for a form's fields, the answer's turn
    holds the value and the question on the line before is its label ("doctor: Patient
    name?" / "patient: Okello James"; Amharic "ሐኪም: የታካሚ ስም?" / "ታካሚ: ፀጋ አላዛር")."""
    return label_before(text, start, name_label_for_words)


def label_before(
    text: str, start: int, lookup: Callable[[Sequence[str]], Category | None]
) -> Category | None:
    """The category ``lookup`` gives the words of the label whose value starts at ``start``
    (its colon or equals sign, an opening quote or a start tag right before), or None; read
    as :func:`name_label_before` reads a name label, a chat's question on the line before an
    answer's turn included ("doctor: Occupation?" / "patient: teacher")."""
    line = _line_start(text, max(0, start - 120), start)
    words = _label(text, line, start)
    if not words:
        return None
    category = lookup(words)
    if category is not None:
        return category
    if line == 0 or not _TURN.fullmatch(text, line, start):
        return None
    end = line - 1  # the previous line's end, before its line break ("\r\n" too)
    if end > 0 and text[end] == "\n" and text[end - 1] == "\r":
        end -= 1
    question = _QUESTION.fullmatch(text, _line_start(text, max(0, end - 160), end), end)
    if question is None:
        return None
    asked = normalise_name(question.group(1))
    return lookup(asked) if asked else None


def label_role(text: str, start: int, lines: _Lines | None = None) -> Category | None:
    """The role the label (or noun) ending right before ``start`` gives a name, or the field
    of an HL7 v2 segment pasted as text that holds it (PID-5, NK1-2: read from the line alone,
    unlike a pasted table's column, :class:`_PastedTables`), or None. ``lines``: the text's
    line breaks and bars, for many calls on one long line."""
    line_start = _line_start(text, max(0, start - 120), start)
    if "|" in text[line_start:start]:
        if lines is None:
            field = pasted_field_category(text, _line_start(text, 0, start), start)
        else:
            field = pasted_field_category(text, lines.line_start(start), start, bars=lines.bars)
        if field in NAME_ROLES:
            return field
    words = _label(text, line_start, start)
    if words is not None:
        return name_role_for_words(words) if words else None
    if start == 0 or not text[start - 1].isspace():
        return None
    before = text[line_start:start]
    cut = max((m.end() for m in _NOUN_STOP.finditer(before)), default=0)
    words = normalise_name(before[cut:])[-_LABEL_WORDS:]
    return noun_role_for_words(words) if words else None


def _value_extent(text: str, span: Span, lang: str | None) -> tuple[int, int] | None:
    """The whole value of the name label whose value holds ``span``, or None."""
    lo = _line_start(text, max(0, span.start - 120), span.start)
    head = _VALUE_HEAD.search(text, lo, span.start)
    if head is None:
        return None
    start = head.start(1)
    if name_label_before(text, start) is None:
        return None
    value = name_value(text, start, lang)
    if value is None or not (value[0] <= span.start and span.end <= value[1]):
        return None
    return value


def grow_to_values(text: str, spans: Sequence[Span], lang: str | None = None) -> list[Span]:
    """``spans`` (not overlapping) with each name span inside a name label's value grown to
    the whole value; other name spans inside it join it, and a value holding a span of
    another category is left alone (see the module docstring). Unchanged, in their order,
    where none grows; sorted by start where one does."""
    grown = {
        i: extent
        for i, span in enumerate(spans)
        if span.label in NAME_ROLES
        and (extent := _value_extent(text, span, lang)) is not None
        and extent != (span.start, span.end)
    }
    if not grown:
        return list(spans)
    order = sorted(range(len(spans)), key=lambda i: spans[i].start)
    out: list[Span] = []
    k = 0
    while k < len(order):
        span, extent = spans[order[k]], grown.get(order[k])
        j = k + 1
        if extent is not None:
            while j < len(order) and spans[order[j]].start < extent[1]:
                j += 1
            # ``out`` is sorted and its spans do not overlap: those reaching into the value
            # are its last ones
            reach = len(out)
            while reach and out[reach - 1].end > extent[0]:
                reach -= 1
            inside = [*out[reach:], *(spans[order[m]] for m in range(k + 1, j))]
            if any(
                s.label not in NAME_ROLES or s.start < extent[0] or s.end > extent[1]
                for s in inside
            ):
                extent, j = None, k + 1
        if extent is None:
            out.append(span)
        else:
            del out[reach:]
            out.append(Span(extent[0], extent[1], span.label, span.source, span.score))
        k = j
    return out


def apply_label_roles(
    text: str, spans: Sequence[Span], lang: str | None = None
) -> tuple[Span, ...]:
    """``spans`` with the roles their field labels give, name spans grown to their labels'
    whole values (:func:`grow_to_values`, then :func:`assign_label_roles`)."""
    return assign_label_roles(text, grow_to_values(text, spans, lang))


def assign_label_roles(text: str, spans: Sequence[Span]) -> tuple[Span, ...]:
    """``spans`` with the roles their field labels, pasted HL7 fields or pasted table columns
    give (see the module docstring); a name mentioned elsewhere takes the same role."""
    tables = _PastedTables(text)
    lines = _Lines(text)
    cued: dict[int, Category] = {}
    for i, span in enumerate(spans):
        if span.label not in NAME_ROLES:
            continue
        role = label_role(text, span.start, lines) or tables.role(span)
        if role is not None:
            cued[i] = role
    if not cued:
        return tuple(spans)
    by_text: dict[str, set[Category]] = {}
    for i, role in cued.items():
        by_text.setdefault(text[spans[i].start : spans[i].end].casefold(), set()).add(role)
    mention_of = longer_name_of(
        {text[s.start : s.end].casefold() for s in spans if s.label in NAME_ROLES}
    )
    out = []
    for i, span in enumerate(spans):
        role = cued.get(i)
        if role is None and span.label in NAME_ROLES:
            written = text[span.start : span.end].casefold()
            if written not in by_text and written in mention_of:
                written = mention_of[written]  # "Irakoze" of "Irakoze Uwambaje"
            roles = by_text.get(written, set())
            role = next(iter(roles)) if len(roles) == 1 else None
        if role is not None and role is not span.label:
            span = Span(span.start, span.end, role, span.source, span.score)
        out.append(span)
    return tuple(out)


class _Lines:
    """Where a text's lines begin and its bars (``|``) stand, found once, at the first
    question, so that the spans of one long line are read in O(log n) each."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._breaks: list[int] | None = None
        self._bars: list[int] | None = None

    def line_start(self, pos: int) -> int:
        """Where the line holding ``pos`` begins (after a ``\\n`` or ``\\r``)."""
        if self._breaks is None:
            self._breaks = [m.start() for m in re.finditer(r"[\r\n]", self.text)]
        k = bisect.bisect_left(self._breaks, pos)
        return self._breaks[k - 1] + 1 if k else 0

    @property
    def bars(self) -> list[int]:
        if self._bars is None:
            self._bars = [m.start() for m in re.finditer(r"\|", self.text)]
        return self._bars


class _PastedTables:
    """Whose name a table pasted into a segment's text says a span is, by its column's header
    (:func:`polydeid.lexicon.tables.pasted_column_categories`). The tables are read once, at the
    first span that needs them, and a span's cell is found by bisection."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._cells: list[tuple[int, int, Category]] | None = None
        self._starts: list[int] = []

    def role(self, span: Span) -> Category | None:
        if self._cells is None:
            self._cells = [c for c in pasted_column_categories(self.text) if c[2] in NAME_ROLES]
            self._starts = [c[0] for c in self._cells]
        k = bisect.bisect_right(self._starts, span.start) - 1
        if k >= 0 and span.end <= self._cells[k][1]:
            return self._cells[k][2]
        return None


def longer_name_of(names: Iterable[str]) -> dict[str, str]:
    """The one rule of mentions: a word (casefolded) of exactly one of the names of two words
    or more among ``names`` is a mention of that name ("Irakoze" of "Irakoze Uwambaje"); a
    word of two of them ("Perez" of "Anna Perez" and "Juan Perez", relatives) may be either
    and is left out. Word -> that name, as written in ``names``."""
    owners: dict[str, set[str]] = {}
    for name in names:
        words = NAME_WORD.findall(name)
        if len(words) > 1:
            for word in words:
                owners.setdefault(word.casefold(), set()).add(name)
    return {word: next(iter(held)) for word, held in owners.items() if len(held) == 1}
