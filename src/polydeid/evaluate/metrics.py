"""Scores of de-identification over gold and predicted spans: pure functions, counts only.

Every metric is computed per document from ``(gold spans, predicted spans, text)`` and
aggregated over a corpus by summing counts (micro); nothing here keeps or reports text.

Matching modes
--------------
- **strict**: a prediction is correct iff a gold span has the same start, end and category.
- **relaxed**: a gold span counts as *found* if any prediction of its category overlaps it (by
  at least one character); a prediction counts as *correct* if it overlaps any gold span of its
  category. Precision and recall therefore come from different counts (``correct_predicted``
  vs ``found_gold``): one prediction covering two gold spans finds both, and two predictions
  inside one gold span are both correct.
- **span_strict / span_overlap**: label-agnostic detection (MEDDOCAN sub-track 2 style) — the
  strict and relaxed rules above with every category treated as one.
- **token**: the text is cut into tokens at whitespace and punctuation (runs of word
  characters; each Han, Hiragana, Katakana or Hangul character is a token of its own;
  punctuation is a separator, not a token). A token takes the category of the span that
  overlaps it by the most characters (ties: the earlier span, then the category name); a gold
  token is PHI if a gold span overlaps it. ``token`` is per category (labels must agree);
  ``token_binary`` only asks "PHI or not". Spans covering no word character count for nothing.
- **coarse_strict**: strict matching after mapping categories through ``COARSE_GROUP``.

Conventions
-----------
- Duplicates count once: spans are deduplicated by ``(start, end, label)`` (by offsets in the
  label-agnostic and name counts; by ``(start, end, group)`` in coarse mode). Score and
  source are ignored. Predicted clinical-fact spans (``Fact`` labels) are ignored.
- Zero division: precision is ``None`` when nothing was predicted; recall and leak are
  ``None`` when there is no gold span; F1 is ``None`` when there is no gold span (recall is
  undefined), ``0.0`` when there is gold but no prediction or when P = R = 0, and otherwise the
  harmonic mean of P and R. ``None`` (never NaN) marks "undefined" in every result.
- Macro averages are the unweighted means of the per-category values that are defined
  (precision over categories with predictions, recall and F1 over categories with gold).
- ``leak`` is ``1 − recall``; ``over_redaction`` is the share of predicted characters (union of
  predictions, each character once) that lie in no gold span; ``facts.changed_rate`` is the
  share of gold fact spans that any predicted identifier span overlaps.
- Name counts (model-card tables): gold person spans (``PERSON``, ``PERSON_THIRD_PARTY``,
  ``PERSON_CLAN``) touched by any prediction of any category, and predicted person-category
  spans that touch no gold person span ("name spans on non-persons").
"""

from __future__ import annotations

import bisect
import itertools
from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import cast

import regex

from polydeid.core.spans import Span
from polydeid.core.taxonomy import COARSE_GROUP, Category
from polydeid.corpora.document import AnnotatedDocument

__all__ = [
    "PERSON_CATEGORIES",
    "PRF",
    "Averages",
    "ByLabel",
    "CharCounts",
    "CopyCheck",
    "FactCounts",
    "NameCounts",
    "Scores",
    "TitleConvention",
    "copied_value_error",
    "score_corpus",
    "score_document",
    "title_convention",
    "tokenize",
]

PERSON_CATEGORIES: frozenset[Category] = frozenset(
    {Category.PERSON, Category.PERSON_THIRD_PARTY, Category.PERSON_CLAN}
)

_CJK = r"\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}"
_TOKEN = regex.compile(rf"[{_CJK}]|[^\W{_CJK}]+")

# An internal span: (start, end, key) where key is a category, a coarse group or "".
_Item = tuple[int, int, Hashable]


def _ratio(part: int, whole: int) -> float | None:
    return part / whole if whole else None


@dataclass(frozen=True, slots=True)
class PRF:
    """Counts behind precision, recall and F1 (conventions in the module docstring)."""

    correct_predicted: int = 0
    predicted: int = 0
    found_gold: int = 0
    gold: int = 0

    @property
    def precision(self) -> float | None:
        return _ratio(self.correct_predicted, self.predicted)

    @property
    def recall(self) -> float | None:
        return _ratio(self.found_gold, self.gold)

    @property
    def f1(self) -> float | None:
        recall = self.recall
        if recall is None:
            return None
        precision = self.precision
        if precision is None or precision + recall == 0:
            return 0.0
        return 2 * precision * recall / (precision + recall)

    @property
    def leak(self) -> float | None:
        recall = self.recall
        return None if recall is None else 1.0 - recall

    def __add__(self, other: PRF) -> PRF:
        return PRF(
            self.correct_predicted + other.correct_predicted,
            self.predicted + other.predicted,
            self.found_gold + other.found_gold,
            self.gold + other.gold,
        )

    def to_dict(self) -> dict[str, object]:
        return {
            "correct_predicted": self.correct_predicted,
            "predicted": self.predicted,
            "found_gold": self.found_gold,
            "gold": self.gold,
            "precision": self.precision,
            "recall": self.recall,
            "f1": self.f1,
            "leak": self.leak,
        }


def _mean(values: Iterable[float | None]) -> float | None:
    defined = [v for v in values if v is not None]
    return sum(defined) / len(defined) if defined else None


@dataclass(frozen=True, slots=True)
class Averages:
    """Macro-averaged precision, recall and F1 (``None`` where no category defines them)."""

    precision: float | None
    recall: float | None
    f1: float | None

    def to_dict(self) -> dict[str, object]:
        return {"precision": self.precision, "recall": self.recall, "f1": self.f1}


@dataclass(frozen=True, slots=True)
class ByLabel:
    """PRF counts per label (category value or coarse group) with micro and macro averages."""

    per_label: Mapping[str, PRF] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def micro(self) -> PRF:
        return sum(self.per_label.values(), PRF())

    @property
    def macro(self) -> Averages:
        values = self.per_label.values()
        return Averages(
            _mean(v.precision for v in values),
            _mean(v.recall for v in values),
            _mean(v.f1 for v in values),
        )

    def __getitem__(self, label: str) -> PRF:
        return self.per_label.get(label, PRF())

    def __add__(self, other: ByLabel) -> ByLabel:
        return ByLabel.total((self, other))

    @staticmethod
    def total(tables: Iterable[ByLabel]) -> ByLabel:
        """The sum of many tables, label by label."""
        sums: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
        for table in tables:
            for label, prf in table.per_label.items():
                acc = sums[label]
                acc[0] += prf.correct_predicted
                acc[1] += prf.predicted
                acc[2] += prf.found_gold
                acc[3] += prf.gold
        return ByLabel(MappingProxyType({k: PRF(*sums[k]) for k in sorted(sums)}))

    def to_dict(self) -> dict[str, object]:
        return {
            "per_label": {k: v.to_dict() for k, v in self.per_label.items()},
            "micro": self.micro.to_dict(),
            "macro": self.macro.to_dict(),
        }


@dataclass(frozen=True, slots=True)
class CharCounts:
    """Character counts of the predicted and gold unions and their overlap."""

    predicted: int = 0
    gold: int = 0
    overlap: int = 0

    @property
    def over_redaction(self) -> float | None:
        """Share of predicted characters inside no gold span; ``None`` if nothing predicted."""
        return _ratio(self.predicted - self.overlap, self.predicted)

    @property
    def missed(self) -> float | None:
        """Share of gold characters no prediction covers (character-level leak)."""
        return _ratio(self.gold - self.overlap, self.gold)

    def __add__(self, other: CharCounts) -> CharCounts:
        return CharCounts(
            self.predicted + other.predicted, self.gold + other.gold, self.overlap + other.overlap
        )

    def to_dict(self) -> dict[str, object]:
        return {
            "predicted": self.predicted,
            "gold": self.gold,
            "overlap": self.overlap,
            "over_redaction": self.over_redaction,
            "missed": self.missed,
        }


@dataclass(frozen=True, slots=True)
class FactCounts:
    """Gold clinical-fact spans and how many of them a predicted identifier overlaps."""

    facts: int = 0
    changed: int = 0

    @property
    def changed_rate(self) -> float | None:
        return _ratio(self.changed, self.facts)

    def __add__(self, other: FactCounts) -> FactCounts:
        return FactCounts(self.facts + other.facts, self.changed + other.changed)

    def to_dict(self) -> dict[str, object]:
        return {"facts": self.facts, "changed": self.changed, "changed_rate": self.changed_rate}


@dataclass(frozen=True, slots=True)
class NameCounts:
    """Model-card name counts: gold persons touched, predicted names on non-persons."""

    gold_persons: int = 0
    gold_persons_found: int = 0
    predicted_names: int = 0
    names_on_non_persons: int = 0

    @property
    def found_rate(self) -> float | None:
        return _ratio(self.gold_persons_found, self.gold_persons)

    @property
    def non_person_rate(self) -> float | None:
        return _ratio(self.names_on_non_persons, self.predicted_names)

    def __add__(self, other: NameCounts) -> NameCounts:
        return NameCounts(
            self.gold_persons + other.gold_persons,
            self.gold_persons_found + other.gold_persons_found,
            self.predicted_names + other.predicted_names,
            self.names_on_non_persons + other.names_on_non_persons,
        )

    def to_dict(self) -> dict[str, object]:
        return {
            "gold_persons": self.gold_persons,
            "gold_persons_found": self.gold_persons_found,
            "found_rate": self.found_rate,
            "predicted_names": self.predicted_names,
            "names_on_non_persons": self.names_on_non_persons,
            "non_person_rate": self.non_person_rate,
        }


@dataclass(frozen=True, slots=True)
class Scores:
    """Every metric for one document or, summed, for a corpus (``per_document`` kept there)."""

    n_documents: int = 0
    strict: ByLabel = field(default_factory=ByLabel)
    relaxed: ByLabel = field(default_factory=ByLabel)
    span_strict: PRF = field(default_factory=PRF)
    span_overlap: PRF = field(default_factory=PRF)
    token: ByLabel = field(default_factory=ByLabel)
    token_binary: PRF = field(default_factory=PRF)
    coarse_strict: ByLabel = field(default_factory=ByLabel)
    chars: CharCounts = field(default_factory=CharCounts)
    facts: FactCounts = field(default_factory=FactCounts)
    names: NameCounts = field(default_factory=NameCounts)
    per_document: Mapping[str, Scores] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def over_redaction(self) -> float | None:
        return self.chars.over_redaction

    def __add__(self, other: Scores) -> Scores:
        """The summed counts of both; ``per_document`` is not carried over."""
        return Scores.total((self, other))

    @staticmethod
    def total(items: Iterable[Scores]) -> Scores:
        """The sum of many scores' counts (``per_document`` left empty)."""
        parts = list(items)
        return Scores(
            n_documents=sum(p.n_documents for p in parts),
            strict=ByLabel.total(p.strict for p in parts),
            relaxed=ByLabel.total(p.relaxed for p in parts),
            span_strict=sum((p.span_strict for p in parts), PRF()),
            span_overlap=sum((p.span_overlap for p in parts), PRF()),
            token=ByLabel.total(p.token for p in parts),
            token_binary=sum((p.token_binary for p in parts), PRF()),
            coarse_strict=ByLabel.total(p.coarse_strict for p in parts),
            chars=sum((p.chars for p in parts), CharCounts()),
            facts=sum((p.facts for p in parts), FactCounts()),
            names=sum((p.names for p in parts), NameCounts()),
        )

    def to_dict(self, *, per_document: bool = False) -> dict[str, object]:
        """JSON-ready counts and rates (no text); per-document scores only when asked."""
        out: dict[str, object] = {
            "n_documents": self.n_documents,
            "strict": self.strict.to_dict(),
            "relaxed": self.relaxed.to_dict(),
            "span_strict": self.span_strict.to_dict(),
            "span_overlap": self.span_overlap.to_dict(),
            "token": self.token.to_dict(),
            "token_binary": self.token_binary.to_dict(),
            "coarse_strict": self.coarse_strict.to_dict(),
            "chars": self.chars.to_dict(),
            "facts": self.facts.to_dict(),
            "names": self.names.to_dict(),
        }
        if per_document:
            out["per_document"] = {k: v.to_dict() for k, v in self.per_document.items()}
        return out


# --- interval helpers -------------------------------------------------------------------


class _OverlapIndex:
    """Intervals sorted by start with a running maximum of ends, for any-overlap queries."""

    __slots__ = ("_max_end", "_starts")

    def __init__(self, intervals: Iterable[tuple[int, int]]) -> None:
        ordered = sorted(intervals)
        self._starts = [s for s, _ in ordered]
        self._max_end = list(itertools.accumulate((e for _, e in ordered), max))

    def hits(self, start: int, end: int) -> bool:
        """Whether any indexed interval shares a character with ``[start, end)``."""
        i = bisect.bisect_left(self._starts, end)
        return i > 0 and self._max_end[i - 1] > start


def _count_hits(queries: Iterable[tuple[int, int]], index: _OverlapIndex) -> int:
    return sum(1 for s, e in queries if index.hits(s, e))


def _union(intervals: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for s, e in sorted(intervals):
        if merged and s <= merged[-1][1]:
            if e > merged[-1][1]:
                merged[-1] = (merged[-1][0], e)
        else:
            merged.append((s, e))
    return merged


def _intersection_length(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> int:
    total, i, j = 0, 0, 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if lo < hi:
            total += hi - lo
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total


# --- matching modes ---------------------------------------------------------------------


def _keyed(items: Iterable[_Item], key: Callable[[Hashable], Hashable]) -> set[_Item]:
    return {(s, e, key(k)) for s, e, k in items}


def _strict(gold: set[_Item], pred: set[_Item], labels: Collection[str]) -> ByLabel:
    hits = Counter(k for _, _, k in gold & pred)
    n_gold = Counter(k for _, _, k in gold)
    n_pred = Counter(k for _, _, k in pred)
    keys = sorted({*labels, *n_gold, *n_pred})
    return ByLabel(MappingProxyType({k: PRF(hits[k], n_pred[k], hits[k], n_gold[k]) for k in keys}))


def _group(items: Iterable[_Item]) -> dict[Hashable, list[tuple[int, int]]]:
    groups: dict[Hashable, list[tuple[int, int]]] = defaultdict(list)
    for s, e, k in items:
        groups[k].append((s, e))
    return groups


def _relaxed(gold: set[_Item], pred: set[_Item], labels: Collection[str]) -> ByLabel:
    gold_by, pred_by = _group(gold), _group(pred)
    table: dict[str, PRF] = {}
    for k in sorted({*labels, *gold_by, *pred_by}):
        g, p = gold_by.get(k, []), pred_by.get(k, [])
        found = _count_hits(g, _OverlapIndex(p)) if p else 0
        correct = _count_hits(p, _OverlapIndex(g)) if g else 0
        table[str(k)] = PRF(correct, len(p), found, len(g))
    return ByLabel(MappingProxyType(table))


def tokenize(text: str) -> tuple[list[int], list[int]]:
    """Token starts and ends: word-character runs, one token per CJK character."""
    starts: list[int] = []
    ends: list[int] = []
    for match in _TOKEN.finditer(text):
        starts.append(match.start())
        ends.append(match.end())
    return starts, ends


def _token_labels(starts: list[int], ends: list[int], spans: Iterable[_Item]) -> dict[int, str]:
    """Each overlapped token's label: most-overlapping span, then earlier, then name."""
    best: dict[int, tuple[int, int, str]] = {}
    for s, e, k in spans:
        label = str(k)
        for t in range(bisect.bisect_right(ends, s), bisect.bisect_left(starts, e)):
            overlap = min(e, ends[t]) - max(s, starts[t])
            current = best.get(t)
            if (
                current is None
                or (overlap, -s) > current[:2]
                or ((overlap, -s) == current[:2] and label < current[2])
            ):
                best[t] = (overlap, -s, label)
    return {t: v[2] for t, v in best.items()}


def _tokens(
    text: str, gold: set[_Item], pred: set[_Item], labels: Collection[str]
) -> tuple[ByLabel, PRF]:
    if not gold and not pred:
        return _strict(set(), set(), labels), PRF()
    starts, ends = tokenize(text)
    gold_tok = _token_labels(starts, ends, gold)
    pred_tok = _token_labels(starts, ends, pred)
    n_gold, n_pred = Counter(gold_tok.values()), Counter(pred_tok.values())
    hits = Counter(v for t, v in pred_tok.items() if gold_tok.get(t) == v)
    keys = sorted({*labels, *n_gold, *n_pred})
    table = {k: PRF(hits[k], n_pred[k], hits[k], n_gold[k]) for k in keys}
    both = len(gold_tok.keys() & pred_tok.keys())
    return ByLabel(MappingProxyType(table)), PRF(both, len(pred_tok), both, len(gold_tok))


def _spans_to_items(
    spans: Iterable[Span], keep: frozenset[Category] | None, size: int, what: str
) -> set[_Item]:
    items: set[_Item] = set()
    for span in spans:
        if span.is_fact or (keep is not None and span.label not in keep):
            continue
        if span.end > size:
            raise ValueError(
                f"{what} span {span.start}:{span.end} {span.label.name} past the end of a "
                f"text of {size} characters"
            )
        items.add((span.start, span.end, span.label))
    return items


def _names(gold: set[_Item], pred: set[_Item]) -> NameCounts:
    gold_persons = {(s, e) for s, e, k in gold if k in PERSON_CATEGORIES}
    pred_names = {(s, e) for s, e, k in pred if k in PERSON_CATEGORIES}
    found = _count_hits(gold_persons, _OverlapIndex((s, e) for s, e, _ in pred))
    person_index = _OverlapIndex(gold_persons)
    stray = sum(1 for s, e in pred_names if not person_index.hits(s, e))
    return NameCounts(len(gold_persons), found, len(pred_names), stray)


def _facts(facts: Iterable[Span], pred: set[_Item], size: int) -> FactCounts:
    offsets = {(f.start, f.end) for f in facts}
    if any(e > size for _, e in offsets):
        raise ValueError(f"a fact span lies past the end of a text of {size} characters")
    changed = _count_hits(offsets, _OverlapIndex((s, e) for s, e, _ in pred))
    return FactCounts(len(offsets), changed)


def _chars(gold: set[_Item], pred: set[_Item]) -> CharCounts:
    g = _union((s, e) for s, e, _ in gold)
    p = _union((s, e) for s, e, _ in pred)
    return CharCounts(
        sum(e - s for s, e in p), sum(e - s for s, e in g), _intersection_length(p, g)
    )


def _coarse(label: Hashable) -> Hashable:
    return COARSE_GROUP[cast(Category, label)]


def _value(label: Hashable) -> Hashable:
    return str(label)


def _agnostic(_label: Hashable) -> Hashable:
    return ""


def score_document(
    gold: Iterable[Span],
    predicted: Iterable[Span],
    text: str,
    *,
    facts: Iterable[Span] = (),
    categories: Iterable[Category] | None = None,
) -> Scores:
    """Every metric for one document; ``categories`` restricts them all to those categories."""
    keep = None if categories is None else frozenset(categories)
    g = _spans_to_items(gold, keep, len(text), "gold")
    p = _spans_to_items(predicted, keep, len(text), "predicted")
    labels = sorted(c.value for c in keep) if keep else []
    coarse_labels = sorted({COARSE_GROUP[c] for c in keep}) if keep else []
    g_val, p_val = _keyed(g, _value), _keyed(p, _value)
    g_any, p_any = _keyed(g, _agnostic), _keyed(p, _agnostic)
    token, token_binary = _tokens(text, g_val, p_val, labels)
    return Scores(
        n_documents=1,
        strict=_strict(g_val, p_val, labels),
        relaxed=_relaxed(g_val, p_val, labels),
        span_strict=_strict(g_any, p_any, ()).micro,
        span_overlap=_relaxed(g_any, p_any, ()).micro,
        token=token,
        token_binary=token_binary,
        coarse_strict=_strict(_keyed(g, _coarse), _keyed(p, _coarse), coarse_labels),
        chars=_chars(g, p),
        facts=_facts(facts, p, len(text)),
        names=_names(g, p),
    )


def score_corpus(
    documents: Iterable[AnnotatedDocument],
    predictions: Mapping[str, Sequence[Span]],
    *,
    categories: Iterable[Category] | None = None,
    allow_missing: bool = False,
    facts: Mapping[str, Sequence[Span]] | None = None,
) -> Scores:
    """Every metric summed over ``documents``, with per-document scores kept for bootstrap.

    A document with no entry in ``predictions`` is an error unless ``allow_missing`` (then it
    counts as predicting nothing); a prediction key that names no document is always an error.
    ``facts`` (by document id) replaces the documents' own fact spans, e.g. for a corpus that
    annotates none; a document it does not name then has no facts.
    """
    keep = None if categories is None else tuple(categories)
    per: dict[str, Scores] = {}
    for doc in documents:
        if doc.id in per:
            raise ValueError(f"document id {doc.id!r} occurs twice")
        predicted = predictions.get(doc.id)
        if predicted is None and not allow_missing:
            raise ValueError(f"no predictions for document {doc.id!r}")
        doc_facts = doc.facts if facts is None else facts.get(doc.id, ())
        per[doc.id] = score_document(
            doc.spans, predicted or (), doc.text, facts=doc_facts, categories=keep
        )
    unknown = predictions.keys() - per.keys()
    if unknown:
        raise ValueError(f"{len(unknown)} prediction key(s) name no document")
    return replace(Scores.total(per.values()), per_document=MappingProxyType(per))


@dataclass(frozen=True, slots=True)
class CopyCheck:
    """How many values an extractor returned and how many do not occur in the source."""

    values: int = 0
    not_in_source: int = 0

    @property
    def error_rate(self) -> float | None:
        return _ratio(self.not_in_source, self.values)

    def __add__(self, other: CopyCheck) -> CopyCheck:
        return CopyCheck(self.values + other.values, self.not_in_source + other.not_in_source)

    def to_dict(self) -> dict[str, object]:
        return {
            "values": self.values,
            "not_in_source": self.not_in_source,
            "error_rate": self.error_rate,
        }


def _squash(text: str) -> str:
    return " ".join(text.split())


def copied_value_error(
    values: Iterable[str], text: str, *, normalize_space: bool = False
) -> CopyCheck:
    """Count returned values that are not an exact substring of ``text``.

    An empty (or, with ``normalize_space``, whitespace-only) value counts as not copied.
    ``normalize_space`` collapses every whitespace run to one space in both before comparing.
    Sum the results with ``+`` to score a corpus.
    """
    source = _squash(text) if normalize_space else text
    total = missing = 0
    for value in values:
        probe = _squash(value) if normalize_space else value
        total += 1
        if not probe or probe not in source:
            missing += 1
    return CopyCheck(total, missing)


# --- annotation audit -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TitleConvention:
    """How a corpus's gold person spans treat a title ("Dr.", "Mr."): ``inside`` the span
    ("Dr. Patel"), ``outside`` it (written right before: "Dr. [Patel]"), or no title at all.

    A system follows one convention (or the other) for every titled name, so it finds at most
    :attr:`reachable` names strictly (the untitled ones plus the larger of the two titled
    groups), and strict name recall on the corpus cannot exceed :attr:`ceiling`.
    """

    inside: int = 0
    outside: int = 0
    untitled: int = 0

    @property
    def persons(self) -> int:
        return self.inside + self.outside + self.untitled

    @property
    def reachable(self) -> int:
        return self.untitled + max(self.inside, self.outside)

    @property
    def ceiling(self) -> float | None:
        return _ratio(self.reachable, self.persons)

    def __add__(self, other: TitleConvention) -> TitleConvention:
        return TitleConvention(
            self.inside + other.inside,
            self.outside + other.outside,
            self.untitled + other.untitled,
        )


_FIRST_WORD = regex.compile(r"[\p{L}\p{M}]+")
_LAST_WORD = regex.compile(r"([\p{L}\p{M}]+)\.?[ \t\u00a0]+$")


def title_convention(document: AnnotatedDocument, titles: Collection[str]) -> TitleConvention:
    """Count ``document``'s gold person spans by where their title is written (``titles``
    casefolded, without dots: "dr", "mrs"); sum the results with ``+`` for a corpus."""
    inside = outside = untitled = 0
    for span in document.spans:
        if span.label not in PERSON_CATEGORIES:
            continue
        first = _FIRST_WORD.match(document.text, span.start, span.end)
        before = _LAST_WORD.search(document.text, max(0, span.start - 40), span.start)
        if first and first.group().casefold() in titles:
            inside += 1
        elif before and before.group(1).casefold() in titles:
            outside += 1
        else:
            untitled += 1
    return TitleConvention(inside, outside, untitled)
