"""GLiNER zero-shot span detection as a polydeid detector (tuning: :mod:`polydeid.train.gliner`).

GLiNER reads a text with a list of *prompt labels* ("person name", "hospital", …) and returns
spans for them. :class:`GlinerDetector` maps prompt labels to canonical categories per
language (``labels_by_language = {"sw": {"jina la mtu": "PERSON", …}, "*": {…}}``), applies
per-language (optionally per-category) thresholds, cuts long texts into overlapping chunks of
polydeid's word grid, and returns :class:`~polydeid.core.spans.Span` objects whose source is
``backend.gliner.<name>@<revision>``.

**The real ``gliner`` package is not exercised by polydeid's tests.** It cannot be installed
next to the tagger (``gliner`` 0.2.29 pins ``transformers<5.17``; polydeid's tagger needs
5.24), so the tests inject a stand-in module with the same API. This adapter uses only the
documented calls — ``GLiNER.from_pretrained(directory, local_files_only=True)`` and
``model.predict_entities(text, labels, threshold=…)`` returning dicts with ``start``, ``end``
(character offsets into ``text``), ``text``, ``label`` and ``score`` — and checks every entity
it gets back: an offset outside the chunk, a ``text`` that is not the chunk's text at those
offsets, a label it did not ask for or a score outside [0, 1] raises
:class:`~polydeid.core.errors.DetectionError` (fail closed) rather than being dropped. Run it
in its own environment (``pip install gliner``) with ``Deidentifier(detectors=[…])``.

Chunking: GLiNER reads at most a few hundred words (384 for the published models). A text of
more than ``max_words`` words of :func:`polydeid.text.wordgrid.words` is cut into chunks of
``max_words`` words, ``max_words - overlap_words`` apart (the tagger's
:func:`~polydeid.detect.tagger.windows.windows`, words taking the tokens' part); each span is
kept from the chunk that owns the word it starts in — the chunk in which that word lies
farthest from an edge (:func:`~polydeid.detect.tagger.windows.owner_windows`) — so an entity
cut by one chunk's edge is read whole from the next one, and found once.

Nothing here logs or raises with document text: errors name the segment's origin and the
chunk number.
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from polydeid.core.errors import (
    ConfigError,
    DetectionError,
    DetectorUnavailableError,
    UnknownLanguageError,
)
from polydeid.core.segments import Segment
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category
from polydeid.detect.tagger.windows import Aligned, owner_windows, windows
from polydeid.text.wordgrid import words

INSTALL_HINT = (
    "pip install gliner — note: gliner 0.2.29 pins transformers<5.17, which conflicts with the "
    "tagger's transformers 5.24; use a separate environment"
)
ANY_LANGUAGE = "*"
DEFAULT_THRESHOLD = 0.5
DEFAULT_MAX_WORDS = 256
DEFAULT_OVERLAP_WORDS = 64
_NAME_UNSAFE = re.compile(r"[^A-Za-z0-9_.\-]+")

LabelMap = Mapping[str, Category]


def _gliner_class() -> Any:
    """``gliner.GLiNER``, imported when a detector is built; absent → fail closed."""
    try:
        from gliner import GLiNER
    except ImportError:
        raise DetectorUnavailableError(INSTALL_HINT) from None
    return GLiNER


def parse_label_map(raw: Any, where: str) -> LabelMap:
    if not isinstance(raw, Mapping) or not raw:
        raise ConfigError(f"{where}: needs a non-empty table of prompt label → category")
    out: dict[str, Category] = {}
    for prompt, category in raw.items():
        if not isinstance(prompt, str) or not prompt.strip():
            raise ConfigError(f"{where}: prompt labels must be non-empty strings")
        if isinstance(category, Category):
            out[prompt] = category
        elif isinstance(category, str):
            out[prompt] = Category.parse(category)
        else:
            raise ConfigError(f"{where}: the category of a prompt label must be a name")
    return MappingProxyType(out)


def checked_threshold(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(f"{where}: a threshold must be a number")
    if not 0.0 <= float(value) <= 1.0:
        raise ConfigError(f"{where}: threshold {value} outside [0, 1]")
    return float(value)


def _model_name(folder: Path, given: str | None) -> str:
    if given is None:
        snapshot_of = folder.parent.parent.name if folder.parent.name == "snapshots" else ""
        given = snapshot_of.removeprefix("models--") or folder.resolve().name
    return _NAME_UNSAFE.sub("-", given).strip("-.")[:60] or "model"


@dataclass(frozen=True, slots=True)
class _Chunk:
    index: int
    start: int  # character offsets in the text
    end: int


class GlinerDetector:
    """GLiNER spans for prompt labels, mapped to canonical categories per language.

    ``model_dir`` — a local GLiNER directory (or the id of an already-downloaded hub snapshot:
    nothing is downloaded); ``path`` is the same option under the name compositions use.
    ``labels_by_language`` — ``{language: {prompt label: category}}``; ``"*"`` serves every
    language without its own entry. ``thresholds_by_language`` — ``{language: threshold}`` or
    ``{language: {category: threshold}}`` (``"*"`` again a default; otherwise
    :data:`DEFAULT_THRESHOLD`). A language with no labels is refused
    (:class:`UnknownLanguageError`), never answered with "nothing found".

    The real ``gliner`` package is not exercised by polydeid's tests (see the module
    docstring); a missing package raises :class:`DetectorUnavailableError`.
    """

    def __init__(
        self,
        model_dir: str | Path | None = None,
        labels_by_language: Mapping[str, Mapping[str, Category | str]] | None = None,
        thresholds_by_language: Mapping[str, float | Mapping[str, float]] | None = None,
        *,
        path: str | Path | None = None,
        name: str | None = None,
        revision: str | None = None,
        max_words: int = DEFAULT_MAX_WORDS,
        overlap_words: int = DEFAULT_OVERLAP_WORDS,
    ) -> None:
        from polydeid.detect.backends.hf import (
            content_revision,
            declared_revision,
            pin_revision,
            resolve_local,
        )
        from polydeid.locales import canonical_language

        if model_dir is not None and path is not None:
            raise ConfigError("give the GLiNER model as model_dir or path, not both")
        spec = model_dir if model_dir is not None else path
        if spec is None:
            raise ConfigError("GlinerDetector needs model_dir (a local GLiNER directory)")
        if not labels_by_language:
            raise ConfigError("GlinerDetector needs labels_by_language")
        if not 0 <= overlap_words < max_words:
            raise ConfigError("need 0 <= overlap_words < max_words")
        self.max_words = max_words
        self.overlap_words = overlap_words

        def lang_key(lang: str) -> str:
            return lang if lang == ANY_LANGUAGE else canonical_language(lang)

        self.labels_by_language: Mapping[str, LabelMap] = MappingProxyType(
            {
                lang_key(lang): parse_label_map(labels, f"labels_by_language[{lang!r}]")
                for lang, labels in labels_by_language.items()
            }
        )
        thresholds: dict[str, float | dict[Category, float]] = {}
        for lang, value in (thresholds_by_language or {}).items():
            where = f"thresholds_by_language[{lang!r}]"
            if isinstance(value, Mapping):
                thresholds[lang_key(lang)] = {
                    Category.parse(c): checked_threshold(t, where) for c, t in value.items()
                }
            else:
                thresholds[lang_key(lang)] = checked_threshold(value, where)
        unknown = set(thresholds) - set(self.labels_by_language) - {ANY_LANGUAGE}
        if unknown:
            raise ConfigError(
                f"thresholds for languages without labels: {', '.join(sorted(unknown))}"
            )
        self._thresholds = thresholds
        self.languages: frozenset[str] = (
            frozenset()
            if ANY_LANGUAGE in self.labels_by_language
            else frozenset(self.labels_by_language)
        )
        self.labels: frozenset[Category] = frozenset(
            c for labels in self.labels_by_language.values() for c in labels.values()
        )

        gliner = _gliner_class()
        folder, cached = resolve_local(spec, revision=revision)
        if cached:  # the snapshot was chosen by the revision: its commit is what is recorded
            revision = None
        location = str(folder)
        pinned = pin_revision(revision, declared_revision(folder), location)
        self.revision = pinned or content_revision([folder])
        self.name = _model_name(folder, name)
        self.id = f"backend.gliner.{self.name}@{self.revision}"
        try:
            self.model = gliner.from_pretrained(str(folder), local_files_only=True)
        except Exception as exc:  # any loader failure: the detector is unavailable
            raise DetectorUnavailableError(
                f"GLiNER model could not load ({type(exc).__name__})", location=location
            ) from None

    def __repr__(self) -> str:
        langs = ", ".join(sorted(self.labels_by_language))
        return f"GlinerDetector({self.id}, languages=[{langs}])"

    # --- the Detector protocol ---------------------------------------------------------

    def label_map(self, lang: str) -> LabelMap:
        """The prompt labels for ``lang`` (its own, else ``"*"``); refuses other languages."""
        labels = self.labels_by_language.get(lang) or self.labels_by_language.get(ANY_LANGUAGE)
        if labels is None:
            raise UnknownLanguageError(lang, known=sorted(self.labels_by_language))
        return labels

    def thresholds(self, lang: str) -> dict[Category, float]:
        """The threshold of each category for ``lang``."""
        out = {}
        for category in set(self.label_map(lang).values()):
            value: float = DEFAULT_THRESHOLD
            for key in (ANY_LANGUAGE, lang):  # the language's own entry wins
                entry = self._thresholds.get(key)
                if isinstance(entry, dict):
                    value = entry.get(category, value)
                elif entry is not None:
                    value = entry
            out[category] = value
        return out

    def detect(self, segment: Segment) -> Iterable[Span]:
        labels = self.label_map(segment.lang)
        return self.predict(
            segment.text, labels, self.thresholds(segment.lang), where=str(segment.origin)
        )

    # --- prediction ----------------------------------------------------------------------

    def chunks(self, text: str) -> tuple[list[_Chunk], list[tuple[int, int]], list[int]]:
        """The chunks of ``text``, its word grid and each word's owning chunk."""
        grid = words(text)
        if len(grid) <= self.max_words:
            return [_Chunk(0, 0, len(text))], grid, [0] * len(grid)
        spans = windows(len(grid), self.max_words, self.max_words - self.overlap_words)
        # words play the tokens' part: word i is "token" i
        owners = owner_windows(Aligned(tuple(grid), (), tuple(range(len(grid)))), spans)
        chunks = [_Chunk(i, grid[s][0], grid[e - 1][1]) for i, (s, e) in enumerate(spans)]
        return chunks, grid, owners

    def raw_entities(
        self, text: str, prompts: Sequence[str], threshold: float, *, where: str = "<input>"
    ) -> list[tuple[int, int, str, float]]:
        """``(start, end, prompt label, score)`` over the whole text, chunked and checked."""
        if not text.strip():
            return []
        chunks, grid, owners = self.chunks(text)
        starts = [s for s, _ in grid]
        asked = set(prompts)
        out: dict[tuple[int, int, str], float] = {}
        for chunk in chunks:
            piece = text[chunk.start : chunk.end]
            try:
                found = self.model.predict_entities(piece, list(prompts), threshold=threshold)
            except Exception as exc:
                raise DetectionError(
                    f"GLiNER failed on chunk {chunk.index} ({type(exc).__name__})",
                    location=where,
                ) from None
            for entity in found:
                start, end, label, score = _checked(entity, piece, asked, chunk.index, where)
                start, end = start + chunk.start, end + chunk.start
                if len(chunks) > 1:
                    word = max(0, bisect.bisect_right(starts, start) - 1)
                    if owners[word] != chunk.index:
                        continue
                key = (start, end, label)
                out[key] = max(score, out.get(key, 0.0))
        return [(s, e, label, score) for (s, e, label), score in sorted(out.items())]

    def predict(
        self,
        text: str,
        labels: LabelMap,
        thresholds: Mapping[Category, float],
        *,
        where: str = "<input>",
    ) -> list[Span]:
        """Spans of ``text`` for the prompt labels ``labels`` at per-category thresholds."""
        floor = min(thresholds.get(c, DEFAULT_THRESHOLD) for c in labels.values())
        best: dict[tuple[int, int, Category], float] = {}
        for start, end, label, score in self.raw_entities(text, list(labels), floor, where=where):
            category = labels[label]
            if score >= thresholds.get(category, DEFAULT_THRESHOLD):
                key = (start, end, category)
                best[key] = max(score, best.get(key, 0.0))
        return [
            Span(start, end, category, self.id, round(score, 4))
            for (start, end, category), score in sorted(best.items())
        ]


def _checked(
    entity: Any, piece: str, asked: set[str], chunk: int, where: str
) -> tuple[int, int, str, float]:
    """An entity GLiNER returned, validated (fail closed on anything unexpected)."""

    def bad(what: str) -> DetectionError:
        return DetectionError(
            f"GLiNER returned a malformed entity on chunk {chunk}: {what}", location=where
        )

    if not isinstance(entity, Mapping):
        raise bad("not a mapping")
    start, end, label, score = (entity.get(k) for k in ("start", "end", "label", "score"))
    if isinstance(start, bool) or isinstance(end, bool):
        raise bad("offsets are not integers")
    if not isinstance(start, int) or not isinstance(end, int) or not 0 <= start < end:
        raise bad("offsets are not integers with start < end")
    if end > len(piece):
        raise bad("offsets past the end of the chunk")
    if "text" in entity and entity["text"] != piece[start:end]:
        raise bad("its text is not the chunk's text at its offsets")
    if label not in asked:
        raise bad("a label that was not asked for")
    try:
        value = float(score)
    except (TypeError, ValueError):
        raise bad("a score that is not a number") from None
    if not (math.isfinite(value) and 0.0 <= value <= 1.0):
        raise bad("a score outside [0, 1]")
    return start, end, label, value
