"""Zero leak: identifiers of every rule category, inserted into random clinical sentences in
each language, are found by the ``rules`` profile with the right category.

The carrier sentences are the clinical-facts fixture corpus (tests/fixtures/clinical_facts);
identifiers are generated with valid structure and checksums (python-stdnum, phonenumbers)
and rendered with each language's own month names and age unit words (its locale data).
Test ids name the language and category, never an identifier.
"""

from __future__ import annotations

import json
import random
from functools import cache
from pathlib import Path

import phonenumbers
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from stdnum import luhn
from stdnum.es import dni
from stdnum.iban import calc_check_digits

from polydeid import Category, Segment
from polydeid.detect.pipeline import Pipeline
from polydeid.detect.profiles import profile_categories, profile_detectors
from polydeid.locales import language_data, language_info, languages

FIXTURES = Path(__file__).parent / "fixtures" / "clinical_facts"


@cache
def pipeline() -> Pipeline:
    return Pipeline(profile_detectors("rules"))


@cache
def carriers(lang: str) -> tuple[str, ...]:
    lines = []
    for raw in (FIXTURES / f"{lang}.jsonl").read_text("utf-8").splitlines():
        if raw.strip():
            lines.append(json.loads(raw)["text"])
    return tuple(lines)


def month_names(lang: str) -> list[str]:
    forms = language_data(lang, "dates").get("month_forms", {})
    full = forms.get("full", {}).get("names", [])
    return full if len(full) == 12 else []


def age_units(lang: str) -> tuple[list[str], list[str]]:
    year = language_data(lang, "ages").get("units", {}).get("year", {})
    return list(year.get("after", [])), list(year.get("before", []))


def _phone(rng: random.Random, lang: str) -> str:
    region = language_info(lang).countries[0]
    kind = rng.choice(
        [phonenumbers.PhoneNumberType.MOBILE, phonenumbers.PhoneNumberType.FIXED_LINE]
    )
    example = phonenumbers.example_number_for_type(region, kind)
    assert example is not None
    number = example
    for _ in range(20):  # randomise the subscriber digits while keeping the number valid
        digits = str(example.national_number)
        tail = "".join(rng.choice("0123456789") for _ in range(3))
        candidate = phonenumbers.parse(f"+{example.country_code}{digits[:-3]}{tail}")
        if phonenumbers.is_valid_number(candidate):
            number = candidate
            break
    fmt = rng.choice(
        [phonenumbers.PhoneNumberFormat.INTERNATIONAL, phonenumbers.PhoneNumberFormat.NATIONAL]
    )
    return phonenumbers.format_number(number, fmt)


def _digits(rng: random.Random, n: int) -> str:
    return "".join(rng.choice("0123456789") for _ in range(n))


def _national_id(rng: random.Random) -> tuple[str, str]:
    kind = rng.choice(["es_dni", "ug_nin", "rw_nid", "tz_nida", "ke_id"])
    if kind == "es_dni":
        body = f"{rng.randrange(10**7, 10**8)}"
        return "DNI ", body + dni.calc_check_digit(body)
    if kind == "ug_nin":
        tail = "".join(rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ") for _ in range(4))
        return "NIN: ", f"C{rng.choice('MF')}{rng.randrange(50, 99)}{_digits(rng, 6)}{tail}"
    if kind == "rw_nid":
        year = rng.randrange(1950, 2005)
        return "NID: ", f"1{year}{rng.choice('78')}{_digits(rng, 10)}"
    if kind == "tz_nida":
        y, m, d = rng.randrange(1950, 2005), rng.randrange(1, 13), rng.randrange(1, 29)
        return "NIDA: ", f"{y}{m:02d}{d:02d}-{_digits(rng, 5)}-{_digits(rng, 5)}-{_digits(rng, 2)}"
    return "ID No: ", f"{rng.randrange(10**7, 10**8)}"


def _other_id(rng: random.Random) -> tuple[str, str]:
    if rng.random() < 0.5:
        bban = f"{rng.randrange(10**7, 10**8)}{rng.randrange(10**9, 10**10)}"
        check = calc_check_digits(f"DE00{bban}")
        iban = f"DE{check}{bban}"
        return "IBAN ", " ".join(iban[i : i + 4] for i in range(0, len(iban), 4))
    body = "4" + "".join(rng.choice("0123456789") for _ in range(14))
    card = body + luhn.calc_check_digit(body)
    return "card ", " ".join(card[i : i + 4] for i in range(0, 16, 4))


def _date(rng: random.Random, lang: str) -> str:
    y, m, d = rng.randrange(1950, 2030), rng.randrange(1, 13), rng.randrange(1, 29)
    names = month_names(lang)
    forms = [f"{d:02d}/{m:02d}/{y}", f"{y}-{m:02d}-{d:02d}", f"{d:02d}.{m:02d}.{y}"]
    if names and lang not in {"zh", "vi"}:
        forms.append(f"{d} {names[m - 1]} {y}")
    return rng.choice(forms)


def _age(rng: random.Random, lang: str) -> tuple[str, str]:
    """An age after a person word ("paciente 46 años"): a bare "46 años" right before
    "después" reads "46 years later", which is rightly not an age."""
    after, before = age_units(lang)
    n = rng.randrange(2, 99)
    options = [f"{n} {u}" for u in after] + [f"{u} {n}" for u in before]
    nearby = language_data(lang, "ages").get("context", {}).get("nearby", [])
    prefix = f"{nearby[0]} " if nearby else ""
    return prefix, rng.choice(options) if options else f"{n} years"


def _record(rng: random.Random) -> tuple[str, str]:
    if rng.random() < 0.5:
        return "MRN: ", f"{rng.randrange(10**5, 10**8)}"
    letters = "".join(rng.choice("ABCDEFGHKLMNPRSTUW") for _ in range(rng.randrange(2, 5)))
    year = rng.choice([f"{rng.randrange(0, 30):02d}", f"{rng.randrange(2000, 2030)}"])
    return "", f"{letters}/{year}/{rng.randrange(10**3, 10**6):05d}"


def _email(rng: random.Random) -> str:
    local = rng.choice(["a.mwangi", "nakato.s", "j_ochieng", "k.mueller", "nguyen.an", "m.garcia"])
    domain = rng.choice(["gmail.com", "example.org", "hospital.co.ug", "web.de"])
    return f"{local}{rng.randrange(1, 99)}@{domain}"


def make_identifier(category: Category, rng: random.Random, lang: str) -> tuple[str, str]:
    """(context prefix, identifier) for ``category`` in ``lang``."""
    if category is Category.CONTACT_PHONE:
        return "Tel ", _phone(rng, lang)
    if category is Category.CONTACT_OTHER:
        return "", _email(rng)
    if category is Category.ID_NATIONAL:
        return _national_id(rng)
    if category is Category.ID_OTHER:
        return _other_id(rng)
    if category is Category.ID_RECORD:
        return _record(rng)
    if category is Category.DATE:
        return "", _date(rng, lang)
    return _age(rng, lang)


RULE_CATEGORIES = list(profile_categories("rules", partial=False))


def insert(carrier: str, phrase: str, rng: random.Random) -> tuple[str, int]:
    """``carrier`` with `` phrase `` inserted at a sentence or clause boundary; its offset.

    A boundary is punctuation followed by a space and then not by a digit, so that an
    identifier is never wedged between a label and its value ("Temp. 38,6 °C").
    """
    cuts = [0, len(carrier)] + [
        i + 1
        for i, ch in enumerate(carrier[:-2])
        if ch in ".;,:،。" and carrier[i + 1].isspace() and not carrier[i + 2].isdigit()
    ]
    cut = rng.choice(cuts)
    left = carrier[:cut].rstrip()
    glue_left = (left + " ") if left else ""
    rest = carrier[cut:].lstrip()
    # The phrase closes its own clause, so it never runs into the next words ("… 20 años
    # después" would read "20 years later"; "+91 81234 56575 6 माह" would extend the number).
    text = glue_left + phrase + (", " + rest if rest else ".")
    return text, len(glue_left)


@pytest.mark.parametrize("category", RULE_CATEGORIES, ids=[c.value for c in RULE_CATEGORIES])
@pytest.mark.parametrize("lang", languages())
@settings(
    max_examples=40, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(seed=st.integers(0, 2**32 - 1))
def test_inserted_identifier_is_found(lang: str, category: Category, seed: int) -> None:
    rng = random.Random(seed)
    prefix, identifier = make_identifier(category, rng, lang)
    carrier = rng.choice(carriers(lang))
    text, at = insert(carrier, prefix + identifier, rng)
    start, end = at + len(prefix), at + len(prefix) + len(identifier)
    spans = pipeline().detect(Segment(text, lang=lang))
    covering = [s for s in spans if s.start < end and start < s.end]
    covered = set()
    for s in covering:
        covered.update(range(max(s.start, start), min(s.end, end)))
    missing = sorted(set(range(start, end)) - covered)
    # Zero leak: every identifier character is inside a span, and the category is right.
    assert not missing, f"{len(missing)} of {end - start} chars uncovered at {start}:{end}"
    assert any(s.label is category for s in covering), [repr(s) for s in covering]
