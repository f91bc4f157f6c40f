"""Minimal identifier shapes (lexicon/data/shapes.toml, pass ``shapes.minimal``): what no
detector may mark as an identifier, and what every shape still lets through."""

from __future__ import annotations

from functools import cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from polydeid import Deidentifier
from polydeid.core.segments import Segment
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category
from polydeid.detect.pipeline import Pipeline
from polydeid.lexicon.shapes import fits, has_label, phone_plan_lengths, shapes
from polydeid.testing import FakeDetector

ID = (Category.ID_NATIONAL, Category.ID_RECORD, Category.ID_OTHER)
NAMES = (Category.PERSON, Category.PERSON_THIRD_PARTY, Category.PERSON_CLAN)


def test_every_category_has_a_shape() -> None:
    assert set(shapes()) == set(Category)


def test_phone_lengths_come_from_the_numbering_plans() -> None:
    shortest, longest = phone_plan_lengths()
    # some plans have four-digit numbers (Saint Helena, Niue); none more than 17 digits
    assert 3 <= shortest <= 6 and 17 <= longest <= 20


@pytest.mark.parametrize(
    "category,text",
    [
        (Category.ID_RECORD, "-"),
        (Category.ID_RECORD, "7"),
        (Category.ID_RECORD, "#"),
        (Category.ID_OTHER, "0700-"),
        (Category.ID_RECORD, "1900-0700"),
        (Category.ID_RECORD, "07:00 - 19:00"),
        (Category.ID_RECORD, "12:45:30"),
        (Category.ID_NATIONAL, "97.8 88 16 132/70 98%"),
        (Category.ID_NATIONAL, "120/80"),
        (Category.ID_OTHER, "88-102"),
        (Category.ID_RECORD, "+4701"),
        (Category.ID_RECORD, "-1074"),
        (Category.ID_NATIONAL, "041-"),
        (Category.ID_RECORD, "Lactante"),
        (Category.ID_RECORD, "gb"),
        (Category.CONTACT_PHONE, "123"),
        (Category.CONTACT_PHONE, "1234567890123456789012"),
        (Category.CONTACT_PHONE, "1900-0700"),
        (Category.CONTACT_OTHER, "surrogateescape"),
        (Category.CONTACT_OTHER, "SameSite"),
        (Category.CONTACT_OTHER, "py"),
        (Category.PERSON, "-"),
        (Category.PERSON, "42"),
        (Category.PERSON_THIRD_PARTY, "."),
        (Category.DATE, "-"),
        (Category.DATE, "the"),
        (Category.AGE, "-"),
        (Category.LOCATION_VILLAGE, "4"),
        (Category.ORGANIZATION, "3."),
    ],
)
def test_what_is_no_identifier_of_its_category(category: Category, text: str) -> None:
    assert not fits(category, text)


@pytest.mark.parametrize(
    "category,text",
    [
        (Category.ID_RECORD, "12345"),
        (Category.ID_RECORD, "MRN-4471"),
        (Category.ID_RECORD, "#882014"),
        (Category.ID_OTHER, "28 28"),
        (Category.ID_OTHER, "AB-99812"),
        (Category.ID_OTHER, "12345 / 18"),
        (Category.ID_NATIONAL, "123-45-6789"),
        (Category.ID_NATIONAL, "2 67 64 42 905 613 75"),
        (Category.ID_NATIONAL, "39 515 752 049"),
        (Category.CONTACT_PHONE, "612 34 56 78"),
        (Category.CONTACT_PHONE, "06 12 34 56 78"),
        (Category.CONTACT_PHONE, "+254 712 345 678"),
        (Category.CONTACT_PHONE, "555 0134"),
        (Category.CONTACT_OTHER, "wanjiru.k@example.org"),
        (Category.CONTACT_OTHER, "wkamau@intranet"),
        (Category.CONTACT_OTHER, "nguyen dot an at gmail dot com"),
        (Category.CONTACT_OTHER, "juan [arroba] hospital [punto] es"),
        (Category.CONTACT_OTHER, "https://example.org/p/4471"),
        (Category.CONTACT_OTHER, "www.example.org"),
        (Category.CONTACT_OTHER, "10.2.33.4"),
        (Category.CONTACT_OTHER, "@mwangi_j"),
        (Category.PERSON, "Li"),
        (Category.PERSON, "J."),
        (Category.PERSON_THIRD_PARTY, "Ng"),
        (Category.DATE, "2024"),
        (Category.DATE, "9/7"),
        (Category.DATE, "Tuesday"),
        (Category.DATE, "mes de abril"),
        (Category.DATE, "5 Machi"),
        (Category.DATE, "Museenene"),
        (Category.AGE, "9"),
        (Category.AGE, "seventy"),
        (Category.SEX, "F"),
        (Category.LOCATION_ADDRESS, "28015"),
        (Category.LOCATION_FACILITY, "Mulago"),
        (Category.LOCATION_VILLAGE, "Gulu"),
        (Category.ORGANIZATION, "WHO"),
    ],
)
def test_what_every_shape_lets_through(category: Category, text: str) -> None:
    assert fits(category, text)


def test_the_pass_drops_what_any_detector_marks_and_can_be_switched_off() -> None:
    text = "Shift 1900-0700, I/O +4701, Jane Doe MRN 4471882."
    spans = [
        Span(6, 15, Category.ID_RECORD, "tagger.fake", 0.9),
        Span(21, 26, Category.ID_RECORD, "tagger.fake", 0.9),
        Span(28, 36, Category.PERSON, "tagger.fake", 0.9),
        Span(41, 48, Category.ID_RECORD, "tagger.fake", 0.9),
    ]
    seg = Segment(text, lang="en")
    kept = Pipeline([FakeDetector(spans)]).detect(seg)
    assert [text[s.start : s.end] for s in kept] == ["Jane Doe", "4471882"]
    off = Pipeline([FakeDetector(spans)], disabled_passes={"shapes.minimal"}).detect(seg)
    assert len(off) == 4


#: (language, text, the labelled value the rules find): an ID or a phone after its label is
#: one, though its shape alone reads as a shift range, a vital range or a blood pressure.
LABELLED = [
    ("en", "MRN: 2011-0934", "2011-0934", Category.ID_RECORD),
    ("en", "Patient ID: 0800-1530", "0800-1530", Category.ID_RECORD),
    ("en", "MRN 123-456", "123-456", Category.ID_RECORD),
    ("en", "NHS number 123-456", "123-456", Category.ID_NATIONAL),
    ("en", "Case number 12/345", "12/345", Category.ID_RECORD),
    ("en", "Phone: 2210-1234", "2210-1234", Category.CONTACT_PHONE),
    ("de", "Fallnummer: 2011-0934", "2011-0934", Category.ID_RECORD),
    ("de", "Patienten-Nr. 0800-1530", "0800-1530", Category.ID_RECORD),
    ("de", "Telefon: 2210-1234", "2210-1234", Category.CONTACT_PHONE),
    ("es", "NHC: 0800-1530", "0800-1530", Category.ID_RECORD),
    ("es", "Nº historia 123-456", "123-456", Category.ID_RECORD),
    ("es", "Teléfono: 2210-1234", "2210-1234", Category.CONTACT_PHONE),
    ("fr", "IPP : 2011-0934", "2011-0934", Category.ID_RECORD),
    ("fr", "Numéro de dossier 12/345", "12/345", Category.ID_RECORD),
    ("fr", "Téléphone : 2210-1234", "2210-1234", Category.CONTACT_PHONE),
    ("sw", "Namba ya usajili: 2011-0934", "2011-0934", Category.ID_RECORD),
    ("sw", "Namba ya faili 123-456", "123-456", Category.ID_RECORD),
    ("sw", "Simu: 2210-1234", "2210-1234", Category.CONTACT_PHONE),
]


@pytest.mark.parametrize(("lang", "text", "value", "category"), LABELLED, ids=range(len(LABELLED)))
def test_a_labelled_id_or_phone_is_kept_whatever_it_looks_like(
    lang: str, text: str, value: str, category: Category
) -> None:
    assert not fits(category, value)
    assert has_label(category, text, text.index(value))
    assert fits(category, value, labelled=True)
    found = _rules().detect(text, lang=lang)
    assert [(text[s.start : s.end], s.label) for s in found] == [(value, category)]


#: (language, text): shift times, a blood pressure, a fluid balance with no ID or phone label.
LOOK_ALIKES = [
    ("en", "Shift 1900-0700, BP 120/80, balance +4701."),
    ("de", "Dienst 1900-0700, RR 120/80, Bilanz +4701."),
    ("es", "Turno 1900-0700, TA 120/80, balance +4701."),
    ("fr", "Garde 1900-0700, TA 120/80, bilan +4701."),
    ("sw", "Zamu 1900-0700, BP 120/80, salio +4701."),
]


@pytest.mark.parametrize(("lang", "text"), LOOK_ALIKES, ids=range(len(LOOK_ALIKES)))
@pytest.mark.parametrize("category", [*ID, Category.CONTACT_PHONE])
def test_an_unlabelled_look_alike_is_dropped(lang: str, text: str, category: Category) -> None:
    values = ("1900-0700", "120/80", "+4701")
    spans = [
        Span(text.index(v), text.index(v) + len(v), category, "tagger.fake", 0.9) for v in values
    ]
    for span in spans:
        assert not has_label(category, text, span.start)
    found = Pipeline([FakeDetector(spans)]).detect(Segment(text, lang=lang))
    assert [text[s.start : s.end] for s in found if s.label is category] == []
    assert _rules().detect(text, lang=lang) == []


def test_a_label_of_another_kind_or_line_vouches_for_nothing() -> None:
    # a phone label does not vouch for an ID, nor an ID label for a phone; a label ends at a
    # line or field break, and only filler words may stand between it and the value
    assert not has_label(Category.ID_RECORD, "Phone: 2210-1234", 7)
    assert not has_label(Category.CONTACT_PHONE, "MRN: 2210-1234", 5)
    assert not has_label(Category.ID_RECORD, "MRN\n1900-0700", 4)
    assert not has_label(Category.ID_RECORD, "MRN 4471882; 1900-0700", 13)
    assert not has_label(Category.ID_RECORD, "MRN taken at 1900-0700", 13)
    assert has_label(Category.ID_RECORD, "MRN no. 2011-0934", 8)
    assert not has_label(Category.PERSON, "MRN: Jane Doe", 5)


# --- property: no span of a shipped profile lacks its category's shape ---------------------

#: Pieces of clinical notes, logs and forms, as written: identifiers and what only looks like
#: them (vital lists, shift times, balances, scores, versions, RFC numbers, lone hyphens).
PIECES = (
    "BP 120/80 HR 88 RR 18 T 37.2 SpO2 98%",
    "VS 97.8 88 16 132/70 98% RA",
    "I/O +4701 / -1074 since mn",
    "shift 1900-0700",
    "0700-",
    "HR 88-102",
    "GCS 3/15",
    "-",
    " - ",
    "7",
    "#",
    "MRN: 4471882",
    "record no. 88-31044",
    "ID 123-45-6789",
    "Tel 0712 345 678",
    "call +254 712 345 678",
    "e-mail wanjiru.k@example.org",
    "see https://example.org/p/4471",
    "Dr. Amina Wanjiru",
    "Mr Okello James",
    "seen 9/7",
    "on 12 March 2024",
    "aged 54",
    "RFC 2068",
    "rfc822",
    "gb2312",
    "v4.8.19",
    "Jan Feb Mar",
    "surrogateescape",
    "SameSite=Lax",
    "copyright 2001-2007",
    "seven",
    "041-",
    "Kampala",
    "Mulago Hospital",
    "patient",
    "1/2 tab",
    "7.37/49/247",
)


def _check(text: str, spans: tuple[Span, ...] | list[Span]) -> None:
    for s in spans:
        if not isinstance(s.label, Category):
            continue
        value = text[s.start : s.end]
        alnum = sum(c.isalnum() for c in value)
        digits = sum(c.isdigit() for c in value)
        # the shapes' table, and what holds whatever the table says
        assert fits(s.label, value, labelled=has_label(s.label, text, s.start)), (s, value)
        assert alnum >= 1, (s, value)
        if s.label in ID:
            assert digits >= 1 and alnum >= 4, (s, value)
            assert value.strip() not in {"1900-0700", "0700-", "+4701", "-1074", "88-102"}
        if s.label is Category.CONTACT_PHONE:
            assert digits >= phone_plan_lengths()[0], (s, value)
        if s.label in NAMES:
            assert any(c.isalpha() for c in value), (s, value)


_text = st.lists(
    st.one_of(
        st.sampled_from(PIECES),
        st.text(alphabet="0123456789-/:.+ ", min_size=1, max_size=12),
        st.from_regex(r"[A-Z][a-z]{2,8}( [A-Z][a-z]{2,8})?", fullmatch=True),
    ),
    min_size=1,
    max_size=8,
).map(" ; ".join)


@cache
def _rules() -> Deidentifier:
    return Deidentifier(profile="rules", policy="tag")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_text, lang=st.sampled_from(["en", "de", "es", "fr", "sw", "lg", "vi"]))
def test_no_rules_span_lacks_its_minimal_shape(text: str, lang: str) -> None:
    _check(text, _rules().detect(text, lang=lang))


@cache
def _default() -> Deidentifier:
    return Deidentifier(profile="default", policy="tag")


@pytest.mark.torch
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=_text, lang=st.sampled_from(["en", "de", "es", "sw"]))
def test_no_default_span_lacks_its_minimal_shape(text: str, lang: str) -> None:
    _check(text, _default().detect(text, lang=lang))


@pytest.mark.torch
def test_no_default_span_in_notes_lacks_its_minimal_shape() -> None:
    text = "\n".join(PIECES)
    for lang in ("en", "de", "es", "sw"):
        _check(text, _default().detect(text, lang=lang))
