"""A name found once in a segment is found wherever else it is written (detect.propagate)."""

from __future__ import annotations

from polydeid.core.segments import Segment
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category, Fact
from polydeid.detect.pipeline import Pipeline
from polydeid.detect.propagate import MIN_READINGS, PHRASE_SCORE, SOURCE, propagate_names
from polydeid.testing import FakeDetector

PATIENT, OTHER = Category.PERSON, Category.PERSON_THIRD_PARTY


def spans_of(text: str, *found: tuple[str, Category]) -> list[Span]:
    out = []
    for words, label in found:
        start = text.index(words)
        out.append(Span(start, start + len(words), label, "tagger.x", 0.9))
    return out


def shown(text: str, spans) -> list[tuple[str, Category, str]]:
    return [(text[s.start : s.end], s.label, s.source) for s in spans]


def test_a_found_name_is_found_where_else_it_is_written() -> None:
    text = "Amina Wanjiru seen today. Wanjiru walked in with her mother Akinyi.\nAkinyi left."
    spans = spans_of(text, ("Amina Wanjiru", PATIENT), ("Akinyi", OTHER))
    out = propagate_names(text, spans, lang="sw")
    assert shown(text, out) == [
        ("Amina Wanjiru", PATIENT, "tagger.x"),
        ("Wanjiru", PATIENT, SOURCE),
        ("Akinyi", OTHER, "tagger.x"),
        ("Akinyi", OTHER, SOURCE),
    ]


def test_a_carried_word_joins_the_name_it_stands_next_to() -> None:
    text = "James Onyango Koyoo spoke.\nLater James Onyango Koyoo left."
    first = Span(0, 19, PATIENT, "tagger.x", 0.9)
    later = text.index("James", 5)
    spans = [first, Span(later, later + 13, PATIENT, "tagger.x", 0.9)]
    out = propagate_names(text, spans, lang="luo")
    assert [text[s.start : s.end] for s in out] == ["James Onyango Koyoo", "James Onyango Koyoo"]


def test_words_that_do_not_look_like_names_are_not_carried() -> None:
    cases = [
        # written in lower case elsewhere: a word at a sentence's start, not a name
        ("Césarienne Okello planned. Césarienne done; la césarienne a duré.", "Césarienne"),
        ("Dr Okello came. Dr Mensah too.", "Dr"),  # a title
        ("Al Okello came. Al left.", "Al"),  # under three letters
        # no case: a word alone cannot be told from a name, and a reading that mixes scripts
        # ("ጊያን came") is no name whose words could be carried
        ("ጊያን came. ጊያን ሲንድሮም", "ጊያን"),
    ]
    for text, word in cases:
        span = Span(0, text.index(" ", len(word) + 1), PATIENT, "tagger.x", 0.9)
        out = propagate_names(text, [span], lang="fr")
        assert out == (span,), word


def test_whole_words_only_and_other_spans_and_facts_are_left_alone() -> None:
    text = "Okello seen. Okello2 ran. Okello Road. Okello."
    road = text.index("Okello Road")
    spans = [
        Span(0, 6, PATIENT, "tagger.x", 0.9),
        Span(road, road + 11, Category.LOCATION_ADDRESS, "tagger.x", 0.9),
    ]
    last = text.rindex("Okello")
    fact = Span(last, last + 6, Fact.DIAGNOSIS, "facts.x", 1.0)
    assert propagate_names(text, spans, [fact], lang="en") == tuple(spans)
    out = propagate_names(text, spans, lang="en")
    assert shown(text, out)[-1] == ("Okello", PATIENT, SOURCE)


def test_the_pipeline_carries_names_and_keeps_facts_protected() -> None:
    text = "Seen by Parkinson today. Enfermedad de Parkinson. Parkinson left."
    name = Span(8, 17, OTHER, "tagger.x", 0.9)
    disease = text.index("Enfermedad")
    fact = Span(disease, disease + 24, Fact.DIAGNOSIS, "facts.eponyms.v1", 1.0)
    out = Pipeline([FakeDetector([name, fact])]).detect(Segment(text, lang="es"))
    assert [(text[s.start : s.end], s.start) for s in out] == [
        ("Parkinson", 8),
        ("Parkinson", text.rindex("Parkinson")),
    ]


def test_a_baseline_pipeline_runs_without_polydeids_segment_steps() -> None:
    text = "Patient name: Amina. Amina left."
    found = FakeDetector([Span(14, 19, OTHER, "backend.x", 0.9)])
    assert [s.label for s in Pipeline([found]).detect(Segment(text, lang="en"))] == [PATIENT] * 2
    as_is = Pipeline([found], segment_steps=False).detect(Segment(text, lang="en"))
    assert [(s.start, s.label) for s in as_is] == [(14, OTHER)]


def test_a_name_a_word_cannot_carry_is_carried_whole() -> None:
    # lower case: typed notes and chat write names so; found in a field, missed in the prose
    text = "Jina: muhire mukasonga\nChanjo ilipewa Muhire  Mukasonga leo; mukasonga ni mzima."
    out = propagate_names(text, spans_of(text, ("muhire mukasonga", PATIENT)), lang="sw")
    assert shown(text, out) == [
        ("muhire mukasonga", PATIENT, "tagger.x"),
        ("Muhire  Mukasonga", PATIENT, SOURCE),  # any case, any run of spaces
    ]  # the lone lower-case "mukasonga" is a word as far as a word can tell
    # a script without case: the whole name, and each of its words alone (no capital tells
    # the patient's given name written alone from a word); the cost, fail closed: "ተስፋ አለ"
    # (there is hope) loses its word too
    text = "ስም: ተስፋ ፍሬው። የሞት ማሳወቂያ: ተስፋ ፍሬው፣ ተስፋ አለ። ታካሚ: ተስፋ።"
    out = propagate_names(text, spans_of(text, ("ተስፋ ፍሬው", PATIENT)), lang="am")
    assert [(text[s.start : s.end], s.start, s.label) for s in out] == [
        ("ተስፋ ፍሬው", 4, PATIENT),
        ("ተስፋ ፍሬው", text.index("ተስፋ ፍሬው", 5), PATIENT),
        ("ተስፋ", text.index("ተስፋ አለ"), PATIENT),
        ("ተስፋ", text.rindex("ተስፋ"), PATIENT),
    ]
    # an unsure reading, or one with a title in it, carries no word
    unsure = [Span(4, 11, PATIENT, "tagger.x", PHRASE_SCORE - 0.01)]
    assert propagate_names(text, unsure, lang="am") == tuple(unsure)
    titled = "አቶ ተስፋ ፍሬው መጡ። ተስፋ አለ።"
    span = [Span(0, 11, OTHER, "tagger.x", 0.99)]
    assert propagate_names(titled, span, lang="am") == tuple(span)


def test_the_words_of_one_occurrence_are_one_span() -> None:
    text = "Jathieth: g. otiende.\nWaparo ni g. otiende nigi remo."
    out = propagate_names(text, spans_of(text, ("g. otiende", OTHER)), lang="luo")
    assert shown(text, out) == [("g. otiende", OTHER, "tagger.x"), ("g. otiende", OTHER, SOURCE)]


def test_a_name_read_in_part_elsewhere_is_completed() -> None:
    text = "Umurwayi: florence murekatete. Ihererekanya: florence murekatete, igicuri."
    later = text.rindex("florence")
    spans = [
        *spans_of(text, ("florence murekatete", PATIENT)),
        Span(later, later + 8, OTHER, "tagger.x", 0.95),  # read here as someone else
    ]
    out = propagate_names(text, spans, lang="rw")
    assert shown(text, out) == [
        ("florence murekatete", PATIENT, "tagger.x"),
        ("florence murekatete", OTHER, SOURCE),  # whole, in the role read here
    ]
    assert out[1].score == 0.95
    # another kind of span inside: only the words it leaves, each run one name span
    text = "Umurwayi: b. ochuodho. Kisumu: b. ochuodho yabonetse."
    place = text.rindex("ochuodho")
    spans = [
        *spans_of(text, ("b. ochuodho", PATIENT)),
        Span(place, place + 8, Category.LOCATION_VILLAGE, "tagger.x", 0.9),
    ]
    out = propagate_names(text, spans, lang="rw")
    assert shown(text, out)[1:] == [
        ("b", PATIENT, SOURCE),
        ("ochuodho", Category.LOCATION_VILLAGE, "tagger.x"),
    ]


def test_a_phrase_is_carried_only_when_the_model_was_sure_and_whole() -> None:
    text = "Mgonjwa amina wanjiru. Ndugu amina wanjiru2 na Dr amina wanjiru."
    unsure = Span(8, 21, PATIENT, "tagger.x", PHRASE_SCORE - 0.01)
    assert propagate_names(text, [unsure], lang="sw") == (unsure,)
    sure = Span(8, 21, PATIENT, "tagger.x", PHRASE_SCORE)
    out = propagate_names(text, [sure], lang="sw")
    # "amina wanjiru2" is part of a token; the last is carried (the title is not a name word)
    assert [text[s.start : s.end] for s in out] == ["amina wanjiru", "amina wanjiru"]
    assert out[1].start == text.rindex("amina")
    titled = "Seen by dr amina wanjiru. Later amina wanjiru left."
    span = Span(8, 24, OTHER, "tagger.x", 0.99)  # a title inside: not carried as a phrase
    assert propagate_names(titled, [span], lang="en") == (span,)
    mixed = "BS Trần Bích Thụy ký giấy. Gọi Trần Bích Thụy ký tên."
    overreach = Span(3, 20, OTHER, "tagger.x", 0.99)  # a verb taken into a capitalised name
    out = propagate_names(mixed, [overreach], lang="vi")
    assert [mixed[s.start : s.end] for s in out] == ["Trần Bích Thụy ký", "Trần Bích Thụy"]
    fact = "Mgonjwa amina wanjiru. Dalili: amina wanjiru syndrome."
    protected = Span(fact.rindex("amina"), len(fact) - 1, Fact.DIAGNOSIS, "facts.x", 1.0)
    name = Span(8, 21, PATIENT, "tagger.x", 0.99)
    assert propagate_names(fact, [name], [protected], lang="sw") == (name,)


def test_a_one_word_name_read_confidently_again_and_again_is_carried() -> None:
    # a script without case: found at two mentions, missed after the shift-handover label
    text = "ትርሐስ (ዕድሜ 42 ዓመት) መጥተዋል። ትርሐስ ተኝተዋል። የፈረቃ ርክክብ: ትርሐስ፣ ሳል።"
    starts = [i for i in range(len(text)) if text.startswith("ትርሐስ", i)]
    read = [Span(i, i + 4, PATIENT, "tagger.x", 0.99) for i in starts[:MIN_READINGS]]
    out = propagate_names(text, read, lang="am")
    assert [(s.start, s.label, s.source) for s in out] == [
        *((s.start, PATIENT, "tagger.x") for s in read),
        (starts[-1], PATIENT, SOURCE),
    ]
    # read once, or not every reading sure: a clinical word may have been taken for a name
    assert propagate_names(text, read[:1], lang="am") == tuple(read[:1])
    unsure = [read[0], Span(starts[1], starts[1] + 4, PATIENT, "tagger.x", PHRASE_SCORE - 0.01)]
    assert propagate_names(text, unsure, lang="am") == tuple(unsure)
    # lower case: carried in any case, on whole words only
    text = "An odera, ayie. odera ok nyal ndiko. Odera2 kod Odera."
    first, second = text.index("odera"), text.index("odera", 5)
    read = [Span(i, i + 5, PATIENT, "tagger.x", 0.95) for i in (first, second)]
    out = propagate_names(text, read, lang="luo")
    assert [text[s.start : s.end] for s in out] == ["odera", "odera", "Odera"]
    assert out[-1].start == text.rindex("Odera")


def test_names_carried_over_one_another_keep_each_uncovered_word() -> None:
    # two lower-case names sharing a word: the second's occurrence overlaps only the first's
    # carried span, so only its own word is added
    text = "amina wanjiru; wanjiru otieno. Baadaye amina wanjiru otieno."
    spans = [
        Span(0, 13, PATIENT, "tagger.x", 0.95),
        Span(15, 29, OTHER, "tagger.x", 0.95),
    ]
    out = propagate_names(text, spans, lang="sw")
    later = text.index("amina", 5)
    assert [(text[s.start : s.end], s.label) for s in out if s.start >= later] == [
        ("amina wanjiru", PATIENT),
        ("otieno", OTHER),
    ]


def test_a_name_without_spaces_read_in_part_is_completed_and_never_added_elsewhere() -> None:
    # Chinese writes no spaces: "产妇区海玲" (the mother Ou Hailing) reads as one run of
    # letters, where the model found only the given name after finding the whole name at
    # the label "母亲姓名：" (mother's name)
    text = "母亲姓名：区海玲；产妇区海玲，G3P3。区海玲顺产。"
    label_value = text.index("区海玲")
    given = text.index("海玲", label_value + 3)
    spans = [
        Span(label_value, label_value + 3, OTHER, "tagger.x", PHRASE_SCORE),
        Span(given, given + 2, PATIENT, "tagger.x", 0.99),
    ]
    out = propagate_names(text, spans, lang="zh")
    assert shown(text, out) == [
        ("区海玲", OTHER, "tagger.x"),
        ("区海玲", PATIENT, SOURCE),  # completed, in the role read there
    ]  # the third mention, where the model read nothing, gets nothing from this step
    assert out[1].start == given - 1


def test_a_name_without_spaces_is_completed_only_over_names_from_a_confident_reading() -> None:
    text = "母亲姓名：区海玲；产妇区海玲。"
    label_value = text.index("区海玲")
    given = text.index("海玲", label_value + 3)
    unsure = [
        Span(label_value, label_value + 3, OTHER, "tagger.x", PHRASE_SCORE - 0.01),
        Span(given, given + 2, PATIENT, "tagger.x", 0.99),
    ]
    assert propagate_names(text, unsure, lang="zh") == tuple(unsure)
    # another category over part of the mention: left as it is
    place = [
        Span(label_value, label_value + 3, OTHER, "tagger.x", 0.99),
        Span(given, given + 2, Category.LOCATION_VILLAGE, "tagger.x", 0.99),
    ]
    assert propagate_names(text, place, lang="zh") == tuple(place)
