"""A scheme whose guideline leaves years alone unmarked does not count a predicted year as a
false positive, but a year inside a gold date and every other date are scored as before."""

from __future__ import annotations

from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category, scheme
from polydeid.corpora.document import AnnotatedDocument, Corpus
from polydeid.evaluate.harness import set_aside_unmarked_dates


def _corpus(scheme_name: str) -> tuple[Corpus, str]:
    text = "MI in 2004, seen 3/4/2019 and admitted in 2021."
    gold = (Span(text.index("3/4/2019"), text.index("3/4/2019") + 8, Category.DATE, "gold"),)
    doc = AnnotatedDocument(id="d1", text=text, lang="en", spans=gold)
    return Corpus("toy", (doc,), (), scheme_name), text


def _date(text: str, written: str) -> Span:
    start = text.index(written)
    return Span(start, start + len(written), Category.DATE, "test")


def test_asq_phi_guideline_leaves_years_unmarked() -> None:
    assert scheme("asq_phi").unmarked_dates == frozenset({"year"})
    assert scheme("meddocan").unmarked_dates == frozenset()


def test_year_alone_set_aside_only_where_the_scheme_leaves_it_unmarked() -> None:
    corpus, text = _corpus("asq_phi")
    predicted = {"d1": (_date(text, "2004"), _date(text, "3/4/2019"), _date(text, "2021"))}
    kept, aside = set_aside_unmarked_dates(corpus, predicted)
    assert kept["d1"] == (_date(text, "3/4/2019"),)
    assert aside == {"DATE (year)": 2}

    marked, _ = _corpus("meddocan")
    kept, aside = set_aside_unmarked_dates(marked, predicted)
    assert kept["d1"] == predicted["d1"] and aside == {}


def test_year_overlapping_gold_is_still_scored() -> None:
    corpus, text = _corpus("asq_phi")
    start = text.index("2019")
    part = Span(start, start + 4, Category.DATE, "test")
    kept, aside = set_aside_unmarked_dates(corpus, {"d1": (part,)})
    assert kept["d1"] == (part,) and aside == {}
