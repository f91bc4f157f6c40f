"""Choosing GLiNER label prompts and a threshold on development data: :func:`tune` and the
``polydeid tune-gliner`` command.

:func:`tune` picks, among candidate prompt sets and thresholds, the best entity-strict recall
whose strict precision reaches a floor, and the command writes the composition entries for
it (:class:`~polydeid.detect.backends.gliner.GlinerDetector` reads them).
"""

from __future__ import annotations

import sys
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from polydeid.core.errors import ConfigError
from polydeid.core.taxonomy import Category
from polydeid.detect.backends.gliner import (
    GlinerDetector,
    LabelMap,
    checked_threshold,
    parse_label_map,
)
from polydeid.locales import canonical_language

#: Strict precision a chosen setting must reach by default.
DEFAULT_PRECISION_FLOOR = 0.5


class TunePoint(NamedTuple):
    """Entity-strict micro counts of one (prompt set, threshold) on the development data."""

    prompt_set: int  # index into the candidates
    threshold: float
    correct_predicted: int
    predicted: int
    found_gold: int
    gold: int
    meets_floor: bool

    @property
    def precision(self) -> float | None:
        return self.correct_predicted / self.predicted if self.predicted else None

    @property
    def recall(self) -> float | None:
        return self.found_gold / self.gold if self.gold else None


class TuneResult(NamedTuple):
    """What :func:`tune` chose, and the score of every setting it tried."""

    prompt_set: LabelMap
    threshold: float
    scores: tuple[TunePoint, ...]


def tune(
    detector: GlinerDetector,
    dev_documents: Iterable[Any],
    candidate_prompt_sets: Sequence[Mapping[str, Category | str]],
    thresholds: Sequence[float],
    *,
    precision_floor: float = DEFAULT_PRECISION_FLOOR,
) -> TuneResult:
    """Choose a prompt set and a threshold on development documents only.

    ``dev_documents`` are :class:`~polydeid.corpora.document.AnnotatedDocument` objects of a
    development split (never the test split: what is chosen here is then reported on the
    test split); tune each language on its own documents. Each candidate prompt set is a
    ``{prompt label: category}`` table, tried with every threshold (the model runs once per
    prompt set, at the lowest threshold; higher thresholds filter its spans by score, which is
    what GLiNER's greedy flat decoding would return at them). Scoring is entity-strict
    (same start, end and category; :func:`polydeid.evaluate.metrics.score_corpus`) over the
    union of the candidates' categories, so every candidate is judged on the same gold spans.

    The choice: the highest strict recall among settings whose strict precision is at least
    ``precision_floor``; ties go to the higher precision, then the higher threshold, then the
    earlier candidate. Raises :class:`ConfigError` when no setting reaches the floor (the
    error gives the best precision reached; :class:`TunePoint` counts say the rest).
    """
    from polydeid.evaluate.metrics import score_corpus

    documents = list(dev_documents)
    if not documents:
        raise ConfigError("tuning needs development documents")
    if not candidate_prompt_sets:
        raise ConfigError("tuning needs at least one candidate prompt set")
    levels = sorted({checked_threshold(t, "thresholds") for t in thresholds})
    if not levels:
        raise ConfigError("tuning needs at least one threshold")
    floor = checked_threshold(precision_floor, "precision_floor")
    candidates = [
        parse_label_map(c, f"candidate_prompt_sets[{i}]")
        for i, c in enumerate(candidate_prompt_sets)
    ]
    categories = sorted({c for labels in candidates for c in labels.values()})

    points: list[TunePoint] = []
    for index, labels in enumerate(candidates):
        lowest = dict.fromkeys(labels.values(), levels[0])
        found = {
            doc.id: detector.predict(doc.text, labels, lowest, where=f"document {doc.id}")
            for doc in documents
        }
        for level in levels:
            kept = {k: [s for s in spans if s.score >= level] for k, spans in found.items()}
            strict = score_corpus(documents, kept, categories=categories).strict.micro
            precision = strict.precision
            points.append(
                TunePoint(
                    index,
                    level,
                    strict.correct_predicted,
                    strict.predicted,
                    strict.found_gold,
                    strict.gold,
                    precision is not None and precision >= floor,
                )
            )
    feasible = [p for p in points if p.meets_floor]
    if not feasible:
        reached = max((p.precision for p in points if p.precision is not None), default=None)
        shown = "nothing predicted" if reached is None else f"best precision {reached:.3f}"
        raise ConfigError(
            f"no prompt set and threshold reaches strict precision {floor:g} on the "
            f"{len(documents)} development documents ({shown})"
        )
    best = max(
        feasible,
        key=lambda p: (p.recall or 0.0, p.precision or 0.0, p.threshold, -p.prompt_set),
    )
    return TuneResult(candidates[best.prompt_set], best.threshold, tuple(points))


# --- polydeid tune-gliner ------------------------------------------------------------------


def register(sub: Any) -> None:
    """``polydeid tune-gliner``: choose label prompts and a threshold on development data."""
    p = sub.add_parser(
        "tune-gliner",
        help="choose GLiNER label prompts and a threshold for one language on development data",
        description=(
            "Run a local GLiNER model over an annotated development corpus with every "
            "candidate prompt set and threshold; pick the highest entity-strict recall whose "
            "precision meets the floor, and write the composition entries for it. Never give "
            "it a test split."
        ),
    )
    p.add_argument("--model", required=True, help="local GLiNER model directory")
    p.add_argument("--gold", required=True, help="development corpus (file or directory)")
    p.add_argument("--format", required=True, help="corpus format (brat, conll, jsonl, …)")
    p.add_argument("--scheme", default=None, help="label scheme of the corpus")
    p.add_argument("--lang", required=True, help="the language being tuned")
    p.add_argument(
        "--prompts",
        required=True,
        help="TOML file: [[candidates]] tables, each {prompt label = CATEGORY, …}",
    )
    p.add_argument("--thresholds", default="0.3,0.4,0.5,0.6,0.7", help="comma-separated")
    p.add_argument("--precision-floor", type=float, default=DEFAULT_PRECISION_FLOOR)
    p.add_argument("--out", default="-", help="where to write the chosen TOML (default: stdout)")
    p.set_defaults(func=cmd_tune)


def cmd_tune(args: Any) -> int:
    from polydeid.corpora import read_corpus

    lang = canonical_language(args.lang)
    try:
        raw = tomllib.loads(Path(args.prompts).read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot read the prompt file ({exc})", location=args.prompts) from None
    candidates = raw.get("candidates")
    if not isinstance(candidates, list) or not all(isinstance(c, dict) for c in candidates):
        raise ConfigError("expected [[candidates]] tables", location=args.prompts)
    try:
        thresholds = [float(t) for t in args.thresholds.split(",") if t.strip()]
    except ValueError:
        raise ConfigError("--thresholds: expected numbers separated by commas") from None
    corpus = read_corpus(args.gold, args.format, scheme=args.scheme, lang=lang)
    documents = [d for d in corpus.documents if (d.lang or lang) == lang]
    detector = GlinerDetector(args.model, {lang: dict(candidates[0])})
    chosen, threshold, scores = tune(
        detector, documents, candidates, thresholds, precision_floor=args.precision_floor
    )
    for point in scores:
        p, r = point.precision, point.recall
        shown = f"P {p:.3f} R {r:.3f}" if p is not None and r is not None else "no spans"
        mark = (
            "  <- chosen"
            if (
                point.threshold == threshold
                and dict(chosen) == dict(parse_label_map(candidates[point.prompt_set], "candidate"))
            )
            else ""
        )
        print(
            f"prompt set {point.prompt_set} threshold {point.threshold:.2f}: {shown}{mark}",
            file=sys.stderr,
        )
    labels = ", ".join(f'"{k}" = "{v.value}"' for k, v in chosen.items())
    text = (
        f"# chosen by polydeid tune-gliner on {len(documents)} development document(s)\n"
        f"[detectors.gliner.labels_by_language]\n{lang} = {{ {labels} }}\n"
        f"[detectors.gliner.thresholds_by_language]\n{lang} = {threshold}\n"
    )
    if args.out == "-":
        sys.stdout.write(text)
    else:
        Path(args.out).write_text(text, encoding="utf-8")
    return 0
