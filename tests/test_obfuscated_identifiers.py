"""Identifiers written to dodge the patterns (issue 34, section 1): fullwidth and
non-ASCII digits, invisible characters, odd spaces, the letter O for zero, the letters l and
I for one, Unicode dashes and minus signs between digit groups, the fullwidth ``＠`` and
spelled-out e-mails, in several languages, through both profiles, the CLI, the service
and batch. Each case plants one identifier in text with no other identifier: the output is
the text around it byte for byte, with one tag where the identifier was, and no part of the
identifier (no digit run, no name part, no e-mail part) is left."""

from __future__ import annotations

import io
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from polydeid.api import Deidentifier
from polydeid.cli import main

ZWSP, WJ, THIN, SHY, NBSP = "\u200b", "\u2060", "\u2009", "\u00ad", "\u00a0"
FULLWIDTH = str.maketrans("0123456789", "０１２３４５６７８９")


@dataclass(frozen=True)
class Case:
    id: str
    lang: str
    before: str
    written: str
    after: str
    #: the parts of the identifier that must not survive
    parts: tuple[str, ...]

    @property
    def text(self) -> str:
        return self.before + self.written + self.after


def _digit_runs(identifier: str) -> tuple[str, ...]:
    """Every run of two digits or more of a plain identifier (its groups)."""
    return tuple(re.findall(r"[0-9]{2,}", identifier))


#: Unicode hyphens, dashes and minus signs written between digit groups.
DASHES = {
    "hyphen": "\u2010",
    "non-breaking-hyphen": "\u2011",
    "figure-dash": "\u2012",
    "en-dash": "\u2013",
    "em-dash": "\u2014",
    "minus": "\u2212",
    "small-hyphen-minus": "\ufe63",
    "fullwidth-hyphen": "\uff0d",
}


def _ones_as(number: str, letter: str) -> str:
    """``number`` with every one that follows a digit (across one space) and comes before a
    digit written as ``letter``: ``0712 123 456`` → ``07l2 l23 456``."""
    chars = list(number)
    for i, char in enumerate(number):
        before = number[i - 2] if i > 1 and number[i - 1] == " " else number[i - 1 : i]
        if char == "1" and before.isdigit() and number[i + 1 : i + 2].isdigit():
            chars[i] = letter
    written = "".join(chars)
    assert written != number
    return written


#: phone per language: (context before, the number in groups, context after)
PHONES = {
    "en": ("Call me on ", "0772 123 456", " tomorrow."),
    "de": ("Rückruf unter ", "030 1234 5678", " bitte."),
    "fr": ("Appeler le ", "06 12 34 56 78", " demain."),
    "es": ("Llamar al ", "612 345 678", " mañana."),
    "sw": ("Piga simu ", "0712 345 678", " kesho."),
}
PHONE_FORMS = {
    "fullwidth": lambda n: n.translate(FULLWIDTH),
    "zwsp": lambda n: n.replace(" ", ZWSP),
    "word-joiner": lambda n: n.replace(" ", WJ),
    "thin-space": lambda n: n.replace(" ", THIN),
    "soft-hyphen": lambda n: n.replace(" ", SHY),
    "nbsp": lambda n: n.replace(" ", NBSP),
    "letter-o": lambda n: "O" + n[1:] if n[0] == "0" else n[:4] + "O" + n[5:],
    "zwsp-in-group": lambda n: n[:2] + ZWSP + n[2:],
    "letter-l": lambda n: _ones_as(n, "l"),
    "letter-i": lambda n: _ones_as(n, "I"),
    **{f"dash-{name}": (lambda n, d=dash: n.replace(" ", d)) for name, dash in DASHES.items()},
}

#: e-mail per language: (context before, local part, domain labels, context after, at, dot)
EMAILS = {
    "en": ("Write to ", "john.kamau", ("example", "com"), " today.", "at", "dot"),
    "de": ("Schreiben Sie an ", "jana.vogt", ("beispiel", "de"), " bitte.", "at", "punkt"),
    "fr": ("Écrivez à ", "jean.roux", ("exemple", "fr"), " merci.", "arobase", "point"),
    "es": ("Escriba a ", "juan.soto", ("ejemplo", "es"), " gracias.", "arroba", "punto"),
    "sw": ("Andika kwa ", "juma.said", ("mfano", "co", "tz"), " asante.", "at", "nukta"),
}


def _email_forms(local: str, labels: tuple[str, ...], at: str, dot: str) -> dict[str, str]:
    user = local.split(".")
    return {
        "zwsp": f"{local}{ZWSP}@{'.'.join(labels)}",
        "zwsp-in-domain": f"{local}@{labels[0][:3]}{ZWSP}{labels[0][3:]}.{'.'.join(labels[1:])}",
        "fullwidth-at": f"{local}＠{'.'.join(labels)}",
        "spaced": f"{' . '.join(user)} @ {' . '.join(labels)}",
        "words": f"{f' {dot} '.join(user)} {at} {f' {dot} '.join(labels)}",
        "brackets": f"{local}[at]{'[.]'.join(labels)}",
        "parentheses": f"{local}(at){'(dot)'.join(labels)}",
    }


#: national and record numbers: (id, lang, before, written, after, plain)
IDS = [
    ("en-ssn-nbsp", "en", "SSN ", f"123{NBSP}45{NBSP}6789", " on file.", "123-45-6789"),
    ("en-ssn-zwsp", "en", "SSN ", f"123-45{ZWSP}-6789", " on file.", "123-45-6789"),
    ("en-mrn-zwsp", "en", "MRN ", f"4482{ZWSP}913", " on file.", "4482913"),
    ("en-mrn-fullwidth", "en", "MRN ", "４４８２９１３", " on file.", "4482913"),
    ("de-record-zwsp", "de", "Patientennummer ", f"4482{ZWSP}913", " notiert.", "4482913"),
    ("fr-record-zwsp", "fr", "Dossier n° ", f"4482{ZWSP}913", " noté.", "4482913"),
    ("es-record-zwsp", "es", "NHC ", f"4482{ZWSP}913", " anotado.", "4482913"),
    ("es-dni-wj", "es", "DNI ", f"1234{WJ}5678Z", " anotado.", "12345678"),
    ("sw-record-zwsp", "sw", "Namba ya faili ", f"4482{ZWSP}913", " imeandikwa.", "4482913"),
    ("en-ssn-en-dash", "en", "SSN ", "123\u201345\u20136789", " on file.", "123-45-6789"),
    ("en-ssn-minus", "en", "SSN ", "123\u221245\u22126789", " on file.", "123-45-6789"),
    ("en-ssn-hyphen", "en", "SSN ", "123\u201045\u20106789", " on file.", "123-45-6789"),
    ("en-ssn-em-dash", "en", "SSN ", "123\u201445\u20146789", " on file.", "123-45-6789"),
    ("en-ssn-small", "en", "SSN ", "123\ufe6345\ufe636789", " on file.", "123-45-6789"),
    ("en-mrn-minus", "en", "MRN ", "4482\u2212913", " on file.", "4482913"),
    ("en-mrn-figure-dash", "en", "MRN ", "4482\u2012913", " on file.", "4482913"),
    ("en-mrn-letter-i", "en", "MRN ", "44829I3", " on file.", "4482913"),
    ("de-record-en-dash", "de", "Patientennummer ", "4482\u2013913", " notiert.", "4482913"),
    ("de-record-letter-l", "de", "Patientennummer ", "44829l3", " notiert.", "4482913"),
    ("fr-record-minus", "fr", "Dossier n° ", "4482\u2212913", " noté.", "4482913"),
    ("fr-record-letter-i", "fr", "Dossier n° ", "44829I3", " noté.", "4482913"),
    ("es-record-em-dash", "es", "NHC ", "4482\u2014913", " anotado.", "4482913"),
    ("sw-record-nb-hyphen", "sw", "Namba ya faili ", "4482\u2011913", " imeandikwa.", "4482913"),
    ("sw-record-letter-l", "sw", "Namba ya faili ", "44829l3", " imeandikwa.", "4482913"),
]

#: names after a label the rule layer reads in each language: (lang, label, after)
NAME_LABELS = [
    ("en", "Patient name: ", ""),
    ("de", "Nachname: ", ""),
    ("fr", "Nom de famille : ", ""),
    ("es", "Nombre: ", ""),
    ("sw", "Jina la mgonjwa: ", ""),
]
NAME = ("Zebedee", "Quartermain")


def _name_cases() -> list[Case]:
    cases = []
    for lang, label, after in NAME_LABELS:
        written = f"Zebe{ZWSP}dee Quarter{ZWSP}main"
        cases.append(Case(f"{lang}-name-zwsp", lang, label, written, after, NAME))
        written = f"Zebe{SHY}dee{NBSP}Quarter{WJ}main"
        cases.append(Case(f"{lang}-name-mixed", lang, label, written, after, NAME))
    return cases


def cases() -> list[Case]:
    out = []
    for lang, (before, number, after) in PHONES.items():
        for form, write in PHONE_FORMS.items():
            out.append(
                Case(
                    f"{lang}-phone-{form}", lang, before, write(number), after, _digit_runs(number)
                )
            )
    for lang, (before, local, labels, after, at, dot) in EMAILS.items():
        parts = (*local.split("."), *(label for label in labels if len(label) > 2))
        for form, written in _email_forms(local, labels, at, dot).items():
            out.append(Case(f"{lang}-email-{form}", lang, before, written, after, parts))
    for case_id, lang, before, written, after, plain in IDS:
        out.append(Case(case_id, lang, before, written, after, _digit_runs(plain)))
    out.extend(_name_cases())
    return out


CASES = cases()


def assert_redacted(case: Case, output: str) -> None:
    """One tag where the identifier was, the text around it byte for byte, nothing left."""
    pattern = re.escape(case.before) + r"\[[A-Z_]+\]" + re.escape(case.after)
    assert re.fullmatch(pattern, output), "not exactly one tag over the identifier"
    for part in case.parts:
        assert part.casefold() not in output.casefold(), "a part of the identifier survived"
    for digit_run in re.findall(r"[0-9]{3,}", case.written.translate(FULLWIDTH_BACK)):
        assert digit_run not in output


FULLWIDTH_BACK = str.maketrans("０１２３４５６７８９", "0123456789")


@pytest.fixture(scope="module")
def rules() -> Deidentifier:
    return Deidentifier(profile="rules")


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_rules_profile(rules: Deidentifier, case: Case) -> None:
    assert_redacted(case, rules.redact(case.text, lang=case.lang))


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_one_span_covers_the_whole_identifier(rules: Deidentifier, case: Case) -> None:
    spans = rules.detect(case.text, lang=case.lang)
    assert [(s.start, s.end) for s in spans] == [
        (len(case.before), len(case.before) + len(case.written))
    ]


def test_prose_with_at_and_dot_is_no_email(rules: Deidentifier) -> None:
    for lang, text in [
        ("en", "Please look at the dot on the screen."),
        ("en", "Patient seen at clinic . It was fine ."),
        ("de", "Bitte schauen Sie auf den Punkt am Bildschirm."),
        ("fr", "Il regarde le point sur l'écran."),
        ("es", "Mire el punto en la pantalla."),
        ("sw", "Angalia nukta kwenye skrini."),
    ]:
        assert rules.detect(text, lang=lang) == []


def test_letter_o_stays_a_letter_in_words(rules: Deidentifier) -> None:
    text = "On 2L O2 via NC, SpO2 98%, CO2 normal; Ohio trip."
    assert rules.redact(text, lang="en") == text


@pytest.mark.parametrize(
    ("lang", "text"),
    [
        ("en", "IL-6 12 pg/ml, IgG 9 g/l, O2 2 l/min, 5 ml; I2C bus; T1l; grade II; ICD I10, I25."),
        ("en", "Il; Ill 12; type I 12; I131 seeds; 100l tank; codes I10 I25 I48 I50 1234."),
        ("sw", "IL-6 12 pg/ml, IgG 9 g/l, oksijeni 2 l/min, 5 ml; daraja II; I10, I25."),
        ("de", "Il-2 und IL-6 12 pg/ml, IgG 9 g/l, O2 2 l/min, 5 ml; Stadium II; ICD I10, I25."),
        ("fr", "Il a reçu IL-6 12 pg/ml, IgG 9 g/l, O2 2 l/min, 5 ml; stade II; CIM I10, I25."),
    ],
    ids=["en-words", "en-codes", "sw-words", "de-words", "fr-words"],
)
def test_look_alike_letters_stay_letters_in_words_units_and_codes(
    rules: Deidentifier, lang: str, text: str
) -> None:
    assert rules.redact(text, lang=lang) == text


#: Ranges the clinical-fact rule keeps as facts: (lang, text with ``{d}`` for the dash)
RANGES = [
    ("en", "BP 120{d}130 mmHg, fever for 2{d}3 days, metformin 1{d}0{d}1."),
    ("de", "RR 120{d}130 mmHg seit 2{d}3 Tagen, Metformin 1{d}0{d}1."),
    ("fr", "TA 120{d}130 mmHg depuis 2{d}3 jours, metformine 1{d}0{d}1."),
    ("sw", "BP 120{d}130 mmHg, homa kwa siku 2{d}3, vidonge 1{d}0{d}1."),
]


@pytest.mark.parametrize("dash", list(DASHES.values()), ids=list(DASHES))
@pytest.mark.parametrize(("lang", "template"), RANGES, ids=[r[0] for r in RANGES])
def test_ranges_written_with_any_dash_stay_facts(
    rules: Deidentifier, lang: str, template: str, dash: str
) -> None:
    """A range or dosing scheme written with any dash is the fact it is written with a
    hyphen (same offsets and kinds) and is left as written."""
    text, hyphen = template.format(d=dash), template.format(d="-")
    facts = rules.pipeline.facts(rules.segment(text, lang=lang))
    expected = rules.pipeline.facts(rules.segment(hyphen, lang=lang))
    assert [(f.start, f.end, f.label) for f in facts] == [
        (f.start, f.end, f.label) for f in expected
    ]
    assert len(expected) >= 2
    assert rules.redact(text, lang=lang) == text


DEFAULT_CASES = [
    c
    for c in CASES
    if c.lang in {"en", "sw"} or c.id.endswith(("-phone-zwsp", "-email-fullwidth-at", "-name-zwsp"))
]


@pytest.mark.torch
@pytest.mark.parametrize("case", DEFAULT_CASES, ids=[c.id for c in DEFAULT_CASES])
def test_default_profile(case: Case) -> None:
    output = _default().redact(case.text, lang=case.lang)
    # the tagger may also tag a context word; what matters is that nothing of the identifier
    # is left
    for part in case.parts:
        assert part.casefold() not in output.casefold(), "a part of the identifier survived"
    for digit_run in re.findall(r"[0-9]{3,}", case.written.translate(FULLWIDTH_BACK)):
        assert digit_run not in output


_DEFAULT: list[Deidentifier] = []


def _default() -> Deidentifier:
    if not _DEFAULT:
        _DEFAULT.append(Deidentifier())
    return _DEFAULT[0]


# -- the faces: CLI, service, batch -----------------------------------------------------------

FACE_CASES = [c for c in CASES if c.lang in {"en", "de", "sw"}]


def test_cli_redact_stdin(monkeypatch: pytest.MonkeyPatch, capsysbinary) -> None:
    lines = b"".join(
        json.dumps({"id": c.id, "lang": c.lang, "text": c.text}).encode() + b"\n"
        for c in FACE_CASES
    )
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(lines), encoding="utf-8"))
    assert main(["redact", "-", "--profile", "rules", "--policy", "tag"]) == 0
    out = capsysbinary.readouterr().out.decode("utf-8").splitlines()
    assert len(out) == len(FACE_CASES)
    for case, line in zip(FACE_CASES, out, strict=True):
        assert_redacted(case, json.loads(line)["text"])


def test_service_redact() -> None:
    from fastapi.testclient import TestClient

    from polydeid.serve.app import Settings, create_app

    with TestClient(create_app(Settings(profile="rules"))) as client:
        for case in FACE_CASES:
            response = client.post("/redact", json={"text": case.text, "lang": case.lang})
            assert response.status_code == 200
            assert_redacted(case, response.json()["text"])


def test_batch(tmp_path: Path) -> None:
    src, out = tmp_path / "in", tmp_path / "out"
    src.mkdir()
    lines = [json.dumps({"id": c.id, "lang": c.lang, "text": c.text}) for c in FACE_CASES]
    (src / "records.jsonl").write_text("\n".join(lines) + "\n", "utf-8")
    rc = main(
        ["batch", str(src), str(out), "--profile", "rules", "--no-progress", "--workers", "1"]
    )
    assert rc == 0
    assert (out / "quarantine.jsonl").read_text("utf-8") == ""
    lines = (out / "records.jsonl").read_text("utf-8").splitlines()
    records = {r["id"]: r for r in map(json.loads, lines)}
    for case in FACE_CASES:
        assert_redacted(case, records[case.id]["text"])


def test_a_name_written_with_invisible_characters_keeps_its_hash() -> None:
    deid = Deidentifier(profile="rules", policy="hash", key=bytes(range(32)))
    plain = deid.redact("Patient name: Zebedee Quartermain", lang="en")
    hidden = deid.redact(f"Patient name: Zebe{ZWSP}dee Quarter{WJ}main", lang="en")
    assert plain == hidden and "Zebedee" not in plain and "PERSON" in plain


def test_a_name_known_from_a_field_is_found_written_with_invisible_characters(
    rules: Deidentifier,
) -> None:
    """A FHIR Patient's name (a value field) is looked for in its narrative by the narrative's
    reading: written with invisible characters inside, it is found and wholly replaced."""
    div = f"Seen with Zebe{ZWSP}dee Quarter{WJ}main today; Quarter{SHY}main agreed."
    doc = {
        "resourceType": "Patient",
        "id": "p1",
        "name": [{"family": "Quartermain", "given": ["Zebedee"]}],
        "text": {
            "status": "generated",
            "div": f'<div xmlns="http://www.w3.org/1999/xhtml">{div}</div>',
        },
    }
    out = rules.redact_document(doc, format="fhir", lang="en").output
    narrative = out["text"]["div"]
    assert narrative.startswith('<div xmlns="http://www.w3.org/1999/xhtml">Seen with [')
    assert narrative.endswith(" today; [PERSON] agreed.</div>")
    for part in ("Zebe", "dee", "Quarter", "main"):
        assert part not in narrative


@pytest.mark.parametrize(
    ("lang", "before", "written", "after"),
    [
        ("ar", "اتصل على ", "٠٧٧٢ ١٢٣ ٤٥٦", " غدا"),
        ("hi", "फ़ोन ", "०७७२ १२३ ४५६", " पर करें"),
        ("en", "Call me on ", "٠٧٧٢ ١٢٣ ٤٥٦", " tomorrow."),
        ("en", "Call me on ", f"०७७२{ZWSP}१२३{NBSP}४५६", " tomorrow."),
    ],
    ids=["ar-arabic-indic", "hi-devanagari", "en-arabic-indic", "en-devanagari-zwsp"],
)
def test_arabic_indic_and_devanagari_digits_are_read(
    rules: Deidentifier, lang: str, before: str, written: str, after: str
) -> None:
    assert rules.redact(before + written + after, lang=lang) == f"{before}[CONTACT_PHONE]{after}"


def test_a_name_is_carried_to_its_other_mentions_through_invisible_characters(
    rules: Deidentifier,
) -> None:
    """``names.carry`` runs on the reading: a surname written with a soft hyphen inside is
    the labelled name, and its span covers the hyphen."""
    text = (
        f"Patient name: Zebe{ZWSP}dee Quartermain\n"
        f"Quarter{SHY}main was seen today; Quartermain agreed."
    )
    spans = rules.detect(text, lang="en")
    assert [text[s.start : s.end] for s in spans] == [
        f"Zebe{ZWSP}dee Quartermain",
        f"Quarter{SHY}main",
        "Quartermain",
    ]
    assert rules.redact(text, lang="en") == (
        "Patient name: [PERSON]\n[PERSON] was seen today; [PERSON] agreed."
    )


#: Nag Mundari's digits (Unicode 15): digits to the patterns' ``regex`` tables, unknown to
#: Python 3.11's own (``int``, ``unicodedata``).
_NAG_MUNDARI = str.maketrans("0123456789", "".join(chr(0x1E4F0 + d) for d in range(10)))


@pytest.mark.parametrize(
    "policy", ["tag", "surrogate", "safe-harbor", "hash", "mask", "numbered", "encrypt"]
)
def test_identifiers_in_digits_newer_than_python_are_redacted_by_every_policy(
    policy: str,
) -> None:
    """A date, an age over 89, a phone and a record number written in digits Python's Unicode
    tables do not know are found as their ASCII forms are, and every shipped policy replaces
    them without error."""
    plain = "Seen on 12/03/2024 aged 93 years, phone 0772 123456, MRN 4482913."
    deid = Deidentifier(profile="rules", policy=policy, key=b"k" * 32)
    found = [s.label for s in deid.detect(plain, lang="en")]
    written = plain.translate(_NAG_MUNDARI)
    assert [s.label for s in deid.detect(written, lang="en")] == found
    out = deid.redact(written, lang="en")
    for identifier in ("12/03/2024", "aged 93 ", "0772 123456", "4482913"):
        assert identifier.translate(_NAG_MUNDARI) not in out
    assert "Seen on" in out and "MRN" in out
