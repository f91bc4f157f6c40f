"""The detection pipeline: run detectors over a segment, then resolve to one answer."""

from __future__ import annotations

from collections.abc import Sequence

from polydeid.core.errors import UnknownLanguageError
from polydeid.core.resolve import DEFAULT_POLICY, ResolvePolicy, facts_only, resolve
from polydeid.core.segments import Segment
from polydeid.core.spans import Span
from polydeid.detect.base import Detector
from polydeid.detect.places import adjust_places
from polydeid.detect.propagate import propagate_names
from polydeid.detect.roles import apply_label_roles
from polydeid.locales import canonical_language


class Pipeline:
    """Detectors plus the resolution policy; ``detect`` returns resolved identifier spans.

    ``segment_steps=False`` leaves out what polydeid does after resolution (names carried
    through the segment, label roles and values): for measuring another system as it is.

    A segment whose language is unknown raises :class:`UnknownLanguageError` (fail closed):
    no text is passed on as "nothing found" because the language could not be handled.
    """

    def __init__(
        self,
        detectors: Sequence[Detector],
        *,
        resolve_policy: ResolvePolicy = DEFAULT_POLICY,
        segment_steps: bool = True,
    ) -> None:
        if not detectors:
            raise ValueError("a pipeline needs at least one detector")
        self.detectors = tuple(detectors)
        self.resolve_policy = resolve_policy
        self.segment_steps = segment_steps

    def __repr__(self) -> str:
        return f"Pipeline({', '.join(d.id for d in self.detectors)})"

    def _applicable(self, lang: str) -> tuple[Detector, ...]:
        return tuple(d for d in self.detectors if not d.languages or lang in d.languages)

    def candidates(self, segment: Segment) -> list[Span]:
        """Every detector's raw spans (identifiers and protected facts), unresolved."""
        lang = canonical_language(segment.lang)
        if lang != segment.lang:
            segment = Segment(segment.text, lang, segment.origin, segment.countries, segment.hints)
        applicable = self._applicable(lang)
        if not applicable:
            # A composition that routes no detector to this language: fail closed.
            raise UnknownLanguageError(
                lang, known=sorted({code for d in self.detectors for code in d.languages})
            )
        spans: list[Span] = []
        for detector in applicable:
            spans.extend(detector.detect(segment))
        return spans

    def detect(self, segment: Segment) -> tuple[Span, ...]:
        """Resolved, non-overlapping identifier spans, sorted by start; a name found once is
        found wherever else the segment writes it (:mod:`polydeid.detect.propagate`), a place
        takes the administrative unit written before it (:mod:`polydeid.detect.places`), and
        a name after a field label takes the label's role (:mod:`polydeid.detect.roles`)."""
        candidates = self.candidates(segment)
        spans = resolve(candidates, segment.text, self.resolve_policy)
        if not self.segment_steps:
            return spans
        lang = canonical_language(segment.lang)
        facts = [s for s in candidates if s.is_fact]
        spans = adjust_places(segment.text, spans, lang)
        spans = propagate_names(segment.text, spans, facts, lang, self.resolve_policy)
        return apply_label_roles(segment.text, spans, lang)

    def facts(self, segment: Segment) -> tuple[Span, ...]:
        """The protected clinical-fact spans found in ``segment``."""
        return facts_only(self.candidates(segment))
