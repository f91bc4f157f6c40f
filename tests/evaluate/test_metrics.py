"""Tests of the de-identification metrics, against a hand-computed three-document corpus."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category, Fact
from polydeid.corpora.document import AnnotatedDocument
from polydeid.evaluate.metrics import (
    PRF,
    CopyCheck,
    Scores,
    TitleConvention,
    copied_value_error,
    score_corpus,
    score_document,
    title_convention,
    tokenize,
)

C = Category
P, PTP, DATE, AGE = C.PERSON, C.PERSON_THIRD_PARTY, C.DATE, C.AGE
LF, LV, PHONE = C.LOCATION_FACILITY, C.LOCATION_VILLAGE, C.CONTACT_PHONE


def at(text: str, piece: str, label: Category | Fact, nth: int = 0, source: str = "t") -> Span:
    """The span of the ``nth`` occurrence of ``piece`` in ``text``."""
    start = -1
    for _ in range(nth + 1):
        start = text.index(piece, start + 1)
    return Span(start, start + len(piece), label, source)


# --- the hand-computed corpus -------------------------------------------------------------
#
# d1 "Amina Okello seen 12/03/2021 at Mulago Hospital, dose 5 mg."
#   gold  G1 PERSON "Amina Okello"   G2 DATE "12/03/2021"   G3 LOCATION_FACILITY "Mulago Hospital"
#   fact  DOSE "5 mg"
#   pred  P1 PERSON = G1   P2 DATE = G2   P4 DATE = G2 again (duplicate, other source)
#         P3 LOCATION_VILLAGE on exactly G3's offsets (wrong category, same coarse group)
#         P5 AGE "5" inside the dose (false positive that changes a fact)
# d2 "Seen by Kato Ssali and Nakato Auma; call 0772 123456 or 0772 654321."
#   gold  G4 PTP "Kato Ssali"   G5 PTP "Nakato Auma"   G6 PHONE first number   G7 PHONE second
#   pred  P6 PTP "Kato Ssali and Nakato Auma" (one prediction over two gold spans)
#         P7 PHONE = G6   P8 PHONE "123456" nested in G6/P7   P9 PERSON "Seen" (not a person)
# d3 "No identifiers here, pulse 80."   no gold; fact VITAL "80"; pred P10 DATE "here"
#
# Distinct predictions: 9 (P4 is P2). Gold spans: 7.
# strict per category (tp/pred/gold): PERSON 1/2/1, DATE 1/2/1, LF 0/0/1, LV 0/1/0, AGE 0/1/0,
#   PTP 0/1/2, PHONE 1/2/2 -> micro 3/9/7: P=1/3, R=3/7, F1=6/16=0.375
#   macro P over 6 categories with predictions (.5,.5,0,0,0,.5) = 0.25
#   macro R over 5 categories with gold (1,1,0,0,.5) = 0.5; macro F1 (2/3,2/3,0,0,.5)/5 = 11/30
# relaxed (correct/pred, found/gold): PERSON 1/2,1/1  DATE 1/2,1/1  LF 0/0,0/1  LV 0/1  AGE 0/1
#   PTP 1/1,2/2  PHONE 2/2,1/2 -> micro P=5/9, R=5/7, F1=0.625
# span_strict (offsets only): tp 4 (P1,P2,P3,P7) -> P=4/9, R=4/7
# span_overlap: gold found 6/7 (all but G7), predictions correct 6/9 (not P5,P9,P10)
# coarse_strict: tp 4 (NAME P1, DATE P2, LOCATION P3, CONTACT P7) of 9 pred, 7 gold -> F1 0.5
# tokens (gold/pred/agreeing): PERSON 2/3/2, DATE 3/4/3, LF 2/0/0, LV 0/2/0, AGE 0/1/0,
#   PTP 4/5/4 ("and" is a predicted PTP token), PHONE 4/2/2 -> micro 11/17 P, 11/15 R
#   binary: 13 tokens both PHI, 17 predicted, 15 gold
# chars: predicted union 38+41+4=83, gold union 37+43+0=80, overlap 37+32+0=69
#   over-redaction 14/83, missed 11/80
# facts: 2 gold facts, 1 changed (the dose) -> 0.5
# names: gold persons 3 (G1,G4,G5), all touched; predicted names 3 (P1,P6,P9), 1 on no person

D1 = "Amina Okello seen 12/03/2021 at Mulago Hospital, dose 5 mg."
D2 = "Seen by Kato Ssali and Nakato Auma; call 0772 123456 or 0772 654321."
D3 = "No identifiers here, pulse 80."


def corpus() -> tuple[list[AnnotatedDocument], dict[str, list[Span]]]:
    docs = [
        AnnotatedDocument(
            "d1",
            D1,
            "en",
            (at(D1, "Amina Okello", P), at(D1, "12/03/2021", DATE), at(D1, "Mulago Hospital", LF)),
            facts=(at(D1, "5 mg", Fact.DOSE),),
        ),
        AnnotatedDocument(
            "d2",
            D2,
            "en",
            (
                at(D2, "Kato Ssali", PTP),
                at(D2, "Nakato Auma", PTP),
                at(D2, "0772 123456", PHONE),
                at(D2, "0772 654321", PHONE),
            ),
        ),
        AnnotatedDocument("d3", D3, "en", (), facts=(at(D3, "80", Fact.VITAL),)),
    ]
    preds = {
        "d1": [
            at(D1, "Amina Okello", P),
            at(D1, "12/03/2021", DATE),
            at(D1, "Mulago Hospital", LV),
            at(D1, "12/03/2021", DATE, source="other"),
            at(D1, "5", AGE),
        ],
        "d2": [
            at(D2, "Kato Ssali and Nakato Auma", PTP),
            at(D2, "0772 123456", PHONE),
            at(D2, "123456", PHONE),
            at(D2, "Seen", P),
        ],
        "d3": [at(D3, "here", DATE)],
    }
    return docs, preds


@pytest.fixture(scope="module")
def scores() -> Scores:
    docs, preds = corpus()
    return score_corpus(docs, preds)


def counts(prf: PRF) -> tuple[int, int, int, int]:
    return prf.correct_predicted, prf.predicted, prf.found_gold, prf.gold


def test_the_dose_offset_helper_points_at_the_dose():
    assert D1[at(D1, "5", AGE).start :].startswith("5 mg")


STRICT = {
    "PERSON": (1, 2, 1, 1),
    "DATE": (1, 2, 1, 1),
    "LOCATION_FACILITY": (0, 0, 0, 1),
    "LOCATION_VILLAGE": (0, 1, 0, 0),
    "AGE": (0, 1, 0, 0),
    "PERSON_THIRD_PARTY": (0, 1, 0, 2),
    "CONTACT_PHONE": (1, 2, 1, 2),
}


@pytest.mark.parametrize("label", sorted(STRICT))
def test_strict_per_category(scores: Scores, label: str):
    assert counts(scores.strict[label]) == STRICT[label]


def test_strict_micro_and_macro(scores: Scores):
    micro = scores.strict.micro
    assert counts(micro) == (3, 9, 3, 7)
    assert micro.precision == pytest.approx(1 / 3)
    assert micro.recall == pytest.approx(3 / 7)
    assert micro.f1 == pytest.approx(0.375)
    macro = scores.strict.macro
    assert macro.precision == pytest.approx(0.25)
    assert macro.recall == pytest.approx(0.5)
    assert macro.f1 == pytest.approx(11 / 30)


def test_strict_per_category_rates_and_undefined(scores: Scores):
    assert scores.strict["PERSON"].f1 == pytest.approx(2 / 3)
    facility = scores.strict["LOCATION_FACILITY"]
    assert (facility.precision, facility.recall, facility.f1, facility.leak) == (None, 0, 0, 1)
    village = scores.strict["LOCATION_VILLAGE"]
    assert (village.precision, village.recall, village.f1, village.leak) == (0, None, None, None)


RELAXED = {
    "PERSON": (1, 2, 1, 1),
    "DATE": (1, 2, 1, 1),
    "LOCATION_FACILITY": (0, 0, 0, 1),
    "LOCATION_VILLAGE": (0, 1, 0, 0),
    "AGE": (0, 1, 0, 0),
    "PERSON_THIRD_PARTY": (1, 1, 2, 2),
    "CONTACT_PHONE": (2, 2, 1, 2),
}


@pytest.mark.parametrize("label", sorted(RELAXED))
def test_relaxed_per_category(scores: Scores, label: str):
    assert counts(scores.relaxed[label]) == RELAXED[label]


def test_relaxed_micro_uses_different_counts_for_p_and_r(scores: Scores):
    micro = scores.relaxed.micro
    assert counts(micro) == (5, 9, 5, 7)
    assert micro.precision == pytest.approx(5 / 9)
    assert micro.recall == pytest.approx(5 / 7)
    assert micro.f1 == pytest.approx(0.625)
    phone = scores.relaxed["CONTACT_PHONE"]
    assert (phone.precision, phone.recall) == (1.0, 0.5)


def test_leak_strict_and_relaxed(scores: Scores):
    assert scores.strict["PERSON_THIRD_PARTY"].leak == 1.0
    assert scores.relaxed["PERSON_THIRD_PARTY"].leak == 0.0
    assert scores.relaxed["CONTACT_PHONE"].leak == 0.5
    assert scores.strict.micro.leak == pytest.approx(4 / 7)
    assert scores.relaxed.micro.leak == pytest.approx(2 / 7)


def test_label_agnostic_spans(scores: Scores):
    assert counts(scores.span_strict) == (4, 9, 4, 7)
    assert counts(scores.span_overlap) == (6, 9, 6, 7)
    assert scores.span_overlap.recall == pytest.approx(6 / 7)


def test_coarse_strict(scores: Scores):
    assert counts(scores.coarse_strict.micro) == (4, 9, 4, 7)
    assert scores.coarse_strict.micro.f1 == pytest.approx(0.5)
    assert counts(scores.coarse_strict["LOCATION"]) == (1, 1, 1, 1)
    assert counts(scores.coarse_strict["NAME"]) == (1, 3, 1, 3)


TOKENS = {
    "PERSON": (2, 3, 2, 2),
    "DATE": (3, 4, 3, 3),
    "LOCATION_FACILITY": (0, 0, 0, 2),
    "LOCATION_VILLAGE": (0, 2, 0, 0),
    "AGE": (0, 1, 0, 0),
    "PERSON_THIRD_PARTY": (4, 5, 4, 4),
    "CONTACT_PHONE": (2, 2, 2, 4),
}


@pytest.mark.parametrize("label", sorted(TOKENS))
def test_token_per_category(scores: Scores, label: str):
    assert counts(scores.token[label]) == TOKENS[label]


def test_token_micro_and_binary(scores: Scores):
    assert counts(scores.token.micro) == (11, 17, 11, 15)
    assert counts(scores.token_binary) == (13, 17, 13, 15)
    assert scores.token_binary.recall == pytest.approx(13 / 15)


def test_over_redaction_and_missed_characters(scores: Scores):
    assert (scores.chars.predicted, scores.chars.gold, scores.chars.overlap) == (83, 80, 69)
    assert scores.over_redaction == pytest.approx(14 / 83)
    assert scores.chars.missed == pytest.approx(11 / 80)


def test_facts_changed(scores: Scores):
    assert (scores.facts.facts, scores.facts.changed) == (2, 1)
    assert scores.facts.changed_rate == 0.5


def test_given_fact_spans_replace_the_documents_own():
    docs, preds = corpus()
    rule_facts = {"d2": [at(D2, "123456", Fact.QUANTITY), at(D2, "654321", Fact.QUANTITY)]}
    s = score_corpus(docs, preds, facts=rule_facts)
    # d1's dose is no longer counted; in d2 P7/P8 cover the first number, nothing the second.
    assert (s.facts.facts, s.facts.changed) == (2, 1)
    assert s.per_document["d1"].facts.facts == 0


def test_name_counts(scores: Scores):
    names = scores.names
    assert (names.gold_persons, names.gold_persons_found) == (3, 3)
    assert (names.predicted_names, names.names_on_non_persons) == (3, 1)
    assert names.non_person_rate == pytest.approx(1 / 3)


def test_gold_person_touched_by_any_category_counts_as_found():
    text = "Okello Ward"
    gold = [at(text, "Okello", P)]
    s = score_document(gold, [at(text, "Okello Ward", LF)], text)
    assert (s.names.gold_persons_found, s.names.predicted_names) == (1, 0)
    assert s.strict["PERSON"].recall == 0.0


def test_corpus_total_is_sum_of_documents(scores: Scores):
    assert scores.n_documents == 3
    assert sorted(scores.per_document) == ["d1", "d2", "d3"]
    assert Scores.total(scores.per_document.values()).to_dict() == scores.to_dict()
    d3 = scores.per_document["d3"].strict.micro
    assert (d3.precision, d3.recall, d3.f1) == (0.0, None, None)


def test_to_dict_is_json_and_carries_no_text(scores: Scores):
    dumped = json.dumps(scores.to_dict(per_document=True))
    for piece in ("Amina", "Okello", "Kato", "Nakato", "0772", "12/03", "Mulago", "here"):
        assert piece not in dumped
    assert json.loads(dumped)["strict"]["micro"]["f1"] == pytest.approx(0.375)
    assert "per_document" not in scores.to_dict()


# --- edge cases ------------------------------------------------------------------------------

TEXT = "Amina Okello 12/03/2021"
NAME, WHEN = at(TEXT, "Amina Okello", P), at(TEXT, "12/03/2021", DATE)


def test_empty_gold_and_empty_prediction_are_all_undefined():
    s = score_document([], [], TEXT)
    m = s.strict.micro
    assert (m.precision, m.recall, m.f1, m.leak) == (None, None, None, None)
    assert s.strict.macro.f1 is None
    assert s.over_redaction is None
    assert s.facts.changed_rate is None


def test_empty_gold_defines_precision_only():
    m = score_document([], [NAME], TEXT).strict.micro
    assert (m.precision, m.recall, m.f1) == (0.0, None, None)


def test_empty_prediction_gives_zero_recall_and_f1():
    s = score_document([NAME, WHEN], [], TEXT)
    m = s.relaxed.micro
    assert (m.precision, m.recall, m.f1, m.leak) == (None, 0.0, 0.0, 1.0)
    assert s.token_binary.recall == 0.0


def test_duplicates_count_once():
    twice = [NAME, Span(NAME.start, NAME.end, P, "other", 0.5)]
    s = score_document([NAME, NAME], twice, TEXT)
    assert counts(s.strict.micro) == (1, 1, 1, 1)
    assert counts(s.relaxed.micro) == (1, 1, 1, 1)
    assert s.names.predicted_names == 1


def test_one_prediction_over_two_gold_spans_finds_both_in_relaxed():
    text = "Amina Okello"
    gold = [at(text, "Amina", P), at(text, "Okello", P)]
    s = score_document(gold, [at(text, "Amina Okello", P)], text)
    assert counts(s.relaxed.micro) == (1, 1, 2, 2)
    assert counts(s.strict.micro) == (0, 1, 0, 2)
    assert counts(s.token.micro) == (2, 2, 2, 2)


def test_nested_and_overlapping_predictions_are_all_correct_when_relaxed():
    preds = [NAME, at(TEXT, "Amina", P), at(TEXT, "Okello 12", P)]
    s = score_document([NAME], preds, TEXT)
    assert counts(s.relaxed.micro) == (3, 3, 1, 1)
    assert counts(s.strict.micro) == (1, 3, 1, 1)
    # Union of predictions "Amina Okello 12" is 15 chars, 12 of them gold.
    assert (s.chars.predicted, s.chars.overlap) == (15, 12)


def test_adjacent_spans_do_not_overlap():
    text = "abcdefgh"
    s = score_document([Span(0, 5, P, "g")], [Span(5, 8, P, "p")], text)
    assert counts(s.relaxed.micro) == (0, 1, 0, 1)
    assert s.names.gold_persons_found == 0


def test_predicted_fact_spans_are_ignored():
    s = score_document([NAME], [NAME, Span(13, 15, Fact.DOSE, "rule.facts")], TEXT)
    assert counts(s.strict.micro) == (1, 1, 1, 1)


def test_categories_restrict_every_metric():
    s = score_document([NAME, WHEN], [NAME, at(TEXT, "12", AGE)], TEXT, categories=[P, AGE])
    assert sorted(s.strict.per_label) == ["AGE", "PERSON"]
    assert counts(s.strict.micro) == (1, 2, 1, 1)
    assert s.chars.gold == len("Amina Okello")
    assert sorted(s.coarse_strict.per_label) == ["AGE", "NAME"]


def test_requested_categories_appear_with_zero_counts():
    s = score_document([], [], TEXT, categories=[C.RELIGION])
    assert counts(s.strict["RELIGION"]) == (0, 0, 0, 0)
    assert "RELIGION" in s.to_dict()["strict"]["per_label"]


def test_prediction_past_the_end_raises_without_text():
    with pytest.raises(ValueError, match=r"predicted span 20:40 PERSON") as info:
        score_document([], [Span(20, 40, P, "p")], TEXT)
    assert "Amina" not in str(info.value)


def test_token_label_goes_to_the_most_overlapping_span():
    text = "Mukasa-Okello"
    # Two tokens; the PERSON prediction covers 6 + 1 characters, the DATE one 0 + 6.
    gold = [Span(0, 13, P, "g")]
    preds = [Span(0, 8, P, "p"), Span(7, 13, DATE, "p")]
    s = score_document(gold, preds, text)
    assert counts(s.token["PERSON"]) == (1, 1, 1, 2)
    assert counts(s.token["DATE"]) == (0, 1, 0, 0)
    tie = score_document([], [Span(0, 3, DATE, "p"), Span(3, 6, AGE, "p")], "Mukasa")
    assert counts(tie.token["DATE"]) == (0, 1, 0, 0)
    assert "AGE" not in tie.token.per_label
    same = score_document([], [Span(0, 6, DATE, "p"), Span(0, 6, AGE, "p")], "Mukasa")
    assert counts(same.token["AGE"]) == (0, 1, 0, 0)  # full tie: the category name decides
    assert "DATE" not in same.token.per_label


def test_span_starting_at_a_token_end_does_not_claim_that_token():
    # "ab.cd": the span ".cd" (2:5) begins where the token "ab" ends; only "cd" is inside.
    s = score_document([Span(2, 5, P, "g")], [Span(0, 2, P, "p")], "ab.cd")
    assert counts(s.token_binary) == (0, 1, 0, 1)


TOKEN_CASES = [
    ("张伟住在北京", 6),
    ("राम कुमार", 2),
    ("Nguyễn Văn An", 3),
    ("ሰላም ዓለም", 2),
    ("12/03/2021, Dr. O'Neil", 6),
    ("", 0),
]


@pytest.mark.parametrize(("text", "n"), TOKEN_CASES, ids=[f"case{i}" for i in range(6)])
def test_tokenize_counts(text: str, n: int):
    starts, ends = tokenize(text)
    assert len(starts) == len(ends) == n
    assert all(a < b for a, b in zip(starts, ends, strict=True))


def test_score_corpus_checks_document_ids():
    docs, preds = corpus()
    with pytest.raises(ValueError, match="no predictions"):
        score_corpus(docs, {k: v for k, v in preds.items() if k != "d3"})
    partial = score_corpus(docs, {"d1": preds["d1"]}, allow_missing=True)
    assert partial.per_document["d2"].strict.micro.predicted == 0
    with pytest.raises(ValueError, match="1 prediction key"):
        score_corpus(docs, {**preds, "zz": []})
    with pytest.raises(ValueError, match="twice"):
        score_corpus([docs[0], docs[0]], preds)


# --- copied values ---------------------------------------------------------------------------


def test_copied_value_error():
    text = "Seen by Kato  Ssali on 12 March."
    check = copied_value_error(["Kato  Ssali", "Kato Ssali", "12 March", "13 March", ""], text)
    assert (check.values, check.not_in_source) == (5, 3)
    squashed = copied_value_error(["Kato Ssali", " "], text, normalize_space=True)
    assert (squashed.values, squashed.not_in_source) == (2, 1)
    total = check + squashed
    assert total.error_rate == pytest.approx(4 / 7)
    assert CopyCheck().error_rate is None
    assert total.to_dict() == {"values": 7, "not_in_source": 4, "error_rate": 4 / 7}


# --- properties ------------------------------------------------------------------------------

LABELS = [P, PTP, DATE, PHONE]
SIZE = 40
spans_st = st.lists(
    st.tuples(st.integers(0, SIZE - 1), st.integers(1, 8), st.sampled_from(LABELS)).map(
        lambda t: Span(t[0], min(t[0] + t[1], SIZE), t[2], "h")
    ),
    max_size=12,
)
TEXTS = st.text(alphabet="ab .-", min_size=SIZE, max_size=SIZE)


def brute_relaxed(gold: list[Span], pred: list[Span]) -> tuple[int, int, int, int]:
    g = {(s.start, s.end, s.label) for s in gold}
    p = {(s.start, s.end, s.label) for s in pred}

    def touch(a: tuple, b: tuple) -> bool:
        return a[2] == b[2] and a[0] < b[1] and b[0] < a[1]

    return (
        sum(any(touch(x, y) for y in g) for x in p),
        len(p),
        sum(any(touch(x, y) for y in p) for x in g),
        len(g),
    )


@settings(max_examples=150, deadline=None)
@given(gold=spans_st, pred=spans_st, text=TEXTS)
def test_relaxed_matches_brute_force(gold: list[Span], pred: list[Span], text: str):
    s = score_document(gold, pred, text)
    assert counts(s.relaxed.micro) == brute_relaxed(gold, pred)
    assert s.strict.micro.found_gold <= s.relaxed.micro.found_gold
    assert s.span_strict.gold == len({(x.start, x.end) for x in gold})
    assert s.chars.overlap <= min(s.chars.gold, s.chars.predicted)


@settings(max_examples=80, deadline=None)
@given(gold=spans_st, text=TEXTS)
def test_perfect_prediction_scores_one(gold: list[Span], text: str):
    s = score_document(gold, list(reversed(gold)) * 2, text)
    for prf in (s.strict.micro, s.relaxed.micro, s.span_strict, s.coarse_strict.micro):
        assert prf.f1 == (1.0 if gold else None)
    assert s.over_redaction == (0.0 if gold else None)


@settings(max_examples=80, deadline=None)
@given(gold=spans_st, pred=spans_st, text=TEXTS)
def test_rates_stay_in_unit_interval(gold: list[Span], pred: list[Span], text: str):
    s = score_document(gold, pred, text)
    for prf in (s.strict.micro, s.relaxed.micro, s.token.micro, s.token_binary, s.span_overlap):
        for value in (prf.precision, prf.recall, prf.f1):
            assert value is None or 0.0 <= value <= 1.0
    starts, ends = tokenize(text)
    assert all(end <= nxt for end, nxt in zip(ends, starts[1:], strict=False))


def test_title_convention_counts_where_the_gold_writes_titles() -> None:
    text = "Seen by Dr. Ana Ruiz; Mr. Lee's son Tom called. Ref: DR Patel, Mrs.  Kato."
    spans = (
        at(text, "Dr. Ana Ruiz", P),  # title inside
        at(text, "Lee", P),  # "Mr." right before: outside
        at(text, "Tom", PTP),  # untitled ("son" is no title)
        at(text, "Patel", PTP),  # "DR" without a dot, any case: outside
        at(text, "Kato", P),  # two spaces after the title: outside
        at(text, "Ref", DATE),  # not a person: not counted
    )
    doc = AnnotatedDocument("t", text, "en", tuple(sorted(spans, key=lambda s: s.start)))
    counts = title_convention(doc, {"dr", "mr", "mrs"})
    assert counts == TitleConvention(inside=1, outside=3, untitled=1)
    assert counts.ceiling == pytest.approx(4 / 5)  # the untitled name and the three outside
    assert counts.reachable == 4
    total = counts + TitleConvention(inside=4)
    assert (total.persons, total.ceiling) == (9, pytest.approx(6 / 9))
    assert TitleConvention().ceiling is None
