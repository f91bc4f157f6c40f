import re
from datetime import date

import pytest

from polydeid import Category, Deidentifier, Segment, Span
from polydeid.testing import FakeDetector

KEY = bytes(range(32))


@pytest.mark.torch
def test_detect_and_redact_tag():
    deid = Deidentifier()
    text = "Simu 0772 123456, alikuja 5 Machi 2024"
    spans = deid.detect(text, lang="sw")
    assert [s.label for s in spans] == [Category.CONTACT_PHONE, Category.DATE]
    assert deid.redact(text, lang="swa") == "Simu [CONTACT_PHONE], alikuja [DATE]"


def test_custom_detectors_plug_in():
    fake = FakeDetector([Span(0, 6, Category.PERSON, "fake.v1", 0.9)])
    deid = Deidentifier(detectors=[fake], policy="numbered")
    assert deid.redact("Nakato came, Mukasa left", lang="lg") == "[PERSON-1] came, Mukasa left"


@pytest.mark.torch
def test_surrogates_consistent_across_instances_with_a_key():
    text = "Tel +256 772 123456; e-mail john dot smith at gmail dot com"
    first = Deidentifier(policy="surrogate", key=KEY).redact(text, lang="en", document_id="a")
    second = Deidentifier(policy="surrogate", key=KEY).redact(text, lang="en", document_id="b")
    assert first == second
    assert "123456" not in first and "john" not in first
    assert re.search(r"[\w.]+@example\.\w+", first)  # an obfuscated e-mail gets a real address


@pytest.mark.torch
def test_dateshift_keeps_intervals_for_a_patient():
    deid = Deidentifier(policy="surrogate", key=KEY)
    text = "Admitted 02/03/2024, discharged 12/03/2024."
    out = deid.redact(text, lang="en", countries=["GB"], patient_id="P-1")
    found = re.findall(r"(\d\d)/(\d\d)/(\d{4})", out)
    assert len(found) == 2
    a, b = (date(int(y), int(m), int(d)) for d, m, y in found)
    assert (b - a).days == 10
    assert out != text


@pytest.mark.torch
def test_unknown_language_fails_closed():
    with pytest.raises(Exception) as info:
        Deidentifier().redact("x", lang="tlh")
    assert "PD104" in str(info.value)


@pytest.mark.torch
def test_redact_segment_reports_replacements_without_text():
    deid = Deidentifier(policy="mask")
    result = deid.redact_segment(Segment("MRN: 4455667", lang="en"))
    assert result.text == "MRN: *******"
    assert [(r.start, r.end, r.label) for r in result.replacements] == [(5, 12, Category.ID_RECORD)]
    assert "4455667" not in repr(result.replacements)


def test_rules_profile_covers_the_seven_rule_categories():
    from polydeid.detect.profiles import profile_categories

    assert profile_categories("rules", partial=False) == (
        Category.ID_NATIONAL,
        Category.ID_RECORD,
        Category.ID_OTHER,
        Category.CONTACT_PHONE,
        Category.CONTACT_OTHER,
        Category.DATE,
        Category.AGE,
    )
    # … of addresses only labelled postal codes and listed streets, of villages and facilities
    # only the listed ones (rules.places.v1), and of names, occupations, tribes, religions and
    # clans only those after their labels
    assert set(profile_categories("rules")) - set(profile_categories("rules", partial=False)) == {
        Category.LOCATION_ADDRESS,
        Category.LOCATION_VILLAGE,
        Category.LOCATION_FACILITY,
        Category.PERSON,
        Category.PERSON_THIRD_PARTY,
        Category.PERSON_CLAN,
        Category.PROFESSION,
        Category.TRIBE,
        Category.RELIGION,
    }


@pytest.mark.parametrize("value", [10**5000, "a\udc80b"], ids=["huge-int", "lone-surrogate"])
def test_a_parsed_document_no_reader_can_take_is_a_coded_input_error(value: object) -> None:
    from polydeid.core.errors import InputError

    doc = {"resourceType": "Patient", "note": [{"text": value}]}
    with pytest.raises(InputError) as caught:
        Deidentifier(profile="rules").redact_document(doc, format="fhir", lang="en")
    assert caught.value.code == "PD200"
