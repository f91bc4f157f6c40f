"""Names after name labels in running text (polydeid.detect.rules.names, rules.names.v1)."""

from __future__ import annotations

import pytest

from polydeid.api import Deidentifier
from polydeid.core.segments import Segment
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category
from polydeid.detect.pipeline import Pipeline
from polydeid.detect.roles import name_value
from polydeid.detect.rules.names import SOURCE, LabelledNameRule
from polydeid.testing import FakeDetector

RULE = LabelledNameRule()
PATIENT, OTHER = Category.PERSON, Category.PERSON_THIRD_PARTY


def found(text: str, lang: str = "en") -> list[tuple[str, Category]]:
    return [(text[s.start : s.end], s.label) for s in RULE.detect(Segment(text, lang=lang))]


@pytest.mark.parametrize(
    ("lang", "text", "expected"),
    [
        ("en", "Patient name: Okello James\nAge: 45", [("Okello James", PATIENT)]),
        ("en", "Seen today. Surname: Okello, given names: Sarah Akinyi.", None),
        ("rw", "Amazina y'umurwayi: josee batamuliza, OP-1", [("josee batamuliza", PATIENT)]),
        ("sw", "Jina la mgonjwa: Amina Mwajuma Hassan\n", [("Amina Mwajuma Hassan", PATIENT)]),
        ("lg", "Erinnya ly'omulwadde: Nakato Sarah", [("Nakato Sarah", PATIENT)]),
        ("zh", "姓名：张伟，男，45岁", [("张伟", PATIENT)]),
        ("zh", "姓名: 娟\n年龄: 26 岁", [("娟", PATIENT)]),  # a one-character name
        ("am", "የታካሚ ስም: ተስፋ ፍሬው፣ መታወቂያ", [("ተስፋ ፍሬው", PATIENT)]),
        ("hi", "मरीज़ का नाम: रमेश कुमार\n", [("रमेश कुमार", PATIENT)]),
        ("ru", "Ф.И.О. пациента: Суворов Анисим Петрович", [("Суворов Анисим Петрович", PATIENT)]),
        ("de", "Name der Mutter: Anna Weber", [("Anna Weber", OTHER)]),
        ("en", "Mother's name: Akello Grace (36)", [("Akello Grace", OTHER)]),
        ("es", "Nombre: Ana. Apellidos: Rico Rubio.", [("Ana", PATIENT), ("Rico Rubio", PATIENT)]),
        # the next label on the value's line ends it
        ("en", "Full name: John Smith Age: 45 Sex: M", [("John Smith", PATIENT)]),
        ("vi", "Họ và tên: NGUYỄN VĂN AN   Giới tính: Nam", [("NGUYỄN VĂN AN", PATIENT)]),
        # initials keep their full stop; titles follow the language's convention
        ("en", "Full name: J. Okello", [("J. Okello", PATIENT)]),
        ("en", "Surname: Okello J.", [("Okello J.", PATIENT)]),
        ("en", "Patient name: Dr. Ana Ruiz", [("Dr. Ana Ruiz", PATIENT)]),
        ("es", "Nombre: Dra. Ana Ruiz", [("Ana Ruiz", PATIENT)]),
        # a key and value of a log, a program or JSON pasted as text
        ("vi", "DEBUG chat: patient_name=Triệu Trúc Hải\n", [("Triệu Trúc Hải", PATIENT)]),
        ("en", '{"mother_name": "Akinyi Odhiambo", "age": 3}', [("Akinyi Odhiambo", OTHER)]),
        ("en", "WHERE patient_name = 'Amina Wanjiru';", [("Amina Wanjiru", PATIENT)]),
        ("luo", "patientName='Ochieng' AND x=1", [("Ochieng", PATIENT)]),
        # a chat asking for a form's fields: the question labels the answer's turn
        ("en", "doctor: Patient name?\npatient: Nakato Sarah\n", [("Nakato Sarah", PATIENT)]),
        ("am", "ሐኪም: የታካሚ ስም?\nታካሚ: ፀጋ አላዛር\nሐኪም: ጾታ?", [("ፀጋ አላዛር", PATIENT)]),
        ("en", "nurse: Mother's name?\r\nmum: Akello Grace", [("Akello Grace", OTHER)]),
        # an XML element's start tag, with or without attributes
        ("rw", "  <patient_name>Jules Mugenzi</patient_name>", [("Jules Mugenzi", PATIENT)]),
        (
            "en",
            '<mother_name lang="en">Akinyi Odhiambo</mother_name>',
            [("Akinyi Odhiambo", OTHER)],
        ),
    ],
    ids=lambda x: x if isinstance(x, str) and len(x) <= 3 else "",
)
def test_a_name_labels_value_is_a_name(
    lang: str, text: str, expected: list[tuple[str, Category]] | None
) -> None:
    if expected is None:  # two labels on one line, each value up to its comma or full stop
        expected = [("Okello", PATIENT), ("Sarah Akinyi", PATIENT)]
    assert found(text, lang) == expected
    assert all(s.source == SOURCE for s in RULE.detect(Segment(text, lang=lang)))


@pytest.mark.parametrize(
    "text",
    [
        "Patient: known diabetic",  # a role noun alone is no name label
        "Doctor: please review",
        "Mother: Akello Grace",
        "Name: John Smith",  # the bare word "name" labels anything
        "Drug name: Amoxicillin",
        "self.processName: MainProcess",
        "Patient name: 45 year old man",  # a digit
        "Patient name: Okello2",
        "Patient name:\nOkello James",  # the value on the next line
        "Patient name: the man who came in this morning",  # more than five words
        "Patient name: unknown",  # says no name is known
        "Surname: N/A",
        "Nombre: no consta",
        "x = surname[:3]",  # a label ends in a letter
        "Patient name: Okello James: seen",  # a colon after words that are no label
        "patient_name = get_name(record)",  # code, not a value
        'patient_name="" name="Okello James"',  # the bare word "name" labels anything
        "mother_name=\nAkello",  # the value on the next line
        "<b>Okello James</b> <name>Okello James</name>",  # no name label
        "score > Okello James",
        "doctor: Any allergies?\npatient: Penicillin",  # the question is no name label
        "doctor: Patient name?\n\npatient: Okello James",  # not the line before
        "Patient name?\nOkello James",  # no turns
        "doctor: Patient name? And age?\npatient: Okello James",  # no field's question
    ],
    ids=lambda _: "",  # no names in test ids
)
def test_no_name_where_the_value_or_label_says_otherwise(text: str) -> None:
    assert found(text) == []


def test_name_value_reads_words_up_to_a_break() -> None:
    text = "Okello James, 45"
    assert name_value(text, 0, "en") == (0, 12)
    assert name_value("Okello James", 0, "en") == (0, 12)
    assert name_value("Okello. Seen today", 0, "en") == (0, 6)
    assert name_value("J. Okello. Seen", 0, "en") == (0, 9)
    assert name_value('Okello James.", "age": 4', 0, "en") == (0, 12)  # a JSON string's end
    assert name_value("Okello James.</td>", 0, "en") == (0, 12)
    assert name_value("N/A", 0, "en") is None  # one letter is no name
    assert name_value("12 Okello", 0, "en") is None
    assert name_value("Dr.", 0, "en") is None


def test_a_models_name_wins_where_it_found_one_and_the_rule_fills_in_elsewhere() -> None:
    text = "Mother's name: Akello Grace\nFather's name: Otieno Brian"
    mother = text.index("Akello")
    # a model read the mother as the patient (a birth record): its reading stands
    model = FakeDetector([Span(mother, mother + 12, PATIENT, "tagger.x", 0.8)])
    out = Pipeline([RULE, model]).detect(Segment(text, lang="en"))
    assert [(text[s.start : s.end], s.label, s.source) for s in out] == [
        ("Akello Grace", PATIENT, "tagger.x"),
        ("Otieno Brian", OTHER, SOURCE),
    ]


def test_the_rules_profile_redacts_a_labelled_name() -> None:
    deid = Deidentifier(profile="rules", policy="tag")
    text = "Amazina y'umurwayi: josee batamuliza\nImyaka: 34"
    out = deid.redact(text, lang="rw")
    assert "josee" not in out and "batamuliza" not in out
    assert out.startswith("Amazina y'umurwayi: [PERSON]")
