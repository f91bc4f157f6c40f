"""The tagger as a detector: names, places, facilities, organisations (and everything else the
model was trained on), with per-language thresholds and scope from ``router.toml``.

``router.toml`` (next to the weights) says, per language, which categories the tagger may
report and the score threshold of each (fitted on development data by
``python -m polydeid.train.calibrate``; 0.5 where no calibration moved it). A language the
router does not list is not supported by the tagger: :meth:`TaggerDetector.detect` raises
for it rather than return nothing (fail closed); pipelines only call detectors whose
``languages`` include the segment's language. A profile that promises the tagger for some
languages names them (``required_languages``): a router that lacks one of them, or routes
it no category, is a :class:`~polydeid.core.errors.CoverageError` before the model loads.
"""

from __future__ import annotations

import copy
import tomllib
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import MappingProxyType

from polydeid.core.errors import (
    CoverageError,
    DetectorUnavailableError,
    UnknownCategoryError,
    UnknownLanguageError,
)
from polydeid.core.segments import Segment
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category
from polydeid.detect.passes import SpanPass
from polydeid.detect.tagger.decode import decode, decoder_passes
from polydeid.detect.tagger.decoder_passes import DECODER_PASSES
from polydeid.detect.tagger.model import MODEL_DIR, TaggerModel
from polydeid.locales import check_data
from polydeid.locales.names import name_words

ROUTER_FILE = "router.toml"
#: The schema ``router.toml`` is checked against (:func:`polydeid.locales.check_data`).
ROUTER_SCHEMA = "detect/tagger/model/router.toml"
DEFAULT_THRESHOLD = 0.5


@dataclass(frozen=True, slots=True)
class Route:
    """What the tagger reports for one language."""

    categories: frozenset[Category]
    thresholds: Mapping[Category, float]


def read_router(folder: Path) -> dict[str, Route]:
    path = folder / ROUTER_FILE
    try:
        with path.open("rb") as handle:
            raw = check_data(tomllib.load(handle), ROUTER_SCHEMA, location=str(path))
        routes: dict[str, Route] = {}
        default = raw.get("default", {})
        for lang, spec in raw["languages"].items():
            names = spec.get("categories", default.get("categories"))
            categories = frozenset(Category.parse(n) for n in names)
            thresholds = {
                Category.parse(k): float(v)
                for k, v in {**default.get("thresholds", {}), **spec.get("thresholds", {})}.items()
            }
            routes[lang] = Route(categories, MappingProxyType(thresholds))
        return routes
    except (OSError, KeyError, TypeError, ValueError, UnknownCategoryError) as exc:
        raise DetectorUnavailableError(
            f"tagger router unreadable ({type(exc).__name__}) at {path}"
        ) from None


def require_routes(routes: Mapping[str, Route], required: Iterable[str], *, location: str) -> None:
    """Raise :class:`CoverageError` unless every language of ``required`` has a route with at
    least one category (a partial install or a retrained model that skipped a language would
    otherwise leave that language to the rules alone)."""
    empty = Route(frozenset(), MappingProxyType({}))
    missing = sorted({lang for lang in required if not routes.get(lang, empty).categories})
    if missing:
        raise CoverageError(
            f"the tagger's router does not cover language(s) {', '.join(missing)} that the "
            "profile promises (a partial install or a retrained model?): reinstall the model, "
            "or choose a profile without the tagger for them",
            location=location,
        )


@cache
def _shared_model(folder: str, precision: str, device: str) -> TaggerModel:
    return TaggerModel.load(folder, precision=precision, device=device)


class TaggerDetector:
    """Fine-tuned multilingual token classifier (see :mod:`polydeid.detect.tagger.model`)."""

    id = "tagger.e5small.v1"

    def __init__(
        self,
        folder: str | Path | None = None,
        *,
        precision: str | None = None,
        disabled_passes: Collection[str] = (),
        required_languages: Collection[str] = (),
    ) -> None:
        """``precision``: the matrix products' (``auto``, ``float32``, ``bfloat16``; None:
        ``POLYDEID_TAGGER_PRECISION``, then ``auto``); ``disabled_passes``: decoder passes
        switched off by id (:data:`~polydeid.detect.tagger.decoder_passes.DECODER_PASSES`);
        ``required_languages``: those the router must cover (:func:`require_routes`)."""
        from polydeid.detect.tagger.precision import resolve, resolve_device

        self.passes: tuple[SpanPass, ...] = DECODER_PASSES
        self._disabled = frozenset(disabled_passes)
        self._decoding = decoder_passes(self._disabled)
        self.folder = Path(folder) if folder is not None else MODEL_DIR
        self.routes = read_router(self.folder)
        require_routes(self.routes, required_languages, location=str(self.folder / ROUTER_FILE))
        device = resolve_device(None)  # POLYDEID_TAGGER_DEVICE, else the CPU
        self.model = _shared_model(str(self.folder), resolve(precision, device=device), device)
        self.languages: frozenset[str] = frozenset(self.routes)
        self.labels: frozenset[Category] = frozenset(
            c for route in self.routes.values() for c in route.categories
        )

    def __repr__(self) -> str:
        return f"TaggerDetector({self.id}, languages={len(self.languages)})"

    def without_passes(self, disabled: Collection[str]) -> TaggerDetector:
        """This detector (the same model) decoding without the passes named in ``disabled``;
        itself where none of them is a decoder pass."""
        off = self._disabled | {p.id for p in self.passes if p.id in disabled}
        if off == self._disabled:
            return self
        other = copy.copy(self)
        other._disabled = frozenset(off)
        other._decoding = decoder_passes(off)
        return other

    def detect(self, segment: Segment) -> Iterable[Span]:
        return self.detect_many([segment])[0]

    def detect_many(self, segments: list[Segment]) -> list[list[Span]]:
        """Spans for several segments at once (batched through the model)."""
        for segment in segments:
            if segment.lang not in self.routes:
                raise UnknownLanguageError(segment.lang, known=sorted(self.routes))
        results = self.model.predict([s.text for s in segments])
        out = []
        for segment, (aligned, probs) in zip(segments, results, strict=True):
            route = self.routes[segment.lang]
            spans = decode(
                segment.text,
                aligned.grid,
                probs,
                route.thresholds,
                default_threshold=DEFAULT_THRESHOLD,
                source=self.id,
                names=name_words(segment.lang),
                passes=self._decoding,
            )
            out.append([s for s in spans if s.label in route.categories])
        return out
