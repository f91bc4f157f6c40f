"""The language of each part of a mixed record: pieces, stretches, the lingua second opinion,
and how a mixed segment is routed through the pipeline (invented people; fictional numbers)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from polydeid import Deidentifier
from polydeid.core.errors import RecordError, UnknownLanguageError
from polydeid.core.segments import Segment, Stretch
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category
from polydeid.detect.langid import stretches as mixed
from polydeid.detect.langid.stretches import (
    language_stretches,
    mixed_segment,
    pieces,
)
from polydeid.detect.pipeline import Pipeline, language_parts

RECORDS = json.loads(
    (Path(__file__).parents[1] / "fixtures" / "mixed_language" / "records.json").read_text("utf-8")
)["records"]

#: One sentence per language, for records that switch into it from English (or from
#: Kiswahili, for English itself).
SENTENCES = {
    "en": "The patient reports fever and headache since yesterday evening.",
    "de": "Er klagte über Brustschmerzen und Atemnot seit zwei Tagen.",
    "es": "Refiere dolor abdominal y vómitos desde hace dos días.",
    "fr": "Le patient se plaint de douleurs thoraciques depuis deux jours.",
    "vi": "Bệnh nhân sốt cao và ho kéo dài ba ngày nay.",
    "sw": "Mgonjwa analalamika maumivu ya kichwa na homa kwa siku tatu sasa.",
    "lg": "Omulwadde agamba nti alina omusujja n'okulumwa omutwe okuva eggulo.",
    "rw": "Umurwayi yaje kwa muganga afite umuriro n'uburibwe bw'umutwe.",
    "luo": "Jatuo nigi midhusi kod rem wich nyaka nyoro odhiambo.",
}
OTHER = {
    "en": "Mgonjwa amepewa dawa za malaria na ameshauriwa kurudi kliniki baada ya wiki moja.",
    **dict.fromkeys(
        ["de", "es", "fr", "vi", "sw", "lg", "rw", "luo"],
        "She was given antimalarials and advised to return to the clinic in one week.",
    ),
}


def _language_at(segment: Segment, start: int, end: int) -> str:
    """The language of the stretch holding most of ``[start, end)``."""
    if not segment.stretches:
        return segment.lang
    return max(segment.stretches, key=lambda s: min(end, s.end) - max(start, s.start)).lang


@pytest.mark.parametrize("lang", sorted(SENTENCES))
def test_each_language_is_found_inside_a_record_of_another(lang: str) -> None:
    other = OTHER[lang]
    text = f"{other}\n{SENTENCES[lang]}\n{other}"
    segment = mixed_segment(text)
    start = len(other) + 1
    assert segment.lang != lang  # the record's language is the other one
    assert _language_at(segment, start, start + len(SENTENCES[lang])) == lang
    assert _language_at(segment, 0, len(other)) == segment.lang


@pytest.mark.parametrize("record", RECORDS, ids=[r["id"] for r in RECORDS])
def test_every_sentence_of_the_mixed_records_gets_its_language(record: dict) -> None:
    text = record["join"].join(s for _, s in record["sentences"])
    segment = mixed_segment(text)
    position = 0
    wrong = []
    for k, (lang, sentence) in enumerate(record["sentences"]):
        start = text.index(sentence, position)
        position = start + len(sentence)
        # A sentence of fewer letters than a piece needs continues the one before it.
        long_enough = mixed.count_letters(sentence) >= mixed.PIECE_LETTERS
        if long_enough and _language_at(segment, start, position) != lang:
            wrong.append(k)
    assert wrong == []


def test_pieces_cover_the_text_and_keep_titles_with_names() -> None:
    text = "Plan:\nreview.\nSeen by Dr. Kamau today. Ok.\n\nThe child is well."
    bounds = pieces(text)
    assert [text[s:e] for s, e in bounds] == [
        "Plan:\n",
        "review.\n",
        "Seen by Dr. Kamau today. ",
        "Ok.\n\n",
        "The child is well.",
    ]
    assert pieces("") == [] and pieces("short") == [(0, 5)]


def test_short_pieces_continue_the_one_before() -> None:
    text = f"{SENTENCES['sw']}\nBP 120/80. Ok.\n{SENTENCES['en']}\nNo cough."
    found = language_stretches(text, "sw")
    segment = Segment(text, "sw", stretches=found)
    bp = text.index("BP")
    assert _language_at(segment, bp, bp + 14) == "sw"
    assert _language_at(segment, len(text) - 9, len(text)) == "en"


def test_one_language_record_has_no_stretches_and_never_loads_lingua(monkeypatch) -> None:
    def refuse():
        raise AssertionError("lingua loaded for a record in one language")

    monkeypatch.setattr(mixed, "_lingua", refuse)
    text = " ".join([SENTENCES["en"], OTHER["de"], "No cough. Lives alone. BP 120/80."])
    segment = mixed_segment(text)
    assert segment.lang == "en" and segment.stretches == ()
    assert language_stretches(SENTENCES["sw"] + " " + OTHER["en"], "sw") == ()


def test_a_doubtful_piece_asks_lingua_and_stays_without_its_confidence(monkeypatch) -> None:
    # A short English line in a Kiswahili record: our identifier leans to English without
    # the confidence to leave the record's language, so lingua is asked; the record's language
    # stays unless the two together are confident.
    asked: list[int] = []

    def undecided(piece: str) -> dict[str, float]:
        asked.append(len(piece))
        return {"en": 0.5, "sw": 0.5}

    def sure(piece: str) -> dict[str, float]:
        asked.append(len(piece))
        return {"en": 0.999, "sw": 0.001}

    text = f"{SENTENCES['sw']}\nLives alone in Kibera.\n{SENTENCES['sw']}"
    start = text.index("Lives")
    monkeypatch.setattr(mixed, "_lingua_probabilities", undecided)
    stays = language_stretches(text, "sw")
    assert asked and stays == ()
    monkeypatch.setattr(mixed, "_lingua_probabilities", sure)
    moves = Segment(text, "sw", stretches=language_stretches(text, "sw"))
    assert _language_at(moves, start, start + 22) == "en"


def test_lingua_knows_the_packs_languages_it_has() -> None:
    probabilities = mixed._lingua_probabilities(SENTENCES["lg"])
    assert max(probabilities, key=probabilities.__getitem__) == "lg"
    assert {"en", "sw", "lg", "de", "es", "fr", "vi"} <= probabilities.keys()
    assert not {"luo", "rw", "am"} & probabilities.keys()


def test_auto_fails_closed_and_a_named_language_is_taken_whole() -> None:
    with pytest.raises(RecordError) as info:
        mixed_segment("Sarah 12/03/2024", location="note.txt")
    assert "Sarah" not in str(info.value)
    text = f"{SENTENCES['en']}\n{SENTENCES['sw']}"
    assert mixed_segment(text, "sw").stretches == ()
    assert {s.lang for s in mixed_segment(text, "auto").stretches} == {"en", "sw"}


# -- the segment and the pipeline -----------------------------------------------------------


def test_stretches_must_cover_the_text_in_order() -> None:
    Segment("abcdef", "en", stretches=(Stretch(0, 2, "en"), Stretch(2, 6, "sw")))
    for bad in [
        (Stretch(0, 2, "en"),),
        (Stretch(0, 3, "en"), Stretch(2, 6, "sw")),
        (Stretch(1, 6, "en"),),
        (Stretch(0, 0, "en"), Stretch(0, 6, "sw")),
    ]:
        with pytest.raises(ValueError):
            Segment("abcdef", "en", stretches=bad)


class _Recorder:
    """A detector of one language that marks its whole input and records what it saw."""

    labels = frozenset({Category.PERSON})

    def __init__(self, lang: str) -> None:
        self.id = f"fake.{lang}"
        self.languages = frozenset({lang})
        self.seen: list[tuple[str, str]] = []

    def detect(self, segment: Segment) -> list[Span]:
        self.seen.append((segment.lang, segment.text))
        return [Span(0, len(segment.text), Category.PERSON, self.id)]


def test_pipeline_reads_each_language_run_with_its_own_detectors() -> None:
    text = "aaaa bbbb cccc"
    segment = Segment(
        text,
        "sw",
        stretches=(Stretch(0, 5, "en"), Stretch(5, 10, "sw"), Stretch(10, 14, "sw")),
    )
    assert [(o, s.lang, s.text) for o, s in language_parts(segment)] == [
        (0, "en", "aaaa "),
        (5, "sw", "bbbb cccc"),
    ]
    en, sw = _Recorder("en"), _Recorder("sw")
    spans = Pipeline([en, sw], segment_steps=False).candidates(segment)
    assert en.seen == [("en", "aaaa ")] and sw.seen == [("sw", "bbbb cccc")]
    assert sorted((s.start, s.end, s.source) for s in spans) == [
        (0, 5, "fake.en"),
        (5, 14, "fake.sw"),
    ]


class _Batcher(_Recorder):
    """A detector of every language that reads parts in batches, like the tagger."""

    def __init__(self) -> None:
        super().__init__("any")
        self.languages = frozenset({"en", "sw"})
        self.batches: list[int] = []

    def detect_many(self, segments: list[Segment]) -> list[list[Span]]:
        self.batches.append(len(segments))
        return [self.detect(s) for s in segments]


def test_a_batching_detector_reads_all_its_parts_at_once() -> None:
    segment = Segment(
        "aaaa bbbb cccc",
        "en",
        stretches=(Stretch(0, 5, "en"), Stretch(5, 10, "sw"), Stretch(10, 14, "en")),
    )
    batcher = _Batcher()
    spans = Pipeline([batcher], segment_steps=False).candidates(segment)
    assert batcher.batches == [3]
    assert [(s.start, s.end) for s in spans] == [(0, 5), (5, 10), (10, 14)]


def test_a_part_in_a_language_no_detector_reads_fails_closed() -> None:
    segment = Segment("aaaa bbbb", "en", stretches=(Stretch(0, 5, "en"), Stretch(5, 9, "de")))
    with pytest.raises(UnknownLanguageError):
        Pipeline([_Recorder("en")]).detect(segment)


# -- end to end with the rule layer (the tagger's tests: tests/test_mixed_language.py) ----


def test_fixed_format_identifiers_leave_every_mixed_record() -> None:
    deid = Deidentifier(profile="rules")
    for record in RECORDS:
        text = record["join"].join(s for _, s in record["sentences"])
        spans = deid.detect(text, lang="auto")
        for value in record["identifiers"]:
            if any(c.isdigit() for c in value) or "@" in value:
                start = text.index(value)
                # found whole: one span covers it (not three pieces with the area code left)
                assert any(s.start <= start and start + len(value) <= s.end for s in spans), record[
                    "id"
                ]


#: An English record with one Kiswahili sentence holding a date in Kiswahili words.
EN_WITH_SW_DATE = (
    "The patient was seen in the outpatient clinic today with fever and cough.\n"
    "Mgonjwa atarudi kliniki tarehe 5 Machi 2025 kwa uchunguzi zaidi.\n"
    "She was given paracetamol and advised to drink plenty of fluids."
)


def test_a_part_is_read_with_its_own_languages_rules() -> None:
    deid = Deidentifier(profile="rules")
    date = EN_WITH_SW_DATE.index("5 Machi")
    whole = deid.detect(EN_WITH_SW_DATE, lang="en")
    parts = deid.detect(EN_WITH_SW_DATE, lang="auto")
    assert not any(s.start <= date < s.end for s in whole)
    assert any(s.start <= date < s.end and s.label is Category.DATE for s in parts)


#: Fixed-format identifiers of one country or none, in records of another language (invented
#: values with valid check digits).
FOREIGN_FORMATS = [
    ("es-dni", "sw", "Mgonjwa ni raia wa Hispania, DNI 12345678Z, na anaishi hapa.", "12345678Z"),
    (
        "de-iban",
        "vi",
        "Bệnh nhân người Đức, IBAN DE89 3704 0044 0532 0130 00, đang điều trị.",
        "DE89 3704 0044 0532 0130 00",
    ),
    (
        "fr-nir",
        "lg",
        "Omulwadde ye Omufaransa, NIR 1 84 12 76 451 089 46, era alina omusujja.",
        "1 84 12 76 451 089 46",
    ),
    (
        "ug-nin",
        "de",
        "Der Patient aus Uganda hat die NIN CM12345678ABCD angegeben.",
        "CM12345678ABCD",
    ),
    (
        "email",
        "sw",
        "Mgonjwa ameandika kwa nakato.sarah@example.com leo.",
        "nakato.sarah@example.com",
    ),
    (
        "url",
        "fr",
        "Le patient réserve sur https://clinic.example.org/booking demain.",
        "https://clinic.example.org/booking",
    ),
]


@pytest.mark.parametrize(
    "lang,text,value", [c[1:] for c in FOREIGN_FORMATS], ids=[c[0] for c in FOREIGN_FORMATS]
)
def test_fixed_formats_are_found_whole_whatever_the_language(
    lang: str, text: str, value: str
) -> None:
    spans = Deidentifier(profile="rules").detect(text, lang=lang)
    start = text.index(value)
    assert any(s.start == start and s.end == start + len(value) for s in spans)
