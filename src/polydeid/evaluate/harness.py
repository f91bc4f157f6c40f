"""Systems side by side: run several detectors over one corpus and score them the same way.

A *system* is a named detector set: a polydeid profile (``rules``, ``default``), a
``+``-joined composition of registered detector names (``rules.dates.v1+rules.phones.v1``),
or a baseline (``presidio``: Microsoft Presidio's English pipeline on every language, as
practitioners run it). Every system's spans go through the same resolution policy and the
same scorer (:func:`polydeid.evaluate.metrics.score_corpus`).

A corpus is scored in the categories its label scheme can mark — every category of a coarse
group (:data:`~polydeid.core.taxonomy.COARSE_GROUP`) the scheme maps onto. ASQ-PHI has no age
type, so an age a system finds there is neither right nor wrong by that gold; such predictions
are left out of precision, recall and the "nothing found" counts, listed per system as *not
scored*, and still count in over-redaction and facts changed (they do change the text).

Each system's leak table (:mod:`polydeid.evaluate.leaks`) counts the gold identifiers its
predictions leave (partly) uncovered, per language × category × format, with every prediction
covering, in scope or not: a redaction hides what it covers whatever it calls it.
"""

from __future__ import annotations

import platform
import time
from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from types import MappingProxyType

from polydeid.core.errors import ConfigError
from polydeid.core.segments import Origin, Segment
from polydeid.core.spans import Span
from polydeid.core.taxonomy import COARSE_GROUP, Category, scheme
from polydeid.corpora.document import Corpus, ReadFailure
from polydeid.dates import date_granularity
from polydeid.detect.base import Detector
from polydeid.detect.pipeline import Pipeline
from polydeid.detect.profiles import profile_detectors
from polydeid.detect.registry import PROFILES, create
from polydeid.evaluate.bootstrap import BootstrapCIs, bootstrap_ci
from polydeid.evaluate.leaks import LeakTable, leak_table
from polydeid.evaluate.metrics import Scores, score_corpus

#: Score thresholds of the precision–recall curve.
THRESHOLDS: tuple[float, ...] = tuple(round(0.1 * i, 1) for i in range(10))


def _presidio() -> list[Detector]:
    from polydeid.evaluate.baselines import PresidioDetector

    return [PresidioDetector(allow_any_language=True)]


BASELINES: dict[str, tuple[str, Callable[[], list[Detector]]]] = {
    "presidio": (
        "Microsoft Presidio 2.2 + spaCy en_core_web_sm (English on every language)",
        _presidio,
    ),
}


def system_names() -> tuple[str, ...]:
    return (*sorted(PROFILES), *sorted(BASELINES))


def build_system(name: str, *, disabled_passes: Collection[str] = ()) -> tuple[str, Pipeline]:
    """(description, pipeline) of the system called ``name``; the error lists known ones.
    ``disabled_passes``: polydeid's passes switched off by id (baselines run none of them)."""
    off = frozenset(disabled_passes)
    shown = f" without {', '.join(sorted(off))}" if off else ""
    if name in PROFILES:
        return f"polydeid profile {name!r}: {', '.join(PROFILES[name])}{shown}", Pipeline(
            profile_detectors(name), disabled_passes=off
        )
    if name.endswith(".toml"):
        from polydeid.detect.compose import load_composition

        detectors = load_composition(name)
        return f"composition {name}: {', '.join(d.id for d in detectors)}{shown}", Pipeline(
            detectors, disabled_passes=off
        )
    if name in BASELINES:
        description, factory = BASELINES[name]
        # Another system is measured as it is: resolution only, none of polydeid's steps.
        return description, Pipeline(factory(), segment_steps=False)
    if "+" in name or "." in name:
        detectors = [create(part.strip()) for part in name.split("+") if part.strip()]
        return f"composition: {', '.join(d.id for d in detectors)}{shown}", Pipeline(
            detectors, disabled_passes=off
        )
    raise ConfigError(
        f"unknown system {name!r}; known: {', '.join(system_names())}, "
        "or detector names joined by '+'"
    )


@dataclass(frozen=True, slots=True)
class ThresholdPoint:
    """Micro strict precision and recall when only spans scoring ≥ ``threshold`` count."""

    threshold: float
    precision: float | None
    recall: float | None
    predicted: int

    def to_dict(self) -> dict[str, object]:
        return {
            "threshold": self.threshold,
            "precision": self.precision,
            "recall": self.recall,
            "predicted": self.predicted,
        }


@dataclass(frozen=True, slots=True)
class SystemResult:
    """One system's scores on one corpus."""

    name: str
    description: str
    scores: Scores
    seconds: float
    curve: tuple[ThresholdPoint, ...]
    cis: BootstrapCIs | None = None
    #: predicted spans per category the corpus's scheme cannot mark (not scored)
    unscored: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    #: the resolved spans by document id (not written to reports: they locate identifiers)
    predictions: Mapping[str, tuple[Span, ...]] = field(
        default_factory=lambda: MappingProxyType({}), repr=False
    )
    #: gold identifiers left (partly) uncovered, per language × category × format
    leaks: LeakTable = field(default_factory=LeakTable)

    def to_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "description": self.description,
            "unscored": dict(self.unscored),
            "seconds": round(self.seconds, 3),
            "scores": self.scores.to_dict(),
            "curve": [p.to_dict() for p in self.curve],
            "bootstrap": None if self.cis is None else self.cis.to_dict(),
            "leaks": self.leaks.to_dict(),
        }


@dataclass(frozen=True, slots=True)
class EvaluationRun:
    """Several systems scored on one corpus, with the files that could not be read."""

    corpus: str
    format: str
    documents: int
    gold_spans: int
    systems: tuple[SystemResult, ...]
    failures: tuple[ReadFailure, ...] = ()
    facts_reference: str = "none"
    #: the scheme and the categories scored (None: every category)
    scheme: str | None = None
    scored: tuple[str, ...] | None = None
    machine: str = field(
        default_factory=lambda: f"{platform.machine()}, Python {platform.python_version()}"
    )
    created: str = field(default_factory=lambda: datetime.now(UTC).strftime("%Y-%m-%d"))

    def to_dict(self) -> dict[str, object]:
        return {
            "corpus": self.corpus,
            "format": self.format,
            "documents": self.documents,
            "gold_spans": self.gold_spans,
            "facts_reference": self.facts_reference,
            "scheme": self.scheme,
            "scored": None if self.scored is None else list(self.scored),
            "machine": self.machine,
            "created": self.created,
            "failures": [{"file": f.file, "error": str(f.error)} for f in self.failures],
            "systems": [s.to_dict() for s in self.systems],
        }


def predict(pipeline: Pipeline, corpus: Corpus) -> dict[str, tuple[Span, ...]]:
    """Resolved identifier spans of every document, by document id."""
    out: dict[str, tuple[Span, ...]] = {}
    for doc in corpus.documents:
        segment = Segment(doc.text, lang=doc.lang, origin=Origin(file=doc.source or doc.id))
        out[doc.id] = pipeline.detect(segment)
    return out


def threshold_curve(
    corpus: Corpus,
    predictions: Mapping[str, Sequence[Span]],
    scope: frozenset[Category] | None = None,
) -> tuple[ThresholdPoint, ...]:
    """Micro strict P/R over :data:`THRESHOLDS` (one pass per threshold over exact-match sets),
    counting only predictions in ``scope`` (None: all)."""
    gold = {(d.id, s.start, s.end, s.label) for d in corpus.documents for s in d.spans}
    points = []
    for t in THRESHOLDS:
        kept = {
            (doc_id, s.start, s.end, s.label)
            for doc_id, spans in predictions.items()
            for s in spans
            if s.score >= t and (scope is None or s.label in scope)
        }
        hits = len(kept & gold)
        points.append(
            ThresholdPoint(
                threshold=t,
                precision=hits / len(kept) if kept else None,
                recall=hits / len(gold) if gold else None,
                predicted=len(kept),
            )
        )
    return tuple(points)


#: How "facts changed" is measured when a corpus annotates no clinical facts.
SILVER_FACTS = "silver: spans of facts.clinical.v1 (doses, labs, vitals, durations, quantities)"


def silver_facts(corpus: Corpus) -> dict[str, tuple[Span, ...]]:
    """Clinical-fact spans found by polydeid's fact layer, as the reference for "facts changed".

    Corpora rarely annotate facts; this measures how many of the doses, lab values and vitals
    a system would destroy. By construction polydeid's own pipelines protect these spans, so
    the figure is informative for other systems and for fact-overriding identifier rules.
    """
    rule = create("facts.clinical.v1")
    return {
        doc.id: tuple(rule.detect(Segment(doc.text, lang=doc.lang))) for doc in corpus.documents
    }


def facts_reference(corpus: Corpus) -> tuple[dict[str, tuple[Span, ...]] | None, str]:
    """The reference for "facts changed" and its description: the corpus's own fact spans
    (None: the documents') where it annotates clinical facts of the kinds the silver rule
    finds; otherwise the silver facts (:func:`silver_facts`) together with the facts it does
    annotate (MEDDOCAN's kinship mentions)."""
    silver = create("facts.clinical.v1").labels
    annotated = {f.label for doc in corpus.documents for f in doc.facts}
    if annotated & silver:
        return None, "gold"
    facts = silver_facts(corpus)
    if not annotated:
        return facts, SILVER_FACTS
    merged = {
        doc.id: tuple(sorted({*facts[doc.id], *doc.facts}, key=lambda s: (s.start, s.end)))
        for doc in corpus.documents
    }
    kinds = ", ".join(sorted(str(k) for k in annotated))
    return merged, f"{SILVER_FACTS}, and the corpus's gold {kinds} spans"


def scored_categories(scheme_name: str | None) -> frozenset[Category] | None:
    """The categories a corpus read with ``scheme_name`` is scored in (None: all of them)."""
    if scheme_name is None:
        return None
    groups = scheme(scheme_name).groups
    kept = frozenset(c for c in Category if COARSE_GROUP[c] in groups)
    return None if kept == frozenset(Category) else kept


def score_in_scope(
    corpus: Corpus,
    predictions: Mapping[str, Sequence[Span]],
    facts: Mapping[str, Sequence[Span]] | None,
    scope: frozenset[Category] | None,
) -> tuple[Scores, dict[str, int]]:
    """Scores in ``scope`` (over-redaction and facts changed from every prediction) and the
    count of predicted spans per category outside it."""
    scores = score_corpus(corpus.documents, predictions, facts=facts, categories=scope)
    if scope is None:
        return scores, {}
    every = score_corpus(corpus.documents, predictions, facts=facts)
    per = {
        doc_id: replace(
            s, chars=every.per_document[doc_id].chars, facts=every.per_document[doc_id].facts
        )
        for doc_id, s in scores.per_document.items()
    }
    outside = Counter(
        span.label.value
        for spans in predictions.values()
        for span in spans
        if isinstance(span.label, Category) and span.label not in scope
    )
    total = replace(Scores.total(per.values()), per_document=MappingProxyType(per))
    return total, dict(sorted(outside.items()))


def set_aside_unmarked_dates(
    corpus: Corpus, predictions: Mapping[str, Sequence[Span]]
) -> tuple[dict[str, tuple[Span, ...]], dict[str, int]]:
    """``predictions`` without the dates the corpus's scheme does not annotate (a predicted
    DATE of an unmarked granularity that meets no gold span), and their count per granularity
    as ``"DATE (year)"``; the predictions unchanged when the scheme marks every date."""
    unmarked = scheme(corpus.scheme).unmarked_dates if corpus.scheme else frozenset()
    if not unmarked:
        return dict(predictions), {}
    kept: dict[str, tuple[Span, ...]] = {}
    aside: Counter[str] = Counter()
    for doc in corpus.documents:
        spans = predictions.get(doc.id, ())
        out = []
        for span in spans:
            if span.label is Category.DATE and not any(g.overlaps(span) for g in doc.spans):
                grain = date_granularity(span.text_of(doc.text), [doc.lang])
                if grain is not None and grain.value in unmarked:
                    aside[f"DATE ({grain.value})"] += 1
                    continue
            out.append(span)
        kept[doc.id] = tuple(out)
    return kept, dict(sorted(aside.items()))


def evaluate(
    corpus: Corpus,
    systems: Sequence[str],
    *,
    corpus_format: str = "",
    bootstrap: int = 1000,
    seed: int = 0,
    disabled_passes: Collection[str] = (),
) -> EvaluationRun:
    """Score every system in ``systems`` on ``corpus`` with the same scorer (polydeid's
    systems without the passes named in ``disabled_passes``)."""
    if not systems:
        raise ConfigError("name at least one system to evaluate")
    facts, reference = facts_reference(corpus)
    scope = scored_categories(corpus.scheme)
    results = []
    for name in systems:
        description, pipeline = build_system(name, disabled_passes=disabled_passes)
        start = time.perf_counter()
        predictions = predict(pipeline, corpus)
        seconds = time.perf_counter() - start
        predictions, unmarked = set_aside_unmarked_dates(corpus, predictions)
        scores, unscored = score_in_scope(corpus, predictions, facts, scope)
        unscored |= unmarked
        cis = bootstrap_ci(scores, n_resamples=bootstrap, seed=seed) if bootstrap else None
        results.append(
            SystemResult(
                name=name,
                description=description,
                scores=scores,
                seconds=seconds,
                curve=threshold_curve(corpus, predictions, scope),
                cis=cis if corpus.documents else None,
                unscored=MappingProxyType(unscored),
                predictions=MappingProxyType(predictions),
                leaks=leak_table(corpus.documents, predictions),
            )
        )
    return EvaluationRun(
        corpus=corpus.name,
        format=corpus_format,
        documents=len(corpus.documents),
        gold_spans=sum(len(d.spans) for d in corpus.documents),
        systems=tuple(results),
        failures=corpus.failures,
        facts_reference=reference,
        scheme=corpus.scheme,
        scored=None if scope is None else tuple(sorted(c.value for c in scope)),
    )
