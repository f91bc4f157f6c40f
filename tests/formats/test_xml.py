"""XML and HL7 CDA readers: goldens, byte preservation, safety (XXE, billion laughs), escaping,
encodings, and a property test over identifiers placed in CDA header attributes.

Every identifier in these tests is invented.
"""

from __future__ import annotations

import re
import sys
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from xml.sax.saxutils import escape

import defusedxml.ElementTree as DET
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from polydeid.api import Deidentifier
from polydeid.core.errors import ConfigError, DecodingError, InputError
from polydeid.core.taxonomy import Category
from polydeid.engine import read_document
from polydeid.formats.registry import detect_format
from polydeid.formats.xml import (
    CdaReader,
    XmlReader,
    cda_rules,
    decode_references,
    escape_attribute,
    escape_cdata,
    escape_comment,
    escape_text,
)
from polydeid.lexicon.fields import NULL_VALUES, RoleKind

from .conftest import GOLDEN, check_golden

GOLDENS = [
    ("xml", "referral.xml"),
    ("xml", "entities.xml"),
    ("xml", "namespaces.xml"),
    ("cda", "ccd.xml"),
]


def _read(data: bytes, fmt: str = "xml", **options: object):
    return read_document(data, fmt, source="in.xml", **options)


# --- goldens and byte preservation ----------------------------------------------------------


@pytest.mark.parametrize(("fmt", "name"), GOLDENS, ids=[f"{f}-{n}" for f, n in GOLDENS])
def test_golden(deid: Deidentifier, fmt: str, name: str) -> None:
    out = check_golden(deid, fmt, name)
    DET.fromstring(out)  # still well-formed


@pytest.mark.parametrize(("fmt", "name"), GOLDENS, ids=[f"{f}-{n}" for f, n in GOLDENS])
def test_bytes_outside_replacements_unchanged(deid: Deidentifier, fmt: str, name: str) -> None:
    data = (GOLDEN / fmt / name).read_bytes()
    doc = _read(data, fmt)
    doc.check()
    result = deid.processor().redact(doc, lang="en")
    assert result.labels, "the golden input has identifiers"
    ranges = sorted(fs.raw() for fs in result.spans)
    pieces, pos = [], 0
    for start, end in ranges:
        pieces.append(doc.text[pos:start])
        pos = max(pos, end)
    pieces.append(doc.text[pos:])
    pattern = "(?:.+?)".join(re.escape(p) for p in pieces)
    assert re.fullmatch(pattern, result.text, re.DOTALL)


def _attributes(root: ET.Element) -> Iterator[tuple[str, str, str]]:
    for element in root.iter():
        for key, value in element.attrib.items():
            yield element.tag, key, value


def test_cda_codes_roots_and_templates_never_change(deid: Deidentifier) -> None:
    data = (GOLDEN / "cda" / "ccd.xml").read_bytes()
    out = deid.redact_document(data, format="cda").output
    before, after = DET.fromstring(data), DET.fromstring(out)
    kept = {"root", "code", "codeSystem", "codeSystemName", "unit", "classCode", "moodCode"}
    pairs = list(zip(_attributes(before), _attributes(after), strict=True))
    assert pairs
    for (tag, key, old), (tag2, key2, new) in pairs:
        assert (tag, key) == (tag2, key2)
        if key in kept or tag.endswith(("}templateId", "}typeId")):
            assert old == new, (tag, key)
    quantities = [e for e in after.iter() if e.tag.endswith("}low") and e.get("unit")]
    assert [e.get("value") for e in quantities] == ["90"]


def test_cda_roles_and_patient() -> None:
    doc = _read((GOLDEN / "cda" / "ccd.xml").read_bytes(), "cda")
    by_path = {f.path: f for f in doc.fields}
    ssn = by_path["/ClinicalDocument/recordTarget/patientRole/id[2]/@extension"]
    assert ssn.role.category is Category.ID_NATIONAL
    npi = by_path["/ClinicalDocument/author/assignedAuthor/id/@extension"]
    assert npi.role.category is Category.ID_OTHER
    mrn = by_path["/ClinicalDocument/recordTarget/patientRole/id/@extension"]
    assert mrn.role.category is Category.ID_RECORD
    phone = by_path["/ClinicalDocument/recordTarget/patientRole/telecom/@value"]
    assert phone.role.category is Category.CONTACT_PHONE
    assert doc.text[phone.start - 5 : phone.start] == '"tel:'  # the scheme stays
    given = by_path["/ClinicalDocument/recordTarget/patientRole/patient/name/given[2]/text()"]
    assert given.role.category is Category.PERSON
    guardian = "/ClinicalDocument/recordTarget/patientRole/patient/guardian/guardianPerson"
    assert by_path[guardian + "/name/given/text()"].role.category is Category.PERSON_THIRD_PARTY
    prefix = by_path["/ClinicalDocument/recordTarget/patientRole/patient/name/prefix/text()"]
    assert prefix.role.kind is RoleKind.TEXT
    assert all("@root" not in p and "templateId" not in p for p in by_path)
    assert doc.patient is not None and doc.patient.startswith("cda:2.16.840.1.113883.19.5.99999.2")


def test_paths_and_reprs_never_hold_values() -> None:
    doc = _read((GOLDEN / "cda" / "ccd.xml").read_bytes(), "cda")
    for f in doc.fields:
        if f.role.kind is RoleKind.VALUE and len(f.value.strip()) > 3:
            assert f.value.strip() not in f.path and f.value.strip() not in repr(f)


def test_field_values_and_offsets_are_consistent() -> None:
    for fmt, name in GOLDENS:
        doc = _read((GOLDEN / fmt / name).read_bytes(), fmt)
        doc.check()
        starts = [f.start for f in doc.fields]
        assert starts == sorted(starts)
        for f in doc.fields:
            if f.offsets is None:
                assert doc.text[f.start : f.end] == f.value
            else:
                assert (f.offsets[0], f.offsets[-1]) == (f.start, f.end)
            assert f.line == doc.text.count("\n", 0, f.start) + 1


# --- escaping and references ----------------------------------------------------------------


def test_references_are_decoded_with_offsets() -> None:
    text = "<a>x&amp;y&#233;&#x41;z</a>"
    value, offsets = decode_references(text, 3, len(text) - 4)
    assert value == "x&yéAz"
    assert offsets == (3, 4, 9, 10, 16, 22, 23)


def test_escaping() -> None:
    assert escape_text("a<b>&c") == "a&lt;b&gt;&amp;c"
    assert escape_attribute("say \"hi\" & 'bye'", '"') == "say &quot;hi&quot; &amp; 'bye'"
    assert escape_attribute("it's\n", "'") == "it&apos;s&#10;"
    assert "]]>" not in escape_cdata("a]]b").replace("]]]]><![CDATA[>", "")
    assert escape_cdata("x]]>y") == "x]]]]><![CDATA[>y"
    assert escape_comment("a--b-") == "a- -b- "


def test_replacements_are_escaped_for_their_place(deid: Deidentifier) -> None:
    data = (
        b"<r><patient name='A &amp; B' id=\"X1\"/><note><![CDATA[MRN: 12345678]]></note>"
        b"<comment>MRN: 87654321</comment></r>"
    )
    doc = _read(data)
    encoders = {f.path: f.encode for f in doc.fields}
    assert encoders["/r/patient/@name"]("O'Neil & <Co>") == "O&apos;Neil &amp; &lt;Co&gt;"
    assert encoders["/r/patient/@id"]('say "x"') == "say &quot;x&quot;"
    assert encoders["/r/note/text()"]("]]>") == "]]]]><![CDATA[>"
    assert encoders["/r/comment/text()"]("<&>") == "&lt;&amp;&gt;"
    out = deid.redact_document(data, format="xml").output
    assert out == (
        b"<r><patient name='[PERSON]' id=\"[ID_RECORD]\"/><note><![CDATA[MRN: [ID_RECORD]]]>"
        b"</note><comment>MRN: [ID_RECORD]</comment></r>"
    )


# --- encodings ------------------------------------------------------------------------------


def test_utf8_bom_is_kept(deid: Deidentifier) -> None:
    data = "\ufeff<patient><name>Zawadi</name></patient>".encode()
    out = deid.redact_document(data, format="xml").output
    assert out == "\ufeff<patient><name>[PERSON]</name></patient>".encode()


def test_declared_latin1_round_trips(deid: Deidentifier) -> None:
    text = (
        '<?xml version="1.0" encoding="ISO-8859-1"?>\n'
        "<patient><name>José</name><c>café</c></patient>"
    )
    out = deid.redact_document(text.encode("latin-1"), format="xml").output
    assert out == text.replace("José", "[PERSON]").encode("latin-1")
    doc = _read(text.encode("latin-1"))
    name = next(f for f in doc.fields if f.path == "/patient/name/text()")
    assert name.encode("Ωmega") == "&#x3A9;mega"  # outside Latin-1: a character reference


def test_utf16_with_bom_round_trips(deid: Deidentifier) -> None:
    text = '\ufeff<?xml version="1.0" encoding="UTF-16"?><patient><name>Zawadi</name></patient>'
    out = deid.redact_document(text.encode("utf-16-le"), format="xml").output
    assert out == text.replace("Zawadi", "[PERSON]").encode("utf-16-le")


def test_bad_bytes_are_located() -> None:
    with pytest.raises(DecodingError) as info:
        _read(b"<a>\n<b>\xff</b></a>")
    assert "in.xml:2" in str(info.value)


# --- safety ---------------------------------------------------------------------------------

_WATCHED: set[str] = set()
_OPENED: list[str] = []
_HOOKED = False


def _watch_opens(path: Path) -> None:
    global _HOOKED
    if not _HOOKED:

        def hook(event: str, args: tuple[object, ...]) -> None:
            if event == "open" and _WATCHED and args and str(args[0]) in _WATCHED:
                _OPENED.append(str(args[0]))

        sys.addaudithook(hook)
        _HOOKED = True
    _WATCHED.add(str(path))


def test_external_entity_is_refused_and_never_read(tmp_path: Path, deid: Deidentifier) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOPSECRETCONTENT")
    _watch_opens(secret)
    data = (
        f'<?xml version="1.0"?>\n<!DOCTYPE r [\n  <!ENTITY x SYSTEM "{secret.as_uri()}">\n]>\n'
        "<r>&x;</r>"
    ).encode()
    with pytest.raises(InputError) as info:
        deid.redact_document(data, format="xml", source="evil.xml")
    message = str(info.value)
    assert "forbidden entity declaration" in message
    assert "evil.xml:3:3" in message
    assert "TOPSECRET" not in message and "secret.txt" not in message
    assert _OPENED == []


def test_external_dtd_and_parameter_entities_are_refused() -> None:
    with pytest.raises(InputError, match=r"in\.xml:1:1: forbidden external DTD"):
        _read(b'<!DOCTYPE r SYSTEM "http://example.invalid/r.dtd"><r/>')
    with pytest.raises(InputError, match="forbidden entity declaration"):
        _read(b'<!DOCTYPE r [<!ENTITY % p SYSTEM "http://example.invalid/p.ent"> %p;]><r/>')


def test_billion_laughs_is_refused() -> None:
    lol = "".join(
        f'  <!ENTITY lol{i} "{("&lol" + str(i - 1) + ";") * 10}">\n' for i in range(1, 10)
    )
    data = f'<?xml version="1.0"?>\n<!DOCTYPE lolz [\n  <!ENTITY lol0 "lol">\n{lol}]>\n'
    data += "<lolz>&lol9;</lolz>"
    with pytest.raises(InputError, match=r"in\.xml:3:3: forbidden entity declaration"):
        _read(data.encode())


def test_internal_dtd_without_entities_is_read() -> None:
    data = (
        b'<!DOCTYPE r [<!ELEMENT r ANY><!-- ]> --><!ATTLIST r a CDATA "x]">]><r><mrn>A1</mrn></r>'
    )
    doc = _read(data)
    # the subset's comment is free text like any comment; its "]>" does not end the DOCTYPE
    assert [f.path for f in doc.fields] == ["/comment()", "/r/mrn/text()"]


@pytest.mark.parametrize(
    ("data", "where", "what"),
    [
        (b"<a>\n  <b>Secret Name</a>", "in.xml:2:19", "mismatched tag"),
        (b"<a>Secret &nbsp; Name</a>", "in.xml:1:11", "undefined entity"),
        (b"<a x='Secret' x='Name'/>", "in.xml:1:15", "duplicate attribute"),
        (b"<a>Secret</a><b/>", "in.xml:1:14", "junk after document element"),
        (b"<a>Secret & Name</a>", "in.xml:1:12", "not well-formed (invalid token)"),
        (b"", "in.xml:1:1", "no element found"),
    ],
    ids=["mismatched", "undefined-entity", "duplicate-attribute", "junk", "bare-amp", "empty"],
)
def test_malformed_xml_is_located_without_content(data: bytes, where: str, what: str) -> None:
    with pytest.raises(InputError) as info:
        _read(data)
    message = str(info.value)
    assert f"{where}: {what}" in message
    assert "Secret" not in message and "Name" not in message


def test_unknown_option_is_refused() -> None:
    with pytest.raises(ConfigError):
        XmlReader(columns={"a": "PERSON"})


# --- structure ------------------------------------------------------------------------------


def test_deep_and_wide_documents_are_scanned_iteratively() -> None:
    depth = 3000
    deep = ("<a>" * depth + "<mrn>A12345</mrn>" + "</a>" * depth).encode()
    doc = _read(deep)
    assert len(doc.fields) == 1 and doc.fields[0].path.count("/") == depth + 2
    wide = "<r>" + "".join(f"<patient><name>N{i}</name></patient>" for i in range(5000)) + "</r>"
    doc = _read(wide.encode())
    assert len(doc.fields) == 5000
    assert doc.fields[-1].path == "/r/patient[5000]/name/text()"


def test_whitespace_and_skipped_attributes_are_not_fields() -> None:
    data = (
        b'<r xmlns="urn:x" xmlns:q="urn:q" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"'
        b' xsi:schemaLocation="urn:x x.xsd" xml:lang="en">\n  <q:patient q:name="Imani"/>\n  '
        b"<![CDATA[  ]]>\n</r>"
    )
    doc = _read(data)
    assert [(f.path, f.role.category) for f in doc.fields] == [
        ("/r/q:patient/@q:name", Category.PERSON)
    ]


def test_known_names_reach_the_narrative(deid: Deidentifier) -> None:
    data = (
        b"<r><patient><name>Imani Njoroge</name></patient><note>Imani Njoroge is well.</note></r>"
    )
    assert b"<note>[PERSON] is well.</note>" in deid.redact_document(data, format="xml").output


def test_cda_is_detected_by_namespace() -> None:
    data = (GOLDEN / "cda" / "ccd.xml").read_bytes()
    assert detect_format("x.xml", data) == "cda"
    assert isinstance(CdaReader(), XmlReader)
    assert cda_rules().root_category("2.16.840.1.113883.4.330.404") is Category.ID_NATIONAL


# --- property: identifiers in CDA header attributes are always replaced ---------------------

_CDA = """<?xml version="1.0" encoding="UTF-8"?>
<ClinicalDocument xmlns="urn:hl7-org:v3" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
  <templateId root="2.16.840.1.113883.10.20.22.1.1" extension="2015-08-01"/>
  <recordTarget>
    <patientRole>
      <id root="2.16.840.1.113883.19.5" extension="{ident}"/>
      <telecom value="{scheme}{phone}" use="HP"/>
      <patient>
        <birthTime value="{date}"/>
      </patient>
    </patientRole>
  </recordTarget>
</ClinicalDocument>
"""
_ID_CHARS = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnpqrstuvwxyz0123456789-_/.&<>'\""
_idents = st.text(alphabet=_ID_CHARS, min_size=1, max_size=16).filter(
    lambda s: any(c.isalnum() for c in s) and s.strip().casefold() not in NULL_VALUES
)
_phones = st.from_regex(
    r"\+?[0-9]{1,3}[ -]?\(?[0-9]{2,4}\)?[ -]?[0-9]{3,4}[ -]?[0-9]{3,4}", fullmatch=True
)
_times = st.sampled_from(["", "1030", "103015", "103015+0300", "0000-0500"])
_dates = st.builds(lambda d, t: d.strftime("%Y%m%d") + t, st.dates(), _times)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ident=_idents, phone=_phones, date=_dates, scheme=st.sampled_from(["tel:", "fax:", ""]))
def test_header_identifiers_are_always_replaced(
    deid: Deidentifier, ident: str, phone: str, date: str, scheme: str
) -> None:
    quote = {'"': "&quot;"}
    data = _CDA.format(
        ident=escape(ident, quote), phone=escape(phone, quote), date=date, scheme=scheme
    ).encode()
    out = deid.redact_document(data, format="cda").output
    root = DET.fromstring(out)
    ns = {"h": "urn:hl7-org:v3"}
    role = root.find("h:recordTarget/h:patientRole", ns)
    assert role is not None
    assert role.find("h:id", ns).get("extension") == "[ID_RECORD]"
    assert role.find("h:telecom", ns).get("value") == f"{scheme}[CONTACT_PHONE]"
    assert role.find("h:patient/h:birthTime", ns).get("value") == "[DATE]"
    assert root.find("h:templateId", ns).get("extension") == "2015-08-01"


def test_comments_are_scanned_as_text(deid: Deidentifier) -> None:
    data = b"<!-- export 2024-03-05 -->\n<r><!-- MRN: 12345678 --><a>x</a><!----></r>"
    doc = _read(data)
    comments = [f for f in doc.fields if "comment()" in f.path]
    assert [f.path for f in comments] == ["/comment()", "/r/comment()"]
    assert all(f.role.kind is RoleKind.TEXT for f in comments)
    out = deid.redact_document(data, format="xml").output
    assert out == b"<!-- export [DATE] -->\n<r><!-- MRN: [ID_RECORD] --><a>x</a><!----></r>"


def test_cda_typed_values(deid: Deidentifier) -> None:
    data = b"""<ClinicalDocument xmlns="urn:hl7-org:v3"
 xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><component><section><entry>
<observation><value xsi:type="TS" value="20230101"/></observation>
<observation><value xsi:type="IVL_TS"><low value="20230102"/></value></observation>
<observation><value xsi:type="PQ" value="20230103" unit="mg"/></observation>
<observation><value xsi:type="IVL_PQ"><low value="20230104" unit="mg"/></value></observation>
<observation><value xsi:type="TEL" value="mailto:someone@example.org"/></observation>
<substanceAdministration><effectiveTime xsi:type="PIVL_TS"><period value="8" unit="h"/>
</effectiveTime></substanceAdministration>
<observation><id root="2.16.840.1.113883.4.330.404" extension="AK1234567"/>
<id root="1.2.3" extension="LOCAL-77"/><id root="2.16.840.1.113883.4.3.25" extension="S99"/>
<participant><participantRole><telecom value="0712 345 678"/><telecom value="someone@x"/>
</participantRole></participant></observation>
</entry></section></component></ClinicalDocument>"""
    out = deid.redact_document(data, format="cda").output.decode()
    assert 'value="[DATE]"/></observation>' in out
    assert '<low value="[DATE]"/>' in out
    assert 'value="20230103" unit="mg"' in out and 'value="20230104" unit="mg"' in out
    assert 'value="mailto:[CONTACT_OTHER]"' in out
    assert '<period value="8" unit="h"/>' in out
    assert 'extension="[ID_NATIONAL]"' in out
    assert 'extension="[ID_RECORD]"' in out and 'extension="[ID_OTHER]"' in out
    assert '<telecom value="[CONTACT_PHONE]"/>' in out
    assert '<telecom value="[CONTACT_OTHER]"/>' in out


_PIECES = st.sampled_from(
    [
        "<a>", "</a>", "<b x='1'>", "</b>", "<c/>", "&amp;", "&#65;", "&#x42;", "&bad;", "&",
        "<![CDATA[", "]]>", "<!--", "-->", "<?pi x?>", "<!DOCTYPE a>", "\x00", "'", '"', "<",
        "<!DOCTYPE a [<!ELEMENT a ANY>]>", "text", " ", "\r\n", "é", ">", "=", "\ufeff",
        "<a b=\"&lt;\" c='&quot;'>", "<p:a xmlns:p='u'>", "</p:a>", "<?xml version='1.0'?>",
        "<id extension='X1' root='2.16.840.1.113883.4.1'/>",
    ]
)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(parts=st.lists(_PIECES, max_size=14))
def test_any_input_is_read_or_refused_with_a_located_error(parts: list[str]) -> None:
    text = "".join(parts)
    for reader in (XmlReader(), CdaReader()):
        try:
            doc = reader.read(text, source="f.xml")
        except InputError as exc:
            assert exc.location is not None and exc.location.startswith("f.xml:")
            assert exc.message != "not well-formed XML"  # the scanner agrees with expat
            continue
        doc.check()
        for f in doc.fields:
            if f.offsets is None:
                assert text[f.start : f.end] == f.value
            else:
                assert len(f.offsets) == len(f.value) + 1


# --- processing instructions ---------------------------------------------------------------------


def test_processing_instructions_are_text_but_not_the_declaration() -> None:
    text = (
        '<?xml version="1.0"?>\n<?remark top one?>\n<a><?remark  inner ?><?empty?>'
        "<?code-list x?></a>"
    )
    doc = read_document(text.encode(), "xml", source="pi.xml")
    got = {f.path: (f.value, f.role.kind) for f in doc.fields}
    assert got == {
        "/processing-instruction()": ("top one", RoleKind.TEXT),
        "/a/processing-instruction()": ("inner ", RoleKind.TEXT),
        "/a/processing-instruction()[2]": ("x", RoleKind.TEXT),
    }


def test_processing_instruction_replacement_cannot_close_it(deid: Deidentifier) -> None:
    text = "<a><?remark call 0712 345678?></a>"
    doc = read_document(text.encode(), "xml", source="pi.xml")
    (f,) = doc.fields
    assert f.encode("x?>y") == "x? >y"
    out = deid.redact_document(text, format="xml").output
    assert out == "<a><?remark call [CONTACT_PHONE]?></a>"
    ET.fromstring(out)


def test_comments_and_instructions_inside_a_doctype_are_scanned(deid: Deidentifier) -> None:
    text = (
        "<!DOCTYPE a [<!-- call 0712 345678 --><?remark call 0712 345679?>"
        "<!ELEMENT a ANY>]><a>x</a>"
    )
    out = deid.redact_document(text, format="xml").output
    assert "345678" not in out and "345679" not in out
    assert out.startswith("<!DOCTYPE a [<!-- call [CONTACT_PHONE] -->")
