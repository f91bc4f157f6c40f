"""Built-in detectors and profiles, registered explicitly (no import-time magic)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

from polydeid.core.errors import ConfigError
from polydeid.core.taxonomy import Category
from polydeid.detect.base import Detector, create, register

_RULES = (
    "facts.clinical.v1",
    "facts.eponyms.v1",
    "facts.care_roles.v1",
    "rules.ids.v1",
    "rules.records.v1",
    "rules.phones.v1",
    "rules.contacts.v1",
    "rules.dates.v1",
    "rules.ages.v1",
    "rules.names.v1",
    "rules.demographics.v1",
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
        ids,
        names,
        phones,
        records,
    )

    register("facts.clinical.v1", clinical_facts.ClinicalFactRule)
    register("facts.eponyms.v1", eponyms.EponymRule)
    register("facts.care_roles.v1", care_roles.CareRoleRule)
    register("rules.ids.v1", ids.IdentifierRule)
    register("rules.records.v1", records.RecordNumberRule)
    register("rules.phones.v1", phones.PhoneRule)
    register("rules.contacts.v1", contacts.ContactRule)
    register("rules.dates.v1", dates.DateRule)
    register("rules.ages.v1", ages.AgeRule)
    register("rules.names.v1", names.LabelledNameRule)
    register("rules.demographics.v1", demographics.LabelledDemographicRule)
    register(TAGGER, _tagger)


def _tagger() -> Detector:
    """The shipped tagger; imported only when a profile asks for it (torch is heavy)."""
    from polydeid.detect.tagger.detector import TaggerDetector

    return TaggerDetector()


def partial_categories(detectors: Sequence[Detector]) -> frozenset[Category]:
    """The categories ``detectors`` find only in some forms: those that every detector emitting
    them lists in its ``partial_labels`` (the rule layer's addresses are labelled postal codes)."""
    labels = {label for d in detectors for label in d.labels if isinstance(label, Category)}
    return frozenset(
        c
        for c in labels
        if all(c in getattr(d, "partial_labels", ()) for d in detectors if c in d.labels)
    )


def profile_categories(profile: str, *, partial: bool = True) -> tuple[Category, ...]:
    """The identifier categories the named profile's detectors can emit, in canonical order;
    ``partial=False`` leaves out those it finds only in some forms
    (:func:`partial_categories`)."""
    detectors = profile_detectors(profile)
    labels = {label for d in detectors for label in d.labels}
    if not partial:
        labels -= partial_categories(detectors)
    return tuple(c for c in Category if c in labels)


def profile_detectors(profile: str) -> list[Detector]:
    """Fresh detector instances of the named profile — or of a composition file
    (``*.toml``, see :mod:`polydeid.detect.compose`); the error lists the known profiles."""
    from polydeid.detect.compose import is_composition, load_composition

    if is_composition(profile):
        return load_composition(profile)
    try:
        names = PROFILES[profile]
    except KeyError:
        raise ConfigError(
            f"unknown profile {profile!r}; known: {', '.join(sorted(PROFILES))}"
        ) from None
    return [create(name) for name in names]
