"""Dates as clinicians write them: day and month without a year, years alone, apostrophe
years, in every language of the issue; and the numbers that only look like them."""

from __future__ import annotations

import pytest

from polydeid.core.segments import Segment
from polydeid.dates import Granularity, date_granularity
from polydeid.detect.rules.dates import DateRule, find_dates


def found(text: str, lang: str, countries: tuple[str, ...] = ()) -> list[str]:
    return [text[s.start : s.end] for s in find_dates(text, lang, countries)]


# (language, sentence, the date texts expected, their granularity)
PARTIAL: list[tuple[str, str, list[str], Granularity]] = [
    # English: month/day and day/month, years, apostrophe years
    ("en", "Pt seen 9/7 in clinic.", ["9/7"], Granularity.DAY_MONTH),
    ("en", "F/U 7/28 with cardiology.", ["7/28"], Granularity.DAY_MONTH),
    ("en", "Worse since 10/3, no fever.", ["10/3"], Granularity.DAY_MONTH),
    ("en", "PMH: MI 1992, HTN.", ["1992"], Granularity.YEAR),
    ("en", "s/p CABG '95, stable.", ["'95"], Granularity.YEAR),
    ("en", "Diagnosed with DM in 2004.", ["2004"], Granularity.YEAR),
    ("en", "On insulin from 2004-2006 only.", ["2004", "2006"], Granularity.YEAR),
    ("en", "Away from 9/7 to 9/10, back now.", ["9/7", "9/10"], Granularity.DAY_MONTH),
    # German: D.M. (already found) and years
    ("de", "Kontrolle am 19.3. geplant.", ["19.3."], Granularity.DAY_MONTH),
    ("de", "Patient, Jahrgang 1967, stellt sich vor.", ["1967"], Granularity.YEAR),
    ("de", "Diabetes seit 2004 bekannt.", ["2004"], Granularity.YEAR),
    ("de", "Z.n. Appendektomie 1995, sonst leer.", ["1995"], Granularity.YEAR),
    ("de", "Wiedervorstellung am 9/7 erbeten.", ["9/7"], Granularity.DAY_MONTH),
    # Spanish
    ("es", "Control el 25/7 en consulta.", ["25/7"], Granularity.DAY_MONTH),
    ("es", "Hipertenso desde 2010, sin alergias.", ["2010"], Granularity.YEAR),
    ("es", "En el año 2009 es derivado a consulta.", ["año 2009"], Granularity.YEAR),
    (
        "es",
        "Valorado en septiembre del año 2000.",
        ["septiembre del año 2000"],
        Granularity.MONTH_YEAR,
    ),
    ("es", "Poliposis en 1993 y 1994.", ["1993", "1994"], Granularity.YEAR),
    # French
    ("fr", "Revu le 12/3 en consultation.", ["12/3"], Granularity.DAY_MONTH),
    ("fr", "Diabétique depuis 2010.", ["2010"], Granularity.YEAR),
    ("fr", "Née en 1967 à domicile.", ["1967"], Granularity.YEAR),
    # Vietnamese: both ends of a range, hyphenated day-month
    ("vi", "Bệnh nhân sốt ngày 25/7.", ["25/7"], Granularity.DAY_MONTH),
    ("vi", "Ho từ hôm 4/3.", ["4/3"], Granularity.DAY_MONTH),
    ("vi", "Cách ly từ 24-7 đến 31-7 tại nhà.", ["24-7", "31-7"], Granularity.DAY_MONTH),
    ("vi", "Sáng 25/7 bệnh nhân nhập viện.", ["25/7"], Granularity.DAY_MONTH),
    ("vi", "Đi làm các ngày 24/7, 25/7 và 26/7.", ["24/7", "25/7", "26/7"], Granularity.DAY_MONTH),
    ("vi", "Đi chợ ngày 24/7, 25/7, 26/7.", ["24/7", "25/7", "26/7"], Granularity.DAY_MONTH),
    ("vi", "Bệnh nhân sinh năm 1967.", ["1967"], Granularity.YEAR),
    # Kiswahili
    ("sw", "Alionekana tarehe 25/7 kliniki.", ["25/7"], Granularity.DAY_MONTH),
    ("sw", "Ana kisukari tangu 2010.", ["2010"], Granularity.YEAR),
    ("sw", "Alipasuliwa mwaka wa 2019.", ["2019"], Granularity.YEAR),
    ("sw", "Alilazwa mnamo 2015 kwa homa.", ["2015"], Granularity.YEAR),
    # Luganda
    ("lg", "Yajja nga 25/7 ku ddwaliro.", ["25/7"], Granularity.DAY_MONTH),
    ("lg", "Yalongoosebwa mu 2004.", ["2004"], Granularity.YEAR),
    ("lg", "Alina sukaali okuva 2010.", ["2010"], Granularity.YEAR),
    ("lg", "Yazaalibwa omwaka gwa 1990.", ["1990"], Granularity.YEAR),
    # other packs with year context
    ("pt", "Diabético desde 2010.", ["2010"], Granularity.YEAR),
    ("it", "Operato nel 1995.", ["1995"], Granularity.YEAR),
    ("nl", "Sinds 2010 diabeet.", ["2010"], Granularity.YEAR),
    ("rw", "Yavuye mu bitaro mu 1990.", ["1990"], Granularity.YEAR),
    ("luo", "Ne otuo e higa mar 2010 ka.", ["higa mar 2010"], Granularity.YEAR),
]


@pytest.mark.parametrize(
    ("lang", "text", "expected", "granularity"),
    PARTIAL,
    ids=[f"{lang}-{i}" for i, (lang, *_rest) in enumerate(PARTIAL)],
)
def test_partial_date_found_with_its_granularity(
    lang: str, text: str, expected: list[str], granularity: Granularity
) -> None:
    assert found(text, lang) == expected
    for written in expected:
        assert date_granularity(written, [lang, "en"]) is granularity


# Numbers that only look like dates: each must stay out of every date span.
LOOK_ALIKES: list[tuple[str, str]] = [
    ("en", "Strength 4/5 in the left arm."),
    ("en", "GCS 3/15 on arrival, on 3/15 scale."),
    ("en", "Give 1/2 tab at night; on 1/2 tab now."),
    ("en", "BP 120/80, HR 88."),
    ("en", "Mixed 3/4 and 1/3 of the dose."),
    ("en", "Shift 1900-0700 uneventful."),
    ("en", "Night 0700- report given."),
    ("en", "I/O +4701 since mn; -1074 since mn."),
    ("en", "ABG 7.37/49/247 on room air."),
    ("en", "Running version 2.10 and v 3/4."),
    ("en", "Dates 32-01-2018 and 2018-13-01 are no dates."),
    ("en", "Man in his 70s, mother in her 90s."),
    ("en", "Output 2000 ml in 2000 ml bags."),
    ("en", "Since 2000 resting; obs at 0700 and 2300 stable."),
    ("en", "Resting since 2000-0700; obs at 0700 and 2300 stable."),
    ("en", "CK 1950, LDH 2010 this morning."),
    ("en", "Weight 1992 g at birth."),
    ("en", "MRN 2004-2938-11 recorded."),
    ("en", "In 2000s and 1990s, nothing."),
    ("en", "Following the KDIGO guidelines from 2019."),
    ("de", "Kraft 4/5, GCS 14/15, RR 120/80."),
    ("de", "Bilanz +2004 ml, Dienst 1900-0700."),
    ("de", "Gabe von 2000 IE Heparin."),
    ("es", "Fuerza 4/5 en miembro; 1/2 comprimido."),
    ("es", "Glasgow 3/15 al ingreso."),
    ("es", "Dosis 2000 UI diarias."),
    ("fr", "Force 4/5, score 3/15, 1/2 cp."),
    ("fr", "Diurèse 2000 ml sur 24 h."),
    ("vi", "Huyết áp 120/80 mmHg, mạch 88."),
    ("vi", "Uống 1/2 viên mỗi tối."),
    ("vi", "Tổng 2000 ml dịch truyền."),
    ("sw", "Shinikizo 120/80, nguvu 4/5."),
    ("sw", "Alipewa shilingi 2000 jana."),
    ("lg", "Puleesa 120/80, amaanyi 4/5."),
    ("lg", "Yamuwa empeke 1/2 ku kiro."),
]


@pytest.mark.parametrize(
    ("lang", "text"), LOOK_ALIKES, ids=[f"{lang}-{i}" for i, (lang, _) in enumerate(LOOK_ALIKES)]
)
def test_look_alike_is_no_date(lang: str, text: str) -> None:
    assert found(text, lang) == []


def test_a_yearless_date_needs_context() -> None:
    assert found("Values 9/7 and 10/3 noted.", "en") == []
    assert found("Seen 9/7; strength 4/5 noted.", "en") == ["9/7"]
    assert found("Seen 9/7 and 10/3.", "en") == ["9/7", "10/3"]  # the ends of a range


def test_a_year_needs_context_but_an_apostrophe_year_does_not() -> None:
    assert found("Total 1992 counted.", "en") == []
    assert found("Stent '05, fine.", "en") == ["'05"]
    assert found("Crohn's disease; rock'95 band.", "en") == []


def test_yearless_dates_read_in_the_countrys_order() -> None:
    text = "Seen 3/4 again."
    us = DateRule().detect(Segment(text=text, lang="en", countries=("US",)))
    assert [text[s.start : s.end] for s in us] == ["3/4"]
    assert date_granularity("3/4", ["en-US"]) is Granularity.DAY_MONTH


def test_a_number_next_to_clock_times_reads_as_a_time() -> None:
    assert found("Since 2000 no pain.", "en") == ["2000"]
    assert found("Obs 0700 ok. Since 2010 no pain.", "en") == ["2010"]  # a time elsewhere
    assert found("Obs 0700 ok. Since 2000 no pain.", "en") == []  # on the hour: a time
    assert found("Since 2004, 1500 mg daily.", "en") == ["2004"]  # a dose, no clock time
    assert found("Since 2000, 0700 and 1100 calm. Since 1987 diabetic.", "en") == ["1987"]
    assert found("Awake until 2000 to 0700. PCI 2004, born in 1930.", "en") == ["2004", "1930"]
    assert found("Calm from 0700 until 2000. In 2010 MI.", "en") == ["2010"]
    assert found("Ruhig bis 2000 - 0700. Z.n. OP 2004.", "de") == ["2004"]
    assert found("Tranquilo desde 2000, 0700 y 1100.", "es") == []


def test_a_range_with_a_shared_month_keeps_both_days() -> None:
    assert found("Ở nhà từ ngày 24-31/7.", "vi") == ["24", "31/7"]
    assert found("Đi chợ ngày 20 và 21/7.", "vi") == ["20", "21/7"]
    assert date_granularity("24", ["vi"]) is Granularity.DAY


def test_a_list_needs_a_dated_head_and_goes_on() -> None:
    assert found("Seen 9/7, 3/10 pain.", "en") == ["9/7"]
    assert found("In 2004, 2005 and 2007 admitted.", "en") == ["2004", "2005", "2007"]
    assert found("Since 2004, 2000 ml daily.", "en") == ["2004"]


def test_years_inside_full_dates_are_not_repeated() -> None:
    text = "Seen 12 March 2024, since 03/2024 and in 2024-03-12."
    assert found(text, "en") == ["12 March 2024", "03/2024", "2024-03-12"]


# Birth and death words announce a yearless date and a year alone too ([context] date, birth).
ANNOUNCED_BY_DATE_WORDS: list[tuple[str, str, list[str]]] = [
    ("en", "Pt born 3/4 at home.", ["3/4"]),
    ("en", "Birthday: 3/4, no allergies.", ["3/4"]),
    ("en", "Date of birth: 12/25 per chart.", ["12/25"]),
    ("en", "DOB 1931, lives alone.", ["1931"]),
    ("en", "yob: 1931, widowed.", ["1931"]),
    ("en", "Father died 2001 of MI.", ["2001"]),
    ("en", "Pt admitted 2019 to 2020 twice.", ["2019", "2020"]),
    ("de", "Geburtsdatum 3/4 unklar.", ["3/4"]),
    ("de", "Geburtsdatum: 1931, verwitwet.", ["1931"]),
    ("es", "Nacido el 1931 en casa.", ["1931"]),
    ("fr", "Date de naissance 1931 selon la famille.", ["1931"]),
    ("vi", "Ngày sinh 1931 theo giấy tờ.", ["1931"]),
    ("sw", "Tarehe ya kuzaliwa 1931 kwa mujibu wa familia.", ["1931"]),
    ("lg", "Olunaku lw'okuzaalibwa 1931.", ["1931"]),
]


@pytest.mark.parametrize(
    ("lang", "text", "expected"),
    ANNOUNCED_BY_DATE_WORDS,
    ids=[f"{lang}-{i}" for i, (lang, *_rest) in enumerate(ANNOUNCED_BY_DATE_WORDS)],
)
def test_birth_and_death_words_announce_partial_dates(
    lang: str, text: str, expected: list[str]
) -> None:
    assert found(text, lang) == expected


# Both ends of a yearless range, academic years, an apostrophe year glued to an event.
RANGES_AND_GLUED: list[tuple[str, str, list[str]]] = [
    ("en", "Pt seen 9/7-9/12 for wound care.", ["9/7", "9/12"]),
    ("en", "Away from 9/7 – 9/12 abroad.", ["9/7", "9/12"]),
    ("en", "Hx MI'02, stable since.", ["'02"]),
    ("en", "Hx CABG’95 and HTN.", ["’95"]),
    ("en", "Flu shot given in 2004/05 season.", ["2004/05"]),
    ("de", "Wiedervorstellung am 9/7-9/12 geplant.", ["9/7", "9/12"]),
    ("es", "Control desde el 25/7-30/7 en consulta.", ["25/7", "30/7"]),
    ("es", "Vacunado en 2004/05 sin incidencias.", ["2004/05"]),
    ("fr", "Revu le 12/3-15/3 en consultation.", ["12/3", "15/3"]),
    ("fr", "Vacciné en 2004/05 sans problème.", ["2004/05"]),
    ("vi", "Sốt từ ngày 24/7-31/7 tại nhà.", ["24/7", "31/7"]),
    ("sw", "Alilazwa tarehe 25/7-30/7 kliniki.", ["25/7", "30/7"]),
    ("lg", "Yali mu ddwaliro okuva nga 25/7-30/7.", ["25/7", "30/7"]),
]


@pytest.mark.parametrize(
    ("lang", "text", "expected"),
    RANGES_AND_GLUED,
    ids=[f"{lang}-{i}" for i, (lang, *_rest) in enumerate(RANGES_AND_GLUED)],
)
def test_ranges_academic_years_and_glued_apostrophe_years(
    lang: str, text: str, expected: list[str]
) -> None:
    assert found(text, lang) == expected


def test_a_year_is_a_time_only_next_to_clock_evidence() -> None:
    assert found("Since 2010 smoking; shift 0700-1900 uneventful.", "en") == ["2010"]
    assert found("Seit 2010 Raucher; Dienst 0700-1900 ruhig.", "de") == ["2010"]
    assert found("Desde 2010 fumador; turno 0700-1900.", "es") == ["2010"]
    assert found("Since 2015 at home; obs at 0700 and 2300.", "en") == ["2015"]
    # the year itself next to clock evidence: a clock range, a time word, a list of times
    assert found("Since 2000-0700 no pain.", "en") == []
    assert found("Since 2030 h no pain, obs 0700.", "en") == []
    assert found("Seit 2030 Uhr ruhig.", "de") == []
    assert found("Obs from 0700, since 2000, and 2300 stable.", "en") == []


# Look-alikes next to the new forms: still no dates.
LOOK_ALIKES_NEAR_NEW_FORMS: list[tuple[str, str]] = [
    ("en", "Born: GCS 3/15 on arrival."),
    ("en", "DOB on file; 4/5 strength."),
    ("en", "Died 1900-0700 shift notes."),
    ("en", "Admitted; BP 120/80 at rest."),
    ("en", "Born: I/O +4701 since mn."),
    ("en", "Admitted, ABG 7.37/49/247."),
    ("en", "Shift 0700-1900, then 1900-0700."),
    ("en", "Crohn's disease; rock'95 band; pH'05."),
    ("en", "Total 2004/07 counted, in 2004/2005 ml."),
    ("en", "Give on 1/2-3/4 tab at night; seen 1/2 - 3/4 tab."),
    ("de", "Geb. GCS 3/15, Kraft 4/5, RR 120/80."),
    ("de", "Dienst 1900-0700, Bilanz +4701."),
    ("es", "Nacido: Glasgow 3/15, fuerza 4/5."),
    ("fr", "Né: score 3/15, force 4/5, TA 120/80."),
    ("vi", "Ngày sinh: huyết áp 120/80 mmHg."),
    ("sw", "Alizaliwa: shinikizo 120/80, nguvu 4/5."),
    ("lg", "Yazaalibwa: puleesa 120/80, amaanyi 4/5."),
]


@pytest.mark.parametrize(
    ("lang", "text"),
    LOOK_ALIKES_NEAR_NEW_FORMS,
    ids=[f"{lang}-{i}" for i, (lang, _) in enumerate(LOOK_ALIKES_NEAR_NEW_FORMS)],
)
def test_look_alike_near_new_forms_is_no_date(lang: str, text: str) -> None:
    assert found(text, lang) == []


# An imaging study, test, procedure or event written right before a yearless date dates it;
# culture and dose ratios after the same words stay ratios.
CLINICAL_EVENTS: list[tuple[str, list[str]]] = [
    ("Head CT 1/3 unchanged.", ["1/3"]),
    ("MRI 4/13: new infarct.", ["4/13"]),
    ("TEE 2/19 showed a vegetation.", ["2/19"]),
    ("PICC placed 2/20, tip in SVC.", ["2/20"]),
    ("Extubated 11/4 without event.", ["11/4"]),
    ("s/p R TKA 7/9, PT to see.", ["7/9"]),
    ("Pt had stroke 2015, mild weakness.", ["2015"]),
    ("Retired 2018 from the post office.", ["2018"]),
    ("BCx 2/2 bottles positive.", []),
    ("BCx 2/2 positive for GPC.", []),
    ("Repeat 1/2 NS bolus.", []),
    ("CT 1/2 tab given.", []),
]


@pytest.mark.parametrize(
    ("text", "expected"), CLINICAL_EVENTS, ids=[f"event{i}" for i in range(len(CLINICAL_EVENTS))]
)
def test_clinical_events_date_what_follows_them(text: str, expected: list[str]) -> None:
    assert found(text, "en") == expected


# Evidence found further from the date than the word right before it: a context word a few
# words back in the clause, a time of day after it, parentheses of its own; and the words
# that keep a score a score.
FURTHER_EVIDENCE: list[tuple[str, str, list[str]]] = [
    ("en", "S/P COILING OF ACOM ANEURYSM 11/17.", ["11/17"]),
    ("en", "23 yo M MVC vs tree 10/2, intubated in field.", ["10/2"]),
    ("en", "step-down unit, 3/12 1900", ["3/12"]),
    ("en", "family meeting planned for 1/6 at 1400.", ["1/6"]),
    ("en", "L4-5 laminectomy and fusion (3/18). Doing well.", ["3/18"]),
    ("en", "lithium 600 mg BID (level 0.8 on 10/27).", ["10/27"]),
    ("en", "Referrals sent 11/27 to rehab.", ["11/27"]),
    ("en", "Repeat BCx 2/17 and 2/18 no growth.", ["2/17", "2/18"]),
    ("en", "benign biopsy left breast 2016.", ["2016"]),
    ("en", "prior c-section 1989, appendectomy.", ["1989"]),
    ("en", "colonoscopy in 5 years (2029).", ["2029"]),
    ("de", "Koloskopie geplant (3/4), dann Kontrolle.", ["3/4"]),
    ("fr", "Chirurgie (3/4), puis rééducation.", ["3/4"]),
    ("es", "Operado (25/7), sin complicaciones.", ["25/7"]),
    ("vi", "Nhập viện (25/7), sốt cao.", ["25/7"]),
    ("sw", "Alipasuliwa (25/7), hali nzuri.", ["25/7"]),
    ("lg", "Yalongoosebwa (25/7), ali bulungi.", ["25/7"]),
]

SCORES_STAY: list[tuple[str, str]] = [
    ("en", "s/p fall with 4/5 strength in LUE."),
    ("en", "s/p MVR, 2/6 murmur at apex."),
    ("en", "on CPAP 10/5, FiO2 40%."),
    ("en", "motor 5/5 (4/5) in all extremities."),
    ("en", "WBC 12 (2000) yesterday."),
    ("en", "BCx 2/2 positive for GPC."),
    ("es", "El mar 2024 estaba tranquilo."),
]


@pytest.mark.parametrize(
    ("lang", "text", "expected"),
    FURTHER_EVIDENCE,
    ids=[f"{lang}-{i}" for i, (lang, _, _) in enumerate(FURTHER_EVIDENCE)],
)
def test_evidence_in_the_clause_after_the_date_or_in_brackets(
    lang: str, text: str, expected: list[str]
) -> None:
    assert found(text, lang, ("US",) if lang == "en" else ()) == expected


@pytest.mark.parametrize(
    ("lang", "text"), SCORES_STAY, ids=[f"{lang}-{i}" for i, (lang, _) in enumerate(SCORES_STAY)]
)
def test_scores_and_counts_stay_numbers(lang: str, text: str) -> None:
    assert found(text, lang, ("US",) if lang == "en" else ()) == []


def test_common_words_announce_only_right_before() -> None:
    assert found("in the ward 9/7 was busy", "en") == []
    assert found("seen 9/7", "en") == ["9/7"]


# A month written alone after a context word: found, with granularity MONTH.
MONTHS_ALONE: list[tuple[str, str, str]] = [
    ("en", "Hx DKA in Oct. Sent from clinic.", "Oct"),
    ("en", "A1c 7.8% in July, now 6.9%.", "July"),
    ("en", "HEMATURIA SINCE AUGUST.", "AUGUST"),
    ("en", "Symptoms worse since early March.", "March"),
    ("de", "Seit März keine Beschwerden.", "März"),
    ("de", "Im Oktober Schmerzen im Knie.", "Oktober"),
    ("es", "Sin dolor desde julio.", "julio"),
    ("fr", "Suivi depuis mars.", "mars"),
    ("vi", "Ho từ tháng 7, không sốt.", "tháng 7"),
    ("sw", "Hajapata homa tangu Machi.", "Machi"),
]


@pytest.mark.parametrize(
    ("lang", "text", "month"),
    MONTHS_ALONE,
    ids=[f"{lang}-{i}" for i, (lang, _, _) in enumerate(MONTHS_ALONE)],
)
def test_a_month_alone_after_a_context_word(lang: str, text: str, month: str) -> None:
    assert found(text, lang) == [month]
    assert date_granularity(month, [lang]) is Granularity.MONTH


def test_a_month_word_alone_needs_context_capitals_and_no_name_after() -> None:
    assert found("The patient may be seen.", "en") == []
    assert found("It is in may be.", "en") == []
    assert found("Letter to August Meyer.", "en") == []
    assert found("Referred in August Meyer's absence.", "en") == []
    assert found("Ende März entlassen.", "de") == ["März"]


def test_a_day_ending_a_written_date_leaves_the_full_stop() -> None:
    assert found("I will see her again on July 23.", "en") == ["July 23"]
    assert found("Good to see you on January 16th. Here.", "en") == ["January 16th"]
    assert found("Kontrolle am 23. Juli 2024.", "de") == ["23. Juli 2024"]
