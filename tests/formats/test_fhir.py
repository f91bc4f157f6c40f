"""FHIR R4: field semantics, codes and ids untouched, per-patient date shift, narrative."""

from __future__ import annotations

import copy
import json
import re
from datetime import date

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.formats.conftest import GOLDEN, check_golden

from polydeid.api import Deidentifier
from polydeid.core.errors import InputError
from polydeid.formats.registry import read_document

BUNDLE = GOLDEN / "fhir" / "bundle.json"


def test_golden_bundle(deid):
    out = check_golden(deid, "fhir", "bundle.json")
    json.loads(out)


def _walk(node, path=()):
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _walk(v, (*path, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _walk(v, (*path, i))
    else:
        yield path, node


_NEVER = {"id", "reference", "fullUrl", "system", "code", "url", "unit", "resourceType"}


def _untouchable(tree):
    """Every id, reference, system URL, code, unit, Coding.display and meta value."""
    return {
        path: value
        for path, value in _walk(tree)
        if (path and path[-1] in _NEVER and not (len(path) > 1 and path[-2] == "telecom"))
        or "coding" in path
        or "meta" in path
    }


def test_codes_ids_and_system_urls_never_change(deid):
    src = json.loads(BUNDLE.read_text())
    for policy in ("tag", "surrogate"):
        d = Deidentifier(profile="rules", policy=policy, key=b"k" * 32)
        out = json.loads(d.redact_document(BUNDLE.read_bytes(), format="fhir").output)
        assert _untouchable(out) == _untouchable(src)


def test_dates_shift_by_one_offset_per_patient_across_resources():
    d = Deidentifier(profile="rules", policy="surrogate", key=b"s" * 32)
    out = json.loads(d.redact_document(BUNDLE.read_bytes(), format="fhir").output)
    patient = out["entry"][0]["resource"]
    observation = out["entry"][1]["resource"]
    born = date.fromisoformat(patient["birthDate"])
    seen = date.fromisoformat(observation["effectiveDateTime"][:10])
    assert born != date(1984, 3, 2)
    # the interval between the two dates of the patient is kept
    assert (seen - born) == (date(2024, 5, 30) - date(1984, 3, 2))
    # the same shift in the narrative and in the free-text note
    div = patient["text"]["div"]
    assert born.strftime("%-d %B %Y") in div


def test_narrative_tags_are_not_touched(deid):
    out = json.loads(deid.redact_document(BUNDLE.read_bytes(), format="fhir").output)
    div = out["entry"][0]["resource"]["text"]["div"]
    assert div.startswith('<div xmlns="http://www.w3.org/1999/xhtml"><p>')
    assert div.endswith("</p></div>")
    assert "[CONTACT_PHONE]" in div and "[DATE]" in div


def test_reference_display_takes_the_category_of_its_target():
    doc = read_document(BUNDLE.read_bytes(), "fhir", source="b.json")
    roles = {f.path: f.role for f in doc.fields}
    assert roles["entry[1].resource.subject.display"].category.value == "PERSON"
    assert roles["entry[1].resource.performer[0].display"].category.value == "PERSON_THIRD_PARTY"
    assert roles["entry[0].resource.contact[0].name.family"].category.value == (
        "PERSON_THIRD_PARTY"
    )
    assert roles["entry[0].resource.identifier[1].value"].category.value == "ID_NATIONAL"
    assert roles["entry[0].resource.identifier[0].value"].category.value == "ID_RECORD"
    assert roles["entry[2].resource.name"].category.value == "ORGANIZATION"
    assert "entry[0].resource.name[0].prefix[0]" not in roles
    assert doc.patient == "Patient/pat-001"


def test_not_a_fhir_resource_is_refused(deid):
    with pytest.raises(InputError, match="resourceType") as info:
        deid.redact_document(b'{"name": "x"}', format="fhir", source="p.json")
    assert info.value.location == "p.json"


def test_truncated_bundle_is_located(deid):
    data = BUNDLE.read_bytes()[:900]
    with pytest.raises(InputError) as info:
        deid.redact_document(data, format="fhir", source="cut.json")
    assert re.fullmatch(r"cut\.json:\d+:\d+", info.value.location)
    assert "Nakato" not in str(info.value)


def test_parsed_resource_in_parsed_resource_out(deid):
    resource = {
        "resourceType": "Patient",
        "id": "p1",
        "birthDate": "1990-01-02",
        "telecom": [{"system": "email", "value": "x@example.org"}],
    }
    out = deid.redact_document(resource).output
    assert out == {
        "resourceType": "Patient",
        "id": "p1",
        "birthDate": "[DATE]",
        "telecom": [{"system": "email", "value": "[CONTACT_OTHER]"}],
    }


# --- property: identifiers in random places of a FHIR Patient never leak; codes never change

_PATIENT = json.loads(BUNDLE.read_text())["entry"][0]["resource"]
_SLOTS = [
    ("identifier", lambda v: {"system": "urn:oid:1.2.3", "value": v}, "id"),
    ("telecom", lambda v: {"system": "phone", "value": v}, "phone"),
    ("telecom", lambda v: {"system": "email", "value": v}, "email"),
    ("name", lambda v: {"family": v}, "name"),
    ("address", lambda v: {"line": [v]}, "name"),
]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    slots=st.lists(st.sampled_from(range(len(_SLOTS))), min_size=1, max_size=5),
    digits=st.lists(st.integers(100_000, 99_999_999), min_size=5, max_size=5),
    words=st.lists(st.text("abcdefghij", min_size=4, max_size=9), min_size=5, max_size=5),
    bundle=st.booleans(),
)
def test_random_identifiers_in_fhir_never_leak(deid, slots, digits, words, bundle):
    resource = copy.deepcopy(_PATIENT)
    secrets = []
    for i, slot in enumerate(slots):
        key, make, kind = _SLOTS[slot]
        value = {
            "id": f"X{digits[i]}",
            "phone": f"+256 7{digits[i] % 100_000_000:08d}",
            "email": f"{words[i]}@example.org",
            "name": words[i].capitalize() + "zz",
        }[kind]
        resource.setdefault(key, []).append(make(value))
        secrets.append(value)
    doc = (
        {"resourceType": "Bundle", "type": "collection", "entry": [{"resource": resource}]}
        if bundle
        else resource
    )
    out = deid.redact_document(json.dumps(doc, indent=1).encode(), format="fhir").output.decode()
    for secret in secrets:
        assert secret not in out
    assert _untouchable(json.loads(out)) == _untouchable(doc)


def test_a_provider_organization_is_a_facility(deid):
    org = {
        "resourceType": "Organization",
        "id": "o1",
        "name": "Mengo Hospital",
        "type": [
            {
                "coding": [
                    {
                        "system": "http://terminology.hl7.org/CodeSystem/organization-type",
                        "code": "prov",
                    }
                ]
            }
        ],
    }
    assert deid.redact_document(org).output["name"] == "[LOCATION_FACILITY]"
    employer = {"resourceType": "Organization", "id": "o2", "name": "Acme Ltd"}
    assert deid.redact_document(employer).output["name"] == "[ORGANIZATION]"


# --- the narrative, read with the XML scanner --------------------------------------------------

_ISSUE_DIV = (
    '<div xmlns="http://www.w3.org/1999/xhtml"><p title="Wanjiru Achieng 0712 345678">'
    "Seen today.</p><!-- call Wanjiru Achieng on 0712 345678 --></div>"
)


def _patient(div: str, *, named: bool = True) -> dict:
    resource: dict = {
        "resourceType": "Patient",
        "id": "p1",
        "text": {"status": "generated", "div": div},
    }
    if named:
        resource["name"] = [{"family": "Achieng", "given": ["Wanjiru"]}]
    return resource


def _narrative_texts(div: str) -> str:
    """Text, attribute values, comments and instructions of a narrative, read by ElementTree."""
    import xml.etree.ElementTree as ET

    builder = ET.TreeBuilder(insert_comments=True, insert_pis=True)
    parser = ET.XMLParser(target=builder)
    parser.feed(div)
    root = parser.close()
    parts = []
    for node in root.iter():
        parts += [node.text or "", node.tail or "", *node.attrib.values()]
    return "\n".join(parts)


def test_issue_patient_narrative_attribute_and_comment_via_cli(tmp_path, capsys):
    from polydeid.cli import main

    src = tmp_path / "patient.json"
    src.write_text(json.dumps(_patient(_ISSUE_DIV)))
    out = tmp_path / "out.json"
    rc = main(["redact", str(src), "-o", str(out), "--format", "fhir", "--profile", "rules"])
    assert rc == 0, capsys.readouterr().err
    div = json.loads(out.read_text())["text"]["div"]
    texts = _narrative_texts(div)
    for needle in ("Wanjiru", "Achieng", "0712", "345678"):
        assert needle not in texts
    assert '<p title="[PERSON] [CONTACT_PHONE]">Seen today.</p>' in div
    assert "<!-- call [PERSON] on [CONTACT_PHONE] -->" in div


@pytest.mark.torch
def test_issue_patient_narrative_default_profile(tmp_path, capsys):
    """The issue's check as a user runs it: default profile, no name elements to lean on."""
    from polydeid.cli import main

    src = tmp_path / "patient.json"
    src.write_text(json.dumps(_patient(_ISSUE_DIV, named=False)))
    out = tmp_path / "out.json"
    assert main(["redact", str(src), "-o", str(out), "--format", "fhir"]) == 0
    texts = _narrative_texts(json.loads(out.read_text())["text"]["div"])
    for needle in ("Wanjiru", "Achieng", "0712", "345678"):
        assert needle not in texts


def test_narrative_fields_cover_every_xhtml_place():
    div = (
        '<div xmlns="http://www.w3.org/1999/xhtml" class="c" lang="en">'
        '<p title="t1">x</p><!-- c1 --><p><![CDATA[d1]]></p><?note p1?>'
        '<img src="#s" alt="a1"/></div>'
    )
    text = json.dumps(_patient(div, named=False))
    doc = read_document(text.encode(), "fhir", source="p.json")
    values = sorted(f.value.strip() for f in doc.fields if f.path == "text.div")
    assert values == ["#s", "a1", "c1", "d1", "p1", "t1", "x"]


def test_narrative_replacement_is_escaped_for_xhtml_then_json():
    div = (
        '<div xmlns="http://www.w3.org/1999/xhtml"><p title="a">b</p>'
        "<!-- c --><p><![CDATA[d]]></p><?note e?></div>"
    )
    text = json.dumps(_patient(div, named=False))
    doc = read_document(text.encode(), "fhir", source="p.json")
    nasty = "x\"'<&>]]>--?>\\ y-"
    edits = [(f.start, f.end, f.encode(nasty)) for f in doc.fields if f.path == "text.div"]
    assert len(edits) == 5
    from polydeid.formats.base import splice

    out = json.loads(splice(text, edits))["text"]["div"]
    import xml.etree.ElementTree as ET

    builder = ET.TreeBuilder(insert_comments=True, insert_pis=True)
    parser = ET.XMLParser(target=builder)
    parser.feed(out)
    root = parser.close()
    p = root[0]
    assert p.get("title") == nasty and p.text == nasty
    assert root[2].text == nasty  # CDATA content, split around its "]]>"
    assert "--" not in root[1].text and "?>" not in root[3].text


def test_narrative_with_json_escapes_maps_back_to_raw():
    raw = json.dumps(_patient('<div xmlns="http://www.w3.org/1999/xhtml"><p>x</p></div>'))
    raw = raw.replace("<p>x</p>", '<p title=\\"Call 0712\\u0020345678\\">x</p>')
    out = Deidentifier(profile="rules", policy="tag").redact_document(raw, format="fhir").text
    assert '<p title=\\"Call [CONTACT_PHONE]\\">' in out
    json.loads(out)


@pytest.mark.parametrize(
    "div",
    [
        "<div><p>Call 0712 345678</div>",  # not well-formed
        '<!DOCTYPE div [<!ENTITY e "0712 345678">]><div>Call 0712 345678 &e;</div>',
    ],
    ids=["malformed", "entity-declaration"],
)
def test_narrative_that_is_not_safe_xml_is_scanned_whole(div):
    text = json.dumps(_patient(div, named=False))
    out = Deidentifier(profile="rules", policy="tag").redact_document(text, format="fhir").text
    assert "345678" not in out
    assert json.loads(out)["resourceType"] == "Patient"
