"""Profiles: a built-in detector set by name, or a composition file; the categories one finds."""

from __future__ import annotations

from collections.abc import Sequence

from polydeid.core.taxonomy import Category
from polydeid.detect.base import Detector
from polydeid.detect.compose import is_composition, load_composition
from polydeid.detect.registry import builtin_profile


def profile_detectors(profile: str) -> list[Detector]:
    """Fresh detector instances of the named profile — or of a composition file
    (``*.toml``, see :mod:`polydeid.detect.compose`); the error lists the known profiles."""
    if is_composition(profile):
        return load_composition(profile)
    return builtin_profile(profile)


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
