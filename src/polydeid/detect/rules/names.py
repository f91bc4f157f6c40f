"""Names written as the value of a name label in running text: "Patient name: Okello James",
"Amazina y'umurwayi: josee batamuliza", "Name der Mutter: Anna Weber", "姓名：张伟".

A model reads names from their context and their shape; a form line says outright that a name
follows, whether or not the name is familiar, capitalised or whole in the model's reading.
The labels are those of ``[name_labels]`` in ``lexicon/data/fields.toml`` (English and other
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
The loop over label ends is :mod:`polydeid.detect.rules.labelled`'s, shared with the rule for
occupations, tribes, religions and clans (:mod:`polydeid.detect.rules.demographics`).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

from polydeid.core.taxonomy import Category, Fact
from polydeid.detect.rules.labelled import LabelledValueRule
from polydeid.lexicon.fields import name_label_for_words, name_label_phrases

RULE_ID = "rules.names.v1"
SOURCE = "rule.name.label.v1"
SCORE = 0.9


@cache
def _last_words() -> frozenset[str]:
    """The last word of every name label, as :func:`polydeid.lexicon.fields.normalise_name`
    splits it."""
    return frozenset(words[-1] for words in name_label_phrases())


class LabelledNameRule(LabelledValueRule):
    """Names that are the value of a name label ("Patient name: …")."""

    id = RULE_ID
    source = SOURCE
    score = SCORE
    titles = True
    labels: frozenset[Category | Fact] = frozenset({Category.PERSON, Category.PERSON_THIRD_PARTY})
    #: Names are found only after name labels; a model finds the rest.
    partial_labels: frozenset[Category] = frozenset({Category.PERSON, Category.PERSON_THIRD_PARTY})

    def last_words(self) -> frozenset[str]:
        return _last_words()

    def category_for(self, words: Sequence[str]) -> Category | None:
        return name_label_for_words(words)
