"""A name's role from the field label or noun before it (polydeid.detect.roles)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from polydeid.core.segments import Segment
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category
from polydeid.detect.pipeline import Pipeline
from polydeid.detect.roles import (
    LABEL_END,
    START_TAG,
    VALUE_QUOTES,
    _label_text,
    apply_label_roles,
    grow_to_values,
    label_role,
)
from polydeid.testing import FakeDetector

PATIENT, OTHER = Category.PERSON, Category.PERSON_THIRD_PARTY


@pytest.mark.parametrize(
    ("lang", "label", "role"),
    [
        ("en", "Patient:", PATIENT),
        ("en", "Seen today. Patient name:", PATIENT),
        ("en", "Attending physician:", OTHER),
        ("ru", "Ф.И.О. пациента:", PATIENT),
        ("ru", "Лечащий врач:", OTHER),
        ("rw", "Umurwayi:", PATIENT),
        ("rw", "Muganga:", OTHER),
        ("sw", "Jina la mgonjwa:", PATIENT),
        ("vi", "Họ và tên:", PATIENT),
        ("zh", "患者：", PATIENT),
        ("en", "Mother:", None),  # kinship: the patient in a birth record, not in a child's
        # a death notification's title names the deceased, the record's patient
        ("en", "Death notification:", PATIENT),
        ("en", "name of deceased:", PATIENT),
        ("am", "የሞት ማሳወቂያ:", PATIENT),
        ("sw", "Taarifa ya kifo:", PATIENT),
        ("en", "Diagnosis:", None),
        # no colon: a patient or clinician noun right before the name
        ("en", "Seen today, the patient", PATIENT),
        ("en", "Patient", PATIENT),
        ("en", "referred by the doctor", OTHER),
        ("es", "la paciente", PATIENT),
        ("rw", "yaje n'umurwayi", PATIENT),
        ("vi", "Tôi là em trai của BN", PATIENT),  # BN: bệnh nhân, the patient
        ("vi", "đã được bác sĩ", OTHER),
        ("vi", "đã được BS", OTHER),
        ("en", "the patient's mother", None),  # the noun must end the words before the name
        ("en", "patient,", None),  # punctuation between: not a noun before the name
        ("en", "outpatient", None),
        ("en", "the", None),
        # a key's equals sign ends a label too; a JSON key's quotes are no words
        ("en", "DEBUG chat_message: patient_name =", PATIENT),
        ("en", '{"attending_physician":', OTHER),
        ("en", "WHERE patient_name =", PATIENT),
        ("en", "dose =", None),
    ],
    ids=lambda x: x if isinstance(x, str) and len(x) <= 3 else "",
)
def test_label_role(lang: str, label: str, role: Category | None) -> None:
    text = f"{label} Name Here"
    assert label_role(text, text.index("Name")) is role


def test_the_label_must_be_on_the_names_line_and_end_right_before_it() -> None:
    assert label_role("Patient:\nName Here", 9) is None
    assert label_role("Patient: seen by Name Here", 17) is None
    assert label_role("Patient:\tName", 9) is PATIENT
    assert label_role("the patient\nName Here", 12) is None
    assert label_role("patientName", 7) is None  # a noun needs a space before the name


def test_a_cued_role_relabels_the_span_and_every_span_of_the_same_text() -> None:
    text = "Umurwayi: Irakoze Kayitesi. Irakoze Kayitesi yaje na Mukamana. Muganga: Habimana"
    spans = [
        Span(10, 26, OTHER, "tagger.x", 0.9),
        Span(28, 44, OTHER, "tagger.x", 0.9),
        Span(53, 61, OTHER, "tagger.x", 0.9),  # no label: left as read
        Span(72, 80, PATIENT, "tagger.x", 0.8),
        Span(0, 8, Category.LOCATION_VILLAGE, "tagger.x", 0.7),  # not a name: untouched
    ]
    out = apply_label_roles(text, spans)
    assert [(text[s.start : s.end], s.label) for s in out] == [
        ("Irakoze Kayitesi", PATIENT),
        ("Irakoze Kayitesi", PATIENT),
        ("Mukamana", OTHER),
        ("Habimana", OTHER),
        ("Umurwayi", Category.LOCATION_VILLAGE),
    ]
    # only the label changes: offsets, sources and scores are kept
    assert [(s.start, s.end, s.source, s.score) for s in out] == [
        (s.start, s.end, s.source, s.score) for s in spans
    ]


def test_labels_that_disagree_about_a_name_leave_its_other_mentions_alone() -> None:
    text = "Patient: Sam Lee\nDoctor: Sam Lee\nSam Lee came"
    spans = [Span(9, 16, OTHER, "t", 0.9), Span(25, 32, PATIENT, "t", 0.9)]
    spans.append(Span(33, 40, OTHER, "t", 0.9))
    out = apply_label_roles(text, spans)
    assert [s.label for s in out] == [PATIENT, OTHER, OTHER]


def test_the_pipeline_applies_label_roles_to_any_detectors_names() -> None:
    text = "Ф.И.О. пациента: Суворов Анисим. Лечащий врач: Денисов"
    start = text.index("Суворов")
    doctor = text.index("Денисов")
    fake = FakeDetector(
        [
            Span(start, start + 14, OTHER, "backend.x", 0.9),
            Span(doctor, len(text), PATIENT, "backend.x", 0.9),
        ]
    )
    spans = Pipeline([fake]).detect(Segment(text, lang="ru"))
    assert [s.label for s in spans] == [PATIENT, OTHER]


def test_a_name_inside_a_name_labels_value_grows_to_the_whole_value() -> None:
    text = "Amazina y'umurwayi: josee batamuliza, dosiye OP-1. Umurwayi: josee batamuliza"
    first = text.index("josee")
    second = text.index("josee", first + 1)
    spans = [
        Span(first, first + 5, OTHER, "tagger.x", 0.9),  # only part of the name read
        Span(second, second + 5, PATIENT, "tagger.x", 0.9),
    ]
    out = apply_label_roles(text, spans, "rw")
    assert [(text[s.start : s.end], s.label, s.source) for s in out] == [
        ("josee batamuliza", PATIENT, "tagger.x"),  # grown; the label gives the role
        ("josee", PATIENT, "tagger.x"),  # a role noun ("Umurwayi:") grows nothing
    ]


def test_name_spans_inside_one_value_join_and_other_spans_stop_growth() -> None:
    text = "Full name: anna maria weber\nMother's name: akello grace, 12 May"
    anna, maria = text.index("anna"), text.index("maria")
    spans = [Span(anna, anna + 4, PATIENT, "t", 0.9), Span(maria, maria + 5, OTHER, "t", 0.8)]
    akello = text.index("akello")
    spans.append(Span(akello, akello + 6, OTHER, "t", 0.9))
    out = grow_to_values(text, spans, "en")
    assert [(text[s.start : s.end], s.label) for s in out] == [
        ("anna maria weber", PATIENT),
        ("akello grace", OTHER),
    ]
    # a span reaching into the value from before it: nothing grows over it
    across = Span(anna - 3, anna + 4, PATIENT, "t", 0.9)
    assert grow_to_values(text, [across, spans[1]], "en") == [across, spans[1]]
    # a span of another category inside the value: left as the model read it
    village = Span(text.index("weber"), text.index("weber") + 5, Category.LOCATION_VILLAGE, "t", 1)
    assert grow_to_values(text, [spans[0], village], "en") == [spans[0], village]


def test_a_chat_turns_role_label_grows_no_name() -> None:
    text = "Daktari: Mimi ni Lydia Biira, mke wa Joseph"
    start = text.index("Lydia")
    spans = [Span(start, start + 11, OTHER, "t", 0.9)]
    assert apply_label_roles(text, spans, "sw") == (spans[0],)


def test_a_log_lines_key_gives_its_role_to_every_mention_of_the_name() -> None:
    text = (
        "2022-04-15T23:05:47Z DEBUG chat: patient_name=Triệu Trúc Hải\n"
        "2022-04-15T23:05:48Z DEBUG chat: message=Dạ chào bác sĩ, em là Triệu Trúc Hải."
    )
    first = text.index("Triệu")
    second = text.index("Triệu", first + 1)
    spans = [Span(first, first + 14, OTHER, "t", 0.9), Span(second, second + 14, OTHER, "t", 0.9)]
    assert [s.label for s in apply_label_roles(text, spans, "vi")] == [PATIENT, PATIENT]
    # glued to the key, and in quotes after it
    assert label_role("patient_name=Name", 13) is PATIENT
    assert label_role('{"doctor": "Name', 12) is OTHER
    # an XML element's start tag labels its value
    assert label_role("<patient_name>Name</patient_name>", 14) is PATIENT
    assert label_role('<attending_physician id="7">Name', 28) is OTHER
    assert label_role("<b>Name</b>", 3) is None


def test_a_quoted_value_grows_without_its_closing_quote() -> None:
    text = "WHERE patient_name = 'amina wanjiru' AND ward = 3"
    start = text.index("amina")
    out = grow_to_values(text, [Span(start, start + 5, OTHER, "t", 0.9)], "en")
    assert [(text[s.start : s.end], s.label) for s in out] == [("amina wanjiru", OTHER)]


def test_a_name_inside_an_xml_elements_value_grows_to_the_whole_value() -> None:
    text = "<patient_name>josee batamuliza</patient_name>"
    start = text.index("josee")
    out = grow_to_values(text, [Span(start, start + 5, OTHER, "t", 0.9)], "rw")
    assert [(text[s.start : s.end], s.label) for s in out] == [("josee batamuliza", OTHER)]


def test_a_chat_answer_to_a_name_question_grows_to_the_whole_name() -> None:
    text = "doctor: Patient name?\npatient: nakato sarah\ndoctor: Age?\npatient: 34"
    start = text.index("sarah")
    out = apply_label_roles(text, [Span(start, start + 5, OTHER, "t", 0.9)], "en")
    # the question labels the answer; the answer's turn ("patient:") gives the role
    assert [(text[s.start : s.end], s.label) for s in out] == [("nakato sarah", PATIENT)]


def test_a_pasted_hl7_segments_field_gives_the_names_role() -> None:
    text = (
        "MSH|^~\\&|LAB|CLINIC|EMR|CLINIC|202005272010||ORU^R01|MSG1|P|2.5\r"
        "PID|1||4711^^^H^MR||Name^Given||19820423|F\r"
        "NK1|1|Kin^Given|MTH\r"
        "PV1|1|I|Ward 3||||Doc^Given^^^DR\r"
        "OBX|1|ST|^Father||Free Text||||||F"
    )

    def role(word: str) -> Category | None:
        return label_role(text, text.index(word))

    assert role("Name^") is PATIENT  # PID-5
    assert role("Given||1982") is PATIENT  # a later component of the same field
    assert role("Kin") is OTHER  # NK1-2
    assert role("Doc") is OTHER  # PV1-7, the attending doctor
    assert role("Free") is None  # OBX-5: an observation, no role of its own
    assert role("4711") is None  # PID-3: no name field
    assert role("LAB") is None  # MSH-3 (MSH-1 is the separator): no name field
    # a segment the table does not list, or a line that is no segment, gives no role
    assert label_role("ZZZ|1|Name", 6) is None
    assert label_role("Pid|1||x||Name", 10) is None
    assert label_role("note: see |Name", 11) is None


def test_a_one_word_mention_takes_the_role_of_the_one_cued_name_it_is_part_of() -> None:
    text = "PID|1||OP-1||Irakoze Uwambaje||\rNTE|1|L|Umurwayi w'ibitaro Irakoze yishyuye."
    full = text.index("Irakoze")
    word = text.index("Irakoze", full + 1)
    spans = [Span(full, full + 16, OTHER, "t", 0.9), Span(word, word + 7, OTHER, "t", 0.9)]
    assert [s.label for s in apply_label_roles(text, spans, "rw")] == [PATIENT, PATIENT]
    # a word of two names (relatives sharing a surname) keeps the role it was read in
    text = "Patient: Anna Perez; her husband Juan Perez called. Perez said so."
    spans = [
        Span(text.index("Anna"), text.index("Anna") + 10, OTHER, "t", 0.9),
        Span(text.index("Juan"), text.index("Juan") + 10, OTHER, "t", 0.9),
        Span(text.index("Perez said"), text.index("Perez said") + 5, OTHER, "t", 0.9),
    ]
    assert [s.label for s in apply_label_roles(text, spans, "en")] == [PATIENT, OTHER, OTHER]


def test_a_pasted_tables_header_gives_its_columns_names_their_role() -> None:
    text = (
        "Seen in clinic.\n\n"
        '"Amazina y\'umurwayi","Imyaka","Umuntu wa hafi","Ibisobanuro"\n'
        '"Colette Bamurange","33 imyaka","Noella Umubyeyi","Ihererekanya: Colette Bamurange."\n'
        '"Eric Mugabo","40 imyaka","Jean Habimana","ameze neza"\n'
    )
    names = ["Colette Bamurange", "Noella Umubyeyi", "Eric Mugabo", "Jean Habimana"]
    spans = [Span(text.index(n), text.index(n) + len(n), OTHER, "t", 0.9) for n in names]
    spans[1] = Span(spans[1].start, spans[1].end, PATIENT, "t", 0.9)
    later = text.rindex("Colette Bamurange")  # in the notes column
    spans.insert(2, Span(later, later + 17, OTHER, "t", 0.9))
    out = apply_label_roles(text, spans, "rw")
    # the names column: the patient; the next of kin's: a third party; the notes' mention
    # of the patient's name takes the role of its text
    assert [s.label for s in out] == [PATIENT, OTHER, PATIENT, PATIENT, OTHER]


# The label before a value, as one regex searched over the line (the former reading, whose
# work grew with the line's length): the backward reading must give the same text.
_LABEL_SPEC = re.compile(
    rf"(?:([^\n\r;|\t{LABEL_END}<>]{{1,80}})[{LABEL_END}][ \t]*[{VALUE_QUOTES}]?"
    rf"|{START_TAG}[ \t]*)$"
)
_LABEL_PIECES = [
    *"ab c:=：\t;|<>\"'“„«‘1",
    "name",
    "Patient",
    "<p>",
    "<td class=x>",
    "<a b='c'>",
    ": ",
    ':\t"',
    "x" * 30,
]


@settings(max_examples=3000, deadline=None)
@given(
    st.lists(st.sampled_from(_LABEL_PIECES), max_size=40),
    st.integers(min_value=0, max_value=400),
)
def test_label_read_backwards_is_the_label_regex(pieces: list[str], line: int) -> None:
    text = "".join(pieces)
    line_start = min(line, len(text))
    match = _LABEL_SPEC.search(text, line_start, len(text))
    expected = None if match is None else (match.group(1) or match.group(2))
    assert _label_text(text, line_start, len(text)) == expected


def test_labels_on_one_long_line_are_read_from_their_own_colon() -> None:
    """Many values on one line (a one-line export): each label is its own, read back from
    its colon to the field break before it, whatever the line holds before that."""
    text = "; ".join(f"patient name: kalo mirute{i}" for i in range(5000))
    starts = [m.end() for m in re.finditer(r": ", text)]
    assert _label_text(text, 0, starts[0]) == "patient name"
    assert {_label_text(text, 0, s) for s in starts[1:]} == {" patient name"}
    assert label_role(text, starts[-1]) is PATIENT
