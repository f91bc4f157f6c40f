import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from polydeid.core.errors import UnknownCategoryError
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category, Fact, scheme
from polydeid.text.wordgrid import (
    _WORD,
    align,
    bio_tags,
    count_unaligned,
    spans_from_bio,
    words,
)

P, PH, D = Category.PERSON, Category.CONTACT_PHONE, Category.DATE


def _words(text: str) -> list[str]:
    return [text[s:e] for s, e in words(text)]


GRID_CASES = [
    ("hyphen_name", "Mary-Jane O’Brien,", ["Mary", "-", "Jane", "O’Brien", ","]),
    ("hyphen_phone", "simu 0772-123456.", ["simu", "0772", "-", "123456", "."]),
    ("apostrophes", "Ng'ang'a wa Kamau's", ["Ng'ang'a", "wa", "Kamau's"]),
    ("edge_apostrophes", "'Okello' ’x", ["'", "Okello", "'", "’", "x"]),
    ("modifier_apostrophe", "Kinyaʼrwanda", ["Kinyaʼrwanda"]),
    ("nfd_marks", "Nguye\u0302\u0303n Va\u0306n", ["Nguye\u0302\u0303n", "Va\u0306n"]),
    ("devanagari_zwj", "राम\u200dशर्मा है।", ["राम\u200dशर्मा", "है", "।"]),
    ("ethiopic", "ማርያም ታደሰ።", ["ማርያም", "ታደሰ", "።"]),
    ("arabic_harakat", "مُحَمَّد، ٣٤ سنة", ["مُحَمَّد", "،", "٣٤", "سنة"]),
    ("han_each_char", "张伟在北京。", ["张", "伟", "在", "北", "京", "。"]),
    ("email", "a_b@x.com", ["a", "_", "b", "@", "x", ".", "com"]),
    ("date", "12/03/2024", ["12", "/", "03", "/", "2024"]),
    ("symbols", "37.5°C +256", ["37", ".", "5", "°", "C", "+", "256"]),
    ("format_chars_separate", "x\u00ady\u200bz\ufeffq", ["x", "y", "z", "q"]),
    ("unicode_spaces", "a\u00a0b\u2003c\r\nd", ["a", "b", "c", "d"]),
    ("empty", "", []),
]


@pytest.mark.parametrize(
    ("text", "expected"), [c[1:] for c in GRID_CASES], ids=[c[0] for c in GRID_CASES]
)
def test_word_grid(text, expected):
    assert _words(text) == expected


def test_grid_words_never_hold_whitespace_and_cover_every_visible_char():
    text = "Mgonjwa: Juma  Hassan (34), simu +255 712-345-678;\tBP 120/80."
    grid = words(text)
    covered = set()
    for start, end in grid:
        assert not any(c.isspace() for c in text[start:end])
        covered.update(range(start, end))
    assert {i for i, c in enumerate(text) if not c.isspace()} == covered


@given(st.text(max_size=60))
@settings(max_examples=300, deadline=None)
def test_fast_path_equals_full_pattern(text):
    assert words(text) == [m.span() for m in _WORD.finditer(text)]


@given(
    st.text(
        alphabet=st.characters(
            whitelist_categories=("Lu", "Ll", "Lo", "Mn", "Nd", "Po", "Zs"),
            whitelist_characters="-'’\n",
        ),
        max_size=80,
    )
)
@settings(max_examples=300, deadline=None)
def test_grid_is_ordered_disjoint_and_nonempty(text):
    grid = words(text)
    for (s1, e1), (s2, e2) in itertools.pairwise(grid):
        assert s1 < e1 <= s2 < e2


def _span(text, part, label=P, nth=0):
    start = -1
    for _ in range(nth + 1):
        start = text.index(part, start + 1)
    return Span(start, start + len(part), label, "test")


def test_bio_tags_and_alignment_counts():
    text = "Mary-Jane Okello, simu 0772-123456, alizaliwa 12/03/2024; Kamau's mama."
    spans = [
        _span(text, "Mary-Jane Okello"),
        _span(text, "0772-123456", PH),
        _span(text, "12/03/2024", D),
        _span(text, "Kamau", Category.PERSON_THIRD_PARTY),  # ends inside "Kamau's"
    ]
    grid = words(text)
    tags = bio_tags(grid, spans)
    tagged = [(text[s:e], t) for (s, e), t in zip(grid, tags, strict=True) if t != "O"]
    assert tagged == [
        ("Mary", "B-PERSON"),
        ("-", "I-PERSON"),
        ("Jane", "I-PERSON"),
        ("Okello", "I-PERSON"),
        ("0772", "B-CONTACT_PHONE"),
        ("-", "I-CONTACT_PHONE"),
        ("123456", "I-CONTACT_PHONE"),
        ("12", "B-DATE"),
        ("/", "I-DATE"),
        ("03", "I-DATE"),
        ("/", "I-DATE"),
        ("2024", "I-DATE"),
        ("Kamau's", "B-PERSON_THIRD_PARTY"),
    ]
    assert count_unaligned(grid, spans) == 1
    assert [align(grid, s).aligned for s in spans] == [True, True, True, False]


def test_bio_tags_names_map_and_skip():
    text = "Okello at Lacor"
    spans = [_span(text, "Okello"), _span(text, "Lacor", Category.LOCATION_FACILITY)]
    tags = bio_tags(words(text), spans, names={P: "PER"})
    assert tags == ["B-PER", "O", "O"]


def test_adjacent_spans_of_one_label_stay_apart():
    text = "Juma Hassan Amina Ali"
    spans = [_span(text, "Juma Hassan"), _span(text, "Amina Ali")]
    grid = words(text)
    tags = bio_tags(grid, spans)
    assert tags == ["B-PERSON", "I-PERSON", "B-PERSON", "I-PERSON"]
    assert spans_from_bio(text, grid, tags) == [
        Span(s.start, s.end, P, "wordgrid.bio") for s in spans
    ]


def test_overlapping_spans_earlier_keeps_its_words():
    text = "Dr Amina Ali Clinic"
    spans = [_span(text, "Amina Ali"), _span(text, "Ali Clinic", Category.LOCATION_FACILITY)]
    tags = bio_tags(words(text), spans)
    assert tags == ["O", "B-PERSON", "I-PERSON", "B-LOCATION_FACILITY"]


def test_span_over_whitespace_only_is_unaligned_and_untagged():
    text = "a   b"
    span = Span(2, 3, P, "test")
    grid = words(text)
    assert align(grid, span).empty
    assert bio_tags(grid, [span]) == ["O", "O"]
    assert count_unaligned(grid, [span]) == 1


def test_spans_from_bio_lenient_and_scheme_and_facts():
    text = "Okello seen Gulu 500 mg"
    grid = words(text)
    tags = ["I-PER", "O", "B-LOC", "B-DOSE", "I-DOSE"]
    with pytest.raises(UnknownCategoryError, match="DOSE"):
        spans_from_bio(text, grid, tags, scheme=scheme("conll"))
    got = spans_from_bio(text, grid, [*tags[:3], "O", "O"], scheme=scheme("conll"))
    assert [(text[s.start : s.end], s.label) for s in got] == [
        ("Okello", P),
        ("Gulu", Category.LOCATION_VILLAGE),
    ]
    canonical = spans_from_bio(text, grid, ["I-PERSON", "O", "O", "B-DOSE", "I-DOSE"])
    assert [(text[s.start : s.end], s.label) for s in canonical] == [
        ("Okello", P),
        ("500 mg", Fact.DOSE),
    ]


def test_stray_inside_tag_of_other_label_starts_a_span():
    text = "Juma Gulu"
    got = spans_from_bio(text, words(text), ["B-PERSON", "I-LOCATION_VILLAGE"])
    assert [(s.start, s.end, s.label) for s in got] == [
        (0, 4, P),
        (5, 9, Category.LOCATION_VILLAGE),
    ]


@pytest.mark.parametrize(
    ("tags", "message"),
    [
        (["O"], "2 words but 1 tags"),
        (["X-PERSON", "O"], "tag 0"),
        (["B-", "O"], "tag 0"),
        (["O", "B"], "tag 1"),
    ],
    ids=["length", "prefix", "empty_label", "no_dash"],
)
def test_spans_from_bio_rejects_malformed(tags, message):
    text = "Juma ."
    with pytest.raises(ValueError, match=message):
        spans_from_bio(text, words(text), tags)


_WORD_ALPHABET = st.sampled_from(
    ["Juma", "Ng'ang'a", "Nguyễn", "0772", "Mary", "ማርያም", "张", "O’Brien"]
)
_SEP = st.sampled_from([" ", "-", ", ", "/", "\n", ". "])
_LABELS = st.sampled_from([P, PH, D, Category.LOCATION_VILLAGE])


@st.composite
def _text_and_aligned_spans(draw):
    parts = draw(st.lists(st.tuples(_WORD_ALPHABET, _SEP), min_size=1, max_size=25))
    text = "".join(w + s for w, s in parts)
    grid = words(text)
    n = len(grid)
    cuts = sorted(set(draw(st.lists(st.integers(0, n), max_size=12))) | {0, n})
    spans = []
    for a, b in itertools.pairwise(cuts):
        if draw(st.booleans()):
            spans.append(Span(grid[a][0], grid[b - 1][1], draw(_LABELS), "wordgrid.bio"))
    return text, grid, spans


@given(_text_and_aligned_spans())
@settings(max_examples=300, deadline=None)
def test_aligned_spans_round_trip_exactly(case):
    text, grid, spans = case
    assert count_unaligned(grid, spans) == 0
    assert spans_from_bio(text, grid, bio_tags(grid, spans)) == spans
