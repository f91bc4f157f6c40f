"""The base classes of the rule layer (patterns: :mod:`polydeid.text.patterns`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from polydeid.core.segments import Segment
from polydeid.core.spans import Span
from polydeid.core.taxonomy import Category, Fact
from polydeid.locales import languages, segment_languages
from polydeid.text.patterns import Pattern, gated_finditer


class RuleDetector:
    """Base of rule detectors: subclasses implement :meth:`find`.

    ``detect`` checks that every span is inside the text and not empty, so a faulty rule fails
    loudly in tests instead of corrupting output.
    """

    id: ClassVar[str]
    languages: frozenset[str] = frozenset()
    labels: ClassVar[frozenset[Category | Fact]]

    def find(self, segment: Segment) -> Iterable[Span]:
        raise NotImplementedError

    def detect(self, segment: Segment) -> list[Span]:
        n = len(segment.text)
        spans = list(self.find(segment))
        for s in spans:
            if s.end > n:
                raise ValueError(f"rule {self.id} produced span {s!r} past the end ({n})")
        return spans

    def __repr__(self) -> str:
        return f"{type(self).__name__}(id={self.id!r})"


class PhraseFactRule(RuleDetector):
    """A rule whose facts are the matches of one pattern per set of languages (the segment's
    language and English), all of one kind: subclasses give ``kind`` and :meth:`pattern`, and
    :meth:`keys` where every match starts with a word of a list."""

    kind: ClassVar[Fact]

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        cls.labels = frozenset({cls.kind})

    def __init__(self) -> None:
        self.languages = frozenset(languages())

    def pattern(self, langs: tuple[str, ...]) -> Pattern | None:
        """The pattern for ``langs`` (cached by the subclass); None when they give no words."""
        raise NotImplementedError

    def keys(self, langs: tuple[str, ...]) -> frozenset[str] | None:
        """The gate keys (:mod:`polydeid.text.gate`) every match of the pattern for ``langs``
        starts with, or ``None``: the pattern is then run over the whole text."""
        return None

    def find(self, segment: Segment) -> Iterable[Span]:
        langs = tuple(segment_languages(segment))
        pattern = self.pattern(langs)
        if pattern is None:
            return []
        return [
            Span(m.start(), m.end(), self.kind, self.id)
            for m in gated_finditer(pattern, segment, self.id, self.keys(langs))
        ]
