"""Phone and fax numbers: per-region positives, non-phone negatives, context, extensions.

Test ids are labels, never the numbers themselves.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator

import phonenumbers
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from phonenumbers import PhoneNumberFormat, PhoneNumberType

from polydeid.core.errors import ConfigError, RuleTimeoutError
from polydeid.core.segments import Segment
from polydeid.core.taxonomy import Category
from polydeid.detect.rules import phone_reading, phones
from polydeid.detect.rules.phones import (
    SOURCE_CONTEXT,
    SOURCE_FOREIGN,
    SOURCE_INTERNATIONAL,
    SOURCE_NATIONAL,
    PhoneRule,
)
from polydeid.locales import default_countries, languages

RULE = PhoneRule()


def found(text: str, lang: str = "en", countries: tuple[str, ...] = ()) -> list[str]:
    """The texts of the phone spans found (for assertions only; never printed by ids)."""
    spans = RULE.detect(Segment(text, lang=lang, countries=countries))
    assert all(s.label is Category.CONTACT_PHONE for s in spans)
    return [text[s.start : s.end] for s in spans]


_NBSP_NUMBER = "\u00a0".join(["06", "12", "34", "56", "78"])

# (label, lang, text, expected span text)
POSITIVES = [
    ("ug-intl-spaced", "lg", "Essimu +256 772 123456 yakola.", "+256 772 123456"),
    ("ke-intl-compact", "sw", "Simu +254712345678.", "+254712345678"),
    ("ug-intl-00", "lg", "Ku ssimu 00256 772 123 456 oba", "00256 772 123 456"),
    ("rw-intl", "rw", "telefone +250 788 123 456.", "+250 788 123 456"),
    ("tz-intl", "sw", "Piga +255 754 123 456 kesho", "+255 754 123 456"),
    ("de-intl", "de", "Rückruf unter +49 30 1234567 erbeten", "+49 30 1234567"),
    ("es-intl", "es", "Móvil: +34 612 34 56 78", "+34 612 34 56 78"),
    ("vn-intl", "vi", "Liên hệ +84 912 345 678.", "+84 912 345 678"),
    ("fr-intl", "fr", "Joignable au +33 6 12 34 56 78.", "+33 6 12 34 56 78"),
    ("us-intl-parens", "en", "Phone +1 (415) 555-0134 (fictional range).", "+1 (415) 555-0134"),
    ("intl-paren-zero", "de", "Tel. +49 (0)30 1234567", "+49 (0)30 1234567"),
    ("intl-in-parens", "en", "mobile (+256) 772 123456", "(+256) 772 123456"),
    ("intl-after-colon", "en", "Tel:+256-772-123456", "+256-772-123456"),
    ("ug-local", "lg", "Essimu: 0772 123456.", "0772 123456"),
    ("ke-local-dashes", "sw", "namba ya simu 0712-345-678", "0712-345-678"),
    ("rw-local-bare", "rw", "telefone 0788123456", "0788123456"),
    ("de-local", "de", "Tel. 030 1234567", "030 1234567"),
    ("de-local-slash", "de", "Telefon 030/1234567", "030/1234567"),
    ("es-local-no-trunk", "es", "Teléfono 612 345 678", "612 345 678"),
    ("vn-local", "vi", "số điện thoại 0912 345 678", "0912 345 678"),
    ("vn-local-dots", "vi", "ĐT: 0912.345.678", "0912.345.678"),
    ("fr-local-pairs", "fr", "Tél. : 06 12 34 56 78.", "06 12 34 56 78"),
    ("fr-local-hyphens", "fr", "Tél. : 06-12-34-56-78.", "06-12-34-56-78"),
    ("fr-local-dots", "fr", "Tél. : 06.12.34.56.78.", "06.12.34.56.78"),
    ("us-local", "en", "Phone (415) 555-2671, email below", "(415) 555-2671"),
    ("ca-local-in-us", "en", "call 416-555-0199 today", "416-555-0199"),
    ("ug-pairs", "lg", "essimu 0772 12 34 56", "0772 12 34 56"),
    ("ug-spaced-out", "lg", "essimu 0 7 7 2 1 2 3 4 5 6", "0 7 7 2 1 2 3 4 5 6"),
    ("cn-mobile", "zh", "电话 13812345678", "13812345678"),
    ("cn-mobile-fullwidth", "zh", "电话 １３８１２３４５６７８", "１３８１２３４５６７８"),
    ("eg-arabic-indic", "ar", "هاتف +٢٠ ١٠ ٠١٢٣٤٥٦٧", "+٢٠ ١٠ ٠١٢٣٤٥٦٧"),
    ("in-devanagari", "hi", "फोन +९१ ८१२३४ ५६७८९", "+९१ ८१२३४ ५६७८९"),
    ("ru-trunk-8", "ru", "тел. 8 (912) 345-67-89", "8 (912) 345-67-89"),
    ("fr-nbsp", "fr", "Tél. " + _NBSP_NUMBER, _NBSP_NUMBER),
    ("de-ext-durchwahl", "de", "Tel. 030 1234567, Durchwahl -12", "030 1234567, Durchwahl -12"),
    ("us-ext", "en", "call +1 415 555 0134 ext. 204 now", "+1 415 555 0134 ext. 204"),
    ("us-ext-x", "en", "(415) 555-2671 x204", "(415) 555-2671 x204"),
    ("cn-ext-zhuan", "zh", "电话 010-12345678转8", "010-12345678转8"),
    ("after-record-id", "en", "ID12345678 0772123456", "0772123456"),
]


@pytest.mark.parametrize(
    "lang,text,expected", [p[1:] for p in POSITIVES], ids=[p[0] for p in POSITIVES]
)
def test_finds_phone(lang: str, text: str, expected: str) -> None:
    assert found(text, lang) == [expected]


def test_two_numbers_in_a_list() -> None:
    assert found("Tel: 0772123456 / 0712345678", "en") == ["0772123456", "0712345678"]


def test_fax_context_counts_like_phone() -> None:
    assert found("Fax 772 123456", "en") == ["772 123456"]


# (label, lang, text)
NEGATIVES = [
    ("date-dmy-slash", "en", "Seen on 12/03/2024 in clinic."),
    ("date-iso", "en", "Admitted 2024-03-12, discharged 2024-03-19."),
    ("date-dots", "de", "geb. 14.02.1957, Aufnahme 19.03.2024"),
    ("date-short", "luo", "Nobiro e osiptal chieng 3/4/2024."),
    ("date-then-time", "en", "2024-03-12 14:30 reviewed"),
    ("blood-pressure", "en", "BP 120/80 mmHg, HR 88, RR 18"),
    ("bp-series", "en", "BP 120/80 130/85 140/90 over three visits"),
    ("lab-values", "en", "Hb 11.2 g/dL, WBC 7.4, Plt 245, Na 138, K 4.1, Cr 86"),
    ("lab-value-list", "en", "glucose 5.6 6.1 7.2 8.4 mmol/L"),
    ("doses", "en", "amoxicillin 500 mg tds, 1 000 000 IU vitamin A"),
    ("viral-load", "en", "viral load 1 234 567 copies/mL"),
    ("record-slashes", "lg", "MRN: MUL/2024/00871."),
    ("record-dashes", "vi", "mã bệnh nhân: BN-2024-00123."),
    ("record-year-led", "en", "Numéro de dossier : 2024-004512."),
    ("record-bare", "de", "Fallnummer: 20240012345."),
    ("mrn-7-digits", "en", "MRN: 4455667."),
    ("year", "en", "In 2024 she moved."),
    ("year-range", "en", "between 2019-2024 and 2019 - 2024"),
    ("rw-nid", "rw", "indangamuntu 1199080012345012"),
    ("rw-nid-spaced", "rw", "indangamuntu 1 1995 7 0012345 0 12"),
    ("fr-nir", "fr", "NIR 1 84 12 76 451 089 46"),
    ("us-ssn", "en", "SSN 123-45-6789 was not provided"),
    ("es-dni", "es", "DNI 12345678Z"),
    ("ke-id", "sw", "namba ya kitambulisho 23456789."),
    ("iban-de", "de", "IBAN DE89 3704 0044 0532 0130 00"),
    ("iban-compact", "de", "IBAN DE89370400440532013000"),
    ("card", "en", "card 4111 1111 1111 1111"),
    ("time", "en", "review at 14:30 and 08:00-17:00"),
    ("counts", "en", "1,234,567 cells counted"),
    ("spaced-digit-list", "en", "scores 0 1 2 3 4 5 6 7 8 9 0 1 2"),
    ("version", "en", "software 10.2.3.4567"),
    ("no-trunk-no-context", "lg", "patient 772 123456 seen"),
    ("glued-to-letters", "en", "code AB0772123456CD"),
]


@pytest.mark.parametrize("lang,text", [n[1:] for n in NEGATIVES], ids=[n[0] for n in NEGATIVES])
def test_no_phone(lang: str, text: str) -> None:
    assert found(text, lang) == []


def test_context_accepts_number_without_trunk_prefix() -> None:
    text = "simu 772 123456"
    spans = RULE.detect(Segment(text, lang="lg"))
    assert [(text[s.start : s.end], s.source) for s in spans] == [("772 123456", SOURCE_CONTEXT)]


def test_context_does_not_reach_past_another_number() -> None:
    # "Tel" belongs to the first number; the record number after it gets no context.
    assert found("Tel 0772123456, ref 772 123456", "lg") == ["0772123456"]


def test_context_word_must_be_whole_word() -> None:
    # "hotel" contains "tel" but is not the word "tel".
    assert found("hotel 772 123456", "en") == []


def test_field_hint_counts_as_context() -> None:
    segment = Segment("772 123456", lang="lg", hints=frozenset({"field:phone"}))
    assert [s.source for s in RULE.detect(segment)] == [SOURCE_CONTEXT]


def test_sources_and_scores() -> None:
    text = "+256 772 123456 and 0772 123456"
    spans = RULE.detect(Segment(text, lang="lg"))
    assert [s.source for s in spans] == [SOURCE_INTERNATIONAL, SOURCE_NATIONAL]
    assert all(0.5 <= s.score <= 1.0 for s in spans)


def test_region_comes_from_segment_countries() -> None:
    # A Spanish mobile number in Spanish grouping is a number of the segment's region on its
    # own; anywhere else it needs a phone word (Spain writes no trunk prefix).
    text = "llamar 612 345 678"
    assert found(text, "en", countries=("ES",)) == ["612 345 678"]
    assert found(text, "en", countries=("UG",)) == []
    spans = RULE.detect(Segment("Tel. 612 345 678", lang="en", countries=("UG",)))
    assert [s.source for s in spans] == [SOURCE_FOREIGN]


def test_unknown_country_fails_closed() -> None:
    with pytest.raises(ConfigError):
        RULE.detect(Segment("0772 123456", lang="en", countries=("XX",)))


class _TimingOutPattern:
    def finditer(self, *args: object, **kwargs: object) -> object:
        raise TimeoutError


def test_timeout_fails_closed_without_text(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(phones, "_RUN_ASCII", _TimingOutPattern())
    with pytest.raises(RuleTimeoutError) as info:
        RULE.detect(Segment("Tel 0772 123456", lang="en"))
    assert "0772" not in str(info.value) and "123456" not in str(info.value)


def test_long_digit_tables_stay_linear() -> None:
    # A huge run of spaced digits is processed, in bounded time, without false positives.
    assert found("0 " * 5000, "en") == []
    assert found(" ".join(["0772123456"] * 300), "lg") == ["0772123456"] * 300


# -- properties ---------------------------------------------------------------------------

_REGIONS = sorted({c for lang in languages() for c in default_countries(lang)})
_TYPES = [PhoneNumberType.MOBILE, PhoneNumberType.FIXED_LINE]
_FORMATS = [PhoneNumberFormat.NATIONAL, PhoneNumberFormat.INTERNATIONAL, PhoneNumberFormat.E164]
_EXAMPLES = [
    (region, phonenumbers.format_number(number, fmt))
    for region in _REGIONS
    for kind in _TYPES
    if (number := phonenumbers.example_number_for_type(region, kind)) is not None
    for fmt in _FORMATS
]

_filler = st.text(alphabet="abcdefghij klmnop", max_size=30).map(lambda s: f" {s.strip()} ")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(example=st.sampled_from(_EXAMPLES), before=_filler, after=_filler)
def test_every_example_number_of_every_default_region_is_found(
    example: tuple[str, str], before: str, after: str
) -> None:
    region, number = example
    text = f"Tel.{before}{number}{after}"
    assert found(text, "en", countries=(region,)) == [number]


@settings(max_examples=100, deadline=None)
@given(
    day=st.integers(1, 28),
    month=st.integers(1, 12),
    year=st.integers(1930, 2030),
    sep=st.sampled_from(["/", ".", "-"]),
    systolic=st.integers(80, 200),
    diastolic=st.integers(40, 120),
    lang=st.sampled_from(["en", "sw", "lg", "de", "es", "fr", "vi"]),
)
def test_dates_and_readings_are_never_phones(
    day: int, month: int, year: int, sep: str, systolic: int, diastolic: int, lang: str
) -> None:
    text = (
        f"Seen {day:02d}{sep}{month:02d}{sep}{year} and {year}{sep}{month:02d}{sep}{day:02d}, "
        f"BP {systolic}/{diastolic} mmHg, T 36.{day % 10}."
    )
    assert found(text, lang) == []


@settings(max_examples=200, deadline=None)
@given(text=st.text(alphabet=st.sampled_from("0123456789 +-/.()x:abc\u00a0٠١٢"), max_size=80))
def test_spans_are_in_bounds_and_disjoint(text: str) -> None:
    spans = RULE.detect(Segment(text, lang="ar"))
    for span in spans:
        assert 0 <= span.start < span.end <= len(text)
    for a, b in itertools.pairwise(spans):
        assert a.end <= b.start


# -- foreign numbers: every country's national form, in a record of any language ----------

#: (label, number in its country's national form); fictional or example ranges.
FOREIGN_NUMBERS = [
    ("us-dashes", "617-555-0134"),
    ("us-parens", "(617) 555-0134"),
    ("uk-landline", "020 7946 0958"),
    ("uk-mobile", "07911 123456"),
    ("de-landline", "030 12345678"),
    ("de-mobile", "0151 23456789"),
    ("fr-mobile", "06 12 34 56 78"),
    ("fr-landline", "01 42 34 56 78"),
    ("ke-mobile", "0712 345678"),
    ("ke-mobile-3-3", "0722 123 456"),
    ("ug-mobile", "0772 123456"),
    ("ug-landline", "0414 123456"),
    ("vn-mobile", "0912 345 678"),
    ("vn-landline", "024 3825 1234"),
]

#: A sentence of each language with no phone word in it.
FOREIGN_SENTENCES = {
    "en": "Her sister, {}, was informed.",
    "de": "Die Tochter, {}, wurde informiert.",
    "es": "La hermana, {}, fue informada.",
    "fr": "La sœur, {}, a été informée.",
    "vi": "Chị gái, {}, đã được thông báo.",
    "sw": "Dada yake, {}, amejulishwa.",
    "lg": "Mwannyina, {}, yategeezeddwa.",
}


@pytest.mark.parametrize("lang", sorted(FOREIGN_SENTENCES))
@pytest.mark.parametrize(
    "number", [n for _, n in FOREIGN_NUMBERS], ids=[k for k, _ in FOREIGN_NUMBERS]
)
def test_foreign_number_is_found_whole_in_any_language(number: str, lang: str) -> None:
    assert found(FOREIGN_SENTENCES[lang].format(number), lang) == [number]


@pytest.mark.parametrize(
    "lang,text,numbers",
    [
        ("sw", "Ndugu: 020 7946 0958, 020 7946 0959.", ["020 7946 0958", "020 7946 0959"]),
        ("sw", "Ndugu: 020 7946 0958 / 0151 23456789", ["020 7946 0958", "0151 23456789"]),
        ("vi", "Người nhà: 617-555-0134; (617) 555-0199", ["617-555-0134", "(617) 555-0199"]),
    ],
    ids=["uk-uk", "uk-de", "us-us"],
)
def test_a_list_of_foreign_numbers(lang: str, text: str, numbers: list[str]) -> None:
    assert found(text, lang) == numbers


def test_foreign_number_whatever_the_segment_countries() -> None:
    # The countries a segment carries choose how its own numbers read; they never hide another
    # country's number.
    assert found("Dada yake, 617-555-0134, amejulishwa.", "sw", countries=("KE",)) == [
        "617-555-0134"
    ]
    spans = RULE.detect(Segment("Bruder 617-555-0134", lang="de"))
    assert [s.source for s in spans] == [SOURCE_FOREIGN]


@pytest.mark.parametrize(
    "lang,text",
    [
        ("de", "Zeitraum 2019 - 2024 und 1234 5678"),  # years and 8-digit groups: no country
        ("sw", "namba ya faili 6175550134"),  # a bare digit string without a phone word
        ("fr", "dossier 4455 6677 clos"),  # eight digits in two groups, no trunk prefix
        ("es", "al alta de 800-1000 ml/día"),  # a range: "8" is a trunk prefix only in some
        ("es", "NASS: 84 37283957 33."),  # a social-security number
        ("es", "NASS: 91 03577050 06."),  # the same, with a 0 inside
        ("es", "NASS: 08 76457156 14."),  # a foreign number's grouping inside a longer id
        ("es", "NSS: 92-91-90-8443-1."),
        ("es", "Médico: NºCol: 08 08 76541."),  # a licence number: "08" is no area code
    ],
    ids=[
        "short-groups",
        "bare-digits",
        "two-groups",
        "volume-range",
        "nass",
        "nass-inner-zero",
        "nass-slice",
        "nss-slice",
        "licence",
    ],
)
def test_foreign_reading_needs_grouping_or_context(lang: str, text: str) -> None:
    assert found(text, lang) == []


#: (label, number) written the ways a number is commonly written abroad: a North American
#: number with its country prefix, an Indian mobile number without its trunk prefix, a bare
#: ten-digit mobile number led by its trunk prefix (valid in Tanzania and France among others,
#: in no plan of Uganda's), a British number with a bracketed trunk prefix.
FOREIGN_GROUPINGS = [
    ("nanp-country-prefix", "1-617-555-0134"),
    ("nanp-country-prefix-parens", "1 (617) 555-0134"),
    ("nanp-plus-one", "+1 617 555 0134"),
    ("in-mobile", "98765 43210"),
    ("bare-mobile-trunk", "0612345678"),
    ("bare-uk-mobile", "07911123456"),
    ("uk-bracketed-trunk", "(0)20 7946 0958"),
]

#: A sentence of each language reaching a relative, with no phone word in it.
REACH_SENTENCES = {
    "sw": "Dada yake anapatikana kwa {}.",
    "lg": "Mwannyina afunibwa ku {}.",
    "en": "Her brother can be reached at {}.",
    "de": "Die Tochter ist unter {} erreichbar.",
    "fr": "Sa sœur, {}, a été prévenue.",
    "vi": "Chị gái, {}, đã được báo.",
}


@pytest.mark.parametrize("lang", sorted(REACH_SENTENCES))
@pytest.mark.parametrize(
    "number", [n for _, n in FOREIGN_GROUPINGS], ids=[k for k, _ in FOREIGN_GROUPINGS]
)
def test_foreign_number_in_its_common_grouping_is_found(number: str, lang: str) -> None:
    assert found(REACH_SENTENCES[lang].format(number), lang) == [number]


@pytest.mark.parametrize("lang", sorted(REACH_SENTENCES))
@pytest.mark.parametrize(
    "lookalike",
    [
        "7.37/49/247",  # blood gas
        "120/80",  # blood pressure
        "12/03/2024",  # date
        "2024-03-12",
        "98765 432101",  # an identifier in two groups
        "ID98765 43210",  # glued to letters
        "98765 43210 77",  # a mobile grouping inside a longer identifier
        "1 250 000 000 KSh",  # money
        "USD 12 345 678,50",
        "4111 1111 1111 1111",  # a card number
    ],
    ids=[
        "blood-gas",
        "bp",
        "date",
        "date-iso",
        "two-groups-id",
        "glued",
        "mobile-slice",
        "money",
        "money-decimal",
        "card",
    ],
)
def test_foreign_lookalikes_are_left_alone(lookalike: str, lang: str) -> None:
    assert found(REACH_SENTENCES[lang].format(lookalike), lang) == []


@pytest.mark.parametrize("lang", ["lg", "vi"])
@pytest.mark.parametrize(
    "lookalike",
    [
        "1-617-555-0134-22",
        "A1-617-555-0134",
        "0612345678-4",
        "0612345678 17",
        "X0612345678",
        "066412345678",  # twelve bare digits led by 0: a citizen-ID number
    ],
    ids=[
        "nanp-slice",
        "nanp-glued",
        "bare-dash-slice",
        "bare-space-slice",
        "bare-glued",
        "bare-twelve-digits",
    ],
)
def test_foreign_number_is_never_a_slice_of_an_identifier(lookalike: str, lang: str) -> None:
    assert found(REACH_SENTENCES[lang].format(lookalike), lang) == []


def _region_samples(region: str, rng: random.Random, count: int) -> list[str]:
    """Digit strings near the region's example numbers (with trunk prefix, country code or
    neither; digits changed, added or dropped) and random ones, 7 to 14 digits."""
    shape = phones._region_shape(region)
    metadata = phonenumbers.PhoneMetadata.metadata_for_region(region)
    seeds = [
        desc.example_number
        for field in (*phone_reading.TYPE_FIELDS, "general_desc")
        if (desc := getattr(metadata, field, None)) is not None and desc.example_number
    ]
    samples = []
    while len(samples) < count:
        if seeds and rng.random() < 0.8:
            seed = rng.choice(seeds)
            keep = rng.randrange(len(seed) + 1)
            tail = max(0, len(seed) - keep + rng.randrange(-1, 2))
            body = seed[:keep] + "".join(rng.choice("0123456789") for _ in range(tail))
            digits = rng.choice(["", shape.prefix, shape.country_code]) + body
        else:
            digits = "".join(rng.choice("0123456789") for _ in range(rng.randrange(7, 15)))
        if 7 <= len(digits) <= 14:
            samples.append(digits)
    return samples


def test_metadata_mirror_settles_only_what_phonenumbers_reads_the_same_in_every_region() -> None:
    """Where the mirror of a region's metadata reads a number as valid in national form and
    settles it without a parse, ``phonenumbers.parse`` and ``is_valid_number`` agree (valid,
    same national significant number): in every region phonenumbers knows."""
    rng = random.Random(34)
    settled = 0
    for region in sorted(phonenumbers.SUPPORTED_REGIONS):
        shape = phones._region_shape(region)
        for digits in _region_samples(region, rng, 60):
            if shape.reading(digits) is phones._Reading.CANONICAL and shape.settles(digits):
                settled += 1
                assert phones._is_canonical(digits, region, shape.prefix), region
    assert settled > 1000  # the sample reaches valid numbers of many regions


def test_reading_without_a_parse_is_what_phonenumbers_parses_in_every_region() -> None:
    """``read_in`` (the national significant number ``parse`` takes and its number type, from
    the metadata) agrees with ``parse``, ``is_valid_number`` and ``number_type`` for digits near
    every region's numbers, read in that region and in another one, wherever it answers, and
    answers for most of them."""
    rng = random.Random(4141)
    regions = sorted(phonenumbers.SUPPORTED_REGIONS)
    asked = answered = valid = 0
    for region in regions:
        for digits in _region_samples(region, rng, 40):
            for reader in (region, rng.choice(regions)):
                asked += 1
                reading = phone_reading.read_in(digits, reader)
                if reading is None:
                    continue
                answered += 1
                number = phonenumbers.parse(digits, reader)
                kind = phonenumbers.number_type(number)
                assert reading.nsn == phonenumbers.national_significant_number(number), reader
                assert reading.valid == phonenumbers.is_valid_number(number), reader
                assert reading.mobile == (
                    kind in {PhoneNumberType.MOBILE, PhoneNumberType.FIXED_LINE_OR_MOBILE}
                ), reader
                valid += reading.valid
    assert answered > 0.7 * asked
    assert valid > 2000  # the sample reaches valid numbers of many regions


def test_national_form_is_how_phonenumbers_writes_a_number_in_every_region() -> None:
    """The digit groups and digits of a region's national format (one pattern of its formats,
    the rule's prefix written as phonenumbers writes it: Argentina's ``0 11 15-…``) are those
    of ``format_number(…, NATIONAL)``, for digits near every region's numbers."""
    rng = random.Random(4242)
    checked = 0
    for region in sorted(phonenumbers.SUPPORTED_REGIONS):
        shape = phones._region_shape(phones._main_region(region))
        for digits in _region_samples(region, rng, 40):
            reading = phone_reading.read_in(digits, region)
            if reading is None:
                continue
            written = phonenumbers.format_number(
                phonenumbers.parse(digits, region), PhoneNumberFormat.NATIONAL
            )
            expected = (phones._group_lengths(written), phones._digits(written))
            assert shape.national_form(reading.nsn) == expected, region
            checked += 1
    assert checked > 5000


def test_foreign_reading_without_a_parse_is_phonenumbers_word_in_every_region() -> None:
    """``_canonical_in`` (the mirror first, a parse only where it cannot decide) answers as
    ``_is_canonical`` (always a parse) does, for digits near every region's numbers read in
    that region and in another one."""
    rng = random.Random(3535)
    regions = sorted(phonenumbers.SUPPORTED_REGIONS)
    canonical = 0
    for region in regions:
        for digits in _region_samples(region, rng, 60):
            for reader in (region, rng.choice(regions)):
                expected = phones._is_canonical(digits, reader, phones._region_shape(reader).prefix)
                assert phones._canonical_in(digits, reader, phones._Memo()) == expected, reader
                canonical += expected
    assert canonical > 2000  # the sample reaches valid numbers of many regions


def _scan(own: tuple[str, ...]) -> phones._Scan:
    """A scan of an English segment whose regions are ``own``."""
    return phones._Scan(
        segment=Segment("", lang="en"),
        regions=own,
        national_lengths=phones._national_lengths(own),
        locale=phones._locale(("en",)),
        hinted=False,
        rule_id=phones.PhoneRule.id,
    )


def _may_be_national(plan: phones._Plan, digits: str) -> bool:
    """Whether the region's general description admits ``digits``, or them without the lead
    its prefix pattern strips (the filter ``_Plan.may_be_valid`` narrows)."""
    if plan.general.fullmatch(digits):
        return True
    lead = plan.strip.match(digits) if plan.strip is not None else None
    return (
        lead is not None and lead.end() > 0 and bool(plan.general.fullmatch(digits[lead.end() :]))
    )


def test_the_sieve_keeps_every_region_whose_plan_may_read_the_digits() -> None:
    """``_Sieve.positions`` (every region of a length at once) holds each region whose
    ``_Plan.may_be_valid`` holds, for digits near every region's numbers and random ones of
    every length, and it narrows: most regions are left out."""
    rng = random.Random(4242)
    low, high = phones._NATIONAL_DIGITS
    admitted_in_all = kept = offered = 0
    for region in sorted(phonenumbers.SUPPORTED_REGIONS):
        for digits in _region_samples(region, rng, 10):
            if not low <= len(digits) <= high:
                continue
            plans = phones._plans_of_length(len(digits))
            passed = {plans[k].region for k in phones._sieve(len(digits)).positions(digits)}
            admitted = {plan.region for plan in plans if plan.may_be_valid(digits)}
            assert admitted <= passed, region
            admitted_in_all += len(admitted)
            kept += len(passed)
            offered += len(plans)
    assert admitted_in_all > 5000  # the sample reaches valid forms of many regions
    assert kept < offered / 4


def test_the_national_plan_answers_as_reading_every_region(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``_find_national`` (the segment's regions read together first: digits no region's
    pattern accepts are settled at once, and the reading starts at the first region whose
    pattern does) finds what reading every region in order finds, for digits near the
    numbers of each region read among others."""
    rng = random.Random(5151)
    regions = sorted(phonenumbers.SUPPORTED_REGIONS)
    cases = []
    for region in regions:
        own = tuple(rng.sample(regions, rng.randrange(1, 6)))
        own = tuple(dict.fromkeys((*own[:2], region, *own[2:])))
        cases += [(digits, own) for digits in _region_samples(region, rng, 6)]
    found = [phones._find_national(digits, own) for digits, own in cases]
    monkeypatch.setattr(phones._NationalPlan, "finding", lambda self, digits: (False, None, 0))
    assert found == [phones._find_national(digits, own) for digits, own in cases]
    assert sum(f is not None and f.valid for f in found) > 500


def test_regions_of_one_country_code_share_their_valid_patterns() -> None:
    """The regions of one code (the North American plan's) share one ``_ValidByLength``, so its
    patterns are compiled once; regions of other codes do not."""
    shared = {id(phones._region_shape(r).valid) for r in ("US", "CA", "JM", "AG", "PR")}
    assert len(shared) == 1
    assert id(phones._region_shape("GB").valid) not in shared


def test_foreign_reading_answers_as_a_region_by_region_reading_in_any_order() -> None:
    """``_Scan.foreign`` (the regions that read earlier numbers of the segment first) answers
    whether some region outside the segment's admits the digits by its general description
    and reads them as valid in national form (``_canonical_in``), and, asked with a filter on
    the regions, whether one of those it keeps does and the filter's condition holds there."""
    rng = random.Random(3838)
    regions = sorted(phonenumbers.SUPPORTED_REGIONS)
    low, high = phones._NATIONAL_DIGITS
    found = filtered = 0
    asked_before = itertools.count()
    for own in [tuple(rng.sample(regions, 2)) for _ in range(3)]:
        scan = _scan(own)  # one segment: the favoured regions carry over between numbers
        for region in regions:
            for digits in _region_samples(region, rng, 8):
                readers = [
                    plan.region
                    for plan in phones._plans_of_length(len(digits))
                    if low <= len(digits) <= high
                    and plan.region not in own
                    and _may_be_national(plan, digits)
                    and phones._canonical_in(digits, plan.region, phones._Memo())
                ]
                assert scan.foreign(digits) == bool(readers), region
                found += bool(readers)
                kept = frozenset([*rng.sample(regions, 40), region])
                odd = {r for r in regions if sum(map(ord, r + digits)) % 2}
                expected = any(r in kept and r in odd for r in readers)
                asked = phones._Kept(kept, lambda _: True)
                question = f"odd {next(asked_before)}"  # a new question for the memo
                assert scan.foreign(digits, asked, odd.__contains__, question) == expected, region
                filtered += expected
    assert found > 2000  # the sample reaches valid numbers of many regions
    assert filtered > 500


def _written_samples(region: str, rng: random.Random) -> list[str]:
    """Numbers near ``region``'s examples written as phonenumbers writes them nationally, and
    regrouped: the prefix apart, bracketed or dropped, digits grouped at random."""
    samples = []
    metadata = phonenumbers.PhoneMetadata.metadata_for_region(region)
    prefix = metadata.national_prefix or ""
    for digits in _region_samples(region, rng, 12):
        number = phones._parse(digits, region)
        if number is not None:
            national = phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.NATIONAL)
            samples.append(national)
            if prefix and national.startswith(prefix):
                rest = national[len(prefix) :]
                samples += [f"{prefix} {rest}", f"({prefix}){rest}", rest.lstrip()]
        cuts = sorted(rng.sample(range(1, len(digits)), rng.randrange(1, 4)))
        samples.append(
            " ".join(digits[a:b] for a, b in itertools.pairwise([0, *cuts, len(digits)]))
        )
    return samples


def _every_written(rng: random.Random) -> Iterator[tuple[str, str, str]]:
    """``(region, candidate, digits)`` of :func:`_written_samples` for every region."""
    for region in sorted(phonenumbers.SUPPORTED_REGIONS):
        for candidate in _written_samples(region, rng):
            yield region, candidate, phones._digits(candidate)


def _written_by_parse(candidate: str, digits: str, region: str) -> bool:
    """``_written_as_in`` read from ``phonenumbers`` alone: a parse, its number type and its
    national format (the reference for the reading from the metadata)."""
    prefix = phonenumbers.PhoneMetadata.metadata_for_region(region).national_prefix or ""
    groups = phones._written_groups(candidate, prefix)
    trunk_led = bool(prefix) and digits.startswith(prefix)
    if phones._trunk_and_area(groups, prefix, trunk_led):
        return True
    number = phones._parse(digits, region) if len(digits) >= 10 else None
    if number is None:
        return False
    mobile = phonenumbers.number_type(number) in {
        PhoneNumberType.MOBILE,
        PhoneNumberType.FIXED_LINE_OR_MOBILE,
    }
    national = phonenumbers.format_number(number, PhoneNumberFormat.NATIONAL)
    written, national_digits = phones._group_lengths(national), phones._digits(national)
    if len(groups) == 1:
        example = phonenumbers.example_number_for_type(region, PhoneNumberType.MOBILE)
        return (
            mobile
            and prefix == "0"
            and national_digits == digits
            and 10 <= len(digits) <= 11
            and example is not None
            and len(phonenumbers.national_significant_number(example))
            == len(phonenumbers.national_significant_number(number))
        )
    if groups == written:
        return True
    if trunk_led and not national_digits.startswith(prefix):
        return groups == (len(prefix), *written)
    lead = written[0] - len(prefix)
    return (
        mobile
        and not trunk_led
        and national_digits.startswith(prefix)
        and lead > 0
        and groups == (lead, *written[1:])
    )


def test_written_as_a_region_writes_it_is_read_as_phonenumbers_reads_it() -> None:
    """``_written_as_in`` (the metadata's reading and national format where they answer, a
    parse elsewhere) answers as a parse, its number type and ``format_number`` do, for numbers
    written as every region writes them and regrouped, read there and in another region."""
    rng = random.Random(4343)
    regions = sorted(phonenumbers.SUPPORTED_REGIONS)
    written = 0
    for region, candidate, digits in _every_written(rng):
        for reader in (region, rng.choice(regions)):
            expected = _written_by_parse(candidate, digits, reader)
            assert phones._written_as_in(candidate, digits, reader) == expected, reader
            written += expected
    assert written > 1500


def test_national_form_writes_the_national_prefix_where_the_rule_puts_it() -> None:
    """A format whose first group reference is not ``\\1`` takes the prefix rule's ``\\1`` as
    that reference (Argentina writes mobiles as ``011 15-2345-1306``)."""
    shape = phones._region_shape("AR")
    number = phonenumbers.parse("91123451306", "AR")
    national = phonenumbers.format_number(number, PhoneNumberFormat.NATIONAL)
    assert shape.national_form("91123451306") == (
        phones._group_lengths(national),
        phones._digits(national),
    )
    assert shape.national_form("91123451306")[0] == (3, 2, 4, 4)


def test_the_regions_read_for_a_written_foreign_number_include_every_one_that_writes_it() -> None:
    """``_format_may_write`` (prefix, digit count and the national format of the digits
    themselves) keeps every region where ``_written_as_in`` holds, so leaving the others
    unread changes nothing."""
    rng = random.Random(3636)
    regions = sorted(phonenumbers.SUPPORTED_REGIONS)
    written = dropped = 0
    for region, candidate, digits in _every_written(rng):
        for reader in (region, rng.choice(regions)):
            kept = phones._format_may_write(candidate, digits, reader, {})
            if phones._written_as_in(candidate, digits, reader):
                written += 1
                assert kept, reader
            dropped += not kept
    assert written > 1500  # the sample reaches written numbers of many regions
    assert dropped > 1500  # and the filter leaves many regions unread


def test_the_regions_a_foreign_number_is_read_in_include_every_one_the_filter_keeps() -> None:
    """``_may_keep`` (digit groups, leading digits and the regions' plans, before any region
    reads the digits) includes every region where ``_format_may_write`` keeps a candidate,
    written nationally or grouped at random, and leaves most regions out."""
    rng = random.Random(3737)
    regions = sorted(phonenumbers.SUPPORTED_REGIONS)
    kept = left_out = 0
    for _region, candidate, digits in _every_written(rng):
        among = phones._may_keep(candidate, digits)
        for reader in regions:
            if phones._format_may_write(candidate, digits, reader, {}):
                kept += 1
                assert among is None or reader in among, reader
            left_out += among is not None and reader not in among
    assert kept > 20000  # the sample reaches many regions' formats
    assert left_out > kept  # and most regions are left unread


def test_national_reading_is_the_one_phonenumbers_confirms() -> None:
    """``_find_national`` over sets of regions gives what reading every mirror-valid number
    through ``phonenumbers.parse`` gives (the former way, one parse per valid candidate)."""

    def confirmed(digits: str, regions: tuple[str, ...]) -> tuple[object, ...] | None:
        other = possible = None
        for region in regions:
            shape = phones._region_shape(region)
            reading = shape.reading(digits)
            if reading in {phones._Reading.CANONICAL, phones._Reading.UNKNOWN}:
                if phones._is_canonical(digits, region, shape.prefix):
                    return (True, shape.prefix, None, None)
                reading = phones._Reading.OTHER
            if reading is phones._Reading.OTHER:
                other = other or region
            elif reading is phones._Reading.POSSIBLE:
                possible = possible or region
        if other is None and possible is None:
            return None
        return (other is not None, None, other, possible)

    rng = random.Random(3434)
    regions = sorted(phonenumbers.SUPPORTED_REGIONS)
    for _ in range(3000):
        # Israel: its dialling prefix 01x leads digits the mirror alone would misread
        chosen = tuple(rng.sample(regions, 3)) if rng.random() < 0.8 else ("IL", "GB", "US")
        digits = _region_samples(chosen[0], rng, 1)[0]
        found = phones._find_national(digits, chosen)
        got = (
            None
            if found is None
            else (found.valid, found.canonical_prefix, found.other, found.possible)
        )
        assert got == confirmed(digits, chosen), chosen
