"""Reading extraction replies (fences, prose, truncation, other key names, wrappers) and
locating values in the source (all occurrences, whole words, whitespace-normalised)."""

from __future__ import annotations

import pytest

from polydeid.core.errors import DetectionError, ReplyFormatError
from polydeid.detect.backends._llm_parse import Extraction, locate, parse_reply

LABELS = ("human_name", "date", "id_number", "phone_number")


def pairs(reply: str, labels: tuple[str, ...] = LABELS) -> list[tuple[str, str]]:
    return [(item.label, item.value) for item in parse_reply(reply, labels).items]


# --- reply shapes ---------------------------------------------------------------------------


def test_plain_list() -> None:
    reply = '[{"label": "human_name", "value": "Amina Njeri"}, {"label": "date", "value": "3/4"}]'
    assert pairs(reply) == [("human_name", "Amina Njeri"), ("date", "3/4")]


@pytest.mark.parametrize(
    "reply",
    [
        '```json\n[{"label": "date", "value": "1 May"}]\n```',
        '```\n[{"label": "date", "value": "1 May"}]\n```\nLet me know if you need more.',
        'Here is the list:\n```JSON\n[{"label": "date", "value": "1 May"}]```',
        'Sure! The identifiers are [listed below]:\n[{"label": "date", "value": "1 May"}]\nDone.',
        '[{"label": "date", "value": "1 May"}]\n\nNote: no names were found [as requested].',
    ],
    ids=["fence", "fence-then-prose", "prose-then-fence", "prose-brackets", "trailing-prose"],
)
def test_fences_and_prose_around_the_json(reply: str) -> None:
    assert pairs(reply) == [("date", "1 May")]


def test_reasoning_block_is_skipped() -> None:
    reply = (
        '<think>Draft: [{"label": "human_name", "value": "Mother"}] no, wrong.</think>\n'
        '[{"label": "date", "value": "1 May"}]'
    )
    assert pairs(reply) == [("date", "1 May")]
    with pytest.raises(ReplyFormatError):  # cut off while still thinking: no answer yet
        parse_reply('<think>Maybe [{"label": "date", "value": "1 May"}] ...', LABELS)


def test_empty_list_is_a_valid_answer() -> None:
    parsed = parse_reply("```json\n[]\n```")
    assert parsed.items == () and not parsed.truncated


def test_truncated_array_keeps_its_complete_objects() -> None:
    reply = (
        '[{"label": "human_name", "value": "Amina"}, {"label": "date", "value": "1 May"}, '
        '{"label": "id_num'
    )
    parsed = parse_reply(reply, LABELS)
    assert parsed.truncated
    assert [(i.label, i.value) for i in parsed.items] == [
        ("human_name", "Amina"),
        ("date", "1 May"),
    ]


def test_truncated_inside_an_open_fence_and_a_wrapper() -> None:
    reply = (
        '```json\n{"entities": [{"type": "human_name", "text": "Amina"}, '
        '{"type": "date", "text": "1 M'
    )
    parsed = parse_reply(reply, LABELS)
    assert parsed.truncated
    assert [(i.label, i.value) for i in parsed.items] == [("human_name", "Amina")]


def test_truncated_string_with_brackets_and_escapes_inside() -> None:
    reply = '[{"label": "human_name", "value": "A \\"[x]\\" {y}"}, {"label": "date", "va'
    parsed = parse_reply(reply, LABELS)
    assert parsed.truncated and parsed.items == (Extraction("human_name", 'A "[x]" {y}'),)


def test_single_object_instead_of_a_list() -> None:
    assert pairs('{"label": "phone_number", "value": "0712 345678"}') == [
        ("phone_number", "0712 345678")
    ]


@pytest.mark.parametrize(
    "reply",
    [
        '{"entities": [{"label": "date", "value": "1 May"}]}',
        '{"Identifiers": [{"label": "date", "value": "1 May"}]}',
        '{"document": 3, "found": [{"label": "date", "value": "1 May"}]}',
    ],
    ids=["entities", "identifiers-any-case", "only-list-of-objects"],
)
def test_wrapped_list(reply: str) -> None:
    assert pairs(reply) == [("date", "1 May")]


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        ('{"type": "date", "text": "1 May"}', ("date", "1 May")),
        ('{"entity": "date", "text": "1 May"}', ("date", "1 May")),
        ('{"type": "date", "entity": "1 May"}', ("date", "1 May")),
        ('{"entity_type": "date", "word": "1 May"}', ("date", "1 May")),
        ('{"Label": "date", "Value": "1 May", "score": 0.9}', ("date", "1 May")),
        ('{"label": "id_number", "value": 123456}', ("id_number", "123456")),
    ],
    ids=["type-text", "entity-text", "type-entity", "entity_type-word", "case", "number"],
)
def test_other_key_names(obj: str, expected: tuple[str, str]) -> None:
    assert pairs(f"[{obj}]") == [expected]


def test_ambiguous_objects_are_counted_not_guessed() -> None:
    reply = (
        "["
        '{"label": "date", "type": "human_name", "value": "x"}, '  # two labels
        '{"label": "date", "value": "x", "text": "y"}, '  # two values
        '{"label": "date"}, '  # no value
        '{"label": "date", "value": {"nested": 1}}, '  # not text
        '{"label": "human_name", "value": "Amina"}'
        "]"
    )
    parsed = parse_reply(reply, LABELS)
    assert parsed.items == (Extraction("human_name", "Amina"),)
    assert parsed.malformed == 4


def test_label_keyed_shapes_when_the_label_set_is_known() -> None:
    reply = '{"human_name": ["Amina", "Otieno"], "date": "1 May"}'
    assert pairs(reply) == [("human_name", "Amina"), ("human_name", "Otieno"), ("date", "1 May")]
    assert pairs('[["human_name", "Amina"], ["date", "1 May"]]') == [
        ("human_name", "Amina"),
        ("date", "1 May"),
    ]
    assert pairs('[{"label": "human_name", "value": ["Amina", "Otieno"]}]') == [
        ("human_name", "Amina"),
        ("human_name", "Otieno"),
    ]


def test_unknown_labels_are_passed_through_for_the_caller_to_count() -> None:
    assert pairs('[{"label": "PATIENT_NAME", "value": "Amina"}]') == [("PATIENT_NAME", "Amina")]


@pytest.mark.parametrize(
    "reply",
    [
        "",
        "I could not find any identifiers in this document.",
        "[1, 2, 3]",
        '["Amina", "Otieno"]',
        '{"answer": "none"}',
        '[{"label": "date", "val',
        "```json\n```",
    ],
    ids=["empty", "prose", "numbers", "bare-strings", "other-object", "cut-first", "empty-fence"],
)
def test_replies_without_extractions_raise(reply: str) -> None:
    with pytest.raises(ReplyFormatError):
        parse_reply(reply, LABELS)


def test_format_errors_never_quote_the_reply() -> None:
    reply = "The patient Wanjiru Kamau (ID 27384910) has no identifiers I can list."
    with pytest.raises(DetectionError) as caught:
        parse_reply(reply, LABELS)
    message = str(caught.value)
    assert "Wanjiru" not in message and "27384910" not in message
    assert "Wanjiru" not in repr(Extraction("human_name", "Wanjiru"))


def test_many_brackets_in_prose_stay_cheap() -> None:
    reply = "[x] " * 5000 + '[{"label": "date", "value": "1 May"}]'
    # Bounded number of JSON starts tried: an answer far behind a wall of brackets is not read.
    with pytest.raises(ReplyFormatError):
        parse_reply(reply, LABELS)


# --- value location ---------------------------------------------------------------------------


def test_every_occurrence_is_found() -> None:
    text = "Amina came in. Seen by Dr Otieno. Amina's mother said Amina was tired."
    assert [text[a:b] for a, b in locate(text, "Amina")] == ["Amina"] * 3
    assert len(locate(text, "Amina")) == 3


def test_whole_words_only_where_the_value_starts_or_ends_with_a_word_character() -> None:
    text = "Aminata and Amina; ID KE-123 and KE-1234; call +254 700."
    assert locate(text, "Amina") == [(text.index("Amina;"), text.index("Amina;") + 5)]
    assert [text[a:b] for a, b in locate(text, "KE-123")] == ["KE-123"]  # not inside KE-1234
    assert [text[a:b] for a, b in locate(text, "+254 700")] == ["+254 700"]
    assert locate(text, "mina") == []


def test_scripts_without_spaces_are_not_held_to_word_boundaries() -> None:
    text = "患者王伟于三月入院。王伟的电话"
    assert [text[a:b] for a, b in locate(text, "王伟")] == ["王伟", "王伟"]


def test_combining_marks_count_as_word_characters() -> None:
    text = "राम और रामा"  # the vowel sign of the second word is a combining mark
    assert len(locate(text, "राम")) == 1


def test_whitespace_normalised_match() -> None:
    text = "Patient: Amina\n   Njeri, ward 4. Mother Amina Njeri."
    found = [text[a:b] for a, b in locate(text, "Amina Njeri")]
    assert found == ["Amina\n   Njeri", "Amina Njeri"]
    assert [text[a:b] for a, b in locate(text, "  Amina   Njeri ")] == found


def test_values_not_in_the_source_are_not_located() -> None:
    text = "Amina Njeri was seen on 1 May 2024."
    assert locate(text, "Amina Wanjiru") == []
    assert locate(text, "amina njeri") == []  # case is not normalised
    assert locate(text, "   ") == []
