"""The text detectors read (polydeid.text.reading) and its offset map back."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from polydeid.text.normalise import normalise
from polydeid.text.reading import _INVISIBLE, _KEPT, reading_of

#: Characters that exercise every step: invisible ones, odd spaces, fullwidth and non-ASCII
#: digits, ligatures and fractions that NFKC lengthens, combining marks and Hangul jamo it
#: joins, the fullwidth ``＠``, the letter O, and plain letters and digits.
ALPHABET = (
    "ab O0123 .-@\nlI|/\u2013\u2212"
    "\u200b\u2060\u00ad\ufeff\u200e\u200c\u200d\u00a0\u2009\u202f\u3000"
    "０１９＠ＡＯ٠١٩०९"
    "\ufb01\u00bd\u2474\u3392\u00b5"
    "e\u0301\u0323\u0345\u1100\u1161\u11a8\u3131\u314f\uff76\uff9e가각\u0915\u093c"
)
TEXTS = st.text(alphabet=ALPHABET, max_size=40)
#: Characters read one way or another by their neighbours, written the same.
_BY_NEIGHBOURS = str.maketrans("0O1lI-\u2013\u2212", "OOIIIXXX")


@pytest.mark.parametrize(
    ("text", "reading"),
    [
        ("MRN 4482\u200b913", "MRN 4482913"),
        ("０７７２ １２３ ４５６", "0772 123 456"),
        ("O772 123 456", "0772 123 456"),
        ("O6 12 34 56 78", "06 12 34 56 78"),
        ("john＠example.com", "john@example.com"),
        ("123\u00a045\u2009\u202f6789", "123 45  6789"),
        ("٠٧٧٢ ०७७२", "0772 0772"),
        ("Zebe\u200bdee Quarter\u00admain", "Zebedee Quartermain"),
        ("\ufb01ne \U0001d7ce\U0001d7d5", "fine 07"),
        ("姓名：张伟， Nº 5 µg ½ tab 10⁹/L ℃", "姓名：张伟， Nº 5 µg ½ tab 10⁹/L ℃"),
        ("SpO2 98%, O2 2L, CO2, Ohio", "SpO2 98%, O2 2L, CO2, Ohio"),
        ("می\u200cخواهم", "می\u200cخواهم"),
        ("07l2 l23 456", "0712 123 456"),
        ("0772 I23 456", "0772 123 456"),
        ("MRN 44829I3", "MRN 4482913"),
        ("O7l2 l23 456", "0712 123 456"),
        ("123\u201345\u20136789", "123-45-6789"),
        ("0772\u2012123\u2012456", "0772-123-456"),
        ("MRN 4482\u2212913", "MRN 4482-913"),
        ("1\u20102\u20113\u20144\ufe635\uff0d6", "1-2-3-4-5-6"),
        ("\u0660\u0667\u2013\u0661", "07-1"),
        ("MRN \U0001e4f4\U0001e4f4\U0001e4f8\U0001e4f2", "MRN 4482"),
        (
            "a \u2013 b, 3 \u2013 4, \u22125 \u00b0C, 5\u2013",
            "a \u2013 b, 3 \u2013 4, \u22125 \u00b0C, 5\u2013",
        ),
    ],
    ids=[
        "zwsp",
        "fullwidth",
        "letter-o",
        "letter-o-short-group",
        "fullwidth-at",
        "spaces",
        "arabic-indic-devanagari",
        "invisible-in-name",
        "nfkc-lengthens",
        "punctuation-and-symbols-kept",
        "letter-o-in-words",
        "joiner-in-persian",
        "letter-l-for-one",
        "letter-i-for-one",
        "letter-i-in-record-number",
        "letters-o-and-l",
        "en-dash",
        "figure-dash",
        "minus-sign",
        "every-dash",
        "dash-between-arabic-indic-digits",
        "digits-newer-than-python",
        "dash-not-between-digits",
    ],
)
def test_reading(text: str, reading: str) -> None:
    assert reading_of(text).text == reading


def test_plain_text_is_its_own_reading() -> None:
    text = "Seen on 3 March; café au lait, Müller, 0772 123 456."
    reading = reading_of(text)
    assert reading.identity and reading.text is text
    assert reading.to_original(3, 7) == (3, 7)


def test_an_invisible_character_inside_a_span_is_covered_and_one_outside_is_not() -> None:
    text = "\u200bMRN 4482\u200b913\u200b."
    reading = reading_of(text)
    start = reading.text.index("4482913")
    assert reading.to_original(start, start + 7) == (text.index("4482"), text.index("913") + 3)


@settings(max_examples=300, deadline=None)
@given(TEXTS)
def test_unit_by_unit_nfkc_is_nfkc(text: str) -> None:
    """Without the letter O and the characters kept as written: NFKC of the whole text
    without its invisible characters, with ASCII digits and spaces (NFKC read unit by unit
    is NFKC of the whole)."""
    text = "".join(c for c in text if c not in "OＯlI" and not _KEPT.match(c))
    stripped = _INVISIBLE.sub("", text)
    expected = unicodedata.normalize("NFKC", stripped)
    expected = "".join(
        str(unicodedata.decimal(c))
        if unicodedata.decimal(c, None) is not None
        else (" " if unicodedata.category(c) == "Zs" else c)
        for c in expected
    )
    assert reading_of(text).text == expected


@settings(max_examples=300, deadline=None)
@given(TEXTS)
def test_offsets_map_back_exactly(text: str) -> None:
    """Each character of the reading maps to original characters that read as it; the maps
    are monotone, cover the original in order, and leave out only invisible characters."""
    reading = reading_of(text)
    ranges = [reading.to_original(i, i + 1) for i in range(len(reading.text))]
    covered = 0
    for k, (start, end) in enumerate(ranges):
        assert 0 <= start < end <= len(text)
        if k and ranges[k - 1] == (start, end):
            continue
        assert start >= covered
        skipped = text[covered:start]
        assert all(unicodedata.category(c) == "Cf" for c in skipped)
        covered = end
        # the characters read from [start, end) are exactly that unit's own reading, up to
        # the letters and dashes read by their neighbours
        own = reading.text[k : k + sum(1 for r in ranges[k:] if r == (start, end))]
        alone = reading_of(text[start:end]).text
        assert own.translate(_BY_NEIGHBOURS) == alone.translate(_BY_NEIGHBOURS)
    assert all(unicodedata.category(c) == "Cf" for c in text[covered:])
    # a whole-text span maps to the visible extent, and boundaries map forward consistently
    if reading.text:
        start, end = reading.to_original(0, len(reading.text))
        assert reading.to_reading(start) == 0 and reading.to_reading(end) == len(reading.text)
    for position in range(len(text) + 1):
        assert 0 <= reading.to_reading(position) <= len(reading.text)


def test_consistency_keys_ignore_invisible_characters() -> None:
    """The vault, hash and numbering key of a name written with invisible characters is the
    key of the name written plainly, so the patient keeps one surrogate."""
    assert normalise("Zebe\u200bdee Quarter\u00admain") == normalise("Zebedee Quartermain")
    assert normalise("ZEBEDEE  quartermain ") == "zebedee quartermain"


def test_an_o_after_a_digit_stays_a_letter_of_an_alphanumeric_identifier() -> None:
    assert reading_of("FR06 6759 2763 39O8 3421").text == "FR06 6759 2763 39O8 3421"
    assert reading_of("tel O772 123 456").text == "tel 0772 123 456"
    assert reading_of("IT77 O912 7233 8265").text == "IT77 O912 7233 8265"
    assert reading_of("phone: O6 12 34 56 78").text == "phone: 06 12 34 56 78"


@pytest.mark.parametrize(
    "text",
    [
        "Il est venu; IL-6 12 pg/ml; O2 2 l/min, 5 ml, IgG 12, I2C bus, T1l, Ill 12",
        "grade II 12, stage III 2024, IV 12 34, type I 12 34 56",
        "ICD I10, I25.700, I48 I50 I63, I131 and I125 seeds",
        "100l, 10l/min, 2l 12, 1l 24h, 12 l 34, 2 I 34 5678",
        "0772|123|456, | 12 | 34 |",
        "1l1, 2I5, 12l, 34I",
        "I10 I25 I48 I50 1234",
    ],
    ids=["words-and-units", "roman-numerals", "codes", "units", "bars", "short", "code-list"],
)
def test_look_alike_letters_stay_letters(text: str) -> None:
    assert reading_of(text).text == text


def test_look_alike_ones_need_a_digit_before_and_after() -> None:
    """A one leads no number and ends no group; it is read after the group before it."""
    assert reading_of("l234567").text == "l234567"
    assert reading_of("123456l 7").text == "123456l 7"
    assert reading_of("123 456 l78").text == "123 456 178"
    assert reading_of("123.456/l78-9l0").text == "123.456/178-910"


def test_look_alike_letters_after_an_alphanumeric_token_stay_letters() -> None:
    assert reading_of("IT77 I912 7233 8265").text == "IT77 I912 7233 8265"
    assert reading_of("AB12 3456 7l89").text == "AB12 3456 7l89"
    assert reading_of("ward 7 3456 7l89").text == "ward 7 3456 7189"
