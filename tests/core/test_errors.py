import pytest

from polydeid.core import errors


def test_codes_are_unique_and_stable():
    classes = [
        c
        for c in vars(errors).values()
        if isinstance(c, type) and issubclass(c, errors.PolydeidError)
    ]
    codes = [c.code for c in classes]
    assert len(codes) == len(set(codes))
    assert errors.PolicyError.code == "PD101" and errors.DecodingError.code == "PD201"


def test_hierarchy_matches_docstring():
    for name in ("PolicyError", "UnknownCategoryError", "UnknownLanguageError", "KeyMaterialError"):
        assert issubclass(getattr(errors, name), errors.ConfigError)
        assert name in errors.__doc__
    assert issubclass(errors.RecordError, errors.InputError)
    assert issubclass(errors.RuleTimeoutError, errors.DetectionError)


def test_location_in_message():
    exc = errors.RecordError("malformed JSON", location="notes.jsonl:12")
    assert str(exc) == "[PD202] notes.jsonl:12: malformed JSON"
    located = errors.InputError("bad").at("x.txt")
    assert str(located) == "[PD200] x.txt: bad"


def test_unknown_category_lists_known():
    with pytest.raises(errors.UnknownCategoryError) as info:
        from polydeid import Category

        Category.parse("NAMES")
    assert "PERSON" in str(info.value)
