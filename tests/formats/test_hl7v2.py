"""HL7 v2 reader: structure, roles by position, escapes, byte preservation and errors.

Every identifier below is invented.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.formats.conftest import GOLDEN, check_golden

from polydeid.api import Deidentifier
from polydeid.core.errors import ConfigError, DecodingError, InputError
from polydeid.core.segments import Segment
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category, Fact
from polydeid.detect.profiles import profile_detectors
from polydeid.formats.base import Document, Field
from polydeid.formats.hl7v2 import Delimiters, Hl7Reader, decode_escapes
from polydeid.formats.registry import detect_format, read_document
from polydeid.lexicon.fields import NULL_VALUES, RoleKind
from polydeid.lexicon.hl7 import hl7_table

HL7 = GOLDEN / "hl7"


def read(text: str, source: str = "msg.hl7") -> Document:
    doc = Hl7Reader().read(text, source=source)
    doc.check()
    return doc


def by_path(doc: Document, path: str, line: int | None = None) -> Field:
    found = [f for f in doc.fields if f.path == path and (line is None or f.line == line)]
    assert len(found) == 1, f"{path}: {len(found)} fields"
    return found[0]


def category(f: Field) -> Category | str:
    return f.role.category if f.role.category is not None else f.role.kind.value


class NameList:
    """A test detector for a few invented names in free text (the rule layer finds no names)."""

    id = "test.names.v1"
    languages: frozenset[str] = frozenset()
    labels: frozenset[Category | Fact] = frozenset({Category.PERSON_THIRD_PARTY})

    def __init__(self, names: Iterable[str]) -> None:
        self.pattern = re.compile("|".join(re.escape(n) for n in names))

    def detect(self, segment: Segment) -> list[Span]:
        return [
            Span(m.start(), m.end(), Category.PERSON_THIRD_PARTY, self.id)
            for m in self.pattern.finditer(segment.text)
        ]


@pytest.fixture(scope="module")
def names_deid() -> Deidentifier:
    """The rule layer plus the name list, ``tag`` policy."""
    names = NameList(["Grace Achieng", "Amina Wanjiru"])
    return Deidentifier(detectors=[*profile_detectors("rules"), names], policy="tag")


# --- goldens --------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["adt_a01.hl7", "custom_delimiters.hl7", "lf_segments.hl7"])
def test_golden(deid, name):
    check_golden(deid, "hl7", name)


def test_golden_observation_notes(names_deid):
    out = check_golden(names_deid, "hl7", "oru_r01.hl7")
    assert b"Grace Achieng" not in out and b"Amina Wanjiru" not in out


def preserved_outside(source: bytes, ranges: list[tuple[int, int]], out: bytes) -> bool:
    """Whether ``out`` is ``source`` with only the (character) ranges rewritten."""
    text = source.decode("utf-8")
    pieces, pos = [], 0
    for start, end in sorted(ranges):
        pieces.append(re.escape(text[pos:start]))
        pos = end
    pieces.append(re.escape(text[pos:]))
    return re.fullmatch("(.*?)".join(pieces), out.decode("utf-8"), re.DOTALL) is not None


@pytest.mark.parametrize(
    "name", ["adt_a01.hl7", "custom_delimiters.hl7", "lf_segments.hl7", "oru_r01.hl7"]
)
def test_every_byte_outside_replaced_components_is_kept(deid, name):
    data = (HL7 / name).read_bytes()
    spans = deid.detect_document(data, format="hl7", source=name)
    out = deid.redact_document(data, format="hl7", source=name).output
    ranges = [fs.raw() for fs in spans]
    assert ranges and preserved_outside(data, ranges, out)
    doc = read_document(data, "hl7", source=name)
    for fs in spans:
        start, end = fs.raw()
        assert fs.field.start <= start < end <= fs.field.end  # inside one component
    # the output still has the same segments, fields and components
    redone = read(out.decode("utf-8"))
    assert [f.path for f in redone.fields] == [f.path for f in doc.fields]


# --- roles by position ----------------------------------------------------------------------

ADT_EXPECTED = [
    ("MSH-7.1", Category.DATE),
    ("EVN-2.1", Category.DATE),
    ("EVN-5.2", Category.PERSON_THIRD_PARTY),
    ("EVN-6.1", Category.DATE),
    ("PID-3[1].1", Category.ID_RECORD),
    ("PID-3[1].4", "skip"),
    ("PID-3[1].5", "skip"),
    ("PID-3[2].1", Category.ID_NATIONAL),
    ("PID-5.1", Category.PERSON),
    ("PID-5.2", Category.PERSON),
    ("PID-5.3", Category.PERSON),
    ("PID-5.4", "skip"),
    ("PID-5.5", "skip"),
    ("PID-6.1", Category.PERSON_THIRD_PARTY),
    ("PID-7.1", Category.DATE),
    ("PID-8.1", Category.SEX),
    ("PID-10.2", Category.TRIBE),
    ("PID-10.3", "skip"),
    ("PID-11.1", Category.LOCATION_ADDRESS),
    ("PID-11.2", Category.LOCATION_ADDRESS),
    ("PID-11.3", Category.LOCATION_ADDRESS),
    ("PID-11.4", Category.LOCATION_ADDRESS),
    ("PID-11.5", Category.LOCATION_ADDRESS),
    ("PID-11.6", "skip"),
    ("PID-11.8", Category.LOCATION_VILLAGE),
    ("PID-13[1].2", "skip"),
    ("PID-13[1].5", "skip"),
    ("PID-13[1].6", Category.CONTACT_PHONE),
    ("PID-13[1].7", Category.CONTACT_PHONE),
    ("PID-13[2].4", Category.CONTACT_OTHER),
    ("PID-14.7", Category.CONTACT_PHONE),
    ("PID-15.1", "skip"),
    ("PID-16.2", "skip"),
    ("PID-17.1", Category.RELIGION),
    ("PID-17.2", Category.RELIGION),
    ("PID-18.1", Category.ID_OTHER),
    ("PID-19.1", Category.ID_NATIONAL),
    ("PID-20.1", Category.ID_OTHER),
    ("PID-20.2", "skip"),
    ("PID-20.3", Category.DATE),
    ("PID-22.2", Category.TRIBE),
    ("PID-23.1", Category.LOCATION_ADDRESS),
    ("PID-30.1", "skip"),
    ("PD1-4.2", Category.PERSON_THIRD_PARTY),
    ("NK1-2.1", Category.PERSON_THIRD_PARTY),
    ("NK1-2.2", Category.PERSON_THIRD_PARTY),
    ("NK1-3.2", "skip"),
    ("NK1-4.1", Category.LOCATION_ADDRESS),
    ("NK1-5.7", Category.CONTACT_PHONE),
    ("NK1-10.1", Category.PROFESSION),
    ("PV1-2.1", "skip"),
    ("PV1-3.1", Category.LOCATION_FACILITY),
    ("PV1-3.2", "skip"),
    ("PV1-3.4", Category.LOCATION_FACILITY),
    ("PV1-3.9", "text"),
    ("PV1-7.1", Category.ID_OTHER),
    ("PV1-7.2", Category.PERSON_THIRD_PARTY),
    ("PV1-7.3", Category.PERSON_THIRD_PARTY),
    ("PV1-7.6", "skip"),
    ("PV1-7.9", "skip"),
    ("PV1-8.4", Category.PERSON_THIRD_PARTY),
    ("PV1-17.2", Category.PERSON_THIRD_PARTY),
    ("PV1-19.1", Category.ID_RECORD),
    ("PV1-44.1", Category.DATE),
    ("GT1-3.1", Category.PERSON_THIRD_PARTY),
    ("GT1-8.1", Category.DATE),
    ("GT1-16.1", Category.ORGANIZATION),
    ("IN1-2.1", "skip"),
    ("IN1-4.1", "skip"),
    ("IN1-8.1", Category.ID_OTHER),
    ("IN1-16.2", Category.PERSON_THIRD_PARTY),
    ("IN1-18.1", Category.DATE),
    ("IN1-19.1", Category.LOCATION_ADDRESS),
    ("IN1-36.1", Category.ID_OTHER),
    ("IN1-49.1", Category.ID_OTHER),
    ("ZPI-2.1", "text"),
]


@pytest.fixture(scope="module")
def adt() -> Document:
    return read_document((HL7 / "adt_a01.hl7").read_bytes(), "hl7", source="adt_a01.hl7")


@pytest.mark.parametrize(("path", "expected"), ADT_EXPECTED, ids=[p for p, _ in ADT_EXPECTED])
def test_adt_field_roles(adt, path, expected):
    assert category(by_path(adt, path)) == expected


ORU_EXPECTED = [
    ("ORC-2.1", Category.ID_OTHER),
    ("ORC-2.2", "skip"),
    ("ORC-9.1", Category.DATE),
    ("ORC-12.2", Category.PERSON_THIRD_PARTY),
    ("ORC-21.1", Category.LOCATION_FACILITY),
    ("OBR-4.1", "skip"),
    ("OBR-4.2", "skip"),
    ("OBR-7.1", Category.DATE),
    ("OBR-16.3", Category.PERSON_THIRD_PARTY),
    ("OBR-22.1", Category.DATE),
    ("OBR-32.1.1", Category.ID_OTHER),
    ("OBR-32.1.2", Category.PERSON_THIRD_PARTY),
    ("OBR-32.1.3", Category.PERSON_THIRD_PARTY),
    ("OBR-32.1.6", "skip"),
]


@pytest.fixture(scope="module")
def oru() -> Document:
    return read_document((HL7 / "oru_r01.hl7").read_bytes(), "hl7", source="oru_r01.hl7")


@pytest.mark.parametrize(("path", "expected"), ORU_EXPECTED, ids=[p for p, _ in ORU_EXPECTED])
def test_oru_field_roles(oru, path, expected):
    assert category(by_path(oru, path)) == expected


def test_observation_value_role_follows_the_value_type(oru):
    lines = {f.line: f for f in oru.fields if f.path.startswith("OBX-2.")}
    kinds = {lines[ln].value: ln for ln in lines}
    assert category(by_path(oru, "OBX-5.1", kinds["NM"])) == "skip"
    assert category(by_path(oru, "OBX-5.1", kinds["CE"])) == "skip"
    assert category(by_path(oru, "OBX-5.2", kinds["CE"])) == "skip"
    assert category(by_path(oru, "OBX-6.1", kinds["NM"])) == "skip"
    assert category(by_path(oru, "OBX-14.1", kinds["NM"])) == Category.DATE
    note = by_path(oru, "OBX-5[1].1", kinds["TX"])
    assert note.role.kind is RoleKind.TEXT and note.role.context == "Clinical note"
    assert by_path(oru, "OBX-5.1", kinds["ST"]).role.context == "Date of illness onset"
    assert by_path(oru, "OBX-5.1", kinds["FT"]).role.kind is RoleKind.TEXT
    nte = [f for f in oru.fields if f.path == "NTE-3.1"]
    assert nte[0].role.kind is RoleKind.TEXT and nte[0].role.context == "Note"


@pytest.mark.parametrize(
    ("value_type", "expected"),
    [("DT", Category.DATE), ("TS", Category.DATE), ("XYZ", "text"), ("", "text"), ("SN", "skip")],
)
def test_observation_value_types(value_type, expected):
    doc = read(f"MSH|^~\\&|A|B|C|D|20240101||ORU^R01|1|P|2.5\rOBX|1|{value_type}|X^Y||20240102\r")
    assert category(by_path(doc, "OBX-5.1")) == expected


def test_codes_units_and_control_ids_are_untouched(deid):
    out = deid.redact_document((HL7 / "oru_r01.hl7").read_bytes(), format="hl7").output.decode()
    for kept in [
        "ORU^R01^ORU_R01|LAB0000981|P|2.5.1",
        "|LABSYS|KNH LAB|EMR|KNH|",
        "2345-7^Glucose [Mass/volume] in Serum or Plasma^LN",
        "||5.8|mmol/L^millimole per liter^UCUM|3.9-6.1|N|||F|",
        "NEG^Negative^L",
        "OBX|2|TX|18783-1^Clinical note^LN||",
        "^EMR|",
        "^^^DR|",
    ]:
        assert kept in out


def test_patient_is_the_first_pid3_identifier(adt):
    assert adt.patient == "48213377"
    two = read(
        "MSH|^~\\&|A|B|C|D|20240101||ADT^A08|1|P|2.5\rPID|1||111^^^H^MR\r"
        "MSH|^~\\&|A|B|C|D|20240101||ADT^A08|2|P|2.5\rPID|1||222^^^H^MR\r"
    )
    assert two.patient is None


def test_null_and_empty_components_are_not_fields():
    doc = read('MSH|^~\\&|A|B|C|D|20240101||ADT^A08|1|P|2.5\rPID|1||""||^^\r')
    assert [f.path for f in doc.fields if f.path.startswith("PID-3")] == []
    assert not [f for f in doc.fields if f.path.startswith("PID-5")]


def test_unknown_and_z_segments_are_free_text():
    doc = read("MSH|^~\\&|A|B|C|D|20240101||ADT^A08|1|P|2.5\rZXY|1|some words^more\r")
    assert {f.path: f.role.kind for f in doc.fields if f.path.startswith("ZXY")} == {
        "ZXY-1.1": RoleKind.TEXT,
        "ZXY-2.1": RoleKind.TEXT,
        "ZXY-2.2": RoleKind.TEXT,
    }


# --- structure --------------------------------------------------------------------------------

BASE = "MSH|^~\\&|A|B|C|D|20240101||ADT^A08|1|P|2.5{0}PID|1||4455^^^H^MR||DOE^JANE{0}"


@pytest.mark.parametrize("newline", ["\r", "\n", "\r\n"], ids=["cr", "lf", "crlf"])
def test_segment_terminators_are_kept(deid, newline):
    text = BASE.format(newline) + "NTE|1||x" + newline
    doc = read(text)
    assert by_path(doc, "PID-5.1").line == 2 and by_path(doc, "NTE-1.1").line == 3
    out = deid.redact_document(text, format="hl7").output
    assert out == text.replace("4455", "[ID_RECORD]").replace(
        "DOE^JANE", "[PERSON]^[PERSON]"
    ).replace("20240101", "[DATE]")


def test_lone_lf_inside_a_cr_file_is_data():
    text = "MSH|^~\\&|A|B|C|D|20240101||ORU^R01|1|P|2.5\rOBX|1|TX|N^Note||line one\nline two\r"
    f = by_path(read(text), "OBX-5.1")
    assert f.value == "line one\nline two" and f.line == 2


def test_mllp_framing_bom_and_blank_lines_are_skipped(deid):
    text = "\ufeff\x0b" + BASE.format("\r") + "\r\n\x1c\r"
    doc = read(text)
    assert by_path(doc, "PID-3.1").value == "4455"
    data = text.encode("utf-8")
    out = deid.redact_document(data, format="hl7").output
    assert out == data.replace(b"4455", b"[ID_RECORD]").replace(
        b"DOE^JANE", b"[PERSON]^[PERSON]"
    ).replace(b"20240101", b"[DATE]")


def test_paths_name_repetitions_components_and_subcomponents():
    doc = read(
        "MSH|^~\\&|A|B|C|D|20240101||ORU^R01|1|P|2.5\r"
        "PID|1||11^^^H^MR~22^^^H^NI||DOE^JANE\r"
        "OBR|1|||||||||||||||||||||||||||||||7&ROE&RICHARD\r"
    )
    paths = [f.path for f in doc.fields]
    assert "PID-3[1].1" in paths and "PID-3[2].5" in paths and "PID-5.2" in paths
    assert {"OBR-32.1.1", "OBR-32.1.2", "OBR-32.1.3"} <= set(paths)
    assert all(f.line == 3 for f in doc.fields if f.path.startswith("OBR"))


def test_fhs_bhs_batches_are_read():
    text = (
        "FHS|^~\\&|A|B|C|D|20240101\rBHS|^~\\&|A|B|C|D|20240101\r"
        + BASE.format("\r")
        + "BTS|1\rFTS|1\r"
    )
    doc = read(text)
    assert category(by_path(doc, "FHS-7.1")) == Category.DATE
    assert category(by_path(doc, "PID-5.1")) == Category.PERSON


def test_detect_format_by_content():
    assert detect_format(None, BASE.format("\r").encode()) == "hl7"
    assert detect_format("x.hl7", b"anything") == "hl7"


# --- escapes and delimiters -----------------------------------------------------------------


def test_escapes_are_decoded_with_offsets():
    text = r"ab\F\c\S\d\T\e\R\f\E\g\.br\h\H\i\N\\X41\\Zxy\\unclosed"
    value, offsets = decode_escapes(text, 0, len(text), Delimiters())
    assert value == "ab|c^d&e~f\\g\nh i A\\Zxy\\\\unclosed"
    assert offsets is not None and len(offsets) == len(value) + 1
    assert text[offsets[2] : offsets[3]] == "\\F\\"
    assert text[offsets[value.index("A")] : offsets[value.index("A") + 1]] == "\\X41\\"
    for i, ch in enumerate(value):
        if ch.isalpha() and ch != "A":
            assert text[offsets[i]] == ch
    assert offsets[-1] == len(text)
    assert decode_escapes("plain", 0, 5, Delimiters()) == ("plain", None)


def test_replacements_escape_the_message_delimiters():
    doc = read("MSH|^~\\&|A|B|C|D|20240101||ADT^A08|1|P|2.5\rPID|1||4455^^^H^MR\r")
    encode = by_path(doc, "PID-3.1").encode
    assert encode("a|b^c~d\\e&f\ng") == "a\\F\\b\\S\\c\\R\\d\\E\\e\\T\\f\\X0A\\g"
    custom = read("MSH!@#$%!A!B!C!D!20240101!!ADT@A08!1!P!2.5\rPID!1!!4455@@@H@MR\r")
    encode = by_path(custom, "PID-3.1").encode
    assert encode("a!b@c|d$e") == "a$F$b$S$c|d$E$e"
    bare = read("MSH|^~|A|B|C|D|20240101||ADT^A08|1|P|2.5\rPID|1||4455^^^H^MR\r")
    assert by_path(bare, "PID-3.1").encode("a|b^c~d\\e") == "a b c d\\e"


def test_escaped_values_are_replaced_whole(deid):
    text = (
        "MSH|^~\\&|A|B|C|D|20240101||ADT^A08|1|P|2.5\r"
        "PID|1||||O\\S\\BRIEN^MARY||||||Plot 4 \\T\\ 5 Rd\r"
    )
    doc = read(text)
    assert by_path(doc, "PID-5.1").value == "O^BRIEN"
    assert by_path(doc, "PID-11.1").value == "Plot 4 & 5 Rd"
    out = deid.redact_document(text, format="hl7").output
    assert out.endswith("PID|1||||[PERSON]^[PERSON]||||||[LOCATION_ADDRESS]\r")


def test_replacement_with_delimiters_is_escaped_in_the_output(tmp_path):
    # a policy whose tag holds the field separator: written as \F\ in the message
    policy = tmp_path / "pipe.toml"
    policy.write_text(
        '[meta]\nname = "pipe"\n[default]\noperator = "tag"\ntemplate = "<{category}|x>"\n',
        encoding="utf-8",
    )
    d = Deidentifier(profile="rules", policy=policy)
    out = d.redact_document(
        "MSH|^~\\&|A|B|C|D|||ADT^A08|1|P|2.5\rPID|1||4455\r", format="hl7"
    ).output
    assert out.endswith("PID|1||<ID_RECORD\\F\\x>\r")


# --- errors -----------------------------------------------------------------------------------

SECRET = "WANJIRU"

MALFORMED = [
    (f"{SECRET}|^~\\&|A\r", "bad.hl7:1:1", "must start with an MSH segment"),
    (f"PID|1||{SECRET}\r", "bad.hl7:1:1", "must start with an MSH segment"),
    (f"\r\n  \rNOTE {SECRET}\r", "bad.hl7:3:1", "must start with an MSH segment"),
    (f"MSH|^~\\&|A\r{SECRET} called\r", "bad.hl7:2:1", "segment name"),
    (f"MSH|^~\\&|A\rPID|1\rpid|{SECRET}\r", "bad.hl7:3:1", "segment name"),
    (f"MSH|^~\\&|A\rPIDX|{SECRET}\r", "bad.hl7:2:1", "segment name"),
    (f"MSH|^~\\&|A\nPID|1\n\nZ1|{SECRET}\n", "bad.hl7:4:1", "segment name"),
    ("MSH\r", "bad.hl7:1:4", "MSH segment ends before its field separator (MSH-1)"),
    (f"MSH||{SECRET}\r", "bad.hl7:1:5", "no encoding characters (MSH-2)"),
    ("MSH|\r", "bad.hl7:1:5", "no encoding characters (MSH-2)"),
    (f"MSH|^^~|{SECRET}\r", "bad.hl7:1:5", "MSH-2 encoding characters are invalid"),
    (f"MSH|ab|{SECRET}\r", "bad.hl7:1:5", "MSH-2 encoding characters are invalid"),
    (f"MSHA^~\\&A{SECRET}\r", "bad.hl7:1:4", "MSH-1 field separator"),
    (f"MSH|^~\\&|A\rBHS|^~\\&|{SECRET}\rBHS|\r", "bad.hl7:3:5", "BHS segment has no"),
    ("", "bad.hl7:1", "no HL7 v2 segments"),
    (" \r\n", "bad.hl7:1", "no HL7 v2 segments"),
]


@pytest.mark.parametrize(
    ("text", "location", "message"), MALFORMED, ids=[f"case{i}" for i in range(len(MALFORMED))]
)
def test_malformed_input_is_located_without_content(text, location, message):
    with pytest.raises(InputError) as info:
        Hl7Reader().read(text, source="bad.hl7")
    error = info.value
    assert error.location == location
    assert message in error.message
    assert SECRET not in str(error) and SECRET[:3] not in str(error)
    assert "NOTE" not in str(error) and "called" not in str(error)


def test_unknown_reader_options_are_refused():
    with pytest.raises(ConfigError):
        Hl7Reader(delimiter="|")


# --- encodings --------------------------------------------------------------------------------


def test_latin1_fallback_names_the_encoding(deid):
    text = (
        "MSH|^~\\&|A|B|C|D|20240101||ADT^A08|1|P|2.5||||||8859/1\r"
        "PID|1||4455^^^H^MR||MÜLLER^RENÉ\rNTE|1||Café notes\r"
    )
    data = text.encode("iso-8859-1")
    reader = Hl7Reader()
    decoded, encoding = reader.decode(data, source="l1.hl7")
    assert decoded == text and encoding == "iso-8859-1"
    out = deid.redact_document(data, format="hl7", source="l1.hl7").output
    assert out == data.replace("MÜLLER^RENÉ".encode("iso-8859-1"), b"[PERSON]^[PERSON]").replace(
        b"4455", b"[ID_RECORD]"
    ).replace(b"20240101", b"[DATE]")
    doc = read_document(data, "hl7", source="l1.hl7")
    assert by_path(doc, "PID-5.1").encode("Ōtsuka 大") == "Otsuka ?"


def test_undeclared_non_utf8_is_a_located_decoding_error():
    data = "MSH|^~\\&|A|B|C|D|20240101||ADT^A08|1|P|2.5\rPID|1||||MÜLLER\r".encode("iso-8859-1")
    with pytest.raises(DecodingError) as info:
        Hl7Reader().decode(data, source="x.hl7")
    assert "x.hl7:1" in str(info.value) and "LLER" not in str(info.value)


def test_table_loads_and_every_type_is_known():
    table = hl7_table()
    assert {"MSH", "PID", "NK1", "PV1", "OBR", "OBX", "ORC", "NTE", "GT1", "IN1", "MRG"} <= set(
        table.segments
    )
    assert table.identifier_types["NI"] == "ID_NATIONAL"


# --- the property: random ids and phones in PID-3, PID-13 and NK1-5 are all replaced ----------

TEMPLATE = (
    "MSH|^~\\&|APP|FAC|RCV|FAC|202401021030||ADT^A01^ADT_A01|CTRL1|P|2.5.1\r"
    "PID|1||{mrn}^^^HOSP^MR||DOE^JANE||19800101|F|||||{phone}^PRN^PH\r"
    "NK1|1|DOE^JOHN|SPO^Spouse^HL70063||^PRN^PH^^1^{area}^{local}\r"
)
EXPECTED = (
    TEMPLATE.format(
        mrn="[ID_RECORD]", phone="[CONTACT_PHONE]", area="[CONTACT_PHONE]", local="[CONTACT_PHONE]"
    )
    .replace("202401021030", "[DATE]")
    .replace("DOE^JANE", "[PERSON]^[PERSON]")
    .replace("19800101", "[DATE]")
    .replace("DOE^JOHN", "[PERSON_THIRD_PARTY]^[PERSON_THIRD_PARTY]")
)

_ESCAPE = Hl7Reader().read(TEMPLATE, source="t").fields[0].encode


def _identifier_like(value: str) -> bool:
    return value == value.strip() and value.casefold() not in NULL_VALUES


ids = st.text(
    alphabet=st.characters(codec="utf-8", categories=("L", "N", "P", "S", "Zs")),
    min_size=1,
    max_size=24,
).filter(_identifier_like)
phones = st.from_regex(
    r"(\+[0-9]{1,3} )?\(?[0-9]{2,4}\)?[ -]?[0-9]{3}[ -]?[0-9]{3,4}", fullmatch=True
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(mrn=ids, phone=phones, area=st.from_regex(r"[0-9]{1,4}", fullmatch=True), local=phones)
def test_random_ids_and_phones_are_all_replaced(deid, mrn, phone, area, local):
    text = TEMPLATE.format(mrn=_ESCAPE(mrn), phone=_ESCAPE(phone), area=area, local=_ESCAPE(local))
    doc = read(text)
    assert by_path(doc, "PID-3.1").value == mrn
    assert by_path(doc, "NK1-5.7").value == local
    assert deid.redact_document(text, format="hl7").output == EXPECTED


def hl7_segment(name: str, fields: dict[int, str]) -> str:
    return name + "|" + "|".join(fields.get(i, "") for i in range(1, max(fields) + 1))


MORE = "\r".join(
    [
        "MSH|^~\\&|A|B|C|D|20240101||ADT^A01|1|P|2.5.1",
        hl7_segment(
            "PID",
            {
                2: "P77^^^H",
                3: "X1^^^H^MR",
                4: "ALT9^^^H",
                9: "ROE^JAY",
                21: "M55^^^H^MR",
                29: "202402031415+0300",
                39: "KAL^Kalenjin^L",
                40: "^NET^Internet^jr@example.org",
            },
        ),
        hl7_segment("NK1", {2: "ROE^ANN", 6: "^WPN^PH^^^20^555123", 16: "19700101"}),
        hl7_segment("PV1", {9: "C1^CONSULT^CARL", 45: "20240210", 50: "ALTV^^^H"}),
        hl7_segment("OBR", {8: "20240201", 34: "T1&TECH&TINA", 35: "TR1&TYPE&TOM"}),
        hl7_segment("ORC", {10: "E1^ENTER^ED", 14: "555 0100"}),
        hl7_segment("MRG", {1: "OLD1^^^H^MR", 3: "ACC1", 7: "ROE^JAYNE"}),
        hl7_segment("AL1", {3: "PCN^Penicillin^L", 5: "rash after dose", 6: "20200101"}),
        "",
    ]
)
MORE_EXPECTED = [
    ("PID-2.1", Category.ID_RECORD),
    ("PID-2.4", "skip"),
    ("PID-4.1", Category.ID_RECORD),
    ("PID-9.1", Category.PERSON),
    ("PID-21.1", Category.ID_RECORD),
    ("PID-29.1", Category.DATE),
    ("PID-39.2", Category.TRIBE),
    ("PID-40.4", Category.CONTACT_OTHER),
    ("NK1-2.2", Category.PERSON_THIRD_PARTY),
    ("NK1-6.6", Category.CONTACT_PHONE),
    ("NK1-6.7", Category.CONTACT_PHONE),
    ("NK1-16.1", Category.DATE),
    ("PV1-9.1", Category.ID_OTHER),
    ("PV1-9.3", Category.PERSON_THIRD_PARTY),
    ("PV1-45.1", Category.DATE),
    ("PV1-50.1", Category.ID_RECORD),
    ("OBR-8.1", Category.DATE),
    ("OBR-34.1.1", Category.ID_OTHER),
    ("OBR-34.1.3", Category.PERSON_THIRD_PARTY),
    ("OBR-35.1.2", Category.PERSON_THIRD_PARTY),
    ("ORC-10.2", Category.PERSON_THIRD_PARTY),
    ("ORC-14.1", Category.CONTACT_PHONE),
    ("MRG-1.1", Category.ID_RECORD),
    ("MRG-3.1", Category.ID_OTHER),
    ("MRG-7.2", Category.PERSON),
    ("AL1-3.2", "skip"),
    ("AL1-5.1", "text"),
    ("AL1-6.1", Category.DATE),
]


@pytest.mark.parametrize(("path", "expected"), MORE_EXPECTED, ids=[p for p, _ in MORE_EXPECTED])
def test_more_field_roles(path, expected):
    assert category(by_path(read(MORE), path)) == expected


def test_timestamp_with_offset_is_replaced_whole(deid):
    out = deid.redact_document(MORE, format="hl7").output
    assert "|[DATE]|" in out and "+0300" not in out and "202402031415" not in out


def test_surrogate_policy_keeps_the_structure():
    """Surrogates replace each component in place; HL7 TS dates (``19800302``) are not read
    by the date shifter, which falls back to a tag, so no original date is left."""
    d = Deidentifier(profile="rules", policy="surrogate", key=b"k" * 32)
    data = (HL7 / "adt_a01.hl7").read_bytes()
    before = read_document(data, "hl7", source="adt_a01.hl7")
    out = d.redact_document(data, format="hl7", source="adt_a01.hl7").output
    after = read(out.decode("utf-8"))
    assert [f.path for f in after.fields] == [f.path for f in before.fields]
    for old, new in zip(before.fields, after.fields, strict=True):
        if old.role.kind is RoleKind.VALUE and old.role.category is not Category.SEX:
            assert new.value != old.value, old.path
        if old.role.kind is RoleKind.SKIP:
            assert new.value == old.value, old.path
    assert b"19800302" not in out and b"202403151030" not in out


@pytest.mark.parametrize(
    ("field", "path", "expected"),
    [
        ("PV1|1|I|||||Dr Jane Roe", "PV1-7.1", Category.PERSON_THIRD_PARTY),
        ("PV1|1|I|||||D1234", "PV1-7.1", Category.ID_OTHER),
        ("PV1|1|I|||||D1234^ROE", "PV1-7.1", Category.ID_OTHER),
        ("OBR|1|||||||||||||||||||||||||||||||Jane Roe", "OBR-32.1", Category.PERSON_THIRD_PARTY),
        ("PID|1||||||||||||jr@example.org", "PID-13.1", Category.CONTACT_OTHER),
        ("PID|1||||||||||||0722 123 456", "PID-13.1", Category.CONTACT_PHONE),
    ],
    ids=["lone-name", "lone-id", "id-with-name", "lone-name-sub", "email-in-xtn1", "phone"],
)
def test_shape_refinements(field, path, expected):
    doc = read(f"MSH|^~\\&|A|B|C|D|20240101||ADT^A01|1|P|2.5\r{field}\r")
    assert category(by_path(doc, path)) == expected


def test_ascii_data_takes_the_declared_charset():
    data = b"MSH|^~\\&|A|B|C|D|20240101||ADT^A08|1|P|2.5||||||8859/1\rPID|1||||DOE\r"
    assert Hl7Reader().decode(data, source="a.hl7")[1] == "iso-8859-1"
    assert Hl7Reader().decode(data.replace(b"8859/1", b""), source="a.hl7")[1] == "utf-8"


@settings(max_examples=200, deadline=None)
@given(
    body=st.text(alphabet="AZP1D|^~\\&\r\n \x0b\x1c.XHNF0é", max_size=120),
    header=st.sampled_from(["MSH|^~\\&|", "MSH|^~|", "MSH#$%!@#", "PID|", ""]),
)
def test_any_input_reads_or_fails_located(body, header):
    text = header + body
    try:
        doc = Hl7Reader().read(text, source="fuzz.hl7")
    except InputError as exc:
        assert exc.location is not None and exc.location.startswith("fuzz.hl7:")
        return
    doc.check()
    for f in doc.fields:
        assert f.start < f.end and "\r" not in text[f.start : f.end]
        if f.offsets is None:
            assert text[f.start : f.end] == f.value
        else:
            assert f.offsets[0] == f.start and f.offsets[-1] == f.end
            assert list(f.offsets) == sorted(set(f.offsets))


def test_hex_data_decodes_in_the_message_charset():
    text = r"a\X30373132\b\XC3A9\c\X0D0A\d\XFF\e\X1B\f\X3\g"
    value, offsets = decode_escapes(text, 0, len(text), Delimiters())
    # several characters, a UTF-8 sequence and a line break are decoded; a byte that is not
    # UTF-8, a control character and an odd number of digits are kept as written
    assert value == "a0712béc\nd\\XFF\\e\\X1B\\f\\X3\\g"
    assert offsets is not None
    first = value.index("0712")
    assert offsets[first : first + 4] == (1,) * 4  # the characters of one escape share it
    latin = decode_escapes("\\XE9\\", 0, 5, Delimiters(), "latin-1")
    assert latin[0] == "é"


def test_a_range_ending_inside_a_hex_escape_covers_the_whole_escape():
    text = "MSH|^~\\&|A|B|C|D|20240101||ORU^R01|1|P|2.5\rNTE|1||call \\X30373132\\ 345678\r"
    doc = read(text)
    f = by_path(doc, "NTE-3.1")
    assert f.value == "call 0712 345678"
    start, end = f.raw(5, 7)  # "07" of "0712"
    assert text[start:end] == "\\X30373132\\"
    start, end = f.raw(7, 16)  # "12 345678"
    assert text[start:end] == "\\X30373132\\ 345678"


def test_two_replacements_inside_one_escape_are_merged():
    from polydeid.formats.base import splice

    text = "ab\\X3132\\cd"
    assert splice(text, [(2, 9, "[A]"), (2, 11, "[B]")]) == "ab[A][B]"
    assert splice(text, [(0, 1, "x"), (3, 4, "y")]) == "xb\\y3132\\cd"


def test_hex_escaped_phone_in_a_note_is_replaced(deid):
    text = "MSH|^~\\&|A|B|C|D|20240101||ORU^R01|1|P|2.5\rNTE|1||call \\X30373132\\ 345678\r"
    out = deid.redact_document(text, format="hl7").output
    assert out.endswith("NTE|1||call [CONTACT_PHONE]\r")
