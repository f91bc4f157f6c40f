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
    "ab O0123 .-@\n"
    "\u200b\u2060\u00ad\ufeff\u200e\u200c\u200d\u00a0\u2009\u202f\u3000"
    "０１９＠ＡＯ٠١٩०९"
    "\ufb01\u00bd\u2474\u3392\u00b5"
    "e\u0301\u0323\u0345\u1100\u1161\u11a8\u3131\u314f\uff76\uff9e가각\u0915\u093c"
)
TEXTS = st.text(alphabet=ALPHABET, max_size=40)


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
    text = "".join(c for c in text if c not in "OＯ" and not _KEPT.match(c))
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
        # the letter O (read by its neighbours)
        own = reading.text[k : k + sum(1 for r in ranges[k:] if r == (start, end))]
        alone = reading_of(text[start:end]).text
        assert own.replace("0", "O") == alone.replace("0", "O")
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
