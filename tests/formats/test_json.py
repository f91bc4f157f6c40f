"""JSON documents: field roles, byte-exact output, streaming scanner, located errors."""

from __future__ import annotations

import json
import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.formats.conftest import check_golden

from polydeid.core.errors import InputError
from polydeid.formats.json import JsonReader, decode_string, scan
from polydeid.formats.registry import detect_format, read_document
from polydeid.lexicon.fields import RoleKind, normalise_name, role_for_name

GOLDEN_NAMES = ["export.json"]


@pytest.mark.parametrize("name", GOLDEN_NAMES)
def test_golden(deid, name):
    out = check_golden(deid, "json", name)
    json.loads(out)  # still JSON


def test_only_identifier_values_change(deid):
    src = (
        b'{"mrn": 1234567, "name": {"family": "Okot", "given": ["Ann"]},\n'
        b' "hr":  72, "unit": "mmHg", "note": "call +256 772 123456 now"}'
    )
    out = deid.redact_document(src, format="json").output.decode()
    assert out == (
        '{"mrn": "[ID_RECORD]", "name": {"family": "[PERSON]", "given": ["[PERSON]"]},\n'
        ' "hr":  72, "unit": "mmHg", "note": "call [CONTACT_PHONE] now"}'
    )


def test_key_order_whitespace_and_escapes_are_kept(deid):
    src = '{"z":1,\t"a" : "caf\\u00e9",\r\n"phone":"0772\\u0020123456", "b":[ ]}'
    out = deid.redact_document(src, format="json").output
    assert out == '{"z":1,\t"a" : "caf\\u00e9",\r\n"phone":"[CONTACT_PHONE]", "b":[ ]}'


class _VillageReader:
    """A stand-in for the tagger that reads every "Losekann" as a village."""

    id = "tagger.test.v1"
    languages: frozenset[str] = frozenset()

    def detect(self, segment):
        from polydeid.core.spans import Span
        from polydeid.core.taxonomy import Category

        at = segment.text.find("Losekann,")
        return [] if at < 0 else [Span(at, at + 8, Category.LOCATION_VILLAGE, self.id, 0.99)]


def test_a_known_name_outranks_a_models_other_reading_of_the_same_words():
    from polydeid.api import Deidentifier
    from polydeid.core.taxonomy import Category

    src = '{"patient_name": "Dorota Losekann", "notes": "Hier ist Losekann, danke."}'
    found = Deidentifier(detectors=[_VillageReader()]).detect_document(src, format="json")
    labels = {src[a:b]: fs.span.label for fs in found for a, b in [fs.raw()]}
    assert labels == {"Dorota Losekann": Category.PERSON, "Losekann": Category.PERSON}


@pytest.mark.parametrize(
    ("name", "mention", "found"),
    [
        ("ትርሐስ ገብሩ", "ትርሐስ", True),  # Ethiopic: no case to tell a name from a word
        ("حسن الطيب", "حسن", True),  # Arabic
        ("Dorota Losekann", "Losekann", True),
        ("dorota losekann", "losekann", True),  # a name the field writes in lower case
        ("jan van dijk", "van", False),  # a particle is no name on its own
        ("mrs jane doe", "mrs", False),  # nor is a title
        ("Maria das Dores", "das", False),  # a capitalised name's lower-case word
    ],
    ids=["am", "ar", "capitalised", "lower", "particle", "title", "capitalised-particle"],
)
def test_a_known_names_words_are_found_in_the_records_text(name, mention, found):
    from polydeid.api import Deidentifier

    src = json.dumps({"patient_name": name, "notes": f"Seen: {mention} . OK"}, ensure_ascii=False)
    spans = Deidentifier(profile="rules").detect_document(src, format="json")
    assert any(src[a:b] == mention for fs in spans for a, b in [fs.raw()]) is found


@pytest.mark.parametrize(
    ("note", "mention"),
    [
        ("Sổ tiêm chủng: Đặng T. K., ngày sinh 1946.", "Đặng T. K."),  # the initial's dot
        ("Đặng T. K tái khám.", "Đặng T. K"),  # written without it
    ],
    ids=["dot", "no-dot"],
)
def test_a_known_name_ending_in_an_initial_is_found_with_its_dot(note, mention):
    from polydeid.api import Deidentifier

    src = json.dumps({"patient_name": "Đặng T. K.", "notes": note}, ensure_ascii=False)
    spans = Deidentifier(profile="rules").detect_document(src, format="json")
    in_notes = [src[a:b] for fs in spans for a, b in [fs.raw()] if a > src.index('"notes"')]
    assert in_notes == [mention]


def test_escaped_value_maps_back_to_raw_offsets():
    text = '"a\\nb\\u00e9\\ud83d\\ude00c"'
    value, offsets = decode_string(text, 1, len(text) - 1)
    assert value == "a\nbé😀c"
    assert offsets is not None and len(offsets) == len(value) + 1
    assert text[offsets[2]] == "b" and text[offsets[4] : offsets[5]] == "\\ud83d\\ude00"


@pytest.mark.parametrize(
    ("name", "kind", "category"),
    [
        ("patientFirstName", RoleKind.VALUE, "PERSON"),
        ("postal_code", RoleKind.VALUE, "LOCATION_ADDRESS"),
        ("drug_code", RoleKind.SKIP, None),
        ("birthDate", RoleKind.VALUE, "DATE"),
        ("Geburtsdatum", RoleKind.VALUE, "DATE"),
        ("Namba ya simu", RoleKind.VALUE, "CONTACT_PHONE"),
        ("clinical_note", RoleKind.TEXT, None),
        ("whatever", RoleKind.TEXT, None),
    ],
)
def test_role_for_name(name, kind, category):
    role = role_for_name(name)
    assert role.kind is kind
    assert (role.category.value if role.category else None) == category


def test_parent_key_makes_a_longer_phrase():
    assert role_for_name("mother", "name").category.value == "PERSON_THIRD_PARTY"
    assert role_for_name("drug", "name").kind is RoleKind.TEXT
    assert normalise_name("nextOfKin_phone") == ("next", "of", "kin", "phone")


def test_field_names_keep_their_combining_marks():
    # Devanagari vowel signs and the nukta are marks, not separators: "नाम" is one word.
    assert normalise_name("मरीज़ का नाम") == ("मरीज़", "का", "नाम")
    assert normalise_name("रोगी_का_नाम") == ("रोगी", "का", "नाम")
    assert normalise_name("Tên bệnh nhân") == ("tên", "bệnh", "nhân")
    # a word that differs only in its vowel signs is another word
    assert normalise_name("नम") != normalise_name("नाम")
    assert role_for_name("मरीज़ का नाम").category.value == "PERSON"


def test_nesting_up_to_the_limit_is_read_and_deeper_is_refused_with_a_code(deid):
    from polydeid.core.errors import InputLimitError
    from polydeid.formats.limits import MAX_DEPTH

    depth = MAX_DEPTH - 1
    src = "[" * depth + '{"phone": "+256 772 123456"}' + "]" * depth
    out = deid.redact_document(src, format="json").output
    assert out == "[" * depth + '{"phone": "[CONTACT_PHONE]"}' + "]" * depth
    deep = "[" * 50_000 + '{"phone": "+256 772 123456"}' + "]" * 50_000
    with pytest.raises(InputLimitError):
        deid.redact_document(deep, format="json")


def test_fields_are_produced_lazily():
    doc = read_document(b'{"a": [' + b'"x", ' * 1000 + b'"y"]}', "json", source="big.json")
    assert not isinstance(doc.fields, list)
    assert sum(1 for _ in doc.fields) == 1001


@pytest.mark.parametrize(
    ("text", "message", "where"),
    [
        ('{"a": "b"', "unexpected end of input", "1:10"),
        ('{"a": "b\n"}', "unterminated string", "1:7"),
        ('{"a": tru}', "expected a JSON value", "1:7"),
        ('{"a" "b"}', "expected ':'", "1:6"),
        ('{"a": 1}\n{"b": 2}', "unexpected data after the JSON value", "2:1"),
        ("", "empty document", "1:1"),
        ('{"a": [1, 2}', "expected ',' or ']'", "1:12"),
    ],
    ids=range(7),
)
def test_malformed_json_is_located(text, message, where):
    with pytest.raises(InputError) as info:
        list(scan(text, source="in.json"))
    assert message in str(info.value)
    assert info.value.location == f"in.json:{where}"


def test_errors_do_not_quote_values(deid):
    secret = "Nakato-Secret-0772123456"
    with pytest.raises(InputError) as info:
        deid.redact_document(f'{{"name": "{secret}", "x": }}', format="json", source="f.json")
    assert secret not in str(info.value) and "f.json:1:" in str(info.value)


def test_jsonl_documents_one_value_per_line(deid):
    src = '{"phone": "0772 123456"}\n\n{"phone": "0701 555019"}\n'
    out = read_document(src.encode(), "json", source="x.jsonl", lines=True)
    paths = [f.path for f in out.fields]
    assert paths == ['["line 1"].phone', '["line 3"].phone']


@pytest.mark.parametrize(
    ("path", "data", "fmt"),
    [
        ("a.json", b'{"resourceType": "Patient"}', "fhir"),
        ("a.json", b'[{"role": "user", "content": "hi"}]', "chat"),
        ("a.json", b'{"x": 1}', "json"),
        ("a.xml", b'<ClinicalDocument xmlns="urn:hl7-org:v3"/>', "cda"),
        ("a.xml", b"<a/>", "xml"),
        ("-", b"MSH|^~\\&|A|B\r", "hl7"),
        ("a.csv", b"a,b\n1,2\n", "csv"),
        ("a.tsv", b"a\tb\n", "tsv"),
        ("a.py", b"print(1)\n", "code"),
        ("a.txt", b"plain note\n", "text"),
        ("-", b'{"text": "a"}\n{"text": "b"}\n', "jsonl"),
        ("-", b"<?xml version='1.0'?><a/>", "xml"),
    ],
    ids=range(12),
)
def test_detect_format(path, data, fmt):
    assert detect_format(path, data) == fmt


# --- property: identifiers under identifying keys anywhere in random JSON are all replaced

_PHONES = ["+256 772 123456", "0772 481 905", "+49 30 1234567", "+254 712 345 678"]
_EMAILS = ["a.b@example.org", "nurse7@clinic.example.com"]
_SAFE_TEXT = st.text(alphabet=string.ascii_lowercase + " ", min_size=0, max_size=12)
_KEYS = st.sampled_from(["notes", "ward", "drug", "dose", "items", "extra", "status"])

_json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-100, 100) | _SAFE_TEXT,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(_KEYS, children, max_size=3),
    max_leaves=12,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    base=st.dictionaries(_KEYS, _json_values, max_size=4),
    where=st.lists(st.sampled_from(["phone", "email", "mrn", "dob"]), min_size=1, max_size=4),
    picks=st.randoms(use_true_random=False),
    indent=st.sampled_from([None, 1, 2]),
)
def test_identifiers_in_random_json_never_leak(deid, base, where, picks, indent):
    doc = dict(base)
    secrets = []
    for i, key in enumerate(where):
        value = {
            "phone": picks.choice(_PHONES),
            "email": picks.choice(_EMAILS),
            "mrn": f"MRN{picks.randint(100000, 999999)}",
            "dob": f"19{picks.randint(50, 99)}-0{picks.randint(1, 9)}-1{picks.randint(0, 9)}",
        }[key]
        nest = doc
        for _ in range(picks.randint(0, 2)):
            nest = nest.setdefault(f"level{i}", {}) if isinstance(nest, dict) else nest
        nest[key] = value
        secrets.append(value)
    src = json.dumps(doc, indent=indent, ensure_ascii=False)
    out = deid.redact_document(src, format="json").output
    for secret in secrets:
        assert secret not in out
    assert json.loads(out).keys() == doc.keys()


def test_reader_decodes_bom():
    doc = JsonReader().read('\ufeff{"phone": "0772 123456"}', source="b.json")
    assert [f.value for f in doc.fields] == ["0772 123456"]


# --- keys that may be data ---------------------------------------------------------------------


def test_data_keys_are_scanned_and_stay_unique():
    from polydeid.api import Deidentifier

    src = '{"0712 345678": 1, "0712 345679": {"x": 2}, "Tel 0712 345670": 3, "phone": "no"}'
    out = Deidentifier(profile="rules", policy="tag").redact_document(src, format="json").text
    tree = json.loads(out)
    # numbered by replacement, not by whole key: the third is unique without, numbered anyway
    assert list(tree) == ["[CONTACT_PHONE]", "[CONTACT_PHONE]#2", "Tel [CONTACT_PHONE]#3", "phone"]
    assert tree["[CONTACT_PHONE]#2"] == {"x": 2}


@pytest.mark.parametrize(
    ("key", "scanned"),
    [
        ("resourceType", False),  # written like a program identifier
        ("dose_mg", False),
        ("entry", False),
        ("Date of birth", False),  # a known field name
        ("phone", False),
        ("Okello", True),
        ("Amina Otieno", True),
        ("0772123456", True),
        ("patient123456", True),  # an identifier's digits
        ("a@b.org", True),
        ("--", False),  # nothing to find
    ],
    ids=[
        "camel-case",
        "snake-case",
        "lower-word",
        "field-label",
        "field-name",
        "surname",
        "full-name",
        "phone",
        "digits",
        "email",
        "punctuation",
    ],
)
def test_which_keys_are_scanned(key, scanned):
    doc = read_document(json.dumps({key: 1}).encode(), "json", source="k.json")
    keys = [f for f in doc.fields if f.path.endswith("(key)")]
    assert bool(keys) is scanned


def test_paths_never_show_a_data_key():
    src = json.dumps({"Amina Otieno": {"Date of birth": "2001-02-03", "notes": "x"}})
    paths = {f.path for f in read_document(src.encode(), "json", source="k.json").fields}
    assert paths == {"[…] (key)", '[…]["Date of birth"]', "[…].notes"}
    assert not any("Amina" in p for p in paths)


def test_a_number_is_replaced_whole():
    """Regression (found by the structure property test): a phone found inside ``-1000000``
    was written after the sign, ``-"[CONTACT_PHONE]"``, which is not JSON."""
    from polydeid.api import Deidentifier
    from polydeid.formats.base import splice

    src = '{"phone": {"0": -1000000}}'
    out = Deidentifier(profile="rules", policy="tag").redact_document(src, format="json").text
    assert json.loads(out) == {"phone": {"0": "[CONTACT_PHONE]"}}
    text = '{"notes": -20240301123456}'
    (f,) = read_document(text.encode(), "json", source="n.json").fields
    assert f.raw(1, 9) == f.raw(9, 15) == (10, 25)
    edits = [(*f.raw(1, 9), f.encode("[DATE]")), (*f.raw(9, 15), f.encode("[ID]"))]
    assert json.loads(splice(text, edits)) == {"notes": "[DATE]"}
