"""Values written after their field label in running text: the machinery the labelled-value
rules share (:mod:`polydeid.detect.rules.names`, :mod:`polydeid.detect.rules.demographics`).

A form line says outright what its value is, whether or not a model would read the value out
of a sentence: "Patient name: Okello James", "Kabila: Luo", "职业：公务员". A label ends in a
colon, or in a key's equals sign, and the value may open with a quote, so a log line, a
program or JSON pasted as text is read too ("patient_name=Okello", ``{"tribe": "Pare"}``); an
XML element's start tag labels the value it opens (``<religion>Anglican</religion>``). In a
chat that asks for a form's fields, the question on the line before an answer's turn is its
label ("doctor: Occupation?" / "patient: teacher"). The label's words are read by
:func:`polydeid.detect.roles.label_before`; the value by :func:`polydeid.detect.roles.
name_value` (one to five words of letters on the label's line, ending at a break, a full stop
or the next label). A value saying nothing is known ("unknown", "N/A", "no consta") gives
nothing.

Each rule says which labels it reads (a word set for a quick filter and a lookup from a
label's words to a category); the loop over label ends is this module's.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from typing import ClassVar

import regex

from polydeid.core.segments import Segment
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category
from polydeid.detect.roles import LABEL_END, START_TAG, VALUE_QUOTES, label_before, name_value
from polydeid.detect.rules._base import RuleDetector
from polydeid.lexicon.fields import WORD_CHARS, is_no_name, normalise_name
from polydeid.locales import canonical_language
from polydeid.text.memo import remembered
from polydeid.text.patterns import compile_pattern, guarded_finditer

#: A label's end (a colon, or a key's equals sign) with the spaces and opening quote after it,
#: or the end of a start tag ("<mother_name>").
_COLON = compile_pattern(rf"[{LABEL_END}][ \t]*[{VALUE_QUOTES}]?|>[ \t]*")
#: The run of word characters ending where it is matched (a reverse pattern: ``match`` reads
#: back from its end position).
_LAST_WORD = regex.compile(rf"(?r)[{WORD_CHARS}]+")
#: A start tag's element name, read from its "<".
_TAG_NAME = regex.compile(START_TAG)


def word_before(text: str, colon: int) -> str:
    """The word (letters, marks and digits) ending right before ``colon`` (or a key's equals
    sign; for a start tag's ``>``, the last word of its element's name), spaces and a quoted
    key's closing quote between skipped; split and folded as
    :func:`polydeid.lexicon.fields.normalise_name` does. A quick filter: most colons ("status:
    …" in a structured document's fields) follow no label a rule reads."""
    if text[colon] == ">":  # a start tag: its element's name, attributes between skipped
        opening = text.rfind("<", max(0, colon - 120), colon)
        tag = _TAG_NAME.match(text, opening) if opening >= 0 else None
        words = normalise_name(tag.group(1)) if tag else ()  # "patient_name": "name"
        return words[-1] if words else ""
    end = colon
    while end > 0 and text[end - 1] in " \t\"'”’":  # spaces; a quoted key's closing quote
        end -= 1
    word = _LAST_WORD.match(text, max(0, end - 40), end)
    found = word.group() if word else ""
    if found[1:].islower():  # most words: no camelCase to split (a log has many colons)
        return unicodedata.normalize("NFC", found).casefold()
    words = normalise_name(found)  # "patientName": "name"
    return words[-1] if words else ""


def answers_question(text: str, colon: int) -> bool:
    """Whether the line of ``colon`` follows a line ending in a question mark (a chat turn
    answering "Patient name?"). A quick filter, like :func:`word_before`."""
    end = text.rfind("\n", 0, colon)
    while end > 0 and text[end - 1] in " \t\r":  # no copy of the text before: a long log
        end -= 1  # has many colons
    return end > 0 and text[end - 1] in "?？"


def label_ends(segment: Segment, rule_id: str) -> tuple[tuple[int, int, str], ...]:
    """Every label end of the segment's text (:data:`_COLON`): where it starts, where a value
    after it may start, and :func:`word_before` it. Read once per pipeline call and shared by
    the rules that read labels (:mod:`polydeid.text.memo`); a scan past its time limit fails
    closed in the name of ``rule_id``."""
    text = segment.text

    def read() -> tuple[tuple[int, int, str], ...]:
        return tuple(
            (colon.start(), colon.end(), word_before(text, colon.start()))
            for colon in guarded_finditer(_COLON, segment, rule_id)
        )

    return remembered("label ends", text, read)


class LabelledValueRule(RuleDetector):
    """The value after a label this rule reads, as a span of the label's category."""

    source: ClassVar[str]
    score: ClassVar[float] = 0.9
    #: Whether a title opening the value is left out as the language writes names
    #: (:func:`polydeid.detect.roles.name_value`): for names only.
    titles: ClassVar[bool] = False

    def last_words(self) -> frozenset[str]:
        """The last word of every label this rule reads (the quick filter)."""
        raise NotImplementedError

    def category_for(self, words: Sequence[str]) -> Category | None:
        """The category a label ending in ``words`` gives its value, or None."""
        raise NotImplementedError

    def find(self, segment: Segment) -> list[Span]:
        text = segment.text
        lang = canonical_language(segment.lang) if self.titles else None
        spans: list[Span] = []
        last_words = self.last_words()
        for colon, start, word in label_ends(segment, self.id):
            if spans and start < spans[-1].end:
                continue
            if word not in last_words and not answers_question(text, colon):
                continue
            category = label_before(text, start, self.category_for)
            if category is None:
                continue
            value = name_value(text, start, lang)
            if value is None or is_no_name(text[value[0] : value[1]]):
                continue
            spans.append(Span(value[0], value[1], category, self.source, self.score))
        return spans
