import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from polydeid.core.errors import DecryptionError, KeyMaterialError, UnknownOperatorError
from polydeid.core.segments import Segment
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category
from polydeid.transform import dateshift
from polydeid.transform.crypto import KeyRing
from polydeid.transform.operators import (
    DocumentState,
    OperatorContext,
    OperatorSpec,
    decrypt_token,
    decrypt_tokens,
    known_operators,
    operator_info,
)
from polydeid.transform.surrogates import SurrogateGenerator
from polydeid.transform.vault import MemoryVault

from .conftest import KEY, OTHER_KEY

TEXT = "Seen John  Smith today"
SPAN = Span(5, 16, Category.PERSON, "test.v1")
ORIGINAL = TEXT[5:16]


def ctx(key: bytes | None = KEY, state: DocumentState | None = None, **kw) -> OperatorContext:
    return OperatorContext(
        segment=Segment(kw.pop("text", TEXT), lang=kw.pop("lang", "en")),
        keys=KeyRing.from_master(key),
        vault=MemoryVault(),
        state=state or DocumentState(),
        surrogates=SurrogateGenerator(),
        **kw,
    )


def apply(name: str, original: str = ORIGINAL, span: Span = SPAN, context=None, **options) -> str:
    return OperatorSpec.of(name, **options).build().apply(span, original, context or ctx())


def test_registry_lists_builtins_and_rejects_unknown():
    assert set(known_operators()) >= {
        "tag",
        "numbered_tag",
        "mask",
        "remove",
        "keep",
        "surrogate",
        "dateshift",
        "hash",
        "encrypt",
    }
    with pytest.raises(UnknownOperatorError, match="numbered_tag"):
        operator_info("redact-all")


def test_simple_operators():
    assert apply("tag") == "[PERSON]"
    assert apply("tag", template="<{category}>") == "<PERSON>"
    assert apply("remove") == ""
    assert apply("keep") == ORIGINAL
    assert apply("mask") == "*" * len(ORIGINAL)
    assert apply("mask", keep_whitespace=True, char="#") == "####  #####"
    assert apply("mask", "Ann\nLee") == "***\n***"


def test_numbered_tag_is_consistent_per_document_and_category():
    state = DocumentState()
    c = ctx(state=state)
    numbered = OperatorSpec.of("numbered_tag").build()
    person = Span(0, 4, Category.PERSON, "t")
    date = Span(0, 4, Category.DATE, "t")
    assert numbered.apply(person, "John Smith", c) == "[PERSON-1]"
    assert numbered.apply(person, "Mary", c) == "[PERSON-2]"
    assert numbered.apply(person, " JOHN   smith", c) == "[PERSON-1]"
    assert numbered.apply(date, "5 March", c) == "[DATE-1]"
    assert numbered.apply(person, "John Smith", ctx()) == "[PERSON-1]"  # a new document


def test_hash_is_keyed_deterministic_and_normalised():
    digest = apply("hash")
    assert digest.startswith("[PERSON:") and len(digest) == len("[PERSON:]") + 16
    assert apply("hash", "john smith") == digest
    assert apply("hash", context=ctx(OTHER_KEY)) != digest
    assert apply("hash", "Jane Smith") != digest
    assert len(apply("hash", length=32)) == len("[PERSON:]") + 32
    with pytest.raises(KeyMaterialError):
        apply("hash", context=ctx(None))


@settings(max_examples=60, deadline=None)
@given(st.text(min_size=1, max_size=80), st.sampled_from(list(Category)))
def test_encrypt_roundtrip_arbitrary_unicode(original, category):
    token = OperatorSpec.of("encrypt").build().apply(Span(0, 1, category, "t"), original, ctx())
    assert token.startswith(f"ENC({category.value}:") and token.endswith(")")
    assert decrypt_token(token, KEY) == original
    assert decrypt_tokens(f"a {token} b {token}", KEY) == f"a {original} b {original}"


def test_encrypt_is_deterministic_and_key_dependent():
    token = apply("encrypt")
    assert apply("encrypt") == token
    assert apply("encrypt", context=ctx(OTHER_KEY)) != token
    assert ORIGINAL not in token
    with pytest.raises(KeyMaterialError):
        apply("encrypt", context=ctx(None))


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_tampered_token_is_rejected(data):
    token = apply("encrypt")
    body_start = token.index(":") + 1
    i = data.draw(st.integers(body_start, len(token) - 3))  # not the last char (padding bits)
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    replacement = data.draw(st.sampled_from([c for c in alphabet if c != token[i]]))
    tampered = token[:i] + replacement + token[i + 1 :]
    with pytest.raises(DecryptionError):
        decrypt_token(tampered, KEY)


def test_wrong_key_and_swapped_category_fail():
    token = apply("encrypt")
    with pytest.raises(DecryptionError) as info:
        decrypt_token(token, OTHER_KEY)
    assert ORIGINAL not in str(info.value)
    with pytest.raises(DecryptionError):
        decrypt_token(token.replace("ENC(PERSON:", "ENC(PERSON_THIRD_PARTY:"), KEY)
    with pytest.raises(DecryptionError):
        decrypt_token("ENC(PERSON:abc", KEY)
    with pytest.raises(DecryptionError):
        decrypt_token(token[:-3] + ")", KEY)


def test_surrogate_operator_falls_back_to_tag_for_unsupported_category():
    span = Span(0, 5, Category.RELIGION, "t")
    assert apply("surrogate", "Hindu", span=span) == "[RELIGION]"


def test_surrogate_operator_never_returns_original_even_from_vault():
    c = ctx()
    key = c.identity(Category.PERSON, ORIGINAL)
    c.vault.put(key, "JOHN SMITH", value_key=bytes(32))  # a corrupt or hostile vault entry
    out = OperatorSpec.of("surrogate").build().apply(SPAN, ORIGINAL, c)
    assert "john" not in out.lower() or "smith" not in out.lower()


def test_dateshift_operator_shifts_by_patient_offset():
    mod = dateshift
    text = "Admitted 2024-03-05."
    span = Span(9, 19, Category.DATE, "t")
    op = OperatorSpec.of("dateshift", max_days=30).build()
    out = op.apply(span, text[9:19], ctx(text=text, patient_id="p-1"))
    days = mod.patient_offset_days(
        KeyRing.from_master(KEY).dateshift, "p-1", max_days=30, min_days=1
    )
    assert out == mod.shift_date_text("2024-03-05", days, ["en"])
    assert out != "2024-03-05"
    again = op.apply(span, text[9:19], ctx(text=text, patient_id="p-1"))
    assert again == out
    with pytest.raises(KeyMaterialError):
        op.apply(span, text[9:19], ctx(None, text=text, patient_id="p-1"))


def test_dateshift_unparseable_falls_back_to_tag():
    span = Span(0, 12, Category.DATE, "t")
    out = OperatorSpec.of("dateshift").build().apply(span, "the other day", ctx(patient_id="p"))
    assert out == "[DATE]"


def test_operator_spec_of_validates_options():
    from polydeid.core.errors import PolicyError

    with pytest.raises(PolicyError, match=r"hash\.length"):
        OperatorSpec.of("hash", length="16")
    with pytest.raises(UnknownOperatorError):
        OperatorSpec.of("blur")
