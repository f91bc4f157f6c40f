import pytest

from polydeid.core.errors import KeyMaterialError, TransformError
from polydeid.core.segments import Segment
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category, Fact
from polydeid.transform.policy import load_policy, parse_policy
from polydeid.transform.redactor import Redactor, Replacement
from polydeid.transform.vault import MemoryVault

from .conftest import KEY, OTHER_KEY, span_of

NOTE = "Okello John (tel 0772 123456) was seen with Nakato Sarah. Okello John took 500 mg."
NAMES = ("Okello John", "Nakato Sarah", "0772 123456")


def note_spans(text: str = NOTE) -> list[Span]:
    return [
        span_of(text, "Okello John", Category.PERSON),
        span_of(text, "0772 123456", Category.CONTACT_PHONE),
        span_of(text, "Nakato Sarah", Category.PERSON_THIRD_PARTY),
        span_of(text, "Okello John", Category.PERSON, nth=1),
        span_of(text, "500 mg", Fact.DOSE),
    ]


SEGMENT = Segment(NOTE, lang="en", countries=("UG",))


def test_tag_policy_offsets_and_replacements():
    result = Redactor(load_policy("tag")).redact(SEGMENT, note_spans())
    assert result.text == (
        "[PERSON] (tel [CONTACT_PHONE]) was seen with [PERSON_THIRD_PARTY]. [PERSON] took 500 mg."
    )
    assert len(result.replacements) == 4  # the fact span is ignored
    for rep, span in zip(
        result.replacements, sorted(note_spans()[:4], key=lambda s: s.start), strict=True
    ):
        assert (rep.start, rep.end, rep.label, rep.operator) == (
            span.start,
            span.end,
            span.label,
            "tag",
        )
        assert result.text[rep.new_start : rep.new_end] == f"[{rep.label.value}]"


def test_reprs_carry_no_original_text():
    redactor = Redactor(load_policy("surrogate"), key=KEY)
    result = redactor.redact(SEGMENT, note_spans(), document_id="d1", patient_id="p1")
    shown = (
        repr(result)
        + repr(result.replacements)
        + str(result.replacements[0].to_dict())
        + repr(redactor)
    )
    for name in NAMES:
        assert name not in shown and name not in result.text
    assert "Okello" not in result.text and "Nakato" not in result.text
    assert result.text.endswith("took 500 mg.")


def test_numbered_tags_per_document():
    redactor = Redactor(load_policy("numbered"))
    first = redactor.redact(SEGMENT, note_spans(), document_id="doc-a")
    assert first.text.count("[PERSON-1]") == 2 and "[PERSON_THIRD_PARTY-1]" in first.text
    other = Segment("Mary Ann saw Okello John.", countries=("UG",))
    spans = [
        span_of(other.text, "Mary Ann", Category.PERSON),
        span_of(other.text, "Okello John", Category.PERSON),
    ]
    assert redactor.redact(other, spans, document_id="doc-a").text == "[PERSON-2] saw [PERSON-1]."
    assert redactor.redact(other, spans, document_id="doc-b").text == "[PERSON-1] saw [PERSON-2]."
    assert redactor.redact(other, spans).text == "[PERSON-1] saw [PERSON-2]."
    redactor.end_document("doc-a")
    assert redactor.redact(other, spans, document_id="doc-a").text == "[PERSON-1] saw [PERSON-2]."


def test_surrogates_consistent_within_document():
    result = Redactor(load_policy("surrogate"), key=KEY).redact(
        SEGMENT, note_spans(), patient_id="p1"
    )
    reps = result.replacements
    person = [result.text[r.new_start : r.new_end] for r in reps if r.label is Category.PERSON]
    assert len(person) == 2 and person[0] == person[1]
    third = next(
        result.text[r.new_start : r.new_end] for r in reps if r.label is Category.PERSON_THIRD_PARTY
    )
    assert third != person[0]


def test_surrogates_consistent_across_documents_and_runs_with_key():
    vault = MemoryVault()
    one = Redactor(load_policy("surrogate"), key=KEY, vault=vault)
    two = Redactor(load_policy("surrogate"), key=KEY, vault=vault)
    a = one.redact(SEGMENT, note_spans(), document_id="1").text
    b = two.redact(SEGMENT, note_spans(), document_id="2").text
    assert a == b
    fresh = Redactor(load_policy("surrogate"), key=KEY).redact(SEGMENT, note_spans()).text
    assert fresh == a  # same key, new vault: the seed is keyed, so the choice is the same
    other = Redactor(load_policy("surrogate"), key=OTHER_KEY).redact(SEGMENT, note_spans()).text
    assert other != a


def test_without_key_surrogates_are_consistent_within_instance_only():
    policy = parse_policy("[default]\noperator = 'surrogate'\n")
    redactor = Redactor(policy)
    assert (
        redactor.redact(SEGMENT, note_spans()).text == redactor.redact(SEGMENT, note_spans()).text
    )
    runs = {Redactor(policy).redact(SEGMENT, note_spans()).text for _ in range(4)}
    assert len(runs) > 1


def test_keyed_policies_need_a_key():
    for name in ("hash", "encrypt", "surrogate"):
        with pytest.raises(KeyMaterialError):
            Redactor(load_policy(name))
    with pytest.raises(KeyMaterialError):
        Redactor(load_policy("hash"), key=b"short")


def test_overlapping_or_out_of_range_spans_fail_closed():
    redactor = Redactor(load_policy("tag"))
    spans = [Span(0, 11, Category.PERSON, "a"), Span(7, 11, Category.PERSON, "b")]
    with pytest.raises(TransformError) as info:
        redactor.redact(SEGMENT, spans)
    assert "Okello" not in str(info.value) and "0:11" in str(info.value)
    with pytest.raises(TransformError):
        redactor.redact(Segment("short"), [Span(0, 50, Category.PERSON, "a")])


def test_distinct_originals_get_distinct_surrogates():
    from polydeid.locales.names import name_data

    policy = parse_policy("[default]\noperator = 'surrogate'\n")
    redactor = Redactor(policy, key=KEY)
    originals = name_data("lg").default.family_male[:40]  # ~80 to pick from: collisions likely
    text = " ; ".join(originals)
    spans, pos = [], 0
    for word in originals:
        spans.append(Span(pos, pos + len(word), Category.PERSON, "t"))
        pos += len(word) + 3
    result = redactor.redact(Segment(text, lang="lg"), spans)
    outs = [result.text[r.new_start : r.new_end] for r in result.replacements]
    assert len(set(outs)) == len(outs)
    assert not set(outs) & set(originals)  # no surrogate reproduces another original here


def test_surrogate_validator_is_used():
    seen = []

    def validate(candidate, category, segment):
        seen.append(category)
        return candidate.endswith("6") or candidate.endswith("56")

    policy = parse_policy("[default]\noperator = 'surrogate'\n")
    result = Redactor(policy, key=KEY, surrogate_validator=validate).redact(
        SEGMENT, [span_of(NOTE, "0772 123456", Category.CONTACT_PHONE)]
    )
    rep = result.replacements[0]
    phone = result.text[rep.new_start : rep.new_end]
    assert phone.endswith("6") and phone != "0772 123456" and Category.CONTACT_PHONE in seen


def test_replacement_repr_is_offsets_only():
    rep = Replacement(1, 5, 1, 9, Category.PERSON, "tag")
    assert repr(rep) == "Replacement(1:5 -> 1:9 PERSON via tag)"
    assert rep.category is Category.PERSON
