import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from polydeid import Category, Span
from polydeid.cli import main
from polydeid.core.taxonomy import Fact
from polydeid.corpora.document import AnnotatedDocument, Corpus
from polydeid.evaluate.harness import evaluate
from polydeid.evaluate.leaks import (
    LeakCount,
    LeakTable,
    clopper_pearson,
    document_leaks,
    leak_table,
)
from polydeid.evaluate.report import leak_rows, report_html, report_json, report_markdown

# --- Clopper–Pearson -------------------------------------------------------------------------

# Two-sided 95 % exact intervals as R's binom.test(k, n)$conf.int prints them.
REFERENCE = [
    (0, 10, 0.0, 0.3084971),
    (1, 10, 0.002528579, 0.4450161),
    (5, 10, 0.1870860, 0.8129140),
    (10, 10, 0.6915029, 1.0),
    (0, 100, 0.0, 0.03621669),
    (10, 100, 0.04900469, 0.1762226),
]


@pytest.mark.parametrize(("k", "n", "low", "high"), REFERENCE)
def test_clopper_pearson_matches_the_reference_table(k, n, low, high):
    got_low, got_high = clopper_pearson(k, n)
    assert got_low == pytest.approx(low, abs=5e-7)
    assert got_high == pytest.approx(high, abs=5e-7)


@pytest.mark.parametrize("n", [1, 2, 7, 30, 1000, 50_000])
def test_clopper_pearson_closed_forms(n):
    # 0 of n: P(X = 0) = (1 − p)^n = 0.025; n − 1 of n: P(X ≤ n − 1) = 1 − p^n = 0.025
    assert clopper_pearson(0, n)[1] == pytest.approx(1 - 0.025 ** (1 / n), rel=1e-9)
    assert clopper_pearson(n, n)[0] == pytest.approx(0.025 ** (1 / n), rel=1e-9)
    if n > 1:
        assert clopper_pearson(n - 1, n)[1] == pytest.approx(0.975 ** (1 / n), rel=1e-9)
    assert clopper_pearson(0, n, level=0.9)[1] == pytest.approx(1 - 0.05 ** (1 / n), rel=1e-9)


def test_clopper_pearson_is_symmetric_and_monotone():
    n = 37
    bounds = [clopper_pearson(k, n) for k in range(n + 1)]
    for k, (low, high) in enumerate(bounds):
        assert low <= k / n <= high
        mirror_low, mirror_high = bounds[n - k]
        assert low == pytest.approx(1 - mirror_high, abs=1e-12)
        assert high == pytest.approx(1 - mirror_low, abs=1e-12)
    highs = [h for _, h in bounds]
    assert highs == sorted(highs) and len(set(highs)) == n + 1


def test_clopper_pearson_refuses_impossible_counts():
    for k, n, level in ((1, 0, 0.95), (-1, 5, 0.95), (6, 5, 0.95), (1, 5, 1.0), (1, 5, 0.0)):
        with pytest.raises(ValueError):
            clopper_pearson(k, n, level)
    assert math.isclose(clopper_pearson(3, 1_000_000)[1], 8.767e-6, rel_tol=1e-3)


# --- what a leak is --------------------------------------------------------------------------

TEXT = "Zebedee Quartermain, ID 44-82, tel 0772 123456; dose 5 mg; (--)"
NAME = Span(0, 19, Category.PERSON, "gold:NAME")
ID = Span(24, 29, Category.ID_RECORD, "gold:MRN")
PHONE = Span(35, 46, Category.CONTACT_PHONE, "gold:PHONE")
PUNCT = Span(59, 63, Category.ID_OTHER, "gold:ODD")  # no letter or digit: not counted


def doc(*spans: Span, meta: dict[str, object] | None = None) -> AnnotatedDocument:
    return AnnotatedDocument("d", TEXT, "en", spans, meta=meta or {})


def outcome(gold: Span, *predicted: Span) -> tuple[int, int, int]:
    count = document_leaks(doc(gold), predicted).total()
    return count.gold, count.leaked, count.whole


def test_a_gold_identifier_covered_by_any_category_does_not_leak():
    assert outcome(NAME, Span(0, 19, Category.LOCATION_ADDRESS, "x")) == (1, 0, 0)
    # two spans either side of the space cover every letter
    assert outcome(NAME, Span(0, 7, Category.PERSON, "x"), Span(8, 19, Category.PERSON, "x")) == (
        1,
        0,
        0,
    )
    # the "-" inside the ID is punctuation; both digit runs are covered
    assert (
        outcome(ID, Span(24, 26, Category.ID_RECORD, "x"), Span(27, 29, Category.ID_RECORD, "x"))[1]
        == 0
    )
    assert outcome(PHONE, Span(30, 50, Category.CONTACT_PHONE, "x")) == (1, 0, 0)


def test_a_letter_or_digit_left_uncovered_is_a_leak():
    assert outcome(NAME, Span(0, 7, Category.PERSON, "x")) == (1, 1, 0)  # surname survives
    assert outcome(NAME, Span(0, 18, Category.PERSON, "x")) == (1, 1, 0)  # one letter survives
    assert outcome(PHONE, Span(35, 39, Category.CONTACT_PHONE, "x")) == (1, 1, 0)
    assert outcome(PHONE) == (1, 1, 1)
    assert outcome(PHONE, Span(0, 19, Category.PERSON, "x")) == (1, 1, 1)  # elsewhere
    # a clinical fact covers nothing: policies keep it as written
    assert outcome(PHONE, Span(35, 46, Fact.LAB_VALUE, "x")) == (1, 1, 1)
    assert outcome(PUNCT) == (0, 0, 0)


def test_cells_by_language_category_and_format():
    spans = (NAME, ID, PHONE, PUNCT)
    predicted = [Span(0, 7, Category.PERSON, "x"), Span(35, 46, Category.CONTACT_PHONE, "x")]
    table = document_leaks(doc(*spans, meta={"text_format": "fhir"}), predicted)
    assert set(table.cells) == {
        ("en", "PERSON", "fhir"),
        ("en", "ID_RECORD", "fhir"),
        ("en", "CONTACT_PHONE", "fhir"),
    }
    assert table.cells[("en", "PERSON", "fhir")] == LeakCount(1, 1, 0)
    assert table.cells[("en", "ID_RECORD", "fhir")] == LeakCount(1, 1, 1)
    assert table.cells[("en", "CONTACT_PHONE", "fhir")] == LeakCount(1, 0, 0)
    plain = document_leaks(doc(*spans), predicted, format="hl7v2")
    assert {fmt for _, _, fmt in plain.cells} == {"hl7v2"}

    other = AnnotatedDocument("e", TEXT, "sw", (NAME, PHONE))
    both = leak_table([doc(*spans), other], {"d": predicted})  # "e" predicted nothing
    assert both.total() == LeakCount(5, 4, 3)
    assert both.total(lang="sw") == LeakCount(2, 2, 2)
    assert both.total(category="PERSON") == LeakCount(2, 2, 1)
    assert both.marginal(["category"])[("CONTACT_PHONE",)] == LeakCount(2, 1, 1)
    assert both.total().rate == pytest.approx(0.8)
    assert both.total().upper() == pytest.approx(clopper_pearson(4, 5)[1])
    assert both.total().whole_upper() == pytest.approx(clopper_pearson(3, 5)[1])
    assert LeakTable().total().upper() is None and "no gold" in LeakTable().summary()
    assert "4 of 5 gold identifier(s) leaked (3 wholly)" in both.summary()

    rows = leak_rows(both)
    assert rows[0] == (("all", "all", "all"), LeakCount(5, 4, 3))
    assert (("sw", "all", "all"), LeakCount(2, 2, 2)) in rows
    data = json.loads(json.dumps(both.to_dict(), allow_nan=False))
    assert data["total"]["leaked"] == 4 and len(data["cells"]) == 5
    assert data["level"] == 0.95 and data["definition"]


def _naive(text: str, gold: tuple[int, int], predicted: list[tuple[int, int]]) -> tuple[bool, bool]:
    ident = [i for i in range(*gold) if text[i].isalnum()]
    hidden = [any(s <= i < e for s, e in predicted) for i in ident]
    return (not all(hidden), not any(hidden)) if ident else (False, False)


@settings(max_examples=300, deadline=None)
@given(
    text=st.text(alphabet="ab1 -.", min_size=1, max_size=30),
    data=st.data(),
)
def test_leaks_agree_with_a_character_by_character_count(text, data):
    n = len(text)
    bounds = st.tuples(st.integers(0, n), st.integers(0, n)).map(sorted)
    gold = data.draw(bounds.filter(lambda b: b[0] < b[1]))
    predicted = data.draw(st.lists(bounds.filter(lambda b: b[0] < b[1]), max_size=5))
    document = AnnotatedDocument("d", text, "en", (Span(*gold, Category.PERSON, "gold"),))
    spans = [Span(s, e, Category.DATE, "x") for s, e in predicted]
    count = document_leaks(document, spans).total()
    leaked, whole = _naive(text, gold, predicted)
    counted = any(text[i].isalnum() for i in range(*gold))
    assert (count.gold, count.leaked, count.whole) == (int(counted), int(leaked), int(whole))


# --- in the harness, the reports and the CLI -------------------------------------------------

TEXT_A = "Simu 0772 123456, alikuja 5 Machi 2024, Hb 11.2 g/dL."


def tiny() -> Corpus:
    a = AnnotatedDocument(
        "a",
        TEXT_A,
        "sw",
        (
            Span(0, 4, Category.PERSON, "gold:NAME"),  # not found by the rules: a leak
            Span(5, 16, Category.CONTACT_PHONE, "gold:PHONE"),
            Span(26, 38, Category.DATE, "gold:DATE"),
        ),
    )
    return Corpus("tiny", (a,))


def test_evaluate_reports_leaks_per_system():
    run = evaluate(tiny(), ["rules"], bootstrap=0)
    leaks = run.systems[0].leaks
    assert leaks.total() == LeakCount(3, 1, 1)
    assert leaks.cells[("sw", "PERSON", "text")] == LeakCount(1, 1, 1)
    assert leaks.cells[("sw", "DATE", "text")] == LeakCount(1, 0, 0)
    data = json.loads(report_json(run))
    cells = data["systems"][0]["leaks"]["cells"]
    person = next(c for c in cells if c["category"] == "PERSON")
    assert person["upper"] == 1.0  # 1 of 1 leaked
    date = next(c for c in cells if c["category"] == "DATE")
    assert date["upper"] == pytest.approx(1 - 0.025)
    page = report_markdown(run)
    assert "Residual risk" in page and "Clopper" in page and "Simu" not in page
    assert "| sw | PERSON | text | rules | 1 | 1 | 1.000 | 1.000 | 1 | 1.000 |" in page
    html = report_html(run)
    assert "Residual risk" in html and "Simu" not in html


def test_cli_eval_prints_the_leak_line(tmp_path, capsys):
    gold = tmp_path / "gold.jsonl"
    record = {
        "id": "a",
        "lang": "sw",
        "text": TEXT_A,
        "meta": {"text_format": "chat"},
        "spans": [
            {"start": 0, "end": 4, "label": "PERSON"},
            {"start": 5, "end": 16, "label": "CONTACT_PHONE"},
        ],
    }
    gold.write_text(json.dumps(record) + "\n", "utf-8")
    out = tmp_path / "report"
    code = main(
        ["eval", "--gold", str(gold), "--format", "jsonl", "--out", str(out), "--bootstrap", "0"]
    )
    assert code == 0
    err = capsys.readouterr().err
    assert "rules: 1 of 2 gold identifier(s) leaked (1 wholly); leak rate 0.5000" in err
    assert "Simu" not in err
    report = json.loads((out / "report.json").read_text("utf-8"))
    cells = report["systems"][0]["leaks"]["cells"]
    assert {(c["lang"], c["category"], c["format"]) for c in cells} == {
        ("sw", "PERSON", "chat"),
        ("sw", "CONTACT_PHONE", "chat"),
    }
    assert "Residual risk" in (out / "report.md").read_text("utf-8")
