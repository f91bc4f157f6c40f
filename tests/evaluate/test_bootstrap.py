"""Tests of bootstrap intervals over documents and of mean ± SD over runs."""

from __future__ import annotations

import json
import random
import statistics

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category
from polydeid.corpora.document import AnnotatedDocument
from polydeid.evaluate.bootstrap import bootstrap_ci, mean_sd, percentile
from polydeid.evaluate.metrics import Scores, score_corpus, score_document

P = Category.PERSON
TEXT = "Amina Okello and Kato Ssali."
FIRST, SECOND = Span(0, 12, P, "g"), Span(17, 27, P, "g")


def doc(doc_id: str, gold: tuple[Span, ...] = (FIRST,)) -> AnnotatedDocument:
    return AnnotatedDocument(doc_id, TEXT, "en", gold)


# Corpus A/B: "a" is perfect (1 correct of 1, 1 found of 1); "b" misses its gold span and
# predicts a wrong one (0 of 1, 0 of 1). A resample of two documents is aa, ab/ba or bb, so
# precision = recall = F1 is 1, 0.5 or 0, with chances 1/4, 1/2, 1/4.
def two_documents() -> Scores:
    wrong = Span(13, 16, P, "p")
    return score_corpus([doc("a"), doc("b")], {"a": [FIRST], "b": [wrong]})


def test_single_document_interval_is_a_point():
    scores = score_corpus([doc("a", (FIRST, SECOND))], {"a": [FIRST, Span(13, 16, P, "p")]})
    cis = bootstrap_ci(scores, n_resamples=50, seed=1)
    strict = cis["strict"]
    # 1 correct of 2 predicted, 1 found of 2 gold.
    assert (strict["precision"].low, strict["precision"].high) == (0.5, 0.5)
    assert strict["f1"].estimate == 0.5
    assert strict["recall"].n_defined == 50


def test_two_document_interval_spans_the_possible_values():
    cis = bootstrap_ci(two_documents(), n_resamples=400, seed=7)
    for mode in ("strict", "relaxed"):
        f1 = cis[mode]["f1"]
        assert f1.estimate == 0.5
        assert (f1.low, f1.high) == (0.0, 1.0)


def test_narrow_level_interval_is_the_middle_value():
    # At level 0.1 the interval runs from the 45th to the 55th percentile: both 0.5.
    cis = bootstrap_ci(two_documents(), n_resamples=400, seed=7, level=0.1)
    assert (cis["strict"]["recall"].low, cis["strict"]["recall"].high) == (0.5, 0.5)


def test_same_seed_same_interval_other_seed_may_differ():
    docs = [doc(f"d{i}") for i in range(30)]
    rng = random.Random(3)
    preds = {d.id: [FIRST] if rng.random() < 0.7 else [SECOND] for d in docs}
    scores = score_corpus(docs, preds)
    first = bootstrap_ci(scores, n_resamples=200, seed=11).to_dict()
    again = bootstrap_ci(scores, n_resamples=200, seed=11).to_dict()
    assert first == again
    assert bootstrap_ci(scores, n_resamples=200, seed=12).to_dict() != first
    assert json.loads(json.dumps(first))["seed"] == 11


def test_matches_an_independent_resampler():
    docs = [doc(f"d{i}") for i in range(12)]
    preds = {d.id: [FIRST] if i % 3 else [SECOND] for i, d in enumerate(docs)}
    scores = score_corpus(docs, preds)
    cis = bootstrap_ci(scores, n_resamples=300, seed=5)
    # The same draws, done by hand: recall of a resample = share of drawn documents found.
    found = [1 if i % 3 else 0 for i in range(12)]
    rng = random.Random(5)
    recalls = sorted(sum(found[i] for i in rng.choices(range(12), k=12)) / 12 for _ in range(300))
    assert cis["strict"]["recall"].low == pytest.approx(percentile(recalls, 0.025))
    assert cis["strict"]["recall"].high == pytest.approx(percentile(recalls, 0.975))


def test_undefined_resamples_are_left_out_and_counted():
    # "c" has no gold and one false positive: a resample of only "c" has no recall.
    scores = score_corpus([doc("a"), doc("c", ())], {"a": [FIRST], "c": [SECOND]})
    interval = bootstrap_ci(scores, n_resamples=200, seed=0)["strict"]["recall"]
    assert 0 < interval.n_defined < 200
    assert (interval.low, interval.high) == (1.0, 1.0)


def test_bootstrap_needs_per_document_scores():
    lone = score_document([FIRST], [FIRST], TEXT)
    with pytest.raises(ValueError, match="per-document"):
        bootstrap_ci(lone)
    with pytest.raises(ValueError, match="n_resamples"):
        bootstrap_ci(two_documents(), n_resamples=0)
    with pytest.raises(ValueError, match="level"):
        bootstrap_ci(two_documents(), level=1.0)


PERCENTILES = [([1.0, 2.0, 3.0, 4.0], 0.5, 2.5), ([1.0, 2.0, 3.0, 4.0], 0.25, 1.75)]
PERCENTILES += [([5.0], 0.9, 5.0), ([0.0, 10.0], 0.975, 9.75), ([0.0, 10.0], 0.0, 0.0)]


@pytest.mark.parametrize(("values", "q", "expected"), PERCENTILES)
def test_percentile_interpolates_linearly(values: list[float], q: float, expected: float):
    assert percentile(values, q) == pytest.approx(expected)


def test_percentile_rejects_bad_input():
    with pytest.raises(ValueError):
        percentile([], 0.5)
    with pytest.raises(ValueError):
        percentile([1.0], 1.5)


@settings(max_examples=40, deadline=None)
@given(
    hits=st.lists(st.booleans(), min_size=1, max_size=15),
    seed=st.integers(0, 2**16),
)
def test_interval_is_ordered_and_in_unit_range(hits: list[bool], seed: int):
    docs = [doc(f"d{i}") for i in range(len(hits))]
    preds = {d.id: [FIRST if hit else SECOND] for d, hit in zip(docs, hits, strict=True)}
    cis = bootstrap_ci(score_corpus(docs, preds), n_resamples=60, seed=seed)
    for mode in ("strict", "relaxed"):
        for interval in cis[mode].values():
            assert interval.low is not None and interval.high is not None
            assert 0.0 <= interval.low <= interval.high <= 1.0


# --- mean ± SD over runs ---------------------------------------------------------------------


def test_mean_sd_over_three_runs():
    # Strict micro F1 of the runs: 1 (FIRST found), 2/3 (FIRST plus a wrong one: P 0.5, R 1)
    # and 0 (only a wrong one) -> mean 5/9.
    runs = [
        score_corpus([doc("a")], {"a": preds}) for preds in ([FIRST], [FIRST, SECOND], [SECOND])
    ]
    summary = mean_sd(runs)
    f1 = summary["strict.micro.f1"]
    assert f1.n == 3
    assert f1.mean == pytest.approx(5 / 9)
    assert f1.sd == pytest.approx(statistics.stdev([1.0, 2 / 3, 0.0]))
    assert summary["strict.micro.predicted"].mean == pytest.approx(4 / 3)
    assert summary.n_runs == 3
    json.dumps(summary.to_dict())


def test_mean_sd_skips_undefined_and_single_run_has_no_sd():
    defined = score_corpus([doc("a")], {"a": [FIRST]})
    undefined = score_corpus([doc("a")], {"a": []})  # no prediction: precision None
    summary = mean_sd([defined, undefined])
    assert summary["strict.micro.precision"].n == 1
    assert summary["strict.micro.recall"].mean == 0.5
    assert mean_sd([defined])["strict.micro.f1"].sd is None
    with pytest.raises(ValueError):
        mean_sd([])


def test_mean_sd_accepts_bootstrap_results():
    runs = [bootstrap_ci(two_documents(), n_resamples=50, seed=s) for s in (1, 2)]
    summary = mean_sd(runs)
    assert summary["strict.f1.estimate"].mean == 0.5
    assert summary["strict.f1.estimate"].sd == 0.0


def test_a_paired_recall_difference_resamples_documents_once_for_both_sides() -> None:
    from polydeid.evaluate.bootstrap import paired_recall_difference

    first = {"a": (3, 4), "b": (2, 2), "c": (0, 0), "d": (5, 6)}
    second = {"a": (2, 4), "b": (2, 2), "c": (0, 0), "d": (4, 6)}
    found = paired_recall_difference(first, second, n_resamples=500, seed=1)
    assert found.estimate == pytest.approx((10 - 8) / 12)
    assert found.low is not None and found.high is not None
    assert 0 <= found.low <= found.estimate <= found.high  # never worse in any document
    same = paired_recall_difference(first, first, n_resamples=200)
    assert (same.estimate, same.low, same.high) == (0.0, 0.0, 0.0)
    assert paired_recall_difference({}, {}).estimate is None
    with pytest.raises(ValueError):
        paired_recall_difference(first, {"a": (1, 4)})
    with pytest.raises(ValueError):
        paired_recall_difference({"a": (1, 4)}, {"a": (1, 5)})


def test_a_paired_f1_difference_resamples_documents_once_for_both_sides() -> None:
    from polydeid.evaluate.bootstrap import paired_f1_difference
    from polydeid.evaluate.metrics import PRF

    # ``first`` finds one more gold span in "a" and "d" and predicts nothing wrong
    first = {"a": PRF(3, 3, 3, 4), "b": PRF(2, 2, 2, 2), "c": PRF(0, 0, 0, 0), "d": PRF(5, 5, 5, 6)}
    second = {
        "a": PRF(2, 2, 2, 4),
        "b": PRF(2, 2, 2, 2),
        "c": PRF(0, 0, 0, 0),
        "d": PRF(4, 4, 4, 6),
    }
    found = paired_f1_difference(first, second, n_resamples=500, seed=1)
    assert found.estimate == pytest.approx(2 * 10 / 22 - 2 * 8 / 20)
    assert found.low is not None and found.high is not None
    assert 0 <= found.low <= found.estimate <= found.high  # never worse in any document
    # one false positive more in one document: a loss whose interval reaches 0
    worse = {**first, "b": PRF(2, 3, 2, 2)}
    lost = paired_f1_difference(worse, first, n_resamples=500, seed=1)
    assert lost.estimate is not None and lost.estimate < 0
    assert lost.high == pytest.approx(0.0)
    same = paired_f1_difference(first, first, n_resamples=200)
    assert (same.estimate, same.low, same.high) == (0.0, 0.0, 0.0)
    assert paired_f1_difference({}, {}).estimate is None
    assert paired_f1_difference({"c": PRF()}, {"c": PRF()}).estimate is None
    with pytest.raises(ValueError):
        paired_f1_difference(first, {"a": PRF()})
