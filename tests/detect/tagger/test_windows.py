"""Word grid alignment, windows, window ownership and BIO decoding (no model needed)."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category
from polydeid.detect.tagger.decode import decode
from polydeid.detect.tagger.windows import (
    IGNORE,
    TAG_INDEX,
    TAGS,
    align_tokens,
    even_windows,
    owner_windows,
    token_labels,
    windows,
    word_tags,
)


def _char_tokens(text: str, size: int = 3) -> tuple[list[int], list[tuple[int, int]]]:
    """A stand-in tokenizer: pieces of up to ``size`` characters inside each whitespace run."""
    offsets: list[tuple[int, int]] = []
    i = 0
    while i < len(text):
        if text[i].isspace():
            i += 1
            continue
        j = i
        while j < len(text) and not text[j].isspace() and j - i < size:
            j += 1
        offsets.append((i, j))
        i = j
    return list(range(len(offsets))), offsets


@given(st.integers(0, 2000), st.integers(8, 300), st.data())
@settings(max_examples=200, deadline=None)
def test_windows_cover_every_token_within_size(length: int, size: int, data) -> None:
    stride = data.draw(st.integers(1, size))
    spans = windows(length, size, stride)
    covered = set()
    for start, end in spans:
        assert 0 <= start < end <= length or length == 0
        assert end - start <= size
        covered.update(range(start, end))
    assert covered == set(range(length))


#: Few words, so that names repeat (votes pool over a text's mentions), with pronouns,
#: titles, hyphens and breaks; few tags, so that names, places and roles compete.
_FUZZ_WORDS = ["an", "mimi", "Dr", "Migosi", "Akong'o", "Opondo", "Wandayi-Odede", ".", ",", "\n"]
_FUZZ_TAGS = [
    "O",
    "B-PERSON",
    "I-PERSON",
    "B-PERSON_THIRD_PARTY",
    "I-PERSON_THIRD_PARTY",
    "B-LOCATION_VILLAGE",
    "I-LOCATION_VILLAGE",
    "B-ORGANIZATION",
    "B-DATE",
]


@given(
    st.lists(st.sampled_from(_FUZZ_WORDS), min_size=1, max_size=25),
    st.data(),
    st.sampled_from(["luo", "sw", "en", "de", "am"]),
)
@settings(max_examples=500, deadline=None)
def test_decode_never_fails_and_gives_ordered_spans_inside_the_text(
    picked: list[str], data, lang: str
) -> None:
    from polydeid.locales.names import name_words
    from polydeid.text.wordgrid import words

    text = " ".join(picked)
    grid = words(text)
    tag = st.sampled_from(_FUZZ_TAGS)
    probs: list[list[float] | None] = []
    for _ in grid:
        if data.draw(st.integers(0, 9)) == 0:
            probs.append(None)  # a word no window decided
            continue
        weights = data.draw(st.dictionaries(tag, st.floats(0.05, 1.0), min_size=1, max_size=3))
        total = sum(weights.values()) * 1.25  # the rest spread over every other tag
        row = _mixed({t: w / total for t, w in weights.items()})
        probs.append(row)
    threshold = data.draw(st.floats(0.0, 1.0))
    thresholds = {c: threshold for c in Category}
    spans = decode(text, grid, probs, thresholds, names=name_words(lang))
    for span in spans:
        assert 0 <= span.start < span.end <= len(text)
        assert span.score >= threshold - 1e-9
    assert all(a.end <= b.start for a, b in itertools.pairwise(spans))


def test_windows_reject_bad_sizes() -> None:
    with pytest.raises(ValueError):
        windows(10, 4, 5)
    with pytest.raises(ValueError):
        even_windows(10, 4, 4)


@given(st.integers(0, 3000), st.integers(8, 300), st.data())
@settings(max_examples=300, deadline=None)
def test_even_windows_are_equal_few_and_overlap_enough(length: int, size: int, data) -> None:
    overlap = data.draw(st.integers(0, size - 1))
    spans = even_windows(length, size, overlap)
    assert spans[0][0] == 0 and spans[-1][1] == length
    assert len({end - start for start, end in spans}) == 1  # one length: no padding
    assert all(end - start <= size for start, end in spans)
    for (s1, e1), (s2, _) in itertools.pairwise(spans):
        assert s1 < s2 and e1 - s2 >= overlap  # neighbours share at least the overlap
    # the fewest windows of that size and overlap that can cover the length
    if length > size:
        assert len(spans) == -(-(length - overlap) // (size - overlap))


def test_a_name_at_an_even_window_edge_is_read_whole_in_one_window() -> None:
    text = " ".join(f"w{i}" for i in range(30)) + " Achieng'Otieno-Wanjiru " + "x " * 60
    ids, offsets = _char_tokens(text, size=2)
    aligned = align_tokens(text, ids, offsets)
    name_word = next(i for i, (s, e) in enumerate(aligned.grid) if text[s:e].startswith("Achieng"))
    start, end = aligned.grid[name_word]
    name_tokens = [t for t, (s, e) in enumerate(offsets) if s < end and start < e]
    first, last = min(name_tokens), max(name_tokens)
    # window sizes for which an edge cuts the name (11 tokens; neighbours share 24)
    for size in range(40, 120):
        spans = even_windows(len(ids), size, 24)
        if any(first < s <= last or first < e <= last for s, e in spans):
            break
    else:  # pragma: no cover - the sizes above always include a cut
        raise AssertionError("no window size cut the name")
    owners = owner_windows(aligned, spans)
    owner = spans[owners[name_word]]
    assert owner[0] <= min(name_tokens) and max(name_tokens) < owner[1]
    assert all(o >= 0 for o in owners)


def test_alignment_with_combining_marks_and_apostrophes() -> None:
    text = "Bw. Ng'ang'a na Nguyễn Thị Ánh (e\u0301) O’Brien"
    ids, offsets = _char_tokens(text)
    aligned = align_tokens(text, ids, offsets)
    words = [text[s:e] for s, e in aligned.grid]
    assert "Ng'ang'a" in words and "O’Brien" in words and "Nguyễn" in words
    assert "e\u0301" in words  # a combining accent stays in its word
    # every word is read at the token holding its first character
    for (start, _), t in zip(aligned.grid, aligned.word_token, strict=True):
        assert offsets[t][0] <= start < offsets[t][1]


def test_tags_labels_and_decoding_roundtrip() -> None:
    text = "Patient Mary-Jane Okello, NIN CM1234, seen at Mulago."
    gold = [
        Span(8, 24, Category.PERSON, "gold"),
        Span(30, 36, Category.ID_NATIONAL, "gold"),
        Span(46, 52, Category.LOCATION_FACILITY, "gold"),
    ]
    ids, offsets = _char_tokens(text)
    aligned = align_tokens(text, ids, offsets)
    tags = word_tags(aligned.grid, gold)
    labels = token_labels(aligned, tags)
    assert all(t >= 0 for t in aligned.word_token)
    assert sum(label != IGNORE for label in labels) == len(set(aligned.word_token))
    probs = [[1.0 if i == TAG_INDEX[t] else 0.0 for i in range(len(TAGS))] for t in tags]
    decoded = decode(text, aligned.grid, probs, {})
    assert [(s.start, s.end, s.label) for s in decoded] == [(g.start, g.end, g.label) for g in gold]


def test_decoding_repairs_and_thresholds() -> None:
    text = "a b c d"
    grid = [(0, 1), (2, 3), (4, 5), (6, 7)]

    def one_hot(tag: str, p: float = 0.9) -> list[float]:
        rest = (1 - p) / (len(TAGS) - 1)
        return [p if i == TAG_INDEX[tag] else rest for i in range(len(TAGS))]

    probs = [one_hot("I-PERSON"), one_hot("I-PERSON"), one_hot("O"), one_hot("B-DATE", 0.6)]
    spans = decode(text, grid, probs, {Category.DATE: 0.7})
    assert [(s.start, s.end, s.label) for s in spans] == [(0, 3, Category.PERSON)]
    assert 0.8 < spans[0].score <= 1.0
    # a word no window decided breaks a span
    probs = [one_hot("B-PERSON"), None, one_hot("I-PERSON"), one_hot("O")]
    assert len(decode(text, grid, probs, {})) == 2


def test_a_name_cut_by_a_window_edge_is_decided_once_by_the_window_that_holds_it_whole() -> None:
    text = " ".join(f"w{i}" for i in range(40)) + " Achieng'Otieno-Wanjiru " + "x " * 40
    ids, offsets = _char_tokens(text, size=2)
    aligned = align_tokens(text, ids, offsets)
    spans = windows(len(ids), 64, 32)
    owners = owner_windows(aligned, spans)
    name_word = next(i for i, (s, e) in enumerate(aligned.grid) if text[s:e].startswith("Achieng"))
    owner = spans[owners[name_word]]
    start, end = aligned.grid[name_word]
    name_tokens = [t for t, (s, e) in enumerate(offsets) if s < end and start < e]
    assert owner[0] <= min(name_tokens) and max(name_tokens) < owner[1]  # whole in its window
    assert all(o >= 0 for o in owners)


def test_brackets_and_punctuation_bound_spans() -> None:
    text = "en el Hospital Virgen del Rocío (Sevilla). Umurwayi, imyaka 29, Otieno J. kwa"
    ids, offsets = _char_tokens(text, size=50)
    grid = align_tokens(text, ids, offsets).grid
    words = [text[s:e] for s, e in grid]

    def tag_of(word: str, index: int) -> str:
        if index in range(2, 10):  # Hospital … ) : the model calls all of it a facility
            return "B-LOCATION_FACILITY" if index == 2 else "I-LOCATION_FACILITY"
        if word in ("imyaka", "29") or (word == "," and words[index - 1] == "29"):
            return "B-AGE" if word == "imyaka" else "I-AGE"
        if word in ("Otieno", "J") or (word == "." and words[index - 1] == "J"):
            return "B-PERSON" if word == "Otieno" else "I-PERSON"
        return "O"

    probs = [
        [1.0 if t == TAG_INDEX[tag_of(w, i)] else 0.0 for t in range(len(TAGS))]
        for i, w in enumerate(words)
    ]
    found = [(text[s.start : s.end], s.label) for s in decode(text, grid, probs, {})]
    assert found == [
        ("Hospital Virgen del Rocío", Category.LOCATION_FACILITY),
        ("Sevilla", Category.LOCATION_FACILITY),
        ("imyaka 29", Category.AGE),
        ("Otieno J.", Category.PERSON),
    ]


def _mixed(weights: dict[str, float]) -> list[float]:
    """A probability row with the given tags' mass and the rest spread evenly."""
    rest = (1 - sum(weights.values())) / (len(TAGS) - len(weights))
    return [weights.get(tag, rest) for tag in TAGS]


def test_a_name_whose_words_the_model_splits_between_roles_is_one_span() -> None:
    text = "it is Sam Bentley here"
    grid = [(0, 2), (3, 5), (6, 9), (10, 17), (18, 22)]
    o = _mixed({"O": 0.95})
    probs = [
        o,
        o,
        _mixed({"B-PERSON": 0.6, "B-PERSON_THIRD_PARTY": 0.3}),
        # the likeliest single tag is I-PERSON_THIRD_PARTY, but the word is a name either way
        _mixed({"I-PERSON_THIRD_PARTY": 0.45, "I-PERSON": 0.4, "O": 0.1}),
        o,
    ]
    spans = decode(text, grid, probs, {})
    assert [(text[s.start : s.end], s.label) for s in spans] == [("Sam Bentley", Category.PERSON)]
    # the score is the name group's probability, not one role's
    assert spans[0].score == pytest.approx(0.85, abs=0.01)


def test_no_tag_above_outside_alone_but_a_group_above_it_is_a_span() -> None:
    text = "na Kato"
    grid = [(0, 2), (3, 7)]
    probs = [
        _mixed({"O": 0.9}),
        _mixed({"B-PERSON": 0.3, "B-PERSON_THIRD_PARTY": 0.3, "O": 0.35}),
    ]
    spans = decode(text, grid, probs, {})
    assert [(s.start, s.end) for s in spans] == [(3, 7)]
    assert spans[0].label in (Category.PERSON, Category.PERSON_THIRD_PARTY)
    assert decode(text, grid, probs, {Category.PERSON: 0.7, Category.PERSON_THIRD_PARTY: 0.7}) == []


def test_the_same_text_gets_one_label_across_the_document() -> None:
    text = "Mgonjwa: Kinubi Adan. Kinubi Adan ameletwa"
    grid = [(0, 7), (7, 8), (9, 15), (16, 20), (20, 21), (22, 28), (29, 33), (34, 41)]
    o = _mixed({"O": 0.95})
    probs = [
        o,
        o,
        _mixed({"B-PERSON": 0.9}),
        _mixed({"I-PERSON": 0.9}),
        o,
        _mixed({"B-PERSON_THIRD_PARTY": 0.5, "B-PERSON": 0.3}),
        _mixed({"I-PERSON_THIRD_PARTY": 0.5, "I-PERSON": 0.3}),
        o,
    ]
    spans = decode(text, grid, probs, {})
    assert [(text[s.start : s.end], s.label) for s in spans] == [
        ("Kinubi Adan", Category.PERSON),
        ("Kinubi Adan", Category.PERSON),
    ]
    # the final label's threshold decides (the second occurrence's name probability is 0.8)
    kept = decode(text, grid, probs, {Category.PERSON: 0.85, Category.PERSON_THIRD_PARTY: 0.5})
    assert [s.start for s in kept] == [9]


def test_a_one_word_mention_votes_with_the_one_longer_name_it_is_part_of() -> None:
    from polydeid.text.wordgrid import words

    text = "hier ist Julius Hess . Julius ruft an . Anna Perez , Juan Perez , Perez kam"
    grid = words(text)
    read = {  # word index -> its row; every other word outside
        2: {"B-PERSON_THIRD_PARTY": 0.6, "B-PERSON": 0.3},
        3: {"I-PERSON_THIRD_PARTY": 0.6, "I-PERSON": 0.3},
        5: {"B-PERSON": 0.9},  # "Julius" alone: the patient
        9: {"B-PERSON": 0.9},
        10: {"I-PERSON": 0.9},
        12: {"B-PERSON_THIRD_PARTY": 0.9},
        13: {"I-PERSON_THIRD_PARTY": 0.9},
        15: {"B-PERSON_THIRD_PARTY": 0.9},  # "Perez" alone: part of two names
    }
    probs = [_mixed(read.get(i, {"O": 0.95})) for i in range(len(grid))]
    spans = decode(text, grid, probs, {})
    assert [(text[s.start : s.end], s.label) for s in spans] == [
        # "Julius Hess" alone leans third party (1.2 against 0.6), with "Julius" patient
        # (0.6 + 0.9 against 1.2 + 0.05)
        ("Julius Hess", Category.PERSON),
        ("Julius", Category.PERSON),
        ("Anna Perez", Category.PERSON),
        ("Juan Perez", Category.PERSON_THIRD_PARTY),
        ("Perez", Category.PERSON_THIRD_PARTY),  # shared by two names: its own votes
    ]
    # without the one-word mention, the longer name keeps its own reading
    alone = list(probs)
    alone[5] = _mixed({"O": 0.95})
    assert decode(text, grid, alone, {})[0].label is Category.PERSON_THIRD_PARTY


def test_possessive_endings_are_trimmed_from_names_in_languages_that_list_them() -> None:
    from polydeid.locales.names import name_words

    text = "this is Caitlin Kane's neighbour at St Mary's"
    grid = [(0, 4), (5, 7), (8, 15), (16, 22), (23, 32), (33, 35), (36, 38), (39, 45)]
    o = _mixed({"O": 0.95})
    probs = [
        o,
        o,
        _mixed({"B-PERSON": 0.9}),
        _mixed({"I-PERSON": 0.9}),
        o,
        o,
        _mixed({"B-LOCATION_FACILITY": 0.9}),
        _mixed({"I-LOCATION_FACILITY": 0.9}),
    ]
    assert name_words("en").possessive_suffixes == ("'s", "’s")
    assert name_words("de").possessive_suffixes == ()
    english = decode(text, grid, probs, {}, names=name_words("en"))
    # names lose the ending; other groups (a facility's name) keep it
    assert [text[s.start : s.end] for s in english] == ["Caitlin Kane", "St Mary's"]
    german = decode(text, grid, probs, {}, names=name_words("de"))
    assert [text[s.start : s.end] for s in german] == ["Caitlin Kane's", "St Mary's"]


def _grid_of(text: str, words: list[str]) -> list[tuple[int, int]]:
    """Character offsets of ``words``, found left to right in ``text``."""
    grid, at = [], 0
    for w in words:
        at = text.index(w, at)
        grid.append((at, at + len(w)))
        at += len(w)
    return grid


def test_leading_honorifics_are_trimmed_from_names_and_a_bare_title_is_no_name() -> None:
    from polydeid.locales.names import name_words

    text = "Migosi Raila Odinga wacho ni Dr. Otieno kod Migosi"
    words = text.replace(".", " .").split()
    grid = _grid_of(text, words)
    tags = ["B-PERSON", "I-PERSON", "I-PERSON", "O", "O", "B-PERSON_THIRD_PARTY"]
    tags += ["I-PERSON_THIRD_PARTY", "I-PERSON_THIRD_PARTY", "O", "B-PERSON"]
    probs = [_mixed({t: 0.9}) for t in tags]
    luo = name_words("luo")
    assert {"migosi", "dr"} <= luo.bare and "migosi" in luo.honorifics
    assert "dr" not in luo.honorifics
    found = [text[s.start : s.end] for s in decode(text, grid, probs, {}, names=luo)]
    # an honorific is trimmed; "Dr." is a title (the model's convention decides); a bare
    # honorific is no name
    assert found == ["Raila Odinga", "Dr. Otieno"]
    # without the language's name forms the spans stay as the model read them
    plain = [text[s.start : s.end] for s in decode(text, grid, probs, {})]
    assert plain == ["Migosi Raila Odinga", "Dr. Otieno", "Migosi"]
    # lower-case particles are parts of names, not titles
    assert "de" not in name_words("es").bare and "von" not in name_words("de").bare


def test_a_title_read_as_a_place_or_organisation_is_dropped_but_a_sex_word_stays() -> None:
    from polydeid.locales.names import name_words

    # "Gavana" (governor) and "Ker" (president) read as places, "Migosi" as an organisation:
    # titles alone identify no one; "Siaya" stays a place
    text = "Gavana owacho ni Ker biro e Siaya kod Migosi"
    grid = _grid_of(text, text.split())
    tags = ["B-LOCATION_VILLAGE", "O", "O", "B-LOCATION_VILLAGE", "O", "O"]
    tags += ["B-LOCATION_VILLAGE", "O", "B-ORGANIZATION"]
    probs = [_mixed({t: 0.9}) for t in tags]
    luo = name_words("luo")
    found = [text[s.start : s.end] for s in decode(text, grid, probs, {}, names=luo)]
    assert found == ["Siaya"]
    assert [text[s.start : s.end] for s in decode(text, grid, probs, {})] == [
        "Gavana",
        "Ker",
        "Siaya",
        "Migosi",
    ]
    # a title that is the record's sex word ("omukyala", woman / Mrs) is still the sex
    text = "Omulwadde omukyala"
    grid = _grid_of(text, text.split())
    probs = [_mixed({"O": 0.9}), _mixed({"B-SEX": 0.9})]
    lg = name_words("lg")
    assert "omukyala" in lg.bare
    sex = decode(text, grid, probs, {}, names=lg)
    assert [(text[s.start : s.end], s.label) for s in sex] == [("omukyala", Category.SEX)]


@pytest.mark.parametrize(
    ("lang", "text", "name"),
    [
        ("sw", "Marehemu Juma Hassan alifariki", "Juma Hassan"),  # the late
        ("luo", "Jamotho Okwiri notho e dalagi", "Okwiri"),  # the deceased
        ("lg", "Omugenzi Kato Ssali yafudde", "Kato Ssali"),
        ("rw", "Nyakwigendera Uwase Grace yapfuye", "Uwase Grace"),
        ("am", "ነፍሰ ጡር ሩታ ጥበቡ TT2 ክትባት ወስደዋል", "ሩታ ጥበቡ"),  # a pregnant woman
    ],
    ids=lambda x: x if isinstance(x, str) and len(x) <= 3 else "",
)
def test_a_records_noun_before_a_name_is_trimmed(lang: str, text: str, name: str) -> None:
    from polydeid.locales.names import name_words

    words = text.split()
    n = len(text[: text.index(name)].split()) + len(name.split())  # the model's span
    probs = [_mixed({("B-" if i == 0 else "I-") + "PERSON": 0.9}) for i in range(n)]
    probs += [_mixed({"O": 0.95})] * (len(words) - n)
    found = decode(text, _grid_of(text, words), probs, {}, names=name_words(lang))
    assert [text[s.start : s.end] for s in found] == [name]


def test_a_dash_at_a_names_edge_is_the_compounds_not_the_names() -> None:
    from polydeid.text.wordgrid import words

    text = "Boote der Zobel-Klasse und Karte E-18012"
    grid = words(text)  # ... "Zobel", "-", "Klasse" ... "E", "-", "18012"
    read = {2: "B-PERSON", 3: "I-PERSON", 7: "B-ID_OTHER", 8: "I-ID_OTHER", 9: "I-ID_OTHER"}
    probs = [_mixed({read[i]: 0.9} if i in read else {"O": 0.95}) for i in range(len(grid))]
    found = decode(text, grid, probs, {})
    # the name keeps no dash; an identifier's glued dash stays its own
    assert [text[s.start : s.end] for s in found] == ["Zobel", "E-18012"]


def test_a_greeting_opening_a_name_is_trimmed_and_marks_no_person() -> None:
    from polydeid.locales.names import name_words

    text = "Habari Ntimi Nyerere, miadi yako Bukoba. Mpendwa Bukoba. Habari"
    words = text.replace(",", " ,").replace(".", " .").split()
    grid = _grid_of(text, words)
    o = _mixed({"O": 0.95})
    tags = ["B-PERSON", "I-PERSON", "I-PERSON", "O", "O", "O", "B-LOCATION_VILLAGE", "O"]
    tags += ["B-LOCATION_VILLAGE", "I-LOCATION_VILLAGE", "O", "B-PERSON"]
    probs = [o if t == "O" else _mixed({t: 0.9}) for t in tags]
    swahili = name_words("sw")
    assert "habari" in swahili.openers and "habari" not in swahili.honorifics
    found = decode(text, grid, probs, {}, names=swahili)
    # the greeting is trimmed; unlike an honorific it makes no person of a place after it;
    # a greeting alone is no name
    assert [(text[s.start : s.end], s.label.name) for s in found] == [
        ("Ntimi Nyerere", "PERSON"),
        ("Bukoba", "LOCATION_VILLAGE"),
        ("Mpendwa Bukoba", "LOCATION_VILLAGE"),
    ]
    # a writer's pronoun before their own name: Dholuo "An" (I)
    text = "An Atieno Ominde, ayie ni otimna operation."
    words = text.replace(",", " ,").replace(".", " .").split()
    tags = ["B-PERSON", "I-PERSON", "I-PERSON"] + ["O"] * (len(words) - 3)
    probs = [o if t == "O" else _mixed({t: 0.9}) for t in tags]
    found = decode(text, _grid_of(text, words), probs, {}, names=name_words("luo"))
    assert [text[s.start : s.end] for s in found] == ["Atieno Ominde"]
    # no opener is a given name of its language or of English: a name never loses its first
    # word so
    assert {"dear", "hi"} <= name_words("en").openers and "an" in name_words("luo").openers
    from polydeid.locales import language_data, languages

    def given(lang: str) -> set[str]:
        table = language_data(lang, "names").get("default", {})
        return {w.casefold() for k, ws in table.items() if k.startswith("given") for w in ws}

    for lang in languages():
        assert not name_words(lang).openers & (given(lang) | given("en")), lang


def test_slashes_are_trimmed_from_span_edges_and_an_initial_loses_its_possessive() -> None:
    from polydeid.locales.names import name_words

    text = "consult w/ Dr. Emily R. and ref Paul M's case"
    words = ["consult", "w", "/", "Dr", ".", "Emily", "R", ".", "and", "ref", "Paul", "M's", "case"]
    grid = _grid_of(text, words)
    o = _mixed({"O": 0.95})
    tags = ["O", "O", "B-PERSON", "I-PERSON", "I-PERSON", "I-PERSON", "I-PERSON", "I-PERSON"]
    tags += ["O", "O", "B-PERSON", "I-PERSON", "O"]
    probs = [o if t == "O" else _mixed({t: 0.9}) for t in tags]
    found = [text[s.start : s.end] for s in decode(text, grid, probs, {}, names=name_words("en"))]
    assert found == ["Dr. Emily R.", "Paul M"]


def test_titles_join_names_where_the_language_writes_them_inside() -> None:
    from polydeid.locales.names import name_words

    text = "seen by Dr. John Smith and Mrs Okello; Dr.\nPatel. Nurse"
    words = ["seen", "by", "Dr", ".", "John", "Smith", "and", "Mrs", "Okello", ";", "Dr", "."]
    words += ["Patel", ".", "Nurse"]
    grid = _grid_of(text, words)
    o = _mixed({"O": 0.95})
    tags = ["O", "O", "O", "O", "B-PERSON_THIRD_PARTY", "I-PERSON_THIRD_PARTY", "O", "O"]
    tags += ["B-PERSON", "O", "O", "O", "B-PERSON_THIRD_PARTY", "O", "O"]
    probs = [o if t == "O" else _mixed({t: 0.9}) for t in tags]
    english = name_words("en")
    assert english.titles_in_names and "dr" in english.titles
    assert not name_words("es").titles_in_names
    found = [text[s.start : s.end] for s in decode(text, grid, probs, {}, names=english)]
    # the title joins the name; not across a line break
    assert found == ["Dr. John Smith", "Mrs Okello", "Patel"]
    spanish = [text[s.start : s.end] for s in decode(text, grid, probs, {}, names=name_words("es"))]
    assert spanish == ["John Smith", "Okello", "Patel"]
    # a title the model read as a span of its own ("Dr" then "." outside) is dropped as a bare
    # title, and its words stay free for the name after it
    text = "seen by Dr. Smith at"
    grid = _grid_of(text, ["seen", "by", "Dr", ".", "Smith", "at"])
    tags = ["O", "O", "B-PERSON", "O", "I-PERSON", "O"]
    probs = [o if t == "O" else _mixed({t: 0.9}) for t in tags]
    found = [text[s.start : s.end] for s in decode(text, grid, probs, {}, names=english)]
    assert found == ["Dr. Smith"]


def test_a_confident_change_of_kind_inside_a_group_is_a_boundary() -> None:
    # A facility written straight before its street: one location run, two things.
    text = "Hospital Santa Ana Calle Mayor 5"
    grid = [(0, 8), (9, 14), (15, 18), (19, 24), (25, 30), (31, 32)]
    facility = _mixed({"I-LOCATION_FACILITY": 0.97})
    street = _mixed({"I-LOCATION_ADDRESS": 0.97})
    probs = [_mixed({"B-LOCATION_FACILITY": 0.97}), facility, facility, street, street, street]
    spans = decode(text, grid, probs, {})
    assert [(text[s.start : s.end], s.label) for s in spans] == [
        ("Hospital Santa Ana", Category.LOCATION_FACILITY),
        ("Calle Mayor 5", Category.LOCATION_ADDRESS),
    ]
    # A doubtful word (its group's probability split between kinds) is no boundary.
    doubtful = _mixed({"I-LOCATION_ADDRESS": 0.5, "I-LOCATION_FACILITY": 0.45})
    spans = decode(text, grid, [probs[0], facility, facility, doubtful, doubtful, doubtful], {})
    assert [(s.start, s.end) for s in spans] == [(0, len(text))]
    # Names are roles of one person: a change of role inside a name never splits it.
    text = "Sam Bentley"
    probs = [_mixed({"B-PERSON": 0.97}), _mixed({"I-PERSON_THIRD_PARTY": 0.97})]
    assert [(s.start, s.end) for s in decode(text, [(0, 3), (4, 11)], probs, {})] == [(0, 11)]


def test_a_full_stop_or_a_spaced_dash_ends_a_place_but_a_name_keeps_its_initials_dot() -> None:
    import re

    text = "Calle Mayor 4 izq. Av. Sol 36 - S.A. J."
    grid = [(m.start(), m.end()) for m in re.finditer(r"\w+|[^\w\s]", text)]
    inside = {"ADDRESS": "LOCATION_ADDRESS", "ORG": "ORGANIZATION", "NAME": "PERSON"}

    def run(kind: str, n: int) -> list[list[float]]:
        return [_mixed({f"B-{inside[kind]}": 0.95})] + [_mixed({f"I-{inside[kind]}": 0.95})] * n

    # Calle Mayor 4 izq . | Av . Sol 36 - | S . A . | J .
    probs = [*run("ADDRESS", 4), *run("ADDRESS", 4), *run("ORG", 3), *run("NAME", 1)]
    assert len(probs) == len(grid)
    assert [text[s.start : s.end] for s in decode(text, grid, probs, {})] == [
        "Calle Mayor 4 izq",  # the dot is the sentence's
        "Av. Sol 36",  # the spaced dash is not the street's
        "S.A.",  # a dotted abbreviation keeps its last dot
        "J.",  # a name keeps an initial's dot
    ]
    # a dash glued to the next word is part of an identifier, never trimmed
    text = "E-18012 x"
    grid = [(0, 1), (1, 2), (2, 7), (8, 9)]
    probs = [*run("ADDRESS", 1), _mixed({"O": 0.95}), _mixed({"O": 0.95})]
    assert [text[s.start : s.end] for s in decode(text, grid, probs, {})] == ["E-"]


def test_a_name_ends_at_its_line_but_a_postal_address_runs_over_lines() -> None:
    text = "Daktari: Timothy Ssewankambo\nAlazwe OPD\n28245 Puruntie 82\nLAPPEENRANTA"
    words = ["Daktari", ":", "Timothy", "Ssewankambo", "Alazwe", "OPD", "28245", "Puruntie"]
    grid = _grid_of(text, [*words, "82", "LAPPEENRANTA"])
    o = _mixed({"O": 0.95})
    name = "PERSON_THIRD_PARTY"
    probs = [o, o, _mixed({f"B-{name}": 0.9}), _mixed({f"I-{name}": 0.9})]
    probs += [_mixed({f"I-{name}": 0.6}), o, _mixed({"B-LOCATION_ADDRESS": 0.9})]
    probs += [_mixed({"I-LOCATION_ADDRESS": 0.9})] * 3
    found = [(text[s.start : s.end], s.label) for s in decode(text, grid, probs, {})]
    assert found == [
        ("Timothy Ssewankambo", Category.PERSON_THIRD_PARTY),  # the next line's word is its own
        ("Alazwe", Category.PERSON_THIRD_PARTY),
        ("28245 Puruntie 82\nLAPPEENRANTA", Category.LOCATION_ADDRESS),
    ]


def test_a_village_ends_at_its_line_though_an_address_runs_over() -> None:
    text = "e Siaya gi Kisumu\nJotelo owacho"
    grid = _grid_of(text, ["e", "Siaya", "gi", "Kisumu", "Jotelo", "owacho"])
    o = _mixed({"O": 0.95})
    village = [_mixed({"B-LOCATION_VILLAGE": 0.95})] + [_mixed({"I-LOCATION_VILLAGE": 0.95})] * 3
    found = [text[s.start : s.end] for s in decode(text, grid, [o, *village, o], {})]
    assert found == ["Siaya gi Kisumu", "Jotelo"]  # confidently a village: one line
    # read as neither kind confidently, a place still runs over lines as before
    half = {"LOCATION_VILLAGE": 0.5, "LOCATION_ADDRESS": 0.45}
    unsure = [_mixed({f"B-{c}": v for c, v in half.items()})]
    unsure += [_mixed({f"I-{c}": v for c, v in half.items()})] * 3
    found = [text[s.start : s.end] for s in decode(text, grid, [o, *unsure, o], {})]
    assert found == ["Siaya gi Kisumu\nJotelo"]


def test_an_honorific_makes_a_person_of_what_the_model_read_as_a_place() -> None:
    from polydeid.locales.names import name_words

    luo = name_words("luo")
    o = _mixed({"O": 0.95})
    place = [_mixed({"B-LOCATION_VILLAGE": 0.9}), _mixed({"I-LOCATION_VILLAGE": 0.9})]

    def read(text: str, words: list[str], tags: list[str]) -> list[tuple[str, Category]]:
        probs = [o if t == "O" else place[t == "I"] for t in tags]
        spans = decode(text, _grid_of(text, words), probs, {}, names=luo)
        return [(text[s.start : s.end], s.label) for s in spans]

    # the honorific opens the span ("President Kenyatta"): the person is the rest
    text = "limbe mar Ker Uhuru Kenyatta e Kisumu"
    words = text.split()
    assert read(text, words, ["O", "O", "B", "I", "I", "O", "B"]) == [
        ("Uhuru Kenyatta", Category.PERSON),
        ("Kisumu", Category.LOCATION_VILLAGE),
    ]
    # capitalised right before the span; the same text elsewhere follows the vote, which a
    # marked span casts whole for a name
    text = "gi Migosi Kenyatta, Migosi Kenyatta ma Kenyatta wacho"
    words = ["gi", "Migosi", "Kenyatta", ",", "Migosi", "Kenyatta", "ma", "Kenyatta", "wacho"]
    tags = ["O", "O", "B", "O", "O", "B", "O", "B", "O"]
    assert read(text, words, tags) == [("Kenyatta", Category.PERSON)] * 3
    # a lower-case office word before a place is the noun ("rais Marekani": the US president)
    text = "ker Kisumu wacho"
    assert read(text, text.split(), ["O", "B", "O"]) == [("Kisumu", Category.LOCATION_VILLAGE)]
    # a number: a street named after a person, not a person
    text = "Ker Odinga 46 ni"
    assert read(text, text.split(), ["B", "I", "I", "O"]) == [
        ("Ker Odinga 46", Category.LOCATION_VILLAGE)
    ]
    # languages without honorifics read the spans as the model did
    text = "Dr Esquerdo 46"
    spans = decode(
        text,
        _grid_of(text, text.split()),
        [place[0], place[1], place[1]],
        {},
        names=name_words("es"),
    )
    assert [(text[s.start : s.end], s.label) for s in spans] == [(text, Category.LOCATION_VILLAGE)]


def test_capitalised_names_one_space_apart_are_one_name() -> None:
    text = "gavana Stephen Sang, hermano Juan y Ana Ruiz"
    words = ["gavana", "Stephen", "Sang", ",", "hermano", "Juan", "y", "Ana", "Ruiz"]
    o = _mixed({"O": 0.95})
    person, relative = _mixed({"B-PERSON": 0.9}), _mixed({"B-PERSON_THIRD_PARTY": 0.9})
    probs = [o, person, relative, o, relative, relative, o, person, _mixed({"I-PERSON": 0.9})]
    spans = decode(text, _grid_of(text, words), probs, {})
    assert [(text[s.start : s.end], s.label) for s in spans] == [
        ("Stephen Sang", Category.PERSON),  # read as two names: one, labelled by its first
        ("hermano", Category.PERSON_THIRD_PARTY),  # a lower-case kinship word stays apart
        ("Juan", Category.PERSON_THIRD_PARTY),
        ("Ana Ruiz", Category.PERSON),
    ]


def test_spans_a_hyphen_glues_into_one_word_are_one_span_with_pooled_votes() -> None:
    text = "nyathi Purity Wandayi-Odede, Zobel-Klasse, Mara - Kisumu"
    words = ["nyathi", "Purity", "Wandayi", "-", "Odede", ",", "Zobel", "-", "Klasse", ","]
    words += ["Mara", "-", "Kisumu"]
    o = _mixed({"O": 0.95})
    person, facility = _mixed({"B-PERSON": 0.95}), _mixed({"B-LOCATION_FACILITY": 0.7})
    village = _mixed({"B-LOCATION_VILLAGE": 0.9})
    probs = [o, person, facility, o, person, o, person, o, o, o, village, o, village]
    spans = decode(text, _grid_of(text, words), probs, {})
    assert [(text[s.start : s.end], s.label) for s in spans] == [
        # the facility's votes are outweighed: one word, one name, joined to the given name
        ("Purity Wandayi-Odede", Category.PERSON),
        ("Zobel", Category.PERSON),  # nothing read after the hyphen: nothing to join
        ("Mara", Category.LOCATION_VILLAGE),  # a spaced dash joins no word
        ("Kisumu", Category.LOCATION_VILLAGE),
    ]
    # the joined span's score is the lower of its parts'
    assert spans[0].score == pytest.approx(min(person[TAGS.index("B-PERSON")], 0.7), abs=0.05)


def test_a_one_word_name_joins_its_longer_names_role_whatever_its_own_votes() -> None:
    from polydeid.locales.names import name_words

    # One mention reads "Akong'o" as a facility, one as a relative and one, weakly, as a
    # relative: all the mentions' votes call it a name, and it takes the role of the one
    # longer name it is a word of
    text = "Akong'o Opondo ni. kuom Akong'o Opondo. an Akong'o. kuom Akong'o."
    words = ["Akong'o", "Opondo", "ni", ".", "kuom", "Akong'o", "Opondo", "."]
    words += ["an", "Akong'o", ".", "kuom", "Akong'o", "."]
    o = _mixed({"O": 0.95})
    patient = [_mixed({"B-PERSON": 0.9}), _mixed({"I-PERSON": 0.9})]
    facility = _mixed({"B-LOCATION_FACILITY": 0.5})
    weak, third = _mixed({"B-PERSON_THIRD_PARTY": 0.45}), _mixed({"B-PERSON_THIRD_PARTY": 0.95})
    probs = [*patient, o, o, o, facility, _mixed({"B-PERSON": 0.9}), o]
    probs += [o, third, o, o, weak, o]
    spans = decode(text, _grid_of(text, words), probs, {}, names=name_words("luo"))
    assert [(text[s.start : s.end], s.label) for s in spans] == [
        ("Akong'o Opondo", Category.PERSON),
        ("Akong'o Opondo", Category.PERSON),  # two names one space apart: one
        ("Akong'o", Category.PERSON),
        ("Akong'o", Category.PERSON),
    ]


def test_a_vietnamese_patient_abbreviation_is_trimmed_from_the_name() -> None:
    from polydeid.locales.names import name_words

    text = "BN Phương, 19 tuổi"
    words = ["BN", "Phương", ",", "19", "tuổi"]
    o = _mixed({"O": 0.95})
    probs = [_mixed({"B-PERSON": 0.9}), _mixed({"I-PERSON": 0.9}), o, o, o]
    spans = decode(text, _grid_of(text, words), probs, {}, names=name_words("vi"))
    assert [text[s.start : s.end] for s in spans] == ["Phương"]


def test_an_initial_or_title_keeps_its_dot_in_a_name() -> None:
    from polydeid.locales.names import name_words

    text = "Yusuf Sayi said J. Okello and Dr. Ann Lee now"
    words = ["Yusuf", "Sayi", "said", "J", ".", "Okello", "and", "Dr", ".", "Ann", "Lee", "now"]
    o = _mixed({"O": 0.95})
    inside, third = _mixed({"I-PERSON": 0.9}), _mixed({"I-PERSON_THIRD_PARTY": 0.9})
    probs = [_mixed({"B-PERSON": 0.9}), inside, o]
    probs += [_mixed({"B-PERSON": 0.9}), inside, inside, o]
    probs += [_mixed({"B-PERSON_THIRD_PARTY": 0.9}), third, third, third, o]
    spans = decode(text, _grid_of(text, words), probs, {}, names=name_words("en"))
    assert [(text[s.start : s.end], s.label) for s in spans] == [
        ("Yusuf Sayi", Category.PERSON),
        ("J. Okello", Category.PERSON),
        ("Dr. Ann Lee", Category.PERSON_THIRD_PARTY),
    ]


def test_a_name_ending_in_an_initial_takes_its_dot() -> None:
    text = '"Маслова Н." и Иванов Петр.'
    words = ['"', "Маслова", "Н", ".", '"', "и", "Иванов", "Петр", "."]
    o = _mixed({"O": 0.95})
    name = [_mixed({"B-PERSON": 0.9}), _mixed({"I-PERSON": 0.9})]
    probs = [o, name[0], name[1], o, o, o, name[0], name[1], o]
    spans = decode(text, _grid_of(text, words), probs, {})
    # the initial's dot joins the name although the model read it as outside; a sentence's
    # full stop after a whole word does not
    assert [text[s.start : s.end] for s in spans] == ["Маслова Н.", "Иванов Петр"]


def test_a_kept_span_reports_a_score_at_least_its_threshold() -> None:
    """The score is rounded before the threshold judges it, so a span never reports a score
    below the threshold that kept it (found by the property test above: 0.7559 < 0.755906)."""
    text = "Okello came"
    grid = [(0, 6), (7, 11)]
    row = [0.0] * len(TAGS)
    row[TAG_INDEX["B-PERSON"]], row[TAG_INDEX["O"]] = 0.755906, 0.244094
    probs = [row, _mixed({"O": 0.95})]
    for threshold in (0.755906, 0.75585, 0.7559):
        spans = decode(text, grid, probs, {Category.PERSON: threshold})
        assert all(s.score >= threshold for s in spans)
    assert [s.score for s in decode(text, grid, probs, {Category.PERSON: 0.7559})] == [0.7559]
    assert decode(text, grid, probs, {Category.PERSON: 0.755906}) == []
