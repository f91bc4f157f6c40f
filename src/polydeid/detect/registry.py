"""The registry of detectors by versioned name, and the built-in profiles (no import-time
magic: :func:`register_builtins` registers them explicitly)."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

from polydeid.core.errors import ConfigError, CoverageError
from polydeid.detect.base import Detector

DetectorFactory = Callable[[], Detector]

_REGISTRY: dict[str, DetectorFactory] = {}

_RULES = (
    "facts.clinical.v1",
    "facts.eponyms.v1",
    "facts.eponym_terms.v1",
    "facts.latin_terms.v1",
    "facts.care_roles.v1",
    "rules.ids.v1",
    "rules.records.v1",
    "rules.phones.v1",
    "rules.contacts.v1",
    "rules.dates.v1",
    "rules.ages.v1",
    "rules.names.v1",
    "rules.demographics.v1",
    "rules.places.v1",
)

TAGGER = "tagger.e5small.v1"

#: Named detector sets. ``rules`` is the rule layer with the clinical-fact protection;
#: ``default`` is the full shipped pipeline: the rules and the fine-tuned tagger (names,
#: places, facilities, organisations …); rule spans win where both see one.
PROFILES: dict[str, tuple[str, ...]] = {
    "rules": _RULES,
    "default": (*_RULES, TAGGER),
}


@cache
def register_builtins() -> None:
    """Register every built-in detector under its versioned name (idempotent)."""
    from polydeid.detect.rules import (
        ages,
        care_roles,
        clinical_facts,
        contacts,
        dates,
        demographics,
        eponyms,
        gazetteer,
        ids,
        latin_terms,
        names,
        phones,
        records,
    )

    register("facts.clinical.v1", clinical_facts.ClinicalFactRule)
    register("facts.eponyms.v1", eponyms.EponymRule)
    register("facts.eponym_terms.v1", eponyms.EponymTermRule)
    register("facts.latin_terms.v1", latin_terms.LatinTermRule)
    register("facts.care_roles.v1", care_roles.CareRoleRule)
    register("rules.ids.v1", ids.IdentifierRule)
    register("rules.records.v1", records.RecordNumberRule)
    register("rules.phones.v1", phones.PhoneRule)
    register("rules.contacts.v1", contacts.ContactRule)
    register("rules.dates.v1", dates.DateRule)
    register("rules.ages.v1", ages.AgeRule)
    register("rules.names.v1", names.LabelledNameRule)
    register("rules.demographics.v1", demographics.LabelledDemographicRule)
    register("rules.places.v1", gazetteer.GazetteerRule)
    register(TAGGER, _tagger)


def _tagger() -> Detector:
    """The shipped tagger, for every language with a pack (refused before the model loads
    when its router lacks one); imported only when a profile asks for it (torch is heavy)."""
    from polydeid.detect.tagger.detector import TaggerDetector
    from polydeid.locales import languages

    return TaggerDetector(required_languages=languages())


def register(name: str, factory: DetectorFactory) -> None:
    """Register a detector factory under a versioned name such as ``"rules.phones.v1"``."""
    if name in _REGISTRY and _REGISTRY[name] is not factory:
        raise ConfigError(f"detector name {name!r} registered twice")
    _REGISTRY[name] = factory


def create(name: str) -> Detector:
    """Instantiate the registered detector ``name``; the error lists the known names."""
    register_builtins()
    try:
        factory = _REGISTRY[name]
    except KeyError:
        raise ConfigError(
            f"unknown detector {name!r}; known: {', '.join(sorted(_REGISTRY))}"
        ) from None
    return factory()


def registered() -> tuple[str, ...]:
    register_builtins()
    return tuple(sorted(_REGISTRY))


def builtin_profile(profile: str) -> list[Detector]:
    """Fresh detector instances of the built-in profile ``profile``; the error lists the known
    profiles."""
    try:
        names = PROFILES[profile]
    except KeyError:
        raise ConfigError(
            f"unknown profile {profile!r}; known: {', '.join(sorted(PROFILES))}"
        ) from None
    detectors = [create(name) for name in names]
    require_coverage(detectors, f"profile {profile!r}")
    return detectors


def require_coverage(detectors: list[Detector], what: str) -> None:
    """A built-in profile promises each of its detectors for every language with a pack: one
    that covers only some (its data or model lacks a language) is a :class:`CoverageError`,
    never a silent fall-back to fewer detectors for that language."""
    from polydeid.locales import languages

    promised = frozenset(languages())
    for detector in detectors:
        covered = frozenset(detector.languages)
        if covered and not promised <= covered:
            raise CoverageError(
                f"{what}: detector {detector.id} does not cover language(s) "
                f"{', '.join(sorted(promised - covered))}"
            )
