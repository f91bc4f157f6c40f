"""Tests for the synthetic-document text-format renderers and their span offsets."""

import ast
import csv
import io
import itertools
import json
import random
import re
import xml.etree.ElementTree as ET

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from polydeid.core.errors import ConfigError, InputError
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category, Fact
from polydeid.synth.formats import (
    CSV_ESCAPES,
    FILE_SUFFIXES,
    HL7_ESCAPES,
    JSON_ESCAPES,
    KEY_ROLES,
    NO_ESCAPES,
    XHTML_IN_JSON_ESCAPES,
    XML_ESCAPES,
    Field,
    Rendered,
    escape,
    format_names,
    label_for,
    render,
)

C = Category

GOLDEN_FIELDS = (
    Field("patient_name", "Nakato Sarah", (Span(0, 12, C.PERSON, "gold:name"),)),
    Field("mrn", "77|A&B", (Span(0, 6, C.ID_RECORD, "gold:mrn"),)),
    Field(
        "history",
        'Seen at "Mulago" & given 5 mg.\nBy Dr Okello',
        (
            Span(9, 15, C.LOCATION_FACILITY, "gold:fac"),
            Span(37, 43, C.PERSON_THIRD_PARTY, "gold:dr"),
        ),
        (Span(25, 29, Fact.DOSE, "gold:dose"),),
    ),
)

GOLDEN_TEXT = {
    "prose": (
        "Admission note\n"
        "\n"
        'Patient name: Nakato Sarah. MRN: 77|A&B. Seen at "Mulago" & given 5 mg.\n'
        "By Dr Okello.\n"
    ),
    "soap": (
        "Admission note\n"
        "Patient name: Nakato Sarah\n"
        "MRN: 77|A&B\n"
        "\n"
        "S:\n"
        'Seen at "Mulago" & given 5 mg.\n'
        "By Dr Okello\n"
    ),
    "bullets": (
        "Admission note\n"
        "* Patient name: Nakato Sarah\n"
        "* MRN: 77|A&B\n"
        '* History: Seen at "Mulago" & given 5 mg.\n'
        "By Dr Okello\n"
    ),
    "key_value": (
        "ADMISSION NOTE\n"
        "Patient name: Nakato Sarah\n"
        "MRN: 77|A&B\n"
        'History: Seen at "Mulago" & given 5 mg.\n'
        "By Dr Okello\n"
    ),
    "table_csv": (
        '"Patient name","MRN","History"\n'
        '"Nakato Sarah","77|A&B","Seen at ""Mulago"" & given 5 mg.\n'
        'By Dr Okello"\n'
    ),
    "json": (
        "{\n"
        '  "document_type": "admission_note",\n'
        '  "language": "en",\n'
        '  "patient_name": "Nakato Sarah",\n'
        '  "mrn": "77|A&B",\n'
        '  "history": "Seen at \\"Mulago\\" & given 5 mg.\\nBy Dr Okello"\n'
        "}\n"
    ),
    "fhir": (
        "{\n"
        '  "resourceType": "Bundle",\n'
        '  "type": "document",\n'
        '  "entry": [\n'
        "    {\n"
        '      "resource": {\n'
        '        "resourceType": "Composition",\n'
        '        "id": "composition-1",\n'
        '        "status": "final",\n'
        '        "language": "en",\n'
        '        "type": {\n'
        '          "text": "Admission note"\n'
        "        },\n"
        '        "subject": {\n'
        '          "reference": "Patient/patient-1"\n'
        "        },\n"
        '        "title": "Admission note",\n'
        '        "section": [\n'
        "          {\n"
        '            "title": "History",\n'
        '            "text": {\n'
        '              "status": "generated",\n'
        '              "div": "<div xmlns=\\"http://www.w3.org/1999/xhtml\\">'
        'Seen at \\"Mulago\\" &amp; given 5 mg.\\nBy Dr Okello</div>"\n'
        "            }\n"
        "          }\n"
        "        ]\n"
        "      }\n"
        "    },\n"
        "    {\n"
        '      "resource": {\n'
        '        "resourceType": "Patient",\n'
        '        "id": "patient-1",\n'
        '        "identifier": [\n'
        "          {\n"
        '            "system": "urn:polydeid:mrn",\n'
        '            "value": "77|A&B"\n'
        "          }\n"
        "        ],\n"
        '        "name": [\n'
        "          {\n"
        '            "text": "Nakato Sarah"\n'
        "          }\n"
        "        ]\n"
        "      }\n"
        "    }\n"
        "  ]\n"
        "}\n"
    ),
    "xml": (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<ClinicalDocument xmlns="urn:hl7-org:v3">\n'
        '  <languageCode code="en"/>\n'
        "  <title>Admission note</title>\n"
        "  <recordTarget>\n"
        "    <patientRole>\n"
        "      <patient_name>Nakato Sarah</patient_name>\n"
        "      <mrn>77|A&amp;B</mrn>\n"
        "    </patientRole>\n"
        "  </recordTarget>\n"
        "  <component>\n"
        "    <structuredBody>\n"
        '      <section code="history">\n'
        "        <title>History</title>\n"
        '        <text>Seen at "Mulago" &amp; given 5 mg.\n'
        "By Dr Okello</text>\n"
        "      </section>\n"
        "    </structuredBody>\n"
        "  </component>\n"
        "</ClinicalDocument>\n"
    ),
    "hl7v2": (
        "MSH|^~\\&|POLYDEID|SYNTH|RECEIVER|SYNTH|202008231923||ADT^A01^ADT_A01|MSG20246633|P|2.5\r"
        "PID|1||77\\F\\A\\T\\B^^^POLYDEID^MR||Nakato Sarah||||||||||||||\r"
        "PV1|1|I||||||||||||||||||||||||||||||||||||||||||\r"
        'NTE|1|L|Seen at "Mulago" \\T\\ given 5 mg.\\X0A\\By Dr Okello\r'
    ),
    "chat": (
        "doctor: Patient name?\n"
        "patient: Nakato Sarah\n"
        "doctor: MRN?\n"
        "patient: 77|A&B\n"
        'doctor: Seen at "Mulago" & given 5 mg.\n'
        "By Dr Okello\n"
    ),
    "log": (
        "2021-05-18T01:21:38.236Z WARN  admission_note: patient_name=Nakato Sarah\n"
        "2021-05-18T01:21:38.632Z INFO  admission_note: mrn=77|A&B\n"
        '2021-05-18T01:21:43.022Z INFO  admission_note: history=Seen at "Mulago" & given 5 mg.\n'
        "By Dr Okello\n"
    ),
    "code": (
        '"""Export job for admission_note records (en)."""\n'
        "\n"
        "# patient_name: Nakato Sarah\n"
        "RECORD = {\n"
        '    "mrn": "77|A&B",\n'
        '    "history": "Seen at \\"Mulago\\" & given 5 mg.\\nBy Dr Okello",\n'
        "}\n"
    ),
}

#: Escaped span texts expected in the golden documents, per format.
GOLDEN_SPANS = {
    "prose": ("Nakato Sarah", "77|A&B", "Mulago", "Okello"),
    "table_csv": ("Nakato Sarah", "77|A&B", "Mulago", "Okello"),
    "json": ("Nakato Sarah", "77|A&B", "Mulago", "Okello"),
    "fhir": ("Mulago", "Okello", "77|A&B", "Nakato Sarah"),
    "xml": ("Nakato Sarah", "77|A&amp;B", "Mulago", "Okello"),
    "hl7v2": ("77\\F\\A\\T\\B", "Nakato Sarah", "Mulago", "Okello"),
    "code": ("Nakato Sarah", "77|A&B", "Mulago", "Okello"),
}


def _render(fields, text_format, seed=7, document_type="admission_note"):
    return render(
        fields,
        text_format=text_format,
        document_type=document_type,
        lang="en",
        rng=random.Random(seed),
    )


# --- Registry and values ----------------------------------------------------------------------


def test_registry_has_every_required_format():
    required = {
        "prose", "soap", "bullets", "key_value", "table_csv", "json", "fhir", "xml", "hl7v2",
        "chat", "log", "code",
    }  # fmt: skip
    assert required <= set(format_names())


@pytest.mark.parametrize(
    ("text_format", "reader"),
    [
        ("prose", "text"), ("soap", "text"), ("bullets", "text"), ("key_value", "text"),
        ("chat", "text"), ("table_csv", "csv"), ("json", "json"), ("fhir", "fhir"),
        ("xml", "cda"), ("hl7v2", "hl7"), ("log", "code"), ("code", "code"),
    ],
)  # fmt: skip
def test_a_rendered_file_saved_under_its_suffix_is_read_by_the_intended_reader(
    text_format: str, reader: str
) -> None:
    from polydeid.formats.registry import detect_format

    assert set(FILE_SUFFIXES) == set(format_names())
    text = _render(GOLDEN_FIELDS, text_format).text
    assert detect_format(f"record{FILE_SUFFIXES[text_format]}", text.encode()) == reader


def test_unknown_format_raises_config_error_listing_known_ones():
    with pytest.raises(ConfigError) as info:
        _render(GOLDEN_FIELDS, "docx")
    assert "docx" in str(info.value)
    for name in format_names():
        assert name in str(info.value)


def test_field_rejects_span_past_its_text():
    with pytest.raises(ValueError, match="past the end"):
        Field("mrn", "123", (Span(0, 4, C.ID_RECORD, "gold"),))


def test_reprs_do_not_show_text():
    rendered = _render(GOLDEN_FIELDS, "prose")
    assert "Nakato" not in repr(GOLDEN_FIELDS[0])
    assert "Nakato" not in repr(rendered)
    assert isinstance(rendered, Rendered)


def test_labels_come_from_table_or_are_humanised():
    assert label_for("patient_name", "en") == "Patient name"
    assert label_for("mrn", "en") == "MRN"
    assert label_for("blood_group", "en") == "Blood group"
    assert label_for("admission_note", "lg") == "Ebiwandiiko by'okuyingizibwa"  # pack table
    assert label_for("blood_group", "lg") == "Blood group"  # not in the pack table: humanised


# --- Golden documents ---------------------------------------------------------------------------


@pytest.mark.parametrize("text_format", sorted(GOLDEN_TEXT))
def test_golden_document(text_format):
    rendered = _render(GOLDEN_FIELDS, text_format)
    assert rendered.text == "".join(GOLDEN_TEXT[text_format])
    assert len(rendered.spans) == 4 and len(rendered.facts) == 1
    assert rendered.facts[0].label is Fact.DOSE
    assert rendered.text[rendered.facts[0].start : rendered.facts[0].end] == "5 mg"
    expected = GOLDEN_SPANS.get(text_format, GOLDEN_SPANS["prose"])
    assert sorted(rendered.text[s.start : s.end] for s in rendered.spans) == sorted(expected)


def test_a_chat_puts_the_narrative_in_its_narrators_turn():
    fields = [Field("patient_name", "Nakato Sarah"), Field("notes", "I have a fever.")]
    ours = render(fields, text_format="chat", document_type="chat_message", lang="en",
                  rng=random.Random(1), narrator="patient").text  # fmt: skip
    assert ours.endswith("\npatient: I have a fever.\n")
    theirs = _render(fields, "chat", document_type="chat_message").text  # clinician by default
    assert theirs.endswith("\ndoctor: I have a fever.\n")


def test_rendering_is_deterministic_for_a_seed():
    for name in format_names():
        assert _render(GOLDEN_FIELDS, name, seed=3) == _render(GOLDEN_FIELDS, name, seed=3)


def test_prose_groups_sentences_into_paragraphs():
    fields = [Field(f"note_{i}", f"value {i}") for i in range(12)]
    paragraphs = _render(fields, "prose").text.strip().split("\n\n")[1:]  # after the title
    assert 3 <= len(paragraphs) <= 6
    assert all(2 <= p.count("Note ") <= 4 for p in paragraphs[:-1])


def test_soap_assigns_fields_to_sections_by_key():
    keys = ["plan", "patient_name", "assessment", "examination", "history"]
    fields = [Field(key, f"<{key}>") for key in keys]
    text = _render(fields, "soap").text
    order = [text.index(marker) for marker in
             ("<patient_name>", "S:", "<history>", "O:", "<examination>", "A:", "<assessment>",
              "P:", "<plan>")]  # fmt: skip
    assert order == sorted(order)


# --- Escaping cases -----------------------------------------------------------------------------

TRICKY = 'Dr "O\'Neil" <b>&amp; \\ |^~\\& é\u0301 😀\nline2\r\tend'


def _tricky_field(key="history"):
    return Field(key, TRICKY, (Span(0, len(TRICKY), C.PERSON_THIRD_PARTY, "gold:all"),))


@pytest.mark.parametrize(
    ("text_format", "table"),
    [
        ("json", JSON_ESCAPES),
        ("table_csv", CSV_ESCAPES),
        ("xml", XML_ESCAPES),
        ("hl7v2", HL7_ESCAPES),
        ("fhir", XHTML_IN_JSON_ESCAPES),
        ("prose", NO_ESCAPES),
        ("log", NO_ESCAPES),
    ],
)
def test_span_covers_the_escaped_form(text_format, table):
    rendered = _render([_tricky_field()], text_format)
    (span,) = rendered.spans
    assert rendered.text[span.start : span.end] == escape(TRICKY, table)


def test_xml_ampersand_span_covers_entity():
    field = Field("mrn", "A&B<C", (Span(1, 4, C.ID_RECORD, "gold"),))  # "&B<"
    rendered = _render([field], "xml")
    (span,) = rendered.spans
    assert rendered.text[span.start : span.end] == "&amp;B&lt;"


def test_hl7_span_inside_escaped_field():
    field = Field("patient_name", "Ab|Cd^Ef", (Span(3, 8, C.PERSON, "gold"),))  # "Cd^Ef"
    rendered = _render([field], "hl7v2")
    (span,) = rendered.spans
    assert rendered.text[span.start : span.end] == "Cd\\S\\Ef"
    pid = next(s for s in rendered.text.split("\r") if s.startswith("PID"))
    assert pid.split("|")[5] == "Ab\\F\\Cd\\S\\Ef"


def test_hl7_identifiers_in_pid_3_with_type_codes():
    fields = [
        Field("mrn", "M-1", (Span(0, 3, C.ID_RECORD, "gold:a"),)),
        Field("national_id", "CM123", (Span(0, 5, C.ID_NATIONAL, "gold:b"),)),
        Field("phone", "0772", (Span(0, 4, C.CONTACT_PHONE, "gold:c"),)),
    ]
    pid = next(s for s in _render(fields, "hl7v2").text.split("\r") if s.startswith("PID"))
    parts = pid.split("|")
    assert parts[3] == "M-1^^^POLYDEID^MR~CM123^^^POLYDEID^NI"
    assert parts[13] == "0772"


def test_json_span_with_non_ascii_and_control_chars():
    text = "Ngũgĩ\x01 \u2028wa"
    field = Field("patient_name", text, (Span(0, 5, C.PERSON, "g1"), Span(8, 10, C.PERSON, "g2")))
    rendered = _render([field], "json")
    assert [rendered.text[s.start : s.end] for s in rendered.spans] == ["Ngũgĩ", "wa"]
    assert json.loads(rendered.text)["patient_name"] == text


def test_xml_rejects_characters_xml_cannot_carry_without_echoing_text():
    field = Field("history", "Okello\x01", (Span(0, 6, C.PERSON, "gold"),))
    with pytest.raises(InputError) as info:
        _render([field], "xml")
    assert "Okello" not in str(info.value)
    assert "offset 6" in str(info.value)


def test_log_timestamps_are_not_annotated():
    fields = [Field("admission_date", "2024-03-05", (Span(0, 10, C.DATE, "gold"),))]
    rendered = _render(fields, "log")
    assert len(rendered.spans) == 1
    assert rendered.text.startswith(("20", "19"))
    assert rendered.spans[0].start > 24  # after the line's own timestamp


def test_code_comment_keeps_single_line_values_raw():
    fields = [Field("clinician", 'Okello & "Co"', (Span(0, 6, C.PERSON_THIRD_PARTY, "g"),))]
    rendered = _render(fields, "code")
    assert '# clinician: Okello & "Co"\n' in rendered.text
    ast.parse(rendered.text)


def test_fhir_patient_resource_holds_demographics():
    fields = [
        Field("patient_name", "Aber Grace", (Span(0, 10, C.PERSON, "a"),)),
        Field("dob", "1990-02-03", (Span(0, 10, C.DATE, "b"),)),
        Field("email", "a@x.org", (Span(0, 7, C.CONTACT_OTHER, "c"),)),
        Field("address", "Plot 4", (Span(0, 6, C.LOCATION_ADDRESS, "d"),)),
        Field("mrn", "77", (Span(0, 2, C.ID_RECORD, "e"),)),
        Field("facility", "Mulago", (Span(0, 6, C.LOCATION_FACILITY, "f"),)),
    ]
    bundle = json.loads(_render(fields, "fhir").text)
    resources = {e["resource"]["resourceType"]: e["resource"] for e in bundle["entry"]}
    patient = resources["Patient"]
    assert patient["name"] == [{"text": "Aber Grace"}]
    assert patient["birthDate"] == "1990-02-03"
    assert patient["telecom"] == [{"system": "email", "value": "a@x.org"}]
    assert patient["address"] == [{"text": "Plot 4"}]
    assert patient["identifier"][0]["value"] == "77"
    assert resources["Observation"]["valueString"] == "Mulago"


# --- The offset invariant, as a property for every format --------------------------------------

SPECIALS = ['"', "'", "\\", "&", "<", ">", "|", "^", "~", "\n", "\r", "\t", "😀", "\u0301", "ß"]
TEXT = st.text(
    alphabet=st.one_of(st.characters(blacklist_categories=("Cs", "Cc")), st.sampled_from(SPECIALS)),
    max_size=30,
)
KEYS = ["patient_name", "mrn", "national_id", "phone", "email", "dob", "address",
        "next_of_kin", "facility", "history", "plan", "examination", "blood_group"]  # fmt: skip


@st.composite
def fields_strategy(draw):
    keys = draw(st.lists(st.sampled_from(KEYS), min_size=1, max_size=6, unique=True))
    fields = []
    for i, key in enumerate(keys):
        text = draw(TEXT)
        cuts = sorted(set(draw(st.lists(st.integers(0, len(text)), max_size=6))))
        spans, facts = [], []
        for j, (start, end) in enumerate(itertools.pairwise(cuts)):
            if draw(st.booleans()):
                target = facts if j % 3 == 2 else spans
                label = Fact.VITAL if target is facts else C.PERSON
                target.append(Span(start, end, label, f"gold:{i}:{j}"))
        fields.append(Field(key, text, tuple(spans), tuple(facts)))
    return fields


def _allowed_tables(text_format, field):
    role = KEY_ROLES.get(field.key)
    if text_format == "fhir":
        return [XHTML_IN_JSON_ESCAPES if role and role.narrative else JSON_ESCAPES]
    if text_format == "code":
        return [NO_ESCAPES, JSON_ESCAPES]
    return [
        {
            "table_csv": CSV_ESCAPES,
            "json": JSON_ESCAPES,
            "xml": XML_ESCAPES,
            "hl7v2": HL7_ESCAPES,
        }.get(text_format, NO_ESCAPES)
    ]


def _check_offsets(text_format, fields, rendered):
    by_source = {s.source: s for s in (*rendered.spans, *rendered.facts)}
    given_spans = [(f, s) for f in fields for s in (*f.spans, *f.facts)]
    assert len(by_source) == len(given_spans) == len(rendered.spans) + len(rendered.facts)
    for field, span in given_spans:
        out = by_source[span.source]
        assert out.label is span.label
        for table in _allowed_tables(text_format, field):
            escaped = escape(field.text, table)
            value_start = out.start - len(escape(field.text[: span.start], table))
            span_ok = rendered.text[out.start : out.end] == escape(span.text_of(field.text), table)
            value_ok = rendered.text[value_start : value_start + len(escaped)] == escaped
            if span_ok and value_ok:  # the span lies inside the escaped value, not in syntax
                break
        else:
            pytest.fail(f"span {span!r} of field {field.key} misplaced in {text_format}")
    for spans in (rendered.spans, rendered.facts):
        assert list(spans) == sorted(spans, key=lambda s: (s.start, s.end))


def _strings(node):
    if isinstance(node, dict):
        for value in node.values():
            yield from _strings(value)
    elif isinstance(node, list):
        for value in node:
            yield from _strings(value)
    elif isinstance(node, str):
        yield node


def _parse_csv(text, fields):
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert rows[1] == [f.text for f in fields]


def _parse_json(text, fields):
    data = json.loads(text)
    for field in fields:
        assert data[field.key] == field.text


def _parse_fhir(text, fields):
    values = list(_strings(json.loads(text)))
    divs = [ET.fromstring(v) for v in values if v.startswith("<div")]
    div_texts = [d.text or "" for d in divs]
    for field in fields:
        assert field.text in values or field.text in div_texts


def _parse_xml(text, fields):
    root = ET.fromstring(text)
    found = [el.text or "" for el in root.iter()]
    for field in fields:
        assert field.text in found


def _unescape_hl7(value):
    table = {v: k for k, v in HL7_ESCAPES.items()}
    return re.sub(r"\\(?:E|F|S|T|R|X0D|X0A)\\", lambda m: table[m.group(0)], value)


def _parse_hl7(text, fields):
    assert text.endswith("\r")
    segments = text[:-1].split("\r")
    assert segments[0].startswith("MSH|^~\\&|")
    for segment in segments:
        assert re.fullmatch(r"[A-Z][A-Z0-9]{2}(\|[^\r\n]*)?", segment)
    pid = next(s for s in segments if s.startswith("PID|")).split("|")
    for field in fields:
        if field.key == "patient_name":
            assert _unescape_hl7(pid[5]) == field.text


def _parse_code(text, fields):
    tree = ast.parse(text)
    record = next(n for n in tree.body if isinstance(n, ast.Assign))
    values = ast.literal_eval(record.value)
    for field in fields:
        assert values.get(field.key) == field.text or f"# {field.key}: {field.text}\n" in text


def _parse_chat(text, fields):
    assert text.startswith(label_for("_clinician", "en") + ": ")


PARSERS = {
    "table_csv": _parse_csv,
    "json": _parse_json,
    "fhir": _parse_fhir,
    "xml": _parse_xml,
    "hl7v2": _parse_hl7,
    "code": _parse_code,
    "chat": _parse_chat,
}


@pytest.mark.parametrize("text_format", format_names())
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fields=fields_strategy(), seed=st.integers(0, 2**16))
def test_spans_align_and_output_parses(text_format, fields, seed):
    rendered = _render(fields, text_format, seed=seed)
    _check_offsets(text_format, fields, rendered)
    PARSERS.get(text_format, lambda text, fields: None)(rendered.text, fields)
