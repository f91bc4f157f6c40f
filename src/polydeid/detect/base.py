"""The Detector role, and the registry of built-in detectors."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Protocol, runtime_checkable

from polydeid.core.errors import ConfigError
from polydeid.core.segments import Segment
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category, Fact


@runtime_checkable
class Detector(Protocol):
    """Anything that finds spans in a segment: rules, taggers, backends, test fakes.

    ``languages`` is the set of canonical language codes it supports; the empty set means
    "language-independent".
    """

    id: str
    languages: frozenset[str]
    labels: frozenset[Category | Fact]

    def detect(self, segment: Segment) -> Iterable[Span]: ...


class FakeDetector:
    """A detector that returns fixed spans (for tests and examples)."""

    def __init__(self, spans: Iterable[Span], *, id: str = "fake.v1") -> None:
        self.id = id
        self._spans = tuple(spans)
        self.languages: frozenset[str] = frozenset()
        self.labels: frozenset[Category | Fact] = frozenset(s.label for s in self._spans)

    def detect(self, segment: Segment) -> Iterable[Span]:
        return [s for s in self._spans if s.end <= len(segment.text)]


DetectorFactory = Callable[[], Detector]

_REGISTRY: dict[str, DetectorFactory] = {}


def register(name: str, factory: DetectorFactory) -> None:
    """Register a detector factory under a versioned name such as ``"rules.phones.v1"``."""
    if name in _REGISTRY and _REGISTRY[name] is not factory:
        raise ConfigError(f"detector name {name!r} registered twice")
    _REGISTRY[name] = factory


def create(name: str) -> Detector:
    """Instantiate the registered detector ``name``; the error lists the known names."""
    from polydeid.detect.registry import register_builtins

    register_builtins()
    try:
        factory = _REGISTRY[name]
    except KeyError:
        raise ConfigError(
            f"unknown detector {name!r}; known: {', '.join(sorted(_REGISTRY))}"
        ) from None
    return factory()


def registered() -> tuple[str, ...]:
    from polydeid.detect.registry import register_builtins

    register_builtins()
    return tuple(sorted(_REGISTRY))
