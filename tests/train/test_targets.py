"""Training targets: the tags a word may take by its corpus, the partial-label loss, and the
value training selects an epoch by."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import pytest

from polydeid.core.spans import Span
from polydeid.core.taxonomy import COARSE_GROUP, Category
from polydeid.detect.tagger.windows import OUTSIDE, TAG_INDEX, TAGS
from polydeid.train import tagger as training
from polydeid.train.targets import Supervision, TagClasses, partial_label_loss, word_classes

NAME_GROUP = {c for c in Category if COARSE_GROUP[c] == "NAME"}


def _tags(*names: str) -> frozenset[int]:
    return frozenset(TAG_INDEX[n] for n in names)


def test_an_exact_corpus_of_every_group_teaches_one_tag_per_word() -> None:
    exact = Supervision()
    assert exact.allowed("B-PERSON") == _tags("B-PERSON")
    assert exact.allowed("I-PERSON_THIRD_PARTY") == _tags("I-PERSON_THIRD_PARTY")
    assert exact.allowed(OUTSIDE) == _tags(OUTSIDE)
    assert Supervision.of_scheme(None, exact=True) == exact


def test_a_news_corpus_teaches_the_group_of_a_span_and_leaves_unannotated_groups_open() -> None:
    news = Supervision.of_scheme("wnut17", exact=False)
    assert news.groups == {"NAME", "LOCATION", "ORGANIZATION"}
    assert news.allowed("B-PERSON") == _tags(*(f"B-{c.value}" for c in NAME_GROUP))
    assert news.allowed("I-PERSON") == _tags(*(f"I-{c.value}" for c in NAME_GROUP))
    assert news.allowed("B-ORGANIZATION") == _tags("B-ORGANIZATION")
    outside = news.allowed(OUTSIDE)
    assert TAG_INDEX[OUTSIDE] in outside
    assert {TAG_INDEX["B-DATE"], TAG_INDEX["I-DATE"], TAG_INDEX["B-CONTACT_PHONE"]} <= outside
    assert not outside & _tags("B-PERSON", "I-PERSON", "B-LOCATION_VILLAGE", "B-ORGANIZATION")


def test_an_exact_corpus_without_ages_does_not_teach_that_an_age_is_no_age() -> None:
    asq = Supervision.of_scheme("asq_phi", exact=True)
    assert asq.allowed("B-PERSON") == _tags("B-PERSON")
    assert _tags(OUTSIDE, "B-AGE", "I-AGE") <= asq.allowed(OUTSIDE)
    assert TAG_INDEX["B-DATE"] not in asq.allowed(OUTSIDE)


def test_word_classes_intern_sets_and_keep_single_tags_as_themselves() -> None:
    text = "Lukas Vogelsang kam am 3. Mai nach Berlin."
    grid = [(0, 5), (6, 15), (16, 19), (20, 22), (23, 25), (26, 29), (30, 34), (35, 41), (41, 42)]
    spans = [Span(0, 15, Category.PERSON, "gold"), Span(35, 41, Category.LOCATION_VILLAGE, "gold")]
    assert [text[s:e] for s, e in grid][1] == "Vogelsang"
    classes = TagClasses()
    exact = word_classes(grid, spans, Supervision(), classes)
    assert exact[:2] == [TAG_INDEX["B-PERSON"], TAG_INDEX["I-PERSON"]]
    assert exact[2] == TAG_INDEX[OUTSIDE] and not classes.sets
    news = word_classes(grid, spans, Supervision.of_scheme("germeval2014", exact=False), classes)
    assert all(k >= len(TAGS) for k in news)  # every word here may take several tags
    assert news[2] == news[3] == news[8]  # outside words share one class
    assert len(classes.sets) == 4  # B-name, I-name, outside, B-place
    table = classes.table()
    assert len(table) == len(TAGS) + 4 and all(len(row) == len(TAGS) for row in table)
    assert [i for i, on in enumerate(table[news[0]]) if on] == sorted(
        TAG_INDEX[f"B-{c.value}"] for c in NAME_GROUP
    )
    with pytest.raises(ValueError):
        classes.index(frozenset())


@pytest.mark.torch
def test_the_partial_label_loss_is_the_cross_entropy_for_single_tags_and_sums_the_allowed() -> None:
    torch = pytest.importorskip("torch")
    generator = torch.Generator().manual_seed(0)
    logits = torch.randn(2, 4, len(TAGS), generator=generator)
    classes = TagClasses()
    both = classes.index(_tags("B-PERSON", "B-PERSON_THIRD_PARTY"))
    table = torch.tensor(classes.table(), dtype=torch.bool)
    single = torch.tensor([[1, 2, -100, 0], [5, -100, -100, 3]])
    expected = torch.nn.functional.cross_entropy(
        logits.reshape(-1, len(TAGS)), single.reshape(-1), ignore_index=-100
    )
    assert float(partial_label_loss(logits, single, table, -100)) == pytest.approx(float(expected))
    mixed = torch.tensor([[both, -100, -100, -100], [-100, -100, -100, -100]])
    p = torch.softmax(logits[0, 0], dim=-1)
    summed = p[TAG_INDEX["B-PERSON"]] + p[TAG_INDEX["B-PERSON_THIRD_PARTY"]]
    assert float(partial_label_loss(logits, mixed, table, -100)) == pytest.approx(
        -math.log(float(summed)), rel=1e-5
    )
    nothing = torch.full((2, 4), -100)
    assert float(partial_label_loss(logits, nothing, table, -100)) == 0.0
    # a name taught either way costs less than either tag alone
    one = classes.index(_tags("B-PERSON"))
    alone = torch.tensor([[one, -100, -100, -100], [-100, -100, -100, -100]])
    assert float(partial_label_loss(logits, mixed, table, -100)) < float(
        partial_label_loss(logits, alone, table, -100)
    )


def test_the_name_value_is_recall_less_the_false_share_above_the_floor() -> None:
    floor = training.NAME_FLOOR
    curve = [
        {"found_rate": 0.95, "non_person_rate": floor + 0.10},  # 0.85
        {"found_rate": 0.90, "non_person_rate": floor - 0.01},  # 0.90
        {"found_rate": 0.80, "non_person_rate": None},  # nothing predicted: 0.80
    ]
    assert training.name_value(curve) == pytest.approx(0.90)
    assert training.name_value([{"found_rate": None, "non_person_rate": 0.0}]) is None


def test_the_selection_value_averages_languages_not_corpora() -> None:
    def dev(name: str, lang: str, selects: bool = True) -> training.DevSet:
        return training.DevSet(name, lang, [], selects=selects)

    entries = [
        (dev("UNER pt", "pt"), {"name_value": 0.6}),
        (dev("LeNER-Br", "pt"), {"name_value": 1.0}),
        (dev("UNER en", "en"), {"name_value": 0.5}),
        (dev("WNUT", "en"), {"name_value": None}),
        (dev("synthetic", "*", selects=False), {"name_value": 0.0}),
    ]
    assert training.selection_value(entries) == pytest.approx((0.8 + 0.5) / 2)
    assert training.selection_value(entries[-1:]) is None


def test_the_epoch_key_follows_the_selection_rule() -> None:
    entry = {
        "dev": {
            "synthetic-unseen": {"strict_micro": {"recall": 0.7}},
            "MEDDOCAN dev (es, clinical)": {"strict_micro": {"recall": 0.9}},
        },
        "selection": 0.8,
    }
    assert training._selection_key("names", entry) == 0.8
    assert training._selection_key("meddocan", entry) == 0.9
    assert training._selection_key("names", {**entry, "selection": None}) == 0.7


def test_every_training_source_is_read_with_spans_and_real_text_teaches_groups(
    shared_data: Callable[..., Path],
) -> None:
    root = shared_data()
    for source in training.TRAIN_SOURCES:
        docs = training.read_source(source, root)
        assert docs and any(d.spans for d in docs), source.name
        assert all(isinstance(s.label, Category | str) for d in docs for s in d.spans)
        if source.limit == "real":
            assert not source.supervision.exact, source.name
            assert source.supervision.groups is not None
    factru = next(s for s in training.TRAIN_SOURCES if s.name == "factrueval-train")
    from polydeid.corpora.splits import in_holdout

    assert not any(in_holdout(d.id) for d in training.read_source(factru, root))
