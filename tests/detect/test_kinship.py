"""Kinship and role words are not names (pass ``names.kinship``, polydeid.detect.kinship):
each listed form is dropped from the names a detector found, each real name is kept, in every
language the issue lists; end to end through ``Deidentifier()`` with the tagger."""

from __future__ import annotations

import pytest

from polydeid import Deidentifier
from polydeid.core.segments import Segment
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category
from polydeid.detect.kinship import drop_kinship_mentions, is_kinship_mention
from polydeid.detect.pipeline import Pipeline
from polydeid.testing import FakeDetector


def _lang_only(value: object) -> str:
    """A test id that shows a case's language and never its text (names stay out of ids)."""
    return value if isinstance(value, str) and len(value) <= 3 else "case"


#: (language, text, the name span a detector marks in it): a kinship or role mention, a
#: salutation or a form of address with no name after it.
MENTIONS = [
    ("en", "Pt's daughter called the ward.", "Pt's daughter"),
    ("en", "Son at bedside, wife updated by phone.", "Son"),
    ("en", "Son at bedside, wife updated by phone.", "wife"),
    ("en", "Discussed the plan with family today.", "family"),
    ("en", "Spoke with the patient about discharge.", "the patient"),
    ("en", "PT RESTING, HUSBAND AT BEDSIDE.", "HUSBAND"),
    ("en", "pt tolerating feeds.", "pt"),
    ("en", "Dear colleague, thank you for the referral.", "Dear colleague"),
    ("en", "Her mother and grandmother have diabetes.", "Her mother"),
    ("de", "Sehr geehrte Frau Kollegin, wir berichten.", "Sehr geehrte Frau Kollegin"),
    ("de", "Sehr geehrte Frau Kollegin, wir berichten.", "Frau Kollegin"),
    ("de", "Sehr geehrte Frau Kollegin, wir berichten.", "Kollegin"),
    ("de", "Sehr geehrter Herr Kollege, vielen Dank.", "Herr Kollege"),
    ("de", "Liebe Kolleginnen und Kollegen, anbei der Bericht.", "Liebe Kolleginnen und Kollegen"),
    ("de", "Die Mutter begleitet die Patientin.", "Die Mutter"),
    ("de", "Die Großmutter ist an Diabetes erkrankt.", "Großmutter"),
    ("de", "Die Eltern sind informiert.", "Eltern"),
    ("de", "Die Patientin klagt über Schmerzen.", "Die Patientin"),
    ("es", "Acude acompañada de su madre.", "su madre"),
    ("es", "La familia refiere fiebre.", "familia"),
    ("es", "El hijo mayor está sano.", "hijo mayor"),
    ("es", "Antecedentes: tío materno con diabetes.", "tío materno"),
    ("es", "Estimado colega: le remitimos a la paciente.", "Estimado colega"),
    ("es", "Mamá refiere vómitos.", "Mamá"),
    ("fr", "Cher confrère, je vous adresse cette patiente.", "Cher confrère"),
    ("fr", "Sa mère et son mari sont présents.", "Sa mère"),
    ("fr", "Sa mère et son mari sont présents.", "son mari"),
    ("fr", "La famille a été informée.", "La famille"),
    ("fr", "Le patient vit avec l'épouse de son fils.", "l'épouse"),
    ("vi", "Bệnh nhân đi cùng mẹ và vợ.", "mẹ"),
    ("vi", "Bệnh nhân đi cùng mẹ và vợ.", "Bệnh nhân"),
    ("vi", "Gia đình đã được thông báo.", "Gia đình"),
    ("vi", "Kính gửi đồng nghiệp, xin giới thiệu bệnh nhân.", "Kính gửi đồng nghiệp"),
    ("vi", "Anh trai bệnh nhân hiến máu.", "Anh trai"),
    ("sw", "Mheshimiwa, tunakuletea mgonjwa huyu.", "Mheshimiwa"),
    ("sw", "Mgonjwa amekuja na mama yake.", "mama yake"),
    ("sw", "Mzazi alisema mtoto ana homa.", "Mzazi"),
    ("sw", "Familia imejulishwa.", "Familia"),
    ("sw", "Mama alisema mtoto hanyonyi.", "Mama"),
    ("lg", "Maama w'omulwadde yamuleese.", "Maama w'omulwadde"),
    ("lg", "Maama w'omulwadde yamuleese.", "Maama"),
    ("lg", "Taata we ali wano.", "Taata we"),
    ("lg", "Nnyabo, omulwadde ono alina omusujja.", "Nnyabo"),
    ("lg", "Jjajja we alina sukaali.", "Jjajja"),
    ("rw", "Nyina w'umurwayi yamuzanye.", "Nyina"),
    ("rw", "Nyakubahwa, turabagezaho umurwayi.", "Nyakubahwa"),
    ("luo", "Min nyathi nowacho ni nyathi tuo.", "Min nyathi"),
    ("pt", "A mãe do paciente acompanha.", "A mãe"),
    ("pt", "Prezado colega, encaminho a paciente.", "Prezado colega"),
    ("it", "Gentile collega, le invio il paziente.", "Gentile collega"),
    ("it", "La moglie riferisce febbre.", "La moglie"),
    ("nl", "Geachte collega, hierbij de brief.", "Geachte collega"),
    ("nl", "De moeder van de patiënt is aanwezig.", "De moeder"),
]

#: (language, text, name span): a real name, alone or with a kinship word or title; it stays.
NAMES = [
    ("en", "Spoke to the patient's wife Mary Ellison.", "wife Mary Ellison"),
    ("en", "Spoke to the patient's wife Mary Ellison.", "Mary Ellison"),
    ("en", "Seen by Mr Son in clinic.", "Mr Son"),
    ("en", "Dear Dr Carter, thank you.", "Dear Dr Carter"),
    ("de", "Wir berichten über Frau Müller.", "Frau Müller"),
    ("de", "Herr Vater wurde informiert.", "Herr Vater"),
    ("de", "Die Mutter, Anna Weber, ist informiert.", "Anna Weber"),
    ("es", "Acude con su madre Teresa Ruiz.", "madre Teresa Ruiz"),
    ("es", "Antecedentes: tío materno de 37 años.", "tío materno de 37 años"),
    ("es", "Paciente: Ana Ruiz Gómez.", "Ana Ruiz Gómez"),
    ("fr", "Cher confrère, je vous adresse Mme Dupont.", "Mme Dupont"),
    ("vi", "Chị Anh đưa bệnh nhân đến.", "Anh"),
    ("vi", "Bệnh nhân Nguyễn Văn An nhập viện.", "Nguyễn Văn An"),
    ("sw", "Mama Amina ni mzazi wake.", "Mama Amina"),
    ("sw", "Mama Amina ni mzazi wake.", "Amina"),
    ("lg", "Maama Nakato yamuleese.", "Maama Nakato"),
    ("nl", "Dokter De Neef is op de hoogte.", "De Neef"),
]


def _spans(text: str, marked: str, label: Category = Category.PERSON_THIRD_PARTY) -> list[Span]:
    start = text.index(marked)
    return [Span(start, start + len(marked), label, "tagger.fake", 0.9)]


@pytest.mark.parametrize(("lang", "text", "marked"), MENTIONS)
def test_a_name_made_only_of_kinship_or_role_words_is_dropped(
    lang: str, text: str, marked: str
) -> None:
    assert is_kinship_mention(marked, lang)
    for label in (Category.PERSON, Category.PERSON_THIRD_PARTY, Category.PERSON_CLAN):
        spans = _spans(text, marked, label)
        assert drop_kinship_mentions(text, spans, lang) == ()
        assert Pipeline([FakeDetector(spans)]).detect(Segment(text, lang=lang)) == ()


@pytest.mark.parametrize(("lang", "text", "marked"), NAMES, ids=_lang_only)
def test_a_real_name_stays_a_name(lang: str, text: str, marked: str) -> None:
    assert not is_kinship_mention(marked, lang)
    spans = _spans(text, marked)
    assert drop_kinship_mentions(text, spans, lang) == tuple(spans)
    found = Pipeline([FakeDetector(spans)]).detect(Segment(text, lang=lang))
    assert [text[s.start : s.end] for s in found] == [marked]


def test_only_names_are_read() -> None:
    text = "Mgonjwa amelazwa wodi ya mama na mtoto."
    place = _spans(text, "wodi ya mama na mtoto", Category.LOCATION_FACILITY)
    assert drop_kinship_mentions(text, place, "sw") == tuple(place)
    job = _spans("Trabaja como madre de día.", "madre de día", Category.PROFESSION)
    assert drop_kinship_mentions("Trabaja como madre de día.", job, "es") == tuple(job)


def test_the_words_of_another_language_do_not_count() -> None:
    # "Mutter" is German: in a Spanish segment it is not a kinship word (English words are)
    assert not is_kinship_mention("Mutter", "es")
    assert is_kinship_mention("Mutter", "de") and is_kinship_mention("mother", "es")


def test_switched_off_the_pass_leaves_the_mention() -> None:
    text = "Sehr geehrter Herr Kollege, vielen Dank."
    spans = _spans(text, "Kollege")
    segment = Segment(text, lang="de")
    assert Pipeline([FakeDetector(spans)]).detect(segment) == ()
    kept = Pipeline([FakeDetector(spans)], disabled_passes={"names.kinship"}).detect(segment)
    assert [text[s.start : s.end] for s in kept] == ["Kollege"]
    deid = Deidentifier(detectors=[FakeDetector(spans)])
    assert deid.redact(text, lang="de") == text


def test_the_mention_is_not_carried_to_the_words_elsewhere() -> None:
    # names.carry runs after: a dropped mention is not a name to carry to "Mutter" later
    text = "Mutter anwesend. Die Mutter berichtet."
    spans = _spans(text, "Mutter")
    assert Pipeline([FakeDetector(spans)]).detect(Segment(text, lang="de")) == ()


#: (language, text, a name label's value, its role): a name whatever its words.
LABELLED = [
    ("en", "Patient name: Nana", "Nana", Category.PERSON),
    ("en", "Mother's name: Nana", "Nana", Category.PERSON_THIRD_PARTY),
    ("en", "Patient name: Son", "Son", Category.PERSON),
    ("de", "Vorname: Oma", "Oma", Category.PERSON),
    ("de", "Name der Mutter: Oma", "Oma", Category.PERSON_THIRD_PARTY),
    ("es", "Nombre: Papa", "Papa", Category.PERSON),
    ("es", "Nombre de la madre: Abuela", "Abuela", Category.PERSON_THIRD_PARTY),
    ("fr", "Prénom : Maman", "Maman", Category.PERSON),
    ("fr", "Nom de la mère : Mamie", "Mamie", Category.PERSON_THIRD_PARTY),
    ("sw", "Jina: Kaka", "Kaka", Category.PERSON),
    ("vi", "Họ tên: Con", "Con", Category.PERSON),
]


@pytest.fixture(scope="module")
def rules() -> Deidentifier:
    return Deidentifier(profile="rules")


@pytest.mark.parametrize(("lang", "text", "value", "role"), LABELLED, ids=range(len(LABELLED)))
def test_a_name_labels_value_is_a_name_whatever_its_words(
    rules: Deidentifier, lang: str, text: str, value: str, role: Category
) -> None:
    assert is_kinship_mention(value, lang)
    found = rules.detect(text, lang=lang)
    assert [(text[s.start : s.end], s.label) for s in found] == [(value, role)]
    spans = _spans(text, value)
    assert drop_kinship_mentions(text, spans, lang) == tuple(spans)


#: (language, text, a kinship mention a model marks after a label that names no one).
NOT_NAME_LABELS = [
    ("en", "Accompanied by: wife", "wife"),
    ("de", "Begleitung: Mutter", "Mutter"),
    ("es", "Acompañante: madre", "madre"),
    ("fr", "Accompagnant : sa mère", "sa mère"),
    ("sw", "Mlezi: mama yake", "mama yake"),
]


@pytest.mark.parametrize(
    ("lang", "text", "marked"), NOT_NAME_LABELS, ids=range(len(NOT_NAME_LABELS))
)
def test_a_mention_after_another_label_is_still_dropped(lang: str, text: str, marked: str) -> None:
    spans = _spans(text, marked)
    assert drop_kinship_mentions(text, spans, lang) == ()
    assert Pipeline([FakeDetector(spans)]).detect(Segment(text, lang=lang)) == ()


#: End to end with the shipped tagger: (language, text, words that stay, names redacted).
RECORDS = [
    (
        "en",
        "Pt's daughter called. Son and wife at bedside; family updated. Dear colleague, "
        "thank you for seeing Mr John Carter.",
        ["daughter", "Son", "wife", "family", "Dear colleague"],
        ["John Carter"],
    ),
    (
        "de",
        "Sehr geehrte Frau Kollegin, sehr geehrter Herr Kollege, wir berichten über Frau "
        "Müller. Die Mutter und die Großmutter begleiten sie, die Eltern sind informiert.",
        ["Frau Kollegin", "Herr Kollege", "Mutter", "Großmutter", "Eltern"],
        ["Müller"],
    ),
    (
        "es",
        "Estimado colega: acude Ana Ruiz Gómez acompañada de su madre. La familia refiere "
        "que el hijo está sano.",
        ["Estimado colega", "madre", "familia", "hijo"],
        ["Ana Ruiz Gómez"],
    ),
    (
        "fr",
        "Cher confrère, je vous adresse Mme Claire Dupont. Sa mère et son mari sont présents.",
        ["Cher confrère", "mère", "mari"],
        ["Claire Dupont"],
    ),
    (
        "vi",
        "Kính gửi đồng nghiệp, bệnh nhân Nguyễn Văn An nhập viện cùng mẹ và vợ. Gia đình đã "
        "được thông báo.",
        ["đồng nghiệp", "mẹ", "vợ", "Gia đình"],
        ["Nguyễn Văn An"],
    ),
    (
        "sw",
        "Mheshimiwa, mgonjwa Juma Hamisi amekuja na mama yake. Mama Amina ni mzazi wake.",
        ["Mheshimiwa", "mama yake", "mzazi"],
        ["Juma Hamisi", "Amina"],
    ),
    (
        "lg",
        "Maama w'omulwadde yamuleese. Omulwadde Nakato Sarah alina omusujja; taata we ali wano.",
        ["Maama", "taata"],
        ["Nakato Sarah"],
    ),
]


@pytest.fixture(scope="module")
def deid() -> Deidentifier:
    return Deidentifier()


@pytest.mark.torch
@pytest.mark.parametrize(("lang", "text", "kept", "redacted"), RECORDS, ids=[r[0] for r in RECORDS])
def test_end_to_end_kinship_words_stay_and_names_go(
    deid: Deidentifier, lang: str, text: str, kept: list[str], redacted: list[str]
) -> None:
    out = deid.redact(text, lang=lang)
    for words in kept:
        assert words in out, (lang, words)
    for name in redacted:
        assert name not in out, lang
