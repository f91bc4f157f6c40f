"""Tests of the evaluation reports against a hand-computed two-document, two-system run."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from polydeid.core.errors import RecordError
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category, Fact
from polydeid.corpora.document import AnnotatedDocument, Corpus, ReadFailure
from polydeid.evaluate.bootstrap import bootstrap_ci
from polydeid.evaluate.harness import EvaluationRun, SystemResult, threshold_curve
from polydeid.evaluate.metrics import score_corpus
from polydeid.evaluate.report import (
    UNDEFINED,
    quality_markdown,
    report_html,
    report_json,
    report_markdown,
    write_report,
)

C = Category
TEXT_1 = "Amina Okello seen 12/03/2021 at Mulago Hospital, dose 5 mg."
TEXT_2 = "Kato Ssali, age 47, phone 0772 123456."
# Pieces of the fixture text that no report may contain.
SECRETS = ("Amina", "Okello", "12/03/2021", "Mulago", "Hospital", "Kato", "Ssali", "0772", "123456")


def at(text: str, piece: str, label: Category | Fact, score: float = 1.0) -> Span:
    start = text.index(piece)
    return Span(start, start + len(piece), label, "t", score)


DOCS = (
    AnnotatedDocument(
        "d1",
        TEXT_1,
        "en",
        (
            at(TEXT_1, "Amina Okello", C.PERSON),
            at(TEXT_1, "12/03/2021", C.DATE),
            at(TEXT_1, "Mulago Hospital", C.LOCATION_FACILITY),
        ),
        facts=(at(TEXT_1, "5 mg", Fact.DOSE),),
    ),
    AnnotatedDocument(
        "d2",
        TEXT_2,
        "en",
        (
            at(TEXT_2, "Kato Ssali", C.PERSON),
            at(TEXT_2, "47", C.AGE),
            at(TEXT_2, "0772 123456", C.CONTACT_PHONE),
        ),
    ),
)

# alpha: both persons and the phone exact, the date cut short, an organisation on "phone";
# misses the facility and the age. beta predicts nothing.
ALPHA = {
    "d1": [at(TEXT_1, "Amina Okello", C.PERSON, 0.9), at(TEXT_1, "12/03", C.DATE, 0.4)],
    "d2": [
        at(TEXT_2, "Kato Ssali", C.PERSON, 0.8),
        at(TEXT_2, "0772 123456", C.CONTACT_PHONE),
        at(TEXT_2, "phone", C.ORGANIZATION, 0.5),
    ],
}
BETA: dict[str, list[Span]] = {"d1": [], "d2": []}
FAILURE = ReadFailure("notes/bad.ann", RecordError("malformed annotation line", location="bad:3"))


def system(name: str, predictions: dict[str, list[Span]], *, cis: bool) -> SystemResult:
    scores = score_corpus(DOCS, predictions)
    return SystemResult(
        name=name,
        description=f"test system {name}",
        scores=scores,
        seconds=1.23456 if cis else 0.25,
        curve=threshold_curve(Corpus("toy", DOCS), predictions),
        cis=bootstrap_ci(scores, n_resamples=50, seed=3) if cis else None,
    )


def make_run(failures: tuple[ReadFailure, ...] = (FAILURE,), corpus: str = "toy") -> EvaluationRun:
    return EvaluationRun(
        corpus=corpus,
        format="brat",
        documents=len(DOCS),
        gold_spans=6,
        systems=(system("alpha", ALPHA, cis=True), system("beta", BETA, cis=False)),
        failures=failures,
        machine="test-machine",
        created="2026-01-02",
    )


RUN = make_run()


def md_rows(markdown: str, first_header: str) -> list[list[str]]:
    """Body rows (cells, unescaped) of the first Markdown table whose header starts so."""
    lines = markdown.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"| {first_header} |"))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        cells = re.split(r"(?<!\\)\|", line.strip())[1:-1]
        rows.append([re.sub(r"\\(.)", r"\1", c.strip()) for c in cells])
    return rows


def parse_html(page: str) -> ET.Element:
    """The page as XML (it is written XHTML-compatible, so this also checks tag balance)."""
    assert page.startswith("<!DOCTYPE html>\n")
    return ET.fromstring(page.removeprefix("<!DOCTYPE html>\n"))


def svg_by_title(root: ET.Element, title: str) -> ET.Element:
    matches = [s for s in root.iter("svg") if s.findtext("title") == title]
    assert len(matches) == 1
    return matches[0]


# --- numbers -------------------------------------------------------------------------------
#
# Strict micro (alpha): gold 6, predicted 5, correct 3 (two persons, the phone) → P 0.6,
# R 0.5, F1 6/11. Relaxed: 4 of 5 predictions overlap gold of their category (the cut date
# too), 4 of 6 gold spans found → P 0.8, R 2/3, F1 8/11. Label-agnostic counts are the same.
# Tokens: gold 12, predicted 9 (the "phone" token too), 8 agree → P 8/9, R 2/3, F1 16/21.
# Over-redaction: 5 ("phone") of 43 predicted characters; the dose is untouched.

ALPHA_SUMMARY = [
    "alpha",
    *("0.600", "0.500", "0.545"),
    *("0.800", "0.667", "0.727"),
    *("0.545", "0.727", "0.762", "0.545", "0.116", "0.000", "1.235"),
]
BETA_SUMMARY = [
    "beta",
    *(UNDEFINED, "0.000", "0.000"),
    *(UNDEFINED, "0.000", "0.000"),
    *("0.000", "0.000", "0.000", "0.000", UNDEFINED, "0.000", "0.250", UNDEFINED),
]


def test_summary_table_rounds_hand_computed_numbers():
    alpha, beta = md_rows(report_markdown(RUN), "System")
    assert alpha[:-1] == ALPHA_SUMMARY
    assert re.fullmatch(r"\d\.\d{3}–\d\.\d{3}", alpha[-1])
    assert beta == BETA_SUMMARY


def test_confidence_interval_bounds_bracket_the_estimate():
    low, high = map(float, md_rows(report_markdown(RUN), "System")[0][-1].split("–"))
    assert low <= 6 / 11 <= high


def cells(row: str) -> list[str]:
    return row.split()


CATEGORY_ROWS = {
    # gold, predicted, strict P R F1, relaxed P R F1, leak strict, leak relaxed
    ("PERSON", "alpha"): cells("2 2 1.000 1.000 1.000 1.000 1.000 1.000 0.000 0.000"),
    ("DATE", "alpha"): cells("1 1 0.000 0.000 0.000 1.000 1.000 1.000 1.000 0.000"),
    ("AGE", "alpha"): cells("1 0 – 0.000 0.000 – 0.000 0.000 1.000 1.000"),
    ("ORGANIZATION", "alpha"): cells("0 1 0.000 – – 0.000 – – – –"),
    ("ORGANIZATION", "beta"): cells("0 0 – – – – – – – –"),
    ("CONTACT_PHONE", "beta"): cells("1 0 – 0.000 0.000 – 0.000 0.000 1.000 1.000"),
}


@pytest.mark.parametrize("key", list(CATEGORY_ROWS), ids=lambda k: "-".join(k))
def test_category_rows(key):
    rows = {(r[0], r[1]): r[2:] for r in md_rows(report_markdown(RUN), "Category")}
    assert rows[key] == CATEGORY_ROWS[key]


def test_category_rows_cover_gold_and_predicted_categories_in_taxonomy_order():
    rows = md_rows(report_markdown(RUN), "Category")
    order = list(dict.fromkeys(r[0] for r in rows))
    assert order == [
        "PERSON",
        "CONTACT_PHONE",
        "LOCATION_FACILITY",
        "ORGANIZATION",
        "DATE",
        "AGE",
    ]
    assert [r[1] for r in rows] == ["alpha", "beta"] * len(order)


def test_names_line_per_system():
    markdown = report_markdown(RUN)
    assert (
        "alpha: 2 of 2 gold person spans touched (1.000); 0 of 2 predicted name spans on "
        "non-persons (0.000)"
    ) in markdown
    assert "beta: 0 of 2 gold person spans touched (0.000); 0 of 0 predicted name spans" in (
        markdown
    )
    assert f"non-persons ({UNDEFINED})" in markdown


def test_header_lists_corpus_metadata_and_systems():
    markdown = report_markdown(RUN)
    for line in (
        "# Evaluation report: toy",
        "- Format: brat",
        "- Documents: 2",
        "- Gold spans: 6",
        "- Machine: test-machine",
        "- Date: 2026-01-02",
        "- **alpha**: test system alpha",
    ):
        assert line in markdown.splitlines()
    assert "50 resamples, seed 3" in markdown


def test_failures_listed_with_code_and_message():
    markdown = report_markdown(RUN)
    assert md_rows(markdown, "File") == [
        ["notes/bad.ann", "PD202", "bad:3: malformed annotation line"]
    ]
    page = report_html(RUN)
    for piece in ("notes/bad.ann", "PD202", "bad:3: malformed annotation line"):
        assert piece in page


def test_no_failures_says_none():
    run = make_run(failures=())
    assert "Unreadable files: none." in report_markdown(run)
    assert "Unreadable files: none." in report_html(run)


# --- JSON ----------------------------------------------------------------------------------


def test_json_round_trips_and_is_stable():
    text = report_json(RUN)
    assert json.loads(text) == json.loads(json.dumps(RUN.to_dict()))
    assert text == report_json(make_run())
    assert text.endswith("}\n")
    assert list(json.loads(text)) == sorted(json.loads(text))
    assert json.loads(text)["failures"][0]["file"] == "notes/bad.ann"


# --- HTML ----------------------------------------------------------------------------------


def test_html_parses_and_has_title_tables_and_accessible_svgs():
    root = parse_html(report_html(RUN))
    assert root.findtext("head/title") == "Evaluation report: toy"
    svgs = list(root.iter("svg"))
    assert len(svgs) == 6  # per system: recall/precision, leak, threshold curve
    for svg in svgs:
        assert svg.get("role") == "img"
        assert svg.findtext("title") and svg.findtext("desc")
        title, desc = svg.find("title"), svg.find("desc")
        assert title is not None and desc is not None
        assert svg.get("aria-labelledby") == f"{title.get('id')} {desc.get('id')}"
    ids = [e.get("id") for e in root.iter() if e.get("id")]
    assert len(ids) == len(set(ids))
    for table in root.iter("table"):
        assert table.find("caption") is not None
        assert all(th.get("scope") == "col" for th in table.iterfind("thead/tr/th"))
        assert all(th.get("scope") == "row" for th in table.iterfind("tbody/tr/th"))


def test_html_tables_match_markdown_numbers():
    root = parse_html(report_html(RUN))
    summary = next(t for t in root.iter("table") if t.findtext("thead/tr/th") == "System")
    rows = [["".join(c.itertext()) for c in tr] for tr in summary.iter("tr")][1:]
    assert rows[0][:-1] == ALPHA_SUMMARY
    assert rows[1] == BETA_SUMMARY


def bars(svg: ET.Element, series: str) -> list[ET.Element]:
    return [r for r in svg.iter("rect") if r.get("class") == f"bar s-{series}"]


def test_bar_charts_have_one_bar_per_defined_category():
    root = parse_html(report_html(RUN))
    pr = svg_by_title(root, "Strict recall and precision by category, alpha")
    # Six categories; recall is undefined for ORGANIZATION (no gold), precision for the
    # facility and the age (nothing predicted): those print "– (undefined)" instead.
    assert len(bars(pr, "R")) == 5
    assert len(bars(pr, "P")) == 4
    texts = [t.text for t in pr.iter("text")]
    assert texts.count(f"R {UNDEFINED} (undefined)") == 1
    assert texts.count(f"P {UNDEFINED} (undefined)") == 2
    assert [t.text for t in pr.iter("text") if t.get("class") == "cat"] == [
        "PERSON",
        "CONTACT_PHONE",
        "LOCATION_FACILITY",
        "ORGANIZATION",
        "DATE",
        "AGE",
    ]
    leak = svg_by_title(root, "Leak (1 − recall), strict and relaxed, by category, alpha")
    assert len(bars(leak, "S")) == len(bars(leak, "L")) == 5


def test_bar_lengths_follow_values():
    pr = svg_by_title(parse_html(report_html(RUN)), "Strict recall and precision by category, beta")
    widths = {float(r.get("width", "nan")) for r in bars(pr, "R")}
    assert widths == {0.0}  # beta finds nothing
    leak = svg_by_title(
        parse_html(report_html(RUN)), "Leak (1 − recall), strict and relaxed, by category, alpha"
    )
    titles = {r.findtext("title"): float(r.get("width", "nan")) for r in bars(leak, "S")}
    assert titles["PERSON: strict leak 0.000"] == 0.0
    assert titles["AGE: strict leak 1.000"] > titles["CONTACT_PHONE: strict leak 0.000"]


def test_threshold_curve_points_and_table():
    root = parse_html(report_html(RUN))
    curve = svg_by_title(root, "Strict micro precision and recall over score threshold, alpha")
    tips = [e.findtext("title") for e in curve.iter() if e.get("class") == "point"]
    assert "threshold 0.5: precision 0.750" in tips
    assert "threshold 0.9: recall 0.333" in tips
    assert len(tips) == 20  # ten thresholds × precision and recall
    # beta predicts nothing: precision is undefined (no point), recall 0 at every threshold.
    empty = svg_by_title(root, "Strict micro precision and recall over score threshold, beta")
    tips = [e.findtext("title") or "" for e in empty.iter() if e.get("class") == "point"]
    assert len(tips) == 10 and all(t.endswith("recall 0.000") for t in tips)
    curve_table = next(
        t for t in root.iter("table") if "alpha: strict micro P/R" in (t.findtext("caption") or "")
    )
    cells = [[c.text for c in tr] for tr in curve_table.iter("tr")][1:]
    assert cells[5] == ["0.5", "0.750", "0.500", "4"]
    assert cells[0] == ["0.0", "0.600", "0.500", "5"]


def test_html_is_self_contained():
    page = report_html(RUN)
    assert "http" not in page
    assert "<script" not in page and "src=" not in page and "<link" not in page
    assert set(re.findall(r"url\((.)", page)) <= {"#"}


# --- escaping and privacy --------------------------------------------------------------------

HOSTILE = "<b>a|b</b> & *c*"


def test_hostile_names_are_escaped():
    failure = ReadFailure(f"{HOSTILE}.ann", RecordError("bad", location="x:1"))
    run = make_run(failures=(failure,), corpus=HOSTILE)
    page = report_html(run)
    assert "<b>" not in page and "&lt;b&gt;a|b&lt;/b&gt; &amp; *c*" in page
    parse_html(page)
    markdown = report_markdown(run)
    assert "<b>" not in markdown
    assert md_rows(markdown, "File") == [[f"{HOSTILE}.ann", "PD202", "x:1: bad"]]


def test_no_document_text_in_any_output(tmp_path: Path):
    outputs = [
        report_json(RUN),
        report_markdown(RUN),
        report_html(RUN),
        quality_markdown([RUN], title="t", command="polydeid evaluate"),
    ]
    outputs += [p.read_text(encoding="utf-8") for p in write_report(RUN, tmp_path).values()]
    for i, out in enumerate(outputs):
        for j, secret in enumerate(SECRETS):
            assert secret not in out, f"fixture piece {j} in output {i}"


# --- files -----------------------------------------------------------------------------------


def test_write_report_writes_three_files_atomically(tmp_path: Path):
    out = tmp_path / "new" / "dir"
    paths = write_report(RUN, out)
    assert set(paths) == {"json", "markdown", "html"}
    assert sorted(p.name for p in out.iterdir()) == ["report.html", "report.json", "report.md"]
    assert paths["json"].read_text(encoding="utf-8") == report_json(RUN)
    assert paths["markdown"].read_text(encoding="utf-8") == report_markdown(RUN)
    assert paths["html"].read_text(encoding="utf-8") == report_html(RUN)
    paths["json"].write_text("stale", encoding="utf-8")
    write_report(RUN, out)
    assert paths["json"].read_text(encoding="utf-8") == report_json(RUN)
    assert len(list(out.iterdir())) == 3  # no temporary file left behind


# --- the multi-corpus page -------------------------------------------------------------------


def test_quality_markdown_has_a_section_per_corpus():
    page = quality_markdown(
        [make_run(corpus="first"), make_run(corpus="second", failures=())],
        title="Quality",
        command="python benchmarks/quality.py --bootstrap 50",
    )
    lines = page.splitlines()
    assert lines[0] == "# Quality"
    assert "```\npython benchmarks/quality.py --bootstrap 50\n```" in page
    assert [line for line in lines if line.startswith("## ")] == ["## first", "## second"]
    assert lines.count("### Summary") == lines.count("### Per category") == 2
    assert page.count(f"| {' | '.join(ALPHA_SUMMARY)} |") == 2
    second = page[page.index("## second") :]
    assert md_rows(second, "System")[1] == BETA_SUMMARY
    assert "Unreadable files: none." in second


def test_quality_markdown_command_keeps_inner_backticks():
    assert "```\nx --y\n```" in quality_markdown([], title="Q", command="`x --y`")
    assert "````\na ``` b\n````" in quality_markdown([], title="Q", command="a ``` b")


def test_quality_markdown_of_no_runs():
    assert "No corpus was evaluated." in quality_markdown([], title="Q", command="x")


# --- properties ------------------------------------------------------------------------------

LABELS = [C.PERSON, C.DATE, C.AGE, C.CONTACT_PHONE, C.ORGANIZATION]


@st.composite
def predictions(draw: st.DrawFn) -> dict[str, list[Span]]:
    out: dict[str, list[Span]] = {}
    for doc in DOCS:
        spans = []
        for _ in range(draw(st.integers(0, 4))):
            start = draw(st.integers(0, len(doc.text) - 2))
            end = draw(st.integers(start + 1, len(doc.text)))
            label = draw(st.sampled_from(LABELS))
            spans.append(Span(start, end, label, "h", draw(st.floats(0.0, 1.0))))
        out[doc.id] = spans
    return out


@settings(max_examples=30, deadline=None)
@given(predictions())
def test_any_predictions_render_consistently(preds: dict[str, list[Span]]):
    result = system("gamma", preds, cis=False)
    run = EvaluationRun("toy", "brat", 2, 6, (result,), machine="m", created="d")
    page = report_html(run)
    root = parse_html(page)
    markdown = report_markdown(run)
    rows = md_rows(markdown, "Category")
    labels = {r[0] for r in rows}
    assert {"PERSON", "DATE", "AGE", "CONTACT_PHONE", "LOCATION_FACILITY"} <= labels
    pr = svg_by_title(root, "Strict recall and precision by category, gamma")
    # Every category has gold or predictions; recall bars exist exactly where gold does.
    assert len(bars(pr, "R")) == sum(1 for r in rows if r[2] != "0")
    for row in rows:
        for cell in row[4:]:
            assert cell == UNDEFINED or re.fullmatch(r"[01]\.\d{3}", cell)
    assert "nan" not in page.lower() and "nan" not in markdown.lower()
