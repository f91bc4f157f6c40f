import json

import pytest

from polydeid import Category, ConfigError, Span
from polydeid.cli import main
from polydeid.corpora.document import AnnotatedDocument, Corpus
from polydeid.evaluate.harness import THRESHOLDS, build_system, evaluate, system_names

TEXT_A = "Simu 0772 123456, alikuja 5 Machi 2024, Hb 11.2 g/dL."
TEXT_B = "Barua pepe: wanjiru.k@example.org; miaka 46."


def corpus() -> Corpus:
    a = AnnotatedDocument(
        id="a",
        text=TEXT_A,
        lang="sw",
        spans=(
            Span(5, 16, Category.CONTACT_PHONE, "gold:PHONE"),
            Span(26, 38, Category.DATE, "gold:DATE"),
        ),
    )
    b = AnnotatedDocument(
        id="b",
        text=TEXT_B,
        lang="sw",
        spans=(
            Span(12, 33, Category.CONTACT_OTHER, "gold:EMAIL"),
            Span(35, 43, Category.AGE, "gold:AGE"),
            Span(0, 5, Category.PERSON, "gold:NAME"),  # not found by the rules: a leak
        ),
    )
    return Corpus("tiny", (a, b))


def test_rules_scored_with_the_shared_scorer():
    run = evaluate(corpus(), ["rules"], bootstrap=50)
    (result,) = run.systems
    micro = result.scores.strict.micro
    assert (micro.gold, micro.predicted, micro.correct_predicted) == (5, 4, 4)
    assert result.scores.strict["PERSON"].leak == 1.0
    assert result.scores.strict["DATE"].recall == 1.0
    assert [p.threshold for p in result.curve] == list(THRESHOLDS)
    assert result.curve[0].recall == pytest.approx(0.8)
    assert result.cis is not None and result.cis["strict"]["f1"].n_defined > 0
    assert run.documents == 2 and run.gold_spans == 5
    json.dumps(run.to_dict())  # JSON-ready


def test_composition_and_unknown_system():
    description, pipeline = build_system("rules.dates.v1+rules.phones.v1")
    assert "rules.dates.v1" in description and len(pipeline.detectors) == 2
    run = evaluate(corpus(), ["rules.dates.v1"], bootstrap=0)
    assert run.systems[0].scores.strict.micro.predicted == 1
    with pytest.raises(ConfigError) as info:
        build_system("nonesuch")
    assert "rules" in str(info.value) and "presidio" in str(info.value)
    assert {"rules", "default", "presidio"} <= set(system_names())


def test_cli_eval_writes_reports_and_lists_bad_files(tmp_path, capsys):
    gold = tmp_path / "gold"
    gold.mkdir()
    record = {
        "id": "a",
        "lang": "sw",
        "text": TEXT_A,
        "spans": [{"start": 5, "end": 16, "label": "CONTACT_PHONE"}],
    }
    (gold / "good.jsonl").write_text(json.dumps(record) + "\n", "utf-8")
    (gold / "bad.jsonl").write_text('{"id": "x", "text": "Secret Person", "spans": [\n', "utf-8")
    out = tmp_path / "report"
    code = main(
        ["eval", "--gold", str(gold), "--format", "jsonl", "--out", str(out), "--bootstrap", "20"]
    )
    assert code == 1  # a file could not be read: reported, the rest scored
    assert {p.name for p in out.iterdir()} >= {"report.json", "report.md", "report.html"}
    report = json.loads((out / "report.json").read_text("utf-8"))
    assert report["documents"] == 1 and len(report["failures"]) == 1
    assert "bad.jsonl" in report["failures"][0]["file"]
    err = capsys.readouterr().err
    assert "rules: strict P/R/F1" in err and "Secret" not in err
    for name in ("report.json", "report.md", "report.html"):
        assert "Secret" not in (out / name).read_text("utf-8")


def test_facts_changed_measured_against_silver_facts():
    from polydeid.core.taxonomy import Fact
    from polydeid.evaluate.harness import SILVER_FACTS, silver_facts

    facts = silver_facts(corpus())
    assert [(s.start, s.end, s.label) for s in facts["a"]] == [(40, 52, Fact.LAB_VALUE)]
    run = evaluate(corpus(), ["rules"], bootstrap=0)
    assert run.facts_reference == SILVER_FACTS
    counts = run.systems[0].scores.facts
    assert counts.changed_rate == 0.0
    assert run.to_dict()["facts_reference"] == SILVER_FACTS


def test_a_corpus_is_scored_only_in_the_categories_its_scheme_marks():
    from polydeid.evaluate.harness import scored_categories
    from polydeid.evaluate.report import report_markdown

    assert scored_categories(None) is None
    assert scored_categories("polydeid") is None  # every category
    asq = scored_categories("asq_phi")
    assert asq is not None and Category.AGE not in asq and Category.SEX not in asq
    # a whole coarse group is in scope: a city tagged as a village is a location all the same
    assert {Category.LOCATION_VILLAGE, Category.PERSON_THIRD_PARTY} <= asq
    # the gold of document b has an age; a scheme without ages leaves it out, and the rules'
    # age becomes "not scored" rather than a false positive
    gold = corpus()
    scoped = Corpus(gold.name, gold.documents, scheme="asq_phi")
    (result,) = evaluate(scoped, ["rules"], bootstrap=0).systems
    (full,) = evaluate(gold, ["rules"], bootstrap=0).systems
    micro = result.scores.strict.micro
    assert (micro.gold, micro.predicted, micro.correct_predicted) == (4, 3, 3)
    assert dict(result.unscored) == {"AGE": 1} and not full.unscored
    # over-redaction and facts changed still see every prediction
    assert result.scores.chars == full.scores.chars
    assert result.scores.facts == full.scores.facts
    run = evaluate(scoped, ["rules"], bootstrap=0)
    page = report_markdown(run)
    assert "Not scored" in page and "AGE 1" in page and "asq" in page
    assert run.to_dict()["scored"] == sorted(c.value for c in asq)
