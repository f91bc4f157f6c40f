import pytest

from polydeid import Category, Fact, Span


def test_span_repr_never_shows_text():
    text = "Patient Zawadi Nyambura seen"
    span = Span(8, 23, Category.PERSON, "rule.test.v1", 0.9)
    assert "Zawadi" not in repr(span) and "Zawadi" not in str(span)
    assert repr(span) == "Span(8:23 PERSON via rule.test.v1 @0.90)"
    assert span.text_of(text) == "Zawadi Nyambura"


@pytest.mark.parametrize("start,end", [(-1, 3), (3, 3), (5, 2)])
def test_invalid_offsets_rejected(start, end):
    with pytest.raises(ValueError):
        Span(start, end, Category.DATE, "x")


def test_score_range():
    with pytest.raises(ValueError):
        Span(0, 1, Category.DATE, "x", 1.5)


def test_frozen_and_hashable():
    span = Span(0, 4, Category.AGE, "x")
    with pytest.raises(AttributeError):
        span.start = 1  # type: ignore[misc]
    assert len({span, Span(0, 4, Category.AGE, "x")}) == 1


def test_overlap_contains_and_fact_flag():
    a, b, c = (
        Span(0, 5, Category.DATE, "x"),
        Span(4, 8, Category.AGE, "x"),
        Span(5, 8, Fact.DOSE, "f"),
    )
    assert a.overlaps(b) and not a.overlaps(c)
    assert Span(0, 8, Category.DATE, "x").contains(c)
    assert c.is_fact and not a.is_fact
    assert a.to_dict() == {"start": 0, "end": 5, "label": "DATE", "score": 1.0, "source": "x"}
    assert a.shifted(10) == Span(10, 15, Category.DATE, "x")
