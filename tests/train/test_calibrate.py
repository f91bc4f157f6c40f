"""Threshold fitting: recall under a precision floor, never above 0.5, corpus scopes honoured."""

from __future__ import annotations

from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category
from polydeid.corpora import AnnotatedDocument
from polydeid.detect.tagger.windows import TAG_INDEX, TAGS, align_tokens
from polydeid.train.calibrate import fit

TEXT = "Mgonjwa Baraka miaka 45 leo"


class _Tagger:
    """Stands in for TaggerModel: one token per word, fixed tag probabilities per word."""

    def __init__(self, per_word: dict[str, tuple[str, float]]):
        self.per_word = per_word

    def predict(self, texts):
        out = []
        for text in texts:
            offsets, ids = [], []
            start = 0
            for word in text.split(" "):
                offsets.append((start, start + len(word)))
                ids.append(len(ids))
                start += len(word) + 1
            aligned = align_tokens(text, ids, offsets)
            probs = []
            for s, e in aligned.grid:
                tag, p = self.per_word.get(text[s:e], ("O", 1.0))
                # the tag wins (argmax) with probability p; O is next; the rest is spread
                other = 0.0 if tag == "O" else min(p - 0.05, 1.0 - p)
                spread = (1.0 - p - other) / (len(TAGS) - 2)
                row = [spread] * len(TAGS)
                row[TAG_INDEX[tag]] = p
                if tag != "O":
                    row[TAG_INDEX["O"]] = other
                probs.append(row)
            out.append((aligned, probs))
        return out


def _doc(doc_id: str, *, age_gold: bool) -> AnnotatedDocument:
    name = TEXT.index("Baraka")
    age = TEXT.index("45")
    spans = [Span(name, name + 6, Category.PERSON, "gold:x")]
    if age_gold:
        spans.append(Span(age, age + 2, Category.AGE, "gold:x"))
    return AnnotatedDocument(id=doc_id, text=TEXT, lang="sw", spans=tuple(spans))


def test_fit_lowers_a_threshold_only_to_gain_recall_above_the_floor() -> None:
    tagger = _Tagger({"Baraka": ("B-PERSON", 0.3), "45": ("B-AGE", 0.9)})
    docs = [_doc("s1", age_gold=True), _doc("s2", age_gold=True)]
    chosen = fit(tagger, docs, floor=0.85)
    threshold, precision, recall, gold = chosen[Category.PERSON]
    # the lowest threshold reaching the best recall (privacy first): 0.05
    assert threshold == 0.05 and recall == 1.0 and precision == 1.0 and gold == 2
    assert chosen[Category.AGE][0] == 0.5  # already found at 0.5: the threshold stays
    assert chosen[Category.DATE] == (0.5, None, None, 0)


def test_predictions_outside_a_corpus_scope_do_not_count_against_a_category() -> None:
    tagger = _Tagger({"Baraka": ("B-PERSON", 0.9), "45": ("B-AGE", 0.3)})
    # a synthetic note annotating ages, and two news documents whose scheme has no ages
    docs = [_doc("synth", age_gold=True), _doc("news1", age_gold=False)]
    docs.append(_doc("news2", age_gold=False))
    unscoped = fit(tagger, docs, floor=0.85)
    assert unscoped[Category.AGE][0] == 0.5  # the news ages look like false positives
    scopes = {"news1": frozenset({Category.PERSON}), "news2": frozenset({Category.PERSON})}
    scoped = fit(tagger, docs, floor=0.85, scopes=scopes)
    assert scoped[Category.AGE][:3] == (0.05, 1.0, 1.0)
    assert scoped[Category.PERSON] == unscoped[Category.PERSON]


def test_a_corpus_without_roles_lends_its_persons_the_models_role() -> None:
    # news marks "Baraka" a person without saying whose record it is; the model reads a third
    # party, weakly in one document
    tagger = _Tagger({"Baraka": ("B-PERSON_THIRD_PARTY", 0.3)})
    docs = [_doc("news1", age_gold=False), _doc("news2", age_gold=False)]
    strict = fit(tagger, docs, floor=0.85)
    # read strictly, every third-party reading is wrong and no person is found: 0.5 stays
    assert strict[Category.PERSON][2] == 0.0 and strict[Category.PERSON_THIRD_PARTY][0] == 0.5
    lent = fit(tagger, docs, floor=0.85, roleless={"news1", "news2"})
    assert lent[Category.PERSON_THIRD_PARTY] == (0.05, 1.0, 1.0, 2)
    assert lent[Category.PERSON][3] == 0  # no person left without the model's role
    # a name the model does not find keeps the corpus's label and counts as missed
    missed = fit(_Tagger({}), docs, floor=0.85, roleless={"news1", "news2"})
    assert missed[Category.PERSON] == (0.5, None, 0.0, 2)


def test_evaluate_reads_each_document_at_its_routes_thresholds_and_categories() -> None:
    from types import MappingProxyType

    from polydeid.detect.tagger.detector import Route
    from polydeid.train.tagger import evaluate

    tagger = _Tagger({"Baraka": ("B-PERSON", 0.3)})
    docs = [_doc("s1", age_gold=False)]
    assert evaluate(tagger, docs)["person_recall_strict"] == 0.0  # 0.3 < 0.5

    def routes(threshold: float, categories: frozenset[Category]) -> dict[str, Route]:
        return {"sw": Route(categories, MappingProxyType({Category.PERSON: threshold}))}

    person = frozenset({Category.PERSON})
    assert evaluate(tagger, docs, routes=routes(0.25, person))["person_recall_strict"] == 1.0
    assert evaluate(tagger, docs, routes=routes(0.25, frozenset()))["person_recall_strict"] == 0.0
    scored = evaluate(tagger, docs, routes=routes(0.25, person), per_document=True)
    assert scored["name_documents"] == {"s1": [1, 1]}
    assert scored["names"][2]["threshold"] == 0.5  # the sweep is the same either way
    assert scored["names"] == evaluate(tagger, docs)["names"]


def test_dev_documents_read_the_calibration_corpora_of_the_shared_list(tmp_path) -> None:
    """Calibration reads its real development data from evaluate.devsets' one list: the
    language's corpora named in CALIBRATION_CORPORA, cut and scoped as evaluation cuts them;
    another corpus of the language in the same data folder is not read."""
    import dataclasses

    from polydeid.evaluate.devsets import DEV_CORPORA, read_dev_corpus
    from polydeid.train.calibrate import CALIBRATION_CORPORA, dev_documents

    sentences = [f"Mzee\tO\nKibet{k}\tB-PER\nalifika\tO\nleo\tO\n" for k in range(12)]
    (tmp_path / "masakhaner" / "swa").mkdir(parents=True)
    (tmp_path / "masakhaner" / "swa" / "dev.txt").write_text("\n".join(sentences), "utf-8")
    docs, scopes, roleless = dev_documents("sw", 2, tmp_path)
    real = [d for d in docs if d.id in scopes]
    spec = next(s for s in DEV_CORPORA if s.name.startswith("MasakhaNER dev swa"))
    expected = list(read_dev_corpus(dataclasses.replace(spec, root=tmp_path)).documents)
    assert [(d.text, d.spans) for d in real] == [(d.text, d.spans) for d in expected]
    assert len(real) == 2  # 12 sentences, 10 a document, as evaluation cuts them
    assert roleless == {d.id for d in real}  # CoNLL PER: persons without roles
    assert all(Category.PERSON in scopes[d.id] and Category.AGE not in scopes[d.id] for d in real)
    assert len(docs) - len(real) == 2  # the synthetic dev-split notes
    # an English web corpus beside it is no calibration corpus: only synthetic notes are read
    uner = next(s for s in DEV_CORPORA if s.name.startswith("UNER dev en"))
    assert not uner.name.startswith(CALIBRATION_CORPORA)
    target = dataclasses.replace(uner, root=tmp_path).location
    target.parent.mkdir(parents=True)
    target.write_text("# sent_id = 1\n1\tKibet\tB-PER\t-\t-\n2\tcame\tO\t-\t-\n", "utf-8")
    english, english_scopes, _ = dev_documents("en", 1, tmp_path)
    assert len(english) == 1 and not english_scopes
