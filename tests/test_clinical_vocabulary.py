"""Clinical vocabulary end to end (issue 33, part 3): eponymous devices, signs, tests and
scales, Latin anatomy, organisms, drugs and common words leave ``Deidentifier()`` (the default
profile, tagger included) as written, and the real name beside them does not. Without the
rules ``facts.eponym_terms.v1`` and ``facts.latin_terms.v1`` and the pass
``names.common_word`` the shipped tagger redacts "aline", "ALINE", "FOLEY", "murphy",
"Karnofsky", "Braden", "Babinski", "Lasègue", "Romberg", "Trendelenburg-Lagerung" and
"Valsalva-Manöver" here."""

from __future__ import annotations

from functools import cache

import pytest

from polydeid import Deidentifier

pytestmark = pytest.mark.torch


@cache
def deidentifier() -> Deidentifier:
    return Deidentifier()


CASES = [
    (
        "en",
        "pt on neo and levo, aline in place, peep 8, afebrile overnight. "
        "NEURO: ALERT, BABINSKI NEG. ALINE DAMPENED. FOLEY DRAINING. "
        "foley d/c'd, swan pulled. murphy's sign neg. Karnofsky 80%, Braden 12, Glasgow 15. "
        "Urine grew E. coli. Started Olanzapine. Seen by Dr Marcus Pellington.",
        [
            "neo",
            "aline",
            "peep",
            "afebrile",
            "BABINSKI NEG",
            "ALINE",
            "FOLEY",
            "foley",
            "swan",
            "murphy's sign",
            "Karnofsky 80%",
            "Braden 12",
            "Glasgow 15",
            "E. coli",
            "Olanzapine",
        ],
        "Pellington",
    ),
    (
        "de",
        "Patientin: Jutta Kowalczyk. Leber und Kniegelenk unauffällig, Fieber seit gestern, "
        "Salbe lokal. Babinski negativ, Lasègue negativ, Romberg unsicher, Zeichen nach "
        "Lasègue. Trendelenburg-Lagerung, Valsalva-Manöver. Verschluss der A. brachialis, "
        "Läsion des N. suralis, V. cava frei, M. deltoideus atroph. In der Blutkultur S. aureus.",
        [
            "Leber",
            "Kniegelenk",
            "Fieber",
            "Salbe",
            "Babinski negativ",
            "Lasègue negativ",
            "Romberg unsicher",
            "Zeichen nach Lasègue",
            "Trendelenburg-Lagerung",
            "Valsalva-Manöver",
            "A. brachialis",
            "N. suralis",
            "V. cava",
            "M. deltoideus",
            "S. aureus",
        ],
        "Kowalczyk",
    ),
    (
        "de",
        "Babinski negativ, Lasègue negativ, Romberg unsicher. Zeichen nach Lasègue rechts "
        "positiv.\nGlasgow 15, Trendelenburg-Lagerung, Valsalva-Manöver, Swan-Ganz-Katheter, "
        "Foley-Katheter.\nEhemann Horst Brandmeier informiert.",
        [
            "Babinski negativ",
            "Lasègue negativ",
            "Romberg unsicher",
            "Zeichen nach Lasègue",
            "Glasgow 15",
            "Trendelenburg-Lagerung",
            "Valsalva-Manöver",
            "Swan-Ganz-Katheter",
            "Foley-Katheter",
        ],
        "Brandmeier",
    ),
    (
        "es",
        "Paciente: Lucía Ferrandis Oltra. Signo de Babinski negativo, sonda Foley, escala de "
        "Glasgow 15, maniobra de Valsalva. Hemocultivo con K. pneumoniae.",
        [
            "Signo de Babinski",
            "sonda Foley",
            "escala de Glasgow",
            "maniobra de Valsalva",
            "K. pneumoniae",
        ],
        "Ferrandis",
    ),
    (
        "fr",
        "Patiente : Odile Marchetti. Signe de Lasègue, sonde de Foley, score de Glasgow à 15, "
        "manœuvre de Valsalva. Infection à P. aeruginosa.",
        [
            "Signe de Lasègue",
            "sonde de Foley",
            "score de Glasgow",
            "manœuvre de Valsalva",
            "P. aeruginosa",
        ],
        "Marchetti",
    ),
    (
        "vi",
        "Bệnh nhân Nguyễn Thị Lan. Dấu hiệu Babinski âm tính, thang điểm Glasgow 15 điểm. "
        "Cấy máu mọc E. coli.",
        ["Dấu hiệu Babinski", "thang điểm Glasgow", "E. coli"],
        "Nguyễn Thị Lan",
    ),
    (
        "sw",
        "Mgonjwa Amina Wanjiru. Katheta ya Foley imewekwa; kipimo cha Glasgow ni 15. "
        "Kipimo kilionyesha M. tuberculosis.",
        ["Katheta ya Foley", "kipimo cha Glasgow", "M. tuberculosis"],
        "Wanjiru",
    ),
    (
        "lg",
        "Omulwadde Nakato Namubiru. Foley catheter eteekeddwamu, Apgar 9. "
        "Ekipimo kyalaga M. tuberculosis.",
        ["Foley catheter", "Apgar 9", "M. tuberculosis"],
        "Namubiru",
    ),
]


@pytest.mark.parametrize(
    ("lang", "text", "vocabulary", "name"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)]
)
def test_clinical_vocabulary_stays_and_the_name_goes(
    lang: str, text: str, vocabulary: list[str], name: str
) -> None:
    out = deidentifier().redact(text, lang=lang)
    assert [w for w in vocabulary if w not in out] == []
    assert name not in out
