"""Names written as the value of a name label in running text: "Patient name: Okello James",
"Amazina y'umurwayi: josee batamuliza", "Name der Mutter: Anna Weber", "姓名：张伟".

A model reads names from their context and their shape; a form line says outright that a name
follows, whether or not the name is familiar, capitalised or whole in the model's reading.
The labels are those of ``[name_labels]`` in ``formats/data/fields.toml`` (English and other
phrases plus every language pack's ``patient_name``, ``mother_name`` and ``father_name`` form
labels; the longest listed phrase ending the label decides, and ``not_names`` phrases such as
"Drug name" block a shorter one). Role nouns alone ("Patient:", "Doctor:", "Mother:") are not
name labels here: their value is as often a description as a name; a model's name span after
them is still grown to the whole value (:mod:`polydeid.detect.roles`).

In a chat that asks for a form's fields, the question on the line before an answer's turn is
its label ("doctor: Patient name?" / "patient: Okello James",
:func:`polydeid.detect.roles.name_label_before`). A key and value of a log, a program or JSON
pasted as text is a label too ("patient_name=Okello James", ``{"mother_name": "Akinyi"}``,
``patient_name = 'Okello'``: an equals sign ends the label, a quote may open the value), and
so is an XML element's start tag (``<mother_name>Akinyi Odhiambo</mother_name>``). The value is
read by :func:`polydeid.detect.roles.name_value`: one to five words of letters on the label's
line, ending at a break, a full stop, or the next label ("Okello James Age: 45"),
a title left out where the language leaves titles out of names. Anything else — a digit, a
sixth word, a sentence, a value on the next line, a value saying no name is known ("unknown",
"no consta": ``not_names.values``) — gives nothing. The span's category is the label's:
``PERSON`` for the patient's name, ``PERSON_THIRD_PARTY`` for a parent's or a clinician's.
"""

from __future__ import annotations

import unicodedata
from functools import cache

import regex

from polydeid.core.segments import Segment
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category, Fact
from polydeid.detect.roles import (
    LABEL_END,
    START_TAG,
    VALUE_QUOTES,
    name_label_before,
    name_value,
)
from polydeid.detect.rules._base import RuleDetector, compile_pattern, guarded_finditer
from polydeid.formats.fields import (
    WORD_CHARS,
    is_no_name,
    name_label_phrases,
    normalise_name,
)
from polydeid.locales import canonical_language

RULE_ID = "rules.names.v1"
SOURCE = "rule.name.label.v1"
SCORE = 0.9


#: A label's end (a colon, or a key's equals sign) with the spaces and opening quote after it,
#: or the end of a start tag ("<mother_name>").
_COLON = compile_pattern(rf"[{LABEL_END}][ \t]*[{VALUE_QUOTES}]?|>[ \t]*")


@cache
def _last_words() -> frozenset[str]:
    """The last word of every name label, as :func:`polydeid.formats.fields.normalise_name`
    splits it."""
    return frozenset(words[-1] for words in name_label_phrases())


_LAST_WORD = regex.compile(rf"[{WORD_CHARS}]+\Z")
#: A start tag's element name, read from its "<".
_TAG_NAME = regex.compile(START_TAG)


def _word_before(text: str, colon: int) -> str:
    """The word (letters, marks and digits) ending right before ``colon`` (or a key's equals
    sign; for a start tag's ``>``, the last word of its element's name), spaces and a quoted
    key's closing quote between skipped; split and folded as
    :func:`polydeid.formats.fields.normalise_name` does. A quick filter: most colons ("status:
    …" in a structured document's fields) follow no name label's last word."""
    if text[colon] == ">":  # a start tag: its element's name, attributes between skipped
        opening = text.rfind("<", max(0, colon - 120), colon)
        tag = _TAG_NAME.match(text, opening) if opening >= 0 else None
        words = normalise_name(tag.group(1)) if tag else ()  # "patient_name": "name"
        return words[-1] if words else ""
    end = colon
    while end > 0 and text[end - 1] in " \t\"'”’":  # spaces; a quoted key's closing quote
        end -= 1
    word = _LAST_WORD.search(text, max(0, end - 40), end)
    found = word.group() if word else ""
    if found[1:].islower():  # most words: no camelCase to split (a log has many colons)
        return unicodedata.normalize("NFC", found).casefold()
    words = normalise_name(found)  # "patientName": "name"
    return words[-1] if words else ""


def _answers_question(text: str, colon: int) -> bool:
    """Whether the line of ``colon`` follows a line ending in a question mark (a chat turn
    answering "Patient name?"). A quick filter, like :func:`_word_before`."""
    end = text.rfind("\n", 0, colon)
    while end > 0 and text[end - 1] in " \t\r":  # no copy of the text before: a long log
        end -= 1  # has many colons
    return end > 0 and text[end - 1] in "?？"


class LabelledNameRule(RuleDetector):
    """Names that are the value of a name label ("Patient name: …")."""

    id = RULE_ID
    labels: frozenset[Category | Fact] = frozenset({Category.PERSON, Category.PERSON_THIRD_PARTY})
    #: Names are found only after name labels; a model finds the rest.
    partial_labels: frozenset[Category] = frozenset({Category.PERSON, Category.PERSON_THIRD_PARTY})

    def find(self, segment: Segment) -> list[Span]:
        text = segment.text
        lang = canonical_language(segment.lang)
        spans: list[Span] = []
        last_words = _last_words()
        for colon in guarded_finditer(_COLON, segment, self.id):
            start = colon.end()
            if spans and start < spans[-1].end:
                continue
            if _word_before(text, colon.start()) not in last_words and not _answers_question(
                text, colon.start()
            ):
                continue
            category = name_label_before(text, start)
            if category is None:
                continue
            value = name_value(text, start, lang)
            if value is None or is_no_name(text[value[0] : value[1]]):
                continue
            spans.append(Span(value[0], value[1], category, SOURCE, SCORE))
        return spans
