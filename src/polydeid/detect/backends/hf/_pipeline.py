""":class:`HfPipelineDetector`: any token classifier through the transformers pipeline.

``token-classification`` with ``aggregation_strategy="simple"`` over 512-character windows
overlapping by 128; the windows' spans are merged (a span cut by a window edge gives way to
the whole one another window saw; overlapping spans become one, labelled by the best score).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from polydeid.core.errors import (
    ConfigError,
    DetectionError,
    DetectorUnavailableError,
    PolydeidError,
)
from polydeid.core.segments import Segment
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category
from polydeid.locales import canonical_language
from polydeid.text.wordgrid import words

from ._checkpoint import (
    _load,
    _location,
    _model_name,
    content_revision,
    declared_revision,
    inspect_checkpoint,
    pin_revision,
    resolve_local,
)
from ._labels import (
    DEFAULT_FALLBACK,
    LabelMap,
    UnmappedLabel,
    load_label_map,
    plan_labels,
    warn_unmapped,
)
from ._router import _threshold

PIPELINE_THRESHOLD = 0.6
PIPELINE_WINDOW = 512
PIPELINE_OVERLAP = 128


def char_windows(length: int, size: int, overlap: int) -> list[tuple[int, int]]:
    """``[start, end)`` character windows of ``size`` covering ``length`` characters, each
    overlapping the next by at least ``overlap`` (the last one is moved back to be full)."""
    if size <= 0 or not 0 <= overlap < size:
        raise ValueError("need size > 0 and 0 <= overlap < size")
    if length <= size:
        return [(0, length)]
    out, start = [], 0
    while True:
        end = min(start + size, length)
        out.append((start, end))
        if end == length:
            return out
        start = min(start + size - overlap, length - size)


def _snap(text: str, grid: Sequence[tuple[int, int]], start: int, end: int) -> tuple[int, int]:
    """The range without surrounding whitespace, widened to the words of the word grid that
    it cuts (a sub-word entity covers its whole word: half a name is not a redaction; a
    Chinese or Japanese character is a word of its own, so no run of them is swallowed)."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if start >= end:
        return start, end
    i = bisect.bisect_right(grid, (start, len(text) + 1)) - 1
    if i >= 0 and grid[i][0] < start < grid[i][1]:
        start = grid[i][0]
    j = bisect.bisect_left(grid, (end, -1)) - 1
    if j >= 0 and grid[j][0] < end < grid[j][1]:
        end = grid[j][1]
    return start, end


@dataclass(slots=True)
class WindowSpan:
    """A span one window found, in the whole text's offsets."""

    start: int
    end: int
    label: Category
    score: float
    window: int
    cut: bool  # reaches a window edge inside the text: the model may have seen part of it


def merge_windows(found: Sequence[WindowSpan], source: str) -> list[Span]:
    """One span per entity from overlapping windows' spans.

    A span cut by its window's edge is dropped where another window saw an overlapping span
    whole. Overlapping spans then become one: the label and score of the highest-scoring,
    the union of the ranges (never less text than any window found).
    """
    whole = [f for f in found if not f.cut]
    kept = [
        f
        for f in found
        if not f.cut
        or not any(w.window != f.window and w.start < f.end and f.start < w.end for w in whole)
    ]
    kept.sort(key=lambda f: (f.start, -f.end))
    spans: list[Span] = []
    group: list[WindowSpan] = []

    def close() -> None:
        if group:
            best = max(group, key=lambda f: (f.score, f.end - f.start))
            start, end = min(f.start for f in group), max(f.end for f in group)
            spans.append(Span(start, end, best.label, source, round(best.score, 4)))
            group.clear()

    for f in kept:
        if group and f.start < max(g.end for g in group):
            group.append(f)
        else:
            close()
            group.append(f)
    close()
    return spans


class HfPipelineDetector:
    """A token classifier through the transformers ``token-classification`` pipeline
    (``aggregation_strategy="simple"``) over overlapping character windows.

    ``threshold`` (0.6) is the minimum span score, ``thresholds`` per-category overrides;
    ``languages`` (canonical codes or aliases) limits the detector to those languages (it
    fails closed for others); empty means any language.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        name: str | None = None,
        revision: str | None = None,
        label_map: str | Path | LabelMap = "pii34",
        strict: bool = False,
        fallback: Category | str = DEFAULT_FALLBACK,
        threshold: float = PIPELINE_THRESHOLD,
        thresholds: Mapping[Category | str, float] | None = None,
        languages: Iterable[str] = (),
        window: int = PIPELINE_WINDOW,
        overlap: int = PIPELINE_OVERLAP,
        threads: int | None = None,
        batch_size: int = 8,
        device: str = "cpu",
        cache_dir: str | Path | None = None,
        preload: bool = False,
    ) -> None:
        char_windows(0, window, overlap)  # validates the sizes
        self.folder, cached = resolve_local(path, revision=revision, cache_dir=cache_dir)
        if cached:  # the snapshot was chosen by the revision: its commit is what is recorded
            revision = None
        self.checkpoint = inspect_checkpoint(self.folder)
        self.label_map = load_label_map(label_map)
        self.fallback = Category.parse(fallback) if isinstance(fallback, str) else fallback
        self.plan = plan_labels(
            self.checkpoint.labels,
            self.label_map,
            fallback=self.fallback,
            strict=strict,
            location=str(self.folder),
        )
        declared = declared_revision(self.folder, self.checkpoint.config)
        self.revision = pin_revision(revision, declared, str(self.folder)) or content_revision(
            [self.folder]
        )
        self.name = _model_name(self.folder, name)
        self.id = f"backend.hf.{self.name}@{self.revision}"
        try:
            self.threshold = _threshold(threshold)
            self.thresholds: Mapping[Category, float] = MappingProxyType(
                {
                    (c if isinstance(c, Category) else Category.parse(c)): _threshold(v)
                    for c, v in (thresholds or {}).items()
                }
            )
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
        self.languages: frozenset[str] = frozenset(canonical_language(x) for x in languages)
        self.labels: frozenset[Category] = self.plan.categories
        self.unmapped = self.plan.unmapped
        self.window, self.overlap = window, overlap
        self.threads, self.batch_size, self.device = threads, batch_size, device
        self._pipe: Any = None
        if self.unmapped:
            warn_unmapped(self.folder, self.label_map, self.unmapped, self.fallback)
        if preload:
            self.load()

    def __repr__(self) -> str:
        return f"HfPipelineDetector({self.id})"

    def report(self) -> dict[str, Any]:
        """What the detector is (no text): id, revision, label map, unmapped labels."""
        return {
            "id": self.id,
            "layout": "pipeline",
            "revision": self.revision,
            "folder": str(self.folder),
            "languages": sorted(self.languages),
            "label_map": self.label_map.name,
            "labels": sorted(c.value for c in self.labels),
            "unmapped": list(self.unmapped),
            "fallback": self.fallback.value,
            "threshold": self.threshold,
            "window": self.window,
            "overlap": self.overlap,
        }

    def load(self) -> Any:
        """The transformers pipeline (loaded on first use; fails closed)."""
        if self._pipe is None:
            from transformers import pipeline

            model, tokenizer = _load(self.folder, threads=self.threads, device=self.device)
            try:
                self._pipe = pipeline(
                    "token-classification",
                    model=model,
                    tokenizer=tokenizer,
                    aggregation_strategy="simple",
                    device=self.device,
                )
            except Exception as exc:
                raise DetectorUnavailableError(
                    f"malformed checkpoint: no token-classification pipeline "
                    f"({type(exc).__name__})",
                    location=str(self.folder),
                ) from None
        return self._pipe

    def detect(self, segment: Segment) -> Iterable[Span]:
        return self.detect_many([segment])[0]

    def detect_many(self, segments: Sequence[Segment]) -> list[list[Span]]:
        """Spans for several segments; all their windows go through the pipeline in batches."""
        for segment in segments:
            if self.languages and segment.lang not in self.languages:
                try:
                    lang = canonical_language(segment.lang)
                except PolydeidError:
                    lang = None
                if lang not in self.languages:
                    raise DetectorUnavailableError(
                        f"{self.id} does not cover language {segment.lang[:20]!r}; "
                        f"it covers {', '.join(sorted(self.languages))}"
                    )
        jobs: list[tuple[int, int, int, int]] = []  # (segment, window index, start, end)
        for i, segment in enumerate(segments):
            spans = char_windows(len(segment.text), self.window, self.overlap)
            for w, (start, end) in enumerate(spans):
                if not segment.text[start:end].isspace() and start < end:
                    jobs.append((i, w, start, end))
        if not jobs:
            return [[] for _ in segments]
        pipe = self.load()
        import torch

        texts = [segments[i].text[s:e] for i, _, s, e in jobs]
        stride = max(1, min(64, (pipe.tokenizer.model_max_length or 512) // 4))
        try:
            with torch.inference_mode():
                results = pipe(texts, batch_size=self.batch_size, stride=stride)
        except Exception as exc:
            raise DetectionError(
                f"{self.id}: model inference failed ({type(exc).__name__})",
                location=_location(segments[jobs[0][0]]),
            ) from None
        if len(texts) == 1 and results and isinstance(results[0], dict):
            results = [results]
        found: list[list[WindowSpan]] = [[] for _ in segments]
        grids: dict[int, list[tuple[int, int]]] = {}
        for (i, w, start, end), entities in zip(jobs, results, strict=True):
            text = segments[i].text
            for entity in entities:
                if i not in grids:
                    grids[i] = words(text)
                found_span = self._entity(text, grids[i], entity, w, start, end)
                if found_span is not None:
                    found[i].append(found_span)
        return [merge_windows(f, self.id) for f in found]

    def _entity(
        self,
        text: str,
        grid: Sequence[tuple[int, int]],
        entity: Mapping[str, Any],
        window: int,
        w_start: int,
        w_end: int,
    ) -> WindowSpan | None:
        label = str(entity.get("entity_group", entity.get("entity", "")))
        bare = label.strip()
        if bare in self.plan.targets:
            category = self.plan.targets[bare]
        else:
            try:
                _, category = self.label_map.resolve(bare)
            except UnmappedLabel:
                category = self.fallback
        if category is None or entity.get("start") is None or entity.get("end") is None:
            return None
        score = min(1.0, max(0.0, float(entity.get("score", 0.0))))
        if score < self.thresholds.get(category, self.threshold):
            return None
        start, end = _snap(text, grid, w_start + int(entity["start"]), w_start + int(entity["end"]))
        if start >= end:
            return None
        cut = (w_start > 0 and start <= w_start) or (w_end < len(text) and end >= w_end)
        return WindowSpan(start, end, category, score, window, cut)
