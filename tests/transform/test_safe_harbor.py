"""The safe-harbor policy: dates keep their year, ages up to 89 stay, everything else goes."""

from __future__ import annotations

import json

import pytest

from polydeid import Deidentifier
from polydeid.cli import main
from polydeid.core.errors import PolicyError
from polydeid.core.taxonomy import Category
from polydeid.transform.operators import OperatorSpec
from polydeid.transform.policy import load_policy, shipped_policies
from polydeid.transform.safe_harbor import age_in_years, year_text


@pytest.mark.parametrize(
    ("text", "langs", "expected"),
    [
        ("12/03/2024", ["en"], "2024"),
        ("March 2024", ["en"], "2024"),
        ("5.3.24", ["en"], "2024"),
        ("12 de marzo de 2024", ["es", "en"], "2024"),
        ("ngày 12 tháng 3 năm 2024", ["vi", "en"], "2024"),
        ("١٢ آذار ٢٠٢٤", ["ar", "en"], "٢٠٢٤"),
        ("19800302", ["en"], "1980"),
        ("1992", ["en"], "1992"),
        ("'95", ["en"], "'95"),
        ("9/7", ["en"], None),
        ("19.3.", ["de", "en"], None),
        ("12", ["en"], None),
    ],
    ids=range(12),
)
def test_year_text(text: str, langs: list[str], expected: str | None) -> None:
    assert year_text(text, langs) == expected


@pytest.mark.parametrize(
    ("text", "langs", "years"),
    [
        ("46 years", ["en"], 46.0),
        ("92-year-old", ["en"], 92.0),
        ("6-month-old", ["en"], 0.5),
        ("emyaka 95", ["lg", "en"], 95.0),
        ("miaka 91", ["sw", "en"], 91.0),
        ("95 Jahre", ["de", "en"], 95.0),
        ("ninety years", ["en"], None),
        ("1,100 months", ["en"], 1100 / 12),
        ("1.100 Monate", ["de", "en"], 1100 / 12),
        ("1 100 months", ["en"], 1100 / 12),
        ("2.5 years", ["en"], 2.5),
        ("45-50 years", ["en"], None),
    ],
    ids=range(12),
)
def test_age_in_years(text: str, langs: list[str], years: float | None) -> None:
    assert age_in_years(text, langs) == years


def test_policy_is_shipped_and_valid() -> None:
    assert "safe-harbor" in shipped_policies()
    policy = load_policy("safe-harbor")
    assert policy.operator_for(Category.DATE).name == "keep_year"
    assert policy.operator_for(Category.AGE).name == "keep_age"
    assert policy.operator_for(Category.PERSON).name == "tag"
    assert policy.operator_for(Category.SEX).name == "keep"
    assert not policy.needs_key


def test_operator_options_are_validated() -> None:
    with pytest.raises(PolicyError):
        OperatorSpec.of("keep_age", max_years=-1)
    with pytest.raises(PolicyError):
        OperatorSpec.of("keep_year", template="{name}")


SAFE_HARBOR = [
    (
        "en",
        "Seen 9/7. Admitted 12/03/2024, MI 1992, s/p CABG '95. A 92-year-old man, wife 46 years.",
        "Seen [DATE]. Admitted 2024, MI 1992, s/p CABG [DATE]. A [AGE] man, wife 46 years.",
    ),
    (
        "de",
        "Aufnahme am 12.03.2024, Kontrolle am 19.3., Diabetes seit 2004, Patientin 93 Jahre.",
        "Aufnahme am 2024, Kontrolle am [DATE], Diabetes seit 2004, Patientin [AGE].",
    ),
    (
        "es",
        "Ingresó el 12 de marzo de 2024, control el 25/7, hipertenso desde 2010, 45 años.",
        "Ingresó el 2024, control el [DATE], hipertenso desde 2010, 45 años.",
    ),
    (
        "fr",
        "Hospitalisée le 1er mars 2024, revue le 12/3, diabétique depuis 2010.",
        "Hospitalisée le 2024, revue le [DATE], diabétique depuis 2010.",
    ),
    (
        "vi",
        "Nhập viện ngày 12 tháng 3 năm 2024, sốt từ 24-7 đến 31-7, sinh năm 1967.",
        "Nhập viện 2024, sốt từ [DATE] đến [DATE], sinh năm 1967.",
    ),
    (
        "sw",
        "Alilazwa tarehe 12 Machi 2024, alionekana tarehe 25/7, tangu 2010.",
        "Alilazwa tarehe 2024, alionekana tarehe [DATE], tangu 2010.",
    ),
    (
        "lg",
        "Yazaalibwa nga 12 Maaki 2024, yajja nga 25/7, alwadde okuva 2010.",
        "Yazaalibwa nga 2024, yajja nga [DATE], alwadde okuva 2010.",
    ),
]


@pytest.mark.parametrize(
    ("lang", "text", "expected"),
    SAFE_HARBOR,
    ids=[lang for lang, _, _ in SAFE_HARBOR],
)
def test_safe_harbor_end_to_end(lang: str, text: str, expected: str) -> None:
    deid = Deidentifier(profile="rules", policy="safe-harbor")
    assert deid.redact(text, lang=lang) == expected


def test_safe_harbor_replaces_other_identifiers() -> None:
    deid = Deidentifier(profile="rules", policy="safe-harbor")
    out = deid.redact("Call 0772 123456 or write to okello.test@example.org on 9/7.", lang="en")
    assert out == "Call [CONTACT_PHONE] or write to [CONTACT_OTHER] on [DATE]."


def test_keep_year_drops_years_revealing_an_age_over_the_cut_off() -> None:
    policy = """
[default]
operator = "tag"
[categories.DATE]
operator = "keep_year"
oldest_age = 89
reference_year = 2026
"""
    from polydeid.transform.policy import parse_policy

    deid = Deidentifier(profile="rules", policy=parse_policy(policy))
    note = "Born in 1930, MI 1992, CABG 1937, DOB 4/5/29, admitted 12.03.1936."
    assert deid.redact(note, lang="en") == (
        "Born in [DATE], MI 1992, CABG 1937, DOB [DATE], admitted [DATE]."
    )


def test_shipped_policy_counts_years_from_this_year() -> None:
    from datetime import date

    deid = Deidentifier(profile="rules", policy="safe-harbor")
    old, recent = date.today().year - 95, date.today().year - 30
    note = f"Born in {old}, MI {recent}."
    assert deid.redact(note, lang="en") == f"Born in [DATE], MI {recent}."


def test_keep_age_replaces_ages_read_whole_over_89() -> None:
    deid = Deidentifier(profile="rules", policy="safe-harbor")
    assert deid.redact("Infant aged 14 months.", lang="en") == "Infant aged 14 months."
    out = deid.redact("Patient is 1,100 months old.", lang="en")
    assert "1,100" not in out and "100" not in out


def test_cli_redact_with_safe_harbor(tmp_path) -> None:
    src = tmp_path / "in.jsonl"
    note = "Admitted 12/03/2024, seen 9/7, MI 1992, aged 95 years."
    src.write_text(json.dumps({"id": "n1", "lang": "en", "text": note}) + "\n", "utf-8")
    out = tmp_path / "out.jsonl"
    args = ["redact", str(src), "--profile", "rules", "--policy", "safe-harbor", "-o", str(out)]
    assert main(args) == 0
    record = json.loads(out.read_text("utf-8"))
    assert record["text"] == "Admitted 2024, seen [DATE], MI 1992, aged [AGE]."


def test_cli_detect_reports_date_granularity(tmp_path) -> None:
    src = tmp_path / "in.jsonl"
    note = "Admitted 12/03/2024, seen 9/7, MI 1992, since March 2024."
    src.write_text(json.dumps({"id": "n1", "lang": "en", "text": note}) + "\n", "utf-8")
    out = tmp_path / "out.jsonl"
    assert main(["detect", str(src), "--profile", "rules", "-o", str(out)]) == 0
    spans = json.loads(out.read_text("utf-8"))["spans"]
    dates = [(note[s["start"] : s["end"]], s["granularity"]) for s in spans if s["label"] == "DATE"]
    assert dates == [
        ("12/03/2024", "full"),
        ("9/7", "day_month"),
        ("1992", "year"),
        ("March 2024", "month_year"),
    ]
