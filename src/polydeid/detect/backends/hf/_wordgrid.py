""":class:`HfWordGridDetector`: per-language token classifiers on polydeid's word grid.

The East African clinical layout: one directory with a ``router_config.json`` (see
:mod:`._router`) and one checkpoint per language, trained on :mod:`polydeid.text.wordgrid`
words. Words are fed pre-split, each read at its first sub-token, in windows of at most
``max_tokens`` (256) tokens; word tags are decoded into character spans by
:mod:`polydeid.detect.tagger.windows` (BIO repair, edge punctuation trimmed, thresholds).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from polydeid.core.errors import DetectionError, DetectorUnavailableError, PolydeidError
from polydeid.core.segments import Segment
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category
from polydeid.detect.tagger.decode import decode
from polydeid.detect.tagger.precision import autocast, resolve
from polydeid.detect.tagger.windows import (
    TAG_INDEX,
    TAGS,
    Aligned,
    owner_windows,
    windows,
    word_rows,
)
from polydeid.locales import canonical_language
from polydeid.locales.names import name_words
from polydeid.text.wordgrid import words

from ._checkpoint import (
    Checkpoint,
    _load,
    _location,
    _model_name,
    _position_limit,
    content_revision,
    declared_revision,
    inspect_checkpoint,
    pin_revision,
    resolve_local,
)
from ._labels import (
    DEFAULT_FALLBACK,
    LabelMap,
    LabelPlan,
    load_label_map,
    plan_labels,
    warn_unmapped,
)
from ._router import LanguageRoute, read_router_config

WORDGRID_MAX_TOKENS = 256


class _GridModel:
    """One word-grid checkpoint, loaded: per-word probabilities over polydeid's tags."""

    def __init__(
        self,
        checkpoint: Checkpoint,
        plan: LabelPlan,
        *,
        max_tokens: int,
        stride: int | None,
        batch_size: int,
        threads: int | None,
        device: str,
        precision: str | None = None,
    ) -> None:
        import torch

        self.model, self.tokenizer = _load(checkpoint.folder, threads=threads, device=device)
        self.device = device
        self.device_type = device.split(":")[0]
        self.precision = resolve(precision, device=self.device_type)
        self.batch_size = batch_size
        where = str(checkpoint.folder)
        try:
            probe = self.tokenizer(
                ["a", "b"], is_split_into_words=True, return_special_tokens_mask=True
            )
        except Exception as exc:
            raise DetectorUnavailableError(
                f"malformed checkpoint: the tokenizer cannot read pre-split words "
                f"({type(exc).__name__}; a byte-level BPE tokenizer needs "
                "add_prefix_space: true in tokenizer_config.json)",
                location=where,
            ) from None
        ids, mask = probe["input_ids"], probe["special_tokens_mask"]
        lead = next((i for i, m in enumerate(mask) if not m), len(mask))
        trail = next((i for i, m in enumerate(reversed(mask)) if not m), 0)
        self.prefix = list(ids[:lead])
        self.suffix = list(ids[len(ids) - trail :]) if trail else []
        pad = self.tokenizer.pad_token_id
        self.pad_id = pad if pad is not None else (self.model.config.pad_token_id or 0)
        limit = _position_limit(self.model.config) or max_tokens
        self.max_content = min(max_tokens, limit) - len(self.prefix) - len(self.suffix)
        if self.max_content <= 0:
            raise DetectorUnavailableError(
                "malformed checkpoint: no room for text in a window", location=where
            )
        self.stride = min(stride or max(1, self.max_content // 2), self.max_content)
        projection = torch.zeros((len(plan.tags), len(TAGS)), dtype=torch.float32)
        for i, tag in enumerate(plan.tags):
            projection[i, TAG_INDEX[tag]] = 1.0
        self.projection = projection.to(device)

    def align(self, text: str) -> Aligned:
        """The word grid of ``text`` and its sub-tokens, read word by word."""
        grid = tuple(words(text))
        if not grid:
            return Aligned(grid, (), ())
        encoded = self.tokenizer(
            [text[s:e] for s, e in grid],
            is_split_into_words=True,
            add_special_tokens=False,
            verbose=False,  # a whole text is longer than the model; it is read in windows
        )
        word_token = [-1] * len(grid)
        for t, w in enumerate(encoded.word_ids()):
            if w is not None and word_token[w] < 0:
                word_token[w] = t
        return Aligned(grid, tuple(encoded["input_ids"]), tuple(word_token))

    def predict(self, texts: Sequence[str]) -> list[tuple[Aligned, list[list[float] | None]]]:
        import torch

        docs = [self.align(t) for t in texts]
        plans = []
        items: list[tuple[int, int, int]] = []  # (document, window start, window end)
        for d, aligned in enumerate(docs):
            if not aligned.token_ids:
                plans.append(([], []))
                continue
            spans = windows(len(aligned.token_ids), self.max_content, self.stride)
            plans.append((spans, owner_windows(aligned, spans)))
            items.extend((d, s, e) for s, e in spans)
        results: dict[tuple[int, int], Any] = {}
        order = sorted(range(len(items)), key=lambda i: items[i][2] - items[i][1])
        with torch.inference_mode(), autocast(self.precision, self.device_type):
            for b in range(0, len(order), self.batch_size):
                batch = [items[i] for i in order[b : b + self.batch_size]]
                width = max(e - s for _, s, e in batch) + len(self.prefix) + len(self.suffix)
                ids = torch.full((len(batch), width), self.pad_id, dtype=torch.long)
                mask = torch.zeros((len(batch), width), dtype=torch.long)
                for row, (d, s, e) in enumerate(batch):
                    seq = [*self.prefix, *docs[d].token_ids[s:e], *self.suffix]
                    ids[row, : len(seq)] = torch.tensor(seq, dtype=torch.long)
                    mask[row, : len(seq)] = 1
                logits = self.model(
                    input_ids=ids.to(self.device), attention_mask=mask.to(self.device)
                ).logits
                probs = torch.softmax(logits.float(), dim=-1) @ self.projection
                probs = probs.cpu()
                for row, (d, s, _) in enumerate(batch):
                    results[(d, s)] = probs[row, len(self.prefix) :]
        return word_rows(docs, plans, results)


class HfWordGridDetector:
    """Per-language word-grid token classifiers from one local directory (the layout above;
    ``router_config.json`` in :mod:`._router`, label maps in :mod:`._labels`, revisions in
    :mod:`._checkpoint`).

    Every checkpoint is checked when the detector is built (config, labels, weights,
    tokenizer); the weights of a language are loaded on its first segment, or all at once
    with ``preload=True`` or :meth:`load`.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        name: str | None = None,
        revision: str | None = None,
        label_map: str | Path | LabelMap = "east_africa",
        strict: bool = False,
        fallback: Category | str = DEFAULT_FALLBACK,
        max_tokens: int | None = None,
        stride: int | None = None,
        threads: int | None = None,
        batch_size: int = 16,
        device: str = "cpu",
        precision: str | None = None,
        cache_dir: str | Path | None = None,
        preload: bool = False,
    ) -> None:
        self.folder, cached = resolve_local(path, revision=revision, cache_dir=cache_dir)
        if cached:  # the snapshot was chosen by the revision: its commit is what is recorded
            revision = None
        self.router = read_router_config(self.folder)
        self.label_map = load_label_map(label_map)
        self.fallback = Category.parse(fallback) if isinstance(fallback, str) else fallback
        self.checkpoints: dict[str, Checkpoint] = {}
        self.plans: dict[str, LabelPlan] = {}
        for route in self.router.routes.values():
            if route.subfolder in self.checkpoints:
                continue
            checkpoint = inspect_checkpoint(self.folder / route.subfolder)
            self.checkpoints[route.subfolder] = checkpoint
            self.plans[route.subfolder] = plan_labels(
                checkpoint.labels,
                self.label_map,
                fallback=self.fallback,
                strict=strict,
                location=str(checkpoint.folder),
            )
        declared = declared_revision(self.folder) or self.router.revision
        self.revision = pin_revision(revision, declared, str(self.folder)) or content_revision(
            [self.folder, *(c.folder for c in self.checkpoints.values())]
        )
        self.name = _model_name(self.folder, name or self.router.name)
        self.id = f"backend.hf.{self.name}@{self.revision}"
        self.languages: frozenset[str] = frozenset(self.router.routes)
        self.labels: frozenset[Category] = frozenset(
            c for plan in self.plans.values() for c in plan.categories
        )
        self.unmapped: tuple[str, ...] = tuple(
            dict.fromkeys(u for plan in self.plans.values() for u in plan.unmapped)
        )
        self.max_tokens = max_tokens or self.router.max_tokens or WORDGRID_MAX_TOKENS
        self.stride = stride or self.router.stride
        self.threads = threads
        self.batch_size = batch_size
        self.device = device
        self.precision = precision  # None: POLYDEID_TAGGER_PRECISION, then auto
        self._models: dict[str, _GridModel] = {}
        if self.unmapped:
            warn_unmapped(self.folder, self.label_map, self.unmapped, self.fallback)
        if preload:
            self.load()

    def __repr__(self) -> str:
        return f"HfWordGridDetector({self.id}, languages={sorted(self.languages)})"

    def report(self) -> dict[str, Any]:
        """What the detector is (no text): id, revision, languages, label map, unmapped labels."""
        return {
            "id": self.id,
            "layout": "wordgrid",
            "revision": self.revision,
            "folder": str(self.folder),
            "languages": {
                lang: route.subfolder for lang, route in sorted(self.router.routes.items())
            },
            "thresholds": {
                lang: {
                    "default": route.threshold,
                    **{c.value: t for c, t in route.thresholds.items()},
                }
                for lang, route in sorted(self.router.routes.items())
            },
            "label_map": self.label_map.name,
            "labels": sorted(c.value for c in self.labels),
            "unmapped": list(self.unmapped),
            "fallback": self.fallback.value,
            "max_tokens": self.max_tokens,
        }

    def load(self) -> None:
        """Load every language's weights now (fails closed like the first segment would)."""
        for subfolder in self.checkpoints:
            self._model(subfolder)

    def _model(self, subfolder: str) -> _GridModel:
        if subfolder not in self._models:
            self._models[subfolder] = _GridModel(
                self.checkpoints[subfolder],
                self.plans[subfolder],
                max_tokens=self.max_tokens,
                stride=self.stride,
                batch_size=self.batch_size,
                threads=self.threads,
                device=self.device,
                precision=self.precision,
            )
        return self._models[subfolder]

    def route(self, lang: str) -> LanguageRoute:
        """The route of ``lang`` (any known code or alias); fails closed for other languages."""
        if lang in self.router.routes:
            return self.router.routes[lang]
        try:
            canonical = canonical_language(lang)
        except PolydeidError:
            canonical = None
        if canonical in self.router.routes:
            return self.router.routes[canonical]
        raise DetectorUnavailableError(
            f"{self.id} has no model for language {lang[:20]!r}; "
            f"it covers {', '.join(sorted(self.router.routes))}"
        )

    def detect(self, segment: Segment) -> Iterable[Span]:
        return self.detect_many([segment])[0]

    def detect_many(self, segments: Sequence[Segment]) -> list[list[Span]]:
        """Spans for several segments, batched through each language's model."""
        routes = [self.route(s.lang) for s in segments]
        out: list[list[Span]] = [[] for _ in segments]
        by_model: dict[str, list[int]] = {}
        for i, route in enumerate(routes):
            by_model.setdefault(route.subfolder, []).append(i)
        for subfolder, indices in by_model.items():
            model = self._model(subfolder)
            try:
                results = model.predict([segments[i].text for i in indices])
            except PolydeidError:
                raise
            except Exception as exc:
                raise DetectionError(
                    f"{self.id}: model inference failed ({type(exc).__name__})",
                    location=_location(segments[indices[0]]),
                ) from None
            for i, (aligned, probs) in zip(indices, results, strict=True):
                route = routes[i]
                out[i] = decode(
                    segments[i].text,
                    aligned.grid,
                    probs,
                    route.thresholds,
                    default_threshold=route.threshold,
                    source=self.id,
                    names=name_words(route.lang),
                )
        return out
