"""The detection pipeline: run detectors over a segment, then resolve to one answer."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from itertools import pairwise

from polydeid.core.budget import checkpoint
from polydeid.core.collector import collector_paused
from polydeid.core.errors import UnknownLanguageError
from polydeid.core.resolve import (
    DEFAULT_POLICY,
    ResolvePolicy,
    facts_only,
    merge_adjacent,
    resolve,
)
from polydeid.core.segments import Segment, Stretch
from polydeid.core.spans import Span
from polydeid.detect.base import Detector
from polydeid.detect.passes import SEGMENT_PASSES, SegmentContext, SpanPass, check_known, select
from polydeid.detect.tagger.decoder_passes import DECODER_PASSES
from polydeid.locales import canonical_language
from polydeid.text.memo import shared_reading
from polydeid.text.reading import Reading, reading_of


class Pipeline:
    """Detectors plus the resolution policy; ``detect`` returns resolved identifier spans.

    After resolution the segment passes run in order (:data:`SEGMENT_PASSES`: places, names
    carried through the segment, label values and roles); ``disabled_passes`` switches any of
    them, or of a detector's own passes (the tagger's decoder), off by id, and
    ``segment_steps=False`` leaves every segment pass out: for measuring another system as it
    is.

    A segment whose language is unknown raises :class:`UnknownLanguageError` (fail closed):
    no text is passed on as "nothing found" because the language could not be handled.

    Detectors, resolution and passes read the segment's reading (:mod:`polydeid.text.reading`:
    invisible characters removed, NFKC, ASCII digits); every span that leaves the pipeline
    covers the original characters it was read from.
    """

    def __init__(
        self,
        detectors: Sequence[Detector],
        *,
        resolve_policy: ResolvePolicy = DEFAULT_POLICY,
        segment_steps: bool = True,
        disabled_passes: Collection[str] = (),
    ) -> None:
        if not detectors:
            raise ValueError("a pipeline needs at least one detector")
        disabled = frozenset(disabled_passes)
        # a pass of the built-in tagger is known to every pipeline, so that one ablation can
        # serve systems with and without the tagger
        check_known(
            disabled,
            [
                *SEGMENT_PASSES,
                *DECODER_PASSES,
                *(p for d in detectors for p in getattr(d, "passes", ())),
            ],
        )
        self.detectors = tuple(
            d.without_passes(disabled) if hasattr(d, "without_passes") else d for d in detectors
        )
        self.resolve_policy = resolve_policy
        self.segment_steps = segment_steps
        self.passes: tuple[SpanPass, ...] = (
            select(SEGMENT_PASSES, disabled) if segment_steps else ()
        )

    def __repr__(self) -> str:
        return f"Pipeline({', '.join(d.id for d in self.detectors)})"

    def _applicable(self, lang: str) -> tuple[Detector, ...]:
        return tuple(d for d in self.detectors if not d.languages or lang in d.languages)

    def candidates(self, segment: Segment) -> list[Span]:
        """Every detector's raw spans (identifiers and protected facts), unresolved, over
        ``segment``'s original text.

        A segment whose ``stretches`` mix languages is read part by part: each run of one
        language is a segment of its own, read by that language's detectors (rules and tagger)
        with the segment's origin, countries and hints, its spans moved back to the segment's
        offsets. Language-independent detectors (every fixed-format rule) run on every part; a
        detector with ``detect_many`` (the tagger) gets all its parts in one batch.
        """
        reading = reading_of(segment.text)
        if reading.identity:
            return self._candidates(segment)
        return list(_to_original(reading, self._candidates(_read(segment, reading))))

    def _candidates(self, segment: Segment) -> list[Span]:
        return self._candidates_many([segment])[0]

    def _candidates_many(self, segments: Sequence[Segment]) -> list[list[Span]]:
        """:meth:`_candidates` of each of ``segments`` (as read), each detector called once
        for all their parts where it reads several at once (``detect_many``)."""
        with shared_reading():  # what rules read from a text once, dropped at the end
            return self._candidates_shared(segments)

    def _candidates_shared(self, segments: Sequence[Segment]) -> list[list[Span]]:
        parts = [
            [(offset, *self._routed(part)) for offset, part in language_parts(segment)]
            for segment in segments
        ]
        if len(parts) == 1 and len(parts[0]) == 1:
            _, part, applicable = parts[0][0]
            found_one: list[Span] = []
            for detector in applicable:
                checkpoint()  # the work budget (polydeid.core.budget), between detectors
                found_one.extend(detector.detect(part))
            return [found_one]
        spans: list[list[Span]] = [[] for _ in segments]
        for detector in self.detectors:
            mine = [
                (k, offset, part)
                for k, own in enumerate(parts)
                for offset, part, applicable in own
                if detector in applicable
            ]
            if not mine:
                continue
            checkpoint()
            many = getattr(detector, "detect_many", None)
            found = (
                many([part for _, _, part in mine])
                if many is not None
                else [detector.detect(part) for _, _, part in mine]
            )
            for (k, offset, _), part_spans in zip(mine, found, strict=True):
                spans[k].extend(span.shifted(offset) for span in part_spans)
        return spans

    def _routed(self, segment: Segment) -> tuple[Segment, tuple[Detector, ...]]:
        """``segment`` with its canonical language code, and the detectors routed to it."""
        lang = canonical_language(segment.lang)
        if lang != segment.lang:
            segment = Segment(segment.text, lang, segment.origin, segment.countries, segment.hints)
        applicable = self._applicable(lang)
        if not applicable:
            # A composition that routes no detector to this language: fail closed.
            raise UnknownLanguageError(
                lang, known=sorted({code for d in self.detectors for code in d.languages})
            )
        return segment, applicable

    def detect(self, segment: Segment) -> tuple[Span, ...]:
        """Resolved, non-overlapping identifier spans, sorted by start, after the segment
        passes, over ``segment``'s original text. A segment longer than
        :data:`SEGMENT_CHARS` is read in windows (:func:`length_windows`): each span is taken
        from the window whose own part holds its start, and the windows' spans are resolved
        together (merged only, where none overlap)."""
        if len(segment.text) <= SEGMENT_CHARS:
            return self._detect_read(segment)
        with collector_paused():  # the spans of every window live until the end
            found: list[Span] = []
            for lo, start, end, hi in length_windows(segment.text, SEGMENT_CHARS, WINDOW_OVERLAP):
                for span in self._detect_read(_window(segment, lo, hi)):
                    if start <= span.start + lo < end:
                        found.append(span.shifted(lo))
            if any(a.end > b.start for a, b in pairwise(found)):  # across a part's edge
                return resolve(found, segment.text, self.resolve_policy)
            return merge_adjacent(found, segment.text, self.resolve_policy)

    def detect_many(self, segments: Sequence[Segment]) -> list[tuple[Span, ...]]:
        """:meth:`detect` of each of ``segments``, in order. The detectors that read several
        segments at once (``detect_many``: the tagger, whose windows of every segment then
        share its batches) get the parts of all the segments of at most
        :data:`SEGMENT_CHARS` in one call; a longer segment is read as :meth:`detect` reads
        it. A segment that :meth:`detect` would refuse makes the call raise that error."""
        out: list[tuple[Span, ...]] = [()] * len(segments)
        short = [k for k, segment in enumerate(segments) if len(segment.text) <= SEGMENT_CHARS]
        for k, segment in enumerate(segments):
            if len(segment.text) > SEGMENT_CHARS:
                out[k] = self.detect(segment)
        found = self._detect_read_many([segments[k] for k in short])
        for k, spans in zip(short, found, strict=True):
            out[k] = spans
        return out

    def _detect_read(self, segment: Segment) -> tuple[Span, ...]:
        return self._detect_read_many([segment])[0]

    def _detect_read_many(self, segments: Sequence[Segment]) -> list[tuple[Span, ...]]:
        """:meth:`_detect_many` over the texts as the detectors read them, spans moved back."""
        readings = [reading_of(segment.text) for segment in segments]
        read = [
            segment if reading.identity else _read(segment, reading)
            for segment, reading in zip(segments, readings, strict=True)
        ]
        return [
            spans if reading.identity else _disjoint(_to_original(reading, spans))
            for reading, spans in zip(readings, self._detect_many(read), strict=True)
        ]

    def _detect(self, segment: Segment) -> tuple[Span, ...]:
        return self._detect_many([segment])[0]

    def _detect_many(self, segments: Sequence[Segment]) -> list[tuple[Span, ...]]:
        """Resolved spans, after the segment passes, of each of ``segments`` (as read)."""
        out = []
        for segment, candidates in zip(segments, self._candidates_many(segments), strict=True):
            checkpoint()
            spans = resolve(candidates, segment.text, self.resolve_policy)
            if self.passes:
                ctx = SegmentContext(
                    segment.text,
                    canonical_language(segment.lang),
                    tuple(s for s in candidates if s.is_fact),
                    self.resolve_policy,
                )
                for p in self.passes:
                    checkpoint()
                    spans = p.run(ctx, spans)
            out.append(spans)
        return out

    def facts(self, segment: Segment) -> tuple[Span, ...]:
        """The protected clinical-fact spans found in ``segment``."""
        return facts_only(self.candidates(segment))


def _read(segment: Segment, reading: Reading) -> Segment:
    """``segment`` with its text replaced by ``reading``'s, its stretches moved with it."""
    stretches: list[Stretch] = []
    for stretch in segment.stretches:
        start = stretches[-1].end if stretches else 0
        end = reading.to_reading(stretch.end)
        if end > start:
            stretches.append(Stretch(start, end, stretch.lang))
    if stretches and stretches[-1].end < len(reading.text):
        last = stretches[-1]
        stretches[-1] = Stretch(last.start, len(reading.text), last.lang)
    return Segment(
        reading.text,
        segment.lang,
        segment.origin,
        segment.countries,
        segment.hints,
        tuple(stretches),
    )


def _to_original(reading: Reading, spans: Sequence[Span]) -> list[Span]:
    """``spans`` of ``reading``'s text moved to the original characters they were read from."""
    moved = []
    for span in spans:
        start, end = reading.to_original(span.start, span.end)
        moved.append(Span(start, end, span.label, span.source, span.score))
    return moved


def _disjoint(spans: list[Span]) -> tuple[Span, ...]:
    """Disjoint sorted spans: where two spans read from one original character (a ligature
    split between them) overlap, the later one starts where the earlier one ends."""
    kept: list[Span] = []
    for span in sorted(spans, key=lambda s: (s.start, s.end)):
        if kept and span.start < kept[-1].end:
            if span.end <= kept[-1].end:
                continue
            span = Span(kept[-1].end, span.end, span.label, span.source, span.score)
        kept.append(span)
    return tuple(kept)


#: The longest segment read whole; a longer one is read in windows of about this length.
SEGMENT_CHARS = 100_000
#: Characters of the text on each side of a window's own part that its detectors also read,
#: so that an identifier cut by the part's edge is read whole.
WINDOW_OVERLAP = 2_000


def length_windows(
    text: str, limit: int = SEGMENT_CHARS, overlap: int = WINDOW_OVERLAP
) -> list[tuple[int, int, int, int]]:
    """``text`` cut into parts of at most ``limit`` characters, as ``(lo, start, end, hi)``:
    the part ``[start, end)`` and the window ``[lo, hi)`` read for it, ``overlap`` characters
    wider on each side. The parts cover the text in order; each ends after the last line
    break in its second half, else after the last space or tab there, else at ``limit``
    (a text without either: one giant token)."""
    parts: list[tuple[int, int]] = []
    start, n = 0, len(text)
    while n - start > limit:
        end = start + limit
        floor = start + limit // 2
        cut = max(text.rfind("\n", floor, end), text.rfind("\r", floor, end))
        if cut == -1:
            cut = max(text.rfind(" ", floor, end), text.rfind("\t", floor, end))
        cut = end if cut == -1 else cut + 1
        parts.append((start, cut))
        start = cut
    parts.append((start, n))
    return [(max(0, a - overlap), a, b, min(n, b + overlap)) for a, b in parts]


def _window(segment: Segment, lo: int, hi: int) -> Segment:
    """The part ``[lo, hi)`` of ``segment`` as a segment of its own, its stretches cut."""
    stretches = tuple(
        Stretch(max(s.start, lo) - lo, min(s.end, hi) - lo, s.lang)
        for s in segment.stretches
        if s.start < hi and s.end > lo
    )
    return Segment(
        segment.text[lo:hi],
        segment.lang,
        segment.origin,
        segment.countries,
        segment.hints,
        stretches,
    )


def language_parts(segment: Segment) -> list[tuple[int, Segment]]:
    """``segment`` as (offset, segment) parts of one language each: itself when it has no
    stretches or only one language, else each run of consecutive stretches of one language."""
    languages = {s.lang for s in segment.stretches}
    if len(languages) <= 1:
        lang = next(iter(languages)) if languages else segment.lang
        plain = Segment(segment.text, lang, segment.origin, segment.countries, segment.hints)
        return [(0, plain if segment.stretches or lang != segment.lang else segment)]
    runs: list[Stretch] = []
    for stretch in segment.stretches:
        if runs and runs[-1].lang == stretch.lang:
            runs[-1] = Stretch(runs[-1].start, stretch.end, stretch.lang)
        else:
            runs.append(stretch)
    return [
        (
            run.start,
            Segment(
                segment.text[run.start : run.end],
                run.lang,
                segment.origin,
                segment.countries,
                segment.hints,
            ),
        )
        for run in runs
    ]
